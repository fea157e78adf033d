"""Golden deals: stacked decks played move by move, with deal scores worked out by hand.

Each expected score is the sum of docs/rules.md section 6 points of the hand left at the end
(3-9: 5, T-K: 10, A and 2: 20, joker: 50), 0 for the player who went out, -25 / -50 blind.
"""

from __future__ import annotations

from helpers import cards, hand, new_game, play, table_text

from shanghai_env import Phase
from shanghai_env.engine import DealResult


def test_golden_deal_with_a_buy():
    """Contract 1, four players, player_3 deals. player_2 buys the first upcard; player_0 goes
    down on the first turn and out on the second by laying off on their own sets."""
    g = new_game(
        {
            0: "7C 7C 7D 7D 7H 7S 9C 9C 9D 9H 9S",
            1: "AC 2C 3C 5D 8D TD JH QH KS 4S 6H",
            2: "AD 2D 4C 6C 8C TC JC QD KD 3H 5S",
            3: "AH 2H 4D 6D 8S TH JD QC KH 3D 5H",
        },
        "QS",
        "8H KC 2S 6S 4H",
        dealer=3,
        contracts=(1,),
    )
    play(g, "draw; pass; buy")  # player_0 declines QS, player_1 passes, player_2 buys
    assert hand(g, 2) == cards("AD 2D 4C 6C 8C TC JC QD KD 3H 5S QS 8H")
    assert g.buys_left == [3, 3, 2, 3]
    assert g.to_act == 0 and g.phase == Phase.PLAY and "KC" in hand(g, 0)
    play(g, "meld 0 7C; meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D; meld 1 9H; discard KC")
    assert table_text(g, 0) == ["7C 7D 7H", "9C 9D 9H"]
    play(g, "take; discard 4S")  # player_1
    play(g, "draw; pass; pass; discard QD")  # player_2: player_3, player_0 pass; draws 2S
    play(g, "draw; pass; pass; discard JD")  # player_3: player_0, player_1 pass; draws 6S
    play(g, "draw; pass; pass")  # player_0: player_1, player_2 pass; draws 4H
    play(g, "layoff 7C 0.0; layoff 7D 0.0; layoff 7S 0.0; layoff 9C 0.1; layoff 9S 0.1")
    assert hand(g, 0) == ["4H"]
    g.apply("discard 4H")
    # player_1: AC 2C 3C 5D 8D TD JH QH KS 6H KC = 20+20+5+5+5+10+10+10+10+5+10 = 110
    # player_2: AD 2D 4C 6C 8C TC JC KD 3H 5S QS 8H 2S = 20+20+5+5+5+10+10+10+5+5+10+5+20 = 130
    # player_3: AH 2H 4D 6D 8S TH QC KH 3D 5H 6S = 20+20+5+5+5+10+10+10+5+5+5 = 100
    assert g.deal_results == [DealResult(0, 1, (0, 110, 130, 100), 0, False)]
    assert g.scores == [0, 110, 130, 100]
    assert g.phase == Phase.GAME_OVER and g.winners() == [0]


def test_golden_deal_with_a_joker_swap():
    """Contract 1, four players. player_0 goes down with a joker as 7H; player_1 goes down, then
    on the next turn swaps 7H for that joker, lays off everything (the joker too) and goes out."""
    g = new_game(
        {
            0: "7C 7D JK 9C 9D 9H 2C 3D 4S 8C TD",
            1: "QC QD QH 5C 5D 5H 7H QS 5S 9S 7S",
            2: "AC 2D 3H 4C 6S 8D TH JC KD 6D 8S",
            3: "AD 2H 3C 4D 6H 8H TS JD KH 6C 3S",
        },
        "KS",
        "4H JH 2S 5C TC",
        dealer=3,
        contracts=(1,),
    )
    play(g, "draw; pass; pass; pass")  # player_0 draws 4H
    play(g, "meld 0 7C; meld 0 7D; meld 0 JK=7H; meld 1 9C; meld 1 9D; meld 1 9H; discard TD")
    assert table_text(g, 0) == ["7C 7D JK=7H", "9C 9D 9H"]
    play(g, "draw; pass; pass")  # player_1 draws JH
    play(g, "meld 0 QC; meld 0 QD; meld 0 QH; meld 1 5C; meld 1 5D; meld 1 5H; discard JH")
    assert hand(g, 1) == cards("7H QS 5S 9S 7S")
    play(g, "take; discard KD")  # player_2 takes JH
    play(g, "draw; pass; pass; discard KH")  # player_3: the down player_0 is asked too; draws 2S
    play(g, "draw; pass; pass; discard 8C")  # player_0 draws 5C and keeps it
    play(g, "draw; pass; pass")  # player_1 draws TC
    g.apply("swap 7H 3.0")  # player_0's meld 0 is three seats to player_1's left
    assert table_text(g, 0) == ["7C 7D 7H", "9C 9D 9H"]
    assert hand(g, 1) == cards("QS 5S 9S 7S TC JK")
    play(g, "layoff 7S 3.0; layoff 9S 3.1; layoff QS 0.0; layoff 5S 0.1; layoff JK=QH 0.0")
    assert table_text(g, 1) == ["QC QD QH QS JK=QH", "5C 5D 5H 5S"]
    assert table_text(g, 0) == ["7C 7D 7H 7S", "9C 9D 9H 9S"]
    g.apply("discard TC")
    # player_0: 2C 3D 4S 4H 5C = 20+5+5+5+5 = 40
    # player_2: AC 2D 3H 4C 6S 8D TH JC 6D 8S JH = 20+20+5+5+5+5+10+10+5+5+10 = 100
    # player_3: AD 2H 3C 4D 6H 8H TS JD 6C 3S 2S = 20+20+5+5+5+5+10+10+5+5+20 = 110
    assert g.deal_results == [DealResult(0, 1, (40, 0, 100, 110), 1, False)]
    assert g.winners() == [1]


def test_golden_deal_going_out_blind_without_a_joker():
    """Contract 6, three players, player_0 deals so player_1 starts. player_2 goes down with all
    eleven contract cards on their second turn and discards the twelfth: out blind, -50."""
    g = new_game(
        {
            1: "AH 2H 4C 5S 7S 8C JS QH TD 2C 9H",
            2: "3C 3D 3S KD KH KS 6D 7D 8D 9D QC",
            0: "AC 2S 4H 5C 6H 8S JC QD KC 9S 3H",
        },
        "5H",
        "6S AS",
        dealer=0,
        num_players=3,
        contracts=(6,),
    )
    assert g.turn_player == 1
    play(g, "draw; pass; pass; discard 9H")  # player_1 draws 6S
    play(g, "draw; pass; discard QC")  # player_2: only player_0 is asked; draws AS
    play(g, "take; discard 8S")  # player_0
    play(g, "take; discard TD")  # player_1
    g.apply("take")  # player_2 takes TD
    play(g, "meld 0 3C; meld 0 3D; meld 0 3S; meld 1 KD; meld 1 KH; meld 1 KS")
    play(g, "meld 2 6D; meld 2 7D; meld 2 8D; meld 2 9D")
    assert not g.down[2]
    g.apply("meld 2 TD")
    assert g.down[2] and hand(g, 2) == ["AS"]
    g.apply("discard AS")
    # player_0: AC 2S 4H 5C 6H JC QD KC 9S 3H QC = 20+20+5+5+5+10+10+10+5+5+10 = 105
    # player_1: AH 2H 4C 5S 7S 8C JS QH 2C 6S 8S = 20+20+5+5+5+5+10+10+20+5+5 = 110
    assert g.deal_results == [DealResult(0, 6, (105, 110, -50), 2, True)]
    assert g.winners() == [2]


def test_golden_deal_buy_then_blind_with_a_joker():
    """Contract 8 (a set of 3 and a run of 10), five players. player_0 buys a card (the penalty
    card is a joker) and goes out blind on the next turn with 14 cards: 13 melded, 1 discarded.
    A joker among the laid-down cards: -25."""
    g = new_game(
        {
            0: "4C 4D 4H 5S 6S 7S 8S 9S TS JS KD",
            1: "QS AC 3C 5C 8C TC AD 5D 9D JD 6H",
            2: "2C 6C 9C JC 2D 6D TD QD 3H 7H JH",
            3: "3D 8D KC 4S 8H TH QH KH AS 2S 9H",
            4: "KS 5H 6S 9S QC 7D TS 3S JC 8S 5C",
        },
        "2H",
        "JK 7C",
        dealer=4,
        num_players=5,
        contracts=(8,),
    )
    play(g, "take; discard KD")  # player_0
    play(g, "take; discard QS")  # player_1
    play(g, "draw; pass; pass; buy")  # player_2 declines QS; player_0 buys it, with JK as penalty
    assert "JK" in hand(g, 0) and "QS" in hand(g, 0) and g.hand_sizes[0] == 13
    play(g, "discard 7C")  # player_2 drew 7C
    play(g, "take; discard 3D")  # player_3
    play(g, "take; discard KS")  # player_4
    g.apply("take")  # player_0 takes KS: 14 cards
    play(g, "meld 0 4C; meld 0 4D; meld 0 4H")
    play(
        g, "meld 1 5S; meld 1 6S; meld 1 7S; meld 1 8S; meld 1 9S; meld 1 TS; meld 1 JS; meld 1 QS; meld 1 KS"
    )
    g.apply("meld 1 JK=AS^")
    assert table_text(g, 0) == ["4C 4D 4H", "5S 6S 7S 8S 9S TS JS QS KS JK=AS^"]
    assert g.down[0] and hand(g, 0) == ["2H"]
    g.apply("discard 2H")
    # player_1: AC 3C 5C 8C TC AD 5D 9D JD 6H KD = 20+5+5+5+10+20+5+5+10+5+10 = 100
    # player_2: 2C 6C 9C JC 2D 6D TD QD 3H 7H JH = 20+5+5+10+20+5+10+10+5+5+10 = 105
    # player_3: 8D KC 4S 8H TH QH KH AS 2S 9H 7C = 5+10+5+5+10+10+10+20+20+5+5 = 105
    # player_4: 5H 6S 9S QC 7D TS 3S JC 8S 5C 3D = 5+5+5+10+5+10+5+10+5+5+5 = 70
    assert g.deal_results == [DealResult(0, 8, (-25, 100, 105, 105, 70), 0, True)]
