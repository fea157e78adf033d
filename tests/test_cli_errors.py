"""Bad command lines of evaluate.py, train.py and the terminal game: one line saying what is wrong
(after argparse's usage lines), exit status 2, no traceback, and nothing started.

Every case runs in-process with the program's work replaced by a function that fails the test
(``run_tournament``, ``train``, ``PlaySession.play``), so a case that gets past the checks is
caught at once. A few cases run the real entry points in a subprocess, and Ctrl-C during a
tournament ends it quietly.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shanghai_env.agents.arena import evaluate_cli as evaluate
from shanghai_env.agents.learned.players.sb3 import check_model, saved_table
from shanghai_env.agents.learned.train import cli as train_cli
from shanghai_env.agents.ui import cli as play
from shanghai_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
PROGS = {"evaluate": "shanghai-evaluate", "train": "shanghai-train sb3", "play": "shanghai-play"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths the cases name: a corrupt model, a folder, a plain file, a model (4 players, contract 1)
    and one for another table."""
    d = tmp_path_factory.mktemp("cli")
    (d / "corrupt.zip").write_bytes(os.urandom(300))
    (d / "garbage.pt").write_bytes(os.urandom(300))
    (d / "folder.zip").mkdir()
    (d / "plain").write_text("not a folder\n")
    pytest.importorskip("sb3_contrib")
    from shanghai_env.agents.learned.train.methods.sb3 import SB3Options, build_model
    from shanghai_env.single_agent import SingleAgentEnv

    # real (untrained) MaskablePPO models, as shanghai-train sb3 saves them
    other, model = d / "other.zip", d / "model.zip"
    for path, players, contracts in ((other, 5, (1, 2)), (model, 4, (1,))):
        env = SingleAgentEnv(None, num_players=players, contracts=contracts)
        rules = Rules(num_players=players, contracts=contracts)
        build_model(rules, SB3Options(net_arch=(8,)), env).save(str(path))
    return {
        "corrupt": str(d / "corrupt.zip"),
        "garbage": str(d / "garbage.pt"),
        "folder": str(d / "folder.zip"),
        "plain": str(d / "plain"),
        "other": str(other),
        "model": str(model),
        "tmp": str(d),
    }


G3 = "greedy,greedy,greedy"

EVALUATE = [
    ([], "--players"),
    (["--players"], "--players"),
    (["--players", "greedy,greedy"], "--players"),
    (["--players", "random," * 8 + "random"], "--players"),
    (["--players", "greedy,,greedy"], "--players"),
    (["--players", "alphago,greedy,greedy"], "--players"),
    (["--players", "missing.zip,greedy,greedy"], "--players"),
    (["--players", "{folder},greedy,greedy"], "--players"),
    (["--players", "{tmp},greedy,greedy"], "--players"),
    (["--players", "{corrupt},greedy,greedy"], "--players"),
    (
        ["--players", "{garbage},greedy,greedy"],
        "--players",
        "garbage.pt' is not a saved player, or it is damaged",
    ),
    (["--players", "{plain},greedy,greedy"], "--players"),
    (["--players", "{other}," + G3], "--players", "trained for 5 players, contracts 1,2"),
    (["--players", "{model},greedy,greedy", "--contracts", "1"], "--players", "the tournament is 3 players"),
    (["--players", "{model}," + G3], "--players", "contracts 1,2,3,4,5,6,7,8,9,10"),
    (["--players", "nosuchmodule_xyz:make,greedy,greedy"], "--players", "cannot import"),
    (["--players", "json:no_such_factory,greedy,greedy"], "--players", "no attribute"),
    (["--players", "math:sqrt,greedy,greedy"], "--players", "raised TypeError"),
    (["--players", "os:getcwd,greedy,greedy"], "--players", "not an Agent"),
    (["--players", "math:pi,greedy,greedy"], "--players", "not a factory"),
    (["--players", G3, "--out", "{plain}"], "--out", "not a folder"),
    (["--players", G3, "--out", "{plain}/sub"], "--out"),
    (["--players", G3, "--games", "x"], "--games"),
    (["--players", G3, "--games", "0"], "--games"),
    (["--players", G3, "--games", "-3"], "--games"),
    (["--players", G3, "--seed", "-1"], "--seed"),
    (["--players", G3, "--seed", "1.5"], "--seed"),
    (["--players", G3, "--contracts", "11"], "--contracts"),
    (["--players", G3, "--contracts", ""], "--contracts"),
    (["--players", G3, "--workers", "0"], "--workers"),
    (["--players", G3, "--max-moves-per-deal", "0"], "--max-moves-per-deal"),
    (["--players", G3, "--games", "3", "--games", "5"], "--games", "given twice"),
    (["--players", G3, "--players", "random,random,random"], "--players", "given twice"),
    (["--players", G3, "--bogus"], "--bogus"),
]

# shanghai-train sb3 (the options every method shares, and sb3's own)
TRAIN = [
    (["--players", "9"], "--players"),
    (["--players", "2"], "--players"),
    (["--players", "x"], "--players"),
    (["--timesteps", "-5"], "--timesteps"),
    (["--timesteps", "0"], "--timesteps"),
    (["--num-envs", "0"], "--num-envs"),
    (["--lr", "-1"], "--lr"),
    (["--lr", "nan"], "--lr"),
    (["--n-steps", "0"], "--n-steps"),
    (["--batch-size", "0"], "--batch-size"),
    (["--epochs", "0"], "--epochs"),
    (["--gamma", "1.5"], "--gamma"),
    (["--gamma", "-0.1"], "--gamma"),
    (["--ent-coef", "-1"], "--ent-coef"),
    (["--shaping", "-1"], "--shaping"),
    (["--shaping", "inf"], "--shaping"),
    (["--net-arch", "0"], "--net-arch"),
    (["--net-arch", "64,-1"], "--net-arch"),
    (["--net-arch", "a"], "--net-arch"),
    (["--reward", "money"], "--reward"),
    (["--contracts", "11"], "--contracts"),
    (["--eval-every", "-1"], "--eval-every"),
    (["--checkpoint-every", "0"], "--checkpoint-every"),
    (["--seed", "-1"], "--seed"),
    (["--seed", str(2**63)], "--seed", "a seed 0..9223372036854775807"),
    (["--eval-seed", str(2**64)], "--eval-seed", "a seed 0..9223372036854775807"),
    (["--init", "missing.zip"], "--init", "'missing.zip'"),
    (["--init", "{folder}"], "--init", "folder"),
    (["--opponents", "nobody"], "--opponents"),
    (["--opponents", ""], "--opponents"),
    (["--eval-opponents", "self"], "--eval-opponents"),
    (["--out", "{plain}"], "--out", "not a folder"),
]

PLAY = [
    (["--seed", "-1"], "--seed"),
    (["--seed", "x"], "--seed"),
    (["--players", "9"], "--players"),
    (["--players", "2"], "--players"),
    (["--players", "x"], "--players"),
    (["--seat", "-1"], "--seat"),
    (["--seat", "4"], "--seat"),
    (["--opponents", "greedy"], "--opponents"),
    (["--opponents", "greedy,,greedy"], "--opponents"),
    (["--opponents", "nobody,greedy"], "--opponents"),
    (["--players", "4", "--opponents", "greedy,greedy"], "--opponents"),
    (["--opponents", "{model},greedy"], "--opponents", "this game is 3 players"),
    (["--opponents", "{other},greedy,greedy"], "--opponents", "trained for 5 players"),
    (["--opponents", "{corrupt},greedy"], "--opponents", "not a saved model"),
    (["--opponents", "{garbage},greedy"], "--opponents", "a saved player is a .pt"),
    (["--bot", "{model}"], "--bot", "trained for 4 players, contracts 1"),
    (["--bot", "{folder}"], "--bot"),
    (["--bot", "nobody"], "--bot"),
    (["--bot", "math:sqrt"], "--bot", "raised TypeError"),
    (["--bot", "os:getcwd"], "--bot", "not an Agent"),
    (["--bot", "json:no_such_factory"], "--bot", "no attribute"),
    (["--bot", "nosuchmodule_xyz:make"], "--bot", "cannot import"),
    (["--bot", "random", "--opponents", "greedy,greedy"], "--bot"),
    (["--delay", "-1"], "--delay"),
    (["--delay", "inf"], "--delay"),
    (["--delay", "nan"], "--delay"),
    (["--max-moves", "0"], "--max-moves"),
    (["--max-moves", "x"], "--max-moves"),
    (["--contracts", "0"], "--contracts"),
    (["--contracts", ""], "--contracts"),
    (["--contracts", "1,x"], "--contracts"),
    (["--record", "{tmp}"], "--record", "folder"),
    (["--record", "{plain}/game.json"], "--record"),
    (["--seed", "1", "--seed", "2"], "--seed", "given twice"),
]

CASES = [
    pytest.param(prog, case[0], case[1], case[2] if len(case) > 2 else "", id=f"{prog}:{' '.join(case[0])}")
    for prog, cases in (("evaluate", EVALUATE), ("train", TRAIN), ("play", PLAY))
    for case in cases
]


def _never(what: str) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"{what} started on a bad command line")

    return fail


def _run(prog: str, argv: list[str], files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> int:
    """Call the program's main in-process, its work replaced by a failure; return the exit status."""
    if prog in ("evaluate", "train") and not any(a == "--out" for a in argv):
        argv = [*argv, "--out", os.path.join(files["tmp"], f"out-{prog}")]
    try:
        if prog == "evaluate":
            monkeypatch.setattr(evaluate, "run_tournament", _never("the tournament"))
            evaluate.main(argv)
        elif prog == "train":
            pytest.importorskip("sb3_contrib")
            monkeypatch.setattr("shanghai_env.agents.learned.train.loop.train", _never("training"))
            train_cli.main(["sb3", *argv])
        else:
            pytest.importorskip("rich")
            from rich.console import Console

            monkeypatch.setattr(play.PlaySession, "play", _never("the game"))
            return play.main(argv, console=Console(file=io.StringIO()), stdin=io.StringIO(""))
    except SystemExit as exc:
        return int(exc.code or 0)
    raise AssertionError("main returned without an error")


def _error_lines(err: str) -> list[str]:
    """stderr without argparse's usage lines."""
    lines = [line for line in err.splitlines() if line.strip()]
    return [line for line in lines if not line.startswith(("usage:", " "))]


@pytest.mark.parametrize(("prog", "argv", "option", "fragment"), CASES)
def test_a_bad_command_line_is_one_line_and_exit_2(
    prog: str,
    argv: list[str],
    option: str,
    fragment: str,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.format(**files) for a in argv]
    code = _run(prog, argv, files, monkeypatch)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = _error_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{PROGS[prog]}: error:"), err
    assert option in lines[0], err
    assert fragment in lines[0], err


def test_good_command_lines_pass_the_checks(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checks let through what works: a model at its own table, self-play options."""

    class Started(Exception):
        pass

    def start(*args: Any, **kwargs: Any) -> Any:
        raise Started

    monkeypatch.setattr(evaluate, "run_tournament", start)
    out = os.path.join(files["tmp"], "good-eval")
    with pytest.raises(Started):
        players = f"{files['model']},{G3}"
        evaluate.main(["--players", players, "--contracts", "1", "--out", out, "--no-progress"])
    assert os.path.isdir(out)
    configs: list[Any] = []
    monkeypatch.setattr("shanghai_env.agents.learned.train.loop.train", lambda c, **k: configs.append(c))
    argv = ["sb3", "--contracts", "1", "--opponents", "self", "--no-progress"]
    argv += ["--eval-opponents", f"greedy,{files['model']}"]
    argv += ["--out", os.path.join(files["tmp"], "good-train")]
    train_cli.main(argv)
    init = ["sb3", "--contracts", "1", "--init", files["model"], "--opponents", "greedy"]
    train_cli.main([*init, "--out", os.path.join(files["tmp"], "init")])
    assert [(c.opponents, c.init) for c in configs] == [(("self",), ""), (("greedy",), files["model"])]
    capsys.readouterr()


@pytest.mark.parametrize("method", ["ppo", "dmc", "dagger", "scorer", "sb3", "rllib"])
def test_a_seed_torch_cannot_take_is_refused_by_every_method_and_the_largest_passes(
    method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """torch takes a seed below 2**63: a larger one is refused before anything starts (it used to
    stop ppo at its start, and scorer after a round of games, its folder left behind)."""
    if method == "sb3":
        pytest.importorskip("sb3_contrib")
    if method == "rllib":
        pytest.importorskip("ray.rllib")
    configs: list[Any] = []
    monkeypatch.setattr("shanghai_env.agents.learned.train.loop.train", lambda c, **k: configs.append(c))
    teacher = ["--teacher", "greedy"] if method == "dagger" else []
    out = tmp_path / "run"
    for seed in (2**64, 2**63):
        with pytest.raises(SystemExit) as exc:
            train_cli.main([method, *teacher, "--seed", str(seed), "--out", str(out)])
        lines = _error_lines(capsys.readouterr().err)
        assert exc.value.code == 2 and len(lines) == 1, lines
        assert "argument --seed: expected a seed 0..9223372036854775807" in lines[0]
        assert not out.exists()
    train_cli.main([method, *teacher, "--seed", str(2**63 - 1), "--out", str(out)])
    assert [c.seed for c in configs] == [2**63 - 1]


def test_a_library_that_takes_32_bit_seeds_gets_one() -> None:
    from shanghai_env.agents.learned.train.run import seed32

    assert [seed32(s) for s in (0, 7, 2**32 - 1)] == [0, 7, 2**32 - 1]  # the runs made before: as they were
    large = [seed32(s) for s in (2**32, 2**32 + 1, 2**63 - 1)]
    assert all(0 <= s < 2**32 for s in large) and len(set(large)) == 3


def test_a_model_records_its_table(files: dict[str, str]) -> None:
    model = saved_table(files["model"])
    assert (model.num_players, model.contracts) == (4, (1,))
    check_model(files["model"], Rules(num_players=4, contracts=(1,)))
    check_model(files["model"], Rules(num_players=4, contracts=(3,)))  # the same layout: it can play
    with pytest.raises(ValueError, match="trained for 5 players, contracts 1,2"):
        check_model(files["other"], Rules(num_players=4, contracts=(1,)))
    with pytest.raises(ValueError, match="not a saved model"):
        saved_table(files["corrupt"])


# --- the real entry points --------------------------------------------------------------------


def _python(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, **kwargs
    )


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["evaluate.py", "--players", "greedy,greedy", "--games", "3"], "--players"),
        (["evaluate.py", "--players", "math:sqrt,greedy,greedy"], "--players"),
        (["train.py", "sb3", "--players", "9"], "--players"),
        (["-m", "shanghai_env.agents.ui.cli", "--seed", "-1"], "--seed"),
    ],
)
def test_the_programs_exit_2_with_one_line(args: list[str], option: str) -> None:
    done = _python(args, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = _error_lines(done.stderr)
    assert len(lines) == 1 and option in lines[0], done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and SIGINT")
def test_ctrl_c_ends_a_tournament_quietly(tmp_path: Path) -> None:
    out = tmp_path / "res"
    args = ["evaluate.py", "--players", "planner,greedy,random", "--games", "3000", "--workers", "2"]
    args += ["--out", str(out), "--no-progress", "--quiet"]
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it
    )
    try:
        deadline = time.monotonic() + 60
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # the output folder is made after the checks, as the games begin
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err


@pytest.mark.parametrize(
    "args",
    [
        ["train.py", "ppo", "--bogus"],
        ["train.py", "dmc", "--seed", "1", "--seed", "2"],
        ["train.py", "scorer", "fit", "--bogus"],
        ["train.py", "plot", "--bogus"],
        ["evaluate.py", "--bogus"],
        ["-m", "shanghai_env.agents.arena.ladder", "--bogus"],
        ["-m", "shanghai_env.draw", "--bogus"],
    ],
)
def test_every_parser_answers_a_usage_error_in_one_line_without_the_usage(args: list[str]) -> None:
    """One parser class for every command: stderr is the error line alone, not argparse's usage."""
    done = _python(args, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "--help" in lines[0], done.stderr
