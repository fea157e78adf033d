"""The docs stay short and their links resolve; the modules, names and files they cite exist;
docs/training.md's flag lists are generated from the trainer's ``--help`` (``python
tests/test_docs.py`` rewrites them) and must match it."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import re
import runpy
import sys
import textwrap
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parent.parent
TRAINING = ROOT / "docs" / "training.md"
# the blocks of docs/training.md and the trainer command line whose --help each is generated from
HELPS: dict[str, list[str]] = {
    "run": ["ppo"],  # the options every method of the one loop shares, listed once
    "ppo": ["ppo"],
    "dmc": ["dmc"],
    "dagger": ["dagger"],
    "sb3": ["sb3"],
    "scorer": ["scorer"],
    "scorer gen": ["scorer", "gen"],
    "scorer fit": ["scorer", "fit"],
    "exit": ["exit"],
}
SHARED_GROUP = "the run (every method)"
BLOCK = re.compile(r"(<!-- flags: (?P<name>[a-z0-9 ]+) -->\n)(?P<body>.*?)(<!-- /flags -->)", flags=re.S)


def help_text(argv: list[str]) -> str:
    """``shanghai-train ARGV --help`` as this clone's train.py prints it (wide, so that no entry
    wraps), run in this process: the trainer's modules are imported once for every block."""
    out = io.StringIO()
    with (
        mock.patch.dict(os.environ, {"COLUMNS": "400"}),
        mock.patch.object(sys, "argv", ["train.py", *argv, "--help"]),
        contextlib.redirect_stdout(out),
        pytest.raises(SystemExit) as done,
    ):
        runpy.run_path(str(ROOT / "train.py"), run_name="__main__")
    assert done.value.code in (0, None), out.getvalue()
    return out.getvalue()


def option_groups(text: str) -> dict[str, list[tuple[str, str]]]:
    """An argparse help's option groups: each group's (flags, help) entries, ``--help`` left out."""
    groups: dict[str, list[tuple[str, str]]] = {}
    entries: list[list[str]] | None = None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            entries = []
            groups[line[:-1]] = entries  # type: ignore[assignment]
        elif entries is not None and re.match(r"^  -", line):
            spec, _, rest = line.strip().partition("  ")
            entries.append([spec, rest.strip()])
        elif entries is not None and line.strip() and entries:
            entries[-1][1] = f"{entries[-1][1]} {line.strip()}".strip()
    return {
        name: [(spec, words) for spec, words in items if not spec.startswith("-h")]  # type: ignore[misc]
        for name, items in groups.items()
        if any(not spec.startswith("-h") for spec, _ in items)  # type: ignore[misc]
    }


def render(entries: list[tuple[str, str]]) -> str:
    """One bullet per option that the help explains; options with only a default (or nothing) to
    say run together in one wrapped bullet, so that a method's list stays short."""
    bullets: list[str] = []
    terse: list[str] = []
    for spec, words in entries:
        words = words.replace("|", "\\|")
        if not words or words.startswith("("):
            terse.append(f"`{spec}`" + (f" {words}" if words else ""))
            continue
        if terse:
            bullets.append(" · ".join(terse))
            terse = []
        bullets.append(f"`{spec}`: {words}")
    if terse:
        bullets.append(" · ".join(terse))
    wrap = textwrap.TextWrapper(
        width=100, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False
    )
    return "".join(wrap.fill(bullet) + "\n" for bullet in bullets)


def generated_blocks() -> dict[str, str]:
    texts = {" ".join(argv): help_text(argv) for argv in {tuple(v): None for v in HELPS.values()}}
    blocks = {}
    for name, argv in HELPS.items():
        groups = option_groups(texts[" ".join(argv)])
        if name == "run":
            blocks[name] = render(groups[SHARED_GROUP])
            continue
        shared = option_groups(texts["ppo"])[SHARED_GROUP]
        own = [e for g, items in groups.items() if (g, items) != (SHARED_GROUP, shared) for e in items]
        blocks[name] = render(own)
    return blocks


def rewrite(text: str, blocks: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        return match.group(1) + blocks[match.group("name")] + match.group(4)

    return BLOCK.sub(one, text)


def test_the_flag_lists_are_the_trainers_help() -> None:
    pytest.importorskip("torch", reason="the trainer's --help needs the 'train' extra")
    text = TRAINING.read_text(encoding="utf-8")
    assert sorted(m.group("name") for m in BLOCK.finditer(text)) == sorted(HELPS)
    assert rewrite(text, generated_blocks()) == text, (
        "docs/training.md's flag lists differ from shanghai-train's --help: run python tests/test_docs.py"
    )


@pytest.mark.parametrize(("doc", "most"), [("README.md", 250), ("docs/training.md", 500)])
def test_the_guides_stay_short(doc: str, most: int) -> None:
    assert len((ROOT / doc).read_text(encoding="utf-8").splitlines()) <= most


def test_each_leaderboard_fits_a_screen() -> None:
    text = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    boards = text.split("## Leaderboards", 1)[1].split("\n## ", 1)[0].split("\n### ")[1:]
    assert len(boards) >= 3
    for board in boards:
        rows = [line for line in board.splitlines() if line.startswith("|")]
        assert 3 <= len(rows) <= 25, board.splitlines()[0]
        assert "not played on the task" not in board


def test_every_local_link_and_picture_of_the_docs_exists() -> None:
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{doc.name} links {target}, which does not exist"


def test_every_picture_in_docs_is_shown_by_a_doc() -> None:
    docs = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    texts = "\n".join(doc.read_text(encoding="utf-8") for doc in docs)
    for picture in sorted((ROOT / "docs").glob("*.png")):
        assert picture.name in texts, f"docs/{picture.name} is shown by no doc"


# what the docs cite: a dotted name under shanghai_env (a module, or a name in one; ``module:factory``
# as the command lines take it, ``<N>`` standing for a number) and a file of the repository
CITED_NAME = re.compile(r"\bshanghai_env(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*(?:<N>)?)?")
CITED_FILE = re.compile(r"(?<![\w/.-])(?:agents|shanghai_env|benchmarks|examples|models|tests)/[\w/.-]*\w")
PLACEHOLDER = re.compile(r"\b[A-Z]{2,}\b")  # models/NAME.json, game-NNNNN.json


def guides() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def cited(pattern: re.Pattern[str]) -> dict[str, str]:
    """Everything ``pattern`` finds in the README and docs/ (code blocks included), with the first
    guide that cites it."""
    found: dict[str, str] = {}
    for doc in guides():
        for name in pattern.findall(doc.read_text(encoding="utf-8")):
            found.setdefault(name, doc.name)
    return found


def name_problem(name: str) -> str | None:
    """Why a cited ``shanghai_env`` name does not resolve (None when it does). A module that needs
    an optional package not installed here (ray, for the RLlib env) is only found, not imported."""
    module, _, factory = name.partition(":")
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(head) is None:
                continue
        except ModuleNotFoundError:
            continue
        try:
            obj: object = importlib.import_module(head)
        except ModuleNotFoundError as err:
            if err.name and not err.name.startswith("shanghai_env"):
                return None  # the module is there; what it needs is an extra not installed here
            raise
        for attr in [*parts[cut:], *([factory.replace("<N>", "8")] if factory else [])]:
            if not hasattr(obj, attr):
                return f"{head} has no {attr!r}"
            obj = getattr(obj, attr)
        return None
    return "no such module"


def test_every_module_and_name_the_docs_cite_exists() -> None:
    """A module moved (shanghai_env.agents.play to agents.ui.terminal, agents.search to
    agents.bots.search, ...) leaves no doc naming the old place: imports and module:factory names
    copied from the docs work."""
    names = cited(CITED_NAME)
    assert len(names) > 20
    bad = [f"{doc}: {name} ({problem})" for name, doc in names.items() if (problem := name_problem(name))]
    assert not bad, bad


def test_every_repository_file_the_docs_cite_exists() -> None:
    """A file moved (agents/learned/scorer.py to agents/bots/scorer.py, ...) leaves no doc
    pointing at the old place."""
    files = cited(CITED_FILE)
    assert len(files) > 20
    missing = {path: doc for path, doc in files.items() if not (ROOT / path).exists()}
    bad = [f"{doc}: {path}" for path, doc in missing.items() if not PLACEHOLDER.search(path)]
    assert not bad, bad


if __name__ == "__main__":
    TRAINING.write_text(rewrite(TRAINING.read_text(encoding="utf-8"), generated_blocks()), encoding="utf-8")
    print("docs/training.md: flag lists rewritten from shanghai-train's --help")
