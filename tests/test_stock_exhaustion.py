"""A deal ends when the stock runs out after its last allowed rebuild (docs/rules.md 5.5).

Golden deals on a stacked deck: every player declines the upcard, everyone passes, and the
player in turn discards the card just drawn, so every hand stays as dealt and the scores are
the dealt hands' points, worked out by hand below.
"""

from __future__ import annotations

import random

import pytest
from helpers import hand, new_game, play, upcard

from shanghai_env import Game, Phase, Rules
from shanghai_env.engine import NO_PLAYER, InvariantError

HANDS = {
    0: "7C 7C 7D 7D 7H 7S 9C 9C 9D 9H 9S",  # 11 x 5 = 55
    1: "AC 2C 3C 5D 8D TD JH QH KS 4S 6H",  # 20+20+5+5+5+10+10+10+10+5+5 = 105
    2: "AD 2D 4C 6C 8C TC JC QD KD 3H 5S",  # 105 likewise
    3: "AH 2H 4D 6D 8S TH JD QC KH 3D JK",  # 20+20+5+5+5+10+10+10+10+5+50 = 150
}
DEALT_POINTS = (55, 105, 105, 150)
STOCK = 105 - 4 * 11 - 1  # 60 cards after the deal and the upcard


def stalled_deal(max_stock_rebuilds: int | None) -> Game:
    return new_game(HANDS, "QS", dealer=3, contracts=(1, 2), max_stock_rebuilds=max_stock_rebuilds)


def play_turn(g: Game) -> None:
    """Decline the upcard, let everyone pass, discard the card drawn."""
    before = hand(g, g.turn_player)
    play(g, "draw")
    while g.phase == Phase.BUY:
        play(g, "pass")
    if g.deal != 0:  # the empty stock ended the deal
        return
    drawn = list(hand(g, g.turn_player))
    for c in before:
        drawn.remove(c)
    play(g, f"discard {drawn[0]}")


def test_deal_ends_when_the_rebuilt_stock_runs_out():
    g = stalled_deal(1)
    for _ in range(STOCK):  # the first 60 turns empty the dealt stock
        play_turn(g)
    assert g.stock == [] and g.reshuffles == 0 and g.stock_rebuilds_left == 1
    play_turn(g)  # the discard pile (61 cards) but its top becomes a 60-card stock
    assert g.reshuffles == 1 and len(g.stock) == 59 and g.stock_rebuilds_left == 0
    for _ in range(59):
        play_turn(g)
    assert g.deal == 0 and g.stock == []
    play_turn(g)  # turn 121: nothing left to draw and no rebuild left
    assert g.deal == 1 and g.phase == Phase.DRAW
    result = g.deal_results[0]
    assert result.out_player == NO_PLAYER and not result.blind
    assert result.scores == DEALT_POINTS
    assert g.scores == list(DEALT_POINTS)
    # turn 1 is draw, 3 passes, discard; the other turns 2 passes (the discarder is not asked);
    # the last turn ends after its passes: 5 + 119 * 4 + 3
    assert g.move_count == 484
    g.validate()


def test_no_rebuild_ends_the_deal_at_the_first_empty_stock():
    g = stalled_deal(0)
    for _ in range(STOCK):
        play_turn(g)
    play_turn(g)
    assert g.deal == 1 and g.reshuffles == 0
    assert g.deal_results[0].scores == DEALT_POINTS
    assert g.move_count == 5 + 59 * 4 + 3


def test_a_buyer_keeps_the_upcard_when_the_penalty_card_cannot_be_drawn():
    g = stalled_deal(0)
    for _ in range(STOCK):
        play_turn(g)
    # turn 61 is player_0's (60 turns went round the table 15 times); player_3 discarded last
    assert g.turn_player == 0 and g.upcard_from == 3
    top = upcard(g)
    assert top == "KS"  # the stock's last card: the unstacked rest of the deck ends with KS
    play(g, "draw; buy")  # player_1 buys KS; the penalty card would come from an empty stock
    assert g.deal == 1
    assert g.deal_results[0].scores == (55, 105 + 10, 105, 150)  # a king is 10


def test_without_a_limit_the_stock_is_rebuilt_again_and_again():
    g = stalled_deal(None)
    for _ in range(3 * STOCK + 3):
        play_turn(g)
    assert g.deal == 0 and g.reshuffles == 3 and g.stock_rebuilds_left is None
    g.validate()


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_rebuilds_never_exceed_the_limit(limit):
    g = stalled_deal(limit)
    most = 0
    while g.deal == 0:
        play_turn(g)
        most = max(most, g.reshuffles)
    assert most == limit


def test_validate_refuses_more_rebuilds_than_the_rules_allow():
    g = stalled_deal(1)
    g.reshuffles = 2
    with pytest.raises(InvariantError, match="rebuilt 2 times"):
        g.validate()


def test_view_says_how_many_rebuilds_are_left():
    g = stalled_deal(1)
    assert all(g.view(p).stock_rebuilds_left == 1 for p in range(4))
    assert Game(Rules(max_stock_rebuilds=None)).view(0).stock_rebuilds_left is None


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
def test_random_play_always_finishes_the_game(num_players):
    """Random legal play ends every deal by the rules: no cap is needed for it."""
    rng = random.Random(num_players)
    for seed in range(3):
        g = Game(num_players=num_players)
        g.reset(seed)
        while not g.game_over:
            g.apply(rng.choice(g.legal_moves()))
            assert g.move_count < 20_000, "a game of random play did not end"
        assert len(g.deal_results) == 10
        assert sum(r.out_player == NO_PLAYER for r in g.deal_results) > 0
        g.validate()
