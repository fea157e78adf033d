"""Configuration options and their errors, stacked-deck checks and illegal moves (docs/rules.md 1, 3, 7)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import QUICK_SCRIPT, play, quick_game, snapshot, stacked_deck

from shanghai_env import Game, Rules
from shanghai_env.moves import Move, MoveKind
from shanghai_env.render import render_text

# --- defaults ---------------------------------------------------------------------------------


def test_defaults_are_the_game():
    rules = Rules()
    assert rules.num_players == 4
    assert rules.contracts == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    assert rules.joker_points == 50
    assert rules.down_players_may_buy is True
    assert rules.exact_contract_melds is True
    assert rules.same_suit_run_gap == 1
    assert rules.joker_swaps is True
    assert Game().rules == rules


def test_options_as_keywords_or_a_rules_object():
    g = Game(num_players=6, contracts=(3, 1), joker_points=0, joker_swaps=False)
    assert (g.rules.num_players, g.rules.contracts, g.rules.joker_points) == (6, (3, 1), 0)
    assert g.num_players == 6 and len(g.hands) == 6
    g2 = Game(Rules(num_players=3, same_suit_run_gap=2))
    assert g2.rules.same_suit_run_gap == 2 and g2.num_players == 3
    with pytest.raises(ValueError):
        Game(Rules(), num_players=4)
    with pytest.raises(TypeError):
        Game("rules")  # type: ignore[arg-type]


def test_contracts_may_be_any_list_of_contract_numbers():
    g = Game(contracts=[7, 7, 2])
    assert g.rules.contracts == (7, 7, 2)
    g.reset(seed=1)
    assert g.contract == 7 and [s.size for s in g.specs] == [4, 4, 4]


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
def test_every_player_count_deals(num_players):
    g = Game(num_players=num_players)
    g.reset(seed=num_players)
    size = 105 if num_players <= 4 else 158
    assert sum(g.hand_sizes) == 11 * num_players
    assert len(g.stock) + len(g.discard) + sum(g.hand_sizes) == size
    g.validate()


# --- out-of-range options ---------------------------------------------------------------------------

BAD_OPTIONS = [
    ({"num_players": 2}, ValueError, "num_players"),
    ({"num_players": 9}, ValueError, "num_players"),
    ({"num_players": 0}, ValueError, "num_players"),
    ({"num_players": 4.0}, TypeError, "num_players"),
    ({"num_players": "4"}, TypeError, "num_players"),
    ({"num_players": True}, TypeError, "num_players"),
    ({"contracts": (11,)}, ValueError, "contracts"),
    ({"contracts": (0,)}, ValueError, "contracts"),
    ({"contracts": ()}, ValueError, "contracts"),
    ({"contracts": (1, 2, 13)}, ValueError, "contracts"),
    ({"contracts": (1.0,)}, TypeError, "contracts"),
    ({"contracts": (True,)}, TypeError, "contracts"),
    ({"contracts": "123"}, TypeError, "contracts"),
    ({"contracts": None}, TypeError, "contracts"),
    ({"joker_points": -1}, ValueError, "joker_points"),
    ({"joker_points": 2.5}, TypeError, "joker_points"),
    ({"joker_points": "50"}, TypeError, "joker_points"),
    ({"joker_points": True}, TypeError, "joker_points"),
    ({"same_suit_run_gap": -1}, ValueError, "same_suit_run_gap"),
    ({"same_suit_run_gap": 13}, ValueError, "same_suit_run_gap"),
    ({"same_suit_run_gap": 1.5}, TypeError, "same_suit_run_gap"),
    ({"max_stock_rebuilds": -1}, ValueError, "max_stock_rebuilds"),
    ({"max_stock_rebuilds": 1.0}, TypeError, "max_stock_rebuilds"),
    ({"max_stock_rebuilds": True}, TypeError, "max_stock_rebuilds"),
    ({"max_stock_rebuilds": "1"}, TypeError, "max_stock_rebuilds"),
    ({"down_players_may_buy": 1}, TypeError, "down_players_may_buy"),
    ({"down_players_may_buy": "yes"}, TypeError, "down_players_may_buy"),
    ({"exact_contract_melds": None}, TypeError, "exact_contract_melds"),
    ({"exact_contract_melds": 0}, TypeError, "exact_contract_melds"),
    ({"joker_swaps": "False"}, TypeError, "joker_swaps"),
]


@pytest.mark.parametrize(("options", "error", "name"), BAD_OPTIONS)
def test_option_out_of_range_is_an_error_naming_the_option(options, error, name):
    with pytest.raises(error, match=name):
        Game(**options)
    with pytest.raises(error, match=name):
        Rules(**options)


@pytest.mark.parametrize(
    ("options", "allowed"),
    [
        ({"num_players": 9}, "3..8"),
        ({"contracts": (11,)}, "1..10"),
        ({"same_suit_run_gap": 13}, "0..12"),
        ({"joker_points": -5}, ">= 0"),
    ],
)
def test_error_message_says_what_is_allowed(options, allowed):
    with pytest.raises(ValueError) as err:
        Game(**options)
    assert allowed in str(err.value)


def test_unknown_option_is_an_error():
    with pytest.raises(ValueError, match="jokers_points"):
        Game(jokers_points=10)


@pytest.mark.parametrize(("kwargs", "name"), [({"seed": -1}, "seed"), ({"seed": 1.5}, "seed")])
def test_bad_seed(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Game().reset(**kwargs)


@pytest.mark.parametrize("dealer", [-1, 4, 10, "0", 1.0])
def test_bad_dealer(dealer):
    with pytest.raises(ValueError, match="dealer"):
        Game().reset(seed=1, dealer=dealer)


# --- stacked decks -----------------------------------------------------------------------------------


def test_a_stacked_deck_must_be_the_full_multiset():
    good = stacked_deck(4, [])
    Game().reset(deck=good, dealer=0)
    with pytest.raises(ValueError, match="105"):
        Game().reset(deck=good[:-1], dealer=0)  # a card missing
    with pytest.raises(ValueError, match="105"):
        Game().reset(deck=[*good, "7H"], dealer=0)  # a card too many
    wrong = list(good)
    wrong[wrong.index("KS")] = "AC"  # three aces of clubs, one king of spades
    with pytest.raises(ValueError, match="AC") as err:
        Game().reset(deck=wrong, dealer=0)
    assert "KS" in str(err.value)
    with pytest.raises(ValueError, match="JK"):
        Game().reset(deck=[*good[:-2], "JK", "JK"], dealer=0)  # 2 jokers in a 4-player deck
    with pytest.raises(ValueError, match="158"):
        Game(num_players=5).reset(deck=good, dealer=0)  # a 4-player deck for 5 players
    Game(num_players=5).reset(deck=stacked_deck(5, []), dealer=0)


@pytest.mark.parametrize("bad", ["1X", "", "11H", "JJ", "7HH"])
def test_a_stacked_deck_with_an_unknown_card(bad):
    deck = stacked_deck(4, [])
    deck[10] = bad
    with pytest.raises(ValueError, match="card"):
        Game().reset(deck=deck, dealer=0)


def test_a_stacked_deck_is_a_list():
    with pytest.raises(TypeError):
        Game().reset(deck=" ".join(stacked_deck(4, [])), dealer=0)


def test_a_failed_reset_keeps_the_game():
    g = quick_game()
    before = snapshot(g)
    with pytest.raises(ValueError):
        g.reset(deck=stacked_deck(4, [])[:-1], dealer=0)
    assert snapshot(g) == before


# --- illegal moves raise ValueError and change nothing -----------------------------------------------


def _states_along_the_quick_deal() -> list[Game]:
    g = quick_game(contracts=(1, 1))
    states = [g.clone()]
    for step in [s.strip() for line in QUICK_SCRIPT.splitlines() for s in line.split(";") if s.strip()]:
        g.apply(step)
        states.append(g.clone())
    return states


ILLEGAL_EVERYWHERE = [
    "finish",  # only with exact_contract_melds false
    "discard 5H",
    "meld 2 7C",  # contract 1 has melds 0 and 1
    "layoff 7S 1.0",  # player_1 is never down
    "swap 7H 0.0",  # there is no joker on the table
    "layoff KS 0.5",
    "meld 0 JK=7S",  # nobody holds a joker
]


def test_illegal_moves_raise_and_leave_the_state_unchanged():
    checked = 0
    for g in _states_along_the_quick_deal():
        legal = {str(m) for m in g.legal_moves()}
        candidates = [*ILLEGAL_EVERYWHERE, "take", "draw", "buy", "pass", "discard 7C", "meld 0 9C"]
        for name in candidates:
            if name in legal:
                continue
            before = snapshot(g)
            copy = g.clone()
            with pytest.raises(ValueError):
                g.apply(name)
            assert snapshot(g) == before
            assert snapshot(copy) == before
            g.validate()
            checked += 1
    assert checked > 150


@pytest.mark.parametrize(
    "name", ["", "fly", "discard", "discard 7X", "layoff 7H", "meld x 7H", "swap JK 1.0"]
)
def test_unreadable_moves_are_value_errors(name):
    g = quick_game()
    before = snapshot(g)
    with pytest.raises(ValueError):
        g.apply(name)
    assert snapshot(g) == before


def test_a_move_must_be_a_move_or_a_name():
    g = quick_game()
    with pytest.raises(TypeError):
        g.apply(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        g.apply(Move(MoveKind.DISCARD, 60))


def test_moves_by_name_and_by_value_agree():
    a, b = quick_game(), quick_game()
    for step in ["draw", "pass", "pass", "pass", "meld 0 7C"]:
        a.apply(step)
        b.apply(next(m for m in b.legal_moves() if str(m) == step))
    assert snapshot(a) == snapshot(b)


def test_clone_is_independent():
    g = quick_game()
    copy = g.clone()
    before = snapshot(copy)
    play(g, QUICK_SCRIPT)
    assert snapshot(copy) == before
    play(copy, QUICK_SCRIPT)
    assert snapshot(copy) == snapshot(g)


# --- what a player may see ------------------------------------------------------------------------


def test_a_player_view_holds_only_public_information_and_the_own_hand():
    g = quick_game()
    play(g, "draw; pass; pass; pass; meld 0 7C; meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D; meld 1 9H")
    view = g.view(2)
    assert view.hand == tuple(g.hands[2])
    assert view.hand_sizes == tuple(g.hand_sizes)
    assert view.stock_size == len(g.stock)
    assert view.legal_moves == ()  # player_0 is to act
    assert g.view(0).legal_moves == tuple(g.legal_moves())
    values = [getattr(view, f) for f in view.__dataclass_fields__]
    for other in (0, 1, 3):
        assert tuple(g.hands[other]) not in values
    assert tuple(g.stock) not in values and list(g.stock) not in values
    assert [m.text() for m in view.table[0]] == ["7C 7D 7H", "9C 9D 9H"]
    view.table[0][0].add(51, 51)  # the view holds copies
    assert g.table[0][0].text() == "7C 7D 7H"
    with pytest.raises(ValueError, match="player"):
        g.view(4)


def test_render_shows_the_table():
    g = quick_game()
    play(g, "draw; pass; pass; pass; meld 0 7C; meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D; meld 1 9H")
    text = render_text(g)
    assert "meld 0 (set of 3): 7C 7D 7H" in text
    assert "upcard KS" in text
    assert "contract 1" in text
    assert "7S 9C 9S" in text  # player_0's hand, by rank
    assert "7S 9C 9S" not in render_text(g, show_hands=False)


def test_numpy_scalars_are_accepted_as_python_values():
    rules = Rules(
        num_players=np.int64(5),
        contracts=np.array([1, 2], dtype=np.int32),
        joker_points=np.int16(25),
        same_suit_run_gap=np.int8(0),
        down_players_may_buy=np.bool_(False),
        max_stock_rebuilds=np.int64(2),
    )
    assert rules == Rules(
        num_players=5,
        contracts=(1, 2),
        joker_points=25,
        same_suit_run_gap=0,
        down_players_may_buy=False,
        max_stock_rebuilds=2,
    )
    assert type(rules.num_players) is int and type(rules.down_players_may_buy) is bool
    assert all(type(c) is int for c in rules.contracts)


def test_max_stock_rebuilds_defaults_to_one_and_allows_none():
    assert Rules().max_stock_rebuilds == 1
    assert Rules(max_stock_rebuilds=None).max_stock_rebuilds is None
    assert Rules(max_stock_rebuilds=0).max_stock_rebuilds == 0
