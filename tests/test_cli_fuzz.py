"""Bad input to the command lines that write results: every case is the real program in a fresh
process, and must end with exit status 2 and one line on stderr (after argparse's usage), no
traceback, within a time limit (a hang fails the case), having played nothing.

The cases run a few at a time in one module fixture (they mostly wait on Python's start-up);
each is then its own test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from shanghai_env.agents.arena.ladder import CONFIG_FILE, LadderConfig

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 90  # seconds: far above a refusal, far below the ladder or Ray's own retries

LADDER = ["-m", "shanghai_env.agents.arena.ladder"]
EVALUATE = ["evaluate.py"]
SCORER = ["train.py", "scorer"]
PLOT = ["train.py", "plot"]
# a small ladder: a case that got past the checks would play quickly, and fail on its status
L3 = ["--players", "random,greedy,planner", "--table-size", "3", "--games-per-table", "3", "--contracts", "1"]
L3 += ["--workers", "1", "--no-progress"]
E3 = ["--players", "greedy,greedy,random", "--games", "3", "--contracts", "1", "--workers", "1"]
E3 += ["--no-progress", "--quiet"]

CASES: list[tuple[str, list[str], str, str]] = [
    # (name, argv, the program's name in the error line, a fragment of that line)
    ("ladder-players-twice", [*LADDER, *L3, "--players", "random,greedy"], "shanghai-ladder", "given twice"),
    (
        "ladder-too-few",
        [*LADDER, "--players", "random,greedy", "--table-size", "3"],
        "shanghai-ladder",
        "at least 3",
    ),
    (
        "ladder-twice",
        [*LADDER, "--players", "random,random,greedy", "--table-size", "3"],
        "shanghai-ladder",
        "distinct",
    ),
    (
        "ladder-unknown",
        [*LADDER, "--players", "random,greedy,nobody", "--table-size", "3"],
        "shanghai-ladder",
        "nobody",
    ),
    (
        "ladder-missing-zip",
        [*LADDER, "--players", "random,greedy,gone.zip", "--table-size", "3"],
        "shanghai-ladder",
        "gone.zip",
    ),
    (
        "ladder-getcwd",
        [*LADDER, "--players", "random,greedy,os:getcwd", "--table-size", "3", "--contracts", "1"],
        "shanghai-ladder",
        "not an Agent",
    ),
    (
        "ladder-nosuchmod",
        [*LADDER, "--players", "random,greedy,nosuchmod:f", "--table-size", "3"],
        "shanghai-ladder",
        "cannot import",
    ),
    (
        "ladder-foreign",
        [*LADDER, "--players", "random,greedy,{foreign}", "--table-size", "3"],
        "shanghai-ladder",
        "not a saved model",
    ),
    (
        "ladder-model-other-table",
        [*LADDER, "--players", "random,greedy,scratch_contract1", "--table-size", "3", "--contracts", "1"],
        "shanghai-ladder",
        "a ladder table has 3 players",
    ),
    ("ladder-table-9", [*LADDER, *L3[:2], "--table-size", "9"], "shanghai-ladder", "--table-size"),
    ("ladder-table-x", [*LADDER, *L3[:2], "--table-size", "x"], "shanghai-ladder", "--table-size"),
    ("ladder-games-0", [*LADDER, *L3[:2], "--games-per-table", "0"], "shanghai-ladder", "--games-per-table"),
    ("ladder-seed", [*LADDER, *L3[:2], "--seed", "-1"], "shanghai-ladder", "--seed"),
    ("ladder-seed-twice", [*LADDER, *L3[:2], "--seed", "1", "--seed", "2"], "shanghai-ladder", "given twice"),
    ("ladder-contracts", [*LADDER, *L3[:2], "--contracts", "0"], "shanghai-ladder", "--contracts"),
    ("ladder-workers", [*LADDER, *L3[:2], "--workers", "0"], "shanghai-ladder", "--workers"),
    ("ladder-bogus", [*LADDER, *L3[:2], "--bogus"], "shanghai-ladder", "--bogus"),
    ("ladder-out-file", [*LADDER, *L3, "--out", "{file}"], "shanghai-ladder", "not a folder"),
    ("ladder-out-under-file", [*LADDER, *L3, "--out", "{file}/sub"], "shanghai-ladder", "--out"),
    ("ladder-damaged-line", [*LADDER, *L3, "--out", "{damaged}"], "shanghai-ladder", "table_0.jsonl, line 1"),
    (
        "ladder-table-folder",
        [*LADDER, *L3, "--out", "{table_folder}"],
        "shanghai-ladder",
        "table_0.jsonl is a folder",
    ),
    ("ladder-no-config", [*LADDER, *L3, "--out", "{no_config}"], "shanghai-ladder", "no ladder_config.json"),
    ("ladder-cut-config", [*LADDER, *L3, "--out", "{cut_config}"], "shanghai-ladder", "cannot be read"),
    ("ladder-config-folder", [*LADDER, *L3, "--out", "{config_folder}"], "shanghai-ladder", "is a folder"),
    (
        "ladder-other-seed",
        [*LADDER, *L3, "--seed", "5", "--out", "{damaged}"],
        "shanghai-ladder",
        "other settings",
    ),
    ("evaluate-record-0", [*EVALUATE, *E3, "--record", "0"], "shanghai-evaluate", "--record"),
    ("evaluate-record-x", [*EVALUATE, *E3, "--record", "x"], "shanghai-evaluate", "--record"),
    ("evaluate-out-file", [*EVALUATE, *E3, "--out", "{file}"], "shanghai-evaluate", "not a folder"),
    (
        "evaluate-records-file",
        [*EVALUATE, *E3, "--record", "1", "--out", "{records_file}"],
        "shanghai-evaluate",
        "records' is a file",
    ),
    (
        "evaluate-record-folder",
        [*EVALUATE, *E3, "--record", "all", "--out", "{record_folder}"],
        "shanghai-evaluate",
        "is a folder, where a game record goes",
    ),
    (
        "evaluate-summary-folder",
        [*EVALUATE, *E3, "--out", "{summary_folder}"],
        "shanghai-evaluate",
        "summary.json' is a folder",
    ),
    ("evaluate-ray-form", [*EVALUATE, *E3, "--ray", "no-port"], "shanghai-evaluate", "expected auto, local"),
    (
        "evaluate-ray-port",
        [*EVALUATE, *E3, "--ray", "127.0.0.1:99999"],
        "shanghai-evaluate",
        "expected auto, local",
    ),
    ("evaluate-ray-closed", [*EVALUATE, *E3, "--ray", "127.0.0.1:1"], "shanghai-evaluate", "nothing answers"),
    (
        "evaluate-ray-client-closed",
        [*EVALUATE, *E3, "--ray", "ray://127.0.0.1:1"],
        "shanghai-evaluate",
        "nothing answers",
    ),
    # expert iteration on the one loop, and the loop's curve plot
    ("scorer-out-file", [*SCORER, "--out", "{file}"], "shanghai-train scorer", "--out"),
    ("scorer-out-under-file", [*SCORER, "--out", "{file}/run"], "shanghai-train scorer", "--out"),
    ("scorer-out-empty-name", [*SCORER, "--out", ""], "shanghai-train scorer", "--out"),
    (
        "scorer-timesteps",
        [*SCORER, "--out", "{tmp}/r", "--timesteps", "0"],
        "shanghai-train scorer",
        "--timesteps",
    ),
    ("scorer-fit-nothing", [*SCORER, "fit", "--out", "{tmp}/f.zip"], "shanghai-train scorer fit", "required"),
    ("plot-nothing", [*PLOT, "--out", "{tmp}/c.png"], "shanghai-train plot", "required"),
    ("plot-empty", [*PLOT, "{empty}", "--out", "{tmp}/c.png"], "shanghai-train plot", "no eval.csv"),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The files and folders the cases name."""
    d = tmp_path_factory.mktemp("fuzz")
    (d / "file").write_text("a file\n")
    (d / "foreign.zip").write_bytes(os.urandom(300))
    (d / "empty").mkdir()
    config = LadderConfig(
        players=("random", "greedy", "planner"), table_size=3, games_per_table=3, contracts=(1,)
    )
    settings = json.dumps(config.to_json())
    for name, table, conf in [
        ("damaged", '"abc"\n', settings),
        ("no_config", '"abc"\n', None),
        ("cut_config", "", settings[:20]),
    ]:
        (d / name).mkdir()
        if table:
            (d / name / "table_0.jsonl").write_text(table)
        if conf is not None:
            (d / name / CONFIG_FILE).write_text(conf)
    (d / "table_folder" / "table_0.jsonl").mkdir(parents=True)
    (d / "table_folder" / CONFIG_FILE).write_text(settings)
    (d / "config_folder" / CONFIG_FILE).mkdir(parents=True)
    (d / "records_file").mkdir()
    (d / "records_file" / "records").write_text("a file\n")
    (d / "record_folder" / "records" / "game-00001.json").mkdir(parents=True)
    (d / "summary_folder" / "summary.json").mkdir(parents=True)
    players = [{"name": n, "spec": n} for n in ("planner", "greedy", "greedy#2")]
    rows = "score_planner,score_greedy,score_greedy#2\n10,20,30\n5,25,35\n"
    for name, summary, marker in [
        ("whole_eval", True, False),
        ("cut_eval", False, False),
        ("unfinished_eval", True, True),
    ]:
        (d / name).mkdir()
        text = json.dumps({"players": players})
        (d / name / "summary.json").write_text(text if summary else text[:30])
        (d / name / "games.csv").write_text(rows)
        if marker:
            (d / name / "INCOMPLETE").write_text("")
    names = [
        "file",
        "foreign",
        "empty",
        "damaged",
        "no_config",
        "cut_config",
        "table_folder",
        "config_folder",
    ]
    names += ["records_file", "record_folder", "summary_folder", "whole_eval", "cut_eval", "unfinished_eval"]
    out = {name: str(d / name) for name in names}
    out["foreign"] = str(d / "foreign.zip")
    out["tmp"] = str(d)
    return out


def _run(argv: list[str], cwd: str) -> subprocess.CompletedProcess[str] | str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    try:
        return subprocess.run(
            [sys.executable, *argv],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"still running after {TIMEOUT} s"


@pytest.fixture(scope="module")
def outcomes(places: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str] | str]:
    """Every case run, three at a time; the cases without --out run in a scratch folder."""
    scratch = os.path.join(places["tmp"], "scratch")
    os.makedirs(scratch, exist_ok=True)

    def one(case: tuple[str, list[str], str, str]) -> subprocess.CompletedProcess[str] | str:
        name, argv, _, _ = case
        argv = [a.format(**places) for a in argv]
        if argv[0] in ("evaluate.py", "train.py"):
            argv[0] = str(ROOT / argv[0])
            if "--out" not in argv:
                argv += ["--out", os.path.join(scratch, name)]
        if argv[:2] == LADDER and "--out" not in argv:
            argv += ["--out", os.path.join(scratch, name)]
        return _run(argv, scratch)

    with ThreadPoolExecutor(3) as pool:
        return dict(zip([c[0] for c in CASES], pool.map(one, CASES)))


@pytest.mark.parametrize(
    ("name", "prog", "fragment"), [(c[0], c[2], c[3]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_one_line_and_exit_2(
    name: str, prog: str, fragment: str, outcomes: dict[str, subprocess.CompletedProcess[str] | str]
) -> None:
    done = outcomes[name]
    assert not isinstance(done, str), done  # a hang
    err = done.stderr
    assert "Traceback" not in err, err
    assert done.returncode == 2, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(lines) == 1 and lines[0].startswith(prog) and ": error: " in lines[0], err
    assert fragment in lines[0], err


def test_nothing_was_played(places: dict[str, str], outcomes: dict[str, object]) -> None:
    """No case left results: no standings, summaries, tables or records where it wrote."""
    scratch = Path(places["tmp"], "scratch")
    written = [p for p in scratch.rglob("*") if p.is_file()]
    assert written == [], written
    assert not Path(places["tmp"], "c.png").exists()
    assert Path(places["damaged"], "table_0.jsonl").read_text() == '"abc"\n'
