"""The training benchmark protocol (benchmarks/training.py protocol) and the full_3p task it
evaluates 3-player runs on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "training.py"
sys.path.insert(0, str(ROOT))

from benchmarks import training  # noqa: E402
from shanghai_env.agents.arena import tasks  # noqa: E402
from shanghai_env.agents.arena.tournament import TournamentConfig  # noqa: E402
from shanghai_env.rules import ALL_CONTRACTS  # noqa: E402


def test_full_3p_is_a_versioned_task_of_whole_rounds():
    task = tasks.task_named("full_3p")
    assert task == tasks.task_named("full_3p-v1")
    assert (task.num_players, task.contracts, task.reference) == (3, ALL_CONTRACTS, ("planner", "planner"))
    seeds = {t.seed for t in tasks.TASKS.values() if t.name != "full_3p"}
    assert task.seed not in seeds  # its decks are its own
    config = TournamentConfig(players=task.players("random"), games=task.games, seed=task.seed)
    assert config.total_games == 402  # 67 whole rounds of the 3-seat design


def test_the_protocol_is_fixed_and_has_a_task_at_every_table():
    full = training.PROTOCOLS["full"]
    assert (full.name, full.decisions, full.seeds, full.num_envs) == ("budget-v1", 1_000_000, (1, 2, 3), 64)
    assert full.contracts is None and full.eval_games == 0  # the full game, evaluated on the task
    for players in training.PROTOCOL_PLAYERS:
        assert tasks.task_named(f"full_{players}p").num_players == players


def test_the_smoke_size_trains_three_runs_and_evaluates_each(tmp_path, capsys):
    out = tmp_path / "protocol"
    record = training.run_protocol("ppo", 3, "smoke", str(out))
    assert [r["seed"] for r in record["runs"]] == [1, 2, 3]
    assert json.loads((out / "protocol.json").read_text()) == json.loads(json.dumps(record))
    for run in record["runs"]:
        folder = out / f"ppo_3p_s{run['seed']}"
        assert (folder / "model.pt").is_file() and (folder / "eval" / "summary.json").is_file()
        assert len(run["seat_diffs"]) == 2  # one difference to each reference seat
        assert run["score"] == pytest.approx(sum(run["seat_diffs"]) / 2, abs=0.01)
    scores = [r["score"] for r in record["runs"]]
    assert record["range"] == [min(scores), max(scores)]
    assert len(set(scores)) > 1  # three seeds: three different players
    assert record["task"] == "6 games against planners"  # 3 players: one round of the design is 6
    assert all(run["games"] == 6 for run in record["runs"])
    assert "| `ppo` | 3 | 512 | 3 |" in capsys.readouterr().out


def test_ones_own_method_runs_from_one_command_and_the_label_says_the_games_played(tmp_path):
    out = tmp_path / "protocol"
    argv = ["protocol", "--method", "examples.protocol_method:no_training", "--players", "4"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *argv, "--size", "smoke", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "protocol.json").read_text())
    assert (record["method"], record["label"]) == ("examples.protocol_method:no_training", "no_training")
    # 6 games asked for, rounded up to a whole round of the 4-seat design: the label says what was played
    assert record["task"] == "24 games against planners"
    for run in record["runs"]:
        assert (run["player"], run["games"], len(run["seat_diffs"])) == ("greedy", 24, 3)
        summary = json.loads((out / f"no_training_4p_s{run['seed']}" / "eval" / "summary.json").read_text())
        assert summary["games"] == 24
    assert "| `no_training` | 4 | 512 | 3 |" in done.stdout
    assert "over 24 games" in done.stdout


MY_METHOD = """
import json, os

def recorded(budget, seed, players, contracts, out):
    given = [budget, seed, players, list(contracts), os.listdir(out)]
    with open(os.path.join(out, "given.json"), "w") as f:
        json.dump(given, f)
    return "random"

def returns_a_number(**given):
    return 3

def returns_no_player(**given):
    return "nobody_at_all"

def takes_other_arguments(steps, seed):
    return "random"

not_a_function = 5
"""


def test_a_method_of_the_current_folder_is_given_the_budget_and_the_table(tmp_path):
    (tmp_path / "mymethod.py").write_text(MY_METHOD)  # found without PYTHONPATH, as a player is
    argv = ["protocol", "--method", "mymethod:recorded", "--players", "3", "--size", "smoke"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *argv, "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for seed in (1, 2, 3):
        given = json.loads((tmp_path / "out" / f"recorded_3p_s{seed}" / "given.json").read_text())
        assert given == [512, seed, 3, [1], []]  # the smoke budget and contracts; an empty folder
    assert json.loads((tmp_path / "out" / "protocol.json").read_text())["runs"][0]["player"] == "random"


@pytest.mark.parametrize(
    "method, needle",
    [
        ("mymethod:returns_a_number", "returned int, not a player"),
        ("mymethod:returns_no_player", "returned 'nobody_at_all'"),
        ("mymethod:takes_other_arguments", "takes_other_arguments(budget, seed, players, contracts, out)"),
        ("mymethod:not_a_function", "not a function"),
        ("mymethod:missing", "has no attribute 'missing'"),
        ("nomodule_here:train", "cannot import 'nomodule_here'"),
    ],
)
def test_a_method_that_is_no_method_is_one_line(tmp_path, method, needle):
    (tmp_path / "mymethod.py").write_text(MY_METHOD)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "protocol", "--method", method, "--players", "3", "--size", "smoke"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and "--method" in err[0] and needle in err[0], done.stderr
    assert "Traceback" not in done.stderr


def test_the_hook_is_refused_in_process_with_a_value_error(tmp_path, monkeypatch):
    (tmp_path / "mymethod.py").write_text(MY_METHOD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path])  # the import puts the folder on it
    monkeypatch.delitem(sys.modules, "mymethod", raising=False)
    with pytest.raises(ValueError, match="returned int, not a player"):
        training.run_protocol("mymethod:returns_a_number", 3, "smoke")
    with pytest.raises(ValueError, match=r"expected one of ppo, dmc, sb3, or package\.module:function"):
        training.run_protocol("dagger", 3, "smoke")


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--method", "ppo", "--players", "5"], "--players"),
        (["--method", "dagger", "--players", "3"], "--method"),
        (["--players", "3"], "--method"),
        (["--method", "ppo", "--players", "3", "--workers", "0"], "--workers"),
    ],
)
def test_the_protocols_command_line_errors_are_one_line(argv, needle):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "protocol", *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "Traceback" not in done.stderr


def test_a_folder_in_use_is_refused(tmp_path):
    (tmp_path / "kept.txt").write_text("an earlier run")
    argv = ["protocol", "--method", "ppo", "--players", "3", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "not empty" in done.stderr and (tmp_path / "kept.txt").is_file()


def test_a_rerun_into_its_own_folder_goes_on_where_it_stopped(tmp_path, capsys):
    """The same protocol, method and table into the same --out: finished seeds are kept, the others
    trained on from their checkpoints and evaluated, to the record an uninterrupted run wrote; any
    other protocol run into that folder is refused before anything in it changes."""
    out = tmp_path / "protocol"
    first = training.run_protocol("ppo", 3, "smoke", str(out))
    # stopped during seed 2's evaluation: seeds 2 and 3 have no run.json, and no protocol.json yet
    for seed in (2, 3):
        (out / f"ppo_3p_s{seed}" / "run.json").unlink()
    (out / "protocol.json").unlink()
    capsys.readouterr()
    again = training.run_protocol("ppo", 3, "smoke", str(out))
    printed = capsys.readouterr().out
    assert "seed 1: kept from" in printed and "seed 2: kept" not in printed
    assert [r["score"] for r in again["runs"]] == [r["score"] for r in first["runs"]]
    assert json.loads((out / "protocol.json").read_text()) == json.loads(json.dumps(again))
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(training.FolderError, match="not"):
        training.run_protocol("dmc", 3, "smoke", str(out))
    with pytest.raises(training.FolderError, match="not"):
        training.run_protocol("ppo", 3, "full", str(out))
    assert sorted(p.name for p in out.iterdir()) == before
