"""Contract feasibility (``can_fulfil``, ``arrangements``, ``completion_feasible``) against the
brute-force reference of ``reference.py``, written from docs/rules.md sections 4 and 5.2 alone."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from reference import Fixed, brute_force, canonical, position, separated, suit_of_place

from shanghai_env.cards import JOKER, counts_of, format_cards, place_card
from shanghai_env.melds import (
    CONTRACTS,
    SET,
    Meld,
    MeldSpec,
    arrangements,
    can_fulfil,
    completion_feasible,
    meld_is_valid,
)


def shape_of_arrangement(spec: MeldSpec, pairs: list[tuple[int, int]]) -> tuple:
    jokers = [p for c, p in pairs if c == JOKER]
    if spec.kind == SET:
        return ("set", pairs[0][1] % 13, len(jokers))
    positions = [position(p) for _, p in pairs]
    return (
        "run",
        suit_of_place(pairs[0][1]),
        min(positions),
        max(positions),
        frozenset(position(p) for p in jokers),
    )


# --- strategies ---------------------------------------------------------------------------------


@st.composite
def random_hands(draw: st.DrawFn, contract: int, extra: int) -> list[int]:
    """A hand from a narrow pool of ranks and suits, so that contracts often (nearly) fit.

    The rank window may wrap past the king to test the ace's two places and the corner rule.
    """
    size = sum(s.size for s in CONTRACTS[contract]) + draw(st.integers(0, extra)) + 1
    has_runs = any(s.kind != SET for s in CONTRACTS[contract])
    start = draw(st.integers(0, 12))
    ranks = [(start + i) % 13 for i in range(draw(st.integers(4, 9) if has_runs else st.integers(3, 6)))]
    suits = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2, unique=True))
    pool = [s * 13 + r for s in suits for r in ranks] * 3 + [JOKER] * 3  # at most three copies
    assume(len(pool) >= size)
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=size, max_size=size, unique=True))
    return [pool[i] for i in picks]


@st.composite
def near_hands(draw: st.DrawFn, contract: int, extra: int) -> list[int]:
    """A contract laid out meld by meld (jokers included), plus spare cards, maybe with one
    card replaced: many hands that fit and many that just miss."""
    suits = st.integers(0, 1)
    cards: list[int] = []
    for spec in CONTRACTS[contract]:
        jokers = draw(st.integers(0, spec.max_jokers))
        if spec.kind == SET:
            rank = draw(st.sampled_from([0, 6, 7, 12]))
            cards += [draw(suits) * 13 + rank for _ in range(spec.size - jokers)]
        else:
            suit = draw(st.integers(0, 2))
            lo = draw(st.integers(0, 14 - spec.size))
            holes = draw(st.lists(st.integers(lo, lo + spec.size - 1), max_size=jokers, unique=True))
            jokers = len(holes)
            cards += [suit * 13 + pos % 13 for pos in range(lo, lo + spec.size) if pos not in holes]
        cards += [JOKER] * jokers
    pool = [s * 13 + r for s in (0, 1) for r in (0, 1, 5, 6, 7, 11, 12)] + [JOKER]
    cards += draw(st.lists(st.sampled_from(pool), min_size=1, max_size=extra + 1))
    if draw(st.booleans()):
        cards[draw(st.integers(0, len(cards) - 1))] = draw(st.sampled_from(pool))
    counts = Counter(cards)
    assume(counts[JOKER] <= 3 and max(counts.values()) <= 3)
    return cards


def hands(contract: int, extra: int = 2) -> st.SearchStrategy[list[int]]:
    return st.one_of(random_hands(contract, extra), near_hands(contract, extra))


def _check_arrangement(hand: list[int], contract: int, arrangement, gap: int) -> tuple:
    """Each yielded arrangement is a valid contract from the hand; return its shapes."""
    specs = CONTRACTS[contract]
    assert len(arrangement) == len(specs)
    used: Counter = Counter()
    shapes = []
    for spec, pairs in zip(specs, arrangement):
        meld = Meld(spec)
        naturals = [(c, p) for c, p in pairs if c != JOKER]
        jokers = [(c, p) for c, p in pairs if c == JOKER]
        for card, place in naturals + jokers:  # naturals first, as a player lays them down
            assert card == JOKER or place_card(place) == card
            assert meld.fits_building(card, place, True), (format_cards(hand), arrangement)
            meld.add(card, place)
            used[card] += 1
        assert meld.is_complete(True)
        assert meld_is_valid(meld, exact=True)
        shapes.append(shape_of_arrangement(spec, pairs))
    assert all(used[c] <= k for c, k in Counter(hand).items())
    assert set(used) <= set(hand)
    assert sum(used.values()) <= len(hand) - 1
    runs = [s for s in shapes if s[0] == "run"]
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            assert separated(a, b, gap)
    return tuple(shapes)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])


# --- the properties ------------------------------------------------------------------------------


def _exact_property(data: st.DataObject, contract: int) -> None:
    hand = data.draw(hands(contract))
    gap = data.draw(st.sampled_from([0, 1, 1, 2]))
    counts = counts_of(hand)
    expected = brute_force(Counter(hand), CONTRACTS[contract], gap=gap, exact=True)
    assert can_fulfil(counts, contract, gap=gap) == bool(expected), format_cards(sorted(hand))
    event(f"fulfils: {bool(expected)}")
    found = {
        canonical(_check_arrangement(hand, contract, a, gap)) for a in arrangements(counts, contract, gap=gap)
    }
    assert found == {canonical(s) for s in expected}, format_cards(sorted(hand))
    assert counts == counts_of(hand)  # the search leaves the hand as it found it


@SETTINGS
@given(st.data())
def test_two_sets(data):
    _exact_property(data, 1)


@SETTINGS
@given(st.data())
def test_set_and_run(data):
    _exact_property(data, 2)


@SETTINGS
@given(st.data())
def test_two_runs(data):
    _exact_property(data, 3)


@SETTINGS
@given(st.data())
def test_three_sets(data):
    _exact_property(data, 4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_set_and_run_of_seven(data):
    _exact_property(data, 5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_two_sets_and_run_of_five(data):
    _exact_property(data, 6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.data())
def test_three_runs(data):
    _exact_property(data, 7)


@SETTINGS
@given(st.data(), st.sampled_from([1, 2, 3]))
def test_longer_melds_allowed(data, contract):
    """With ``exact_contract_melds`` false, melds may be longer; the brute force tries them all."""
    hand = data.draw(hands(contract, extra=1))
    gap = data.draw(st.sampled_from([0, 1, 2]))
    expected = brute_force(Counter(hand), CONTRACTS[contract], gap=gap, exact=False, first_only=True)
    assert can_fulfil(counts_of(hand), contract, gap=gap, exact=False) == bool(expected)


@SETTINGS
@given(st.data(), st.sampled_from([1, 2, 3, 4, 6]))
def test_completion_of_partly_laid_contract(data, contract):
    """``completion_feasible`` on melds partly laid down from one of the hand's solutions."""
    specs = CONTRACTS[contract]
    hand = data.draw(hands(contract))
    gap = data.draw(st.sampled_from([0, 1]))
    solutions = list(arrangements(counts_of(hand), contract, gap=gap))
    assume(solutions)
    solution = data.draw(st.sampled_from(solutions))
    left = counts_of(hand)
    melds = [Meld(s) for s in specs]
    fixed: list[Fixed] = [[] for _ in specs]
    for i, pairs in enumerate(solution):
        ordered = [x for x in pairs if x[0] != JOKER] + [x for x in pairs if x[0] == JOKER]
        for card, place in ordered[: data.draw(st.integers(0, len(ordered)))]:
            melds[i].add(card, place)
            fixed[i].append((card, place))
            left[card] -= 1
    assert completion_feasible(left, melds, gap=gap, exact=True)
    # the same partial melds, and one more card of the hand put somewhere it may not belong
    i = data.draw(st.integers(0, len(specs) - 1))
    extra = data.draw(st.sampled_from([c for c in range(53) if left[c]]))
    if not melds[i].fits_building(extra, extra, True):
        return
    melds[i].add(extra, extra)
    fixed[i].append((extra, extra))
    left[extra] -= 1
    rest = Counter({c: k for c, k in enumerate(left) if k})
    expected = brute_force(rest, specs, gap=gap, exact=True, fixed=fixed, first_only=True)
    assert completion_feasible(left, melds, gap=gap, exact=True) == bool(expected)


def test_brute_force_reference_sanity():
    """The reference itself, on hands worked out by hand."""

    def solve(text: str, contract: int, gap: int = 1) -> set[tuple]:
        from shanghai_env.cards import parse_cards

        return brute_force(Counter(parse_cards(text)), CONTRACTS[contract], gap=gap, exact=True)

    assert {canonical(s) for s in solve("7C 7D 7H 9C 9D 9S KS", 1)} == {((("set", 6, 0), ("set", 8, 0)), ())}
    assert solve("7C 7D 7H 9C 9D 9S", 1) == set()
    assert {canonical(s) for s in solve("JH QH KH AH 5C 5D 5S 9C", 2)} == {
        ((("set", 4, 0),), (("run", 2, 10, 13, frozenset()),))
    }
    assert solve("QH KH AH 2H 5C 5D 5S 9C", 2) == set()
    assert solve("3H 4H 5H 6H 7H 8H 9H TH 2C", 3) == set()
    assert solve("3H 4H 5H 6H 7H 8H 9H TH 2C", 3, gap=0)
    runs = solve("5H 6H JK 8H KC KD KS 2C", 2)
    assert {s[1] for s in runs} == {("run", 2, 4, 7, frozenset({6}))}
