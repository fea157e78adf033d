"""Seats, dealing, the first player, dealer rotation and the ten deals (docs/rules.md 1-3)."""

from __future__ import annotations

import random

import pytest
from helpers import (
    QUICK_SCORES,
    QUICK_SCRIPT,
    cards,
    full_multiset,
    greedy_move,
    hand,
    new_game,
    play,
    quick_game,
    stacked_deck,
    top_of_stock,
    upcard,
)

from shanghai_env import Game, Phase
from shanghai_env.cards import card_to_str
from shanghai_env.engine import NO_PLAYER
from shanghai_env.render import render_text

# The 52 distinct cards, clubs to spades, ace to king.
DISTINCT = [r + s for s in "CDHS" for r in "A23456789TJQK"]


def shuffled_deck(num_players: int, seed: int) -> list[str]:
    deck = [c for c, k in full_multiset(num_players).items() for _ in range(k)]
    random.Random(seed).shuffle(deck)
    return deck


# --- dealing a stacked deck (docs/rules.md section 3) -------------------------------------------------


def test_stacked_deck_is_dealt_one_at_a_time_from_the_dealers_left():
    g = Game(num_players=4)
    g.reset(deck=stacked_deck(4, DISTINCT[:48]), dealer=1)
    # card 0 to player_2 (left of dealer 1), card 1 to player_3, card 2 to player_0, ...
    assert hand(g, 2) == cards("AC 5C 9C KC 4D 8D QD 3H 7H JH 2S")
    assert hand(g, 3) == cards("2C 6C TC AD 5D 9D KD 4H 8H QH 3S")
    assert hand(g, 0) == cards("3C 7C JC 2D 6D TD AH 5H 9H KH 4S")
    assert hand(g, 1) == cards("4C 8C QC 3D 7D JD 2H 6H TH AS 5S")
    # card 44 is the upcard, the rest is the stock, top first
    assert upcard(g) == "6S"
    assert len(g.discard) == 1
    assert top_of_stock(g, 3) == ["7S", "8S", "9S"]
    assert len(g.stock) == 105 - 45
    assert g.hand_sizes == [11, 11, 11, 11]


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
def test_stacked_deal_for_every_player_count(num_players):
    for dealer in range(num_players):
        deck = shuffled_deck(num_players, seed=100 * num_players + dealer)
        g = Game(num_players=num_players)
        g.reset(deck=deck, dealer=dealer)
        expected: list[list[str]] = [[] for _ in range(num_players)]
        for i in range(11 * num_players):
            expected[(dealer + 1 + i) % num_players].append(deck[i])
        for seat in range(num_players):
            assert hand(g, seat) == cards(expected[seat])
        assert [card_to_str(c) for c in g.discard] == [deck[11 * num_players]]
        assert top_of_stock(g, len(g.stock)) == deck[11 * num_players + 1 :]
        assert g.dealer == dealer
        g.validate()


@pytest.mark.parametrize(("num_players", "dealer"), [(3, 0), (3, 2), (4, 3), (5, 1), (8, 7), (8, 4)])
def test_player_left_of_dealer_plays_first(num_players, dealer):
    g = Game(num_players=num_players)
    g.reset(seed=1, dealer=dealer)
    assert g.turn_player == g.to_act == (dealer + 1) % num_players
    assert g.phase == Phase.DRAW
    assert {str(m) for m in g.legal_moves()} == {"take", "draw"}


def test_the_stock_is_drawn_from_the_top():
    g = new_game({}, "KS", "QS JS TS", num_players=4)
    play(g, "draw; pass; pass; pass")
    assert "QS" in hand(g, 0)
    assert top_of_stock(g, 2) == ["JS", "TS"]


def test_turns_pass_clockwise_and_wrap():
    g = new_game({}, "KS", dealer=0, num_players=3)
    order = []
    for _ in range(5):
        order.append(g.turn_player)
        upcard_before = upcard(g)
        g.apply("take")
        g.apply(f"discard {upcard_before}")
    assert order == [1, 2, 0, 1, 2]


def test_seats_are_player_0_to_player_n_minus_1():
    g = Game(num_players=6)
    g.reset(seed=3)
    text = render_text(g)
    assert all(f"player_{p}:" in text for p in range(6))
    assert "player_6" not in text
    assert len(g.hands) == len(g.scores) == 6


# --- the first dealer and seeded decks -----------------------------------------------------------


def test_first_dealer_comes_from_the_seed():
    dealers = set()
    for seed in range(60):
        a, b = Game(num_players=5), Game(num_players=5)
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.dealer == b.dealer
        assert 0 <= a.dealer < 5
        dealers.add(a.dealer)
    assert dealers == set(range(5))


def test_same_seed_same_deal_other_seed_other_deal():
    a, b, c = Game(), Game(), Game()
    a.reset(seed=11)
    b.reset(seed=11)
    c.reset(seed=12)
    assert a.hands == b.hands and a.stock == b.stock and a.discard == b.discard
    assert (a.hands, a.stock) != (c.hands, c.stock)


def test_dealer_argument_overrides_the_cut():
    g = Game()
    for dealer in range(4):
        g.reset(seed=5, dealer=dealer)
        assert g.dealer == dealer


# --- deals follow one another ------------------------------------------------------------------


def test_the_deal_passes_to_the_left_and_the_next_deal_starts():
    g = quick_game(contracts=(1, 3))
    play(g, QUICK_SCRIPT)
    assert len(g.deal_results) == 1
    assert g.deal == 1
    assert g.contract == 3
    assert g.dealer == 0  # player_3 dealt the first deal
    assert g.turn_player == g.to_act == 1
    assert g.phase == Phase.DRAW
    assert g.hand_sizes == [11, 11, 11, 11]
    assert len(g.discard) == 1 and len(g.stock) == 105 - 45
    assert g.down == [False] * 4
    assert all(t == [] for t in g.table)
    assert g.buys_left == [3] * 4
    assert g.scores == list(QUICK_SCORES)
    g.validate()


def test_default_game_is_ten_deals_under_contracts_one_to_ten():
    assert Game().rules.contracts == tuple(range(1, 11))


@pytest.mark.parametrize(("num_players", "seed"), [(3, 31), (4, 41), (5, 51), (6, 61)])
def test_a_whole_game(num_players, seed):
    """A greedy player plays a full default game: ten deals, contracts 1..10 in order, the deal
    passing to the left each time, scores adding up, and the game over after the tenth deal."""
    g = Game(num_players=num_players)
    g.reset(seed=seed)
    rng = random.Random(seed)
    starts = [(g.deal, g.dealer, g.contract, tuple(g.buys_left), g.turn_player)]
    moves = 0
    while not g.game_over:
        assert moves < 20000, "the greedy game did not end"
        g.apply(greedy_move(g, rng))
        moves += 1
        if not g.game_over and g.deal != starts[-1][0]:
            assert g.deal == starts[-1][0] + 1
            starts.append((g.deal, g.dealer, g.contract, tuple(g.buys_left), g.turn_player))
            g.validate()
    first = starts[0][1]
    assert [s[0] for s in starts] == list(range(10))
    assert [s[1] for s in starts] == [(first + k) % num_players for k in range(10)]
    assert [s[2] for s in starts] == list(range(1, 11))
    assert [s[3] for s in starts] == [(3,) * num_players] * 8 + [(4,) * num_players] * 2
    assert [s[4] for s in starts] == [(first + k + 1) % num_players for k in range(10)]
    assert [r.deal for r in g.deal_results] == list(range(10))
    assert [r.contract for r in g.deal_results] == list(range(1, 11))
    for p in range(num_players):
        assert g.scores[p] == sum(r.scores[p] for r in g.deal_results)
    for r in g.deal_results:
        if r.out_player != NO_PLAYER:
            assert r.scores[r.out_player] in ((-25, -50) if r.blind else (0,))
            assert all(s >= 5 for p, s in enumerate(r.scores) if p != r.out_player)
    assert g.phase == Phase.GAME_OVER
    assert g.to_act == NO_PLAYER
    assert g.legal_moves() == ()
    assert g.winners() == [p for p in range(num_players) if g.scores[p] == min(g.scores)]
