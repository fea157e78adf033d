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

import processes
import pytest

from shanghai_env.agents.arena import evaluate_cli as evaluate
from shanghai_env.agents.arena.stored_games import append_games, played_path, read_games
from shanghai_env.agents.arena.tournament import GameResult, TournamentConfig, run_tournament
from shanghai_env.agents.registry import player_pin

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("greedy", "random", "planner")
ARGS = [
    "--players",
    ",".join(PLAYERS),
    "--games",
    "18",
    "--seed",
    "41",
    "--contracts",
    "1,2",
    "--no-progress",
]


def config(**changes: object) -> TournamentConfig:
    return dataclasses.replace(
        TournamentConfig(players=PLAYERS, games=18, seed=41, contracts=(1, 2)), **changes
    )


def pins(players: tuple[str, ...] = PLAYERS) -> list[dict]:
    return [player_pin(p) for p in players]


def untimed(games: list[GameResult]) -> list[GameResult]:
    """The games without the seconds each took (the one thing a game does not repeat)."""
    return [dataclasses.replace(g, seconds=0.0) for g in games]


def played_files(out: Path) -> list[Path]:
    return sorted(out.glob("played-*.jsonl"))


def test_run_tournament_keeps_the_games_played_and_plays_the_others() -> None:
    whole = run_tournament(config(), workers=1)
    batches: list[list[GameResult]] = []
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
    evaluate.main([*ARGS, "--quiet", "--workers", "1", "--out", str(tmp_path / "whole")])
    assert played_files(tmp_path / "whole") == []  # removed once the outputs are written
    # a stop after two batches: the file as the first sitting left it
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    games = run_tournament(config(), workers=1)
    path = played_path(str(stopped), config(), pins())
    append_games(path, games[:6])
    append_games(path, games[9:12])
    capsys.readouterr()
    evaluate.main([*ARGS, "--workers", "2", "--out", str(stopped)])
    assert f"resuming: 9 of 18 games were played already ({path})" in capsys.readouterr().err
    assert (stopped / "games.csv").read_text() == (tmp_path / "whole" / "games.csv").read_text()
    a = json.loads((tmp_path / "whole" / "summary.json").read_text())
    b = json.loads((stopped / "summary.json").read_text())
    assert a["players"] == b["players"] and a["pairs"] == b["pairs"]
    assert b["extra"] == {"resumed_games": 9} and a["extra"] == {}
    assert played_files(stopped) == []


def test_a_batch_cut_short_by_a_kill_is_dropped_and_played_again(tmp_path: Path) -> None:
    games = run_tournament(config(), workers=1)
    path = played_path(str(tmp_path), config(), pins())
    append_games(path, games[:3])
    whole = Path(path).read_text()
    append_games(path, games[3:6])
    Path(path).write_text(Path(path).read_text()[:-40])  # the second batch's last line, cut
    kept, cut = read_games(path, config())
    assert untimed(kept) == untimed(games[:5]) and cut is not None
    evaluate.main([*ARGS, "--quiet", "--workers", "1", "--out", str(tmp_path)])
    assert json.loads((tmp_path / "summary.json").read_text())["extra"] == {"resumed_games": 5}
    assert whole and played_files(tmp_path) == []


def test_a_damaged_file_is_refused_with_one_line_naming_it(tmp_path: Path) -> None:
    games = run_tournament(config(), workers=1)
    path = played_path(str(tmp_path), config(), pins())
    append_games(path, games[:3])
    with open(path, "a", encoding="utf-8") as f:
        f.write("not json\n")
    before = Path(path).read_text()
    proc = subprocess.run(
        [sys.executable, "evaluate.py", *ARGS, "--workers", "1", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert f"argument --out: {path}, line 4: not a stored game (not JSON)" in last, proc.stderr
    assert "Traceback" not in proc.stderr
    assert Path(path).read_text() == before  # left as it was
    assert not (tmp_path / "summary.json").exists()


def test_games_of_another_schedule_are_refused(tmp_path: Path) -> None:
    other = run_tournament(config(seed=42), workers=1)
    path = played_path(str(tmp_path), config(), pins())
    append_games(path, other[:3])
    with pytest.raises(ValueError, match="not played on these decks and seats"):
        read_games(path, config())


def test_anything_that_decides_the_games_gives_another_file() -> None:
    changed = [*pins()[:2], {**pins()[2], "source_sha256": "0" * 64}]  # the planner's code changed
    paths = {
        played_path("out", config(), pins()),
        played_path("out", config(seed=42), pins()),
        played_path(
            "out", config(players=("random", "greedy", "planner")), pins(("random", "greedy", "planner"))
        ),
        played_path("out", config(games=24), pins()),
        played_path("out", config(contracts=(1,)), pins()),
        played_path("out", config(duplicate=False), pins()),
        played_path("out", config(max_moves_per_deal=500), pins()),
        played_path("out", config(record_games=2), pins()),
        played_path("out", config(), changed),
    }
    assert len(paths) == 9
    assert played_path("out", config(), pins()) == played_path("out", config(), pins())


def test_ctrl_c_says_where_the_games_are_kept_and_the_same_command_resumes(tmp_path: Path) -> None:
    players = ("scratch", "planner", "planner")
    argv = [sys.executable, "evaluate.py", "--players", ",".join(players), "--games", "600", "--seed", "3"]
    argv += ["--workers", "1", "--no-progress", "--quiet", "--out", str(tmp_path)]
    # Ctrl-C as a terminal's foreground command has it (a test run in the background ignores SIGINT)
    proc = subprocess.Popen(
        argv, cwd=ROOT, stderr=subprocess.PIPE, text=True, preexec_fn=processes.default_ctrl_c
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(f.stat().st_size for f in played_files(tmp_path)):
        time.sleep(0.2)  # until the first batch is kept
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    (kept,) = played_files(tmp_path)
    games = read_games(str(kept), TournamentConfig(players, 600, 3))[0]
    assert games and kept == Path(
        played_path(str(tmp_path), TournamentConfig(players, 600, 3), pins(players))
    )
    assert (
        f"stopped; {len(games)} of 600 games are kept in {kept}: run the same command again to resume" in err
    )
