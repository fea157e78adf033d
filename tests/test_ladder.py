"""The ladder: a round-robin of tables, resumable, ranked by one rating over all games."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shanghai_env.agents.arena.ladder import (
    CONFIG_FILE,
    LadderConfig,
    load_results,
    main,
    run_ladder,
    standings,
)

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
    assert {e.name for e in entries[2:]} == {"random", "shanghai_env.agents.bots.random_agent:RandomAgent"}
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
