"""ppo --prior: a network that amends a player (agents/learned/players/prior.py), the trainer's
side and the saved player's."""

from __future__ import annotations

import csv
import json
import os

import pytest

torch = pytest.importorskip("torch")

from shanghai_env.actions import action_table  # noqa: E402
from shanghai_env.agents.learned.players.prior import PriorPolicyAgent, choices, move_kinds  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.evaluation import evaluate  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import make_agent  # noqa: E402
from shanghai_env.moves import MoveKind  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402

RULES = Rules(num_players=4, contracts=(1,))


def tiny(out: str, timesteps: int = 128, **options) -> RunConfig:
    method_options = {"prior": "greedy", "n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)}
    method_options.update(options)
    return RunConfig(
        method="ppo",
        contracts=(1,),
        timesteps=timesteps,
        seed=5,
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


def ids(kind: MoveKind) -> list[int]:
    return [a for a, m in enumerate(action_table(RULES).moves) if m.kind == kind]


def test_the_policy_chooses_only_among_the_scorers_moves():
    kinds = move_kinds(RULES)
    take, draw = ids(MoveKind.TAKE)[0], ids(MoveKind.DRAW)[0]
    assert choices([take, draw], draw, kinds) == ([take, draw], 1)
    buy, passing = ids(MoveKind.BUY)[0], ids(MoveKind.PASS)[0]
    assert choices([buy, passing], buy, kinds) == ([buy, passing], 0)
    discards, melds, layoffs = ids(MoveKind.DISCARD)[:3], ids(MoveKind.MELD)[:2], ids(MoveKind.LAYOFF)[:1]
    legal = [melds[0], discards[0], layoffs[0], discards[1], melds[1], discards[2]]
    # the prior discards: any discard, but neither going down nor laying off
    assert choices(legal, discards[1], kinds) == (discards, 1)
    # the prior goes down or lays off: its move is played
    assert choices(legal, melds[1], kinds) == ([melds[1]], 0)
    assert choices(legal, layoffs[0], kinds) == ([layoffs[0]], 0)


def test_with_a_bonus_that_outweighs_the_network_the_player_is_its_prior(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(out, prior_bonus=50.0))
    rows = progress(out)
    assert all(r["prior_kept"] == 1.0 and r["prior_top"] == 1.0 for r in rows)
    assert 0 < sum(r["free_share"] for r in rows) / len(rows) < 1  # the rest: going down, laying off
    path = os.path.join(out, "model.pt")
    player = make_agent(path, seed=1)
    assert isinstance(player, PriorPolicyAgent) and player.prior_spec == "greedy"
    # the saved player against three copies of its prior: every game the same, to the point
    r = evaluate(path, "greedy", players=4, contracts=(1,), games=8, seed=11)
    assert max(abs(r["diff"]), abs(r["low"]), abs(r["high"])) < 1e-9
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["prior"] == "greedy" and recipe["teacher"] is None


def test_without_the_bonus_the_policy_leaves_its_prior(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(out, prior_bonus=0.0))
    rows = progress(out)
    kept = sum(r["prior_kept"] for r in rows) / len(rows)
    assert kept < 0.9  # a fresh network's near-uniform choice among the free moves
    r = evaluate(os.path.join(out, "model.pt"), "greedy", players=4, contracts=(1,), games=8, seed=11)
    assert abs(r["diff"]) > 1e-9


def test_resume_with_a_prior_equals_an_uninterrupted_run(tmp_path):
    whole = str(tmp_path / "whole")
    train(tiny(whole, timesteps=128, prior="planner"))
    parts = str(tmp_path / "parts")
    train(tiny(parts, timesteps=64, prior="planner"))
    train(tiny(parts, timesteps=128, prior="planner"))
    a = torch.load(os.path.join(whole, "model.pt"), weights_only=True)["state_dict"]
    b = torch.load(os.path.join(parts, "model.pt"), weights_only=True)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["ppo", "--prior", "nobody"], "--prior"),
        (["ppo", "--prior", "greedy", "--prior-bonus", "-1"], "--prior-bonus"),
        (["ppo", "--prior", "greedy", "--env-workers", "2"], "--env-workers"),
    ],
)
def test_bad_prior_command_lines_exit_2_with_one_line(argv, needle, capsys, monkeypatch):
    monkeypatch.setattr(
        "shanghai_env.agents.learned.train.loop.train", lambda *a, **k: pytest.fail("started")
    )
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and "Traceback" not in "\n".join(err)
