"""Every shipped player is made by the commands in its card: each card's commands run here in a tiny
version (the same programs, options and chain of files, with budgets cut to seconds), and what the
last one writes loads as a player of the card's table.

A card's command names the one trainer (``shanghai-train METHOD ...``) or copies a file (``cp``);
a command that a later version no longer accepts fails this test, so a card cannot go stale.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from shanghai_env.agents.learned.train import cli
from shanghai_env.agents.registry import make_agent

pytest.importorskip("torch", reason="the trainer needs the train extra")

from shanghai_env.agents.learned.train.methods.scorer import STAGES  # after the skip: it imports torch

ROOT = Path(__file__).resolve().parents[1]
CARDS = sorted(p.stem for p in (ROOT / "models").glob("*.json"))

# option -> the tiny value (None: drop the option); budgets in seconds become one game
TINY = {
    "--timesteps": "1024",
    "--num-envs": "4",
    "--eval-every": "0",
    "--eval-games": "0",
    "--checkpoint-every": "1024",
    "--games": "1",
    "--workers": "1",
    "--rollouts": "1",
    "--epochs": "1",
    "--value-discards": "2",
    "--seconds": None,
    "--generation-games": "1",  # exit: one game a generation, searched in two worlds, here
    "--worlds": "2",
    "--env-workers": "1",
}


def tiny(command: str, tmp: Path) -> list[str]:
    """The command's words with runs/ under ``tmp``, shipped files from the checkout and each
    budget cut; a scorer stage given seconds plays one game instead."""
    words = shlex.split(command, comments=True)
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in TINY:
            if TINY[word] is None:
                out += ["--games", "1"] if "--games" not in words else []
            else:
                out += [word, TINY[word]]
            i += 2
            continue
        if word.startswith("runs/"):
            word = str(tmp / word)
        elif word.startswith("models/"):
            word = str(ROOT / word)
        out.append(word)
        i += 1
    if "--tables" in out:  # games at several sizes: at least one of each in the tiny batch
        sizes = len(out[out.index("--tables") + 1].split(","))
        out[out.index("--num-envs") + 1] = str(max(int(TINY["--num-envs"] or 0), sizes))
    return out


def copy(source: str, dest: str, tmp: Path) -> str:
    """``cp``: a kept player of a step the tiny run did not reach is its run's last player."""
    src = Path(source)
    if not src.exists() and src.parent.name == "players":
        kept = sorted(src.parent.glob("model_*.pt")) or [src.parent.parent / "model.pt"]
        src = kept[-1]
    target = tmp / "models" / Path(dest).name if dest.startswith(str(ROOT)) else Path(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, target)
    return str(target)


@pytest.mark.parametrize("name", CARDS)
def test_the_cards_commands_make_a_player_in_a_tiny_version(name: str, tmp_path: Path) -> None:
    card = json.loads((ROOT / "models" / f"{name}.json").read_text(encoding="utf-8"))
    commands = card["commands"]
    assert commands, f"{name}'s card names no commands"
    made = ""
    for command in commands:
        words = tiny(command, tmp_path)
        if words[0] == "cp":
            made = copy(words[1], words[2], tmp_path)
            continue
        assert words[0] == "shanghai-train", f"{name}: {command!r} is not the one trainer"
        argv = words[1:]
        stage = argv[0] == "scorer" and argv[1] in STAGES  # gen, fit...: no progress bar
        if argv[0] in cli.METHODS and not stage and "--no-progress" not in argv:
            argv.append("--no-progress")
        assert cli.main(argv) == 0, f"{name}: {shlex.join(words)}"
    assert made.endswith(Path(card.get("file", f"{name}.zip")).suffix), made
    player = make_agent(made, seed=0)  # the file the chain made plays
    assert player.name
