"""Melds, contracts, joker limits, layoff fit and contract feasibility: pure functions over ints.

Vocabulary:
- a *spec* says what one contract meld must be: a set or run, its size and its joker limit;
- a :class:`Meld` is a meld on the table (or one being laid down): its cards, and for each card
  the *place* it stands for (a joker's place is its declared card, see :mod:`cards`);
- a *run* lives in one suit on positions 0..13 (ace low 0, 2..K 1..12, ace high 13).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .cards import (
    ACE_HIGH_BASE,
    JOKER,
    PLACE_CARD,
    make_place,
    place_to_str,
)

SET = 0
RUN = 1
MAX_RUN = 13


@dataclass(frozen=True)
class MeldSpec:
    """One meld a contract asks for."""

    kind: int  # SET or RUN
    size: int
    max_jokers: int

    def __str__(self) -> str:
        return f"{'set' if self.kind == SET else 'run'} of {self.size}"


SET3 = MeldSpec(SET, 3, 1)
RUN4 = MeldSpec(RUN, 4, 1)
RUN5 = MeldSpec(RUN, 5, 2)
RUN7 = MeldSpec(RUN, 7, 3)
RUN10 = MeldSpec(RUN, 10, 4)

# docs/rules.md section 2. Sets are listed before runs in every contract.
CONTRACTS: dict[int, tuple[MeldSpec, ...]] = {
    1: (SET3, SET3),
    2: (SET3, RUN4),
    3: (RUN4, RUN4),
    4: (SET3, SET3, SET3),
    5: (SET3, RUN7),
    6: (SET3, SET3, RUN5),
    7: (RUN4, RUN4, RUN4),
    8: (SET3, RUN10),
    9: (SET3, SET3, SET3, RUN5),
    10: (RUN5, RUN5, RUN5),
}


def contract_size(contract: int) -> int:
    return sum(s.size for s in CONTRACTS[contract])


def buys_allowed(contract: int) -> int:
    """Buys per player per deal: 3 in contracts 1-8, 4 in 9-10."""
    return 4 if contract >= 9 else 3


def describe_contract(contract: int) -> str:
    return " + ".join(str(s) for s in CONTRACTS[contract])


def pos_of(place: int) -> int:
    """Run position (0..13) of a place."""
    return 13 if place >= ACE_HIGH_BASE else place % 13


class Meld:
    """A meld on the table, or a contract meld being laid down (``building``).

    ``places`` are kept sorted by run position for runs; ``cards[i]`` is the card lying at
    ``places[i]``: the natural card or ``JOKER``.
    """

    __slots__ = ("spec", "rank", "suit", "places", "cards", "jokers")

    def __init__(self, spec: MeldSpec) -> None:
        self.spec = spec
        self.rank = -1  # sets: the set's rank once known
        self.suit = -1  # runs: the run's suit once known
        self.places: list[int] = []
        self.cards: list[int] = []
        self.jokers = 0

    def copy(self) -> Meld:
        m = Meld.__new__(Meld)
        m.spec = self.spec
        m.rank = self.rank
        m.suit = self.suit
        m.places = self.places[:]
        m.cards = self.cards[:]
        m.jokers = self.jokers
        return m

    def __len__(self) -> int:
        return len(self.places)

    @property
    def kind(self) -> int:
        return self.spec.kind

    def span(self) -> tuple[int, int]:
        """(lowest, highest) run position; only for non-empty runs."""
        return pos_of(self.places[0]), pos_of(self.places[-1])

    def is_complete(self, exact: bool) -> bool:
        """True when the meld is a valid meld of its spec (run positions contiguous)."""
        n = len(self.places)
        if n < self.spec.size or (exact and n != self.spec.size):
            return False
        if self.spec.kind == RUN:
            lo, hi = self.span()
            return hi - lo + 1 == n
        return True

    # --- placing cards --------------------------------------------------------------------

    def fits_building(self, card: int, place: int, exact: bool) -> bool:
        """May ``card`` (standing for ``place``) join this meld while it is being laid down?

        A joker may only join a meld that already holds a natural card, so that the meld's
        rank or suit is known; every valid arrangement stays reachable by placing naturals first.
        """
        spec = self.spec
        is_joker = card == JOKER
        if not is_joker and PLACE_CARD[place] != card:
            return False
        if not self.places:
            return not is_joker
        if is_joker and self.jokers >= spec.max_jokers:
            return False
        if spec.kind == SET:
            if place >= ACE_HIGH_BASE or place % 13 != self.rank:
                return False
            return not exact or len(self.places) < spec.size
        if (place - ACE_HIGH_BASE if place >= ACE_HIGH_BASE else place // 13) != self.suit:
            return False
        pos = pos_of(place)
        lo, hi = self.span()
        if lo <= pos <= hi and any(pos_of(p) == pos for p in self.places):
            return False
        width = max(hi, pos) - min(lo, pos) + 1
        return width <= (spec.size if exact else MAX_RUN)

    def fits_layoff(self, card: int, place: int) -> bool:
        """May ``card`` standing for ``place`` be laid off on this complete meld?"""
        is_joker = card == JOKER
        if not is_joker and PLACE_CARD[place] != card:
            return False
        if is_joker and self.jokers >= self.spec.max_jokers:
            return False
        if self.spec.kind == SET:
            return place < ACE_HIGH_BASE and place % 13 == self.rank
        if (place - ACE_HIGH_BASE if place >= ACE_HIGH_BASE else place // 13) != self.suit:
            return False
        lo, hi = self.span()
        if hi - lo + 1 >= MAX_RUN:
            return False
        pos = pos_of(place)
        return pos == lo - 1 or pos == hi + 1

    def add(self, card: int, place: int) -> None:
        if not self.places:
            if self.spec.kind == SET:
                self.rank = place % 13
            else:
                self.suit = place - ACE_HIGH_BASE if place >= ACE_HIGH_BASE else place // 13
        if card == JOKER:
            self.jokers += 1
        if self.spec.kind == RUN:
            pos = pos_of(place)
            i = 0
            while i < len(self.places) and pos_of(self.places[i]) < pos:
                i += 1
            self.places.insert(i, place)
            self.cards.insert(i, card)
        else:
            self.places.append(place)
            self.cards.append(card)

    def joker_at(self, place: int) -> int:
        """Index of a joker declared as ``place``, or -1."""
        for i, p in enumerate(self.places):
            if p == place and self.cards[i] == JOKER:
                return i
        return -1

    def swap_joker(self, index: int) -> None:
        """Replace the joker at ``index`` by the natural card it stands for."""
        self.cards[index] = PLACE_CARD[self.places[index]]
        self.jokers -= 1

    def text(self) -> str:
        parts = []
        for card, place in zip(self.cards, self.places):
            parts.append("JK=" + place_to_str(place) if card == JOKER else place_to_str(place))
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Meld({self.spec}: {self.text()})"


def meld_is_valid(meld: Meld, exact: bool) -> bool:
    """Full check of a finished meld (used by validate(), not on hot paths)."""
    if not meld.is_complete(exact) and not meld.is_complete(False):
        return False
    if meld.jokers > meld.spec.max_jokers or meld.jokers != meld.cards.count(JOKER):
        return False
    for card, place in zip(meld.cards, meld.places):
        if card != JOKER and PLACE_CARD[place] != card:
            return False
    if meld.spec.kind == SET:
        return all(p < ACE_HIGH_BASE and p % 13 == meld.rank for p in meld.places)
    if any((p - ACE_HIGH_BASE if p >= ACE_HIGH_BASE else p // 13) != meld.suit for p in meld.places):
        return False
    positions = [pos_of(p) for p in meld.places]
    return positions == list(range(positions[0], positions[0] + len(positions))) and len(positions) <= MAX_RUN


def runs_separated(a: tuple[int, int], b: tuple[int, int], gap: int) -> bool:
    """Two same-suit runs (lo, hi) leave at least ``gap`` ranks between them."""
    return a[0] - b[1] - 1 >= gap or b[0] - a[1] - 1 >= gap


# --- contract feasibility ---------------------------------------------------------------------

# An arrangement is, for each contract meld, the list of (card, place) that complete it (the
# cards still to come from the hand, for melds partly laid down).
Arrangement = list[list[tuple[int, int]]]


def can_fulfil(
    hand: Sequence[int],
    contract: int,
    *,
    gap: int = 1,
    exact: bool = True,
    reserve: int = 1,
) -> bool:
    """Can this hand (a count vector) lay down this contract, keeping ``reserve`` cards?"""
    if sum(hand) - _CONTRACT_SIZE[contract] < reserve:
        return False
    shape = _SHAPES[contract]
    b = bytes(hand)
    jokers = b[JOKER]
    if not shape.runs:  # sets only: the count is exact, no search needed
        return _set_jokers(_rank_counts(b), shape.sets) <= jokers
    need = _run_jokers(b, shape, gap)
    if shape.sets and need <= jokers:
        need += _set_jokers(_rank_counts(b), shape.sets)
    if need > jokers:
        return False  # even the cheapest runs and sets, each on its own, need more jokers
    melds = [Meld(s) for s in CONTRACTS[contract]]
    return next(_complete(list(hand), melds, gap, exact, reserve, False), None) is not None


# --- counting bounds for can_fulfil ---------------------------------------------------------------
#
# Feasibility is a question of jokers: a contract fits when the missing cards of some choice of
# sets and runs can be covered by the jokers held, within each meld's joker limit. Sets alone
# reduce to counts per rank (exact, below). With runs, the jokers the cheapest runs need on their
# own plus those the cheapest sets need from the whole hand (ignoring that the runs take some of
# its naturals) are a lower bound: above the jokers held, the hand surely cannot fit, and only
# hands within the bound are searched (:func:`_complete`).


@dataclass(frozen=True)
class _Shape:
    sets: int  # sets of three, one joker at most each (every contract set is SET3)
    runs: int
    run_len: int  # every run of one contract has one length and joker limit
    run_jokers: int


_SHAPES = {
    c: _Shape(
        sum(1 for s in specs if s.kind == SET),
        sum(1 for s in specs if s.kind == RUN),
        next((s.size for s in specs if s.kind == RUN), 0),
        next((s.max_jokers for s in specs if s.kind == RUN), 0),
    )
    for c, specs in CONTRACTS.items()
}
_CONTRACT_SIZE = {c: sum(s.size for s in specs) for c, specs in CONTRACTS.items()}
if any(s.kind == SET and s != SET3 for specs in CONTRACTS.values() for s in specs):
    raise RuntimeError("the set count of can_fulfil assumes every contract set is a set of three")


def _set_cost_tables() -> tuple[bytes, ...]:
    """For each joker cost k (0..3): bytes mapping a rank's count to how many sets of that rank
    have marginal cost k.

    The t-th set of a rank held c times needs ``max(0, 3t - c)`` jokers in all, and it exists
    only while ``2t <= c`` (a set takes one joker at most, so two naturals at least). The
    marginal costs of successive sets of a rank never decrease, so the cheapest ``s`` sets of a
    hand are its ``s`` smallest marginal costs over all ranks.
    """
    tables = [bytearray(256) for _ in range(4)]
    for c in range(256):
        t = 1
        while 2 * t <= c:
            tables[max(0, 3 * t - c) - max(0, 3 * t - 3 - c)][c] += 1
            t += 1
    return tuple(bytes(t) for t in tables)


_SET_COSTS = _set_cost_tables()
_NO_FIT = 1 << 20  # more jokers than any deck holds


def _rank_counts(b: bytes) -> bytes:
    """Naturals held of each rank (13 bytes) from a hand's bytes: the four suits' bytes added as
    little-endian integers (a count never reaches 256, so no carry crosses ranks)."""
    total = (
        int.from_bytes(b[0:13], "little")
        + int.from_bytes(b[13:26], "little")
        + int.from_bytes(b[26:39], "little")
        + int.from_bytes(b[39:52], "little")
    )
    return total.to_bytes(13, "little")


def _set_jokers(counts: bytes, sets: int) -> int:
    """Fewest jokers that make ``sets`` sets of three from these rank counts (``_NO_FIT`` if none)."""
    need = sets - sum(counts.translate(_SET_COSTS[0]))
    cost = 0
    for k in (1, 2, 3):
        if need <= 0:
            return cost
        avail = sum(counts.translate(_SET_COSTS[k]))
        take = avail if avail < need else need
        cost += k * take
        need -= take
    return cost if need <= 0 else _NO_FIT


_HELD = bytes([48] + [49] * 255)  # a count as the binary digit of "held": b"0" or b"1"


def _run_jokers(b: bytes, shape: _Shape, gap: int) -> int:
    """Fewest jokers the contract's runs need on their own (at least ``_NO_RUN`` if none), ignoring
    that two runs of one suit, one with the ace low and one with it high, would need two aces."""
    held = int(b[51::-1].translate(_HELD), 2)  # bit c: card c is in hand
    key = (shape.run_len, shape.run_jokers, gap)
    tables = _RUN_TABLES.get(key)
    if tables is None:
        tables = _RUN_TABLES[key] = _run_tables(*key)
    one = tables[1]
    masks = []
    for base in (0, 13, 26, 39):
        m = (held >> base) & 0x1FFF
        masks.append(m | (m & 1) << 13)  # the ace stands high too
    runs = shape.runs
    if runs == 1:
        return min(one[masks[0]], one[masks[1]], one[masks[2]], one[masks[3]])
    best = [0] + [_NO_RUN] * runs  # best[k]: fewest jokers for k runs in the suits so far
    for m in masks:
        for k in range(runs, 0, -1):  # in place, most runs first: best[k - i] is still old
            low = best[k]
            for i in range(1, k + 1):
                v = best[k - i] + tables[i][m]
                if v < low:
                    low = v
            best[k] = low
    return best[runs]


_NO_RUN = 255  # in the run tables: no fit
_RUN_TABLES: dict[tuple[int, int, int], tuple[bytes, ...]] = {}


def _run_tables(length: int, limit: int, gap: int) -> tuple[bytes, ...]:
    """Per k = 0..3, a table over every 14-bit presence mask of a suit (bit 13: the high ace): the
    fewest jokers that complete k runs of ``length`` in that suit, the runs ``gap`` ranks apart,
    each within its joker ``limit`` (``_NO_RUN`` if they cannot). Built once per run spec, for all
    16,384 masks at once."""
    masks = np.arange(1 << 14)
    held_below = [np.zeros_like(masks)]  # held_below[i]: positions held below i
    for pos in range(14):
        held_below.append(held_below[-1] + ((masks >> pos) & 1))
    starts = 15 - length
    missing = [length - (held_below[lo + length] - held_below[lo]) for lo in range(starts)]
    no_run = np.full_like(masks, _NO_RUN)
    # fewest[i]: the fewest jokers for k runs (k = 0, 1, ...) that start at i or later
    fewest = [np.zeros_like(masks)] * (starts + length + gap + 1)
    tables = [bytes(1 << 14)]
    for _ in range(3):
        more = [no_run] * len(fewest)
        for lo in range(starts - 1, -1, -1):
            here = np.where(missing[lo] <= limit, missing[lo] + fewest[lo + length + gap], _NO_RUN)
            more[lo] = np.minimum(here, more[lo + 1])
        fewest = more
        tables.append(np.minimum(fewest[0], _NO_RUN).astype(np.uint8).tobytes())
    return tuple(tables)


def arrangements(
    hand: Sequence[int],
    contract: int,
    *,
    gap: int = 1,
    exact: bool = True,
    reserve: int = 1,
) -> Iterator[Arrangement]:
    """Every way (up to the suits chosen for set cards) to lay down ``contract`` from ``hand``.

    Each arrangement differs in which runs (suit, window, joker places) or set ranks and joker
    counts it uses; naturals of a set are taken lowest suit first and a joker in a set is
    declared in the first suit not already used there.
    """
    specs = CONTRACTS[contract]
    if sum(hand) - sum(s.size for s in specs) < reserve:
        return iter(())
    return _complete(list(hand), [Meld(s) for s in specs], gap, exact, reserve, True)


def completion_feasible(
    hand: Sequence[int], melds: Sequence[Meld], *, gap: int, exact: bool, reserve: int = 1
) -> bool:
    """Can the hand complete these partly laid contract melds, keeping ``reserve`` cards?"""
    return next(_complete(list(hand), list(melds), gap, exact, reserve, False), None) is not None


def completions(
    hand: Sequence[int], melds: Sequence[Meld], *, gap: int, exact: bool, reserve: int = 1
) -> Iterator[Arrangement]:
    """Every way to complete these partly laid contract melds from ``hand``, keeping ``reserve``
    cards: the search :func:`completion_feasible` stops at the first of, run to the end (lazily,
    in its order: runs by suit and window, then sets by rank). Each arrangement lists, per meld,
    the ``(card, place)`` pairs it adds; the search works on a copy of ``hand``, and reads the
    melds as it goes: leave them unchanged until it is done with."""
    return _complete(list(hand), list(melds), gap, exact, reserve, True)


def _cannot_fill(melds: Sequence[Meld], hand: Sequence[int], exact: bool, reserve: int) -> bool:
    """True when the melds cannot be completed from the hand by counting alone: a meld that can
    take no more cards it needs, or fewer cards in hand than the melds need plus ``reserve``."""
    need_total = 0
    for m in melds:
        k = _needed(m, exact)
        if k < 0:
            return True
        need_total += k
    return sum(hand) - need_total < reserve


def _needed(meld: Meld, exact: bool) -> int:
    n = len(meld.places)
    if meld.spec.kind == RUN and n:
        lo, hi = meld.span()
        return max(meld.spec.size, hi - lo + 1) - n
    return max(meld.spec.size - n, 0) if not exact or n <= meld.spec.size else -1


def placement_options(
    hand: Sequence[int], melds: Sequence[Meld], *, gap: int, reserve: int = 1
) -> set[tuple[int, int, int]]:
    """``(meld index, card, place)`` for every card that some completion puts in that meld.

    Exact contract sizes only. One exhaustive search replaces one feasibility search per
    candidate placement: a placement keeps the contract completable exactly when some
    completion of the current melds uses it. Sets need counts per rank once the runs are
    chosen, so a set may take any natural of its rank left after the runs, and a joker in a set
    may be declared in any suit. Empty melds of one spec are searched in one canonical order,
    so their options are shared among them afterwards.
    """
    out: set[tuple[int, int, int]] = set()
    _collect_completions(list(hand), list(melds), gap, reserve, out)
    groups: dict[MeldSpec, list[int]] = {}
    for i, m in enumerate(melds):
        if not m.places:
            groups.setdefault(m.spec, []).append(i)
    for members in groups.values():
        if len(members) > 1:
            shared = {(card, place) for i, card, place in out if i in members}
            out.update((i, card, place) for i in members for card, place in shared)
    return out


def _complete(
    hand: list[int],
    melds: list[Meld],
    gap: int,
    exact: bool,
    reserve: int,
    detail: bool,
) -> Iterator[Arrangement]:
    """Depth-first search over the runs' windows, then the sets' ranks.

    The hand is mutated and restored. Runs go first because they pin exact cards; sets then
    only need counts per rank. Yields arrangements (empty lists when ``detail`` is false).
    """
    if _cannot_fill(melds, hand, exact, reserve):
        return
    run_idx = [i for i, m in enumerate(melds) if m.spec.kind == RUN]
    set_idx = [i for i, m in enumerate(melds) if m.spec.kind == SET]
    chosen: list[list[tuple[int, int]]] = [[] for _ in melds]
    windows: list[tuple[int, int, int]] = []  # (suit, lo, hi) of runs already placed

    # Empty runs of one spec are alike: take them in increasing (suit, lo) order.
    alike_prev = [
        k > 0
        and not melds[run_idx[k]].places
        and not melds[run_idx[k - 1]].places
        and melds[run_idx[k]].spec == melds[run_idx[k - 1]].spec
        for k in range(len(run_idx))
    ]

    def do_runs(k: int) -> Iterator[Arrangement]:
        if k == len(run_idx):
            yield from do_sets(0, 0)
            return
        meld = melds[run_idx[k]]
        floor = windows[-1][:2] if alike_prev[k] else (-1, -1)
        for suit, lo, hi, nat, jok in _run_options(hand, meld):
            if (suit, lo) <= floor:
                continue
            if any(s == suit and not runs_separated((lo, hi), (a, b), gap) for s, a, b in windows):
                continue
            base = suit * 13
            # a run can need the same card twice only if the window holds both aces: impossible
            for pos in nat:
                hand[base + (pos % 13)] -= 1
            hand[JOKER] -= len(jok)
            windows.append((suit, lo, hi))
            if detail:
                chosen[run_idx[k]] = [(base + pos % 13, make_place(suit, pos)) for pos in nat] + [
                    (JOKER, make_place(suit, pos)) for pos in jok
                ]
            yield from do_runs(k + 1)
            windows.pop()
            hand[JOKER] += len(jok)
            for pos in nat:
                hand[base + (pos % 13)] += 1

    def rank_count(rank: int) -> int:
        return hand[rank] + hand[13 + rank] + hand[26 + rank] + hand[39 + rank]

    def do_sets(k: int, min_rank: int) -> Iterator[Arrangement]:
        if k == len(set_idx):
            yield [list(c) for c in chosen] if detail else []
            return
        meld = melds[set_idx[k]]
        size = meld.spec.size
        if meld.places:
            ranks: Sequence[int] = (meld.rank,)
            need = max(size - len(meld.places), 0)
            next_min = min_rank
        else:
            ranks = range(min_rank, 13)
            need = size
            next_min = -1  # set below: empty sets are taken in rank order (they are alike)
        joker_room = min(hand[JOKER], meld.spec.max_jokers - meld.jokers, need)
        for rank in ranks:
            avail = rank_count(rank)
            if avail + joker_room < need:
                continue
            for jokers in range(0, joker_room + 1):
                naturals = need - jokers
                if naturals > avail:
                    continue
                if not meld.places and naturals == 0:
                    continue  # a meld needs a natural card to be laid down first
                taken = _take_rank(hand, rank, naturals)
                hand[JOKER] -= jokers
                if detail:
                    used_suits = {p // 13 for p in meld.places} | {c // 13 for c in taken}
                    free = [s for s in range(4) if s not in used_suits] or [0]
                    chosen[set_idx[k]] = [(c, c) for c in taken] + [
                        (JOKER, free[0] * 13 + rank) for _ in range(jokers)
                    ]
                yield from do_sets(k + 1, rank if next_min == -1 else next_min)
                hand[JOKER] += jokers
                for c in taken:
                    hand[c] += 1

    yield from do_runs(0)


def _collect_completions(
    hand: list[int], melds: list[Meld], gap: int, reserve: int, out: set[tuple[int, int, int]]
) -> None:
    """Add to ``out`` the ``(meld index, card, place)`` of every completion of ``melds`` from
    ``hand`` (exact sizes): the search of :func:`_complete`, each choice kept when some
    completion lies below it, with plain recursion in place of generators and the sets' search
    shared among the run choices that leave the same counts per rank."""
    if _cannot_fill(melds, hand, True, reserve):
        return
    run_idx = [i for i, m in enumerate(melds) if m.spec.kind == RUN]
    # per set meld: (index, laid down already, its rank, cards still needed, joker room)
    sets = [
        (
            i,
            bool(m.places),
            m.rank,
            max(m.spec.size - len(m.places), 0) if m.places else m.spec.size,
            m.spec.max_jokers - m.jokers,
        )
        for i, m in enumerate(melds)
        if m.spec.kind == SET
    ]
    windows: list[tuple[int, int, int]] = []  # (suit, lo, hi) of runs already placed
    alike_prev = [
        k > 0
        and not melds[run_idx[k]].places
        and not melds[run_idx[k - 1]].places
        and melds[run_idx[k]].spec == melds[run_idx[k - 1]].spec
        for k in range(len(run_idx))
    ]
    # counts per rank and jokers left -> (any completion, {(meld, rank, naturals?, jokers?)})
    set_memo: dict[tuple[int, ...], tuple[bool, set[tuple[int, int, bool, bool]]]] = {}

    def sets_from(k: int, min_rank: int, counts: list[int], jokers: int, found: set[Any]) -> bool:
        """As _complete's do_sets: whether the sets from k on complete; the choices that do go
        into ``found``."""
        if k == len(sets):
            return True
        i, placed, rank0, need, room = sets[k]
        joker_room = min(jokers, room, need)
        ranks: Sequence[int] = (rank0,) if placed else range(min_rank, 13)
        any_ok = False
        for rank in ranks:
            avail = counts[rank]
            if avail + joker_room < need:
                continue
            for used in range(0, joker_room + 1):
                naturals = need - used
                if naturals > avail or (not placed and naturals == 0):
                    continue
                counts[rank] -= naturals
                if sets_from(k + 1, min_rank if placed else rank, counts, jokers - used, found):
                    any_ok = True
                    found.add((i, rank, naturals > 0, used > 0))
                counts[rank] += naturals
        return any_ok

    def do_runs(k: int) -> bool:
        if k == len(run_idx):
            if not sets:
                return True
            counts = [hand[r] + hand[13 + r] + hand[26 + r] + hand[39 + r] for r in range(13)]
            key = (*counts, hand[JOKER])
            hit = set_memo.get(key)
            if hit is None:
                found: set[tuple[int, int, bool, bool]] = set()
                hit = set_memo[key] = (sets_from(0, 0, counts, hand[JOKER], found), found)
            ok, found = hit
            for i, rank, naturals, jokers in found:
                for c in range(rank, 52, 13):
                    if naturals and hand[c]:  # the hand after the runs
                        out.add((i, c, c))
                    if jokers:
                        out.add((i, JOKER, c))
            return ok
        i = run_idx[k]
        floor = windows[-1][:2] if alike_prev[k] else (-1, -1)
        any_ok = False
        for suit, lo, hi, nat, jok in _run_options(hand, melds[i]):
            if (suit, lo) <= floor:
                continue
            if any(s == suit and not runs_separated((lo, hi), (a, b), gap) for s, a, b in windows):
                continue
            base = suit * 13
            for pos in nat:
                hand[base + (pos % 13)] -= 1
            hand[JOKER] -= len(jok)
            windows.append((suit, lo, hi))
            if do_runs(k + 1):
                any_ok = True
                for pos in nat:
                    out.add((i, base + pos % 13, make_place(suit, pos)))
                for pos in jok:
                    out.add((i, JOKER, make_place(suit, pos)))
            windows.pop()
            hand[JOKER] += len(jok)
            for pos in nat:
                hand[base + (pos % 13)] += 1
        return any_ok

    do_runs(0)


def _run_options(hand: Sequence[int], meld: Meld) -> Iterator[tuple[int, int, int, list[int], list[int]]]:
    """(suit, lo, hi, positions to fill with naturals, positions to fill with jokers).

    Presence of each run position in the hand is a 14-bit mask per suit, so a window's
    missing cards are one popcount; only windows that the jokers can complete are expanded.
    """
    size = meld.spec.size
    jokers_left = min(hand[JOKER], meld.spec.max_jokers - meld.jokers)
    if meld.places:
        suits: Sequence[int] = (meld.suit,)
        lo0, hi0 = meld.span()
        length = max(size, hi0 - lo0 + 1)
        filled = 0
        for p in meld.places:
            filled |= 1 << pos_of(p)
        first, last = max(0, hi0 - length + 1), min(14 - length, lo0)
    else:
        suits = (0, 1, 2, 3)
        length = size
        filled = 0
        first, last = 0, 14 - length
    to_fill = length - filled.bit_count()
    full = (1 << length) - 1
    for suit in suits:
        base = suit * 13
        present = 0
        for r in range(13):
            if hand[base + r]:
                present |= 1 << r
        if present & 1:
            present |= 1 << 13  # the ace also stands high
        present &= ~filled
        if present.bit_count() + jokers_left < to_fill:
            continue
        for lo in range(first, last + 1):
            window = (full << lo) & ~filled
            absent = window & ~present
            if absent.bit_count() > jokers_left:
                continue
            have = [pos for pos in range(lo, lo + length) if (window & present) >> pos & 1]
            missing = [pos for pos in range(lo, lo + length) if absent >> pos & 1]
            hi = lo + length - 1
            yield suit, lo, hi, have, missing
            # Also try jokers on places whose natural is in hand: that natural may be
            # needed by a set, and the run may have joker room the set lacks.
            spare = jokers_left - len(missing)
            for extra in range(1, min(spare, len(have)) + 1):
                for subst in combinations(have, extra):
                    nat = [p for p in have if p not in subst]
                    yield suit, lo, hi, nat, missing + list(subst)


def _take_rank(hand: list[int], rank: int, n: int) -> list[int]:
    """Remove ``n`` naturals of ``rank`` from ``hand``, lowest suit first; return them."""
    taken: list[int] = []
    for suit in range(4):
        c = suit * 13 + rank
        while hand[c] > 0 and len(taken) < n:
            hand[c] -= 1
            taken.append(c)
    return taken
