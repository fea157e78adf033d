"""Conformance and behaviour of the PettingZoo AEC env: PettingZoo's own tests, pickling, the
registry, reset options, illegal actions, rewards, episode ends and infos."""

from __future__ import annotations

import pickle
import random
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import shanghai_env
from shanghai_env.aec import DEAL_REWARD_SCALE
from shanghai_env.engine import DEFAULT_MAX_MOVES_PER_DEAL

PLAYER_COUNTS = (3, 4, 6, 8)


def random_action(env, agent: str, rng: random.Random) -> int | None:
    obs, _reward, terminated, truncated, _info = env.last()
    if terminated or truncated:
        return None
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.randrange(len(legal))])


# --- PettingZoo's conformance tests -----------------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_api_all_contracts(players: int) -> None:
    api_test(shanghai_env.env(num_players=players), num_cycles=1000)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_api_to_game_end_and_truncation(players: int) -> None:
    # single-deal games end or hit the cap inside the cycles: the test sees agents leave
    api_test(shanghai_env.env(num_players=players, contracts=(1,), max_steps=400), num_cycles=1000)
    api_test(shanghai_env.raw_env(num_players=players, contracts=(4,), reward="win"), num_cycles=1000)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_seed(players: int) -> None:
    seed_test(lambda: shanghai_env.env(num_players=players, contracts=(1, 2)), num_cycles=300)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_render(players: int, capsys: pytest.CaptureFixture[str]) -> None:
    def make(render_mode: str | None = None):
        return shanghai_env.env(num_players=players, contracts=(1,), render_mode=render_mode)

    render_test(make, custom_tests={"ansi": lambda text: "player_0" in text and "Deal 1/1" in text})
    assert "contract 1" in capsys.readouterr().out  # "human" printed the table


def test_render_without_mode_warns_and_returns_none() -> None:
    env = shanghai_env.raw_env()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


def test_metadata_and_agents() -> None:
    env = shanghai_env.raw_env(num_players=6)
    assert env.metadata["name"] == "shanghai_v0"
    assert set(env.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert env.metadata["is_parallelizable"] is False
    assert env.possible_agents == [f"player_{i}" for i in range(6)]
    assert str(env) == "shanghai_v0"


def test_documented_sizes() -> None:
    doc = shanghai_env.aec.__doc__ or ""
    for players, n_actions, obs_len in ((4, 3194, 2293), (8, 5882, 4333)):
        env = shanghai_env.raw_env(num_players=players)
        assert env.action_space("player_0").n == n_actions
        assert env.observation_space("player_0")["observation"].shape == (obs_len,)
        assert env.observation_space("player_0")["action_mask"].shape == (n_actions,)
        assert str(n_actions) in doc and str(obs_len) in doc


# --- pickling and the registry -------------------------------------------------------------


def play_trace(env, seed: int, steps: int) -> list[tuple[str, bytes, float]]:
    rng = random.Random(seed)
    env.reset(seed=seed)
    trace = []
    for agent in env.agent_iter(steps):
        obs, reward, *_ = env.last()
        trace.append((agent, obs["observation"].tobytes(), reward))
        env.step(random_action(env, agent, rng))
    return trace


@pytest.mark.parametrize("make", [shanghai_env.env, shanghai_env.raw_env])
def test_pickle_round_trip(make) -> None:
    options = {"num_players": 5, "contracts": (2, 9), "reward": "win", "max_steps": 800, "joker_points": 25}
    env = make(**options)
    env.reset(seed=3)
    copy = pickle.loads(pickle.dumps(env))
    raw = copy.unwrapped
    assert raw.rules == env.unwrapped.rules and raw.rules.joker_points == 25
    assert (raw.reward_mode, raw.max_steps) == ("win", 800)
    assert play_trace(copy, 11, 600) == play_trace(make(**options), 11, 600)


@pytest.mark.skipif(not hasattr(pettingzoo, "register"), reason="PettingZoo's registry came with 1.27")
def test_pettingzoo_make() -> None:
    env = pettingzoo.make("aec", "shanghai/Shanghai-v0", num_players=3, contracts=(1,))
    assert isinstance(env, pettingzoo.AECEnv)
    assert isinstance(env.unwrapped, shanghai_env.raw_env)
    assert env.unwrapped.rules.num_players == 3
    env.reset(seed=1)
    assert env.agent_selection in env.possible_agents
    latest = pettingzoo.make("aec", "shanghai/Shanghai")  # unversioned: the latest version
    assert str(latest.unwrapped) == "shanghai_v0"
    assert shanghai_env.ENV_ID in pettingzoo.aec_registry


# --- options and reset ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "named"),
    [
        ({"num_players": 9}, ValueError, "players"),
        ({"contracts": (11,)}, ValueError, "contracts"),
        ({"reward": "points"}, ValueError, "reward"),
        ({"reward": 1}, TypeError, "reward"),
        ({"max_steps": 0}, ValueError, "max_steps"),
        ({"max_steps": 2.5}, TypeError, "max_steps"),
        ({"max_steps": True}, TypeError, "max_steps"),
        ({"max_moves_per_deal": 0}, ValueError, "max_moves_per_deal"),
        ({"max_moves_per_deal": True}, TypeError, "max_moves_per_deal"),
        ({"max_moves_per_deal": 1.5}, TypeError, "max_moves_per_deal"),
        ({"max_stock_rebuilds": -1}, ValueError, "max_stock_rebuilds"),
        ({"render_mode": "rgb"}, ValueError, "render_mode"),
        ({"same_suit_run_gap": -1}, ValueError, "same_suit_run_gap"),
    ],
)
def test_bad_constructor_options(options, error, named) -> None:
    with pytest.raises(error, match=named):
        shanghai_env.raw_env(**options)


def test_caps_default_to_one_constant_and_no_truncation() -> None:
    env = shanghai_env.raw_env()
    assert env.max_steps is None
    assert env.max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL == 3000
    env = shanghai_env.raw_env(
        max_steps=np.int64(50), max_moves_per_deal=np.int32(70), max_stock_rebuilds=None
    )
    assert (env.max_steps, env.max_moves_per_deal, env.rules.max_stock_rebuilds) == (50, 70, None)
    assert type(env.max_steps) is int and type(env.max_moves_per_deal) is int
    assert env.rules.max_moves_per_deal == 70  # a rule option: the engine applies it
    assert shanghai_env.raw_env(max_moves_per_deal=None).rules.max_moves_per_deal is None  # no cap


@pytest.mark.parametrize(
    "options",
    [
        {"deck": ["7H"] * 105},
        {"deck": ["XX"] * 105},
        {"deck": [7] * 105},
        {"deck": "7H 8H"},
        {"dealer": 4},
        {"dealer": -1},
        {"dealer": "0"},
        ["deck"],
    ],
)
def test_bad_reset_options_raise_and_leave_env_playable(options) -> None:
    env = shanghai_env.raw_env(num_players=4)
    env.reset(seed=5)
    env.step(env.action_id("draw"))
    before = (env.agent_selection, env.observe(env.agent_selection)["observation"].tobytes())
    with pytest.raises(ValueError):
        env.reset(seed=1, options=options)
    assert (env.agent_selection, env.observe(env.agent_selection)["observation"].tobytes()) == before
    mask = env.observe(env.agent_selection)["action_mask"]
    env.step(int(np.flatnonzero(mask)[0]))


def test_unknown_reset_option_warns() -> None:
    env = shanghai_env.raw_env()
    with pytest.warns(UserWarning, match="not used"):
        env.reset(seed=0, options={"dealr": 1})


def test_reset_dealer_and_seed() -> None:
    env = shanghai_env.raw_env(num_players=4)
    for dealer in range(4):
        env.reset(seed=9, options={"dealer": dealer})
        assert env.game.dealer == dealer
        assert env.agent_selection == f"player_{(dealer + 1) % 4}"
    env.reset(seed=9, options={"dealer": np.int64(2)})
    assert env.game.dealer == 2
    env.reset(seed=9)
    first = env.game.hands
    env.reset(seed=9)
    assert env.game.hands == first
    env.reset(seed=10)
    assert env.game.hands != first


# --- illegal actions ---------------------------------------------------------------------------


def test_raw_env_refuses_illegal_actions_and_stays_playable() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(1,))
    env.reset(seed=2)
    rng = random.Random(2)
    for _ in range(300):
        agent = env.agent_selection
        obs = env.observe(agent)
        before = obs["observation"].tobytes()
        illegal = [a for a in rng.sample(range(env.action_space(agent).n), 20) if not obs["action_mask"][a]]
        for bad in [*illegal[:3], -1, int(env.action_space(agent).n), None]:
            with pytest.raises((ValueError, TypeError)):
                env.step(bad)
            assert env.agent_selection == agent
            assert env.observe(agent)["observation"].tobytes() == before
        env.step(random_action(env, agent, rng))
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break


def test_wrapped_env_terminates_on_illegal_action() -> None:
    env = shanghai_env.env(num_players=4)
    env.reset(seed=0)
    offender = env.agent_selection
    mask = env.last()[0]["action_mask"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    rewards = {}
    for agent in env.agent_iter():
        _obs, reward, terminated, truncated, _info = env.last()
        assert terminated or truncated
        rewards[agent] = reward
        env.step(None)
    assert rewards[offender] == -1
    assert all(r == 0 for a, r in rewards.items() if a != offender)
    assert env.agents == []


# --- rewards, episode ends, infos --------------------------------------------------------------


def play_to_end(env, seed: int) -> dict[str, float]:
    """Random legal play; returns each agent's total reward as seen through last()."""
    rng = random.Random(seed)
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        mask = info["action_mask"]
        if terminated or truncated:
            assert not mask.any()
        else:
            assert mask.sum() >= 1
        env.step(random_action(env, agent, rng))
    return totals


def finished_game(make, seeds=range(40)):
    for seed in seeds:
        env = make()
        totals = play_to_end(env, seed)
        if env.unwrapped.game.game_over:
            return env, totals
    raise AssertionError("no random game finished")


@pytest.mark.parametrize("players", [3, 4, 8])
def test_deal_rewards_add_up_to_scores(players: int) -> None:
    env, totals = finished_game(
        lambda: shanghai_env.env(num_players=players, contracts=(4, 9), max_steps=20_000)
    )
    game = env.unwrapped.game
    assert len(game.deal_results) == 2
    for i, agent in enumerate(env.possible_agents):
        assert totals[agent] == pytest.approx(-game.scores[i] / DEAL_REWARD_SCALE)


def test_deal_reward_reaches_players_who_did_not_move() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(4, 9), max_steps=20_000)
    rng = random.Random(1)
    env.reset(seed=1)
    while len(env.game.deal_results) == 0:
        env.step(random_action(env, env.agent_selection, rng))
    result = env.game.deal_results[0]
    expected = {a: -result.scores[i] / DEAL_REWARD_SCALE for i, a in enumerate(env.possible_agents)}
    assert any(expected.values())
    for agent in env.possible_agents:
        assert env.rewards[agent] == pytest.approx(expected[agent])
        assert env.infos[agent]["deal_scores"] == result.scores
        assert env.infos[agent]["winners"] == (0, 0, 0, 0)
        assert env.infos[agent]["game_scores"] == tuple(env.game.scores)
        assert env.infos[agent]["deals_played"] == 1
    # each agent sees the deal's reward through last() when it is next to act
    seen: dict[str, float] = {}
    while len(seen) < len(env.possible_agents):
        agent = env.agent_selection
        if agent not in seen:
            seen[agent] = env.last()[1]
        env.step(random_action(env, agent, rng))
    assert seen == pytest.approx(expected)


def test_win_rewards() -> None:
    env, totals = finished_game(lambda: shanghai_env.env(num_players=4, contracts=(4,), reward="win"))
    game = env.unwrapped.game
    winners = game.winners()
    for i, agent in enumerate(env.possible_agents):
        assert totals[agent] == (1.0 if i in winners else -1.0)


def test_game_end_terminates_everyone_with_scores_in_infos() -> None:
    env = shanghai_env.raw_env(num_players=3, contracts=(4,))
    rng = random.Random(0)
    env.reset(seed=0)
    while not env.game.game_over:
        assert not any(env.terminations.values())
        env.step(random_action(env, env.agent_selection, rng))
    assert all(env.terminations.values()) and not any(env.truncations.values())
    winners = tuple(int(i in env.game.winners()) for i in range(3))
    assert sum(winners) >= 1
    for agent in env.possible_agents:
        info = env.infos[agent]
        assert info["game_scores"] == tuple(env.game.scores)
        assert info["deal_scores"] == env.game.deal_results[-1].scores
        assert info["winners"] == winners
        assert not env.observe(agent)["action_mask"].any()


def test_step_cap_truncates_everyone() -> None:
    env = shanghai_env.env(num_players=4, contracts=(8,), max_steps=57)
    rng = random.Random(0)
    env.reset(seed=0)
    steps = 0
    for agent in env.agent_iter():
        _obs, _reward, terminated, truncated, _info = env.last()
        if not (terminated or truncated):
            steps += 1
        else:
            assert truncated and not terminated
        env.step(random_action(env, agent, rng))
    assert steps == 57
    assert env.unwrapped.num_steps == 57


def test_masks_in_observation_and_infos_agree() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(1, 2))
    rng = random.Random(4)
    env.reset(seed=4)
    zero = np.zeros(env.action_space("player_0").n, dtype=np.int8)
    for _ in range(500):
        actor = env.agent_selection
        for agent in env.possible_agents:
            mask = env.observe(agent)["action_mask"]
            assert mask.dtype == np.int8
            assert np.array_equal(env.infos[agent]["action_mask"], mask)
            if agent == actor:
                assert mask.sum() >= 1
            else:
                assert np.array_equal(mask, zero)
        env.step(random_action(env, actor, rng))


def test_action_names_round_trip_through_env() -> None:
    env = shanghai_env.env(num_players=4)
    raw = env.unwrapped
    assert raw.action_name(0) == "take"
    assert raw.action_id("discard 7H") == 37
    for a in range(0, raw.action_space("player_0").n, 7):
        assert raw.action_id(raw.action_name(a)) == a
    with pytest.raises(ValueError):
        raw.action_id("layoff 7H 4.0")  # seat 4 does not exist with 4 players


def test_state_space() -> None:
    env = shanghai_env.env(num_players=4, contracts=(1,))
    env.reset(seed=0)
    state = env.state()
    assert state.dtype == np.int8
    assert env.unwrapped.state_space.contains(state)


def test_env_observations_match_the_encoder() -> None:
    # the env caches the table's encoding between meld, layoff and swap moves
    env = shanghai_env.raw_env(num_players=4, contracts=(1, 4))
    rng = random.Random(8)
    env.reset(seed=8)
    table_moves = 0
    for _ in range(1500):
        if env.game.game_over:
            break
        for seat, agent in enumerate(env.possible_agents):
            expected = env.encoder.encode(env.game, seat)
            assert np.array_equal(env.observe(agent)["observation"], expected)
        assert np.array_equal(env.state(), env.state_encoder.encode(env.game))
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = np.flatnonzero(mask)
        eager = legal[legal >= 58]  # meld, layoff and swap actions first
        pool = eager if len(eager) and rng.random() < 0.8 else legal
        action = int(pool[rng.randrange(len(pool))])
        table_moves += action >= 58
        env.step(action)
    assert table_moves > 50
