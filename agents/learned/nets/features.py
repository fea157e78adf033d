"""Policy inputs: SB3 feature extractors that turn the flat observation into what a rummy player
looks at, from the observation alone (a saved model needs nothing else to play):
:class:`CardFeatures` and :class:`RummyFeatures`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
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


def _ring(reach: int) -> torch.Tensor:
    """(13, 13): 1 where two ranks are 1 to ``reach`` apart, the ace next to both the two and the king."""
    gap = (torch.arange(13)[:, None] - torch.arange(13)[None, :]) % 13
    near = ((gap >= 1) & (gap <= reach)) | (gap >= 13 - reach)
    return near.float()


class RummyFeatures(BaseFeaturesExtractor):
    """The scaled observation, :class:`CardFeatures`' extras, and per-card-kind facts (held, seen
    elsewhere, taken by each opponent, points, same-suit neighbours; the same for the upcard).
    ``num_players`` and ``contracts`` fix the observation layout (ValueError if it does not fit).
    """

    PER_CARD = 9  # facts per natural card kind, see _extras()
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
        # the features after the observation, in forward()'s order: name, shape, divisor
        self.layout: list[tuple[str, tuple[int, ...], Any]] = [
            ("rank_counts", (13,), 4),
            ("upcard_rank", (13,), 1),
            ("upcard_rank_held", (13,), 4),
            ("suit_counts", (4,), 11),
            ("upcard_suit", (4,), 1),
            ("upcard_suit_held", (4,), 11),
            ("upcard_joker", (1,), 1),
            ("held_rank", (4, 13), 4),
            ("per_card", (self.PER_CARD, 4, 13), self.PER_CARD_DIVISORS),
            ("upcard_facts", (8,), self.UPCARD_DIVISORS),
            ("opponent_ranks", (num_players - 1, 13), 2),
        ]
        self.extra_size = sum(int(np.prod(shape)) for _, shape, _ in self.layout)
        # where each feature starts after the observation (what _extras() writes in place)
        widths = [int(np.prod(shape)) for _, shape, _ in self.layout]
        starts = np.cumsum([0, *widths[:-1]]).tolist()
        self.extra_start = {name: start for (name, _, _), start in zip(self.layout, starts)}
        super().__init__(observation_space, size + self.extra_size)
        self.scale: torch.Tensor
        self.points: torch.Tensor
        self.register_buffer("scale", _scale(observation_space))
        pts = [card_points(c) for c in range(NUM_NATURALS)]
        self.register_buffer("points", torch.as_tensor(pts, dtype=torch.float32).reshape(1, 4, 13) / 15)
        # Not saved with the weights (files of earlier versions have none; they follow the layout):
        # what each feature is divided by, in forward()'s order (one division of the whole batch,
        # where dividing each part by its own number was a third of a small batch's operations);
        # the sums of observation entries the features read (_sum_columns); the same-suit
        # neighbours one and two ranks away.
        self.divisors: torch.Tensor
        self.sums: torch.Tensor
        self.rings: torch.Tensor
        row = [self.scale] + [
            torch.broadcast_to(torch.as_tensor(d, dtype=torch.float32), shape).reshape(-1)
            for _, shape, d in self.layout
        ]
        self.register_buffer("divisors", torch.cat(row)[None], persistent=False)
        sums = self._sum_columns(size)
        self.register_buffer("sums", torch.from_numpy(sums), persistent=False)
        # its distinct rows (every meld's place of a card adds to the same sums, ...): a matrix that
        # stays in the cache, ~300 rows where there are 2,000 (the same rows, the same sums), and
        # which of them each observation entry reads
        ids: dict[bytes, int] = {}  # (np.unique's sort of the rows: a tenth of a second)
        self.sum_row = np.array([ids.setdefault(row.tobytes(), len(ids)) for row in sums], np.int64)
        distinct = np.zeros((len(ids), sums.shape[1]), np.float32)
        distinct[self.sum_row] = sums
        self.distinct_sums = torch.from_numpy(distinct)
        # one product for the neighbours (sums of small whole numbers: exact), not a roll per shift
        self.register_buffer("rings", torch.stack([_ring(1), _ring(2)]), persistent=False)
        # _extras() reads each feature as a product of two of a row's sources: the sums, the hand,
        # the cards held, their neighbours, each card's points and a 1 (these two the same for
        # every row); the upcard's facts as its products with six blocks of the sources
        factors, of_upcard = self._factors(sums.shape[1])
        self.factors: torch.Tensor
        self.of_upcard: torch.Tensor
        self.constants: torch.Tensor
        self.register_buffer("factors", torch.from_numpy(factors), persistent=False)
        self.register_buffer("of_upcard", torch.from_numpy(of_upcard), persistent=False)
        self.register_buffer(
            "constants", torch.cat([self.points.reshape(-1), torch.ones(1)]), persistent=False
        )
        # the same as numpy arrays, for _extras() on the CPU
        self.numpy_parts = {
            name: getattr(self, name).numpy() for name in ("factors", "of_upcard", "constants", "rings")
        }

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.flatten(1).float()
        u = self.upcard
        if x.device.type == "cpu":  # as nonzero() computes them
            rows = x.detach().numpy()
            sums = self._sums(SparseObs.of(rows))
            extras = torch.from_numpy(self._extras(rows[:, :52], rows[:, u : u + 52], sums))
        else:
            extras = self._extras(x[:, :52], x[:, u : u + 52], x @ self.sums)
        return torch.cat([x, extras], dim=1) / self.divisors

    def nonzero(self, observations: torch.Tensor | np.ndarray) -> SparseObs:
        """:meth:`forward`'s nonzero entries, row by row, of a CPU tensor without a gradient or an
        array (any numeric type, read as it is): the same values."""
        if isinstance(observations, torch.Tensor):
            observations = observations.numpy()
        x = observations.reshape(len(observations), -1)
        found = SparseObs.of(x)  # the observation's own entries, read once for both parts
        u = self.upcard
        sums = self._sums(found)
        hand, up = x[:, :52].astype(np.float32), x[:, u : u + 52].astype(np.float32)
        both = found.hstack(SparseObs.of(self._extras(hand, up, sums)))
        both.values /= self.divisors[0].numpy()[both.cols]  # float32, rounded as torch's division
        return both

    def same_layout(self, other: Any) -> bool:
        """Whether ``other`` is a RummyFeatures of the same table (the same features of an observation)."""
        if not isinstance(other, RummyFeatures):
            return False
        return (self.features_dim, self.n, self.upcard, self.discards, self.picked, self.table) == (
            other.features_dim,
            other.n,
            other.upcard,
            other.discards,
            other.picked,
            other.table,
        )

    def parts(self, observations: torch.Tensor) -> dict[str, torch.Tensor]:
        """The features by name, each ``[batch, ...]``, in the order :meth:`forward` concatenates them."""
        out = self(observations)
        b, size = out.shape[0], self.features_dim - self.extra_size
        named = {"observation": out[:, :size]}
        for name, shape, _ in self.layout:
            width = int(np.prod(shape))
            named[name] = out[:, size : size + width].reshape(b, *shape)
            size += width
        return named

    def _sums(self, found: SparseObs) -> np.ndarray:
        """``(B, S)``: the sums of :meth:`_sum_columns` of the CPU observations whose nonzero
        entries are ``found`` (a row of the sums' matrix an entry, not a product reading every one)."""
        rows, values = torch.from_numpy(self.sum_row[found.cols]), torch.from_numpy(found.values)
        with torch.no_grad():
            sums = F.embedding_bag(
                rows,
                self.distinct_sums,
                torch.from_numpy(found.starts),
                mode="sum",
                per_sample_weights=values,
            )
        return sums.numpy()

    def _sum_columns(self, size: int) -> np.ndarray:
        """``(L, S)``: which observation entries each linear fact of :meth:`_extras` adds up, 0 or 1
        (sums of whole numbers: exact in float32 in any order); the order _extras() reads them."""
        n, u, p = self.n, self.upcard, self.picked
        cards = np.arange(NUM_NATURALS).reshape(4, 13)  # card = suit * 13 + rank
        melds = range(self.table[0], self.table[1], 112)

        def column(at: Any) -> np.ndarray:
            out = np.zeros(size, np.float32)
            np.add.at(out, np.asarray(list(at) if isinstance(at, range) else at).reshape(-1), 1)
            return out

        # cards seen outside the hand: the discard pile, naturals on the table, cards others took
        seen_at = [
            [self.discards + c, *(m + c for m in melds), *(p + k * 53 + c for k in range(1, n))]
            for c in range(52)
        ]
        for suit in range(4):  # high aces (places 52..55) are aces C, D, H, S
            seen_at[suit * 13] += [m + 52 + suit for m in melds]
        seen = [column(at) for at in seen_at]
        return np.stack(
            [
                *(column(cards[:, r]) for r in range(13)),  # 0: the hand's ranks
                *(column(u + cards[:, r]) for r in range(13)),  # 13: the upcard's rank
                *(column(cards[s]) for s in range(4)),  # 26: the hand's suits
                *(column(u + cards[s]) for s in range(4)),  # 30: the upcard's suit
                *(sum(seen[c] for c in cards[:, r]) for r in range(13)),  # 34: ranks seen
                *seen,  # 47
                *(
                    column(p + k * 53 + cards[:, r]) for k in range(1, n) for r in range(13)
                ),  # 99: ranks taken
                column(range(u, u + 53)),  # -3: an upcard offered
                column([u + 52]),  # -2: the upcard a joker
                column([52]),  # -1: jokers held
            ],
            axis=1,
        )

    def _factors(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """``(2, E)``: the two sources (_extras()) whose product is each feature after the
        observation, in forward()'s order (a 1 for the facts written after); ``(6 * 52,)``: the
        sources the upcard's facts multiply, block by block."""
        ranks, seen, taken, offered, up_joker, jokers = 0, 47, 99, width - 3, width - 2, width - 1
        hand, held, near, points, one = width, width + 52, width + 104, width + 208, width + 260
        rank = np.tile(np.arange(13), 4)  # each card's rank, card = suit * 13 + rank
        card = np.arange(NUM_NATURALS)
        pairs: list[tuple[Any, Any]] = [
            (ranks + np.arange(13), one),  # rank_counts
            (13 + np.arange(13), one),  # upcard_rank
            (ranks + np.arange(13), 13 + np.arange(13)),  # upcard_rank_held
            (26 + np.arange(4), one),  # suit_counts
            (30 + np.arange(4), one),  # upcard_suit
            (26 + np.arange(4), 30 + np.arange(4)),  # upcard_suit_held
            (up_joker, one),  # upcard_joker
            (held + card, ranks + rank),  # held_rank
            # per card: cards held of its rank (0 if not held; repeats held_rank), of its rank seen
            # elsewhere, its points, same-suit neighbours held one and two ranks away, the only one
            # of its rank held (written after), seen elsewhere, cards held of its rank, seen
            (held + card, ranks + rank),
            (held + card, 34 + rank),
            (held + card, points + card),
            (held + card, near + card),
            (held + card, near + 52 + card),
            (one, one + 0 * card),  # (52 of them)
            (seen + card, one),
            (ranks + rank, one),
            (34 + rank, one),
            (one + np.zeros(6, np.int64), one),  # the upcard's facts, written after
            (offered, jokers),  # jokers held while an upcard is offered
            (offered, one),
            (taken + np.arange(13 * (self.n - 1)), one),  # ranks each opponent took
        ]
        broadcast = [np.broadcast_arrays(np.atleast_1d(a), np.atleast_1d(b)) for a, b in pairs]
        factors = np.stack(
            [np.concatenate([a for a, _ in broadcast]), np.concatenate([b for _, b in broadcast])]
        )
        # cards held of the upcard's rank, of its rank seen elsewhere, its same-suit neighbours held
        # (two reaches), its points, copies of it held
        of_upcard = np.concatenate(
            [ranks + rank, 34 + rank, near + card, near + 52 + card, points + card, hand + card]
        )
        return factors.astype(np.int64), of_upcard.astype(np.int64)

    def _extras(self, hand: Any, up: Any, sums: Any) -> Any:
        """The features after the observation, unscaled, ``(B, extra_size)``, from the hand's and the
        upcard's 52 naturals (float32) and :meth:`_sums`: numpy arrays (``nonzero``: a small batch
        on the CPU, where numpy's operations cost a fraction of torch's) or tensors (``forward``,
        any device), the same operations and values: few of them, each feature the product of two
        sources (whole numbers, or a 1 and a card's points: exact)."""
        ops = _NUMPY if isinstance(sums, np.ndarray) else _TORCH
        parts = (
            self.numpy_parts
            if ops is _NUMPY
            else {
                "factors": self.factors,
                "of_upcard": self.of_upcard,
                "constants": self.constants,
                "rings": self.rings,
            }
        )
        b = hand.shape[0]
        held = ops.as_float(hand > 0)
        near = held.reshape(b, 1, 4, 13) @ parts["rings"]  # (B, 2, 4, 13): neighbours one and two ranks away
        constants = ops.broadcast_to(parts["constants"], (b, NUM_NATURALS + 1))
        sources = ops.cat([sums, hand, held, near.reshape(b, 2 * NUM_NATURALS), constants], 1)
        factors = parts["factors"]
        out = ops.take(sources, factors[0]) * ops.take(sources, factors[1])
        card_at, up_at = self.extra_start["per_card"], self.extra_start["upcard_facts"]
        per_card = out[:, card_at : card_at + self.PER_CARD * NUM_NATURALS]
        per_card = per_card.reshape(b, self.PER_CARD, NUM_NATURALS)
        ops.eq(per_card[:, 0], 1, out=per_card[:, 5])  # held, and the only card of its rank
        # the upcard's facts: the upcard's (one-hot) products with whole numbers and with one point
        # value summed in one operation, exact in any order
        blocks = ops.take(sources, parts["of_upcard"]).reshape(b, 6, NUM_NATURALS)
        out[:, up_at : up_at + 6] = (blocks @ up[:, :, None]).reshape(b, 6)
        # The layout is what the shipped model was trained on: per_card repeats held_rank and
        # rank_counts (rows 0 and 7); dropping them would need a retrained model.
        return out


class _Ops:
    """The operations :meth:`RummyFeatures._extras` names, of numpy or of torch."""

    def __init__(self, numpy: bool) -> None:
        self.eq: Any = np.equal if numpy else torch.eq
        self.cat: Any = np.concatenate if numpy else torch.cat
        self.broadcast_to: Any = np.broadcast_to if numpy else torch.broadcast_to
        self.numpy = numpy

    def as_float(self, x: Any) -> Any:
        return x.astype(np.float32) if self.numpy else x.float()

    def take(self, x: Any, columns: Any) -> Any:
        """``x[:, columns]``."""
        return np.take(x, columns, 1) if self.numpy else x.index_select(1, columns)


_NUMPY, _TORCH = _Ops(numpy=True), _Ops(numpy=False)
