"""Going down, laying off and swapping jokers (docs/rules.md 5.2 and 5.3)."""

from __future__ import annotations

import pytest
from helpers import cards, hand, names, new_game, play, table_text

from shanghai_env import Game, Phase
from shanghai_env.cards import card_to_str, str_to_card
from shanghai_env.moves import MoveKind

SEVENS_AND_NINES = "7C 7D 7H 9C 9D 9H 2C 4D 6S 8H TC"
GO_DOWN = "meld 0 7C; meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D; meld 1 9H"


def kinds(g: Game) -> set[MoveKind]:
    return {m.kind for m in g.legal_moves()}


def moves_of(g: Game, kind: MoveKind) -> set[str]:
    return {str(m) for m in g.legal_moves() if m.kind == kind}


def pass_turns(g: Game, count: int) -> None:
    """Players take the upcard and discard it again (their hands do not change)."""
    for _ in range(count):
        card = card_to_str(g.discard[-1])
        g.apply("take")
        g.apply(f"discard {card}")


# --- going down (docs/rules.md 5.2) ---------------------------------------------------------------------


def test_going_down_comes_after_drawing():
    g = new_game({0: SEVENS_AND_NINES}, "KS")
    assert names(g.legal_moves()) == {"take", "draw"}
    with pytest.raises(ValueError):
        g.apply("meld 0 7C")
    g.apply("take")
    # any seven or nine may open either set; no other card can
    assert moves_of(g, MoveKind.MELD) == {
        f"meld {i} {c}" for i in (0, 1) for c in ("7C", "7D", "7H", "9C", "9D", "9H")
    }
    assert moves_of(g, MoveKind.DISCARD) == {f"discard {c}" for c in cards(SEVENS_AND_NINES + " KS")}


def test_no_meld_moves_without_a_contract_in_hand():
    g = new_game({0: "7C 7D 8H 9C 9D TH 2C 4D 6S 8H TC"}, "KS")
    g.apply("take")
    assert kinds(g) == {MoveKind.DISCARD}


def test_going_down_card_by_card_then_down_and_discard():
    g = new_game({0: SEVENS_AND_NINES}, "KS")
    g.apply("take")
    g.apply("meld 0 7C")
    assert g.phase == Phase.GOING_DOWN and not g.down[0]
    assert kinds(g) == {MoveKind.MELD}  # once started, the contract is finished first
    with pytest.raises(ValueError):
        g.apply("discard 2C")
    play(g, "meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D")
    assert not g.down[0]
    g.apply("meld 1 9H")
    assert g.down[0]
    assert g.phase == Phase.PLAY and g.to_act == 0
    assert table_text(g, 0) == ["7C 7D 7H", "9C 9D 9H"]
    assert names(g.legal_moves()) == {f"discard {c}" for c in cards("2C 4D 6S 8H TC KS")}
    g.apply("discard KS")
    assert g.turn_player == 1 and g.hand_sizes[0] == 5


def test_contract_melds_have_exact_sizes():
    g = new_game({0: "7C 7D 7H 7S 9C 9D 9H 2C 4D 6S 8H"}, "KS")
    play(g, "take; meld 0 7C; meld 0 7D; meld 0 7H")
    assert "meld 0 7S" not in moves_of(g, MoveKind.MELD)
    with pytest.raises(ValueError):
        g.apply("meld 0 7S")
    assert "finish" not in names(g.legal_moves())
    play(g, "meld 1 9C; meld 1 9D; meld 1 9H")
    assert g.down[0] and "7S" in hand(g, 0)


def test_longer_melds_with_exact_contract_melds_false():
    g = new_game({0: "7C 7D 7H 7S 9C 9D 9H 2C 4D 6S 8H"}, "KS", exact_contract_melds=False)
    play(g, "take; meld 0 7C; meld 0 7D; meld 0 7H")
    assert "finish" not in names(g.legal_moves())  # meld 1 is not complete
    play(g, "meld 0 7S; meld 1 9C; meld 1 9D; meld 1 9H")
    assert g.phase == Phase.GOING_DOWN and not g.down[0]  # not down until finish
    assert "finish" in names(g.legal_moves())
    assert MoveKind.DISCARD not in kinds(g)
    g.apply("finish")
    assert g.down[0] and g.phase == Phase.PLAY
    assert table_text(g, 0) == ["7C 7D 7H 7S", "9C 9D 9H"]
    assert kinds(g) == {MoveKind.DISCARD}


def test_a_joker_joins_a_meld_after_a_natural_and_is_declared():
    g = new_game({0: "7C 7D JK 9C 9D 9H 2C 4D 6S 8H TC"}, "KS")
    g.apply("take")
    assert not any(m.startswith("meld 0 JK") for m in moves_of(g, MoveKind.MELD))
    g.apply("meld 0 7C")
    jokers = {m for m in moves_of(g, MoveKind.MELD) if "JK=" in m}
    assert jokers == {"meld 0 JK=7C", "meld 0 JK=7D", "meld 0 JK=7H", "meld 0 JK=7S"}
    with pytest.raises(ValueError):
        g.apply("meld 0 JK=8H")
    play(g, "meld 0 JK=7H; meld 0 7D")
    assert sorted(table_text(g, 0)[0].split()) == ["7C", "7D", "JK=7H"]


def test_placements_keep_the_contract_completable():
    g = new_game({0: "7C 7D JK 9C 9D 9H 2C 4D 6S 8H TC"}, "KS")
    play(g, "take; meld 1 9C")
    # the joker is needed for the sevens: putting it with the nines would dead-end
    assert "meld 1 JK=9S" not in moves_of(g, MoveKind.MELD)
    with pytest.raises(ValueError):
        g.apply("meld 1 JK=9S")
    g.apply("meld 0 7C")
    # with 7C in meld 0, a seven in meld 1 would leave two sets of sevens to fill from 7D + JK
    assert "meld 1 7D" not in moves_of(g, MoveKind.MELD)
    play(g, "meld 1 9D; meld 1 9H; meld 0 7D; meld 0 JK=7S")
    assert g.down[0]


def test_joker_limit_while_going_down():
    # five players: three decks and two jokers
    g = new_game({0: "7C 7D JK JK 9C 9D 9H 2C 4D 6S 8H"}, "KS", num_players=5)
    play(g, "take; meld 0 7C; meld 0 JK=7H")
    assert not any("JK" in m for m in moves_of(g, MoveKind.MELD) if m.startswith("meld 0"))
    with pytest.raises(ValueError):
        g.apply("meld 0 JK=7S")


def test_a_card_must_be_left_to_discard():
    # contract 7 is three runs of four: twelve cards that make it exactly cannot go down
    g = new_game({0: "3H 4H 5H 6H 3S 4S 5S 6S 3D 4D 5D"}, "6D", contracts=(7,))
    g.apply("take")
    assert kinds(g) == {MoveKind.DISCARD}


def test_going_down_only_once_per_deal():
    g = new_game({0: "7C 7D 7H 9C 9D 9H 2C 2D 2H 8H TC"}, "KS")
    play(g, f"take; {GO_DOWN}; discard KS")
    pass_turns(g, 3)
    g.apply("take")
    assert hand(g, 0) == cards("2C 2D 2H 8H TC KS")
    assert MoveKind.MELD not in kinds(g)
    with pytest.raises(ValueError):
        g.apply("meld 0 2C")


def test_no_going_down_out_of_turn():
    g = new_game({1: SEVENS_AND_NINES}, "KS")
    g.apply("draw")
    assert g.phase == Phase.BUY and g.to_act == 1
    assert names(g.legal_moves()) == {"buy", "pass"}
    with pytest.raises(ValueError):
        g.apply("meld 0 7C")


# --- laying off (docs/rules.md 5.3) ----------------------------------------------------------------


def test_no_layoff_on_the_going_down_turn_but_on_the_next():
    g = new_game({0: "7C 7D 7H 9C 9D 9H 7S 9S 2C 4D TC"}, "KS")
    play(g, f"take; {GO_DOWN}")
    assert kinds(g) == {MoveKind.DISCARD}
    with pytest.raises(ValueError):
        g.apply("layoff 7S 0.0")
    g.apply("discard KS")
    pass_turns(g, 3)
    g.apply("take")
    assert moves_of(g, MoveKind.LAYOFF) == {"layoff 7S 0.0", "layoff 9S 0.1"}
    play(g, "layoff 7S 0.0; layoff 9S 0.1")
    assert table_text(g, 0) == ["7C 7D 7H 7S", "9C 9D 9H 9S"]
    assert hand(g, 0) == cards("2C 4D TC KS")


def test_layoffs_onto_other_players_melds():
    g = new_game(
        {
            0: "7C 7D 7H 9C 9D 9H QS 5S 2C 4D TC",
            1: "QC QD QH 5C 5D 5H 7S 9S 3C 8D JD",
            2: "7S 9S AC 3D 6C 8C TD JC KC KD 4H",
        },
        "KS",
    )
    play(g, f"take; {GO_DOWN}; discard KS")
    play(g, "take; meld 0 QC; meld 0 QD; meld 0 QH; meld 1 5C; meld 1 5D; meld 1 5H; discard KS")
    assert g.down[1]
    # player_2 is not down: no layoffs, though 7S and 9S fit
    g.apply("take")
    assert MoveKind.LAYOFF not in kinds(g)
    with pytest.raises(ValueError):
        g.apply("layoff 7S 2.0")
    g.apply("discard KS")
    pass_turns(g, 1)
    # player_0: seat 1 is player_1
    g.apply("take")
    assert moves_of(g, MoveKind.LAYOFF) == {"layoff QS 1.0", "layoff 5S 1.1"}
    play(g, "layoff QS 1.0; discard KS")
    # player_1: seat 3 is player_0 (three seats to the left in a four-player game)
    g.apply("take")
    assert moves_of(g, MoveKind.LAYOFF) == {"layoff 7S 3.0", "layoff 9S 3.1"}
    play(g, "layoff 7S 3.0; layoff 9S 3.1")
    assert table_text(g, 0) == ["7C 7D 7H 7S", "9C 9D 9H 9S"]
    assert table_text(g, 1) == ["QC QD QH QS", "5C 5D 5H"]
    g.validate()


def test_run_layoffs_at_both_ends_with_aces_low_and_high():
    g = new_game(
        {0: "JH QH KH AH 2D 3D 4D 5D TH AD 6D", 3: "2H 3C 4C 5C 6C 7C 8C 9C TC JC QC"},
        "9S",
        contracts=(3,),
    )
    play(g, "take; meld 0 JH; meld 0 QH; meld 0 KH; meld 0 AH^")
    play(g, "meld 1 2D; meld 1 3D; meld 1 4D; meld 1 5D; discard 9S")
    assert table_text(g, 0) == ["JH QH KH AH^", "2D 3D 4D 5D"]
    pass_turns(g, 2)
    play(g, "take; discard 2H")
    g.apply("take")  # player_0 takes 2H: it fits no run (a run never turns the corner)
    assert moves_of(g, MoveKind.LAYOFF) == {"layoff TH 0.0", "layoff AD 0.1", "layoff 6D 0.1"}
    play(g, "layoff TH 0.0; layoff 6D 0.1; layoff AD 0.1")
    assert table_text(g, 0) == ["TH JH QH KH AH^", "AD 2D 3D 4D 5D 6D"]
    g.apply("discard 2H")
    assert g.deal_results[0].out_player == 0


def test_joker_laid_off_is_declared_within_the_joker_limit():
    g = new_game({0: "7C 7D JK 9C 9D 9H JK 2C 4D 6S 8H"}, "KS", num_players=5)
    play(g, "take; meld 0 7C; meld 0 7D; meld 0 JK=7H; meld 1 9C; meld 1 9D; meld 1 9H; discard KS")
    pass_turns(g, 4)
    g.apply("take")
    jokers = {m for m in moves_of(g, MoveKind.LAYOFF) if "JK" in m}
    # the set of sevens already holds its one joker
    assert jokers == {"layoff JK=9C 0.1", "layoff JK=9D 0.1", "layoff JK=9H 0.1", "layoff JK=9S 0.1"}
    g.apply("layoff JK=9S 0.1")
    assert table_text(g, 0)[1] == "9C 9D 9H JK=9S"
    assert not any("JK" in m for m in moves_of(g, MoveKind.LAYOFF))  # no joker left in hand


def test_the_last_card_cannot_be_laid_off():
    g = new_game({0: "7C 7D 7H 9C 9D 9H 7S 9S 7C 9C 7H", 3: "9H 2C 3C 4C 5C 6C 8C TC JC QC KC"}, "KS")
    play(g, f"take; {GO_DOWN}; discard KS")
    pass_turns(g, 2)
    play(g, "take; discard 9H")
    g.apply("take")
    play(g, "layoff 7S 0.0; layoff 7C 0.0; layoff 7H 0.0; layoff 9S 0.1; layoff 9C 0.1")
    assert hand(g, 0) == ["9H"]
    assert names(g.legal_moves()) == {"discard 9H"}
    with pytest.raises(ValueError):
        g.apply("layoff 9H 0.1")
    g.apply("discard 9H")
    assert g.deal_results[0].out_player == 0
    assert g.deal_results[0].scores[0] == 0


# --- swapping jokers (docs/rules.md 5.3, option joker_swaps) --------------------------------------------

SWAP_HANDS = {
    0: "7C 7D JK 9C 9D 9H 2C 3D 4S 8C TD",
    1: "QC QD QH 5C 5D 5H 7H 3C 8D JD 6S",
    2: "7H AC 2D 4C 6C TC JC KC KD 4H 8S",
}
P0_DOWN_WITH_JOKER = "take; meld 0 7C; meld 0 7D; meld 0 JK=7H; meld 1 9C; meld 1 9D; meld 1 9H; discard KS"


def _swap_setup(**options) -> Game:
    g = new_game(SWAP_HANDS, "KS", **options)
    play(g, P0_DOWN_WITH_JOKER)
    g.apply("take")
    assert MoveKind.SWAP not in kinds(g)  # player_1 is not down
    play(g, "meld 0 QC; meld 0 QD; meld 0 QH; meld 1 5C; meld 1 5D; meld 1 5H")
    assert MoveKind.SWAP not in kinds(g)  # not on the turn of going down
    g.apply("discard KS")
    g.apply("take")
    assert MoveKind.SWAP not in kinds(g)  # player_2 holds 7H but is not down
    with pytest.raises(ValueError):
        g.apply("swap 7H 2.0")
    g.apply("discard KS")
    pass_turns(g, 2)
    g.apply("take")  # player_1's next turn
    return g


def test_swap_gives_the_natural_and_takes_the_joker():
    g = _swap_setup()
    assert moves_of(g, MoveKind.SWAP) == {"swap 7H 3.0"}
    g.apply("swap 7H 3.0")
    assert sorted(table_text(g, 0)[0].split()) == ["7C", "7D", "7H"]
    assert g.table[0][0].jokers == 0
    assert "JK" in hand(g, 1) and "7H" not in hand(g, 1)
    assert g.hand_sizes[1] == 6
    # the joker may be laid off at once, declared as a card that fits
    assert "layoff JK=QS 0.0" in moves_of(g, MoveKind.LAYOFF)
    g.apply("layoff JK=QS 0.0")
    assert table_text(g, 1)[0] == "QC QD QH JK=QS"
    g.validate()


def test_no_swaps_when_the_option_is_off():
    g = _swap_setup(joker_swaps=False)
    assert MoveKind.SWAP not in kinds(g)
    with pytest.raises(ValueError):
        g.apply("swap 7H 3.0")


def test_swap_from_a_run():
    g = new_game(
        {0: "KC KD KS 5H 6H JK 8H 2C 4D 9S TC", 1: "3C 3D 3H 9D TD JD QD 7H 4C 6S 8S"},
        "QC",
        contracts=(2,),
    )
    play(g, "take; meld 0 KC; meld 0 KD; meld 0 KS; meld 1 5H; meld 1 6H; meld 1 8H; meld 1 JK=7H")
    play(g, "discard QC")
    play(g, "take; meld 0 3C; meld 0 3D; meld 0 3H; meld 1 9D; meld 1 TD; meld 1 JD; meld 1 QD")
    play(g, "discard QC")
    pass_turns(g, 3)
    g.apply("take")
    assert "swap 7H 3.1" in moves_of(g, MoveKind.SWAP)
    g.apply("swap 7H 3.1")
    assert table_text(g, 0)[1] == "5H 6H 7H 8H"
    # the joker may be laid off at once, on an end of any run
    assert "layoff JK=8D 0.1" in moves_of(g, MoveKind.LAYOFF)
    assert "layoff JK=4H 3.1" in moves_of(g, MoveKind.LAYOFF)


# --- same-suit runs (option same_suit_run_gap) --------------------------------------------------


@pytest.mark.parametrize(
    ("hand_text", "gap", "can_go_down"),
    [
        ("3H 4H 5H 6H 8H 9H TH JH 2C 4D 6S", 1, True),
        ("3H 4H 5H 6H 7H 8H 9H TH 2C 4D 6S", 1, False),
        ("3H 4H 5H 6H 7H 8H 9H TH 2C 4D 6S", 0, True),
        ("3H 4H 5H 6H 8H 9H TH JH 2C 4D 6S", 2, False),
        ("3H 4H 5H 6H 9H TH JH QH 2C 4D 6S", 2, True),
    ],
)
def test_same_suit_run_gap(hand_text, gap, can_go_down):
    g = new_game({0: hand_text}, "KS", contracts=(3,), same_suit_run_gap=gap)
    g.apply("take")
    assert (MoveKind.MELD in kinds(g)) == can_go_down
    if can_go_down:
        play(g, "meld 0 3H; meld 0 4H; meld 0 5H; meld 0 6H")
        # the second run keeps at least `gap` ranks free above 6H
        ranks = {str_to_card(m.split()[2]) % 13 + 1 for m in moves_of(g, MoveKind.MELD)}
        assert ranks and min(ranks) >= 6 + gap + 1
