"""Distance to a contract over count vectors: the core measure every bot plays by.

The *distance* of a hand to a contract is the fewest natural cards it still has to acquire
before it can lay the contract down, counting the jokers it holds (within each meld's joker
limit). A hand that can go down has distance 0 (whatever its size: the cards needed to keep
one for the discard are counted separately, see :func:`size_deficit`).

The search mirrors :func:`shanghai_env.melds.arrangements` but counts instead of listing:

- a run is a suit and a window of positions (ace low 0 .. ace high 13); the cards a window
  misses are one popcount on a 14-bit presence mask per suit;
- runs of one contract never share a card (different suits, or the same suit with a gap), so a
  choice of windows costs the sum of their misses;
- sets need only counts per rank; the k cheapest sets are the k smallest *marginal* costs
  (a second set of one rank costs what the first one could not use), which is exact because
  those costs grow with each extra set of a rank;
- jokers then cover up to ``max_jokers`` missing cards of each meld.

Runs are searched best first (windows sorted by misses) with a lower bound, so a typical call
looks at a handful of window choices. :meth:`ContractMeter.analyse` also returns the *outs*:
every card kind that lies in the missing part of some cheapest arrangement, i.e. the cards
whose arrival lowers the distance by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from shanghai_env.cards import JOKER
from shanghai_env.melds import CONTRACTS, RUN, SET, contract_size

JOKER_BIT = 1 << JOKER
_POP = bytes(bin(i).count("1") for i in range(1 << 14))


_HELD = bytes([48] + [49] * 255)  # a count as the binary digit of "held": b"0" or b"1"
_COUNT_BYTE = tuple(bytes((k,)) for k in range(256))


def suit_masks(hand: Sequence[int]) -> tuple[int, int, int, int]:
    """Per suit, a 14-bit mask of the run positions held (bit 13 is the high ace)."""
    return _suit_masks(bytes(hand[:52]))


def _suit_masks(b: bytes) -> tuple[int, int, int, int]:
    held = int(b[51::-1].translate(_HELD), 2)  # bit c: card c is held
    m0 = held & 0x1FFF
    m1 = (held >> 13) & 0x1FFF
    m2 = (held >> 26) & 0x1FFF
    m3 = held >> 39
    return (m0 | (m0 & 1) << 13, m1 | (m1 & 1) << 13, m2 | (m2 & 1) << 13, m3 | (m3 & 1) << 13)


def _rank_counts(b: bytes) -> int:
    """Naturals held per rank, one byte each (rank r in bits 8r..8r+7): the four suits' bytes
    added as little-endian integers (a count never reaches 256, so no carry crosses ranks)."""
    return (
        int.from_bytes(b[0:13], "little")
        + int.from_bytes(b[13:26], "little")
        + int.from_bytes(b[26:39], "little")
        + int.from_bytes(b[39:52], "little")
    )


def size_deficit(hand_size: int, contract: int) -> int:
    """Cards still to gain (by buying) before a hand of this size may go down and discard.

    Going down needs ``contract size + 1`` cards after the draw, i.e. ``contract size`` before it.
    """
    return max(0, contract_size(contract) - hand_size)


class ContractMeter:
    """Distance (and outs) of hands to one contract; cheap enough to call per candidate move."""

    def __init__(self, contract: int, gap: int = 1) -> None:
        specs = CONTRACTS[contract]
        self.contract = contract
        self.gap = gap
        self.size = contract_size(contract)
        runs = [s for s in specs if s.kind == RUN]
        self.num_sets = sum(1 for s in specs if s.kind == SET)
        self.num_runs = len(runs)
        # every run of one contract has one size (docs/rules.md section 2)
        self.run_len = runs[0].size if runs else 0
        self.run_jokers = runs[0].max_jokers if runs else 0
        self.set_jokers = 1
        self._full = (1 << self.run_len) - 1
        # answers by hand (its bytes: one count per card kind)
        self._cache: dict[bytes, tuple[int, int]] = {}
        self._dcache: dict[bytes, int] = {}
        # Runs alone depend only on which cards are held (the suits' masks), the jokers and
        # which suits hold a single ace: many hands share those, so they share one answer.
        self._runs_cache: dict[tuple[int, ...], tuple[int, int]] = {}
        self._sets_cache: dict[int, tuple[int, int, int]] = {}
        self._suit_lists: tuple[dict[int, tuple[Window, ...]], ...] = ({}, {}, {}, {})

    def __getstate__(self) -> dict[str, object]:
        """Pickled without its caches (answers it finds again on demand): a trainer's checkpoint
        holds a bot per game and seat, and their filled caches made it over a gigabyte."""
        state = dict(self.__dict__)
        state.update(_cache={}, _dcache={}, _runs_cache={}, _sets_cache={}, _suit_lists=({}, {}, {}, {}))
        return state

    # --- public -----------------------------------------------------------------------------

    def distance(self, hand: Sequence[int]) -> int:
        """Fewest cards the hand must still acquire to be able to lay the contract down."""
        key = bytes(hand)  # a cheaper key to build and hash than a tuple
        hit = self._cache.get(key)
        if hit is not None:
            return hit[0]
        d = self._dcache.get(key)
        if d is None:
            if len(self._dcache) > 50_000:
                self._dcache.clear()
            d = self._dcache[key] = self._solve(key, False)[0]
        return d

    def analyse(self, hand: Sequence[int]) -> tuple[int, int]:
        """(distance, outs) where outs is a bitmask over card kinds 0..52 (bit 52: a joker)."""
        key = bytes(hand)
        hit = self._cache.get(key)
        if hit is None:
            if len(self._cache) > 50_000:
                self._cache.clear()
            hit = self._cache[key] = self._solve(key, True)
        return hit

    # --- search -----------------------------------------------------------------------------

    def _windows(self, masks: tuple[int, int, int, int]) -> list[Window]:
        """Every run window (see ``Window``), cheapest first (by missing, then suit, then lo)."""
        # per suit, the windows of each mask seen (the global memo, read without a call)
        l0, l1, l2, l3 = self._suit_lists
        m0, m1, m2, m3 = masks
        w0 = l0.get(m0)
        if w0 is None:
            w0 = l0[m0] = _suit_window_list(self.run_len, 0, m0)
        w1 = l1.get(m1)
        if w1 is None:
            w1 = l1[m1] = _suit_window_list(self.run_len, 1, m1)
        w2 = l2.get(m2)
        if w2 is None:
            w2 = l2[m2] = _suit_window_list(self.run_len, 2, m2)
        w3 = l3.get(m3)
        if w3 is None:
            w3 = l3[m3] = _suit_window_list(self.run_len, 3, m3)
        out = [*w0, *w1, *w2, *w3]
        out.sort(key=_MISSING)  # stable: suits, then starts, in order within each count
        return out

    def _sets(self, counts: int) -> tuple[int, int, int]:
        """(missing cards, sets missing something, outs over ranks) of the cheapest sets, for
        the counts per rank of :func:`_rank_counts`."""
        hit = self._sets_cache.get(counts)
        if hit is None:
            if len(self._sets_cache) > 50_000:
                self._sets_cache.clear()
            hit = self._sets_cache[counts] = self._cheapest_sets(counts)
        return hit

    def _cheapest_sets(self, counts: int) -> tuple[int, int, int]:
        k = self.num_sets
        per_rank = counts.to_bytes(13, "little")
        takes, marks = _SET_TABLES[k]
        left = k
        total = short = threshold = 0
        for cost in range(4):
            have = sum(per_rank.translate(takes[cost]))  # sets of this marginal cost
            take = have if have < left else left
            total += cost * take
            if cost:
                short += take
            left -= take
            if not left:
                threshold = cost
                break
        ranks = 0
        reversed_ranks = per_rank[::-1]
        for cost in range(1, threshold + 1):  # ranks offering a set of this cost, as bits
            ranks |= int(reversed_ranks.translate(marks[cost]), 2)
        return total, short, ranks

    def analyse_losses(self, hand: Sequence[int], cards: Sequence[int]) -> list[tuple[int, int]]:
        """``[analyse(minus(hand, c)) for c in cards]``, reading the hand once: each loss changes
        one count per rank, at most one suit's mask and the single aces (or the jokers)."""
        b = bytes(hand)
        masks = _suit_masks(b)
        counts = _rank_counts(b)
        jokers = b[JOKER]
        aces = (b[0] == 1) | (b[13] == 1) << 1 | (b[26] == 1) << 2 | (b[39] == 1) << 3
        cache = self._cache
        out = []
        for c in cards:
            key = b[:c] + _COUNT_BYTE[b[c] - 1] + b[c + 1 :]  # the hand after the loss
            hit = cache.get(key)
            if hit is None:
                if c == JOKER:
                    hit = self._solve_parts(masks, counts, jokers - 1, aces, True)
                else:
                    rank, suit = c % 13, c // 13
                    lost_masks = masks
                    lost_aces = aces
                    if b[c] == 1:  # the last copy: its position leaves the suit's mask
                        gone = 1 << rank | (1 << 13 if rank == 0 else 0)
                        m = list(masks)
                        m[suit] &= ~gone
                        lost_masks = (m[0], m[1], m[2], m[3])
                    if rank == 0:  # an ace: held once now (two before), or no more
                        lost_aces = aces | 1 << suit if b[c] == 2 else aces & ~(1 << suit)
                    hit = self._solve_parts(lost_masks, counts - (1 << 8 * rank), jokers, lost_aces, True)
                if len(cache) > 50_000:
                    cache.clear()
                cache[key] = hit  # the hand after the chosen discard is asked again soon
            out.append(hit)
        return out

    def _solve(self, hand: bytes, want_outs: bool) -> tuple[int, int]:
        """(distance, outs) of a hand's bytes; without ``want_outs`` ties are not explored and
        outs is 0."""
        aces = (hand[0] == 1) | (hand[13] == 1) << 1 | (hand[26] == 1) << 2 | (hand[39] == 1) << 3
        return self._solve_parts(_suit_masks(hand), _rank_counts(hand), hand[JOKER], aces, want_outs)

    def _solve_parts(
        self, masks: tuple[int, int, int, int], counts: int, jokers: int, single_aces: int, want_outs: bool
    ) -> tuple[int, int]:
        """_solve from what the answer depends on: the suits' masks, the counts per rank (see
        _rank_counts), the jokers and the suits holding a single ace."""
        if not self.num_runs:
            missing, short, ranks = self._sets(counts)
            used = min(jokers, short)
            outs = _rank_outs(ranks) if missing else 0
            if short > jokers and missing:
                outs |= JOKER_BIT
            return missing - used, outs
        if not self.num_sets:
            key = (*masks, jokers, single_aces, want_outs)
            hit = self._runs_cache.get(key)
            if hit is None:
                if len(self._runs_cache) > 50_000:
                    self._runs_cache.clear()
                windows = self._windows(masks)
                hit = self._runs_cache[key] = self._runs_only(masks, windows, jokers, single_aces, want_outs)
            return hit
        return self._run_and_sets(self._windows(masks), counts, jokers, want_outs)

    def _runs_only(
        self,
        masks: tuple[int, int, int, int],
        windows: list[Window],
        jokers: int,
        single_aces: int,
        want_outs: bool,
    ) -> tuple[int, int]:
        """The cheapest choice of ``num_runs`` windows (two or three: every contract of runs alone
        has two or three), cheapest windows first with a lower bound; one loop per run.

        Two windows of one suit must be ``gap`` ranks apart; when one has the ace low and the
        other high and the hand holds that ace once, the later one misses one card more (and
        the ace is an out)."""
        lim, length, gap = self.run_jokers, self.run_len, self.gap
        apart = length + gap  # window starts at least this far apart in one suit
        top = 14 - length
        three = self.num_runs == 3
        k = 3 if three else 2
        best = 1 << 30
        outs = 0
        n = len(windows)
        slack = 0 if want_outs else 1  # without outs, equal-cost branches need no visit

        for i in range(n):
            m1, s1, a1, o1, _ = windows[i]
            if k * m1 - jokers + slack > best:
                break
            c1 = m1 if m1 < lim else lim
            for j in range(i + 1, n):
                m2, s2, a2, o2, _ = windows[j]
                if m1 + (k - 1) * m2 - jokers + slack > best:
                    break
                pen2 = 0
                if s1 == s2:
                    if a2 - a1 < apart and a1 - a2 < apart:
                        continue  # too close
                    if ((a1 == 0 and a2 == top) or (a2 == 0 and a1 == top)) and single_aces >> s2 & 1:
                        pen2 = 1
                        m2 += 1
                c2 = c1 + (m2 if m2 < lim else lim)
                if not three:
                    total = m1 + m2 - (jokers if jokers < c2 else c2)
                    if not want_outs:
                        if total < best:
                            best = total
                    elif total <= best:
                        found = (JOKER_BIT if c2 > jokers and total else 0) | pen2 << (s2 * 13) | o1 | o2
                        if total < best:
                            best, outs = total, found
                        else:
                            outs |= found
                    continue
                partial = m1 + m2
                for x in range(j + 1, n):
                    m3, s3, a3, o3, _ = windows[x]
                    if partial + m3 - jokers + slack > best:
                        break
                    pen3 = 0
                    if s3 == s1:
                        if a3 - a1 < apart and a1 - a3 < apart:
                            continue
                        if ((a1 == 0 and a3 == top) or (a3 == 0 and a1 == top)) and single_aces >> s3 & 1:
                            pen3 = 1
                    if s3 == s2:
                        if a3 - a2 < apart and a2 - a3 < apart:
                            continue
                        if ((a2 == 0 and a3 == top) or (a3 == 0 and a2 == top)) and single_aces >> s3 & 1:
                            pen3 = 1
                    m3 += pen3
                    cap = c2 + (m3 if m3 < lim else lim)
                    total = partial + m3 - (jokers if jokers < cap else cap)
                    if not want_outs:
                        if total < best:
                            best = total
                    elif total <= best:
                        found = (JOKER_BIT if cap > jokers and total else 0) | o1 | o2 | o3
                        found |= pen2 << (s2 * 13) | pen3 << (s3 * 13)
                        if total < best:
                            best, outs = total, found
                        else:
                            outs |= found
        if best == 0:
            outs = 0
        return best, outs

    def _run_and_sets(
        self, windows: list[Window], counts: int, jokers: int, want_outs: bool
    ) -> tuple[int, int]:
        lim = self.run_jokers
        base_sets = self._sets(counts)[0]
        best = 1 << 30
        outs = 0
        slack = 0 if want_outs else 1
        sets = self._sets
        for m, _, _, window_outs, used in windows:
            if m + base_sets - jokers + slack > best:
                break
            missing, short, ranks = sets(counts - used)  # the sets from what the run leaves
            cap = (m if m < lim else lim) + short
            total = m + missing - (jokers if jokers < cap else cap)
            if not want_outs:
                best = total if total < best else best
            elif total <= best:
                found = _rank_outs(ranks) if missing else 0
                found |= window_outs  # nothing when m is 0
                if cap > jokers and total:
                    found |= JOKER_BIT
                if total < best:
                    best, outs = total, found
                else:
                    outs |= found
        if best == 0:
            outs = 0
        return best, outs


def _marginal_costs(sets: int, count: int) -> tuple[int, ...]:
    """Cards missing for the 1st, 2nd, ... set of one rank held ``count`` times."""
    out = []
    prev = 0
    for t in range(1, sets + 1):
        need = max(0, 3 * t - count)
        out.append(need - prev)
        prev = need
    return tuple(out)


# _MARGINAL[sets][count]: up to 4 sets per contract, up to 12 copies of a rank (3 decks)
_MARGINAL = [tuple(_marginal_costs(k, n) for n in range(13)) for k in range(5)]


def _set_tables(k: int) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
    """For k sets, per marginal cost 0..3: bytes mapping a rank's count to its sets of that cost
    (to sum with ``translate``), and to b"1" if it has one, else b"0" (to read as bits)."""
    takes, marks = [], []
    for cost in range(4):
        per_count = [_MARGINAL[k][n].count(cost) if n < 13 else 0 for n in range(256)]
        takes.append(bytes(per_count))
        marks.append(bytes(49 if t else 48 for t in per_count))
    return tuple(takes), tuple(marks)


_SET_TABLES = [_set_tables(k) for k in range(5)]
_WINDOWS: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {}


def _suit_windows(length: int, mask: int) -> tuple[tuple[int, ...], ...]:
    """For one suit's presence mask: the window starts grouped by cards missing (memoised)."""
    key = (length, mask)
    hit = _WINDOWS.get(key)
    if hit is None:
        full = (1 << length) - 1
        groups: list[list[int]] = [[] for _ in range(length + 1)]
        for lo in range(15 - length):
            groups[length - _POP[(mask >> lo) & full]].append(lo)
        hit = _WINDOWS[key] = tuple(tuple(g) for g in groups)
    return hit


# A run window: (cards missing, suit, lo, the missing cards as bits over card kinds, the naturals
# it uses as counts per rank in the byte lanes of _rank_counts).
Window = tuple[int, int, int, int, int]
_WINDOW_LISTS: dict[tuple[int, int, int], tuple[Window, ...]] = {}


def _suit_window_list(length: int, suit: int, mask: int) -> tuple[Window, ...]:
    """One suit's windows, by missing then lo (memoised per suit mask)."""
    key = (length, suit, mask)
    hit = _WINDOW_LISTS.get(key)
    if hit is None:
        groups = _suit_windows(length, mask)
        full = (1 << length) - 1
        out = []
        for m in range(length + 1):
            for lo in groups[m]:
                need = (full << lo) & ~mask  # positions missing; position 13 is the ace
                outs = ((need & 0x1FFF) | (need >> 13)) << (13 * suit)
                used = sum(1 << (8 * (pos % 13)) for pos in range(lo, lo + length) if mask >> pos & 1)
                out.append((m, suit, lo, outs, used))
        hit = _WINDOW_LISTS[key] = tuple(out)
    return hit


_MISSING = itemgetter(0)  # a window's missing count, the sort key of window lists


_RANK_OUTS = [sum(1 << (s * 13 + r) for s in range(4)) for r in range(13)]


_RANK_OUTS_OF: dict[int, int] = {}


def _rank_outs(ranks: int) -> int:
    """Every card of the ranks whose bits are set (memoised)."""
    hit = _RANK_OUTS_OF.get(ranks)
    if hit is None:
        hit = 0
        r = 0
        rest = ranks
        while rest:
            if rest & 1:
                hit |= _RANK_OUTS[r]
            rest >>= 1
            r += 1
        _RANK_OUTS_OF[ranks] = hit
    return hit


_SHARED_METERS: dict[tuple[int, int], ContractMeter] = {}


def shared_meter(contract: int, gap: int = 1) -> ContractMeter:
    """This process's meter of ``contract`` under the rule ``gap``, one for every caller.

    A meter's answers depend on the hand alone, so sharing one changes no answer, and every bot of
    a process learns from the hands the others met. A trainer holds a bot per game and seat
    (opponents, dagger's teachers, ppo's prior): with a meter per bot and contract, 64 games of
    four bots kept over two thousand meters whose caches, each capped on its own, grew to
    gigabytes over an hour of training; shared, they are ten meters' caches."""
    key = (contract, gap)
    meter = _SHARED_METERS.get(key)
    if meter is None:
        meter = _SHARED_METERS[key] = ContractMeter(contract, gap)
    return meter


def forget_meters() -> None:
    """Drop the shared meters (and their caches): the next caller starts cold (benchmarks)."""
    _SHARED_METERS.clear()


def bits(mask: int) -> list[int]:
    """Indices of the set bits of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
