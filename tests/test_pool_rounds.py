"""benchmarks/pool_rounds.py: several evaluations of one line-up on other seeds, their rounds pooled
into the intervals one evaluation of all the games would give."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from shanghai_env.agents.arena import evaluate_cli as evaluate

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "pool_rounds.py"
spec = importlib.util.spec_from_file_location("pool_rounds", SCRIPT)
assert spec and spec.loader
pool_rounds = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pool_rounds)

QUICK = ["--contracts", "1", "--workers", "1", "--no-progress", "--quiet", "--games", "12"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pool")
    out = {}
    for name, players, seed in [
        ("a", "greedy,random,planner", 1),
        ("b", "greedy,random,planner", 2),
        ("other", "greedy,random,random", 3),
        ("same", "greedy,random,planner", 1),
    ]:
        out[name] = root / name
        evaluate.main(["--players", players, "--seed", str(seed), *QUICK, "--out", str(out[name])])
    return out


def pairs_of(folder: Path) -> dict[tuple[str, str], dict]:
    summary = json.loads((folder / "summary.json").read_text())
    return {(p["a"], p["b"]): p for p in summary["pairs"]}


def test_one_evaluation_pools_to_its_own_intervals(runs: dict[str, Path]) -> None:
    _, pairs = pool_rounds.pool([str(runs["a"])])
    own = pairs_of(runs["a"])
    for a, b, mean, ci, p, rounds in pairs:
        assert mean == pytest.approx(own[(a, b)]["mean_diff"])
        assert ci == pytest.approx(own[(a, b)]["ci95"]) and p == pytest.approx(own[(a, b)]["p_value"])
        assert rounds == 2


def test_two_seeds_pool_every_round(runs: dict[str, Path]) -> None:
    _, pairs = pool_rounds.pool([str(runs["a"]), str(runs["b"])])
    first, second = pairs_of(runs["a"]), pairs_of(runs["b"])
    for a, b, mean, ci, _, rounds in pairs:  # two rounds each: the pooled mean is their mean
        assert rounds == 4
        assert mean == pytest.approx((first[(a, b)]["mean_diff"] + second[(a, b)]["mean_diff"]) / 2)
        assert ci[0] < mean < ci[1] and not math.isnan(ci[0])


def test_other_players_or_the_same_seed_are_refused_in_one_line(runs: dict[str, Path]) -> None:
    for folders, why in [(["a", "other"], "seats other players"), (["a", "same"], "share a seed")]:
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), *(str(runs[f]) for f in folders)], capture_output=True, text=True
        )
        assert proc.returncode == 2 and why in proc.stderr.strip().splitlines()[-1], proc.stderr
        assert "Traceback" not in proc.stderr
