"""The tournament director: duplicate decks, worker independence, outputs, command-line errors."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from shanghai_env.actions import ActionTable
from shanghai_env.agents.arena import evaluate_cli as evaluate  # what evaluate.py runs
from shanghai_env.agents.arena.report import INCOMPLETE_FILE, is_complete, replace_atomically
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.arena.stats import summarize
from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, run_tournament, schedule
from shanghai_env.agents.base import decision_for
from shanghai_env.agents.registry import make_agent
from shanghai_env.engine import Game


def test_schedule_rotates_players_not_decks() -> None:
    config = TournamentConfig(players=("planner", "greedy", "random"), games=6, seed=3)
    tasks = schedule(config)
    assert len(tasks) == 6 and config.blocks == 2
    for block in range(2):
        games = [t for t in tasks if t.block == block]
        assert len({t.game_seed for t in games}) == 1
        # every player sits in every seat once per block
        for player in range(3):
            assert sorted(t.seats.index(player) for t in games) == [0, 1, 2]
    assert tasks[0].game_seed != tasks[3].game_seed


def test_duplicate_games_replay_identical_decks() -> None:
    """Within a block every deal starts from the same hands by seat, upcard and dealer,
    whoever sits where and however the deals went."""
    config = TournamentConfig(players=("planner", "greedy", "random", "random"), games=4, contracts=(1, 2, 3))
    starts_by_rotation = []
    for task in schedule(config)[:4]:
        agents = [make_agent(config.players[i], seed=task.agent_seeds[i]) for i in task.seats]
        game = Game(config.rules)
        table = ActionTable(game.rules)
        game.reset(task.game_seed)
        starts = []
        deal = -1
        while not game.game_over:
            if game.deal != deal:
                deal = game.deal
                starts.append((game.dealer, [h[:] for h in game.hands], game.discard[:], game.stock[:]))
            p = game.to_act
            game.apply(table.decode(agents[p].act(decision_for(game, p, table))))
        starts_by_rotation.append(starts)
    first = starts_by_rotation[0]
    assert len(first) == 3
    assert len({str(first[d][1]) for d in range(3)}) == 3  # the deals themselves differ
    for other in starts_by_rotation[1:]:
        assert other == first


def test_results_do_not_depend_on_the_number_of_workers() -> None:
    config = TournamentConfig(players=("planner", "greedy", "random"), games=6, seed=5, contracts=(1, 2))
    one = run_tournament(config, workers=1)
    two = run_tournament(config, workers=2)
    key = [(r.index, r.scores, r.deal_scores, r.went_out, r.moves, r.capped) for r in one]
    assert key == [(r.index, r.scores, r.deal_scores, r.went_out, r.moves, r.capped) for r in two]


def test_play_task_maps_seats_back_to_players() -> None:
    config = TournamentConfig(players=("greedy", "random", "planner"), games=3, contracts=(1, 2))
    for task in schedule(config):
        result = play_task(config, task)
        agents = [make_agent(config.players[i], seed=task.agent_seeds[i]) for i in task.seats]
        record = play_game(Game(config.rules), agents, task.game_seed)
        for seat, player in enumerate(task.seats):
            assert result.scores[player] == record.scores[seat]
            assert [row[player] for row in result.deal_scores] == [row[seat] for row in record.deal_scores]
        assert [task.seats[s] if s >= 0 else -1 for s in record.out_players] == result.went_out


def test_summary_statistics_are_sane() -> None:
    config = TournamentConfig(players=("greedy", "random", "random"), games=18, seed=2, contracts=(1,))
    results = run_tournament(config, workers=1)
    summary = summarize(results, config.labels, config.players, duplicate=True, seed=2)
    assert (summary.games, summary.blocks, summary.rounds) == (18, 6, 3)
    assert abs(sum(p.win_rate for p in summary.players) - 1.0) < 1e-9
    for p in summary.players:
        assert p.ci95[0] <= p.mean_game_score <= p.ci95[1]
        assert p.deal_ci95[0] <= p.mean_deal_score <= p.deal_ci95[1]
    assert summary.players[0].mean_game_score < summary.players[1].mean_game_score
    assert len(summary.pairs) == 3
    assert [p.name for p in summary.players] == ["greedy", "random", "random#2"]


def test_evaluate_writes_its_files(tmp_path: Path) -> None:
    out = tmp_path / "res"
    evaluate.main(
        [
            "--players",
            "planner,greedy,random",
            "--games",
            "12",
            "--seed",
            "1",
            "--contracts",
            "1,2",
            "--workers",
            "1",
            "--out",
            str(out),
            "--no-progress",
            "--quiet",
        ]
    )
    summary = json.loads((out / "summary.json").read_text())
    names = [p["name"] for p in summary["players"]]
    assert names == ["planner", "greedy", "random"]
    for p in summary["players"]:
        low, high = p["ci95"]
        assert low <= p["mean_game_score"] <= high
        assert 0.0 <= p["win_rate"] <= 1.0
    assert summary["games"] == 12 and summary["contracts"] == [1, 2]  # two rounds: intervals
    assert summary["command"].startswith("python evaluate.py --players planner,greedy,random")
    with open(out / "games.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 12
    assert {"score_planner", "score_greedy", "score_random", "capped_deals"} <= set(rows[0])
    for row in rows:
        assert int(row["score_planner"]) == int(row["deal1_planner"]) + int(row["deal2_planner"])
    png = (out / "scores.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 1000


@pytest.mark.parametrize(
    "players",
    ["planner,greedy,alphago", "planner,greedy", "random," * 8 + "random", "planner,,greedy"],
)
def test_bad_players_are_a_clear_error(players: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        evaluate.main(["--players", players, "--games", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--players" in err
    assert ("3 to 8 players" in err) or all(name in err for name in ("random", "greedy", "planner"))


@pytest.mark.parametrize("args", [["--contracts", "11"], ["--games", "0"], ["--seed", "-1"]])
def test_bad_options_are_a_clear_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        evaluate.main(["--players", "greedy,random,random", *args])
    assert "error" in capsys.readouterr().err


def test_config_rejects_bad_seat_counts() -> None:
    with pytest.raises(ValueError, match="3 to 8"):
        TournamentConfig(players=("greedy", "random"))
    with pytest.raises(ValueError, match="planner"):
        TournamentConfig(players=("greedy", "random", "nobody"))


@pytest.mark.slow
def test_planner_beats_greedy_beats_random(tmp_path: Path) -> None:
    """The documented result, at a smaller size: the planner's paired lead over greedy and greedy's
    over random, with 95% intervals excluding a tie, in full 4-player games."""
    summary = evaluate.main(
        [
            "--players",
            "planner,greedy,random,random",
            "--games",
            "120",
            "--seed",
            "0",
            "--out",
            str(tmp_path),
            "--no-progress",
            "--quiet",
        ]
    )
    _, greedy, random1, random2 = summary.players
    lead = next(p for p in summary.pairs if (p.a, p.b) == ("planner", "greedy"))
    assert lead.ci95[1] < 0  # paired on the same decks, over 5 rounds of balanced seats
    assert greedy.ci95[1] < min(random1.ci95[0], random2.ci95[0])


# --- outputs: checked before the first game, one run's files only, never complete-looking halves ---

SMALL = ["--players", "greedy,greedy,random", "--games", "3", "--seed", "1", "--contracts", "1"]
SMALL += ["--workers", "1", "--no-progress", "--quiet"]
OTHER_SEED = [a if a != "1" or SMALL[i - 1] != "--seed" else "2" for i, a in enumerate(SMALL)]


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(lines) == 1 and lines[0].startswith("shanghai-evaluate: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda out: (out / "records").write_text("a file"), "records' is a file"),
        (lambda out: (out / "INCOMPLETE").mkdir(), "INCOMPLETE' is a folder"),
    ],
)
def test_record_paths_that_cannot_be_written_are_refused_before_any_game(
    make, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res"
    out.mkdir()
    make(out)

    def never(*args, **kwargs):
        raise AssertionError("a game started")

    monkeypatch.setattr(evaluate, "run_tournament", never)
    with pytest.raises(SystemExit) as exc:
        evaluate.main([*SMALL, "--record", "all", "--out", str(out)])
    assert exc.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    assert "argument --out" in line and says in line


def test_a_second_evaluation_replaces_nothing_of_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An evaluation deletes nothing it did not write: into a folder that holds one, its outputs
    are summary-2.json, games-2.csv, scores-2.png and records-2/ (said on stderr, even with
    --quiet), and each summary names its records folder."""
    out = tmp_path / "res"
    evaluate.main([*SMALL, "--record", "all", "--out", str(out)])
    first = {p.name: p.read_bytes() for p in (out / "records").glob("game-*.json")}
    assert len(first) == 6  # 3 games: one round of 3-player seats
    assert json.loads((out / "summary.json").read_text())["records"] == "records"
    (out / "records" / "notes.txt").write_text("mine")
    before = {name: (out / name).read_bytes() for name in ("summary.json", "games.csv", "scores.png")}
    capsys.readouterr()
    evaluate.main([*OTHER_SEED, "--record", "2", "--out", str(out)])  # (SMALL is --quiet)
    assert {name: (out / name).read_bytes() for name in before} == before
    assert {p.name: p.read_bytes() for p in (out / "records").glob("game-*.json")} == first
    assert (out / "records" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (out / "records-2").iterdir()) == ["game-00000.json", "game-00001.json"]
    second = json.loads((out / "summary-2.json").read_text())
    assert second["records"] == "records-2" and second["seed"] == 2
    assert (out / "games-2.csv").is_file() and (out / "scores-2.png").is_file()
    assert is_complete(str(out)) and is_complete(str(out), 2)
    err = capsys.readouterr().err
    assert "holds an earlier evaluation (kept)" in err
    assert all(name in err for name in ("summary-2.json", "games-2.csv", "scores-2.png", "records-2"))
    evaluate.main([*SMALL, "--out", str(out)])  # no records asked for: none named, none made
    assert json.loads((out / "summary-3.json").read_text())["records"] is None
    assert not (out / "records-3").exists()
    evaluate.main([*SMALL, "--record", "1", "--out", str(out)])
    assert [p.name for p in (out / "records-4").iterdir()] == ["game-00000.json"]
    assert json.loads((out / "summary-4.json").read_text())["records"] == "records-4"


def test_a_run_stopped_while_writing_leaves_no_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "res"
    evaluate.main([*SMALL, "--record", "all", "--out", str(out)])
    assert is_complete(str(out)) and not (out / INCOMPLETE_FILE).exists()
    import shanghai_env.record

    real = shanghai_env.record.save
    written: list[str] = []

    def save(record, path):
        if len(written) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the third record is written
        written.append(str(path))
        return real(record, path)

    monkeypatch.setattr(shanghai_env.record, "save", save)
    with pytest.raises(KeyboardInterrupt):
        evaluate.main([*OTHER_SEED, "--record", "all", "--out", str(out)])
    assert (out / f"{INCOMPLETE_FILE}-2").exists() and not (out / "summary-2.json").exists()
    assert not is_complete(str(out), 2) and is_complete(str(out))  # the first is whole still
    assert not [p for p in out.rglob("*.tmp")]  # no half-written file under a temporary name either
    monkeypatch.setattr(shanghai_env.record, "save", real)
    evaluate.main([*SMALL, "--record", "all", "--out", str(out)])  # the next is whole, beside them
    assert is_complete(str(out), 3) and len(list((out / "records-3").glob("game-*.json"))) == 6


def test_outputs_are_replaced_whole_and_the_summary_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "res"
    evaluate.main([*SMALL, "--record", "1", "--out", str(out)])
    chart = (out / "scores.png").read_bytes()

    def torn(tmp: str) -> None:
        Path(tmp).write_bytes(chart[:100])
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_atomically(str(out / "scores.png"), torn)
    assert (out / "scores.png").read_bytes() == chart and not list(out.glob(".*.tmp"))
    placed: list[str] = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (placed.append(Path(b).name), real_replace(a, b)))
    evaluate.main([*SMALL, "--record", "1", "--out", str(out)])
    assert placed == ["game-00000.json", "games-2.csv", "scores-2.png", "summary-2.json"]


def test_the_summary_and_the_report_name_the_seat_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--players", "greedy,random,random,random", "--games", "5", "--contracts", "1"]
    evaluate.main([*argv, "--workers", "1", "--out", str(tmp_path), "--no-progress"])
    printed = capsys.readouterr().out
    assert "seats: rotations and reflections of balanced seat cycles" in printed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["games"], summary["blocks"], summary["rounds"]) == (24, 6, 1)  # 5 games: a round
    seating = summary["seating"]
    assert seating["games_per_block"] == 4 and seating["games_per_round"] == 24
    assert seating["rounds"] == 1 and seating["balanced"] is True
    assert "right after every other player" in seating["description"]
    assert all(p["rounds"] == 1 and p["blocks"] == 6 for p in summary["pairs"])
    with open(tmp_path / "games.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["rotation"]) for r in rows] == list(range(4)) * 6
    assert [int(r["block"]) for r in rows] == [b for b in range(6) for _ in range(4)]
    assert {r["round"] for r in rows} == {"0"}
    seatings = {tuple(r[f"seat_of_{p}"] for p in ("greedy", "random", "random#2", "random#3")) for r in rows}
    assert len(seatings) == 24  # every order of four players
