"""encoding="any_table": one 8-seat observation and action encoding for every table size.

Games played through the 8-seat encoding are the games of the native one (same seeds, mapped
actions: same moves, rewards and ends); every 8-seat observation and mask is the native one
mapped by the index maps; the spaces are the same for every player count; the default encoding
keeps its spaces; bad values and illegal actions are refused.
"""

from __future__ import annotations

import copy
import pickle
import random

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test

import shanghai_env
from shanghai_env.actions import action_table
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.any_table import (
    MAX_SEATS,
    AnyTable,
    AnyTableEncoder,
    eight_seat_rules,
)
from shanghai_env.engine import Game
from shanghai_env.gym_vector import SingleAgentVectorEnv
from shanghai_env.moves import MoveKind
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import ALL_CONTRACTS, Rules
from shanghai_env.single_agent import SingleAgentEnv
from shanghai_env.vector import VectorEnv

SIZES = range(3, 9)
CONTRACTS = (1, 4, 9)  # two, three and four melds: layoffs and swaps on every kind of slot


def _obs_and_mask(env, agent):
    ob = env.observe(agent)
    return ob["observation"], ob["action_mask"]


# --- the index maps --------------------------------------------------------------------------


@pytest.mark.parametrize("contracts", [(1,), (4,), (9,), ALL_CONTRACTS, (2, 1, 3)])
def test_eight_seat_sizes_depend_on_the_contracts_only(contracts):
    sizes = set()
    for n in SIZES:
        for extra in ({}, {"joker_points": 25, "exact_contract_melds": False, "joker_swaps": False}):
            raw = shanghai_env.raw_env(num_players=n, contracts=contracts, encoding="any_table", **extra)
            eight = Rules(num_players=MAX_SEATS, contracts=contracts)
            obs_space = raw.observation_space("player_0")
            sizes.add((obs_space["observation"].shape, raw.action_space("player_0").n))
            assert raw.action_space("player_0").n == action_table(eight).size
            assert obs_space["observation"].shape == (ObservationEncoder(eight).size + 6,)
            assert obs_space["action_mask"].shape == (action_table(eight).size,)
    assert len(sizes) == 1


def test_spaces_equal_across_table_sizes():
    def spaces_of(n):
        raw = shanghai_env.raw_env(num_players=n, encoding="any_table")
        single = SingleAgentEnv(num_players=n, encoding="any_table")
        return raw.observation_space("player_0"), raw.action_space("player_0"), single.observation_space

    first = spaces_of(3)
    for n in SIZES:
        assert spaces_of(n) == first
    assert first[1].n == 5882 and first[0]["observation"].shape == (4339,)


def test_default_spaces_unchanged():
    for n in SIZES:
        rules = Rules(num_players=n)
        for raw in (
            shanghai_env.raw_env(num_players=n),
            shanghai_env.raw_env(num_players=n, encoding="table"),
        ):
            assert raw.encoding == "table"
            assert type(raw.encoder) is ObservationEncoder
            assert raw.action_table is action_table(rules)
            assert raw.action_space("player_0").n == action_table(rules).size
            assert raw.observation_space("player_0")["observation"].shape == (ObservationEncoder(rules).size,)
    raw = shanghai_env.raw_env()  # the documented default lengths (docs/observation.md, docs/actions.md)
    assert raw.observation_space("player_0")["observation"].shape == (2293,)
    assert raw.action_space("player_0").n == 3194
    assert VectorEnv(2).obs.shape == (2, 2293) and SingleAgentEnv().action_space.n == 3194


@pytest.mark.parametrize("n", SIZES)
def test_action_maps(n):
    maps = AnyTable(Rules(num_players=n, contracts=ALL_CONTRACTS))
    native, eight = maps.table, maps.table_any
    assert eight is action_table(eight_seat_rules(maps.rules))
    np.testing.assert_array_equal(maps.to_native[maps.to_any], np.arange(native.size))
    assert np.all(np.diff(maps.to_any) > 0)  # the order of ids is kept
    for a8, move in enumerate(eight.moves):
        absent = move.kind in (MoveKind.LAYOFF, MoveKind.SWAP) and move.seat >= n
        assert (maps.to_native[a8] == -1) == absent
        if not absent:
            assert native.moves[maps.to_native[a8]] == move
    # the player to my left's first meld: one id at every table size
    for name in ("layoff 7H 1.0", "swap 7H 1.0", "layoff JK=QS 2.1", "discard 7H", "meld 1 JK=7H"):
        a8 = eight.action_id(name)
        assert a8 == action_table(Rules(num_players=MAX_SEATS)).action_id(name)
        assert maps.to_native[a8] == native.action_id(name)
        assert maps.to_any[native.action_id(name)] == a8
    batch = np.array([[0, native.action_id("swap 7H 1.0")], [5, native.size - 1]])
    np.testing.assert_array_equal(maps.actions_to_native(maps.actions_to_any(batch)), batch)
    with pytest.raises(ValueError, match="action ids"):
        maps.actions_to_any([native.size])
    with pytest.raises(TypeError, match="integer action ids"):
        maps.actions_to_native([1.0])


def test_observation_maps_on_batches_and_the_player_count():
    for n in SIZES:
        rules = Rules(num_players=n, contracts=CONTRACTS)
        game = Game(rules)
        game.reset(n)
        native = ObservationEncoder(rules)
        encoder = AnyTableEncoder(rules)
        maps = encoder.maps
        rows = np.stack([native.encode(game, p) for p in range(n)])
        mapped = maps.obs_to_any(rows)
        assert mapped.shape == (n, encoder.size) and mapped.dtype == np.int8
        for p in range(n):
            np.testing.assert_array_equal(mapped[p], encoder.encode(game, p))
        players = mapped[:, encoder.slices["num_players"]]
        np.testing.assert_array_equal(players, np.eye(6, dtype=np.int8)[[n - 3] * n])
        assert np.all(encoder.low <= mapped) and np.all(mapped <= encoder.high)
        # absent seats are zero in every per-seat slice; present ones hold the native values
        for name in ("hand_sizes", "buys_left", "scores", "dealer", "picked_up", "table"):
            per = (encoder.slices[name].stop - encoder.slices[name].start) // MAX_SEATS
            cut = encoder.slices[name].start + n * per
            assert not mapped[:, cut : encoder.slices[name].stop].any()
            np.testing.assert_array_equal(
                mapped[:, encoder.slices[name].start : cut], rows[:, native.slices[name]]
            )
        assert mapped[0, encoder.slices["hand_sizes"]].tolist()[:n] == [11] * n
        with pytest.raises(ValueError, match="native length"):
            maps.obs_to_any(mapped)


# --- whole games, side by side -----------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_identical_games_through_both_encodings(n):
    options = {"num_players": n, "contracts": CONTRACTS}
    table_env, any_env = shanghai_env.env(**options), shanghai_env.env(**options, encoding="any_table")
    maps = AnyTable(Rules(**options))
    rng = random.Random(n)
    targeted = 0  # layoffs and swaps onto another player's meld
    for seed in (n, 100 + n):
        table_env.reset(seed=seed)
        any_env.reset(seed=seed)
        for agent in table_env.agent_iter():
            assert any_env.agent_selection == agent
            obs_n, reward_n, term_n, trunc_n, _ = table_env.last()
            obs_8, reward_8, term_8, trunc_8, info_8 = any_env.last()
            assert (reward_8, term_8, trunc_8) == (reward_n, term_n, trunc_n)
            np.testing.assert_array_equal(obs_8["observation"], maps.obs_to_any(obs_n["observation"]))
            np.testing.assert_array_equal(obs_8["action_mask"], maps.mask_to_any(obs_n["action_mask"]))
            np.testing.assert_array_equal(info_8["action_mask"], obs_8["action_mask"])
            if term_n or trunc_n:
                table_env.step(None)
                any_env.step(None)
                continue
            legal_n = np.flatnonzero(obs_n["action_mask"])
            legal_8 = np.flatnonzero(obs_8["action_mask"])
            assert len(legal_8) == len(legal_n)
            np.testing.assert_array_equal(maps.to_native[legal_8], legal_n)  # one to one, in order
            k = rng.randrange(len(legal_n))
            a_n, a_8 = int(legal_n[k]), int(legal_8[k])
            assert table_env.unwrapped.action_name(a_n) == any_env.unwrapped.action_name(a_8)
            move = table_env.unwrapped.action_table.moves[a_n]
            targeted += move.kind in (MoveKind.LAYOFF, MoveKind.SWAP) and move.seat > 0
            if rng.random() < 0.05:  # another seat's observation, now and then
                other = f"player_{rng.randrange(n)}"
                np.testing.assert_array_equal(
                    any_env.observe(other)["observation"],
                    maps.obs_to_any(table_env.observe(other)["observation"]),
                )
            table_env.step(a_n)
            any_env.step(a_8)
        assert any_env.unwrapped.game.scores == table_env.unwrapped.game.scores
        assert any_env.unwrapped.game.move_count == table_env.unwrapped.game.move_count
    assert targeted > 0


def test_vector_env_agrees_with_the_aec_env():
    for n in (3, 5, 8):
        options = {"num_players": n, "contracts": (4,), "encoding": "any_table"}
        venv = VectorEnv(2, **options)
        obs, mask, seat = venv.reset(seed=n)
        envs = [shanghai_env.raw_env(**options) for _ in range(2)]
        space = envs[0].observation_space("player_0")
        assert obs.shape[1:] == space["observation"].shape and mask.shape[1:] == space["action_mask"].shape
        for i, e in enumerate(envs):
            e.reset(seed=venv.game_seeds[i])
        rng = np.random.default_rng(n)
        live = [True, True]
        while any(live):
            for i, e in enumerate(envs):
                if live[i]:
                    assert e.agent_selection == f"player_{seat[i]}"
                    o, m = _obs_and_mask(e, e.agent_selection)
                    np.testing.assert_array_equal(obs[i], o)
                    np.testing.assert_array_equal(mask[i], m)
                    assert venv.legal_actions[i] == np.flatnonzero(m).tolist()
                    np.testing.assert_array_equal(venv.observe(i, 0), e.observe("player_0")["observation"])
            actions = np.array([ids[rng.integers(len(ids))] for ids in venv.legal_actions])
            obs, mask, seat, rewards, done = venv.step(actions)
            for i, e in enumerate(envs):
                if live[i]:
                    e.step(int(actions[i]))
                    np.testing.assert_allclose(rewards[i], [e.rewards[a] for a in e.possible_agents])
                    assert done[i] == e.game.game_over
                    live[i] = not done[i]


def test_vector_env_with_bots_inside_plays_the_same_games():
    # bots seated inside answer through their decision's table: the same moves in both encodings
    def batch(encoding):
        players = [None, GreedyBot, None, GreedyBot]
        return VectorEnv(3, players=players, encoding=encoding, num_players=4, contracts=(1, 4))

    table_venv, any_venv = batch("table"), batch("any_table")
    maps = AnyTable(Rules(num_players=4, contracts=(1, 4)))
    obs_n, mask_n, seat_n = table_venv.reset(seed=7)
    obs_8, mask_8, seat_8 = any_venv.reset(seed=7)
    rng = np.random.default_rng(7)
    ended = 0
    for _ in range(400):
        np.testing.assert_array_equal(seat_8, seat_n)
        np.testing.assert_array_equal(obs_8, maps.obs_to_any(obs_n))
        np.testing.assert_array_equal(mask_8, maps.mask_to_any(mask_n))
        actions = np.array([ids[rng.integers(len(ids))] for ids in table_venv.legal_actions])
        obs_n, mask_n, seat_n, rewards_n, done_n = table_venv.step(actions)
        obs_8, mask_8, seat_8, rewards_8, done_8 = any_venv.step(maps.actions_to_any(actions))
        np.testing.assert_array_equal(rewards_8, rewards_n)
        np.testing.assert_array_equal(done_8, done_n)
        ended += int(table_venv.deal_ended.sum())
    assert [g.move_count for g in any_venv.games] == [g.move_count for g in table_venv.games]
    assert ended > 0


def test_single_agent_view_and_its_vector_env():
    native = SingleAgentEnv(num_players=5, contracts=(1,), learner_seat=2)
    eight = SingleAgentEnv(num_players=5, contracts=(1,), learner_seat=2, encoding="any_table")
    assert eight.encoding == "any_table" and native.encoding == "table"
    maps = AnyTable(native.rules)
    obs_n, info_n = native.reset(seed=3)
    obs_8, info_8 = eight.reset(seed=3)
    done = False
    while not done:
        np.testing.assert_array_equal(obs_8, maps.obs_to_any(obs_n))
        np.testing.assert_array_equal(info_8["action_mask"], maps.mask_to_any(info_n["action_mask"]))
        np.testing.assert_array_equal(eight.action_masks(), maps.mask_to_any(native.action_masks()))
        a_n = int(np.flatnonzero(info_n["action_mask"])[0])
        obs_n, r_n, term_n, trunc_n, info_n = native.step(a_n)
        obs_8, r_8, term_8, trunc_8, info_8 = eight.step(int(maps.to_any[a_n]))
        assert (r_8, term_8, trunc_8) == (r_n, term_n, trunc_n)
        assert info_8["game_scores"] == info_n["game_scores"]
        done = term_n or trunc_n
    # the gymnasium registration passes the option through
    made = gymnasium.make(shanghai_env.GYM_ENV_ID, num_players=3, contracts=(1,), encoding="any_table")
    assert made.observation_space == eight.observation_space and made.action_space == eight.action_space
    vec = SingleAgentVectorEnv(
        2, opponents=[GreedyBot] * 7, num_players=8, contracts=(1,), encoding="any_table"
    )
    obs, info = vec.reset(seed=1)
    assert vec.single_observation_space == eight.observation_space
    assert vec.single_action_space == eight.action_space
    assert obs.shape == (2, *eight.observation_space.shape)
    assert info["action_mask"].shape == (2, eight.action_space.n)


# --- errors, illegal actions, copies -----------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda e: shanghai_env.env(encoding=e),
        lambda e: shanghai_env.raw_env(encoding=e),
        lambda e: VectorEnv(2, encoding=e),
        lambda e: SingleAgentEnv(encoding=e),
        lambda e: SingleAgentVectorEnv(2, opponents=[GreedyBot] * 3, encoding=e),
    ],
)
def test_bad_encoding_names_the_allowed_values(make):
    with pytest.raises(ValueError, match="encoding must be one of 'table', 'any_table', got 'eight'"):
        make("eight")
    with pytest.raises(TypeError, match="encoding must be one of 'table', 'any_table', got 8"):
        make(8)


def test_illegal_actions_are_refused_as_before():
    raw = shanghai_env.raw_env(num_players=4, contracts=(1,), encoding="any_table")
    raw.reset(seed=2)
    size = raw.action_space("player_0").n
    before = (
        raw.game.move_count,
        raw.agent_selection,
        raw.observe(raw.agent_selection)["observation"].copy(),
    )
    absent = raw.action_id("layoff 7H 5.0")  # the meld of a seat a 4-player table does not have
    for action in (absent, raw.action_id("discard 7H"), raw.action_id("swap 7H 7.1")):
        with pytest.raises(ValueError, match="illegal move"):
            raw.step(action)
    with pytest.raises(ValueError, match=f"0..{size - 1}"):
        raw.step(size)
    with pytest.raises(TypeError):
        raw.step(True)
    after = (raw.game.move_count, raw.agent_selection, raw.observe(raw.agent_selection)["observation"])
    assert after[:2] == before[:2]
    np.testing.assert_array_equal(after[2], before[2])
    # env(): an illegal action is the actor's loss, as with the native encoding
    env = shanghai_env.env(num_players=4, contracts=(1,), encoding="any_table")
    env.reset(seed=2)
    actor = env.agent_selection
    env.step(absent)
    assert all(env.terminations.values()) and env.rewards[actor] == -1
    single = SingleAgentEnv(num_players=4, contracts=(1,), encoding="any_table")
    single.reset(seed=2)
    _, reward, terminated, _, info = single.step(absent)
    assert terminated and info["illegal_action"] and reward == -1
    venv = VectorEnv(1, num_players=4, contracts=(1,), encoding="any_table")
    venv.reset(seed=2)
    with pytest.raises(ValueError, match="not legal"):
        venv.step([absent])


def test_copies_keep_the_encoding():
    raw = shanghai_env.raw_env(num_players=6, contracts=(1,), encoding="any_table")
    raw.reset(seed=4)
    for _ in range(30):
        raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[-1]))
    for clone in (copy.deepcopy(raw), pickle.loads(pickle.dumps(raw))):
        assert clone.encoding == "any_table" and isinstance(clone.encoder, AnyTableEncoder)
        agent = raw.agent_selection
        np.testing.assert_array_equal(clone.observe(agent)["observation"], raw.observe(agent)["observation"])
        np.testing.assert_array_equal(clone.observe(agent)["action_mask"], raw.observe(agent)["action_mask"])
    venv = VectorEnv(2, num_players=3, contracts=(1,), encoding="any_table")
    venv.reset(seed=1)
    clone = pickle.loads(pickle.dumps(venv))
    actions = [ids[0] for ids in venv.legal_actions]
    np.testing.assert_array_equal(clone.step(actions)[0], venv.step(actions)[0])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("players", (3, 8))
def test_api(players):
    api_test(shanghai_env.env(num_players=players, encoding="any_table"), num_cycles=1000)
    api_test(
        shanghai_env.raw_env(num_players=players, contracts=(1,), max_steps=400, encoding="any_table"),
        num_cycles=1000,
    )
