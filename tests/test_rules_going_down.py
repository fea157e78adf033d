"""Going down never dead-ends, and every arrangement of a contract can be laid down.

Hands come from eight-player decks (three copies of each card, two jokers) and are built near a
contract so that many of them can go down. Contracts 1-6 fit in the 12 cards a player holds after
taking the upcard on the first turn.
"""

from __future__ import annotations

from collections import Counter

from helpers import new_game
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from reference import placements

from shanghai_env import Phase
from shanghai_env.cards import JOKER, card_to_str, counts_of, place_to_str
from shanghai_env.melds import CONTRACTS, SET, arrangements, can_fulfil
from shanghai_env.moves import MoveKind

PLACING = (MoveKind.MELD, MoveKind.FINISH)


@st.composite
def first_turn_hands(draw: st.DrawFn, contract: int) -> list[str]:
    """Twelve cards: a contract's melds (some jokers), spare cards, maybe one card changed."""
    cards: list[int] = []
    for spec in CONTRACTS[contract]:
        jokers = draw(st.integers(0, min(spec.max_jokers, 1)))
        if spec.kind == SET:
            rank = draw(st.sampled_from([0, 4, 5, 12]))
            cards += [draw(st.integers(0, 1)) * 13 + rank for _ in range(spec.size - jokers)]
        else:
            suit = draw(st.integers(0, 1))
            lo = draw(st.integers(0, 14 - spec.size))
            holes = draw(st.lists(st.integers(lo, lo + spec.size - 1), max_size=jokers, unique=True))
            jokers = len(holes)
            cards += [suit * 13 + pos % 13 for pos in range(lo, lo + spec.size) if pos not in holes]
        cards += [JOKER] * jokers
    pool = [s * 13 + r for s in (0, 1) for r in (0, 3, 4, 5, 6, 12)] + [JOKER]
    while len(cards) < 12:
        cards.append(draw(st.sampled_from(pool)))
    if draw(st.booleans()):
        cards[draw(st.integers(0, 11))] = draw(st.sampled_from(pool))
    counts = Counter(cards)
    assume(counts[JOKER] <= 2 and max(counts.values()) <= 3)
    order = draw(st.permutations(cards))
    return [card_to_str(c) for c in order]


def _first_turn(cards: list[str], contract: int, **options):
    g = new_game({0: cards[:11]}, cards[11], num_players=8, contracts=(contract,), **options)
    g.apply("take")
    return g


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 3, 4, 5, 6]), st.booleans(), st.sampled_from([0, 1, 2]))
def test_going_down_never_dead_ends(data, contract, exact, gap):
    cards = data.draw(first_turn_hands(contract))
    g = _first_turn(cards, contract, exact_contract_melds=exact, same_suit_run_gap=gap)
    can = can_fulfil(g.hands[0], contract, gap=gap, exact=exact)
    placing = [m for m in g.legal_moves() if m.kind in PLACING]
    assert bool(placing) == can
    event(f"can go down: {can}")
    if not can:
        return
    steps = 0
    while not g.down[0]:
        moves = g.legal_moves()
        assert moves, "going down reached a state with no legal move"
        if g.phase == Phase.GOING_DOWN:
            assert all(m.kind in PLACING for m in moves)
        placing = [m for m in moves if m.kind in PLACING]
        assert placing
        if exact:  # exactly the placements that keep the contract completable
            hand = Counter({c: k for c, k in enumerate(g.hands[0]) if k})
            fixed = [list(zip(m.cards, m.places)) for m in g.table[0]] or [[] for _ in g.specs]
            expected = placements(hand, g.specs, fixed, gap=gap)
            assert {(m.meld, m.card, m.place) for m in placing} == expected
        g.apply(data.draw(st.sampled_from(placing)))
        g.validate()
        steps += 1
        assert steps <= 12
    assert g.phase == Phase.PLAY and g.to_act == 0
    assert g.hand_sizes[0] >= 1
    assert {m.kind for m in g.legal_moves()} == {MoveKind.DISCARD}
    for meld, spec in zip(g.table[0], CONTRACTS[contract]):
        assert len(meld) == spec.size if exact else len(meld) >= spec.size


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 3, 4, 5, 6]), st.sampled_from([0, 1]))
def test_every_arrangement_can_be_laid_down(data, contract, gap):
    """Any arrangement found by the feasibility search is a legal sequence of ``meld`` moves
    (naturals first, then jokers), so going down card by card loses no way to go down."""
    cards = data.draw(first_turn_hands(contract))
    g = _first_turn(cards, contract, same_suit_run_gap=gap)
    found = list(arrangements(g.hands[0], contract, gap=gap))
    assume(found)
    for arrangement in data.draw(st.lists(st.sampled_from(found), min_size=1, max_size=3)):
        trial = g.clone()
        steps = [(i, c, p) for i, pairs in enumerate(arrangement) for c, p in pairs if c != JOKER]
        steps += [(i, c, p) for i, pairs in enumerate(arrangement) for c, p in pairs if c == JOKER]
        for i, card, place in steps:
            name = f"meld {i} " + ("JK=" if card == JOKER else "") + place_to_str(place)
            assert name in {str(m) for m in trial.legal_moves()}, (cards, arrangement, name)
            trial.apply(name)
        assert trial.down[0]
        used = counts_of(c for pairs in arrangement for c, _ in pairs)
        assert trial.hands[0] == [k - u for k, u in zip(g.hands[0], used)]
