"""Going out, going out blind, the empty stock, scoring and the end of the game (docs/rules.md 5.4-6)."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import (
    QUICK_HANDS,
    QUICK_SCORES,
    QUICK_SCRIPT,
    cards,
    hand,
    new_game,
    play,
    points,
    quick_game,
    top_of_stock,
    upcard,
)

from shanghai_env import Game, Phase
from shanghai_env.cards import card_to_str
from shanghai_env.engine import NO_PLAYER, DealResult
from shanghai_env.render import render_text

# --- going out ------------------------------------------------------------------------------------


def test_hand_points_of_the_quick_deal_match_the_table():
    # the expected scores are written out in helpers; check them against docs/rules.md section 6
    assert (0, points(QUICK_HANDS[1]), points(QUICK_HANDS[2]), points(QUICK_HANDS[3])) == QUICK_SCORES


def test_going_out_ends_the_deal_at_once():
    g = quick_game(contracts=(1,))
    play(g, QUICK_SCRIPT)
    assert g.deal_results == [DealResult(0, 1, QUICK_SCORES, 0, False)]
    assert g.scores == list(QUICK_SCORES)
    # nobody is offered the last discard: the game (a single deal) is over
    assert g.phase == Phase.GAME_OVER
    assert g.to_act == NO_PLAYER
    assert g.legal_moves() == ()
    assert g.winners() == [0]
    g.validate()


def test_after_the_last_contract_the_game_is_over_and_refuses_moves():
    g = quick_game(contracts=(1,))
    play(g, QUICK_SCRIPT)
    for move in ("take", "draw", "pass", "discard JS"):
        with pytest.raises(ValueError, match="over"):
            g.apply(move)
    assert "Game over" in render_text(g)


def test_scores_add_up_over_deals():
    g = quick_game(contracts=(1, 1))
    play(g, QUICK_SCRIPT)
    assert g.scores == list(QUICK_SCORES)
    assert g.deal == 1 and g.phase == Phase.DRAW


@pytest.mark.parametrize(("joker_points", "expected"), [(50, 145), (0, 95), (25, 120)])
def test_a_joker_left_in_hand_scores_joker_points(joker_points, expected):
    p1 = "AC 2C 3C 4C 5C 6C 8C TC JC QC JK"  # 20+20+5*5+10*2 = 85, plus the joker
    g = quick_game({1: p1}, contracts=(1,), joker_points=joker_points)
    play(g, QUICK_SCRIPT)
    assert g.deal_results[0].scores == (0, expected, 95, 115)
    assert points(p1, joker_points) == expected


# --- going out blind (contract 6: 11 dealt + 1 drawn = 11 melded + 1 discard) -----------------------

BLIND_OTHERS = {
    1: "AC 2C 4C 5C 6C 8C TC JC QC KC 9S",  # 20+20+5*5+10*4 = 105
    2: "AD 2D 3H 4H 5H 6H 7H 8H 9H TH JH",  # 20+20+5*7+10*2 = 95
    3: "AS 2S 4S 5S 6S 7S 8S TS JS QS KS",  # 20+20+5*5+10*4 = 105
}
BLIND_SETS = "meld 0 3C; meld 0 3D; meld 0 3S; meld 1 KD; meld 1 KH; meld 1 KS"


def test_going_out_blind_with_a_joker_scores_minus_25():
    g = new_game({0: "3C 3D 3S KD KH KS 6D 7D 9D TD JK", **BLIND_OTHERS}, "QC", contracts=(6,))
    play(g, f"take; {BLIND_SETS}; meld 2 6D; meld 2 7D; meld 2 9D; meld 2 TD; meld 2 JK=8D")
    assert g.down[0] and hand(g, 0) == ["QC"]
    g.apply("discard QC")
    assert g.deal_results == [DealResult(0, 6, (-25, 105, 95, 105), 0, True)]
    assert [points(BLIND_OTHERS[p]) for p in (1, 2, 3)] == [105, 95, 105]


def test_going_out_blind_without_a_joker_scores_minus_50():
    g = new_game({0: "3C 3D 3S KD KH KS 6D 7D 8D 9D TD", **BLIND_OTHERS}, "QD", contracts=(6,))
    play(g, f"take; {BLIND_SETS}; meld 2 6D; meld 2 7D; meld 2 8D; meld 2 9D; meld 2 TD; discard QD")
    assert g.deal_results == [DealResult(0, 6, (-50, 105, 95, 105), 0, True)]


def test_another_players_joker_does_not_make_a_blind_out_cost_less():
    """player_1 goes down with a joker and keeps two cards; player_2 then goes out blind with
    naturals only: −50 for player_2 (the joker was not among *its* cards), hands for the rest."""
    down_with_joker = "4C 4D 4H 5C 5D 5H 6S 7S 9S TS JK"
    blind_naturals = "3C 3D 3S KD KH KS 6D 7D 8D 9D TD"
    hands = {0: BLIND_OTHERS[1], 1: down_with_joker, 2: blind_naturals, 3: BLIND_OTHERS[3]}
    g = new_game(hands, "KC", "QH 2D", contracts=(6,))
    play(g, "draw; buy; discard 2D")  # player_1 buys KC (and QH); player_0 draws and throws 2D
    play(g, "take; meld 0 4C; meld 0 4D; meld 0 4H; meld 1 5C; meld 1 5D; meld 1 5H")
    play(g, "meld 2 6S; meld 2 7S; meld 2 9S; meld 2 TS; meld 2 JK=8S; discard 2D")
    assert g.down[1] and hand(g, 1) == cards("KC QH") and not g.deal_results
    play(g, f"take; {BLIND_SETS}; meld 2 6D; meld 2 7D; meld 2 8D; meld 2 9D; meld 2 TD; discard 2D")
    assert g.deal_results == [DealResult(0, 6, (105, points("KC QH"), -50, 105), 2, True)]
    assert [points(BLIND_OTHERS[p]) for p in (1, 3)] == [105, 105]


def test_a_discarded_joker_is_not_a_laid_down_joker():
    others = {**BLIND_OTHERS, 1: "AC 2C 4C 5C 6C 8C TC JC QC KC 9S"}
    g = new_game({0: "3C 3D 3S KD KH KS 6D 7D 8D 9D TD", **others}, "JK", contracts=(6,))
    play(g, f"take; {BLIND_SETS}; meld 2 6D; meld 2 7D; meld 2 8D; meld 2 9D; meld 2 TD; discard JK")
    assert g.deal_results[0].scores[0] == -50
    assert g.deal_results[0].blind


def test_going_out_blind_with_longer_melds():
    """With exact_contract_melds false the count can match in other contracts too."""
    g = quick_game(contracts=(1,), exact_contract_melds=False)
    play(g, "take; meld 0 7C; meld 0 7D; meld 0 7H; meld 0 7S; meld 0 7C; meld 0 7D")
    play(g, "meld 1 9C; meld 1 9D; meld 1 9H; meld 1 9S; meld 1 9C; finish; discard KS")
    assert g.deal_results == [DealResult(0, 1, (-50, *QUICK_SCORES[1:]), 0, True)]


def test_going_out_after_an_earlier_going_down_is_not_blind():
    g = quick_game(contracts=(1,))
    play(g, QUICK_SCRIPT)
    assert not g.deal_results[0].blind
    assert g.deal_results[0].scores[0] == 0


# --- the empty stock (docs/rules.md 5.5) --------------------------------------------------------------


def _decline_and_discard_the_drawn_card(g: Game) -> str:
    """Decline the upcard, nobody buys, draw the stock's top card and discard it."""
    drawn = top_of_stock(g)[0]
    g.apply("draw")
    while g.phase == Phase.BUY:
        g.apply("pass")
    g.apply(f"discard {drawn}")
    return drawn


def test_empty_stock_is_rebuilt_from_the_discard_pile_but_its_top():
    g = new_game({}, "KS", seed=5)
    initial_upcard = "KS"
    discards = [initial_upcard]
    while g.stock:
        discards.append(_decline_and_discard_the_drawn_card(g))
    assert len(discards) == 61 and len(g.discard) == 61
    top = upcard(g)
    pile_below_top = Counter(card_to_str(c) for c in g.discard[:-1])
    player = g.turn_player
    before = Counter(hand(g, player))
    g.apply("draw")
    while g.phase == Phase.BUY:
        g.apply("pass")
    drawn = Counter(hand(g, player)) - before
    assert sum(drawn.values()) == 1
    assert [upcard(g)] == [top] and len(g.discard) == 1  # the top card stays as the upcard
    assert Counter(card_to_str(c) for c in g.stock) + drawn == pile_below_top
    g.validate()
    # the shuffle comes from the game's seed: the same game rebuilds the same stock
    again = new_game({}, "KS", seed=5)
    while again.stock:
        _decline_and_discard_the_drawn_card(again)
    again.apply("draw")
    while again.phase == Phase.BUY:
        again.apply("pass")
    assert again.stock == g.stock and again.hands == g.hands


def _empty_the_stock_into(g: Game, player: int) -> None:
    """Move every stock card into one player's hand.

    Under docs/rules.md the dead hand cannot arise in play: no card leaves the game, and hands plus
    table hold at most 11 per player plus 2 per buy, so stock plus discard pile never falls below
    two cards. Its rule is tested by putting the stock's cards into a hand, keeping every card
    of the deck in exactly one place."""
    for c in g.stock:
        g.hands[player][c] += 1
        g.hand_sizes[player] += 1
    g.stock.clear()
    g.validate()


def test_dead_hand_when_the_stock_cannot_be_rebuilt():
    g = new_game({0: QUICK_HANDS[1], 1: QUICK_HANDS[2], 2: QUICK_HANDS[3]}, "KS", contracts=(1,))
    _empty_the_stock_into(g, 3)
    expected = tuple(points(hand(g, p)) for p in range(4))
    assert expected[:3] == (105, 95, 115)
    g.apply("draw")
    for _ in range(3):
        g.apply("pass")
    result = g.deal_results[0]
    assert result.out_player == NO_PLAYER and not result.blind
    assert result.scores == expected  # nobody out: everybody scores their hand
    assert g.phase == Phase.GAME_OVER


def test_dead_hand_on_the_buyers_penalty_card():
    g = new_game({0: QUICK_HANDS[1], 1: QUICK_HANDS[2], 2: QUICK_HANDS[3]}, "KS", contracts=(1, 1))
    _empty_the_stock_into(g, 3)
    play(g, "draw; buy")  # player_1 buys KS; no penalty card can be drawn
    result = g.deal_results[0]
    assert result.out_player == NO_PLAYER
    assert result.scores[1] == 95 + 10  # the bought upcard is in player_1's hand
    assert g.deal == 1 and g.phase == Phase.DRAW  # the next deal starts
    assert g.dealer == 0


# --- the winner ----------------------------------------------------------------------------------


def test_lowest_total_wins_and_ties_share_first():
    g = Game()
    g.scores = [120, 80, 95, 80]
    assert g.winners() == [1, 3]
    g.scores = [10, 20, 30, 40]
    assert g.winners() == [0]
    g.scores = [-50, -50, -50, -50]
    assert g.winners() == [0, 1, 2, 3]
