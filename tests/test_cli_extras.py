"""A command whose extra is not installed says so in one line (exit 2), before any work.

Missing packages are simulated in a child process with ``sys.modules[name] = None``, which makes
both ``import name`` and ``importlib.util.find_spec(name)`` fail as if it were not installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shanghai_env.cli import EXTRA_MODULES, missing_modules, require_extra

ROOT = Path(__file__).resolve().parents[1]


def run_without(modules: list[str], call: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``call`` (Python) in a child where ``modules`` cannot be imported."""
    code = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules) + call
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def assert_one_line_naming(run: subprocess.CompletedProcess[str], command: str, extra: str) -> None:
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"{command} needs the '{extra}' extra")
    assert line.endswith(f'pip install "shanghai-env[{extra}]"')


@pytest.mark.parametrize(
    ("command", "extra", "call", "blocked"),
    [
        (
            "shanghai-evaluate",
            "eval",
            "from shanghai_env.agents.arena.evaluate_cli import cli\n"
            "sys.argv = ['shanghai-evaluate', '--players', 'greedy,greedy,greedy', '--games', '3']\ncli()",
            ["tqdm", "openskill"],
        ),
        (
            "shanghai-ladder",
            "eval",
            "from shanghai_env.agents.arena.ladder import cli\n"
            "sys.argv = ['shanghai-ladder', '--players', 'greedy,random,planner,search']\ncli()",
            ["openskill"],
        ),
        (
            "shanghai-train",
            "train",
            "from shanghai_env.agents.learned.train.cli import cli\n"
            "sys.argv = ['shanghai-train', 'sb3', '--timesteps', '10']\ncli()",
            ["torch", "stable_baselines3", "sb3_contrib"],
        ),
        (
            "shanghai-train rllib",
            "rllib",
            "from shanghai_env.agents.learned.train.cli import cli\n"
            "sys.argv = ['shanghai-train', 'rllib', '--timesteps', '1']\ncli()",
            ["ray"],
        ),
        (  # the one trainer command needs the train extra before any method's own
            "shanghai-train",
            "train",
            "from shanghai_env.agents.learned.train.cli import cli\n"
            "sys.argv = ['shanghai-train', 'rllib', '--timesteps', '1']\ncli()",
            ["sb3_contrib"],
        ),
    ],
)
def test_a_command_without_its_extra_prints_one_line_naming_it(
    command: str, extra: str, call: str, blocked: list[str], tmp_path: Path
) -> None:
    run = run_without(blocked, call, tmp_path)
    assert_one_line_naming(run, command, extra)
    for name in blocked:
        assert name in run.stderr
    assert not any(tmp_path.iterdir())  # nothing was started or written


def test_rllib_training_checks_the_export_packages_before_ray_starts(tmp_path: Path) -> None:
    """With Ray installed but sb3-contrib missing, shanghai-train rllib stops before ray.init."""
    pytest.importorskip("ray.rllib")
    call = (
        "import ray\n"
        "def no(*a, **k): raise SystemExit('ray.init was called')\n"
        "ray.init = no\n"
        "from shanghai_env.agents.learned.train.cli import main\n"
        "main(['rllib', '--timesteps', '1', '--out', 'out'])\n"
    )
    run = run_without(["sb3_contrib"], call, tmp_path)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "ray.init was called" not in run.stderr
    assert re.search(r"needs the 'rllib' extra \(not installed: sb3_contrib\)", run.stderr)


def test_require_extra_passes_when_everything_is_installed(capsys: pytest.CaptureFixture[str]) -> None:
    require_extra("x", "eval", ["sys", "json"])
    assert capsys.readouterr().err == ""
    assert missing_modules(["json", "no_such_module_anywhere"]) == ["no_such_module_anywhere"]


def test_the_extras_modules_match_pyproject() -> None:
    """EXTRA_MODULES names, by import name, every package pyproject.toml's extra installs."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, modules in EXTRA_MODULES.items():
        packages = {re.split(r"[\[<>=!~ ]", req)[0].lower().replace("-", "_") for req in extras[extra]}
        assert packages == set(modules) - {"torch"}, extra  # torch: installed first (README)


@pytest.mark.parametrize("extra", ["train", "rllib"])
def test_a_trainers_evaluation_needs_nothing_outside_its_extra(extra: str, tmp_path: Path) -> None:
    """The trainers evaluate against bots as they go and plot their curves: with every optional
    module outside the extra blocked, both evaluation paths and the plot still run."""
    blocked = sorted(set().union(*EXTRA_MODULES.values()) - set(EXTRA_MODULES[extra]))
    call = (
        "from shanghai_env.agents.learned.train.evaluation import evaluate\n"
        "from shanghai_env.agents.learned.train.run import plot_curve\n"
        "r = evaluate('greedy', 'random', players=3, contracts=(1,), games=6, seed=1)\n"
        "import matplotlib\n"
        "print(r['diff'] < 0, r['games'])\n"
    )
    run = run_without(blocked, call, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "6.0"]
