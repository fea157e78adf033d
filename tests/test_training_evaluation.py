"""The training's evaluation is shanghai-evaluate's statistic: for the same players, seed, games
and contracts, every figure of an eval.csv row is a figure of the arena's summary; rows written
before (the bot seats' mean, over deck sets) stay readable and are drawn apart."""

from __future__ import annotations

import json
import math
import os
from types import SimpleNamespace

import pytest

pytest.importorskip("scipy")
pytest.importorskip("openskill")

from shanghai_env.agents.arena.evaluate_cli import main as shanghai_evaluate
from shanghai_env.agents.learned.train.evaluation import (
    ROUNDS,
    describe,
    evaluate,
    evaluate_all,
    seat_column,
)

GAMES, SEED = 12, 7  # two rounds of the 3-seat design: intervals on 1 degree of freedom


def test_the_training_figures_are_shanghai_evaluates(tmp_path):
    config = SimpleNamespace(
        eval_opponents=("random",), players=3, contracts=(1,), eval_games=GAMES, eval_seed=SEED
    )
    row = evaluate_all("greedy", config)
    raw = evaluate("greedy", "random", players=3, contracts=(1,), games=GAMES, seed=SEED)
    out = tmp_path / "arena"
    argv = ["--players", "greedy,random,random", "--games", str(GAMES), "--seed", str(SEED)]
    argv += ["--contracts", "1", "--workers", "1", "--no-progress", "--quiet", "--out", str(out)]
    summary = shanghai_evaluate(argv)
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    pairs = [p for p in written["pairs"] if p["a"] == "greedy"]  # the learner minus each seat
    assert [p["b"] for p in pairs] == ["random", "random#2"] == [s["label"] for s in raw["seats"]]
    assert summary.rounds == written["rounds"] == row[ROUNDS] == 2
    assert summary.games == written["games"] == row["games"] == GAMES
    for k, pair in enumerate(pairs, start=1):
        name = seat_column("random", k)
        assert name == pair["b"]  # the column is named as the arena labels the seat
        seat = raw["seats"][k - 1]
        assert [seat["diff"], seat["low"], seat["high"]] == [pair["mean_diff"], *pair["ci95"]]  # exactly
        assert [row[f"{name}_{x}"] for x in ("diff", "low", "high")] == [
            round(v, 2) for v in (pair["mean_diff"], *pair["ci95"])
        ]
        assert all(math.isfinite(v) for v in pair["ci95"])
    assert row["random_score"] == round(written["players"][0]["mean_game_score"], 2)
    # the seats differ: the curve's figure is one seat's, not the seats' mean
    assert row["random_diff"] != row["random#2_diff"]
    assert describe(row, ["random"]).startswith(f"random {row['random_diff']:+.1f} [")
    assert "random#2" in describe(row, ["random"])


def test_one_round_has_no_interval_as_in_the_arena():
    raw = evaluate("greedy", "random", players=3, contracts=(1,), games=6, seed=SEED)
    assert raw["rounds"] == 1 and all(math.isnan(s["low"]) and math.isnan(s["high"]) for s in raw["seats"])
    row = {"random_diff": raw["diff"], "random_low": raw["low"], "random_high": raw["high"]}
    assert "[n/a: one round]" in describe(row, ["random"])


OLD = "env_steps,wall_seconds,train_seconds,greedy_diff,greedy_low,greedy_high,greedy_score,games\r\n"
OLD_ROWS = "0,1.0,0.0,9.5,4.0,15.0,80.0,24\r\n4096,9.0,5.0,3.5,-1.0,8.0,70.0,24\r\n"


def test_an_old_run_resumed_keeps_its_rows_apart_and_plots(tmp_path):
    """A run whose eval.csv was written with the earlier statistic, resumed: its new rows widen the
    header (other seats, rounds); the old rows have no rounds value, and the plot draws them as a
    line of their own."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    from shanghai_env.agents.learned.train.run import Run, curve_bots, plot_curve, read_curve
    from tests.test_trainer import tiny

    out = str(tmp_path / "run")
    folder = Run(tiny("ppo", out))
    try:
        with open(folder.path("eval.csv"), "w", newline="", encoding="utf-8") as f:
            f.write(OLD + OLD_ROWS)
        new = {"env_steps": 8192, "wall_seconds": 17.0, "train_seconds": 10.0}
        for k, diff in enumerate((1.5, 2.5, 0.5), start=1):
            name = seat_column("greedy", k)
            new |= {f"{name}_diff": diff, f"{name}_low": diff - 4, f"{name}_high": diff + 4}
        new |= {"greedy_score": 60.0, "games": 48, ROUNDS: 2}
        folder.log("eval.csv", new)
    finally:
        folder.close()
    rows, skipped = read_curve(os.path.join(out, "eval.csv"))
    assert skipped == [] and [r["env_steps"] for r in rows] == [0, 4096, 8192]
    assert [ROUNDS in r for r in rows] == [False, False, True]  # the statistic a row holds is known
    assert curve_bots(rows) == ["greedy"]  # one line per bot: the seats #2, #3 are not lines
    png = str(tmp_path / "curve.png")
    plot_curve([os.path.join(out, "eval.csv")], png, "mixed")
    assert os.path.getsize(png) > 1000
    old_only = tmp_path / "old" / "eval.csv"
    old_only.parent.mkdir()
    old_only.write_text(OLD + OLD_ROWS, newline="")
    plot_curve([str(old_only)], png, "before")  # a run written before still draws
    assert os.path.getsize(png) > 1000
