"""benchmarks/training.py: a tiny run of each kind of games it times (this process, worker
processes), and its command line's errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "training.py"


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--seconds", "0.2", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_trainers_games_are_timed_in_this_process_and_in_workers(workers):
    done = bench("--steps", "256", "--num-envs", "4", "--env-workers", workers, "--only", "dmc_self_play")
    assert done.returncode == 0, done.stderr
    assert f"4 games, {workers} process(es)" in done.stdout
    row = re.search(r"dmc_self_play\s+[\d,]+ learner steps/s\s+\| games\s+(\d+)%", done.stdout)
    assert row, done.stdout
    assert int(row.group(1)) > 0  # stepping the games was timed, wherever they ran


@pytest.mark.parametrize(
    "name",
    [
        "ppo_facts_move_net",
        "dmc_facts_lambda_move_net",
        "dagger_shanghai_facts_move_net",
        "sb3_vs_3_greedy",
        "sb3_self_play",
    ],
)
def test_the_from_scratch_players_configurations_run(name):
    done = bench("--steps", "256", "--num-envs", "4", "--only", name)
    assert done.returncode == 0, done.stderr
    assert re.search(rf"{name}\s+[\d,]+ learner steps/s", done.stdout), done.stdout
    assert re.search(rf"{name}\s+[\d.]+% of env\(\)", done.stdout), done.stdout
    if name.startswith("dagger"):
        assert re.search(rf"{name}.*the teacher\s+[1-9]\d*%", done.stdout), done.stdout
    if name.startswith("sb3"):  # the batched games' steps (the other seats inside) are timed
        assert re.search(rf"{name}.*games\s+[1-9]\d*%", done.stdout), done.stdout


def test_sb3_is_measured_against_ppo_in_the_same_run():
    done = bench("--steps", "256", "--num-envs", "4", "--only", "ppo_self_play", "--only", "sb3_self_play")
    assert done.returncode == 0, done.stderr
    share = r"sb3_self_play\s+[\d.]+% of ppo's learner steps/s on the same table"
    assert re.search(share, done.stdout), done.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--num-envs", "0"], "--num-envs"),
        (["--num-envs", "128", "--steps", "4096"], "--steps: at least 8192"),
        (["--seconds", "0"], "--seconds"),
    ],
)
def test_bad_options_give_one_line_and_exit_2(args, needle):
    done = bench(*args)
    assert done.returncode == 2
    assert needle in done.stderr and "Traceback" not in done.stderr


def test_the_cpu_clock_times_this_process():
    done = bench("--steps", "256", "--num-envs", "4", "--clock", "cpu", "--only", "ppo_self_play")
    assert done.returncode == 0, done.stderr
    assert "cpu time" in done.stdout
    assert re.search(r"ppo_self_play\s+[\d.]+% of env\(\)", done.stdout), done.stdout
    refused = bench("--clock", "cpu", "--env-workers", "2")
    assert refused.returncode == 2 and "--clock cpu" in refused.stderr
