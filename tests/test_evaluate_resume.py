"""A stopped evaluation resumes: the games played are kept in ``--out`` batch by batch, the same
command plays only the others, and the outputs are those of an evaluation never stopped."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shanghai_env.agents.arena import evaluate_cli as evaluate
from shanghai_env.agents.arena.played import PlayedGames, evaluation_key, played_path
from shanghai_env.agents.arena.tournament import GameResult, TournamentConfig, run_tournament
from shanghai_env.agents.registry import player_pin

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = "greedy,random,planner"
ARGS = [
    "--players",
    PLAYERS,
    "--games",
    "18",
    "--seed",
    "41",
    "--contracts",
    "1,2",
    "--no-progress",
    "--quiet",
]


def config() -> TournamentConfig:
    return TournamentConfig(players=tuple(PLAYERS.split(",")), games=18, seed=41, contracts=(1, 2))


def pins() -> list[dict]:
    return [player_pin(p) for p in PLAYERS.split(",")]


def untimed(games: list[GameResult]) -> list[GameResult]:
    """The games without the seconds each took (the one thing a game does not repeat)."""
    return [dataclasses.replace(g, seconds=0.0) for g in games]


def played_files(out: Path) -> list[Path]:
    return sorted(out.glob("played-*.jsonl"))


def test_run_tournament_keeps_the_games_played_and_plays_the_others() -> None:
    whole = run_tournament(config(), workers=1)
    batches: list[list] = []
    rest = run_tournament(config(), workers=1, played=whole[:7], on_games=batches.append)
    assert untimed(rest) == untimed(whole)
    assert sorted(r.index for b in batches for r in b) == list(range(7, 18))  # only those are played


def test_run_tournament_refuses_games_not_of_its_schedule() -> None:
    whole = run_tournament(config(), workers=1)
    with pytest.raises(ValueError, match="distinct games"):
        run_tournament(config(), workers=1, played=[whole[0], whole[0]])


def test_a_resumed_evaluation_writes_what_an_unstopped_one_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluate.main([*ARGS, "--workers", "1", "--out", str(tmp_path / "whole")])
    assert played_files(tmp_path / "whole") == []  # removed once the outputs are written
    # a stop after two batches: the file as the first sitting left it
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    games = run_tournament(config(), workers=1)
    played = PlayedGames.open(str(stopped), config(), pins())
    played.add(games[:6], 1.5)
    played.add(games[9:12], 0.5)
    capsys.readouterr()
    evaluate.main([*ARGS[:-1], "--workers", "2", "--out", str(stopped)])  # not --quiet: it says so
    assert f"resuming: 9 of 18 games were played already ({played.path})" in capsys.readouterr().err
    assert (stopped / "games.csv").read_text() == (tmp_path / "whole" / "games.csv").read_text()
    a = json.loads((tmp_path / "whole" / "summary.json").read_text())
    b = json.loads((stopped / "summary.json").read_text())
    assert a["players"] == b["players"] and a["pairs"] == b["pairs"]
    assert b["seconds"] > 2.0  # the wall time of every sitting
    assert played_files(stopped) == []


def test_a_batch_cut_short_by_a_kill_is_dropped_and_played_again(tmp_path: Path) -> None:
    games = run_tournament(config(), workers=1)
    played = PlayedGames.open(str(tmp_path), config(), pins())
    played.add(games[:3], 1.0)
    played.add(games[3:6], 1.0)
    text = Path(played.path).read_text()
    Path(played.path).write_text(text[: len(text) - 40])  # the second batch's line, cut
    again = PlayedGames.open(str(tmp_path), config(), pins())
    assert again.games == games[:3] and again.seconds == 1.0
    assert Path(played.path).read_text() == text[: text.index("\n", text.index("\n") + 1) + 1]
    evaluate.main([*ARGS, "--workers", "1", "--out", str(tmp_path)])
    assert json.loads((tmp_path / "summary.json").read_text())["games"] == 18


def test_a_damaged_file_is_refused_with_one_line_naming_it(tmp_path: Path) -> None:
    games = run_tournament(config(), workers=1)
    played = PlayedGames.open(str(tmp_path), config(), pins())
    played.add(games[:3], 1.0)
    lines = Path(played.path).read_text().splitlines(keepends=True)
    Path(played.path).write_text(lines[0] + "not json\n" + lines[1])
    before = Path(played.path).read_text()
    proc = subprocess.run(
        [sys.executable, "evaluate.py", *ARGS, "--workers", "1", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "argument --out:" in last and played.path in last and "is damaged" in last, proc.stderr
    assert "Traceback" not in proc.stderr
    assert Path(played.path).read_text() == before  # left as it was
    assert not (tmp_path / "summary.json").exists()


def test_games_of_another_schedule_are_refused(tmp_path: Path) -> None:
    other = run_tournament(
        TournamentConfig(players=("greedy", "random", "planner"), games=18, seed=42), workers=1
    )
    played = PlayedGames.open(str(tmp_path), config(), pins())
    played.add(other[:3], 1.0)
    with pytest.raises(ValueError, match="not one this evaluation schedules"):
        PlayedGames.open(str(tmp_path), config(), pins())


def test_anything_that_decides_the_games_gives_another_file() -> None:
    base = evaluation_key(config(), pins())
    keys = [
        evaluation_key(
            TournamentConfig(players=("greedy", "random", "planner"), games=18, seed=42, contracts=(1, 2)),
            pins(),
        ),
        evaluation_key(
            TournamentConfig(players=("random", "greedy", "planner"), games=18, seed=41, contracts=(1, 2)),
            pins(),
        ),
        evaluation_key(
            TournamentConfig(players=("greedy", "random", "planner"), games=24, seed=41, contracts=(1, 2)),
            pins(),
        ),
        evaluation_key(
            TournamentConfig(players=("greedy", "random", "planner"), games=18, seed=41, contracts=(1,)),
            pins(),
        ),
        evaluation_key(config(), [*pins()[:2], {**pins()[2], "source_sha256": "0" * 64}]),  # changed code
    ]
    paths = {played_path("out", k) for k in [base, *keys]}
    assert len(paths) == 6


def test_ctrl_c_says_where_the_games_are_kept_and_the_same_command_resumes(tmp_path: Path) -> None:
    argv = [sys.executable, "evaluate.py", "--players", "scratch,planner,planner", "--games", "600"]
    argv += ["--seed", "3", "--workers", "1", "--no-progress", "--quiet", "--out", str(tmp_path)]
    proc = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(
        f.read_text().count("\n") > 1 for f in played_files(tmp_path)
    ):  # the first batch is kept
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    (kept,) = played_files(tmp_path)
    assert f"games are kept in {kept}: the same command plays the others" in err
    assert PlayedGames.open(
        str(tmp_path),
        TournamentConfig(("scratch", "planner", "planner"), 600, 3),
        [player_pin(p) for p in ("scratch", "planner", "planner")],
    ).games
