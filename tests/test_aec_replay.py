"""Stacked-deck deals replayed through the env by action names, with exact scores and rewards.

Three players, dealer player_2, so player_0 gets deck cards 0, 3, 6, ...; card 33 is the
upcard and the stock follows, top first (docs/rules.md section 3).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import shanghai_env
from shanghai_env.cards import format_cards, full_deck, str_to_card

PLAYERS = 3


def stacked_deck(hands: list[str], upcard: str, stock_top: str) -> list[str]:
    """Deal ``hands`` (11 cards each), then the upcard, then ``stock_top``, then the rest."""
    cards = [h.split() for h in hands]
    assert all(len(h) == 11 for h in cards)
    deck = [cards[i % PLAYERS][i // PLAYERS] for i in range(11 * PLAYERS)]
    deck += [upcard, *stock_top.split()]
    rest = Counter(format_cards(full_deck(PLAYERS)).split())
    rest.subtract(deck)
    assert min(rest.values()) >= 0, "a card is used more often than the deck holds it"
    return deck + sorted(rest.elements())


def replay(env, script: list[tuple[str, str]]) -> None:
    for agent, name in script:
        assert env.agent_selection == agent, f"expected {agent} to act for {name!r}"
        obs = env.observe(agent)
        action = env.unwrapped.action_id(name)
        assert obs["action_mask"][action] == 1, f"{name!r} is not legal for {agent}"
        assert env.unwrapped.action_name(action) == name
        env.step(action)


def final_rewards(env) -> dict[str, float]:
    """Each agent's reward as seen through last() once the game is over."""
    seen = {}
    for agent in env.agent_iter():
        _obs, reward, terminated, _truncated, _info = env.last()
        assert terminated
        seen[agent] = reward
        env.step(None)
    return seen


P0, P1, P2 = "player_0", "player_1", "player_2"
HANDS = [
    "7C 7D 7H 8C 8D 8H 7S 8S 7C 8C KS",  # player_0: two sets, and more 7s and 8s to lay off
    "2C 3D 4H 5S 9C TD JH QS KC AD 6H",  # player_1: 105 points
    "2D 3H 4S 5C 9D TH JS QC KD AH JK",  # player_2: 150 points
]
# stock, top first: player_1's penalty card, then each draw in turn order
STOCK = "QH 2S 3C 4D 5H 6C 9S 7D"
SCRIPT = [
    (P0, "draw"),  # declines the upcard 9H ...
    (P1, "buy"),  # ... player_1 buys it, with QH as the penalty card
    (P0, "meld 0 7C"),  # player_0 drew 2S; goes down with exactly the contract
    (P0, "meld 0 7D"),
    (P0, "meld 0 7H"),
    (P0, "meld 1 8C"),
    (P0, "meld 1 8D"),
    (P0, "meld 1 8H"),
    (P0, "discard KS"),
    (P1, "draw"),  # player_0 discarded KS and is not asked; player_2 passes
    (P2, "pass"),
    (P1, "discard 3C"),
    (P2, "draw"),
    (P0, "pass"),
    (P2, "discard 4D"),
    (P0, "draw"),
    (P1, "pass"),
    (P0, "layoff 7S 0.0"),  # draws 5H; lays off onto its own melds
    (P0, "layoff 8S 0.1"),
    (P0, "layoff 7C 0.0"),
    (P0, "layoff 8C 0.1"),
    (P0, "discard 5H"),
    (P1, "draw"),
    (P2, "pass"),
    (P1, "discard 6C"),
    (P2, "draw"),
    (P0, "pass"),
    (P2, "discard 9S"),
    (P0, "draw"),
    (P1, "pass"),
    (P0, "layoff 7D 0.0"),  # draws 7D, lays it off, and goes out with the last card
    (P0, "discard 2S"),
]


@pytest.mark.parametrize("wrapped", [True, False])
def test_stacked_deal_with_buy_and_layoffs(wrapped: bool) -> None:
    make = shanghai_env.env if wrapped else shanghai_env.raw_env
    env = make(num_players=PLAYERS, contracts=(1,))
    env.reset(seed=0, options={"deck": stacked_deck(HANDS, "9H", STOCK), "dealer": 2})
    replay(env, SCRIPT[:2])
    raw = env.unwrapped
    # everyone saw player_1 take the 9H: player_0 observes it at relative seat 1
    obs = raw.observe(P0)["observation"]
    picked = raw.encoder.slices["picked_up"]
    assert obs[picked][53 + str_to_card("9H")] == 1
    replay(env, SCRIPT[2:])
    game = raw.game
    assert game.game_over
    result = game.deal_results[0]
    assert (result.out_player, result.blind) == (0, False)
    assert result.scores == (0, 120, 150)  # player_1: 105 + 9H 5 + QH 10
    assert game.scores == [0, 120, 150]
    assert raw.infos[P1]["deal_scores"] == (0, 120, 150)
    assert raw.infos[P1]["winners"] == (1, 0, 0)  # one 0/1 per seat: player_0 won
    assert final_rewards(env) == {P0: 0.0, P1: pytest.approx(-1.2), P2: pytest.approx(-1.5)}


@pytest.mark.parametrize(
    ("joker", "bonus"),
    [(False, -50), (True, -25)],
)
def test_stacked_deal_going_out_blind(joker: bool, bonus: int) -> None:
    hands = [
        "7C 7D 7H 7S 7C 7D 8C 8D 8H 8S " + ("JK" if joker else "8C"),
        "2C 3D 4H 5S 9C TD JH QS KC AD 6H",
        "2D 3H 4S 5C 9D TH JS QC KD AH " + ("8C" if joker else "JK"),
    ]
    env = shanghai_env.env(num_players=PLAYERS, contracts=(1,), exact_contract_melds=False)
    env.reset(seed=0, options={"deck": stacked_deck(hands, "9H", "8D"), "dealer": 2})
    script = [(P0, "take")]  # takes 9H: 12 cards, all but 9H go into two long sets
    script += [(P0, f"meld 0 {c}") for c in ["7C", "7D", "7H", "7S", "7C", "7D"]]
    script += [(P0, f"meld 1 {c}") for c in ("8C 8D 8H 8S " + ("JK=8C" if joker else "8C")).split()]
    script += [(P0, "finish"), (P0, "discard 9H")]
    replay(env, script)
    game = env.unwrapped.game
    result = game.deal_results[0]
    assert (result.out_player, result.blind) == (0, True)
    p2_points = 20 + 5 + 5 + 5 + 5 + 10 + 10 + 10 + 10 + 20 + (5 if joker else 50)
    assert result.scores == (bonus, 105, p2_points)
    assert final_rewards(env) == {
        P0: pytest.approx(-bonus / 100),
        P1: pytest.approx(-1.05),
        P2: pytest.approx(-p2_points / 100),
    }


def test_stacked_deck_replays_identically() -> None:
    deck = stacked_deck(HANDS, "9H", STOCK)
    first = shanghai_env.raw_env(num_players=PLAYERS, contracts=(1, 2))
    second = shanghai_env.raw_env(num_players=PLAYERS, contracts=(1, 2))
    first.reset(seed=7, options={"deck": deck, "dealer": 2})
    second.reset(seed=7, options={"deck": deck, "dealer": 2})
    replay(first, SCRIPT)
    replay(second, SCRIPT)
    # the second deal comes from the seed: the same in both
    assert first.game.hands == second.game.hands
    assert np.array_equal(first.state(), second.state())
    assert first.game.dealer == 0 and first.agent_selection == P1
