"""benchmarks/habits.py: what it counts, and its errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import habits  # noqa: E402


def test_it_counts_every_deal_of_every_seat():
    seen = habits.play("greedy", "random", games=1, players=3, seed=5)
    assert len(seen["player"]["down"]) == 10 and len(seen["opponents"]["down"]) == 20  # ten deals
    assert len(seen["player"]["score"]) == 10
    # exactly one seat goes out of a deal that did not run the stock dry
    outs = sum(seen["player"]["out"]) + sum(seen["opponents"]["out"])
    assert 0 < outs <= 10
    # greedy goes down more often than random players, who rarely complete a contract
    assert sum(seen["player"]["down"]) / 10 > sum(seen["opponents"]["down"]) / 20
    # a deal it went down in is one it could; greedy goes down on every turn it can
    for side in ("player", "opponents"):
        assert all(c >= d for c, d in zip(seen[side]["could"], seen[side]["down"]))
    assert seen["player"]["go_down"] and all(seen["player"]["go_down"])
    # random players let needed cards go far more often than greedy, which keeps what the contract needs
    mine, theirs = seen["player"]["discard_needed"], seen["opponents"]["discard_needed"]
    assert mine and theirs and sum(mine) / len(mine) < sum(theirs) / len(theirs)
    table = habits.report(seen, "greedy", "random")
    assert table.count("\n") == len(habits.ROWS) + 1 and "went out (share of deals)" in table


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--player", "nobody"], "unknown player"), (["--player", "greedy", "--games", "0"], "--games")],
)
def test_bad_options_exit_2_without_a_traceback(args, needle):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "habits.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr
