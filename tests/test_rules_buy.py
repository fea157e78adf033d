"""Drawing and buying the upcard (docs/rules.md 5.1)."""

from __future__ import annotations

import pytest
from helpers import cards, hand, names, new_game, play, top_of_stock, upcard

from shanghai_env import Game, Phase
from shanghai_env.moves import MoveKind

HANDS = {
    0: "7C 7D 7H 9C 9D 9H 2C 4D 6S 8H TC",
    1: "AC 3C 5C 8C JC KC 2D 5D 9D QD 3H",
    2: "AD 4C 6C TD JD KD 4H 6H 8S QH KH",
    3: "2H 5H TH JH AS 3S 4S 5S 7S 9S JS",
}


def fresh(upcard_: str = "KS", stock: str = "QS JS TS 8D 6D 3D", **options) -> Game:
    return new_game(HANDS, upcard_, stock, **options)


def discard_any(g: Game) -> str:
    move = next(m for m in g.legal_moves() if m.kind == MoveKind.DISCARD)
    g.apply(move)
    return str(move)


# --- taking the upcard -------------------------------------------------------------------------


def test_take_is_the_draw_and_not_a_buy():
    g = fresh()
    assert names(g.legal_moves()) == {"take", "draw"}
    g.apply("take")
    assert hand(g, 0) == cards(HANDS[0] + " KS")
    assert g.phase == Phase.PLAY and g.to_act == 0
    assert g.buys_left == [3, 3, 3, 3]
    assert g.discard == []
    assert top_of_stock(g) == ["QS"]
    assert not {"take", "draw", "buy", "pass"} & names(g.legal_moves())


# --- declining: the offer goes clockwise ---------------------------------------------------------


def test_declined_upcard_is_offered_clockwise_from_the_left():
    g = fresh()
    g.apply("draw")
    asked = []
    while g.phase == Phase.BUY:
        asked.append(g.to_act)
        assert names(g.legal_moves()) == {"buy", "pass"}
        g.apply("pass")
    assert asked == [1, 2, 3]  # nobody discarded the first upcard, so all are asked
    assert g.phase == Phase.PLAY and g.to_act == 0
    assert hand(g, 0) == cards(HANDS[0] + " QS")  # the stock's top card
    assert upcard(g) == "KS"  # nobody bought: the upcard stays
    g.apply("discard 2C")
    assert [upcard(g)] == ["2C"] and len(g.discard) == 2 and g.discard[0] == 51  # KS under it


def test_offer_starts_left_of_the_player_in_turn_and_wraps():
    g = fresh()
    play(g, "take; discard KS")  # player_0 discards
    play(g, "take; discard 3H")  # player_1 discards
    g.apply("draw")  # player_2 declines 3H
    asked = []
    while g.phase == Phase.BUY:
        asked.append(g.to_act)
        g.apply("pass")
    assert asked == [3, 0]  # player_1 discarded 3H and is not asked
    assert g.to_act == 2


def test_the_discarder_is_not_asked():
    g = fresh()
    play(g, "take; discard KS")
    g.apply("draw")  # player_1 declines KS, discarded by player_0
    asked = []
    while g.phase == Phase.BUY:
        asked.append(g.to_act)
        g.apply("pass")
    assert asked == [2, 3]


# --- buying -------------------------------------------------------------------------------------


def test_first_buyer_takes_upcard_and_penalty_and_the_offer_ends():
    g = fresh()
    play(g, "draw; pass; buy")  # player_1 passes, player_2 buys; player_3 is not asked
    assert hand(g, 2) == cards(HANDS[2] + " KS QS")  # the upcard and the stock's top card
    assert g.buys_left == [3, 3, 2, 3]
    assert hand(g, 0) == cards(HANDS[0] + " JS")  # the player in turn draws the next card
    assert g.phase == Phase.PLAY and g.to_act == 0
    assert g.hand_sizes == [12, 11, 13, 11]
    assert top_of_stock(g) == ["TS"]
    assert g.discard == []


def test_buyer_does_not_act_and_buying_is_not_a_turn():
    g = fresh()
    play(g, "draw; pass; buy")
    assert g.to_act == g.turn_player == 0  # the buyer may not meld, lay off or discard now
    with pytest.raises(ValueError):
        g.apply("buy")
    g.apply("discard 2C")
    assert g.turn_player == g.to_act == 1  # play goes on to the left of player_0
    assert g.phase == Phase.DRAW
    assert g.hand_sizes == [11, 11, 13, 11]


def test_after_declining_the_player_may_not_take_the_new_top():
    g = fresh()
    play(g, "draw; pass; pass; pass; discard 2C")  # discard pile: KS, 2C
    play(g, "draw; buy")  # player_1 declines 2C, player_2 buys it; KS is the new top
    assert upcard(g) == "KS"
    assert g.to_act == 1 and g.phase == Phase.PLAY
    assert "take" not in names(g.legal_moves())
    with pytest.raises(ValueError):
        g.apply("take")
    assert "KS" not in hand(g, 1)
    assert hand(g, 1) == cards(HANDS[1] + " TS")  # QS went to player_0, JS was the penalty


def test_buys_per_deal_are_three_then_the_player_is_not_asked():
    g = fresh(stock="")
    bought = 0
    for _turn in range(16):
        if g.phase == Phase.DRAW:
            g.apply("draw")
        while g.phase == Phase.BUY:
            if g.to_act == 1:
                assert g.buys_left[1] > 0
                g.apply("buy")
                bought += 1
            else:
                g.apply("pass")
        discard_any(g)
    assert bought == 3
    assert g.buys_left == [3, 0, 3, 3]


@pytest.mark.parametrize(("contract", "limit"), [(1, 3), (5, 3), (8, 3), (9, 4), (10, 4)])
def test_buy_limit_by_contract(contract, limit):
    g = Game(contracts=(contract,))
    g.reset(seed=2, dealer=3)
    assert g.buys_left == [limit] * 4
    for _turn in range(24):
        if g.phase == Phase.DRAW:
            g.apply("draw")
        while g.phase == Phase.BUY:
            g.apply("buy" if g.to_act == 2 else "pass")
        discard_any(g)
    assert g.buys_left[2] == 0
    assert g.hand_sizes[2] == 11 + 2 * limit


def test_nobody_left_to_ask_means_a_plain_draw():
    g = new_game({s: HANDS[s] for s in range(3)}, "KS", "QS JS TS", num_players=3)
    # in three-player games, after a discard only one other player is asked
    play(g, "take; discard KS")  # player_0 discards KS
    g.apply("draw")  # player_1 declines: player_2 is asked, not player_0
    assert g.phase == Phase.BUY and g.to_act == 2
    g.apply("pass")
    assert g.phase == Phase.PLAY and g.to_act == 1


# --- down players and buying (option down_players_may_buy) --------------------------------------


def _down_player_game(**options) -> Game:
    g = fresh(**options)
    play(g, "take; meld 0 7C; meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D; meld 1 9H; discard KS")
    assert g.down[0]
    play(g, "take; discard 3H")  # player_1
    g.apply("draw")  # player_2 declines 3H: player_3 then player_0 are asked
    assert g.to_act == 3
    g.apply("pass")
    return g


def test_down_player_may_buy_by_default():
    g = _down_player_game()
    assert g.phase == Phase.BUY and g.to_act == 0
    g.apply("buy")
    assert "3H" in hand(g, 0)
    assert g.hand_sizes[0] == 5 + 2
    assert g.buys_left[0] == 2


def test_down_player_is_not_asked_when_option_is_false():
    g = _down_player_game(down_players_may_buy=False)
    assert g.phase == Phase.PLAY and g.to_act == 2
    assert g.hand_sizes[0] == 5
