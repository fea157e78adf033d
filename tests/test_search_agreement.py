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


def test_the_oracle_values_a_players_departures_and_a_network_departs_nowhere_from_itself() -> None:
    """benchmarks/search_oracle.py takes any player as the one asked: the network itself never
    departs from its own moves, so nothing is valued; parameters are a search's only."""
    out = run("search_oracle.py", "--players", "3", "--games", "1", "--truth", "2", "--searchers", "scratch")
    line = next(x for x in out.splitlines() if x.startswith("scratch:"))
    assert "asked and 0.0 switched a game" in line and "+0.0 points a game" in line
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "search_oracle.py"),
            "--searchers",
            "greedy",
            "--options",
            "worlds=8",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode != 0 and "need a search over a network" in done.stderr


def test_network_drift_a_network_against_itself_changes_no_move_and_values_as_itself() -> None:
    """benchmarks/network_drift.py: a network compared with itself picks another move nowhere, and
    its values line is the reference's, game for game (the same seeds); a network made for another
    table is refused in one line."""
    out = run("network_drift.py", "--games", "1", "--networks", "scratch")
    values = [x for x in out.splitlines() if x.startswith("  scratch:") and "turn starts" in x]
    assert len(values) == 2 and values[0] == values[1]
    moves = next(x for x in out.splitlines() if x.startswith("  scratch: close"))
    assert moves.count(" 0.0000 of ") == 3
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "network_drift.py"), "--networks", "scratch_4p"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) <= 3
    assert "trained for 4 players" in done.stderr and "Traceback" not in done.stderr
