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

from shanghai_env.cards import JOKER
from shanghai_env.melds import CONTRACTS, RUN, SET, contract_size

JOKER_BIT = 1 << JOKER
_POP = bytes(bin(i).count("1") for i in range(1 << 14))


def suit_masks(hand: Sequence[int]) -> tuple[int, int, int, int]:
    """Per suit, a 14-bit mask of the run positions held (bit 13 is the high ace)."""
    out = []
    for base in (0, 13, 26, 39):
        m = 0
        bit = 1
        for c in range(base, base + 13):
            if hand[c]:
                m |= bit
            bit <<= 1
        if m & 1:
            m |= 1 << 13
        out.append(m)
    return out[0], out[1], out[2], out[3]


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
        self._cache: dict[tuple[int, ...], tuple[int, int]] = {}
        self._dcache: dict[tuple[int, ...], int] = {}

    # --- public -----------------------------------------------------------------------------

    def distance(self, hand: Sequence[int]) -> int:
        """Fewest cards the hand must still acquire to be able to lay the contract down."""
        key = tuple(hand)
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
        key = tuple(hand)
        hit = self._cache.get(key)
        if hit is None:
            if len(self._cache) > 50_000:
                self._cache.clear()
            hit = self._cache[key] = self._solve(key, True)
        return hit

    # --- search -----------------------------------------------------------------------------

    def _windows(self, hand: Sequence[int]) -> list[tuple[int, int, int]]:
        """(missing, suit, lo) of every run window, cheapest first (bucketed by missing)."""
        length = self.run_len
        per_suit = [_suit_windows(length, mask) for mask in suit_masks(hand)]
        out: list[tuple[int, int, int]] = []
        for m in range(length + 1):
            for suit in range(4):
                for lo in per_suit[suit][m]:
                    out.append((m, suit, lo))
        return out

    def _window_outs(self, hand: Sequence[int], suit: int, lo: int) -> int:
        outs = 0
        base = suit * 13
        for pos in range(lo, lo + self.run_len):
            c = base + (pos % 13)
            if not hand[c]:
                outs |= 1 << c
        return outs

    def _sets(self, counts: list[int]) -> tuple[int, int, int]:
        """(missing cards, sets missing something, outs over ranks) of the cheapest sets."""
        k = self.num_sets
        table = _MARGINAL[k]
        num = [0, 0, 0, 0]
        ranks_at = [0, 0, 0, 0]
        bit = 1
        for n in counts:
            for cost in table[n]:
                num[cost] += 1
                ranks_at[cost] |= bit
            bit <<= 1
        left = k
        total = short = threshold = 0
        for cost in range(4):
            take = num[cost] if num[cost] < left else left
            total += cost * take
            if cost:
                short += take
            left -= take
            if not left:
                threshold = cost
                break
        ranks = 0
        for cost in range(1, threshold + 1):
            ranks |= ranks_at[cost]
        return total, short, ranks

    def _solve(self, hand: tuple[int, ...], want_outs: bool) -> tuple[int, int]:
        """(distance, outs); without ``want_outs`` ties are not explored and outs is 0."""
        jokers = hand[JOKER]
        counts = [hand[r] + hand[13 + r] + hand[26 + r] + hand[39 + r] for r in range(13)]
        if not self.num_runs:
            missing, short, ranks = self._sets(counts)
            used = min(jokers, short)
            outs = _rank_outs(ranks) if missing else 0
            if short > jokers and missing:
                outs |= JOKER_BIT
            return missing - used, outs
        windows = self._windows(hand)
        if not self.num_sets:
            return self._runs_only(hand, windows, jokers, want_outs)
        return self._run_and_sets(hand, windows, counts, jokers, want_outs)

    def _runs_only(
        self, hand: tuple[int, ...], windows: list[tuple[int, int, int]], jokers: int, want_outs: bool
    ) -> tuple[int, int]:
        k, lim, length, gap = self.num_runs, self.run_jokers, self.run_len, self.gap
        best = 1 << 30
        outs = 0
        n = len(windows)
        slack = 0 if want_outs else 1  # without outs, equal-cost branches need no visit
        chosen: list[tuple[int, int, int]] = []

        def extra(suit: int, lo: int) -> int:
            """-1 if the window clashes with a chosen one; 1 if both need the suit's single ace."""
            penalty = 0
            for _, s, a in chosen:
                if s != suit:
                    continue
                if not (lo - (a + length - 1) - 1 >= gap or a - (lo + length - 1) - 1 >= gap):
                    return -1
                # one run low-ace, the other high-ace: the same card twice
                top = 14 - length
                if ((lo == 0 and a == top) or (a == 0 and lo == top)) and hand[suit * 13] == 1:
                    penalty = 1
            return penalty

        def visit(start: int, partial: int, ace_outs: int) -> None:
            nonlocal best, outs
            depth = len(chosen)
            if depth == k:
                cap = 0
                for m, _, _ in chosen:
                    cap += m if m < lim else lim
                total = partial - (jokers if jokers < cap else cap)
                if not want_outs:
                    if total < best:
                        best = total
                elif total <= best:
                    found = (JOKER_BIT if cap > jokers and total else 0) | ace_outs
                    for m, s, a in chosen:
                        if m:
                            found |= self._window_outs(hand, s, a)
                    if total < best:
                        best, outs = total, found
                    else:
                        outs |= found
                return
            left = k - depth
            for i in range(start, n):
                m, s, a = windows[i]
                if partial + left * m - jokers + slack > best:
                    return
                penalty = extra(s, a)
                if penalty >= 0:
                    chosen.append((m + penalty, s, a))
                    visit(i + 1, partial + m + penalty, ace_outs | (penalty << (s * 13)))
                    chosen.pop()

        visit(0, 0, 0)
        if best == 0:
            outs = 0
        return best, outs

    def _run_and_sets(
        self,
        hand: tuple[int, ...],
        windows: list[tuple[int, int, int]],
        counts: list[int],
        jokers: int,
        want_outs: bool,
    ) -> tuple[int, int]:
        lim, length = self.run_jokers, self.run_len
        base_sets = self._sets(counts)[0]
        best = 1 << 30
        outs = 0
        slack = 0 if want_outs else 1
        for m, suit, lo in windows:
            if m + base_sets - jokers + slack > best:
                break
            left = counts[:]
            b = suit * 13
            for pos in range(lo, lo + length):
                if hand[b + pos % 13]:
                    left[pos % 13] -= 1
            missing, short, ranks = self._sets(left)
            cap = (m if m < lim else lim) + short
            total = m + missing - (jokers if jokers < cap else cap)
            if not want_outs:
                best = total if total < best else best
            elif total <= best:
                found = _rank_outs(ranks) if missing else 0
                if m:
                    found |= self._window_outs(hand, suit, lo)
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


_RANK_OUTS = [sum(1 << (s * 13 + r) for s in range(4)) for r in range(13)]


def _rank_outs(ranks: int) -> int:
    outs = 0
    r = 0
    while ranks:
        if ranks & 1:
            outs |= _RANK_OUTS[r]
        ranks >>= 1
        r += 1
    return outs


def bits(mask: int) -> list[int]:
    """Indices of the set bits of a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
