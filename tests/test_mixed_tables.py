"""Games at several table sizes in one batch (``MixedTablesEnv``) and ``shanghai-train dmc --tables``.

Each row of the mixed batch plays exactly the game a batched env of its size plays in that row
(the same seeds, observations, masks, rewards and final scores, with the rewards padded to eight
seats); a bad action is refused before any game moves; a pickled batch goes on identically; bad
arguments are clear errors. A tiny ``dmc --tables 3,5,8`` run trains, resumes as if never stopped,
and its player sits at every one of those tables; ``--tables`` without the 8-seat encoding is one
line and exit 2.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

from shanghai_env.mixed_tables import MixedTablesEnv, table_sizes
from shanghai_env.vector import VectorEnv

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
    with pytest.raises(ValueError, match=r"one per game \(5\), got 2"):
        mixed.reset(seed=[1, 2])


def test_a_size_named_twice_gets_two_shares_of_the_rows():
    mixed = MixedTablesEnv(9, tables=(3, 8, 3), **OPTIONS)
    assert mixed.tables == (3, 3, 8)
    mixed.reset(seed=2)
    assert [g.rules.num_players for g in mixed.games] == [3, 3, 3, 3, 3, 3, 8, 8, 8]
    seeds = [b.game_seeds for b in mixed.blocks]  # the two 3-player blocks deal different games
    assert len({s for block in seeds for s in block}) == 9


torch = pytest.importorskip("torch")

from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402


def tiny(out: str, timesteps: int) -> RunConfig:
    options = {"batch_size": 16, "epochs": 1, "net_arch": (16,), "n_steps": 8, "tables": (3, 5, 8)}
    return RunConfig(
        method="dmc", players=5, contracts=(1,), encoding="any_table", timesteps=timesteps, seed=3,
        out=out, num_envs=6, eval_every=0, eval_games=0, checkpoint_every=48, progress=False,
        method_options=options,
    )  # fmt: skip


def test_dmc_over_several_table_sizes_resumes_and_plays_each(tmp_path):
    whole, parts = str(tmp_path / "whole"), str(tmp_path / "parts")
    train(tiny(whole, 192))
    train(tiny(parts, 96))
    train(tiny(parts, 192))  # the same command with more steps resumes from the checkpoint
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
        ([*MIXED, "--env-workers", "2"], "--env-workers 1"),
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
