"""A brute-force reference for contract feasibility, written from docs/rules.md sections 4 and 5.2.

It enumerates every way to give sub-multisets of a hand to a contract's melds and keeps those
where each meld is a set (one rank, jokers declared in that rank) or a run (one suit,
consecutive places on positions 0..13 where an ace is 0 or 13, at most 13 cards), each within
its size (exact, or at least) and its joker limit, with same-suit runs at least ``gap`` ranks
apart and ``reserve`` cards kept. Melds may already hold cards (``fixed``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import product

from shanghai_env.cards import JOKER
from shanghai_env.melds import SET, MeldSpec

Fixed = list[tuple[int, int]]  # (card, place) already lying in a meld


def position(place: int) -> int:
    return 13 if place >= 52 else place % 13


def suit_of_place(place: int) -> int:
    return place - 52 if place >= 52 else place // 13


def natural_positions(card: int) -> tuple[int, ...]:
    return (0, 13) if card % 13 == 0 else (card % 13,)


def meld_shapes(spec: MeldSpec, taken: tuple[int, ...], fixed: Fixed, exact: bool) -> Iterator[tuple]:
    """Every way ``fixed`` plus the hand cards ``taken`` form the contract meld ``spec``.

    A shape is ``("set", rank, jokers)`` or ``("run", suit, lo, hi, joker positions)``.
    """
    naturals = [c for c in taken if c != JOKER]
    free_jokers = len(taken) - len(naturals)
    size = len(taken) + len(fixed)
    if size < spec.size or (exact and size != spec.size):
        return
    jokers = free_jokers + sum(1 for c, _ in fixed if c == JOKER)
    if jokers > spec.max_jokers:
        return
    if not naturals and all(c == JOKER for c, _ in fixed):
        return
    if spec.kind == SET:
        if any(p >= 52 for _, p in fixed):
            return
        ranks = {c % 13 for c in naturals} | {p % 13 for _, p in fixed}
        if len(ranks) == 1:
            yield ("set", ranks.pop(), jokers)
        return
    if size > 13:
        return
    suits = {c // 13 for c in naturals} | {suit_of_place(p) for _, p in fixed}
    if len(suits) != 1:
        return
    suit = suits.pop()
    fixed_pos = [position(p) for _, p in fixed]
    fixed_jokers = {position(p) for c, p in fixed if c == JOKER}
    for choice in product(*(natural_positions(c) for c in naturals)):
        used = fixed_pos + list(choice)
        if len(set(used)) != len(used):
            continue
        for lo in range(max(0, max(used) - size + 1), min(min(used), 14 - size) + 1):
            free = set(range(lo, lo + size)) - set(used)
            assert len(free) == free_jokers
            yield ("run", suit, lo, lo + size - 1, frozenset(free | fixed_jokers))


def sub_multisets(hand: Counter, sizes: range) -> Iterator[tuple[int, ...]]:
    kinds = sorted(hand)

    def rec(i: int, chosen: list[int]) -> Iterator[tuple[int, ...]]:
        if len(chosen) > sizes.stop - 1:
            return
        if i == len(kinds):
            if len(chosen) in sizes:
                yield tuple(chosen)
            return
        for k in range(hand[kinds[i]] + 1):
            yield from rec(i + 1, chosen + [kinds[i]] * k)

    yield from rec(0, [])


def separated(a: tuple, b: tuple, gap: int) -> bool:
    """Two runs (shapes) are in different suits or leave at least ``gap`` ranks between."""
    if a[1] != b[1]:
        return True
    return b[2] - a[3] - 1 >= gap or a[2] - b[3] - 1 >= gap


def brute_force(
    hand: Counter,
    specs: tuple[MeldSpec, ...],
    *,
    gap: int,
    exact: bool,
    reserve: int = 1,
    fixed: list[Fixed] | None = None,
    first_only: bool = False,
    with_cards: bool = False,
) -> set[tuple]:
    """Every completion, as a tuple of one shape per meld (one solution if ``first_only``);
    ``with_cards`` pairs each shape with the sorted hand cards that meld takes."""
    fixed = fixed or [[] for _ in specs]
    total = sum(hand.values())
    budget = total - reserve
    options = []
    for spec, done in zip(specs, fixed):
        need = max(spec.size - len(done), 0)
        sizes = range(need, need + 1) if exact else range(need, max(budget, need) + 1)
        opts = []
        for taken in sub_multisets(hand, sizes):
            for shape in meld_shapes(spec, taken, done, exact):
                opts.append((Counter(taken), shape))
        options.append(opts)
    found: set[tuple] = set()

    def rec(i: int, left: Counter, used: int, shapes: list[tuple], takens: list[tuple]) -> bool:
        if i == len(specs):
            if used <= budget:
                found.add(tuple(zip(shapes, takens)) if with_cards else tuple(shapes))
                return first_only
            return False
        for taken, shape in options[i]:
            n = sum(taken.values())
            if used + n > budget or any(left[c] < k for c, k in taken.items()):
                continue
            if shape[0] == "run" and not all(separated(shape, s, gap) for s in shapes if s[0] == "run"):
                continue
            cards = tuple(sorted(taken.elements()))
            if rec(i + 1, left - taken, used + n, [*shapes, shape], [*takens, cards]):
                return True
        return False

    rec(0, Counter(hand), 0, [], [])
    return found


def canonical(shapes: tuple) -> tuple:
    """Melds of one kind in a contract are alike: compare solutions as sorted lists."""
    return (
        tuple(sorted(s for s in shapes if s[0] == "set")),
        tuple(sorted((s for s in shapes if s[0] == "run"), key=lambda s: (s[1], s[2], sorted(s[4])))),
    )


def placements(
    hand: Counter, specs: tuple[MeldSpec, ...], fixed: list[Fixed], *, gap: int
) -> set[tuple[int, int, int]]:
    """Every ``(meld, card, place)`` a player going down may lay next (exact contract melds):
    those that some completion of the contract, keeping a card to discard, puts there.

    As the engine decides (beyond docs/rules.md), a joker joins only a meld that holds a natural."""
    out: set[tuple[int, int, int]] = set()
    for solution in brute_force(hand, specs, gap=gap, exact=True, fixed=fixed, with_cards=True):
        for i, (shape, taken) in enumerate(solution):
            has_natural = any(c != JOKER for c, _ in fixed[i])
            for card in set(taken):
                if shape[0] == "set":
                    if card == JOKER:
                        if has_natural:
                            out.update((i, JOKER, s * 13 + shape[1]) for s in range(4))
                    else:
                        out.add((i, card, card))
                    continue
                suit, lo, hi, joker_places = shape[1:]
                taken_places = set(range(lo, hi + 1)) - {position(p) for _, p in fixed[i]}
                for pos in taken_places:
                    place = 52 + suit if pos == 13 else suit * 13 + pos % 13
                    if card == JOKER and pos in joker_places and has_natural:
                        out.add((i, JOKER, place))
                    elif card != JOKER and pos not in joker_places and card == suit * 13 + pos % 13:
                        out.add((i, card, place))
    return out
