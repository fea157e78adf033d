"""``shanghai-draw`` refuses bad command lines, bad records and outputs it cannot or must not
write with one line and exit status 2, never a traceback, and writes nothing then."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.draw.__main__ import main
from shanghai_env.record import save

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    config = TournamentConfig(
        players=("greedy", "random", "random"), games=3, seed=4, contracts=(1,), record_games=1
    )
    out = play_task(config, schedule(config)[0]).record
    assert out is not None
    return out


@pytest.fixture
def files(tmp_path: Path, record: dict[str, Any]) -> dict[str, Path]:
    """A record, bad record files, a file to write under, a folder."""
    out = {"rec": save(record, tmp_path / "game.json"), "dir": tmp_path / "folder"}
    out["dir"].mkdir()
    out["html"] = save(record, tmp_path / "game.html")  # a record named like its page
    out["invalid"] = save(dict(record, scores=[1, 2, 3]), tmp_path / "invalid.json")
    out["binary"] = tmp_path / "binary.json"
    out["binary"].write_bytes(bytes(range(256)))
    out["utf16"] = tmp_path / "utf16.json"
    out["utf16"].write_text(json.dumps(record), encoding="utf-16")
    out["deep"] = tmp_path / "deep.json"
    out["deep"].write_text("[" * 100_000 + "]" * 100_000)
    out["seed"] = tmp_path / "seed.json"
    out["seed"].write_text(json.dumps(record).replace(str(record["start"]["seed"]), "7" * 5000))
    out["version"] = tmp_path / "version.json"
    out["version"].write_text(json.dumps(dict(record, version=1.0)))
    return out


def error_lines(err: str) -> list[str]:
    """stderr without argparse's usage lines."""
    lines = [line for line in err.splitlines() if line.strip()]
    return [line for line in lines if not line.startswith(("usage:", " "))]


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command in-process: it must exit 2 with one error line and write nothing; the line."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2, (argv, err)
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("shanghai-draw"), (argv, err)
    assert "Traceback" not in err and "wrote" not in out, (argv, err)
    return lines[0]


# --- writing over the input -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["svg", "replay"])
def test_the_record_is_never_written_over(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], command: str
) -> None:
    rec = files["rec"]
    before = rec.read_bytes()
    for output in (str(rec), f"{rec.parent}/./{rec.name}"):
        line = refused([command, str(rec), "-o", output], capsys)
        assert "writing it would destroy the input" in line
    link = rec.parent / "link.json"
    link.symlink_to(rec)
    refused([command, str(rec), "-o", str(link)], capsys)
    assert rec.read_bytes() == before


def test_replay_refuses_a_record_named_like_its_page(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's default name is the record's with .html: for game.html that is the record."""
    before = files["html"].read_bytes()
    line = refused(["replay", str(files["html"])], capsys)
    assert "the output (the default: no -o)" in line and "destroy the input" in line
    assert files["html"].read_bytes() == before
    assert main(["replay", str(files["html"]), "-o", str(files["html"].with_name("page.html"))]) == 0


# --- outputs that cannot be written --------------------------------------------------------------------


def test_outputs_that_cannot_be_written(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rec, folder = str(files["rec"]), str(files["dir"])
    for command in ("svg", "png", "replay"):
        assert "is a folder; name a file" in refused([command, rec, "-o", folder], capsys)
        under = f"{rec}/out.{command}"
        assert "is a file, not a folder" in refused([command, rec, "-o", under], capsys)
    assert "the file name is empty" in refused(["svg", rec, "-o", ""], capsys)
    assert os.listdir(folder) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc takes no new files")
def test_an_output_refused_when_written_is_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """/proc looks writable (even to root) but takes no file: the write itself fails."""
    for command in ("svg", "replay"):
        assert "cannot write '/proc/table.x'" in refused(
            [command, str(files["rec"]), "-o", "/proc/table.x"], capsys
        )


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_folder(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    files["dir"].chmod(0o500)
    try:
        line = refused(["svg", str(files["rec"]), "-o", str(files["dir"] / "t.svg")], capsys)
    finally:
        files["dir"].chmod(0o700)
    assert "is not writable" in line


def test_an_output_in_a_missing_folder_is_written_there(files: dict[str, Path]) -> None:
    out = files["dir"] / "new" / "deeper" / "t.svg"
    assert main(["svg", str(files["rec"]), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<svg")


def test_an_interrupted_picture_leaves_the_old_file_whole(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = files["dir"] / "t.svg"
    out.write_text("the old picture")

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        main(["svg", str(files["rec"]), "-o", str(out)])
    assert out.read_text() == "the old picture" and os.listdir(files["dir"]) == ["t.svg"]


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
def test_a_picture_can_go_to_a_pipe(files: dict[str, Path]) -> None:
    """A device or a pipe is written in place, not replaced by a file."""
    args = [sys.executable, "-m", "shanghai_env.draw", "svg", str(files["rec"]), "-o", "/dev/stdout"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.startswith("<svg"), done.stderr


def test_png_files_end_in_png(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("t.jpg", "t.xyz", "t"):
        line = refused(["png", str(files["rec"]), "-o", str(files["dir"] / name)], capsys)
        assert "png writes a PNG file: name it *.png" in line


@pytest.mark.parametrize("scale", ["0", "-1", "nan", "inf", "4.5", "1e9", "0.01", "x"])  # refused at once
def test_the_png_scale_is_bounded(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], scale: str
) -> None:
    line = refused(["png", str(files["rec"]), "--scale", scale, "-o", str(files["dir"] / "t.png")], capsys)
    assert "--scale: expected a size >= 0.1 and <= 4" in line and "4000 pixels wide" in line


def test_the_scale_is_for_png_only(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    refused(["svg", str(files["rec"]), "--scale", "2", "-o", str(files["dir"] / "t.svg")], capsys)


def test_png_without_pillow_names_the_extra(files: dict[str, Path]) -> None:
    code = (
        "import sys; sys.modules['PIL'] = None\n"
        "from shanghai_env.draw.__main__ import main\n"
        f"main(['png', {str(files['rec'])!r}, '-o', {str(files['dir'] / 't.png')!r}])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and "pip install 'shanghai-env[draw]'" in lines[0], done.stderr


# --- records and options -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["svg", "replay"])
def test_bad_records_are_one_line_naming_the_file(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], command: str
) -> None:
    for name, what in [
        ("dir", "cannot read the game record"),
        ("binary", "not UTF-8 text"),
        ("utf16", "it is UTF-16"),
        ("deep", "nests more than 32 deep"),
        ("seed", "a number too long to read"),
        ("version", "game record version 1.0"),
        ("invalid", "record final scores [1, 2, 3]"),
    ]:
        line = refused([command, str(files[name]), "-o", str(files["dir"] / "out")], capsys)
        assert what in line and str(files[name]) in line, line
    assert os.listdir(files["dir"]) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["svg", "REC", "-o", "a.svg", "-o", "b.svg"],
        ["svg", "REC", "--frame", "1", "--frame", "2", "-o", "a.svg"],
        ["png", "REC", "--view", "1", "--view", "2", "-o", "a.png"],
        ["png", "REC", "--scale", "1", "--scale", "2", "-o", "a.png"],
        ["replay", "REC", "--title", "a", "--title", "b"],
        ["replay", "REC", "-o", "a.html", "--output", "b.html"],
    ],
)
def test_options_given_twice_are_refused(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    argv = [str(files["rec"]) if a == "REC" else str(files["dir"] / a) if "." in a else a for a in argv]
    assert "given twice; give it once" in refused(argv, capsys)


# --- fuzzing the command line ----------------------------------------------------------------------------


def bad_command_lines(files: dict[str, Path], count: int, seed: int) -> list[list[str]]:
    """Command lines of which each holds at least one bad piece, built from seeded choices."""
    rng = random.Random(seed)
    out = str(files["dir"] / "out")
    good_records = [str(files["rec"])]
    bad_records = [str(files[k]) for k in ("dir", "binary", "utf16", "deep", "seed", "version", "invalid")]
    bad_records += [str(files["dir"] / "missing.json"), ""]
    bad_outputs = [str(files["dir"]), str(files["rec"]), f"{files['rec']}/x", ""]
    bad_options = [
        ["--frame", "x"], ["--frame", "99999"], ["--frame", "-99999"], ["--frame", "1" * 5000],
        ["--view", "9"], ["--view", "-1"], ["--view", "nan"], ["--scale", "0"], ["--scale", "1e400"],
        ["--bogus"], ["--frame"], ["-o"], ["--title"],
    ]  # fmt: skip
    lines = [[], ["bogus"], ["svg"], ["png"], ["replay"], ["replay", "--bogus"], ["--help=x"]]
    while len(lines) < count:
        command = rng.choice(["svg", "png", "replay"])
        kind = rng.randrange(3)
        record = rng.choice(bad_records if kind == 0 else good_records)
        ext = "html" if command == "replay" else command
        output = rng.choice(bad_outputs) if kind == 1 else f"{out}.{ext}"
        argv = [command, record, "-o", output]
        if kind == 2:
            argv[rng.randrange(1, len(argv) + 1) : 0] = rng.choice(bad_options)
        lines.append(argv)
    return lines


def test_bad_command_lines_exit_2_with_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before = files["rec"].read_bytes()
    for argv in bad_command_lines(files, 80, seed=0):
        refused(argv, capsys)
    assert os.listdir(files["dir"]) == [] and files["rec"].read_bytes() == before


def test_the_installed_entry_point_exits_2_with_one_line(files: dict[str, Path]) -> None:
    """The real program, not main(): the lines above through ``python -m shanghai_env.draw``."""
    rec, folder = str(files["rec"]), str(files["dir"])
    for argv in (
        ["svg", rec, "-o", folder],
        ["png", rec, "--scale", "nan", "-o", "t.png"],
        ["replay", str(files["deep"])],
        ["replay", str(files["invalid"]), "-o", f"{folder}/x.html"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "shanghai_env.draw", *argv],
            capture_output=True, text=True, timeout=120, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(error_lines(done.stderr)) == 1, done.stderr


@pytest.mark.parametrize("argv", [["--help"], ["svg", "--help"], ["png", "--help"], ["replay", "--help"]])
def test_the_help_reads_as_plain_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--help shows no reStructuredText markup: the module docstring's double backticks are for
    the API documentation, not for a terminal."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, _ = capsys.readouterr()
    assert stop.value.code == 0 and out.startswith("usage: shanghai-draw")
    assert "``" not in out and "`" not in out, out
    if argv == ["--help"]:
        assert "shanghai-draw (python -m shanghai_env.draw): pictures of a recorded game." in " ".join(
            out.split()
        )
