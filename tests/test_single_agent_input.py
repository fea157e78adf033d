"""SingleAgentEnv is as strict as the AEC env: actions, constructor arguments, reset options and
masks; a refused input changes nothing."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest
from helpers import deal_deck

import shanghai_env
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.render import render_text
from shanghai_env.rules import ALL_CONTRACTS
from shanghai_env.single_agent import SingleAgentEnv


def state_of(env: SingleAgentEnv) -> tuple[Any, ...]:
    """Everything a step could change, for before/after comparisons."""
    g = env.game
    return (
        env.encoder.encode(g, env.learner).tobytes(),
        env.action_masks().tobytes(),
        g.move_count,
        render_text(g),
        tuple(g.stock),
        g.to_act,
        env._steps,
        env._done,
        repr(env.np_random.bit_generator.state),
    )


def mid_game(seed: int = 3) -> SingleAgentEnv:
    env = SingleAgentEnv([GreedyBot() for _ in range(3)], contracts=(1, 2))
    env.reset(seed=seed)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    return env


BAD_ACTIONS = [
    (5.9, TypeError),
    (5.0, TypeError),
    (np.float64(3.0), TypeError),
    ("5", TypeError),
    (b"1", TypeError),
    (True, TypeError),
    (np.True_, TypeError),
    (None, TypeError),
    (math.nan, TypeError),
    ({}, TypeError),
    ({"action": 1}, TypeError),
    ([1, 2], TypeError),
    ((1,), TypeError),
    (np.array([1]), TypeError),
    (np.array([1.0]), TypeError),
    (np.array(3.0), TypeError),
    (-1, ValueError),
    (10**9, ValueError),
    (np.int64(-3), ValueError),
]


@pytest.mark.parametrize(("action", "error"), BAD_ACTIONS, ids=[repr(a) for a, _ in BAD_ACTIONS])
def test_bad_actions_are_refused_and_change_nothing(action: Any, error: type[Exception]) -> None:
    env = mid_game()
    before = state_of(env)
    with pytest.raises(error, match="action"):
        env.step(action)
    assert state_of(env) == before
    *_, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert not info["illegal_action"]


def test_first_element_of_an_array_is_not_an_action() -> None:
    env = mid_game()
    legal = int(np.flatnonzero(env.action_masks())[0])
    before = state_of(env)
    for action in ([legal, 999], np.array([legal, 999]), np.array([legal])):
        with pytest.raises(TypeError, match="one int"):
            env.step(action)
    assert state_of(env) == before


@pytest.mark.parametrize(
    "convert",
    [int, np.int64, np.int32, np.uint16, lambda a: np.array(a), lambda a: np.array(a, dtype=np.int16)],
)
def test_integer_actions_of_every_kind_play_alike(convert: Any) -> None:
    env = mid_game()
    twin = copy.deepcopy(env)
    legal = int(np.flatnonzero(env.action_masks())[-1])
    first = env.step(convert(legal))
    second = twin.step(legal)
    assert first[0].tobytes() == second[0].tobytes() and first[1:4] == second[1:4]
    assert state_of(env) == state_of(twin)


def test_mask_cannot_be_corrupted_and_legality_is_the_engines() -> None:
    env = mid_game()
    _, info = env.reset(seed=4)
    mask = info["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match="read-only"):
        mask[illegal] = 1
    with pytest.raises(ValueError):
        mask.flags.writeable = True
    copy_ = env.action_masks()  # a fresh copy: writing into it changes nothing in the env
    copy_[illegal] = True
    assert not env.action_masks()[illegal]
    # even if the env's own mask array were replaced, the engine decides what is legal
    env._mask = np.ones_like(env._mask)
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and info["illegal_action"] and reward == -1.0


def test_aec_masks_and_observations_are_read_only() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(1,))
    env.reset(seed=1)
    agent = env.agent_selection
    obs = env.observe(agent)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    for array in (obs["action_mask"], env.infos[agent]["action_mask"], obs["observation"]):
        with pytest.raises(ValueError, match="read-only"):
            array[illegal] = 1
    other = env.observe(env.possible_agents[(int(agent[-1]) + 1) % 4])["action_mask"]
    with pytest.raises(ValueError):
        other.flags.writeable = True
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)


# --- reset options ---------------------------------------------------------------------------


def test_reset_deck_and_dealer_as_the_aec_env() -> None:
    deck = deal_deck(4, 2, {0: "7C 7D 7H 9C 9D 9H 2S 3S 4S 5S 6S"}, "KH")
    env = SingleAgentEnv(contracts=(1,), learner_seat=0)
    _obs, info = env.reset(seed=5, options={"deck": deck, "dealer": np.int64(2)})
    aec = shanghai_env.raw_env(num_players=4, contracts=(1,))
    aec.reset(seed=5, options={"deck": deck, "dealer": 2})
    assert env.game.dealer == 2 and env.game.hands == aec.game.hands and env.game.stock == aec.game.stock
    assert "game_seed" not in info and env.game_seed == 5


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"deck": ["ZZ"]}, "bad reset arguments"),
        ({"deck": ["7H"] * 105}, "bad reset arguments"),
        ({"deck": "7H 8H"}, "bad reset arguments"),
        ({"dealer": 4}, "dealer"),
        ({"dealer": True}, "dealer"),
        ({"dealer": "0"}, "dealer"),
        ({"dealr": 1}, "deck.*dealer"),
        ({"deck": None, "seed": 3}, "deck.*dealer"),
        (["deck"], "options"),
    ],
)
def test_bad_reset_options_raise_and_change_nothing(options: Any, match: str) -> None:
    env = mid_game()
    before = state_of(env)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=1, options=options)
    assert state_of(env) == before
    env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_bad_seed_raises_and_changes_nothing() -> None:
    env = mid_game()
    before = state_of(env)
    for seed in (-1, 2.5, "3"):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)  # type: ignore[arg-type]
    assert state_of(env) == before


# --- constructor -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        ({"learner_seat": True}, TypeError, "learner_seat"),
        ({"learner_seat": 1.0}, TypeError, "learner_seat"),
        ({"learner_seat": 4}, ValueError, "learner_seat"),
        ({"learner_seat": -1}, ValueError, "learner_seat"),
        ({"max_moves_per_deal": 1.5}, TypeError, "max_moves_per_deal"),
        ({"max_moves_per_deal": 0}, ValueError, "max_moves_per_deal"),
        ({"max_moves_per_deal": "10"}, TypeError, "max_moves_per_deal"),
        ({"max_steps": 0}, ValueError, "max_steps"),
        ({"max_steps": 2.0}, TypeError, "max_steps"),
        ({"gamma": math.nan}, ValueError, "gamma"),
        ({"gamma": 1.5}, ValueError, "gamma"),
        ({"gamma": -0.1}, ValueError, "gamma"),
        ({"gamma": "0.9"}, TypeError, "gamma"),
        ({"gamma": True}, TypeError, "gamma"),
        ({"illegal_reward": math.inf}, ValueError, "illegal_reward"),
        ({"illegal_reward": None}, TypeError, "illegal_reward"),
        ({"contracts": "1"}, TypeError, "contracts"),
        ({"contracts": (11,)}, ValueError, "contracts"),
        ({"contracts": 1.0}, TypeError, "contracts"),
        ({"num_players": 2}, ValueError, "players"),
        ({"num_players": 4.0}, TypeError, "num_players"),
        ({"reward": 1}, TypeError, "reward"),
        ({"reward": "points"}, ValueError, "reward"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
        ({"render_mode": 0}, TypeError, "render_mode"),
        ({"potential": 5}, TypeError, "potential"),
        ({"opponents": 5}, TypeError, "opponents"),
        ({"opponents": "greedy"}, TypeError, "opponents"),
        ({"opponents": [1, 2, 3]}, TypeError, "opponents"),
        ({"opponents": [GreedyBot()]}, ValueError, "opponents"),
        ({"joker_points": -1}, ValueError, "joker_points"),
        ({"joker_swaps": 1}, TypeError, "joker_swaps"),
        ({"max_stock_rebuilds": 1.0}, TypeError, "max_stock_rebuilds"),
        ({"jokers": 2}, TypeError, "jokers.*joker_points"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict[str, Any], error: type[Exception], named: str) -> None:
    with pytest.raises(error, match=named):
        SingleAgentEnv(**kwargs)


def test_numpy_scalars_and_a_single_contract_are_accepted() -> None:
    env = SingleAgentEnv(
        num_players=np.int64(3),
        contracts=5,
        learner_seat=np.int32(2),
        max_moves_per_deal=np.int16(100),
        max_steps=np.uint8(7),
        gamma=np.float32(0.5),
        illegal_reward=np.int64(-2),
        joker_points=np.int8(25),
        max_stock_rebuilds=None,
    )
    assert env.rules.contracts == (5,) == shanghai_env.raw_env(contracts=5).rules.contracts
    assert (env.fixed_seat, env.max_moves_per_deal, env.max_steps) == (2, 100, 7)
    assert (env.gamma, env.illegal_reward) == (0.5, -2.0) and type(env.fixed_seat) is int
    assert env.rules.max_stock_rebuilds is None and env.rules.joker_points == 25
    _obs, info = env.reset(seed=0)
    assert info["learner_seat"] == 2


def test_defaults_match_the_aec_env() -> None:
    single = SingleAgentEnv()
    aec = shanghai_env.raw_env()
    assert single.rules == aec.rules and single.rules.contracts == ALL_CONTRACTS
    assert single.observation_space.shape == aec.observation_space("player_0")["observation"].shape
    assert single.action_space.n == aec.action_space("player_0").n
    assert single.max_moves_per_deal == aec.max_moves_per_deal
