"""The batched env, its worker processes and its Gymnasium view under bad input: every public call
refuses what it cannot use with a TypeError/ValueError naming what was wrong before any game
changes, and an inside player's error leaves the env refusing all use until ``reset``."""

from __future__ import annotations

import multiprocessing
import pickle
import re
import time
from functools import partial

import numpy as np
import pytest

from shanghai_env.agents.registry import make_agent
from shanghai_env.gym_vector import SingleAgentVectorEnv
from shanghai_env.vector import MAX_ENVS, VectorEnv, game_seed, vector_env
from shanghai_env.vector_workers import WorkerVectorEnv


def _first_legal(venv) -> list[int]:
    return [ids[0] for ids in venv.legal_actions]


def _snapshot(venv) -> list[tuple]:
    return [(g.move_count, g.to_act, g.hands, g.discard) for g in venv.games]


def _true_legal(venv, i: int) -> list[int]:
    action_of = venv.table.action_of
    return sorted(action_of[m] for m in venv.games[i].legal_moves())


# --- legal ids and the mask are the caller's copies ----------------------------------------


def test_an_id_written_into_legal_actions_and_the_mask_is_still_illegal():
    venv = vector_env(2, contracts=(1,))
    venv.reset(seed=0)
    before = _snapshot(venv)
    illegal = next(a for a in range(venv.num_actions) if a not in venv.legal_actions[1])
    venv.legal_actions[1].append(illegal)
    venv.mask[1, illegal] = 1
    with pytest.raises(ValueError, match=r"actions\[1\].*not legal"):
        venv.step([venv.legal_actions[0][0], illegal])
    assert _snapshot(venv) == before  # row 0 was not played either


def test_a_cleared_legal_list_leaves_no_stale_id_in_the_mask():
    venv = vector_env(2, contracts=(1,))
    venv.reset(seed=0)
    was_legal = list(venv.legal_actions[0])
    for ids in venv.legal_actions:
        ids.clear()  # the mask used to be cleared only at the ids listed here
    venv.step([_true_legal(venv, 0)[0], _true_legal(venv, 1)[0]])
    for i in range(2):
        assert np.flatnonzero(venv.mask[i]).tolist() == _true_legal(venv, i) == venv.legal_actions[i]
    stale = next((a for a in was_legal if a not in _true_legal(venv, 0)), None)
    assert stale is not None
    before = _snapshot(venv)
    with pytest.raises(ValueError, match=r"actions\[0\].*not legal"):
        venv.step([stale, _true_legal(venv, 1)[0]])
    assert _snapshot(venv) == before


# --- inside players ------------------------------------------------------------------------


class Answers:
    """A network seat answering ``bad`` in every game."""

    name = "answers"

    def __init__(self, bad: object, arrays: bool) -> None:
        self.bad = bad
        if arrays:
            self.act_arrays = self._act_arrays

    def reset(self, seed=None) -> None:
        pass

    def act(self, decision) -> int:
        return decision.legal_actions[0]

    def act_batch(self, decisions) -> list:
        return [self.bad] * len(decisions)

    def _act_arrays(self, obs, legal) -> list:
        return [self.bad] * len(legal)


@pytest.mark.parametrize("arrays", [True, False], ids=["act_arrays", "act_batch"])
@pytest.mark.parametrize("bad", [True, 3.0, "x", None, np.float64(1.0), [1]])
def test_a_networks_bad_answer_names_the_player_and_the_game(bad, arrays):
    venv = vector_env(3, players=[None, Answers(bad, arrays), None, None], contracts=(1,))
    with pytest.raises((TypeError, ValueError), match=r"'answers' in seat 1 of game \d") as caught:
        venv.reset(seed=0)
        for _ in range(20):
            venv.step(_first_legal(venv))
    game = int(re.search(r"of game (\d)", str(caught.value)).group(1))
    assert venv.games[game].to_act == 1  # the game named is one that awaits the network's answer
    with pytest.raises(RuntimeError, match=r"unusable until reset\(\)"):
        venv.step([0, 0, 0])


@pytest.mark.parametrize("arrays", [True, False], ids=["act_arrays", "act_batch"])
@pytest.mark.parametrize("answer", [None, 7, [0, 0, 0, 0]])
def test_a_network_answering_no_list_of_one_action_per_game_is_refused(answer, arrays):
    class Odd(Answers):
        def act_batch(self, decisions):
            return answer

        def _act_arrays(self, obs, legal):
            return answer

    venv = vector_env(3, players=[None, Odd(0, arrays), None, None], contracts=(1,))
    with pytest.raises((TypeError, ValueError), match="'answers' in seat 1"):
        venv.reset(seed=0)
        for _ in range(20):
            venv.step(_first_legal(venv))


class FirstLegal:
    name = "first-legal"

    def reset(self, seed=None) -> None:
        pass

    def act(self, decision) -> int:
        return decision.legal_actions[0]


class FailsOnce(FirstLegal):
    """Raises ``error`` at its first move, then plays as :class:`FirstLegal`."""

    name = "fails-once"

    def __init__(self, error: type[Exception]) -> None:
        self.error, self.failed = error, False

    def act(self, decision) -> int:
        if not self.failed:
            self.failed = True
            raise self.error("the bot's own failure")
        return decision.legal_actions[0]


class Numbered:
    """Makes bots in order (one per game and seat): bot ``fail_at`` fails once, the others never."""

    def __init__(self, fail_at: int, error: type[Exception]) -> None:
        self.made, self.fail_at, self.error = 0, fail_at, error

    def __call__(self) -> FirstLegal:
        bot = FailsOnce(self.error) if self.made == self.fail_at else FirstLegal()
        self.made += 1
        return bot


def test_after_an_inside_players_error_the_env_refuses_every_use_until_reset():
    venv = vector_env(2, players=[None, Numbered(1, KeyError), None, None], contracts=(1,))
    with pytest.raises(KeyError, match="own failure"):
        venv.reset(seed=4)
        for _ in range(20):
            venv.step(_first_legal(venv))
    for call in (lambda: venv.step([0, 0]), lambda: venv.observe(0, 0)):
        with pytest.raises(RuntimeError, match=r"unusable until reset\(\).*KeyError.*own failure"):
            call()
    venv.reset(seed=4)  # a fresh start: the same games as a new env's
    fresh = vector_env(2, players=[None, FirstLegal, None, None], contracts=(1,))
    fresh.reset(seed=4)
    for _ in range(30):
        actions = _first_legal(fresh)
        for x, y in zip(venv.step(actions), fresh.step(actions)):
            np.testing.assert_array_equal(x, y)


def test_a_factory_returning_no_agent_is_refused_at_construction():
    with pytest.raises(TypeError, match=r"players\[2\]\(\) returned NoneType"):
        VectorEnv(2, players=[None, None, lambda: None, None])


# --- arguments -----------------------------------------------------------------------------


def test_observe_refuses_rows_and_seats_out_of_range():
    venv = vector_env(2, contracts=(1,))
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        venv.observe(0, 0)
    venv.reset(seed=1)
    for row, seat, error, allowed in [
        (0, -1, ValueError, "seat must be an int 0..3"),
        (0, 4, ValueError, "seat must be an int 0..3"),
        (-1, 0, ValueError, "row must be an int 0..1"),
        (2, 0, ValueError, "row must be an int 0..1"),
        (True, 0, TypeError, "row must be an int 0..1"),
        (0, 1.0, TypeError, "seat must be an int 0..3"),
    ]:
        for call in (venv.observe, venv.observe_extra):
            with pytest.raises(error, match=allowed):
                call(row, seat)
    assert venv.observe(np.int64(1), np.int8(3)).shape == (venv.observation_length,)


def _facts(game, seat, size=3):
    return np.zeros(size, np.float32)


def test_features_and_their_size_are_checked():
    with pytest.raises(TypeError, match="features must be a callable"):
        VectorEnv(2, features="facts", features_size=3)
    with pytest.raises(ValueError, match="features_size must be an int >= 1"):
        VectorEnv(2, features=_facts, features_size=0)
    with pytest.raises(TypeError, match="features_size must be an int"):
        VectorEnv(2, features=_facts, features_size=3.0)
    with pytest.raises(ValueError, match="features_size is the length of what features"):
        VectorEnv(2, features_size=3)
    venv = VectorEnv(2, features=partial(_facts, size=4), features_size=3, contracts=(1,))
    with pytest.raises(ValueError, match=r"features\(game, seat\) returned shape \(4,\).*features_size 3"):
        venv.reset(seed=0)
    venv = VectorEnv(2, features=_facts, features_size=3, contracts=(1,))
    venv.reset(seed=0)
    assert venv.extra.shape == (2, 3) and venv.observe_extra(1, 2).shape == (3,)


def test_players_must_be_a_sequence_of_entries():
    for players in (5, "abcd", {0: None}):
        with pytest.raises(TypeError, match="players must be a list or tuple of one entry per seat"):
            VectorEnv(2, players=players)


def test_num_envs_has_an_upper_bound_checked_before_building():
    started = time.monotonic()
    with pytest.raises(ValueError, match=f"num_envs must be an int 1..{MAX_ENVS}"):
        VectorEnv(10**12)
    with pytest.raises(ValueError, match=f"num_envs must be an int 1..{MAX_ENVS}"):
        WorkerVectorEnv(MAX_ENVS + 1, workers=2)
    assert time.monotonic() - started < 5


def test_seeds_are_one_int_or_one_per_game():
    venv = vector_env(3, contracts=(1,))
    with pytest.raises(TypeError, match="seed"):
        venv.reset(seed=True)
    with pytest.raises(TypeError, match="seed"):
        venv.reset(seed="7")
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=-1)
    with pytest.raises(ValueError, match="one seed per game"):
        venv.reset(seed=[1, 2])
    with pytest.raises(TypeError, match=r"seed\[1\]"):
        venv.reset(seed=[1, 2.0, 3])
    with pytest.raises(ValueError, match=r"seed\[2\]"):
        venv.reset(seed=[1, 2, -3])


def test_a_list_of_seeds_seeds_each_row_as_row_0_of_its_own_seed():
    bots = [None, partial(make_agent, "greedy"), partial(make_agent, "random"), None]
    venv = vector_env(3, players=bots, contracts=(1,))
    seeds = [9, 4, 9]
    venv.reset(seed=seeds)
    singles = [vector_env(1, players=bots, contracts=(1,)) for _ in seeds]
    for single, s in zip(singles, seeds):
        single.reset(seed=s)
    rng = np.random.default_rng(0)
    for _ in range(200):
        actions = [int(rng.choice(ids)) for ids in venv.legal_actions]
        out = venv.step(actions)
        for i, single in enumerate(singles):
            one = single.step(actions[i : i + 1])
            for x, y in zip(out, one):
                np.testing.assert_array_equal(x[i], y[0])
    assert venv.game_seeds[0] == singles[0].game_seeds[0]
    venv.reset(seed=[None, None, 5])  # None: that game's seed is drawn at random
    assert venv.game_seeds[2] == game_seed(5, 0, 0) and venv.game_seeds[0] != venv.game_seeds[1]


# --- the Gymnasium view --------------------------------------------------------------------


def test_the_gymnasium_view_refuses_reset_options_and_takes_a_seed_per_env():
    env = SingleAgentVectorEnv(2, opponents=[partial(make_agent, "greedy")] * 3, contracts=(1,))
    for options in ({"deck": []}, {"dealer": 1}, {"anything": 0}):
        with pytest.raises(ValueError, match="reset options"):
            env.reset(seed=0, options=options)
    with pytest.raises(TypeError, match="options"):
        env.reset(seed=0, options="deck")
    env.reset(seed=0, options={})
    obs, _ = env.reset(seed=[3, 8])
    for i, s in enumerate([3, 8]):
        one = SingleAgentVectorEnv(1, opponents=[partial(make_agent, "greedy")] * 3, contracts=(1,))
        np.testing.assert_array_equal(one.reset(seed=s)[0][0], obs[i])
    with pytest.raises(ValueError, match="one seed per game"):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(TypeError, match="opponents must be a list or tuple"):
        SingleAgentVectorEnv(2, opponents=partial(make_agent, "greedy"))


# --- worker processes ----------------------------------------------------------------------


@pytest.fixture
def workers_env():
    made: list[WorkerVectorEnv] = []

    def make(*args, **kwargs) -> WorkerVectorEnv:
        made.append(WorkerVectorEnv(*args, **kwargs))
        return made[-1]

    yield make
    for env in made:
        env.close()


def test_a_workers_bad_call_is_refused_in_the_parent_and_the_workers_live_on(workers_env):
    env = workers_env(4, workers=2, contracts=(1,))
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step([0] * 4)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed="1")
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"seat must be an int 0\.\.3"):
        env.observe(0, 9)
    with pytest.raises(ValueError, match=r"row must be an int 0\.\.3"):
        env.observe(4, 0)
    with pytest.raises(TypeError, match="row must be"):
        env.observe(True, 0)
    one = vector_env(4, contracts=(1,))
    one.reset(seed=1)
    for _ in range(20):
        actions = _first_legal(one)
        for x, y in zip(one.step(actions), env.step(actions)):
            np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(env.observe(3, 2), one.observe(3, 2))


def test_a_closed_worker_env_says_so(workers_env):
    env = workers_env(2, workers=2, contracts=(1,))
    env.reset(seed=0)
    actions = _first_legal(env)
    env.close()
    for call in (lambda: env.step(actions), lambda: env.reset(seed=0), lambda: env.observe(0, 0)):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    env.close()  # a second close does nothing


@pytest.mark.parametrize(("error", "bot", "named"), [
    (KeyError, 3, "worker 1 (games 2..3)"),  # in a worker process
    (ValueError, 3, "worker 1 (games 2..3)"),
    (KeyError, 1, "worker 0 (games 0..1)"),  # in block 0, stepped in this process
])  # fmt: skip
def test_an_inside_error_in_one_worker_names_it_and_stops_the_env_until_reset(workers_env, error, bot, named):
    # 4 games in 2 blocks, bots in seat 1 made in game order: bot k is game k's
    players = [None, Numbered(bot, error), None, None]
    env = workers_env(4, workers=2, players=players, contracts=(1,))
    with pytest.raises(error if error is ValueError else RuntimeError) as caught:
        env.reset(seed=2)
        for _ in range(20):
            env.step(_first_legal(env))
    message = str(caught.value)
    assert named in message and "own failure" in message
    if error is KeyError:
        assert "KeyError" in message
    with pytest.raises(RuntimeError, match=r"unusable until reset\(\)"):
        env.step([0] * 4)
    env.reset(seed=2)
    one = vector_env(4, players=[None, FirstLegal, None, None], contracts=(1,))
    one.reset(seed=2)
    for _ in range(20):
        actions = _first_legal(one)
        for x, y in zip(one.step(actions), env.step(actions)):
            np.testing.assert_array_equal(x, y)


def test_a_worker_that_died_is_named(workers_env):
    env = workers_env(2, workers=2, contracts=(1,))
    env.reset(seed=0)
    worker = env._procs[1]
    worker.kill()
    worker.join(30)
    with pytest.raises(RuntimeError, match=r"worker 1 \(games 1..1\) .*stopped"):
        env.step(_first_legal(env))
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=0)


def test_an_unpicklable_player_is_a_type_error_and_starts_no_worker():
    before = set(multiprocessing.active_children())
    with pytest.raises(TypeError, match="must pickle"):
        WorkerVectorEnv(2, workers=2, players=[None, lambda: make_agent("random"), None, None])
    assert set(multiprocessing.active_children()) <= before


class Interrupting:
    """A worker's pipe whose next answer is interrupted (Ctrl-C in the parent while it waits)."""

    def __init__(self, conn) -> None:
        self.conn, self.armed = conn, True

    def __getattr__(self, name):
        return getattr(self.conn, name)

    def recv(self):
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        return self.conn.recv()


def test_an_interrupted_step_keeps_the_pipes_in_step(workers_env):
    env = workers_env(4, workers=2, contracts=(1,))
    env.reset(seed=5)
    one = vector_env(4, contracts=(1,))
    one.reset(seed=5)
    env._conns[1] = Interrupting(env._conns[1])
    actions = _first_legal(one)
    with pytest.raises(KeyboardInterrupt):
        env.step(actions)
    one.step(actions)
    assert env.broken is not None
    with pytest.raises(RuntimeError, match=r"unusable until reset\(\).*interrupted"):
        env.step(actions)
    # the step went through in both workers: a copy has the games as they now stand
    copy = pickle.loads(pickle.dumps(env))
    try:
        assert copy.broken is None
        for _ in range(10):
            actions = _first_legal(one)
            for x, y in zip(one.step(actions), copy.step(actions)):
                np.testing.assert_array_equal(x, y)
    finally:
        copy.close()
    env.reset(seed=6)  # the answer left due was read first
    one.reset(seed=6)
    np.testing.assert_array_equal(env.obs, one.obs)


def test_a_copy_from_before_the_env_kept_its_own_legal_ids_checks_against_its_games():
    venv = vector_env(2, contracts=(1,))
    venv.reset(seed=3)
    old = venv.__getstate__()
    old["legal_actions"] = [list(ids) for ids in venv.legal_actions]  # then an attribute
    del old["_legal"], old["_row_seeds"], old["_broken"]  # as pickled before they existed
    copy = VectorEnv.__new__(VectorEnv)
    copy.__setstate__(pickle.loads(pickle.dumps(old)))
    illegal = next(a for a in range(copy.num_actions) if a not in copy.legal_actions[1])
    copy.legal_actions[1].append(illegal)
    with pytest.raises(ValueError, match=r"actions\[1\].*not legal"):
        copy.step([copy.legal_actions[0][0], illegal])
    copy.step(_first_legal(venv))
    assert copy.broken is None
