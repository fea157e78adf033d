"""The docs stay short and their links resolve; docs/training.md's flag lists are generated from the
trainer's ``--help`` (``python tests/test_docs.py`` rewrites them) and must match it."""

from __future__ import annotations

import contextlib
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


if __name__ == "__main__":
    TRAINING.write_text(rewrite(TRAINING.read_text(encoding="utf-8"), generated_blocks()), encoding="utf-8")
    print("docs/training.md: flag lists rewritten from shanghai-train's --help")
