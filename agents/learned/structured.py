"""A MaskablePPO policy with the structure of the action table: one score per card, per meld, per pair.

The flat observation (:mod:`shanghai_env.observation`) and the fixed action table
(:mod:`shanghai_env.actions`, ``docs/actions.md``) have a structure a flat MLP must rediscover
from thousands of inputs: a discard is *a card*, a going-down placement is *a card into one of
your contract melds*, a layoff or a swap is *a card onto one table meld*. This policy reads the
observation into

- a context vector (phase, contract, sizes, buys, who is down, scores, ...),
- one embedding per card place (56: the 52 cards and the four high aces), computed by one
  shared network from that card's facts: copies held and seen, same-rank and same-suit
  neighbours held and seen, points, whether it is the upcard, what opponents took of its rank,
- one embedding per table meld (seat x contract meld): what lies in it, its kind and size,
  whether its owner is down,

and scores every action from those parts with shared weights: a discard from its card's
embedding, a placement, layoff or swap from a small network over (card, meld, the pair's own
facts: same rank or same-suit neighbours already in that meld). So one weight learns "keep the
card next to your run" for every card, and the network's size does not grow with the action
table. Masking is MaskablePPO's, as for any policy.

Everything is computed from the observation alone, so a saved model plays from
``MaskablePPO.load`` with nothing but this package installed. The layout (slices, action
blocks) comes from :class:`~shanghai_env.observation.ObservationEncoder` and
:class:`~shanghai_env.actions.ActionTable`, the one definition of each; the policy is built for
one player count and contract list (its ``num_players`` and ``contracts`` keyword arguments).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from shanghai_env.actions import DISCARD_BASE, MELD_BASE, action_table
from shanghai_env.agents.learned.derived import DERIVED_SIZE, GLOBAL, PER_CARD
from shanghai_env.cards import card_points
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import ALL_CONTRACTS, Rules

NUM_PLACES = 56  # places 0..51 are the cards, 52..55 the high aces of C, D, H, S
JOKER = 52
PLACE_FACTS = 16
SLOT_FACTS = 9
PAIR_FACTS = 6
_NEIGHBOURS = (-2, -1, 1, 2)


def _place_index() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each place: its card (a high ace is its ace), its suit, and its column in a 4 x 14 grid
    whose columns are A (low), 2 .. K, A (high)."""
    card = np.array([p if p < 52 else (p - 52) * 13 for p in range(NUM_PLACES)])
    suit = np.array([p // 13 if p < 52 else p - 52 for p in range(NUM_PLACES)])
    col = np.array([p % 13 if p < 52 else 13 for p in range(NUM_PLACES)])
    return card, suit, col


class StructuredNet(nn.Module):
    """Observation -> (action logits, value latent); see the module docstring."""

    def __init__(
        self,
        obs_size: int,
        obs_scale: torch.Tensor,
        num_players: int,
        contracts: tuple[int, ...],
        width: int,
        derived: bool = False,
    ) -> None:
        super().__init__()
        rules = Rules(num_players=num_players, contracts=tuple(contracts))
        encoder = ObservationEncoder(rules)
        self.base, self.derived = encoder.size, derived
        if encoder.size + DERIVED_SIZE * derived != obs_size:
            raise ValueError(
                f"observation length {obs_size} does not match {num_players} players, contracts {contracts}"
                + (" with the derived inputs" if derived else "")
            )
        table = action_table(rules)
        self.n, self.m = num_players, rules.max_melds
        self.num_actions = table.size
        s = encoder.slices
        self.sl = {k: (v.start, v.stop) for k, v in s.items()}
        self.ctx_start = s["upcard_from"].start
        ctx_in = self.base - self.ctx_start + 6 + (PER_CARD + GLOBAL) * derived
        place_facts = PLACE_FACTS + PER_CARD * derived
        card, suit, col = _place_index()
        self.card: torch.Tensor
        self.suit: torch.Tensor
        self.col: torch.Tensor
        self.points: torch.Tensor
        self.scale: torch.Tensor
        self.register_buffer("card", torch.as_tensor(card))
        self.register_buffer("suit", torch.as_tensor(suit))
        self.register_buffer("col", torch.as_tensor(col))
        pts = [card_points(int(c)) / 20 for c in card]
        self.register_buffer("points", torch.as_tensor(pts, dtype=torch.float32))
        self.register_buffer("scale", obs_scale[self.ctx_start : self.base].clone())
        w, h = width, width // 2
        self.ctx_net = nn.Sequential(nn.Linear(ctx_in, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU())
        # Card and meld embeddings see the context through a projection added after their first
        # layer (the same sum as a layer over the concatenation, without copying the context 56 times).
        self.place_in, self.place_ctx = nn.Linear(place_facts, w), nn.Linear(w, w, bias=False)
        self.place_net = nn.Sequential(nn.ReLU(), nn.Linear(w, w), nn.ReLU())
        self.joker_net = nn.Sequential(nn.Linear(w, w), nn.ReLU())
        self.slot_in, self.slot_ctx = nn.Linear(SLOT_FACTS, w), nn.Linear(w, w, bias=False)
        self.slot_net = nn.Sequential(nn.ReLU(), nn.Linear(w, w), nn.ReLU())
        self.simple = nn.Sequential(nn.Linear(2 * w, w), nn.ReLU(), nn.Linear(w, 5))
        self.discard = nn.Sequential(nn.Linear(w, h), nn.ReLU(), nn.Linear(h, 1))
        # One pair head per action block: card (or joker declared as the card) into a meld, scored
        # bilinearly (a batched matrix product, cheap for the thousands of pairs) plus the pair's facts.
        self.heads = nn.ModuleDict(
            {
                name: nn.ModuleDict(
                    {
                        "card": nn.Linear(w, h),
                        "slot": nn.Linear(w, h),
                        "pair": nn.Linear(PAIR_FACTS, 1),
                        "joker": nn.Linear(w, h, bias=False),
                    }
                )
                for name in ("meld", "meld_joker", "layoff", "layoff_joker", "swap")
            }
        )
        self.latent_dim_pi = self.num_actions
        self.latent_dim_vf = w
        self.value_in = nn.Sequential(nn.Linear(2 * w, w), nn.ReLU())
        if (
            MELD_BASE != 58
            or DISCARD_BASE != 5
            or table.swap_base + self.n * self.m * NUM_PLACES != table.size
        ):
            raise RuntimeError("the action table's layout changed: update StructuredNet")

    # --- facts --------------------------------------------------------------------------------

    def _part(self, x: torch.Tensor, name: str) -> torch.Tensor:
        a, b = self.sl[name]
        return x[:, a:b]

    @staticmethod
    def _grid(v: torch.Tensor) -> torch.Tensor:
        """[..., 52] per card -> [..., 4, 14] with the ace also as column 13 (high), padded by 2."""
        g = v.reshape(*v.shape[:-1], 4, 13)
        g = torch.cat([g, g[..., :1]], dim=-1)
        return nn.functional.pad(g, (2, 2))

    def _at(self, grid: torch.Tensor, offset: int) -> torch.Tensor:
        """Per place, the padded grid's value ``offset`` columns away in the same suit: [..., 56]."""
        return grid[..., self.suit, self.col + 2 + offset]

    def forward_parts(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = obs.flatten(1).float()
        b, n, m = x.shape[0], self.n, self.m
        hand = self._part(x, "hand")
        melds = self._part(x, "table").reshape(b, n * m, 2, NUM_PLACES)
        occupied = melds.sum(2)  # cards or declared jokers at each place of each meld
        on_table = melds[:, :, 0, :52].sum(1)
        on_table[:, 0::13] += melds[:, :, 0, 52:].sum(1)
        picked = self._part(x, "picked_up").reshape(b, n, 53)[:, 1:]
        discards = self._part(x, "discard_counts")
        seen = discards[:, :52] + on_table + picked[:, :, :52].sum(1)
        up = self._part(x, "upcard_offered")
        top = self._part(x, "discard_top")
        held = hand[:, :52]
        rank_held = held.reshape(b, 4, 13).sum(1)
        rank_seen = seen.reshape(b, 4, 13).sum(1)
        rank_taken = picked[:, :, :52].reshape(b, n - 1, 4, 13).sum((1, 2))
        held_grid, seen_grid = self._grid((held > 0).float()), self._grid(seen)
        card, rank = self.card, self.card % 13
        place = torch.stack(
            [
                held[:, card] / 2,
                seen[:, card] / 2,
                rank_held[:, rank] / 4,
                rank_seen[:, rank] / 8,
                *(self._at(held_grid, d) for d in _NEIGHBOURS),
                self._at(seen_grid, -1) / 2,
                self._at(seen_grid, 1) / 2,
                self.points.expand(b, -1),
                up[:, card],
                top[:, card],
                rank_taken[:, rank] / 2,
                (self.col == 13).float().expand(b, -1),
                (held[:, card] > 0).float() * (rank_held[:, rank] == 1).float(),
            ],
            dim=2,
        )
        jokers_seen = discards[:, JOKER] + melds[:, :, 1].sum((1, 2)) + picked[:, :, JOKER].sum(1)
        ctx_raw = torch.cat(
            [
                x[:, self.ctx_start : self.base] / self.scale,
                torch.stack(
                    [
                        hand[:, JOKER] / 2,
                        jokers_seen / 4,
                        up[:, JOKER],
                        top[:, JOKER],
                        hand.sum(1) / 15,
                        held.sum(1) / 15,
                    ],
                    dim=1,
                ),
            ],
            dim=1,
        )
        if self.derived:  # per card kind, then global (shanghai_env.agents.learned.derived)
            extra = x[:, self.base :]
            per_kind = extra[:, : 53 * PER_CARD].reshape(b, 53, PER_CARD)
            place = torch.cat([place, per_kind[:, card]], dim=2)
            ctx_raw = torch.cat([ctx_raw, per_kind[:, JOKER], extra[:, 53 * PER_CARD :]], dim=1)
        ctx = self.ctx_net(ctx_raw)
        cards = self.place_net(self.place_in(place) + self.place_ctx(ctx)[:, None])
        joker = self.joker_net(ctx)
        # Melds: contents, kind and size (every player's meld k has the contract's kind), owner down.
        kinds = self._part(x, "contract_melds").reshape(b, 1, m, 3).expand(b, n, m, 3).reshape(b, n * m, 3)
        down = self._part(x, "down").reshape(b, n, 1).expand(b, n, m).reshape(b, n * m, 1)
        sizes = self._part(x, "hand_sizes").reshape(b, n, 1).expand(b, n, m).reshape(b, n * m, 1) / 15
        own = torch.zeros(b, n, m, 1, device=x.device)
        own[:, 0] = 1
        slot_facts = torch.cat(
            [
                melds[:, :, 0].sum(2, keepdim=True) / 8,
                melds[:, :, 1].sum(2, keepdim=True) / 4,
                (occupied.sum(2, keepdim=True) == 0).float(),
                kinds / torch.tensor([1.0, 1.0, 8.0], device=x.device),
                down,
                own.reshape(b, n * m, 1),
                sizes,
            ],
            dim=2,
        )
        slots = self.slot_net(self.slot_in(slot_facts) + self.slot_ctx(ctx)[:, None])
        # Pair facts: the place itself taken in that meld, its rank there, same-suit neighbours there.
        occ_nat = occupied[:, :, :52].clone()
        occ_nat[:, :, 0::13] += occupied[:, :, 52:]
        occ_rank = occ_nat.reshape(b, n * m, 4, 13).sum(2)[:, :, rank]
        occ_grid = self._grid(occ_nat.clamp(max=1))
        pair = torch.stack(
            [occupied, occ_rank / 4, *(self._at(occ_grid, d) for d in _NEIGHBOURS)],
            dim=3,
        )
        logits = [
            self.simple(
                torch.cat([ctx, (up[:, :52, None] * cards[:, :52]).sum(1) + up[:, JOKER, None] * joker], 1)
            ),
            torch.cat([self.discard(cards[:, :52]).squeeze(2), self.discard(joker).reshape(b, 1)], dim=1),
        ]
        own_slots, own_pairs = slots[:, :m], pair[:, :m]
        meld = torch.stack(
            [
                self._pairs("meld", cards, own_slots, own_pairs),
                self._pairs("meld_joker", cards, own_slots, own_pairs, joker),
            ],
            dim=2,
        )
        layoff = torch.stack(
            [
                self._pairs("layoff", cards, slots, pair),
                self._pairs("layoff_joker", cards, slots, pair, joker),
            ],
            dim=2,
        )
        logits += [
            meld.reshape(b, -1),
            layoff.reshape(b, -1),
            self._pairs("swap", cards, slots, pair).reshape(b, -1),
        ]
        pooled = (held[:, :, None] * cards[:, :52]).sum(1) / 11 + hand[:, JOKER, None] * joker / 2
        return torch.cat(logits, dim=1), self.value_in(torch.cat([ctx, pooled], dim=1))

    def _pairs(
        self,
        name: str,
        cards: torch.Tensor,
        slots: torch.Tensor,
        pair: torch.Tensor,
        joker: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Scores [batch, melds, 56] of placing each place's card (or a joker declared as it) in each meld."""
        head = cast(nn.ModuleDict, self.heads[name])
        card = head["card"](cards)
        if joker is not None:
            card = card + head["joker"](joker)[:, None]
        score = torch.bmm(head["slot"](slots), torch.relu(card).transpose(1, 2))
        return score + head["pair"](pair).squeeze(3)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_parts(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward_parts(features)[0]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.forward_parts(features)[1]


class StructuredPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's actor-critic with :class:`StructuredNet` in place of the MLPs and the action layer.

    ``num_players`` and ``contracts`` fix the observation and action layout; ``width`` is the
    size of every embedding; ``derived`` says the observation is followed by the derived inputs
    of :mod:`shanghai_env.agents.learned.derived` (then they join each card's and the context's facts).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Any,
        num_players: int = 4,
        contracts: tuple[int, ...] = ALL_CONTRACTS,
        width: int = 64,
        derived: bool = False,
        **kwargs: Any,
    ) -> None:
        self.num_players, self.contracts, self.width = num_players, tuple(contracts), width
        self.derived = derived
        kwargs.setdefault("ortho_init", False)
        kwargs.pop("net_arch", None)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        space = self.observation_space
        if not isinstance(space, spaces.Box):
            raise TypeError(f"StructuredPolicy reads a Box observation, got {type(space).__name__}")
        bound = np.maximum(np.abs(space.low), np.abs(space.high)).reshape(-1)
        scale = torch.as_tensor(np.maximum(bound, 1), dtype=torch.float32)
        self.mlp_extractor = StructuredNet(  # type: ignore[assignment]
            int(np.prod(space.shape)), scale, self.num_players, self.contracts, self.width, self.derived
        )

    def _build(self, lr_schedule: Any) -> None:
        self._build_mlp_extractor()
        if self.mlp_extractor.latent_dim_pi != self.action_space.n:  # type: ignore[attr-defined]
            raise ValueError("the action space does not match the policy's players and contracts")
        self.action_net = nn.Identity()  # the extractor's first output already is the logits
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(
            num_players=self.num_players, contracts=self.contracts, width=self.width, derived=self.derived
        )
        return data
