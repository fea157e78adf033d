"""shanghai-train dagger: behaviour cloning and DAgger of a player into the loop's network, and
ppo going on from the clone (RL after cloning on one network)."""

from __future__ import annotations

import csv
import json
import os

import pytest

torch = pytest.importorskip("torch")

from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import check_player  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402


def tiny(out: str, timesteps: int = 96, **options) -> RunConfig:
    method_options = {"teacher": "greedy", "n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)}
    method_options.update(options)
    return RunConfig(
        method="dagger",
        contracts=(1,),
        timesteps=timesteps,
        seed=3,
        out=out,
        num_envs=4,
        eval_every=0,
        eval_games=0,
        checkpoint_every=32,
        progress=False,
        method_options=method_options,
    )


def progress(out: str) -> list[dict[str, float]]:
    with open(os.path.join(out, "progress.csv"), newline="", encoding="utf-8") as f:
        return [{k: float(v) for k, v in r.items() if v not in ("", "nan")} for r in csv.DictReader(f)]


def weights(path: str) -> dict:
    return torch.load(path, weights_only=True)["state_dict"]


def test_a_clone_names_its_teacher_and_plays(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(out))
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["method"] == "dagger" and recipe["teacher"] == "greedy"
    check_player(os.path.join(out, "model.pt"), Rules(num_players=4, contracts=(1,)))


def test_beta_says_who_plays_and_the_teacher_labels_every_game_it_plays(tmp_path):
    cloning = str(tmp_path / "bc")
    train(tiny(cloning, timesteps=256, beta=1.0))
    rows = progress(cloning)
    assert all(r["teacher_share"] == 1.0 and r["labelled_share"] == 1.0 for r in rows)
    learner = str(tmp_path / "dagger")
    train(tiny(learner, timesteps=256, beta=0.0))
    rows = progress(learner)
    assert all(r["teacher_share"] == 0.0 and r["labelled_share"] > 0.5 for r in rows)


def test_cloning_fits_the_teachers_moves(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(out, timesteps=8 * 16 * 40, beta=1.0, n_steps=16, lr=3e-3, net_arch=(64,)))
    rows = progress(out)
    first, last = rows[0], rows[-5:]
    assert sum(r["imitation_loss"] for r in last) / 5 < 0.6 * first["imitation_loss"]
    assert sum(r["agreement"] for r in last) / 5 > first["agreement"] + 0.1


def test_resume_equals_an_uninterrupted_run(tmp_path):
    whole = str(tmp_path / "whole")
    train(tiny(whole, timesteps=128))
    parts = str(tmp_path / "parts")
    train(tiny(parts, timesteps=64))
    train(tiny(parts, timesteps=128))
    a, b = weights(os.path.join(whole, "model.pt")), weights(os.path.join(parts, "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resume_with_a_planning_teacher_equals_an_uninterrupted_run(tmp_path):
    """The planner's copies keep plans between decisions: resuming rebuilds them from the games."""
    whole, parts = str(tmp_path / "whole"), str(tmp_path / "parts")
    train(tiny(whole, timesteps=128, teacher="planner"))
    train(tiny(parts, timesteps=64, teacher="planner"))
    train(tiny(parts, timesteps=128, teacher="planner"))
    a, b = weights(os.path.join(whole, "model.pt")), weights(os.path.join(parts, "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_ppo_starts_from_the_clone(tmp_path):
    clone = str(tmp_path / "clone")
    train(tiny(clone, timesteps=64))
    config = RunConfig(
        method="ppo",
        contracts=(1,),
        num_envs=4,
        out=str(tmp_path / "ppo"),
        init=os.path.join(clone, "model.pt"),
        progress=False,
        method_options={"n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)},
    )
    ppo = method_class("ppo")()
    ppo.setup(config, torch.device("cpu"))
    start = ppo.net.state_dict()
    cloned = weights(os.path.join(clone, "model.pt"))
    assert start.keys() == cloned.keys() and all(torch.equal(start[k], cloned[k]) for k in start)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["dagger"], "--teacher"),
        (["dagger", "--teacher", "nobody"], "--teacher"),
        (["dagger", "--teacher", "planner", "--beta", "1.5"], "--beta"),
        (["dagger", "--teacher", "planner", "--env-workers", "2"], "--env-workers"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(argv, needle, capsys, monkeypatch):
    monkeypatch.setattr(
        "shanghai_env.agents.learned.train.loop.train", lambda *a, **k: pytest.fail("started")
    )
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and "Traceback" not in "\n".join(err)
