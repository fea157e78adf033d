"""benchmarks/label_noise.py: the labels it computes, their summary, and its errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import label_noise  # noqa: E402

from shanghai_env.agents.bots.scorer import ScorerNet  # noqa: E402


def test_labels_are_seeded_and_their_noise_is_taken_out_of_the_spread() -> None:
    net = ScorerNet.load(ROOT / "models" / "shanghai.scorer")
    rows = label_noise.label_pairs(net, decisions=3, rollouts=2, seed=4)
    assert rows.shape == (3, 5)
    assert np.array_equal(rows, label_noise.label_pairs(net, decisions=3, rollouts=2, seed=4))
    assert (rows[:, [2, 4]] >= 0).all()  # standard errors
    # the summary's spread is the labels' variance less their mean squared standard error
    s = label_noise.summary(rows, boot=50)
    for name, col in (("true_state", 1), ("sampled_worlds", 3)):
        want = rows[:, col].var() - (rows[:, col + 1] ** 2).mean()
        assert s[name]["signal_var"] == pytest.approx(want)
        lo, hi = s[name]["signal_ci"]
        assert lo <= hi


def test_a_known_spread_is_recovered() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    value = rng.normal(scale=10.0, size=n)  # the moves' true spread: variance 100
    se = np.full(n, 20.0)
    rows = np.column_stack([value, value + rng.normal(scale=20.0, size=n), se, value, np.zeros(n)])
    s = label_noise.summary(rows, boot=200)
    assert s["true_state"]["signal_var"] == pytest.approx(100.0, abs=35.0)
    assert s["sampled_worlds"]["signal_var"] == pytest.approx(100.0, rel=0.1)
    lo, hi = s["true_state"]["signal_ci"]
    assert lo < 100.0 < hi


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--decisions", "1"], "--decisions"),
        (["--rollouts", "1"], "--rollouts"),
        (["--model", "nowhere.zip"], "--model"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], needle: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "label_noise.py"), *args], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert needle in proc.stderr.strip().splitlines()[-1]
