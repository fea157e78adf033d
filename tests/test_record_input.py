"""Game record files that cannot be read or written, and records whose fields have the wrong
types, are refused with a ValueError naming the file or the field; saving is whole or nothing."""

from __future__ import annotations

import copy
import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from shanghai_env import record as record_module
from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.cli import write_atomically
from shanghai_env.record import RecordFileError, load, replay, save


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    config = TournamentConfig(
        players=("greedy", "random", "random"), games=3, seed=3, contracts=(1,), record_games=1
    )
    out = play_task(config, schedule(config)[0]).record
    assert out is not None
    return out


def refused(path: Path, match: str) -> RecordFileError:
    """``load(path)`` raises a RecordFileError, a ValueError naming the file, matching ``match``."""
    with pytest.raises(ValueError, match=match) as caught:
        load(path)
    assert isinstance(caught.value, RecordFileError)
    assert repr(str(path)) in str(caught.value)
    return caught.value


# --- reading ----------------------------------------------------------------------------------------


def test_a_folder_or_a_missing_file_is_no_record(tmp_path: Path) -> None:
    refused(tmp_path, "cannot read the game record")
    refused(tmp_path / "missing.json", "cannot read the game record .*: No such file")


def test_binary_and_utf16_files_are_no_record(tmp_path: Path, record: dict[str, Any]) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(bytes(range(256)))
    refused(binary, r"not a game record: not UTF-8 text \(byte 128 is not UTF-8\)")
    utf16 = tmp_path / "utf16.json"
    utf16.write_text(json.dumps(record), encoding="utf-16")
    refused(utf16, r"not UTF-8 text \(it is UTF-16; save it as UTF-8\)")


def test_json_nested_too_deep_is_no_record(tmp_path: Path, record: dict[str, Any]) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    refused(deep, "nests more than 32 deep")
    # deep enough for the parser but not for what reads it later (the replay page's JSON)
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps(dict(record, meta={"x": "@"})).replace('"@"', "[" * 900 + "]" * 900))
    refused(meta, "nests more than 32 deep")


def test_a_number_too_long_to_read_is_no_record(tmp_path: Path, record: dict[str, Any]) -> None:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(record).replace(str(record["start"]["seed"]), "7" * 5000))
    refused(path, "it holds a number too long to read")


def test_json_that_is_no_object_and_oversized_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    refused(path, "not a game record: expected a JSON object")
    path.write_text("{not json")
    refused(path, "not a game record: not JSON")
    monkeypatch.setattr(record_module, "MAX_RECORD_BYTES", 4)
    path.write_text("{ }  ")
    refused(path, "larger than")


def test_a_record_file_error_is_also_an_os_error(tmp_path: Path) -> None:
    """Code that catches OSError around load and save (the terminal game does) still catches it."""
    err = refused(tmp_path, "cannot read")
    assert isinstance(err, OSError) and err.strerror == str(err)


# --- writing ----------------------------------------------------------------------------------------


def nested(depth: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth - 1):
        out = [out]
    return out


@pytest.mark.parametrize(
    ("where", "match"),
    [
        ("folder", "cannot save the game record to .*: Is a directory"),
        ("under a file", "/file' is a file, not a folder"),
    ],
)
def test_saving_where_no_file_can_be_is_refused(
    tmp_path: Path, record: dict[str, Any], where: str, match: str
) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path if where == "folder" else tmp_path / "file" / "game.json"
    with pytest.raises(RecordFileError, match=match) as caught:
        save(record, path)
    assert repr(str(path)) in str(caught.value)
    assert (tmp_path / "file").read_text() == "x"


def test_saving_what_is_not_json_or_would_not_load_is_refused(tmp_path: Path, record: dict[str, Any]) -> None:
    path = tmp_path / "game.json"
    for bad, match in [
        (dict(record, meta={"x": object()}), "it is not JSON"),
        (dict(record, meta={"x": float("nan")}), "it is not JSON"),
        (dict(record, meta={"x": nested(40)}), "nests more than 32 deep"),
    ]:
        with pytest.raises(RecordFileError, match=match):
            save(bad, path)
        assert not path.exists()
    with pytest.raises(TypeError, match="a game record is a JSON object"):
        save([1, 2], path)  # type: ignore[arg-type]


def test_an_interrupted_save_leaves_the_old_file_whole(
    tmp_path: Path, record: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = save(record, tmp_path / "game.json")
    before = path.read_bytes()

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save(dict(record, meta={"changed": True}), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["game.json"]  # no part-written file left either


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions, links and pipes")
def test_atomic_writes_keep_permissions_follow_links_and_write_pipes_in_place(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("old")
    target.chmod(0o600)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomically(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomically(fifo, b"through the pipe")
    reader.join(timeout=10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)


# --- fields of the wrong type ---------------------------------------------------------------------------


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(r: dict[str, Any]) -> None:
        where: Any = r
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = value(where[path[-1]]) if callable(value) else value

    return change


WRONG_TYPES = {
    "version 1.0": (_set(("version",), 1.0), r"game record version 1\.0 .* reads version 1"),
    "version true": (_set(("version",), True), r"game record version True"),
    "version '1'": (_set(("version",), "1"), r"game record version '1'"),
    "package a number": (_set(("package",), 3), r"record package must be a string"),
    "a player not named": (_set(("players", 0), None), r"record players must be a list of names"),
    "players a string": (_set(("players",), "abc"), r"record players must be a list of names"),
    "total scores floats": (
        _set(("scores",), lambda s: [float(x) for x in s]),
        r"record scores must be a list of integers",
    ),
    "total scores bools": (_set(("scores",), [True, False, 0]), r"record scores must be a list of integers"),
    "game_over 1": (_set(("game_over",), 1), r"record game_over must be true or false"),
    "meta a list": (_set(("meta",), []), r"record meta must be an object"),
    "dealer missing": (_set(("start", "dealer"), None), r"record start must be"),
    "dealer a float": (_set(("start", "dealer"), lambda d: float(d)), r"record start must be"),
    "seed a string": (_set(("start", "seed"), lambda s: str(s)), r"record start must be"),
    "deck a string": (_set(("start", "deck"), "AS KS"), r"record start must be"),
    "contract a float": (_set(("deals", 0, "contract"), 1.0), r"record deal 1 says contract 1\.0"),
    "contract true": (_set(("deals", 0, "contract"), True), r"record deal 1 says contract True"),
    "deal scores floats": (
        _set(("deals", 0, "scores"), lambda s: [float(x) for x in s]),
        r"record deal 1 scores: the record says \[",
    ),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_fields_of_the_wrong_type_are_refused(case: str, record: dict[str, Any]) -> None:
    change, message = WRONG_TYPES[case]
    bad = copy.deepcopy(record)
    change(bad)
    with pytest.raises(ValueError, match=message):
        replay(bad)


def test_the_record_used_above_replays(record: dict[str, Any], tmp_path: Path) -> None:
    """The refusals above are of the changed field, not of a record that never replayed."""
    assert replay(load(save(record, tmp_path / "game.json"))).scores == record["scores"]
