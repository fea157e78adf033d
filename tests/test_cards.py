"""Card and move notation, decks and points (docs/rules.md sections 1 and 6, and the notation line)."""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import points

from shanghai_env.actions import ActionTable
from shanghai_env.cards import (
    JOKER,
    card_points,
    card_to_str,
    counts_of,
    deck_counts,
    decks_for,
    format_cards,
    full_deck,
    hand_points,
    parse_cards,
    place_card,
    place_to_str,
    str_to_card,
    str_to_place,
)
from shanghai_env.moves import Move, MoveKind, parse_move
from shanghai_env.rules import Rules

ALL_CARD_TEXTS = [r + s for s in "CDHS" for r in "A23456789TJQK"]

# --- card notation ------------------------------------------------------------------------


def test_card_ids_follow_suit_times_13_plus_rank():
    assert str_to_card("AC") == 0
    assert str_to_card("2C") == 1
    assert str_to_card("KC") == 12
    assert str_to_card("AD") == 13
    assert str_to_card("7H") == 2 * 13 + 6
    assert str_to_card("TS") == 3 * 13 + 9
    assert str_to_card("KS") == 51
    assert str_to_card("JK") == JOKER == 52


@pytest.mark.parametrize("text", [*ALL_CARD_TEXTS, "JK"])
def test_card_text_round_trip(text):
    card = str_to_card(text)
    assert card_to_str(card) == text
    assert str_to_card(card_to_str(card)) == card


def test_all_53_card_kinds_have_distinct_texts():
    texts = [card_to_str(c) for c in range(53)]
    assert len(set(texts)) == 53
    assert texts[-1] == "JK"


@pytest.mark.parametrize(("text", "expected"), [("7h", "7H"), (" ts ", "TS"), ("jk", "JK"), ("10H", "TH")])
def test_card_text_is_lenient_about_case_spaces_and_10(text, expected):
    assert card_to_str(str_to_card(text)) == expected


@pytest.mark.parametrize("text", ["", "7", "H7", "1H", "7X", "ZZ", "JK7", "11H", "7HH", "J K", "JO"])
def test_unknown_card_text_is_a_value_error(text):
    with pytest.raises(ValueError, match="card"):
        str_to_card(text)


@pytest.mark.parametrize("value", [7, None, 7.0, b"7H"])
def test_card_text_must_be_a_string(value):
    with pytest.raises(TypeError):
        str_to_card(value)


@pytest.mark.parametrize("card", [-1, 53, 100])
def test_card_id_out_of_range_has_no_text(card):
    with pytest.raises(ValueError, match=r"0\.\.52"):
        card_to_str(card)


def test_parse_and_format_card_lists():
    ids = parse_cards("7H 8H JK")
    assert ids == [str_to_card("7H"), str_to_card("8H"), JOKER]
    assert format_cards(ids) == "7H 8H JK"
    assert parse_cards(["AS", "2s"]) == [39, 40]
    assert parse_cards("") == []
    with pytest.raises(ValueError):
        parse_cards("7H 8X")


# --- places: a high ace is written with a caret -----------------------------------------------


def test_places_round_trip_and_high_aces():
    for place in range(56):
        assert str_to_place(place_to_str(place)) == place
    assert str_to_place("AC^") == 52
    assert str_to_place("AD^") == 53
    assert str_to_place("AH^") == 54
    assert str_to_place("AS^") == 55
    assert place_to_str(54) == "AH^"
    assert str_to_place("AH") == str_to_card("AH")  # a plain ace is its low place
    assert place_card(str_to_place("AH^")) == str_to_card("AH")
    assert place_card(str_to_place("7H")) == str_to_card("7H")


@pytest.mark.parametrize("text", ["7H^", "KS^", "JK^", "JK", "A^", "XH^"])
def test_bad_places(text):
    with pytest.raises(ValueError):
        str_to_place(text)


# --- decks (docs/rules.md section 1) ------------------------------------------------------------


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
def test_deck_composition(num_players):
    decks, jokers, size = (2, 1, 105) if num_players <= 4 else (3, 2, 158)
    assert decks_for(num_players) == (decks, jokers)
    deck = full_deck(num_players)
    assert len(deck) == size
    counts = Counter(deck)
    assert counts[JOKER] == jokers
    assert all(counts[c] == decks for c in range(52))
    assert set(counts) == set(range(53))
    assert deck_counts(num_players) == [decks] * 52 + [jokers]


@pytest.mark.parametrize("num_players", [0, 1, 2, 9, 10, -4])
def test_deck_for_a_bad_player_count_is_an_error(num_players):
    with pytest.raises(ValueError, match="num_players"):
        decks_for(num_players)


@pytest.mark.parametrize("num_players", ["4", 4.0, True, None])
def test_deck_player_count_must_be_an_int(num_players):
    with pytest.raises(TypeError, match="num_players"):
        decks_for(num_players)


# --- points (docs/rules.md section 6) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "value"),
    [("A", 20), ("2", 20)] + [(r, 5) for r in "3456789"] + [(r, 10) for r in "TJQK"],
)
def test_points_table(rank, value):
    for suit in "CDHS":
        assert card_points(str_to_card(rank + suit)) == value


def test_joker_points_default_and_option():
    assert card_points(JOKER) == 50
    assert card_points(JOKER, joker_points=0) == 0
    assert card_points(JOKER, joker_points=25) == 25
    assert card_points(str_to_card("KS"), joker_points=0) == 10


def test_hand_points():
    hand = counts_of(parse_cards("AC 2D 3H 9S TC KD JK JK 7H 7H"))
    assert hand_points(hand) == 20 + 20 + 5 + 5 + 10 + 10 + 50 + 50 + 5 + 5
    assert hand_points(hand, joker_points=10) == 20 + 20 + 5 + 5 + 10 + 10 + 10 + 10 + 5 + 5
    assert hand_points(counts_of([])) == 0
    assert points("AC 2D 3H 9S TC KD JK JK 7H 7H") == hand_points(hand)


# --- move names ------------------------------------------------------------------------------

MOVE_NAMES = [
    "take",
    "draw",
    "buy",
    "pass",
    "finish",
    "discard 7H",
    "discard JK",
    "discard AC",
    "meld 0 7H",
    "meld 2 AH^",
    "meld 1 JK=7H",
    "meld 3 JK=AS^",
    "layoff 7H 1.0",
    "layoff JK=QS 0.2",
    "layoff AD^ 3.1",
    "swap 7H 1.0",
    "swap AC^ 2.1",
    "swap KS 0.0",
]


@pytest.mark.parametrize("name", MOVE_NAMES)
def test_move_name_round_trip(name):
    move = parse_move(name)
    assert move.name == name
    assert str(move) == name
    assert parse_move(move.name) == move


def test_move_fields():
    assert parse_move("discard 7H") == Move(MoveKind.DISCARD, str_to_card("7H"))
    move = parse_move("meld 1 JK=7H")
    assert (move.kind, move.card, move.place, move.meld) == (MoveKind.MELD, JOKER, str_to_card("7H"), 1)
    move = parse_move("layoff AH^ 2.1")
    assert (move.kind, move.card, move.place, move.seat, move.meld) == (
        MoveKind.LAYOFF,
        str_to_card("AH"),
        str_to_place("AH^"),
        2,
        1,
    )
    move = parse_move("swap 9C 3.0")
    assert (move.kind, move.card, move.place, move.seat, move.meld) == (MoveKind.SWAP, 8, 8, 3, 0)
    assert parse_move("  TAKE ") == parse_move("take")


@pytest.mark.parametrize(
    "name",
    [
        "",
        "jump",
        "take 7H",
        "discard",
        "discard 7X",
        "discard 7H 8H",
        "meld 7H",
        "meld x 7H",
        "meld 0 JK",
        "meld 0 JK=JK",
        "meld 0 7H^",
        "layoff 7H",
        "layoff 7H 1",
        "layoff 7H a.b",
        "layoff 7H 1.0.0",
        "swap JK 1.0",
        "swap 7H",
    ],
)
def test_bad_move_names_are_value_errors(name):
    with pytest.raises(ValueError):
        parse_move(name)


def test_move_name_must_be_text():
    with pytest.raises(TypeError):
        parse_move(3)


@pytest.mark.parametrize("num_players", [3, 4, 8])
def test_action_table_round_trips_every_action(num_players):
    table = ActionTable(Rules(num_players=num_players))
    seen = set()
    for action in range(len(table)):
        move = table.decode(action)
        assert table.encode(move) == action
        assert table.action_id(move.name) == action
        seen.add(move)
    assert len(seen) == len(table)
    with pytest.raises(ValueError):
        table.decode(len(table))
    with pytest.raises(ValueError):
        table.decode(-1)
