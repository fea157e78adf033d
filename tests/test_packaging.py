"""The wheel: one top-level package, the commands, the shipped model, usable outside a clone."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import shanghai_env

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "shanghai-train",
    "shanghai-train-rllib",
    "shanghai-train-scorer",
    "shanghai-evaluate",
    "shanghai-ladder",
    "shanghai-play",
    "shanghai-draw",
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (path,) = out.glob("*.whl")
    return path


def test_the_wheel_installs_only_shanghai_env(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"shanghai_env"}
    for needed in (
        "shanghai_env/py.typed",
        "shanghai_env/models/ppo_contract1.zip",
        "shanghai_env/models/ppo_contract1.json",
        "shanghai_env/models/shanghai_4p.zip",
        "shanghai_env/models/shanghai_4p.json",
        "shanghai_env/agents/learned/scorer.py",
        "shanghai_env/draw/replay.js",
        "shanghai_env/agents/bots/planner.py",
        "shanghai_env/agents/learned/train_cli.py",
        "shanghai_env/agents/arena/evaluate_cli.py",
    ):
        assert needed in names, needed
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert {line.split(" = ")[0] for line in text.splitlines() if " = " in line} == COMMANDS


def test_one_version_number() -> None:
    assert importlib.metadata.version("shanghai-env") == shanghai_env.__version__
    assert f"## {shanghai_env.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_the_installed_wheel_plays_a_tournament_with_the_shipped_model(wheel: Path, tmp_path: Path) -> None:
    """Installed apart from the clone, the wheel finds its own model by name and plays."""
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import shanghai_env, sys\n"
        f"assert shanghai_env.__file__.startswith({str(site)!r}), shanghai_env.__file__\n"
        "from shanghai_env.agents.arena.evaluate_cli import main\n"
        "s = main(['--players', 'ppo_contract1,greedy,greedy,greedy', '--contracts', '1', '--games', '4',\n"
        "          '--workers', '1', '--no-progress', '--quiet', '--out', 'out'])\n"
        "print(s.players[0].name, s.games)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["ppo_contract1", "24"]  # 4 games round up to a round of seat orders
    assert (tmp_path / "out" / "summary.json").is_file()
