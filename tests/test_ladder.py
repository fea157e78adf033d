"""The ladder: a round-robin of tables, resumable, ranked by one rating over all games."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import processes
import pytest

from shanghai_env.agents.arena.ladder import (
    CONFIG_FILE,
    LadderConfig,
    load_results,
    main,
    run_ladder,
    standings,
)
from shanghai_env.agents.registry import shipped_models

PLAYERS = ("random", "greedy", "planner", "shanghai_env.agents.bots.random_agent:RandomAgent")


def small(**kw) -> LadderConfig:
    opts = {"players": PLAYERS, "table_size": 3, "games_per_table": 3, "contracts": (1,), "seed": 4}
    opts.update(kw)
    return LadderConfig(**opts)


def test_every_combination_of_players_gets_a_table():
    config = small()
    assert len(config.tables) == 4  # 4 choose 3
    assert all(len(set(t)) == 3 for t in config.tables)
    assert sorted(p for t in config.tables for p in t).count("greedy") == 3


def test_ladder_ranks_bots_in_their_known_order(tmp_path):
    config = small(games_per_table=6)
    results = run_ladder(config, str(tmp_path))
    assert [len(r) for r in results] == [6] * 4
    entries = standings(config, results)
    by_name = {e.name: e for e in entries}
    # the factory is named by its agent ("random"), told apart from the bot of that name
    assert {e.name for e in entries[2:]} == {"random", "random#2"}
    assert by_name["planner"].mean_game_score < by_name["random"].mean_game_score
    assert by_name["greedy"].rating_mu > by_name["random"].rating_mu
    assert all(e.games == 18 for e in entries)  # three tables each, six games a table
    assert set(by_name["planner"].mean_deal_score_by_contract) == {"1"}


def test_a_cut_off_ladder_resumes_to_the_same_games(tmp_path):
    config = small()
    full = run_ladder(config, str(tmp_path / "full"))
    cut = tmp_path / "cut"
    run_ladder(config, str(cut))
    path = cut / "table_2.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:1]) + "\n" + lines[1][:20])  # one game kept, one torn line
    (cut / "table_3.jsonl").unlink()
    assert [len(r) for r in load_results(str(cut), config)] == [6, 6, 1, 0]  # 3 games: one round, 6
    resumed = run_ladder(config, str(cut))
    assert [[g.scores for g in r] for r in resumed] == [[g.scores for g in r] for r in full]


def test_results_do_not_depend_on_workers(tmp_path):
    config = small()
    one = run_ladder(config, str(tmp_path / "one"), workers=1)
    two = run_ladder(config, str(tmp_path / "two"), workers=2)
    assert [[g.deal_scores for g in r] for r in one] == [[g.deal_scores for g in r] for r in two]


def test_other_settings_in_the_same_folder_are_refused(tmp_path):
    run_ladder(small(), str(tmp_path))
    with pytest.raises(ValueError, match="other settings"):
        run_ladder(small(seed=5), str(tmp_path))
    assert json.loads((tmp_path / CONFIG_FILE).read_text())["seed"] == 4


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"players": ("random", "random", "greedy")}, "distinct"),
        ({"players": ("random", "greedy")}, "at least 3"),
        ({"table_size": 9}, "table_size"),
        ({"games_per_table": 0}, "games"),
        ({"players": ("random", "greedy", "nobody")}, "unknown player"),
    ],
)
def test_bad_ladders_are_refused(options, error):
    with pytest.raises(ValueError, match=error):
        small(**options)


def test_command_line_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "ladder"
    argv = ["--players", "random,greedy,planner", "--table-size", "3", "--games-per-table", "3"]
    argv += ["--contracts", "1", "--workers", "1", "--out", str(out), "--no-progress"]
    entries = main(argv)
    printed = capsys.readouterr().out
    assert "| player | rating" in printed and "planner" in printed
    data = json.loads((out / "ladder.json").read_text())
    assert [e["name"] for e in data["standings"]] == [e.name for e in entries]
    # one table of one round: one mean a player, no interval (not a zero-width one)
    assert all(e["ci95"] is None for e in data["standings"])
    assert printed.count(" n/a |") == 3 and "95% CI: n/a for a player with one (table, round) mean" in printed
    assert "rating: OpenSkill Plackett-Luce" in printed


@pytest.mark.parametrize(
    "args",
    [
        ["--players", "random,greedy"],
        ["--players", "random,greedy,planner", "--table-size", "2"],
        ["--players", "random,greedy,planner", "--games-per-table", "x"],
        ["--players", "random,greedy,wizard"],
        ["--players", "random,greedy,planner", "--contracts", "11"],
    ],
)
def test_bad_command_lines_exit_2_with_one_message(args, tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "shanghai_env.agents.arena.ladder", *args, "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr and "error:" in run.stderr


# --- refusing what cannot be played or resumed, before anything is played or changed ------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = shipped_models()["scratch_contract1"]  # a 4-player player
THREE = ("random", "greedy", "planner")


def tiny(**kw) -> LadderConfig:
    """One table of three, one round of the seat design (six games on two deck sets), contract 1."""
    opts = {"players": THREE, "table_size": 3, "games_per_table": 3, "contracts": (1,), "seed": 4}
    opts.update(kw)
    return LadderConfig(**opts)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A finished tiny ladder (copy it before changing it)."""
    out = str(tmp_path_factory.mktemp("ladder") / "done")
    run_ladder(tiny(), out)
    return out


def copy_of(finished: str, tmp_path) -> str:
    out = str(tmp_path / "copy")
    shutil.copytree(finished, out)
    return out


def ladder_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real command (a fresh process, as a user runs it), stopped if it hangs."""
    return subprocess.run(
        [sys.executable, "-m", "shanghai_env.agents.arena.ladder", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def one_error_line(stderr: str) -> str:
    """The one line after argparse's usage lines; no traceback."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(lines) == 1 and lines[0].startswith("shanghai-ladder: error: "), stderr
    return lines[0]


@pytest.fixture(scope="module")
def bad_players(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("players")
    (d / "foreign.zip").write_bytes(os.urandom(200))
    with zipfile.ZipFile(d / "scorer.zip", "w") as z:  # a scorer's name, not a scorer's content
        z.writestr("scorer.json", "{not json")
    return {"foreign": str(d / "foreign.zip"), "scorer": str(d / "scorer.zip")}


@pytest.mark.parametrize(
    ("player", "says"),
    [
        ("{foreign}", "not a saved model"),
        ("{scorer}", "not a saved scorer"),
        (SHIPPED, "a ladder table has 3 players"),
        ("os:getcwd", "not an Agent"),
        ("nosuchmod:f", "cannot import"),
    ],
)
def test_players_that_cannot_sit_at_a_table_are_refused_before_any_game(
    player: str, says: str, bad_players: dict[str, str], tmp_path
) -> None:
    player = player.format(**bad_players)
    out = tmp_path / "out"
    done = ladder_cli(
        "--players",
        f"random,greedy,{player}",
        "--table-size",
        "3",
        "--games-per-table",
        "3",
        "--contracts",
        "1",
        "--workers",
        "2",
        "--no-progress",
        "--out",
        str(out),
    )
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr)
    assert "--players" in line and says in line
    assert not out.exists()  # nothing written
    with pytest.raises(ValueError, match=says):
        run_ladder(small(players=("random", "greedy", player)), str(tmp_path / "lib"))
    assert not (tmp_path / "lib").exists()


def without_time(line: str) -> dict:
    """A stored game but how long it took."""
    game = json.loads(line)
    del game["seconds"]
    return game


@pytest.mark.parametrize(
    ("damage", "line", "says"),
    [
        (lambda lines, game: ['"abc"', *lines[1:]], 1, "expected a game"),
        (lambda lines, game: [json.dumps({**game, "index": "x"}), *lines[1:]], 1, "game index 'x'"),
        (lambda lines, game: [lines[0], "{not json", *lines[2:]], 2, "not JSON"),
        (lambda lines, game: [*lines, lines[0]], -1, "stored twice"),  # -1: the last line
        (lambda lines, game: [json.dumps({**game, "game_seed": 1}), *lines[1:]], 1, "another seed"),
        (lambda lines, game: [json.dumps({**game, "scores": [1, 2, 3]}), *lines[1:]], 1, "sums of the deal"),
        (lambda lines, game: [json.dumps({**game, "capped": []}), *lines[1:]], 1, "one value per deal"),
        (lambda lines, game: [json.dumps({**game, "moves": -1}), *lines[1:]], 1, "moves"),
        (lambda lines, game: [json.dumps({**game, "hat": 1}), *lines[1:]], 1, "unknown fields"),
        (lambda lines, game: [json.dumps({"index": 0}), *lines[1:]], 1, "not a game: no blind, block"),
    ],
)
def test_a_damaged_table_file_is_refused_naming_file_and_line(
    damage, line: int, says: str, finished: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = copy_of(finished, tmp_path)
    table = tmp_path / "copy" / "table_0.jsonl"
    lines = table.read_text().splitlines()
    damaged = damage(lines, json.loads(lines[0]))
    table.write_text("\n".join(damaged) + "\n")
    line = len(damaged) if line == -1 else line
    before = {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()}
    with pytest.raises(ValueError, match=f"table_0.jsonl, line {line}: .*{says}"):
        run_ladder(tiny(), out)
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "--players",
                ",".join(THREE),
                "--table-size",
                "3",
                "--games-per-table",
                "3",
                "--contracts",
                "1",
                "--seed",
                "4",
                "--workers",
                "1",
                "--no-progress",
                "--out",
                out,
            ]
        )
    assert exc.value.code == 2
    assert f"table_0.jsonl, line {line}" in one_error_line(capsys.readouterr().err)
    assert {p.name: p.read_bytes() for p in (tmp_path / "copy").iterdir()} == before  # nothing changed


def test_a_table_file_that_is_a_folder_is_refused(finished: str, tmp_path) -> None:
    out = copy_of(finished, tmp_path)
    os.remove(os.path.join(out, "table_0.jsonl"))
    os.mkdir(os.path.join(out, "table_0.jsonl"))
    done = ladder_cli(
        "--players",
        ",".join(THREE),
        "--table-size",
        "3",
        "--games-per-table",
        "3",
        "--contracts",
        "1",
        "--seed",
        "4",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        out,
    )
    assert done.returncode == 2
    assert "table_0.jsonl is a folder" in one_error_line(done.stderr)


def test_a_torn_last_line_is_dropped_before_appending(finished: str, tmp_path) -> None:
    out = copy_of(finished, tmp_path)
    table = tmp_path / "copy" / "table_0.jsonl"
    whole = table.read_text()
    lines = whole.splitlines()
    table.write_text("\n".join(lines[:2]) + "\n" + lines[2][:30])  # a stop while the third game was written
    said: list[str] = []
    resumed = run_ladder(tiny(), out, notice=said.append)
    assert len(said) == 1 and "table_0.jsonl" in said[0] and "dropped" in said[0]
    # the game played again, on a line of its own
    assert [without_time(x) for x in table.read_text().splitlines()] == [without_time(x) for x in lines]
    assert [g.scores for g in resumed[0]] == [json.loads(x)["scores"] for x in lines]
    assert [len(r) for r in load_results(out, tiny())] == [6]


def test_tables_without_their_settings_are_refused(finished: str, tmp_path) -> None:
    out = copy_of(finished, tmp_path)
    os.remove(os.path.join(out, CONFIG_FILE))
    table = Path(out, "table_0.jsonl").read_text()
    with pytest.raises(ValueError, match=r"no ladder_config\.json"):
        run_ladder(tiny(seed=1), out)
    with pytest.raises(ValueError, match=r"no ladder_config\.json"):  # even with the same settings
        run_ladder(tiny(), out)
    assert not os.path.exists(os.path.join(out, CONFIG_FILE))
    assert Path(out, "table_0.jsonl").read_text() == table


def test_stored_games_must_match_the_settings(finished: str, tmp_path) -> None:
    out = copy_of(finished, tmp_path)
    config_path = os.path.join(out, CONFIG_FILE)
    stored = json.loads(Path(config_path).read_text())
    with open(config_path, "w") as f:  # settings edited by hand to another seed
        json.dump({**stored, "seed": 1}, f)
    with pytest.raises(ValueError, match="line 1: game 0 was not played on these decks"):
        run_ladder(tiny(seed=1), out)
    with open(config_path, "w") as f:
        f.write("{cut")
    with pytest.raises(ValueError, match=r"ladder_config\.json cannot be read"):
        run_ladder(tiny(), out)


def test_more_games_per_table_plays_only_the_games_added(finished: str, tmp_path) -> None:
    out = copy_of(finished, tmp_path)
    table = tmp_path / "copy" / "table_0.jsonl"
    first = table.read_text()
    played: list[int] = []
    longer = run_ladder(tiny(games_per_table=12), out, progress=played.append)
    assert played == [6, 3, 3]  # one round stored, then its two deck sets of three games played
    assert table.read_text().startswith(first) and len(table.read_text().splitlines()) == 12
    assert json.loads((tmp_path / "copy" / CONFIG_FILE).read_text())["games_per_table"] == 12
    fresh = run_ladder(tiny(games_per_table=12), str(tmp_path / "fresh"))
    assert [[g.deal_scores for g in r] for r in longer] == [[g.deal_scores for g in r] for r in fresh]
    with pytest.raises(ValueError, match="ask for 12 or more"):
        run_ladder(tiny(games_per_table=6), out)


def test_standings_of_fewer_games_do_not_stay_beside_a_longer_ladder(tmp_path) -> None:
    out = tmp_path / "l"
    argv = ["--players", ",".join(THREE), "--table-size", "3", "--contracts", "1", "--seed", "4"]
    argv += ["--workers", "1", "--no-progress", "--out", str(out)]
    main([*argv, "--games-per-table", "3"])
    assert (out / "ladder.json").exists()

    def stop(k: int) -> None:
        if k and len((out / "table_0.jsonl").read_text().splitlines()) > 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_ladder(tiny(games_per_table=9), str(out), progress=stop)
    assert not (out / "ladder.json").exists()


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_stopped_ladder_takes_its_workers_with_it(sig: int, tmp_path) -> None:
    # full games with search: one deck set (three games) takes minutes, the test seconds
    args = [
        "-m",
        "shanghai_env.agents.arena.ladder",
        "--players",
        "search,planner,greedy",
        "--table-size",
        "3",
    ]
    args += ["--games-per-table", "6", "--workers", "2", "--no-progress", "--out", str(tmp_path / "l")]
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = processes.workers(proc.pid)
        assert len(workers) == 2, "the workers did not start"
        time.sleep(2.0)  # into their games
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == -sig or proc.returncode == 128 + sig, err
        deadline = time.monotonic() + 10
        while any(processes.alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(processes.alive(w) for w in workers)
        assert "Traceback" not in err
    finally:  # leave nothing running, whatever failed
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:
            with contextlib.suppress(OSError):
                if processes.alive(w) and b"spawn_main" in Path(f"/proc/{w}/cmdline").read_bytes():
                    os.kill(w, signal.SIGKILL)


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("moment", ["starting", "playing"])
def test_ctrl_c_stops_a_ladder_with_workers_cleanly(moment: str, tmp_path) -> None:
    """Ctrl-C (SIGINT to the terminal's whole process group) while the workers start or play: the
    one-worker message and status, no traceback from any process, every stored game kept."""
    out = tmp_path / "l"
    args = ["-m", "shanghai_env.agents.arena.ladder", "--players", "random,greedy,planner"]
    args += ["--table-size", "3", "--contracts", "1,2,3", "--games-per-table", "3000", "--workers", "2"]
    args += ["--no-progress", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    workers: set[int] = set()
    table = out / "table_0.jsonl"
    try:
        deadline = time.monotonic() + 90
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            workers = processes.workers(proc.pid)
        assert len(workers) == 2, "the workers did not start"
        if moment == "playing":
            while not (table.exists() and table.stat().st_size) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
        stored = table.read_bytes() if table.exists() else b""
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert err.strip().splitlines()[-1] == "stopped; run the same command again to resume"
        deadline = time.monotonic() + 10
        while any(processes.alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(processes.alive(w) for w in workers)
        after = table.read_bytes() if table.exists() else b""
        assert after.startswith(stored) and (after == b"" or after.endswith(b"\n"))
        config = LadderConfig(
            players=("random", "greedy", "planner"), table_size=3, games_per_table=3000, contracts=(1, 2, 3)
        )
        assert len(load_results(str(out), config)[0]) == after.count(b"\n")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for w in workers:
            with contextlib.suppress(OSError):
                if processes.alive(w) and b"spawn_main" in Path(f"/proc/{w}/cmdline").read_bytes():
                    os.kill(w, signal.SIGKILL)
