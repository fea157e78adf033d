"""Policy inputs: SB3 feature extractors that turn the flat observation into what a rummy player
looks at, from the observation alone (a saved model needs nothing else to play):
:class:`CardFeatures` and :class:`RummyFeatures`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from shanghai_env.agents.learned.nets.policy import SparseObs
from shanghai_env.cards import card_points
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import Rules

NUM_NATURALS = 52


def _scale(observation_space: spaces.Box) -> torch.Tensor:
    bound = np.maximum(np.abs(observation_space.low), np.abs(observation_space.high))
    return torch.as_tensor(np.maximum(bound, 1).reshape(-1), dtype=torch.float32)


class CardFeatures(BaseFeaturesExtractor):
    """The observation scaled to about [-1, 1] (each entry divided by its largest magnitude); with
    ``upcard_start`` (where the ``upcard_offered`` slice begins), plus the hand's and the upcard's
    counts per rank and suit, their products, and for each card held the cards of its rank held.
    """

    def __init__(self, observation_space: spaces.Box, upcard_start: int | None = None) -> None:
        size = int(np.prod(observation_space.shape))
        extra = 0 if upcard_start is None else 3 * 13 + 3 * 4 + 1 + 52
        super().__init__(observation_space, size + extra)
        self.scale: torch.Tensor
        self.register_buffer("scale", _scale(observation_space))
        self.upcard_start = upcard_start

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.flatten(1).float()
        parts = [x / self.scale]
        if self.upcard_start is not None:
            parts += [(p / d).flatten(1) for p, d in _count_parts(x, self.upcard_start).values()]
        return torch.cat(parts, dim=1)


def _count_parts(x: torch.Tensor, upcard: int) -> dict[str, tuple[torch.Tensor, float]]:
    """:class:`CardFeatures`' extras (the upcard from ``upcard``), each undivided, with its divisor."""
    hand = x[:, :52].reshape(-1, 4, 13)  # card = suit * 13 + rank
    up = x[:, upcard : upcard + 52].reshape(-1, 4, 13)
    by_rank, up_rank = hand.sum(1), up.sum(1)
    by_suit, up_suit = hand.sum(2), up.sum(2)
    return {
        "rank_counts": (by_rank, 4),
        "upcard_rank": (up_rank, 1),
        "upcard_rank_held": (by_rank * up_rank, 4),
        "suit_counts": (by_suit, 11),
        "upcard_suit": (up_suit, 1),
        "upcard_suit_held": (by_suit * up_suit, 11),
        "upcard_joker": (x[:, upcard + 52 : upcard + 53], 1),
        "held_rank": ((hand > 0).float() * by_rank.unsqueeze(1), 4),  # [B, 4, 13]
    }


def _neighbours(cards: torch.Tensor, reach: int) -> torch.Tensor:
    """Per card [B, 4, 13]: cards held of the same suit within ``reach`` ranks (aces wrap)."""
    # one product (sums of small whole numbers: exact in float32), not a torch.roll per shift
    return cards @ _ring(reach, cards.device, cards.dtype)


@functools.cache
def _ring(reach: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """(13, 13): 1 where two ranks are 1 to ``reach`` apart, the ace next to both the two and the king."""
    gap = (torch.arange(13)[:, None] - torch.arange(13)[None, :]) % 13
    near = ((gap >= 1) & (gap <= reach)) | (gap >= 13 - reach)
    return near.to(device=device, dtype=dtype)


class RummyFeatures(BaseFeaturesExtractor):
    """The scaled observation, :class:`CardFeatures`' extras, and per-card-kind facts (held, seen
    elsewhere, taken by each opponent, points, same-suit neighbours; the same for the upcard).
    ``num_players`` and ``contracts`` fix the observation layout (ValueError if it does not fit).
    """

    PER_CARD = 9  # facts per natural card kind, see _unscaled()
    # what the per-card facts and the upcard's facts are divided by, in their order
    PER_CARD_DIVISORS = torch.tensor([4.0, 8, 1, 2, 4, 1, 2, 4, 8]).reshape(9, 1, 1)
    UPCARD_DIVISORS = torch.tensor([4.0, 8, 2, 4, 1, 2, 2, 1])

    def __init__(self, observation_space: spaces.Box, num_players: int, contracts: tuple[int, ...]) -> None:
        encoder = ObservationEncoder(Rules(num_players=num_players, contracts=tuple(contracts)))
        size = int(np.prod(observation_space.shape))
        if size != encoder.size:
            raise ValueError(
                f"observation length {size} does not match {num_players} players, contracts {contracts}"
            )
        s = encoder.slices
        self.n = num_players
        self.upcard = s["upcard_offered"].start
        self.discards = s["discard_counts"].start
        self.picked = s["picked_up"].start
        table = s["table"]
        self.table = (table.start, table.stop)
        extra = 3 * 13 + 3 * 4 + 1 + 52 + self.PER_CARD * NUM_NATURALS + 8 + 13 * (num_players - 1)
        super().__init__(observation_space, size + extra)
        self.scale: torch.Tensor
        self.points: torch.Tensor
        self.register_buffer("scale", _scale(observation_space))
        pts = [card_points(c) for c in range(NUM_NATURALS)]
        self.register_buffer("points", torch.as_tensor(pts, dtype=torch.float32).reshape(1, 4, 13) / 15)
        # what each feature is divided by, in forward()'s order: one division of the whole batch,
        # where dividing each part by its own number was a third of a small batch's operations.
        # Not saved with the weights (files of earlier versions have none; it follows the layout).
        self.divisors: torch.Tensor
        unscaled = self._unscaled(torch.zeros(1, size))
        row = [
            torch.broadcast_to(torch.as_tensor(d, dtype=torch.float32), p.shape[1:]).reshape(-1)
            for p, d in unscaled.values()
        ]
        self.register_buffer("divisors", torch.cat(row)[None], persistent=False)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        parts = self._unscaled(observations).values()
        return torch.cat([part.flatten(1) for part, _ in parts], dim=1) / self.divisors

    def nonzero(self, observations: torch.Tensor) -> SparseObs:
        """:meth:`forward`'s nonzero entries, row by row (CPU tensors, no gradient): the same values."""
        with torch.no_grad():
            unscaled = torch.cat(
                [part.flatten(1) for part, _ in self._unscaled(observations).values()], dim=1
            )
        found = SparseObs.of(unscaled.numpy())
        found.values /= self.divisors[0].numpy()[found.cols]  # float32, rounded as torch's division
        return found

    def parts(self, observations: torch.Tensor) -> dict[str, torch.Tensor]:
        """The features by name, each ``[batch, ...]``, in the order :meth:`forward` concatenates them."""
        unscaled = self._unscaled(observations).items()
        return {name: part / torch.as_tensor(by, device=part.device) for name, (part, by) in unscaled}

    def _unscaled(self, observations: torch.Tensor) -> dict[str, tuple[torch.Tensor, Any]]:
        """:meth:`parts` before their last division, each with its divisor (a number or a tensor)."""
        x = observations.flatten(1).float()
        b, n, u = x.shape[0], self.n, self.upcard
        hand = x[:, :52].reshape(b, 4, 13)  # card = suit * 13 + rank
        up = x[:, u : u + 52].reshape(b, 4, 13)
        has_up = x[:, u : u + 53].sum(1)
        # Cards seen outside the hand: the discard pile, naturals on the table, cards others took.
        melds = x[:, self.table[0] : self.table[1]].reshape(b, -1, 112)
        on_table = melds[:, :, :52].sum(1)
        on_table[:, 0::13] += melds[:, :, 52:56].sum(1)  # high aces (places 52..55) are aces C, D, H, S
        picked = x[:, self.picked : self.picked + n * 53].reshape(b, n, 53)[:, 1:, :52]  # other seats
        seen = (x[:, self.discards : self.discards + 52] + on_table + picked.sum(1)).reshape(b, 4, 13)
        counts = _count_parts(x, u)
        held = (hand > 0).float()
        rank_held = counts["rank_counts"][0].unsqueeze(1).expand(b, 4, 13)  # the hand's sum by rank
        rank_seen = seen.sum(1).unsqueeze(1).expand(b, 4, 13)
        near1, near2 = _neighbours(held, 1), _neighbours(held, 2)
        # facts a network reads off one unit ("a high single card whose rank is mostly gone") rather
        # than finding the products in 2,000 raw counts (cloning planner agrees far more often)
        per_card = torch.stack(
            [
                counts["held_rank"][0],  # cards held of its rank (0 if not held); repeats held_rank
                held * rank_seen,  # cards of its rank seen elsewhere
                held * self.points,
                held * near1,  # same-suit neighbours held, one and two ranks away
                held * near2,
                (held * rank_held == 1).float(),  # held, and the only card of its rank
                seen,
                rank_held,
                rank_seen,
            ],
            dim=1,
        )
        # the upcard's facts: the upcard's (one-hot) products with whole numbers and with one point
        # value summed in one operation, exact in any order
        of_upcard = torch.stack(
            [rank_held, rank_seen, near1, near2, self.points.expand(b, 4, 13), hand], dim=1
        )
        up_facts = torch.cat(
            [
                # cards held of the upcard's rank, of its rank seen elsewhere, same-suit neighbours
                # held (two reaches), its points, copies of the upcard itself held
                (up.unsqueeze(1) * of_upcard).sum((2, 3)),
                (has_up * x[:, 52]).unsqueeze(1),  # jokers held while an upcard is offered
                has_up.unsqueeze(1),
            ],
            dim=1,
        )
        # The layout is what the shipped model was trained on: per_card repeats held_rank and
        # rank_counts (rows 0 and 7); dropping them would need a retrained model.
        return {
            "observation": (x, self.scale),
            **counts,
            "per_card": (per_card, self.PER_CARD_DIVISORS),
            "upcard_facts": (up_facts, self.UPCARD_DIVISORS),
            "opponent_ranks": (picked.reshape(b, n - 1, 4, 13).sum(2), 2),  # ranks each opponent took
        }
