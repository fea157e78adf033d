"""The wheel: one top-level package, the commands, the shipped models, usable outside a clone.

agents/ and models/ sit at the repository root and install as ``shanghai_env.agents`` and
``shanghai_env.models`` through setuptools' ``package-dir``, with no symbolic links: a clone made
where git writes no links (``core.symlinks=false``, e.g. Windows) imports and builds the same wheel.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import shanghai_env

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "shanghai-train",
    "shanghai-evaluate",
    "shanghai-ladder",
    "shanghai-play",
    "shanghai-draw",
}
IN_GIT = shutil.which("git") is not None and (ROOT / ".git").exists()


def build_wheel(source: Path, out: Path) -> Path:
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (path,) = out.glob("*.whl")
    return path


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree as git checks it out where it makes no links (``core.symlinks=false``):
    a clone of the committed tree, then the uncommitted changes and new files on top."""
    if not IN_GIT:
        pytest.skip("not a git checkout")
    clone = tmp_path_factory.mktemp("clone") / "shanghai-env"

    def git(*args: str, cwd: Path = ROOT, stdin: bytes | None = None) -> bytes:
        return subprocess.run(["git", *args], cwd=cwd, input=stdin, check=True, capture_output=True).stdout

    git("clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(clone))
    changes = git("diff", "HEAD", "--binary")
    if changes:
        git("apply", "--whitespace=nowarn", cwd=clone, stdin=changes)
    for name in git("ls-files", "--others", "--exclude-standard", "-z").decode().split("\0"):
        if name:
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    return clone


@pytest.fixture(scope="module")
def wheel(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this working tree, built in a checkout without links (from the tree itself
    outside git)."""
    source = request.getfixturevalue("checkout") if IN_GIT else ROOT
    return build_wheel(source, tmp_path_factory.mktemp("wheel"))


def wheel_files(wheel: Path) -> list[str]:
    return zipfile.ZipFile(wheel).namelist()


@pytest.mark.skipif(not IN_GIT, reason="not a git checkout")
def test_git_tracks_no_symbolic_links() -> None:
    listing = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    links = [line.split("\t", 1)[1] for line in listing.splitlines() if line.startswith("120000 ")]
    assert links == []


def test_a_checkout_without_links_imports_the_players_from_its_own_folders(checkout: Path) -> None:
    """Run from the checkout as it is (no install): shanghai_env.agents and the models are its own."""
    code = (
        "import shanghai_env.agents.registry as r, shanghai_env.models as m\n"
        "print(r.__file__); print(m.__file__); print(sorted(r.shipped_models()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    run = subprocess.run([sys.executable, "-c", code], cwd=checkout, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    registry, models, names = run.stdout.splitlines()
    assert Path(registry) == checkout / "agents" / "registry.py"
    assert Path(models) == checkout / "models" / "__init__.py"
    assert names == str(
        [
            "scratch",
            "scratch_4p",
            "scratch_contract1",
            "shanghai",
            "shanghai_4p",
        ]
    )


def test_every_module_of_agents_is_in_the_wheel(wheel: Path) -> None:
    """pyproject.toml lists the packages under agents/ one by one: a new folder must be added there."""
    names = set(wheel_files(wheel))
    missing = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "agents").rglob("*.py")
        if "__pycache__" not in path.parts
        and f"shanghai_env/agents/{path.relative_to(ROOT / 'agents').as_posix()}" not in names
    ]
    assert missing == []


def test_the_wheel_installs_only_shanghai_env(wheel: Path) -> None:
    names = wheel_files(wheel)
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"shanghai_env"}
    for needed in (
        "shanghai_env/py.typed",
        "shanghai_env/models/shanghai_4p.scorer",
        "shanghai_env/models/shanghai_4p.json",
        "shanghai_env/models/shanghai.scorer",
        "shanghai_env/models/shanghai.json",
        "shanghai_env/models/scratch.pt",
        "shanghai_env/models/scratch.json",
        "shanghai_env/models/scratch_4p.pt",
        "shanghai_env/models/scratch_4p.json",
        "shanghai_env/models/scratch_contract1.pt",
        "shanghai_env/models/scratch_contract1.json",
        "shanghai_env/models/__init__.py",
        "shanghai_env/docs/rules.md",
        "shanghai_env/agents/bots/scorer.py",
        "shanghai_env/draw/replay.js",
        "shanghai_env/agents/bots/planner.py",
        "shanghai_env/agents/learned/train/methods/sb3.py",
        "shanghai_env/agents/arena/evaluate_cli.py",
    ):
        assert needed in names, needed
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert {line.split(" = ")[0] for line in text.splitlines() if " = " in line} == COMMANDS


def test_one_version_number() -> None:
    assert importlib.metadata.version("shanghai-env") == shanghai_env.__version__
    assert f"## {shanghai_env.__version__}" in (ROOT / "CHANGELOG.md").read_text()


def test_the_citation_names_this_version() -> None:
    """CITATION.cff (Citation File Format 1.2.0) and the README's BibTeX cite the version the
    package has, under the license and authors of pyproject.toml."""
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(
        (key, value.strip().strip('"'))
        for key, value in re.findall(r"^([a-z-]+):(.*)$", cff, flags=re.MULTILINE)
    )
    assert fields["cff-version"] == "1.2.0"
    assert fields["title"] == "shanghai-env" and fields["type"] == "software"
    assert fields["version"] == shanghai_env.__version__
    assert fields["license"] == "MIT" and fields["abstract"]
    assert '  - name: "The shanghai-env authors"' in cff.splitlines()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = "MIT"' in pyproject and '{ name = "The shanghai-env authors" }' in pyproject
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    citing = readme.split("\n## Citing\n", 1)[1]
    assert "[CITATION.cff](CITATION.cff)" in citing
    bibtex = re.search(r"```bibtex\n(@software\{.*?\n\})\n```", citing, flags=re.S)
    assert bibtex, "no BibTeX entry in the README's Citing section"
    assert f"version = {{{shanghai_env.__version__}}}," in " ".join(bibtex.group(1).split())
    assert "author = {{The shanghai-env authors}}," in " ".join(bibtex.group(1).split())


def test_the_installed_wheel_plays_a_tournament_with_the_shipped_model(wheel: Path, tmp_path: Path) -> None:
    """Installed apart from the clone, the wheel finds its own model by name and plays."""
    pytest.importorskip("torch", reason="scratch_contract1 plays with the 'train' extra")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import shanghai_env, sys\n"
        f"assert shanghai_env.__file__.startswith({str(site)!r}), shanghai_env.__file__\n"
        "from shanghai_env.agents.registry import check_player, shipped_models\n"
        "assert all(p.startswith(sys.argv[1]) for p in shipped_models().values()), shipped_models()\n"
        "check_player('shanghai_4p'), check_player('scratch_contract1')\n"
        "from shanghai_env.agents.ui.terminal import rule_book\n"
        "assert rule_book().startswith(sys.argv[1]) and open(rule_book()).read().startswith('# Shanghai')\n"
        "from shanghai_env.agents.arena.evaluate_cli import main\n"
        "s = main(['--players', 'scratch_contract1,greedy,greedy,greedy', '--contracts', '1',\n"
        "          '--games', '4', '--workers', '1', '--no-progress', '--quiet', '--out', 'out'])\n"
        "print(s.players[0].name, s.games)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run(
        [sys.executable, "-c", code, str(site)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["scratch_contract1", "24"]  # 4 games round up to a round of seat orders
    assert (tmp_path / "out" / "summary.json").is_file()


def test_the_terminal_games_help_names_the_rule_book_of_this_install() -> None:
    from shanghai_env.agents.ui.terminal import HELP, rule_book

    assert Path(rule_book()) == ROOT / "docs" / "rules.md"
    assert str(ROOT / "docs" / "rules.md") in HELP.format(rules=rule_book())
