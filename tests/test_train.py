"""``shanghai-train sb3``: MaskablePPO on the single-agent view, through the loop's shared parts (run
folder, checkpoints and resume, the evaluation shanghai-evaluate's statistic, the curve); its
player is a MaskablePPO .zip that every command plays; one seed, one result."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from shanghai_env.agents.bots.greedy import GreedyBot  # noqa: E402
from shanghai_env.agents.learned.players.sb3 import ModelAgent  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.learned.train.methods.sb3 import Scored  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import check_player, make_agent  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402
from shanghai_env.single_agent import SingleAgentEnv  # noqa: E402

TINY = {"n_steps": 32, "batch_size": 64, "epochs": 1, "net_arch": (16,)}


def tiny(out: Path, timesteps: int = 256, **kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        method="sb3",
        contracts=(1,),
        timesteps=timesteps,
        seed=3,
        out=str(out),
        num_envs=4,
        opponents=("greedy",),
        eval_every=0,
        eval_games=0,
        checkpoint_every=128,
        progress=False,
        method_options=dict(TINY),
    )
    base.update(kw)
    return RunConfig(**base)


def weights(path: str | Path) -> dict[str, Any]:
    return {k: v.clone() for k, v in ModelAgent(str(path)).load().policy.state_dict().items()}


def test_a_few_thousand_steps_on_contract_1_through_the_command(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["sb3", "--contracts", "1", "--opponents", "greedy", "--timesteps", "2048", "--num-envs", "4",
            "--n-steps", "128", "--batch-size", "128", "--epochs", "2", "--net-arch", "32",
            "--eval-every", "1024", "--eval-games", "4", "--eval-opponents", "greedy",
            "--out", str(out), "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    for name in ("config.json", "checkpoint.pt", "progress.csv", "eval.csv", "curve.png", "model.json"):
        assert (out / name).is_file(), name
    player = out / "model.zip"
    assert not (out / "model.pt").exists()
    with open(out / "progress.csv", newline="", encoding="utf-8") as f:
        progress = list(csv.DictReader(f))
    assert [int(r["env_steps"]) for r in progress] == [512, 1024, 1536, 2048]
    assert all(r["value_loss"] and r["entropy_loss"] for r in progress)
    with open(out / "eval.csv", newline="", encoding="utf-8") as f:
        evals = list(csv.DictReader(f))
    # the loop's figures: the learner's game score minus each bot seat's, with its interval
    # (shanghai-evaluate's pairs: greedy, greedy#2, greedy#3), and the rounds they are over
    assert [int(r["env_steps"]) for r in evals] == [0, 1024, 2048]
    assert {"greedy_diff", "greedy_low", "greedy_high", "greedy_score", "rounds"} <= set(evals[0])
    assert {"greedy#2_diff", "greedy#3_high"} <= set(evals[0])
    recipe = json.loads((out / "model.json").read_text(encoding="utf-8"))
    assert recipe["player"] == "model.zip" and recipe["method"] == "sb3"
    assert recipe["evaluation"]["env_steps"] == 2048
    rules = Rules(num_players=4, contracts=(1,))
    assert check_player(str(player), rules) == str(player)
    assert isinstance(make_agent(str(player)), ModelAgent)


def test_one_seed_one_result_and_the_updates_change_the_network(tmp_path: Path) -> None:
    train(tiny(tmp_path / "a"))
    train(tiny(tmp_path / "b"))
    train(tiny(tmp_path / "c", timesteps=128))  # one update
    a, b, c = (weights(tmp_path / n / "model.zip") for n in "abc")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a)


def test_a_stopped_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(tiny(out, timesteps=128))
    first = weights(out / "model.zip")
    method = method_class("sb3")()
    method.setup(tiny(out, timesteps=256), torch.device("cpu"))
    method.load_state_dict(torch.load(out / "checkpoint.pt", weights_only=True)["method"])  # plain values
    loaded = {k: v.clone() for k, v in method.model.policy.state_dict().items()}
    assert all(torch.equal(first[k], loaded[k]) for k in first)  # the checkpoint's network
    train(tiny(out, timesteps=256))
    with open(out / "progress.csv", newline="", encoding="utf-8") as f:
        assert [int(r["env_steps"]) for r in csv.DictReader(f)] == [128, 256]
    assert any(not torch.equal(first[k], v) for k, v in weights(out / "model.zip").items())


def test_self_play_and_init_from_a_saved_player(tmp_path: Path) -> None:
    train(tiny(tmp_path / "self", timesteps=128, opponents=("self",)))
    start = str(tmp_path / "self" / "model.zip")
    options = {**TINY, "lr": 1e-5, "net_arch": (8,)}  # the file's widths win over net_arch
    method = method_class("sb3")()
    method.setup(tiny(tmp_path / "on", init=start, method_options=options), torch.device("cpu"))
    assert method.model.learning_rate == 1e-5 and method.model.n_steps == 32
    before = weights(start)
    assert all(torch.equal(before[k], v) for k, v in method.model.policy.state_dict().items())
    with pytest.raises(ValueError, match="it plays 4 players, contracts 1"):
        method_class("sb3")().setup(tiny(tmp_path / "3p", init=start, players=3), torch.device("cpu"))


def test_the_relative_reward_is_the_score_against_the_table() -> None:
    env = Scored(SingleAgentEnv([GreedyBot() for _ in range(3)], contracts=(1, 2)), relative=True)
    _, info = env.reset(seed=4)
    total, done = 0.0, False
    rng = np.random.default_rng(0)
    while not done:
        action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    scores, seat = np.asarray(info["game_scores"], float), info["learner_seat"]
    assert total == pytest.approx(-(scores[seat] - scores.mean()) / 100)
    assert env.finished == [pytest.approx(scores[seat] - np.delete(scores, seat).mean())]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--facts"], "--facts"),
        (["--env-workers", "2"], "--env-workers"),
        (["--init", "scratch_contract1"], "--init"),  # a network of the loop, not MaskablePPO
        (["--init", "shanghai_4p"], "goes on from a MaskablePPO player"),
        (["--batch-size", "0"], "--batch-size"),
        (["--shaping", "-1"], "--shaping"),
        (["--vector-env", "--shaping", "0.5"], "--shaping"),  # the batched games pay no shaping
    ],
)
def test_what_sb3_cannot_do_is_one_line_and_exit_2(tmp_path, argv, needle, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["sb3", "--contracts", "1", "--out", str(tmp_path / "run"), "--no-progress", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and "Traceback" not in "\n".join(err)
    assert not os.path.exists(tmp_path / "run" / "checkpoint.pt")


@pytest.mark.parametrize("opponents", [("self",), ("greedy",)])
def test_the_batched_games_train_through_the_loop(tmp_path: Path, opponents: tuple[str, ...]) -> None:
    """``--vector-env``: MaskablePPO on SB3VectorEnv (the games stepped together), the loop's files
    and statistics as with a SingleAgentEnv each."""
    options = {**TINY, "vector_env": True}
    out = tmp_path / "run"
    train(tiny(out, timesteps=512, opponents=opponents, method_options=options))
    with open(out / "progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert int(rows[-1]["env_steps"]) == 512
    assert sum(float(r["games_finished"]) for r in rows) > 0
    if opponents != ("self",):
        assert any(r["train_game_diff"] not in ("", "nan") for r in rows)
    assert weights(out / "model.zip")  # the player loads and plays as any MaskablePPO player
