"""Games at several table sizes in one batch (``MixedTablesEnv``) and ``shanghai-train dmc --tables``.

Each row of the mixed batch plays exactly the game a batched env of its size plays in that row
(the same seeds, observations, masks, rewards and final scores, with the rewards padded to eight
seats); a bad action is refused before any game moves; a pickled batch goes on identically; bad
arguments are clear errors; in worker processes the rows play the same games. A tiny
``dmc --tables 3,5,8`` run, in one process or two, trains, resumes as if never stopped, and its
player sits at every one of those tables; ``--tables`` without the 8-seat encoding is one line and
exit 2.
"""

from __future__ import annotations

import os
import pickle
from functools import partial

import numpy as np
import pytest

from shanghai_env.agents.registry import make_agent
from shanghai_env.mixed_tables import MixedTablesEnv, table_sizes
from shanghai_env.vector import VectorEnv
from shanghai_env.vector_workers import WorkerVectorEnv

OPTIONS = {"contracts": (1,), "reward": "relative"}


def random_actions(legal: list[list[int]], rng: np.random.Generator) -> np.ndarray:
    return np.array([ids[rng.integers(len(ids))] for ids in legal])


def test_each_row_plays_the_game_of_a_batched_env_of_its_size():
    mixed = MixedTablesEnv(7, tables=(8, 3, 5), first_row=2, **OPTIONS)
    assert mixed.tables == (3, 5, 8)
    # 7 rows over 3 sizes: 3, 2 and 2 of them, in order, keeping their row numbers in the seeds
    alone = [
        VectorEnv(3, num_players=3, first_row=2, encoding="any_table", **OPTIONS),
        VectorEnv(2, num_players=5, first_row=5, encoding="any_table", **OPTIONS),
        VectorEnv(2, num_players=8, first_row=7, encoding="any_table", **OPTIONS),
    ]
    mixed.reset(seed=11)
    for venv in alone:
        venv.reset(seed=11)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(1500):
        np.testing.assert_array_equal(mixed.obs, np.concatenate([v.obs for v in alone]))
        np.testing.assert_array_equal(mixed.mask, np.concatenate([v.mask for v in alone]))
        np.testing.assert_array_equal(mixed.seat, np.concatenate([v.seat for v in alone]))
        assert mixed.legal_actions == [ids for v in alone for ids in v.legal_actions]
        acts = random_actions(mixed.legal_actions, rng)
        _, _, _, rewards, done = mixed.step(acts)
        assert rewards.shape == (7, 8)
        row = 0
        for venv in alone:
            _, _, _, rew, fin = venv.step(acts[row : row + venv.num_envs])
            n = venv.num_players
            np.testing.assert_array_equal(rewards[row : row + venv.num_envs, :n], rew)
            assert not rewards[row : row + venv.num_envs, n:].any()  # seats the table lacks
            np.testing.assert_array_equal(done[row : row + venv.num_envs], fin)
            row += venv.num_envs
        ended += int(rewards.any(1).sum())
    assert ended > 0  # deals ended, so rewards were compared where they are not all 0
    assert [len(s) for s in mixed.final_scores] == [3, 3, 3, 5, 5, 8, 8]
    assert mixed.deal_counts["deals"] == sum(v.deal_counts["deals"] for v in alone)
    assert [g.rules.num_players for g in mixed.games] == [3, 3, 3, 5, 5, 8, 8]
    np.testing.assert_array_equal(mixed.observe(4, 4), alone[1].observe(1, 4))


def test_a_bad_action_moves_no_game():
    mixed = MixedTablesEnv(4, tables=(3, 4), **OPTIONS)
    mixed.reset(seed=5)
    before = pickle.dumps(mixed)
    acts = np.array([ids[0] for ids in mixed.legal_actions])
    illegal = next(a for a in range(mixed.num_actions) if a not in mixed.legal_actions[3])
    acts[3] = illegal
    with pytest.raises(ValueError, match=r"actions\[3\]"):
        mixed.step(acts)
    assert pickle.dumps(mixed) == before


def test_a_pickled_batch_goes_on_identically():
    mixed = MixedTablesEnv(6, tables=(4, 6, 7), **OPTIONS)
    mixed.reset(seed=9)
    rng = np.random.default_rng(1)
    for _ in range(200):
        mixed.step(random_actions(mixed.legal_actions, rng))
    copy = pickle.loads(pickle.dumps(mixed))
    for _ in range(300):
        acts = random_actions(mixed.legal_actions, rng)
        a, b = mixed.step(acts), copy.step(acts)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"tables": ()}, TypeError, "non-empty"),
        ({"tables": "345"}, TypeError, "numbers of players"),
        ({"tables": (2, 4)}, ValueError, "tables"),
        ({"tables": (4, 9)}, ValueError, "tables"),
        ({"tables": (3, 4), "encoding": "table"}, ValueError, "any_table"),
        ({"tables": (3, 4), "num_players": 4}, TypeError, "tables="),
        ({"tables": (3, 4), "players": {5: [None] * 5}}, TypeError, "players"),
        ({"tables": (3, 4, 5), "num_envs": 2}, ValueError, "num_envs"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs, error, needle):
    kwargs = {"num_envs": 6, **kwargs}
    with pytest.raises(error, match=needle):
        MixedTablesEnv(**kwargs)
    assert table_sizes([8, 3]) == (3, 8)


def test_a_seed_per_game_deals_each_row_its_own_seed():
    mixed = MixedTablesEnv(5, tables=(3, 6), **OPTIONS)
    seeds = [101, 102, 103, 104, 105]
    mixed.reset(seed=seeds)
    alone = VectorEnv(2, num_players=6, first_row=3, encoding="any_table", **OPTIONS)
    alone.reset(seed=seeds[3:])
    np.testing.assert_array_equal(mixed.obs[3:], alone.obs)
    assert mixed.blocks[1].game_seeds == alone.game_seeds
    with pytest.raises(ValueError, match=r"one seed per game \(5\), got 2"):
        mixed.reset(seed=[1, 2])


def test_a_size_named_twice_gets_two_shares_of_the_rows():
    mixed = MixedTablesEnv(9, tables=(3, 8, 3), **OPTIONS)
    assert mixed.tables == (3, 3, 8)
    mixed.reset(seed=2)
    assert [g.rules.num_players for g in mixed.games] == [3, 3, 3, 3, 3, 3, 8, 8, 8]
    seeds = [b.game_seeds for b in mixed.blocks]  # the two 3-player blocks deal different games
    assert len({s for block in seeds for s in block}) == 9


def _state(venv: MixedTablesEnv) -> list[object]:
    """Everything a caller reads after a reset or step, copied."""
    return [
        venv.obs.copy(), venv.mask.copy(), venv.seat.copy(), venv.extra.copy(), venv.deal_ended.copy(),
        [s.copy() for s in venv.final_scores], list(venv.game_seeds), dict(venv.deal_counts),
        venv.legal_actions,
    ]  # fmt: skip


@pytest.mark.parametrize("workers", [2, 4])
def test_games_in_worker_processes_are_the_games_of_one_process(workers):
    """The rows in worker processes (4 of 7 rows and 2 processes: a process holds the 3-player
    rows and one 5-player row, the other the second 5-player row and the 8-player ones) play the
    very games of the one-process batch: seeds, observations, masks, rewards, scores, bots' moves,
    through a checkpoint's copy and a reset with a seed per game."""
    bots = {5: [None, *[partial(make_agent, "greedy")] * 4], 8: [None, *[partial(make_agent, "random")] * 7]}
    one = MixedTablesEnv(7, tables=(3, 5, 8), players=bots, **OPTIONS)
    split = MixedTablesEnv(7, tables=(3, 5, 8), players=bots, workers=workers, **OPTIONS)
    try:
        assert split.workers == workers and split.caller_seats == (0,)
        one.reset(seed=4)
        split.reset(seed=4)
        rng = np.random.default_rng(2)
        ends = 0
        for t in range(600):
            for x, y in zip(_state(one), _state(split)):
                np.testing.assert_equal(x, y)
            acts = random_actions(one.legal_actions, rng)
            for x, y in zip(one.step(acts), split.step(acts)):
                np.testing.assert_array_equal(x, y)
            ends += int(one.deal_ended.sum())
            if t == 300:  # a checkpoint: the copy goes on in workers of its own
                copy = pickle.loads(pickle.dumps(split))
                split.close()
                split = copy
            if t == 450:
                seeds = [7, 1, 7, 3, 9, 2, 5]
                one.reset(seed=seeds)
                split.reset(seed=seeds)
        assert ends > 0
        for row, seat in ((2, 2), (4, 4), (6, 7)):
            np.testing.assert_array_equal(one.observe(row, seat), split.observe(row, seat))
        with pytest.raises(ValueError, match=r"seat must be an int 0\.\.2"):
            split.observe(0, 5)  # a seat the row's table lacks
        with pytest.raises(RuntimeError, match="workers=1"):
            split.games  # noqa: B018
    finally:
        split.close()


def test_copies_pickled_before_the_one_engine_go_on():
    """A checkpoint's games as MixedTablesEnv (its blocks in its attributes) and WorkerVectorEnv
    (each process's block pickled) kept them before both were configurations of one engine go on
    with the games of a new env."""

    def started(*pieces: VectorEnv) -> list[VectorEnv]:
        for piece in pieces:
            piece.reset(seed=4)
        return list(pieces)

    three = VectorEnv(3, num_players=3, encoding="any_table", **OPTIONS)
    five = VectorEnv(2, num_players=5, first_row=3, encoding="any_table", **OPTIONS)
    old_mixed = {"blocks": started(three, five), "tables": (3, 5), "_bounds": [(0, 3), (3, 5)], "num_envs": 5}
    halves = started(VectorEnv(2, contracts=(1,)), VectorEnv(2, first_row=2, contracts=(1,)))
    old_workers = {"blocks": [pickle.dumps(h) for h in halves], "num_envs": 4, "workers": 2, "options": {}}
    pairs = [
        (MixedTablesEnv.__new__(MixedTablesEnv), old_mixed, MixedTablesEnv(5, tables=(3, 5), **OPTIONS)),
        (WorkerVectorEnv.__new__(WorkerVectorEnv), old_workers, VectorEnv(4, contracts=(1,))),
    ]
    for copy, state, fresh in pairs:
        copy.__setstate__(state)
        fresh.reset(seed=4)
        rng = np.random.default_rng(3)
        try:
            for _ in range(200):
                acts = random_actions(fresh.legal_actions, rng)
                for x, y in zip(copy.step(acts), fresh.step(acts)):
                    np.testing.assert_array_equal(x, y)
        finally:
            copy.close()


torch = pytest.importorskip("torch")

from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402


def tiny(out: str, timesteps: int, env_workers: int = 1) -> RunConfig:
    options = {"batch_size": 16, "epochs": 1, "net_arch": (16,), "n_steps": 8, "tables": (3, 5, 8)}
    return RunConfig(
        method="dmc", players=5, contracts=(1,), encoding="any_table", timesteps=timesteps, seed=3,
        out=out, num_envs=6, eval_every=0, eval_games=0, checkpoint_every=48, progress=False,
        method_options=options, env_workers=env_workers,
    )  # fmt: skip


@pytest.mark.parametrize("env_workers", [1, 2])
def test_dmc_over_several_table_sizes_resumes_and_plays_each(tmp_path, env_workers):
    """In one process or two (``--env-workers 2``, the games in a worker), a run stopped and
    resumed ends with the weights of a run in one process never stopped."""
    whole, parts = str(tmp_path / "whole"), str(tmp_path / "parts")
    train(tiny(whole, 192))
    train(tiny(parts, 96, env_workers))
    train(tiny(parts, 192, env_workers))  # the same command with more steps resumes from the checkpoint
    a = torch.load(os.path.join(whole, "model.pt"), weights_only=False)
    b = torch.load(os.path.join(parts, "model.pt"), weights_only=False)
    state_a, state_b = a["state_dict"], b["state_dict"]
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament

    player = os.path.join(whole, "model.pt")
    for n in (3, 8):
        config = TournamentConfig(players=(player, *["greedy"] * (n - 1)), games=2, contracts=(1,))
        assert all(len(r.scores) == n for r in run_tournament(config, workers=1))


MIXED = ["dmc", "--encoding", "any_table", "--tables", "3,4"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["dmc", "--tables", "3,4"], "--encoding any_table"),
        (["dmc", "--encoding", "any_table", "--tables", "3,9"], "an int 3..8, got 9"),
        ([*MIXED, "--opponents", "greedy,planner,greedy"], "with --tables name one player"),
    ],
)
def test_bad_tables_on_the_command_line_are_one_line(argv, needle, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--out", str(tmp_path / "run")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and "Traceback" not in "\n".join(err)
    assert not os.path.exists(tmp_path / "run")
