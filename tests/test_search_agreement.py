"""benchmarks/search_agreement.py and benchmarks/evaluation.py at smoke size: what they print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import search_agreement  # noqa: E402


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_searched_network_follows_none_of_the_switches_and_keeps_every_prior() -> None:
    """Over its own network the search's calls are scored by construction: follows 0, keeps 1."""
    out = run("search_agreement.py", "--games", "1", "--share", "0.1", "--networks", "scratch")
    assert "close calls searched" in out
    line = next(x for x in out.splitlines() if x.startswith("scratch:"))
    assert "follows 0.000" in line and "keeps 1.000" in line


def test_wilson_interval() -> None:
    low, high = search_agreement.wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert search_agreement.wilson(0, 10)[0] == 0.0 and search_agreement.wilson(10, 10)[1] == 1.0


def test_the_evaluation_benchmark_plays_the_same_games_both_ways() -> None:
    out = run(
        "evaluation.py",
        "--players",
        "scratch_contract1,greedy,greedy,planner",
        "--contracts",
        "1",
        "--games",
        "24",
        "--rounds",
        "1",
    )
    assert "the same games: True" in out
