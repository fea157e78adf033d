"""The batched env: game by game the same as env(), seeded, auto-resetting, refusing bad input."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

import shanghai_env
from shanghai_env.agents.registry import make_agent
from shanghai_env.vector import VectorEnv, game_seed, vector_env
from shanghai_env.vector_workers import WorkerVectorEnv


def _random_actions(venv: VectorEnv, rng: np.random.Generator) -> np.ndarray:
    return np.array([ids[rng.integers(len(ids))] for ids in venv.legal_actions])


@pytest.mark.parametrize(
    "options", [{"num_players": 4, "contracts": (1, 2)}, {"num_players": 3, "contracts": (1,)}]
)
def test_same_observations_masks_and_rewards_as_env(options):
    venv = vector_env(3, **options)
    obs, mask, seat = venv.reset(seed=5)
    envs = []
    for i in range(3):
        e = shanghai_env.raw_env(**options)
        e.reset(seed=venv.game_seeds[i])
        envs.append(e)
    rng = np.random.default_rng(0)
    games_done = 0
    for _ in range(3000):
        for i, e in enumerate(envs):
            agent = e.agent_selection
            assert agent == f"player_{seat[i]}"
            ob = e.observe(agent)
            np.testing.assert_array_equal(obs[i], ob["observation"])
            np.testing.assert_array_equal(mask[i], ob["action_mask"])
            assert venv.legal_actions[i] == np.flatnonzero(ob["action_mask"]).tolist()
        actions = _random_actions(venv, rng)
        obs, mask, seat, rewards, done = venv.step(actions)
        assert rewards.shape == (3, options["num_players"]) and rewards.dtype == np.float32
        for i, e in enumerate(envs):
            e.step(int(actions[i]))
            expected = [e.rewards[a] for a in e.possible_agents]
            np.testing.assert_allclose(rewards[i], expected, atol=1e-6)
            assert done[i] == all(e.terminations.values())
            if done[i]:
                games_done += 1
                np.testing.assert_array_equal(venv.final_scores[i], e.game.scores)
                e.reset(seed=venv.game_seeds[i])  # the row restarted with its next game
    assert games_done >= 1  # contract 1 or 1-2 random games end within 3000 steps


def test_same_seed_same_games_and_seeds_derived_per_row():
    a, b = vector_env(4, contracts=(1,)), vector_env(4, contracts=(1,))
    oa, _, _ = a.reset(seed=11)
    ob, _, _ = b.reset(seed=11)
    np.testing.assert_array_equal(oa, ob)
    assert a.game_seeds == [game_seed(11, i, 0) for i in range(4)]
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(300):
        ra = a.step(_random_actions(a, rng_a))
        rb = b.step(_random_actions(b, rng_b))
        for x, y in zip(ra, rb):
            np.testing.assert_array_equal(x, y)
    c = vector_env(4, contracts=(1,))
    oc, _, _ = c.reset(seed=12)
    assert not np.array_equal(oa, oc)


def test_bots_inside_play_until_the_callers_seat_and_rewards_add_up():
    bots = [None, lambda: make_agent("greedy"), lambda: make_agent("greedy"), lambda: make_agent("random")]
    venv = vector_env(2, players=bots, contracts=(1,))
    _, _, seat = venv.reset(seed=3)
    rng = np.random.default_rng(3)
    totals = np.zeros((2, 4))
    finished = 0
    for _ in range(4000):
        assert (seat == 0).all()
        _, _, seat, rewards, done = venv.step(_random_actions(venv, rng))
        totals += rewards
        for i in np.flatnonzero(done):
            # "deal" rewards over a game add up to -total score / 100, every seat
            np.testing.assert_allclose(totals[i], -venv.final_scores[i] / 100, atol=1e-4)
            totals[i] = 0
            finished += 1
        if finished >= 2:
            break
    assert finished >= 2


def test_bad_actions_are_refused_and_change_nothing():
    venv = vector_env(2, contracts=(1,))
    venv.reset(seed=0)
    before = [g.clone() for g in venv.games]
    obs = venv.obs.copy()
    legal = [ids[0] for ids in venv.legal_actions]
    illegal = next(a for a in range(venv.num_actions) if a not in venv.legal_actions[1])
    with pytest.raises(ValueError, match="shape"):
        venv.step(legal[:1])
    with pytest.raises(TypeError, match="integers"):
        venv.step(np.array(legal, float))
    with pytest.raises(TypeError, match="integers"):
        venv.step(np.array([True, False]))
    with pytest.raises(ValueError, match="no action id"):
        venv.step([legal[0], venv.num_actions])
    with pytest.raises(ValueError, match=r"actions\[1\].*not legal"):
        venv.step([legal[0], illegal])
    np.testing.assert_array_equal(venv.obs, obs)
    for g, b in zip(venv.games, before):
        assert g.move_count == b.move_count and g.hands == b.hands


def test_bad_construction_is_refused():
    with pytest.raises(ValueError, match="at least one seat"):
        VectorEnv(2, players=[lambda: make_agent("greedy")] * 4)
    with pytest.raises(ValueError, match="one entry per seat"):
        VectorEnv(2, players=[None, None])
    with pytest.raises(TypeError, match="factory"):
        VectorEnv(2, players=[None, make_agent("greedy"), None, None])
    with pytest.raises(TypeError, match="num_envs"):
        VectorEnv(2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown rule option"):
        VectorEnv(2, jokers=3)
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv(2).step([0, 0])


def test_observe_any_seat_matches_env():
    venv = vector_env(1, contracts=(1,))
    venv.reset(seed=2)
    e = shanghai_env.raw_env(contracts=(1,))
    e.reset(seed=venv.game_seeds[0])
    for s in range(4):
        np.testing.assert_array_equal(venv.observe(0, s), e.observe(f"player_{s}")["observation"])


class FirstLegal:
    """A stateless player that takes the lowest legal action; records the size of each batch."""

    name = "first-legal"

    def __init__(self) -> None:
        self.batches: list[int] = []

    def reset(self, seed=None) -> None:
        pass

    def act(self, decision) -> int:
        return decision.legal_actions[0]

    def act_batch(self, decisions) -> list[int]:
        self.batches.append(len(decisions))
        return [d.legal_actions[0] for d in decisions]


class FirstLegalOneByOne:
    name = "first-legal"

    def reset(self, seed=None) -> None:
        pass

    def act(self, decision) -> int:
        return decision.legal_actions[0]


def test_a_network_seat_decides_every_game_in_one_batch_with_the_same_play():
    shared = FirstLegal()
    batched = vector_env(8, players=[None, shared, shared, shared], contracts=(1,))
    single = vector_env(8, players=[None, *[FirstLegalOneByOne] * 3], contracts=(1,))
    batched.reset(seed=4)
    single.reset(seed=4)
    rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(200):
        ra = batched.step(_random_actions(batched, rng_a))
        rb = single.step(_random_actions(single, rng_b))
        for x, y in zip(ra, rb):
            np.testing.assert_array_equal(x, y)
    assert max(shared.batches) > 1  # decisions of several games in one call


def test_the_gymnasium_vector_view_is_the_learners_seat():
    from functools import partial

    from gymnasium.vector import AutoresetMode

    from shanghai_env.gym_vector import SingleAgentVectorEnv

    env = SingleAgentVectorEnv(3, opponents=[partial(make_agent, "greedy")] * 3, contracts=(1,))
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=7)
    reference = vector_env(3, players=[None, *[partial(make_agent, "greedy")] * 3], contracts=(1,))
    ref_obs, _, _ = reference.reset(seed=7)
    np.testing.assert_array_equal(obs, ref_obs)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in info["action_mask"]])
        obs, rewards, term, trunc, info = env.step(actions)
        ref = reference.step(actions)
        np.testing.assert_array_equal(obs, ref[0])
        np.testing.assert_allclose(rewards, ref[3][:, 0])
        np.testing.assert_array_equal(term, ref[4])
        assert not trunc.any() and env.action_masks().shape == (3, env.single_action_space.n)
        if term.any():
            ends += 1
            assert info["_final_scores"].tolist() == term.tolist()
    assert ends > 0
    with pytest.raises(ValueError, match="every other seat"):
        SingleAgentVectorEnv(2, opponents=[None, None, None])


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_games_in_worker_processes_are_the_same_games(workers):
    import pickle

    from shanghai_env.vector_workers import WorkerVectorEnv

    one = vector_env(5, contracts=(1,))
    split = WorkerVectorEnv(5, workers=workers, contracts=(1,))
    try:
        assert not one.started and not split.started
        one.reset(seed=3)
        split.reset(seed=3)
        assert one.started and split.started
        rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
        for t in range(300):
            ra = one.step(_random_actions(one, rng_a))
            rb = split.step(_random_actions(split, rng_b))
            for x, y in zip(ra, rb):
                np.testing.assert_array_equal(x, y)
            if t == 100:  # the caller's arrays are the memory the workers write: scribbling on them
                split.obs[:] = 7  # changes nothing the next step shows or allows
                split.mask[:] = 1
            if t == 150:  # a checkpoint: the copy goes on with the same games in workers of its own
                copy = pickle.loads(pickle.dumps(split))
                split.close()
                split = copy
                assert split.started
        assert one.game_seeds == split.game_seeds and one.deal_counts == split.deal_counts
        np.testing.assert_array_equal(one.observe(4, 2), split.observe(4, 2))
        before = split.obs.copy()
        with pytest.raises(ValueError, match="not legal"):
            split.step([ids[0] for ids in split.legal_actions[:-1]] + [split.num_actions - 1])
        np.testing.assert_array_equal(split.obs, before)
    finally:
        split.close()


def test_a_copy_from_before_the_extra_inputs_goes_on():
    import pickle

    venv = vector_env(2, contracts=(1,))
    venv.reset(seed=1)
    old = venv.__getstate__()
    del old["features"], old["extra"]  # as pickled before the option existed
    copy = VectorEnv.__new__(VectorEnv)
    copy.__setstate__(pickle.loads(pickle.dumps(old)))
    assert copy.extra.shape == (2, 0) and copy.features is None
    copy.step([ids[0] for ids in copy.legal_actions])


def _play(venv: VectorEnv, steps: int, seed: int = 0) -> list[tuple[np.ndarray, ...]]:
    """Copies of every step's arrays (obs, mask, seat, rewards, done, deal_ended) under random play."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        obs, mask, seat, rewards, done = venv.step(_random_actions(venv, rng))
        out.append((obs.copy(), mask.copy(), seat.copy(), rewards, done, venv.deal_ended.copy()))
    return out


def test_relative_rewards_are_the_trainers_deal_rewards_minus_the_tables_mean():
    """reward="relative" returns, bit for bit, what shanghai-train's default --reward relative
    computes from the "deal" rewards (rew - rew.mean(1, keepdims=True), float32); the games and
    everything else are the same."""
    deal, rel = vector_env(4, contracts=(1, 2)), vector_env(4, contracts=(1, 2), reward="relative")
    deal.reset(seed=7)
    rel.reset(seed=7)
    paid = 0
    for a, b in zip(_play(deal, 1500), _play(rel, 1500)):
        for x, y in zip(a[:3] + a[4:], b[:3] + b[4:]):
            np.testing.assert_array_equal(x, y)
        expected = a[3] - a[3].mean(1, keepdims=True)
        assert b[3].dtype == np.float32 and np.array_equal(b[3], expected)
        np.testing.assert_allclose(b[3].sum(1), 0.0, atol=1e-5)
        paid += int(b[3].any())
    assert paid >= 5  # deals ended and paid relative rewards


@pytest.mark.parametrize("reward", ["deal", "win", "relative"])
def test_deal_ended_marks_every_deals_end_in_every_reward_mode(reward):
    """deal_ended[i] is True exactly on the steps where a deal of row i ended (the game's last deal
    included, so done implies it); with "win" the rewards alone say nothing of deals."""
    venv = vector_env(3, contracts=(1, 2), reward=reward)
    venv.reset(seed=2)
    assert venv.deal_ended.shape == (3,) and not venv.deal_ended.any()
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(2500):
        before = [len(g.deal_results) + 2 * g_played for g, g_played in zip(venv.games, venv.games_played)]
        _, _, _, rewards, done = venv.step(_random_actions(venv, rng))
        after = [len(g.deal_results) + 2 * g_played for g, g_played in zip(venv.games, venv.games_played)]
        expected = np.array(after) != np.array(before)  # a deal result more, or a game restarted
        np.testing.assert_array_equal(venv.deal_ended, expected)
        assert not (done & ~venv.deal_ended).any()
        if reward != "win":
            np.testing.assert_array_equal(rewards.any(1), venv.deal_ended)
        ended += int(venv.deal_ended.sum())
    assert ended >= 6


def test_bool_masks_and_copies_give_the_same_values():
    """mask_dtype=bool gives a bool mask of the same legal moves (bool_mask views the int8 one
    without a copy); copy=True returns copies of the same values."""
    plain = vector_env(3, num_players=4, contracts=(1,))
    flags = vector_env(3, num_players=4, contracts=(1,), mask_dtype=bool)
    copies = vector_env(3, num_players=4, contracts=(1,), copy=True)
    first = [v.reset(seed=4) for v in (plain, flags, copies)]
    assert flags.mask.dtype == np.bool_ and np.array_equal(first[1][1], first[0][1].astype(bool))
    assert plain.bool_mask.dtype == np.bool_ and np.shares_memory(plain.bool_mask, plain.mask)
    for a, b, c in zip(_play(plain, 300), _play(flags, 300), _play(copies, 300)):
        np.testing.assert_array_equal(a[1].astype(bool), b[1])
        for x, y, z in zip(a, b, c):
            np.testing.assert_array_equal(x, z)
            if x.dtype != np.int8 or x.ndim != 2 or x.shape[1] != plain.num_actions:
                np.testing.assert_array_equal(x, y)
    for bad, kind in [("float32", ValueError), (np.int64, ValueError), (None, ValueError), ([1], TypeError)]:
        with pytest.raises(kind, match="mask_dtype must be"):
            vector_env(2, mask_dtype=bad)
    with pytest.raises(TypeError, match="copy must be True or False"):
        vector_env(2, copy="yes")
    with pytest.raises(ValueError, match="reward must be one of"):
        vector_env(2, reward="mean")


def test_the_returned_arrays_are_the_envs_buffers_rewritten_in_place_unless_copy():
    """The buffer contract: reset/step return venv.obs, venv.mask and venv.seat themselves, and
    the next step rewrites them (an array kept from a step shows the next step's values);
    copy=True returns arrays no later step touches. rewards and done are new at every step."""
    venv = vector_env(2, contracts=(1,))
    obs, mask, seat = venv.reset(seed=9)
    assert obs is venv.obs and mask is venv.mask and seat is venv.seat
    kept = obs.copy()
    rng = np.random.default_rng(9)
    obs2, mask2, seat2, rewards, done = venv.step(_random_actions(venv, rng))
    assert obs2 is obs and mask2 is mask and seat2 is seat
    assert not np.array_equal(obs, kept)  # the array from reset now shows this step
    _, _, _, rewards3, done3 = venv.step(_random_actions(venv, rng))
    assert rewards3 is not rewards and done3 is not done
    copying = vector_env(2, contracts=(1,), copy=True)
    obs, mask, seat = copying.reset(seed=9)
    assert obs is not copying.obs and mask is not copying.mask and seat is not copying.seat
    snapshot = obs.copy(), mask.copy(), seat.copy()
    copying.step(_random_actions(copying, np.random.default_rng(9)))
    for x, y in zip((obs, mask, seat), snapshot):
        np.testing.assert_array_equal(x, y)  # untouched by the step


def test_games_in_worker_processes_take_the_researchers_options_alike():
    """WorkerVectorEnv passes reward="relative", mask_dtype=bool and copy=True on and gathers
    deal_ended: the same arrays, step for step, as the batched env in one process."""
    options = {"num_players": 3, "contracts": (1,), "reward": "relative", "mask_dtype": bool, "copy": True}
    one = vector_env(4, **options)
    split = WorkerVectorEnv(4, workers=2, **options)
    try:
        a, b = one.reset(seed=6), split.reset(seed=6)
        assert b[1].dtype == np.bool_ and b[0] is not split.obs
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        ends = 0
        for x, y in zip(_play(one, 800, 6), _play(split, 800, 6)):
            for u, v in zip(x, y):
                np.testing.assert_array_equal(u, v)
            ends += int(y[5].sum())
        assert ends >= 2 and ends == one.deal_counts["deals"]
    finally:
        split.close()


def test_the_batched_env_example_of_the_usage_guide_runs():
    """docs/usage.md's batched-env example runs as written and prints the ends of deals."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "usage.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", doc, flags=re.S) if "vector_env(" in b)
    out = io.StringIO()
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/usage.md", "exec"), namespace)
    assert "a deal ended, relative rewards" in out.getvalue()
    assert len(namespace["kept"]) == 500  # type: ignore[arg-type]


def _seated(venv_class, **options):
    from functools import partial

    bots = [None, partial(make_agent, "planner"), partial(make_agent, "random"), None]
    if venv_class is VectorEnv:
        return VectorEnv(5, players=bots, contracts=(1,), reward="relative", **options)
    from shanghai_env.blocks import BlockVectorEnv

    tables = {3: bots[:3], 4: bots}
    return BlockVectorEnv(5, tables=(3, 4), players=tables, contracts=(1,), **options)


@pytest.mark.parametrize(("kind", "workers"), [("vector", 1), ("blocks", 1), ("blocks", 2)])
def test_the_state_rebuilds_the_games_and_their_bots_exactly(kind, workers):
    """state() is plain data (JSON) and load_state() in an env made alike goes on exactly as the
    saved one: the same arrays, rewards and ends, the seated bots' plans and generators included."""
    import json

    from shanghai_env.blocks import BlockVectorEnv

    cls = VectorEnv if kind == "vector" else BlockVectorEnv
    options = {} if kind == "vector" else {"workers": workers}
    saved, loaded = _seated(cls, **options), _seated(cls, **options)
    try:
        with pytest.raises(RuntimeError, match="reset"):
            saved.state()
        saved.reset(seed=4)
        rng = np.random.default_rng(1)
        for _ in range(120):
            saved.step(_random_actions(saved, rng))
        state = json.loads(json.dumps(saved.state()))
        assert loaded.load_state(state) == []
        assert loaded.started and loaded.game_seeds == saved.game_seeds
        assert loaded.deal_counts == saved.deal_counts
        rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
        for _ in range(200):
            a, b = saved.step(_random_actions(saved, rng_a)), loaded.step(_random_actions(loaded, rng_b))
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(np.concatenate(saved.final_scores), np.concatenate(loaded.final_scores))
    finally:
        saved.close()
        loaded.close()


def test_a_state_that_does_not_fit_is_refused_naming_what():
    venv = vector_env(3, contracts=(1,))
    venv.reset(seed=2)
    for _ in range(30):
        venv.step([ids[0] for ids in venv.legal_actions])
    state = venv.state()
    illegal = next(a for a in range(venv.num_actions) if a not in venv.legal_actions[0])
    other = vector_env(3, contracts=(1,))
    with pytest.raises(TypeError, match=r"dict from VectorEnv\.state"):
        other.load_state([1, 2])
    bad = {
        "format": ({**state, "format": "x"}, "version 1 dict"),
        "size": ({**state, "num_envs": 4}, "num_envs 4"),
        "moves": ({**state, "moves": [[9999], *state["moves"][1:]]}, r"moves\[0\]"),
        "illegal": ({**state, "moves": [[*state["moves"][0], illegal], *state["moves"][1:]]}, "game 0"),
        "seed": ({**state, "game_seeds": [1, *state["game_seeds"][1:]]}, "game 0's seed"),
    }
    for value, needle in bad.values():
        with pytest.raises(ValueError, match=needle):
            other.load_state(value)
    with pytest.raises(ValueError, match="first_row"):
        vector_env(3, contracts=(1,), first_row=3).load_state(state)
    other.load_state(state)  # a refused state leaves the env loadable
    np.testing.assert_array_equal(other.obs, venv.obs)
