"""Run folders under a careless or hostile user: a checkpoint is read without running anything in
it, a damaged one is refused in one line naming the file and what to do, NaN weights are never
loaded nor saved, the folder is locked against a second trainer and written whole, Ctrl-C saves
a checkpoint the same command goes on from, and refused runs leave nothing behind."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import signal
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from shanghai_env.agents.learned.players.policy import load_policy  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.run import Run  # noqa: E402
from tests.test_trainer import tiny, weights  # noqa: E402

ARGV = ["--contracts", "1", "--seed", "3", "--num-envs", "4", "--eval-every", "0", "--eval-games", "0"]
ARGV += ["--checkpoint-every", "32", "--no-progress", "--batch-size", "16", "--epochs", "1"]
ARGV += ["--net-arch", "16"]
PPO = ["ppo", *ARGV, "--n-steps", "8"]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit status and the last line on stderr (argparse prints its usage above it)."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    return code, err[-1] if err else ""


class Marker:
    """A pickle that creates a file when it is loaded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_pickle_in_the_checkpoint_runs_no_code(tmp_path, capsys):
    out, marker = str(tmp_path / "run"), str(tmp_path / "marker")
    assert run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)[0] == 0
    ckpt = os.path.join(out, "checkpoint.pt")
    state = torch.load(ckpt, weights_only=True)
    os.remove(os.path.join(out, "checkpoint.json"))  # (a checksum would refuse any edit already)
    torch.save({**state, "last_eval": Marker(marker)}, ckpt)  # in the file itself
    code, line = run_cli([*PPO, "--timesteps", "64", "--out", out], capsys)
    assert code == 2 and ckpt in line and "delete" in line and not os.path.exists(marker)
    state["method"]["games"] = pickle.dumps(Marker(marker))  # in the games kept inside it
    torch.save(state, ckpt)
    code, line = run_cli([*PPO, "--timesteps", "64", "--out", out], capsys)
    assert code == 2 and ckpt in line and "0.2.0" in line and not os.path.exists(marker)


DAGGER = {"teacher": "planner", "n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)}


@pytest.mark.parametrize("method", ["ppo", "dmc", "dagger"])
def test_a_checkpoint_holds_no_pickle(tmp_path, method):
    """Every value of a checkpoint is a tensor or plain data, bots seated or teaching included."""
    out = str(tmp_path / "run")
    if method == "dagger":
        train(dataclasses.replace(tiny("ppo", out), method="dagger", method_options=DAGGER))
    else:
        train(tiny(method, out, opponents=("planner",)))
    state = torch.load(os.path.join(out, "checkpoint.pt"), weights_only=True)

    def plain(value):
        if isinstance(value, dict):
            return all(isinstance(k, (str, int)) and plain(v) for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, (bool, int, float, str, torch.Tensor))

    assert plain(state), method
    json.dumps(state["method"]["games"])  # the games in progress: JSON values


OLD = {
    # as shanghai-env 0.2.0 wrote them: the games pickled, or (players that did not pickle) None
    "pickled games": {"venv": pickle.dumps([1, 2])},
    "games not kept": {"venv": None},
    "pickled waiting decisions": {"pending": pickle.dumps([[(b"x", 3, 1)]])},
}


@pytest.mark.parametrize("old", sorted(OLD))
def test_a_checkpoint_with_pickles_is_refused_in_one_line_naming_the_release(tmp_path, capsys, old):
    out = str(tmp_path / "run")
    assert run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)[0] == 0
    ckpt = os.path.join(out, "checkpoint.pt")
    state = torch.load(ckpt, weights_only=True)
    del state["method"]["games"]
    state["method"].update(OLD[old])
    torch.save(state, ckpt)
    os.remove(os.path.join(out, "checkpoint.json"))
    code, line = run_cli([*PPO, "--timesteps", "64", "--out", out], capsys)
    assert code == 2 and line.count(ckpt) >= 1, line
    assert "shanghai-env 0.2.0 or earlier" in line and "pip install shanghai-env==0.2.0" in line, line


def _flip(path: str) -> None:
    data = bytearray(Path(path).read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    Path(path).write_bytes(bytes(data))


def _nan(path: str) -> None:
    state = torch.load(path, weights_only=True)
    state["method"]["net"] = {k: v * float("nan") for k, v in state["method"]["net"].items()}
    torch.save(state, path)
    os.remove(os.path.join(os.path.dirname(path), "checkpoint.json"))  # as a run from before checksums


DAMAGE = {
    "flipped": (_flip, "delete"),
    "truncated": (lambda p: Path(p).write_bytes(Path(p).read_bytes()[:1000]), "delete"),
    "empty": (lambda p: Path(p).write_bytes(b""), "delete"),
    "random": (lambda p: Path(p).write_bytes(os.urandom(5000)), "delete"),
    "nan": (_nan, "not finite"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_checkpoint_is_one_line_naming_the_file(damage, tmp_path, capsys):
    out = str(tmp_path / "run")
    assert run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)[0] == 0
    ckpt = os.path.join(out, "checkpoint.pt")
    harm, says = DAMAGE[damage]
    harm(ckpt)
    model = Path(out, "model.pt").read_bytes()
    code, line = run_cli([*PPO, "--timesteps", "64", "--out", out], capsys)
    assert code == 2 and ckpt in line and says in line, line
    assert Path(out, "model.pt").read_bytes() == model  # nothing exported from it


def test_a_checkpoint_that_fails_its_checksum_is_never_unpickled(tmp_path, capsys, monkeypatch):
    from shanghai_env.agents.learned.train import run

    out = str(tmp_path / "run")
    assert run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)[0] == 0
    Path(out, "checkpoint.pt").write_bytes(os.urandom(5000))

    def refuse(*args, **kwargs):
        raise AssertionError("torch.load was called")

    monkeypatch.setattr(run.torch, "load", refuse)
    code, line = run_cli([*PPO, "--timesteps", "64", "--out", out], capsys)
    assert code == 2 and "is not the file this run wrote" in line, line


def test_a_checkpoint_of_another_method_names_the_method(tmp_path, capsys):
    dmc, ppo = str(tmp_path / "dmc"), str(tmp_path / "ppo")
    assert run_cli(["dmc", *ARGV, "--timesteps", "32", "--out", dmc], capsys)[0] == 0
    assert run_cli([*PPO, "--timesteps", "32", "--out", ppo], capsys)[0] == 0
    for name in ("checkpoint.pt", "checkpoint.json"):
        Path(ppo, name).write_bytes(Path(dmc, name).read_bytes())
    code, line = run_cli([*PPO, "--timesteps", "64", "--out", ppo], capsys)
    assert code == 2 and "holds a dmc run" in line and "use the matching method" in line


def test_nan_weights_are_never_saved_and_a_nan_player_is_refused(tmp_path, monkeypatch, capsys):
    from shanghai_env.agents.learned.train.methods.ppo import PPO as Method

    out = str(tmp_path / "run")
    train(tiny("ppo", out, timesteps=32))
    good = weights(os.path.join(out, "model.pt"))
    step = Method.step

    def diverging(self):
        stats = step(self)
        with torch.no_grad():
            self.net.v.weight.fill_(float("nan"))
        return stats

    monkeypatch.setattr(Method, "step", diverging)
    with pytest.raises(ValueError, match="NaN or inf"):
        train(tiny("ppo", out, timesteps=96))
    kept = weights(os.path.join(out, "model.pt"))
    assert all(torch.equal(good[k], kept[k]) for k in good)  # not replaced by a NaN player
    blob = torch.load(os.path.join(out, "model.pt"), weights_only=True)
    blob["state_dict"]["v.weight"] = blob["state_dict"]["v.weight"] * float("nan")
    nan = str(tmp_path / "nan.pt")
    torch.save(blob, nan)
    with pytest.raises(ValueError, match="not finite"):
        load_policy(nan)
    from shanghai_env.agents.arena import evaluate_cli

    with pytest.raises(SystemExit) as exc:
        evaluate_cli.main(["--players", f"{nan},greedy,greedy,greedy", "--contracts", "1", "--games", "4"])
    assert exc.value.code == 2 and "nan.pt" in capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize("change", ["players", "rules"])
def test_a_player_of_another_shape_or_without_rules_names_its_table(change, tmp_path, capsys):
    from shanghai_env.agents.arena import evaluate_cli

    out = str(tmp_path / "run")
    train(tiny("ppo", out, timesteps=32))
    blob = torch.load(os.path.join(out, "model.pt"), weights_only=True)
    if change == "players":
        blob["rules"]["num_players"] = 3
    else:
        del blob["rules"]
    bad = str(tmp_path / "bad.pt")
    torch.save(blob, bad)
    with pytest.raises(SystemExit) as exc:
        evaluate_cli.main(["--players", f"{bad},greedy,greedy,greedy", "--contracts", "1", "--games", "4"])
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert exc.value.code == 2 and "bad.pt" in line and "4 players, contract 1" in line, line


def test_a_second_trainer_on_the_folder_is_refused(tmp_path, capsys):
    out = str(tmp_path / "run")
    holder = Run(tiny("ppo", out))  # the folder is held, as by a trainer running
    try:
        code, line = run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)
        assert code == 2 and out in line and "in use by another shanghai-train" in line
        assert not os.path.exists(os.path.join(out, "config.json"))
    finally:
        holder.close()
    assert run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)[0] == 0
    assert not [p for p in Path(out).iterdir() if ".part" in p.name]  # every file written whole


def test_ctrl_c_saves_a_checkpoint_the_same_command_goes_on_from(tmp_path, monkeypatch, capsys):
    from shanghai_env.agents.learned.train.methods.ppo import PPO as Method

    whole = str(tmp_path / "whole")
    train(tiny("ppo", whole, timesteps=128, checkpoint_every=1000))
    step, calls = Method.step, {"n": 0}

    def interrupted(self):
        calls["n"] += 1
        if calls["n"] == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C inside the third update
        return step(self)

    monkeypatch.setattr(Method, "step", interrupted)
    parts = str(tmp_path / "parts")
    with pytest.raises(KeyboardInterrupt):
        train(tiny("ppo", parts, timesteps=128, checkpoint_every=1000))
    saved = torch.load(os.path.join(parts, "checkpoint.pt"), weights_only=True)
    assert saved["env_steps"] == 96  # the third update finished, then the checkpoint (none was due)
    # how it goes on is said even without progress messages (tiny runs have --no-progress)
    assert "the same command goes on from there" in capsys.readouterr().err
    monkeypatch.setattr(Method, "step", step)
    train(tiny("ppo", parts, timesteps=128, checkpoint_every=1000))
    a, b = weights(os.path.join(whole, "model.pt")), weights(os.path.join(parts, "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    with open(os.path.join(parts, "progress.csv"), encoding="utf-8") as f:
        steps = [line.split(",")[0] for line in f.read().splitlines()[1:]]
    assert steps == ["32", "64", "96", "128"]


def test_a_run_stopped_before_its_first_checkpoint_starts_clean(tmp_path, monkeypatch):
    from shanghai_env.agents.learned.train.methods.ppo import PPO as Method

    step, calls = Method.step, {"n": 0}

    def killed(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise SystemExit("killed")  # as a process ended before its first checkpoint
        return step(self)

    monkeypatch.setattr(Method, "step", killed)
    out = str(tmp_path / "run")
    with pytest.raises(SystemExit):
        train(tiny("ppo", out, timesteps=128, checkpoint_every=1000))
    assert not os.path.exists(os.path.join(out, "checkpoint.pt"))
    monkeypatch.setattr(Method, "step", step)
    train(tiny("ppo", out, timesteps=128, checkpoint_every=1000))
    with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
        steps = [line.split(",")[0] for line in f.read().splitlines()[1:]]
    assert steps == ["32", "64", "96", "128"]


def test_an_option_given_twice_is_refused_and_leaves_nothing(tmp_path, capsys):
    out = str(tmp_path / "run")
    code, line = run_cli([*PPO, "--timesteps", "4096", "--timesteps", "512", "--out", out], capsys)
    assert code == 2 and "--timesteps given twice" in line
    assert not os.path.exists(out)


def test_a_run_refused_when_it_starts_leaves_nothing(tmp_path, monkeypatch, capsys):
    from shanghai_env.agents.learned.train.methods.ppo import PPO as Method

    def refused(self, config, device):
        raise ValueError("refused by the method")

    monkeypatch.setattr(Method, "setup", refused)
    out = str(tmp_path / "run")
    code, line = run_cli([*PPO, "--timesteps", "32", "--out", out], capsys)
    assert code == 2 and "refused by the method" in line
    assert not os.path.exists(out)  # no config.json, no lock, no folder


def test_plot_makes_its_folder_and_refuses_runs_of_other_tables(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    runs = {}
    for players in (3, 4):
        runs[players] = str(tmp_path / f"p{players}")
        train(tiny("dmc", runs[players], players=players, eval_games=3, eval_opponents=("random",)))
    png = str(tmp_path / "missing" / "dir" / "x.png")
    assert run_cli(["plot", runs[4], "--out", png], capsys)[0] == 0
    assert os.path.getsize(png) > 1000
    code, line = run_cli(["plot", runs[3], runs[4], "--out", png], capsys)
    assert code == 2 and "different tables" in line and "3 players" in line and "4 players" in line
    with open(os.path.join(runs[3], "config.json"), encoding="utf-8") as f:
        assert json.load(f)["players"] == 3


EVAL_HEADER = "env_steps,wall_seconds,train_seconds,greedy_diff,greedy_low,greedy_high,greedy_score,games\r\n"
EVAL_ROWS = ["0,1.0,0.0,9.5,4.0,15.0,80.0,24\r\n", "4096,9.0,5.0,3.5,-1.0,8.0,70.0,24\r\n"]


@pytest.mark.parametrize(
    "cut",
    [
        "8192,17.0,10.0,1.5,-3",  # killed while appending: the line ends in the middle of a number
        "8192,17.0,10.0,1.5\r\n",  # a row missing its last fields
        "8192,17.0,10.0,1.5,x,y,z,24\r\n",  # values that are no numbers
    ],
)
def test_plot_skips_a_cut_row_of_eval_csv_and_refuses_a_file_with_no_whole_one(cut, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from shanghai_env.agents.learned.train.run import read_curve

    run, png = tmp_path / "run", str(tmp_path / "curve" / "x.png")
    run.mkdir()
    (run / "eval.csv").write_text(EVAL_HEADER + "".join(EVAL_ROWS) + cut, newline="")
    code, line = run_cli(["plot", str(run), "--out", png], capsys)
    assert code == 0 and os.path.getsize(png) > 1000
    said = "the row on line 4 is incomplete (cut short, as a run stopped while writing it leaves): skipped"
    assert line == f"{run / 'eval.csv'}: {said}"
    rows, skipped = read_curve(str(run / "eval.csv"))
    assert [r["env_steps"] for r in rows] == [0, 4096] and skipped == [4]
    (run / "eval.csv").write_text(EVAL_HEADER + cut, newline="")
    png = str(tmp_path / "other" / "x.png")
    code, line = run_cli(["plot", str(run), "--out", png], capsys)
    assert code == 2 and "holds no complete evaluation row" in line and "line 2" in line
    assert not os.path.exists(os.path.dirname(png))  # refused: no folder made for the picture


def test_a_resumed_run_drops_the_row_it_was_cut_in(tmp_path):
    """A kill while a row was appended leaves it cut; resuming keeps the whole rows only."""
    out = str(tmp_path / "run")
    folder = Run(tiny("ppo", out))
    try:
        with open(folder.path("eval.csv"), "w", newline="", encoding="utf-8") as f:
            f.write(EVAL_HEADER + "".join(EVAL_ROWS) + "4096,9")  # the row of steps 4096, cut
        folder.truncate_logs(4096)
    finally:
        folder.close()
    with open(os.path.join(out, "eval.csv"), encoding="utf-8") as f:
        assert f.read().splitlines() == [EVAL_HEADER.strip(), *(r.strip() for r in EVAL_ROWS)]


def damaged_copies(tmp_path: Path) -> dict[str, Path]:
    """Files that are no saved player, or one damaged: random bytes, a torch zip whose weights are
    damaged (torch reads them without noticing), one cut short and one whose pickle is damaged."""
    from shanghai_env.agents.registry import shipped_models

    whole = Path(shipped_models()["scratch_contract1"]).read_bytes()
    weights = bytearray(whole)
    weights[len(whole) // 2 : len(whole) // 2 + 8] = bytes(8)  # the middle: tensor data
    pickled = bytearray(whole)
    start = whole.index(b"data.pkl") + 60
    pickled[start : start + 8] = b"\xff" * 8
    files = {
        "random.pt": os.urandom(3000),
        "weights.pt": bytes(weights),
        "cut.pt": whole[: len(whole) // 3],
        "pickle.pt": bytes(pickled),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return {name: tmp_path / name for name in files}


def test_a_garbage_or_damaged_player_file_is_one_line_naming_it(tmp_path, capsys):
    from shanghai_env.agents.arena import evaluate_cli

    for name, path in damaged_copies(tmp_path).items():
        with pytest.raises(ValueError) as err:
            load_policy(str(path))
        text = str(err.value)
        assert "\n" not in text and name in text, text
        assert "not a saved player" in text or "damaged saved player" in text, text
        assert "weights_only" not in text and "torch" not in text.lower(), text  # never torch's text
        with pytest.raises(SystemExit) as exc:
            evaluate_cli.main(["--players", f"{path},greedy,greedy", "--contracts", "1", "--games", "3"])
        lines = [s for s in capsys.readouterr().err.splitlines() if s.startswith("shanghai-evaluate")]
        assert exc.value.code == 2 and len(lines) == 1 and name in lines[0] and "Traceback" not in lines[0]
