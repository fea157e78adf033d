"""What the tournament's reports say: no interval where one round gives none, honest p-values on
few rounds, the task score line and the task's pinned players, players named by their agents'
names, clean output paths and a progress bar that counts the games played."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest

from shanghai_env.agents.arena import evaluate_cli as evaluate
from shanghai_env.agents.arena import tasks
from shanghai_env.agents.arena.report import print_tables
from shanghai_env.agents.arena.stats import summarize
from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament
from shanghai_env.engine import PlayerView

ROOT = Path(__file__).resolve().parents[1]
RANDOM_FACTORY = "shanghai_env.agents.bots.random_agent:RandomAgent"
QUICK = ["--contracts", "1", "--workers", "1", "--no-progress"]


def run(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, str, str]:
    evaluate.main([*argv, *QUICK, "--out", str(out)])
    printed = capsys.readouterr()
    return json.loads((out / "summary.json").read_text()), printed.out, printed.err


# --- one round gives no interval; two rounds give very wide ones ----------------------------------


def test_one_round_prints_no_interval_and_writes_null(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, out, err = run(["--players", "greedy,random,planner,random", "--games", "8"], tmp_path, capsys)
    assert summary["games"] == 24 and summary["rounds"] == 1
    for p in summary["players"]:
        assert p["ci95"] is None and p["deal_ci95"] is None
    for pr in summary["pairs"]:
        assert pr["ci95"] is None and pr["p_value"] is None and pr["wilcoxon_p"] is None
        assert pr["significant"] is False
    assert "n/a (one round: at least 48 games for an interval)" in out
    assert not re.search(r"\[(-?[\d.]+), \1\]", out), out  # no zero-width interval anywhere
    # said once, before the games: the count asked for was rounded up
    lines = [line for line in err.splitlines() if "rounded up" in line]
    assert lines == [
        "--games 8 rounded up to 24 games: whole rounds of the seat design (24 games for 4 players)"
    ]


def test_a_round_count_asked_for_exactly_is_not_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, err = run(["--players", "greedy,random,planner", "--games", "12"], tmp_path, capsys)
    assert "rounded up" not in err


def test_two_rounds_say_the_intervals_are_wide_and_give_no_wilcoxon(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, out, _ = run(["--players", "greedy,random,planner", "--games", "12"], tmp_path, capsys)
    assert summary["rounds"] == 2
    for p in summary["players"]:
        low, high = p["ci95"]
        assert low < p["mean_game_score"] < high
    for pr in summary["pairs"]:
        assert pr["p_value"] is not None and pr["wilcoxon_p"] is None
    assert "two rounds (1 degree of freedom): the intervals are very wide" in out
    assert "Wilcoxon p: n/a (2 rounds: it cannot go below 0.5)" in out


def test_the_summary_of_one_round_has_nan_intervals_not_zero_width_ones() -> None:
    config = TournamentConfig(players=("greedy", "random", "random"), games=6, seed=2, contracts=(1,))
    summary = summarize(
        run_tournament(config, workers=1), config.labels, config.players, duplicate=True, seed=2
    )
    assert summary.rounds == 1
    assert all(math.isnan(x) for p in summary.players for x in p.ci95)
    assert all(math.isnan(p.p_value) and not p.significant for p in summary.pairs)
    assert summary.to_json()["players"][0]["ci95"] is None


# --- the rating says what it measures ------------------------------------------------------------


def test_the_report_says_what_the_rating_measures(capsys: pytest.CaptureFixture[str]) -> None:
    config = TournamentConfig(players=("greedy", "random", "planner"), games=12, seed=2, contracts=(1,))
    summary = summarize(
        run_tournament(config, workers=1), config.labels, config.players, duplicate=True, seed=2
    )
    print_tables(summary)
    out = capsys.readouterr().out
    assert "rating: OpenSkill Plackett-Luce" in out and "finishing order" in out
    assert "not by how many points" in out


# --- tasks: versioned, reference players pinned, a score line --------------------------------------


def test_tasks_have_versions_and_the_bare_name_is_the_current_one() -> None:
    current = tasks.task_named("full_6p")
    assert (current.name, current.version, current.games, current.id) == ("full_6p", 2, 420, "full_6p-v2")
    old = tasks.task_named("full_6p-v1")
    assert (old.games, old.seed, old.reference) == (240, current.seed, current.reference)
    assert tasks.task_named("full_4p") == tasks.task_named("full_4p-v1")
    with pytest.raises(ValueError, match="full_6p-v2"):
        tasks.task_named("full_6p-v3")


def tiny_task() -> tasks.Task:
    return tasks.Task("tiny", 1, 3, (1,), ("planner", "greedy"), 12, 7, "a test task: contract 1, 3 players")


def test_a_task_prints_its_score_and_pins_its_players(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = tiny_task()
    monkeypatch.setitem(tasks.TASKS, tiny.id, tiny)
    evaluate.main(
        ["--task", "tiny", "--players", "random", "--workers", "1", "--no-progress", "--out", str(tmp_path)]
    )
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "summary.json").read_text())
    task = summary["task"]
    assert (task["id"], task["name"], task["version"], task["asked_as"]) == ("tiny-v1", "tiny", 1, "tiny")
    assert [r["spec"] for r in task["reference"]] == ["planner", "greedy"]
    for pin in [*task["reference"], task["player"]]:
        assert pin["kind"] == "bot" and re.fullmatch(r"[0-9a-f]{64}", pin["source_sha256"])
        assert pin["package_version"]
    scores = task["score"]
    assert [s["seat"] for s in scores] == ["planner", "greedy"]
    line = next(line for line in out.splitlines() if line.startswith("task tiny-v1"))
    for s in scores:
        low, high = s["ci95"]
        assert s["verdict"] == ("ahead" if high < 0 else "behind" if low > 0 else "not separated")
        assert s["separated"] == (s["verdict"] != "not separated")
        assert f"{s['seat']} {s['mean_diff']:+.1f} [{low:+.1f}, {high:+.1f}]" in line
    assert "random − each reference seat" in line


def test_a_model_is_pinned_by_its_file_hash() -> None:
    import hashlib

    from shanghai_env.agents.registry import player_pin, shipped_models

    path = Path(shipped_models()["scratch_contract1"])
    pin = player_pin(str(path))
    assert pin["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert pin["file"] == path.name


# --- module:factory players are named by their agents ---------------------------------------------


def test_a_factory_is_reported_by_its_agents_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from shanghai_env.agents.registry import player_labels

    assert player_labels([RANDOM_FACTORY, "greedy", "planner"]) == ["random", "greedy", "planner"]
    # a bot keeps its own name; the factory's agent of the same name is told apart
    assert player_labels(["greedy", RANDOM_FACTORY, "random"]) == ["greedy", "random#2", "random"]
    assert player_labels([RANDOM_FACTORY, "random", "random"]) == ["random#3", "random", "random#2"]
    summary, out, _ = run(["--players", f"{RANDOM_FACTORY},greedy,planner", "--games", "6"], tmp_path, capsys)
    assert [p["name"] for p in summary["players"]] == ["random", "greedy", "planner"]
    assert summary["players"][0]["spec"] == RANDOM_FACTORY
    assert RANDOM_FACTORY not in out


def test_the_docs_give_the_factory_signature_and_every_player_view_field() -> None:
    text = (ROOT / "docs" / "bots.md").read_text()
    assert "called with no arguments" in text and "returns an `Agent`" in text
    for field in dataclasses.fields(PlayerView):
        assert f"`{field.name}`" in text, field.name


# --- paths and the progress bar ------------------------------------------------------------------


def test_an_out_folder_with_a_trailing_slash_is_printed_once_slashed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "res") + "//"
    evaluate.main(["--players", "greedy,random,planner", "--games", "6", *QUICK, "--out", out])
    printed = capsys.readouterr().out
    assert f"wrote {tmp_path / 'res'}/summary.json" in printed and "//" not in printed


def test_the_progress_bar_counts_the_games_played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tqdm

    bars: list[dict[str, int]] = []

    class Bar:
        def __init__(self, total: int, **kwargs: object) -> None:
            self.seen = {"total": total, "n": 0}
            bars.append(self.seen)

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def update(self, k: int) -> None:
            self.seen["n"] += k

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    argv = ["--players", "greedy,random,planner,random", "--games", "5", "--contracts", "1"]
    summary = evaluate.main([*argv, "--workers", "1", "--quiet", "--out", str(tmp_path)])
    assert bars == [{"total": summary.games, "n": summary.games}] and summary.games == 24
