"""Games kept on disk as they finish, one JSON line each, so that a stopped run resumes: the
ladder's tables (:mod:`shanghai_env.agents.arena.ladder`) and an evaluation's played games
(``evaluate.py``, :func:`played_path`) are such files.

Every line is written whole with its newline (:func:`append_games`), so a stop can leave only
the last line unfinished; :func:`read_games` leaves it out and says where it begins, and refuses
anything else that is not a game of the schedule with the file and line number. Since each game
depends on its schedule alone (:mod:`shanghai_env.agents.arena.tournament`), the games read back
and the games still to play make the run never stopped.

An evaluation's file is ``played-<key>.jsonl`` in its ``--out``, ``<key>`` a hash of everything
that decides its games (:func:`evaluation_key`): the same command finds it again, and a changed
model file or bot (its pin) or any other option gives another file, so games of two different
evaluations never mix.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Any

from shanghai_env.agents.arena.tournament import GameResult, GameTask, TournamentConfig, schedule

_DAMAGED = "move the file away to play its games again, or use another --out folder"
_FIELDS = {f.name for f in fields(GameResult)}
_OPTIONAL = {"seconds", "extra", "record"}


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ints(value: object, length: int, low: int | None = None, high: int | None = None) -> bool:
    """``value`` is a list of ``length`` ints, each in ``low..high`` where given."""
    return (
        isinstance(value, list)
        and len(value) == length
        and all(is_int(v) and (low is None or v >= low) and (high is None or v <= high) for v in value)
    )


def _game_problem(data: object, config: TournamentConfig, tasks: dict[int, GameTask]) -> str | None:
    """Why ``data`` (a stored line, parsed) is not a game of ``config``'s schedule, or None."""
    if not isinstance(data, dict):
        return f"expected a game (a JSON object), got {type(data).__name__}"
    missing = sorted(_FIELDS - _OPTIONAL - data.keys())
    unknown = sorted(data.keys() - _FIELDS)
    if missing:
        return f"not a game: no {', '.join(missing)}"
    if unknown:
        return f"not a game: unknown fields {', '.join(unknown)}"
    index = data["index"]
    if not is_int(index) or index not in tasks:
        return f"game index {index!r} is not one of the schedule's games (0..{len(tasks) - 1})"
    task = tasks[index]
    n, deals = config.num_players, len(config.contracts)
    stored = (data["block"], data["rotation"], data["game_seed"], data["seats"])
    if not _ints(data["seats"], n) or stored != (task.block, task.rotation, task.game_seed, list(task.seats)):
        return f"game {index} was not played on these decks and seats (another seed or schedule)"
    if data["contracts"] != list(config.contracts):
        return f"game {index} played contracts {data['contracts']!r}, this run {list(config.contracts)}"
    scores, deal_scores = data["scores"], data["deal_scores"]
    if not _ints(scores, n) or not (
        isinstance(deal_scores, list) and len(deal_scores) == deals and all(_ints(r, n) for r in deal_scores)
    ):
        return f"game {index}: scores and deal_scores must be {n} integers (per deal, {deals} deals)"
    if [sum(column) for column in zip(*deal_scores)] != scores:
        return f"game {index}: the scores are not the sums of the deal scores"
    flags_ok = all(
        isinstance(data[k], list) and len(data[k]) == deals and all(isinstance(v, bool) for v in data[k])
        for k in ("blind", "capped")
    )
    if not _ints(data["went_out"], deals, -1, n - 1) or not flags_ok:
        return f"game {index}: went_out, blind and capped must give one value per deal"
    if not is_int(data["moves"]) or data["moves"] < 0:
        return f"game {index}: moves must be a non-negative integer, got {data['moves']!r}"
    seconds = data.get("seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return f"game {index}: seconds must be a number, got {seconds!r}"
    if not isinstance(data.get("extra", {}), dict) or not isinstance(data.get("record"), (dict, type(None))):
        return f"game {index}: extra must be an object and record an object or null"
    return None


def read_games(path: str, config: TournamentConfig) -> tuple[list[GameResult], int | None]:
    """The games stored in the file ``path``, checked against ``config``'s schedule, in index order,
    and where a last line cut off by a stop begins (a byte offset), or None.

    A stop can leave only the last line unfinished: every line is written whole with its newline,
    so a last line without one is a cut-off line and is left out. Anything else that is not a game
    of this schedule raises ValueError naming the file and line. A missing file holds no games.
    """
    if not os.path.lexists(path):
        return [], None
    if os.path.isdir(path):
        raise ValueError(f"{path} is a folder, where a file of stored games goes; {_DAMAGED}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise ValueError(f"cannot read {path}: {err.strerror or err}") from None
    lines = data.split(b"\n")
    cut = None if lines[-1] == b"" else len(data) - len(lines[-1])
    tasks = {t.index: t for t in schedule(config)}
    games: dict[int, GameResult] = {}
    first_line: dict[int, int] = {}
    for number, raw in enumerate(lines[:-1], start=1):
        if not raw.strip():
            continue
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError(f"{path}, line {number}: not a stored game (not JSON); {_DAMAGED}") from None
        problem = _game_problem(parsed, config, tasks)
        if problem:
            raise ValueError(f"{path}, line {number}: {problem}; {_DAMAGED}")
        game = GameResult(**{**parsed, "seats": tuple(parsed["seats"])})
        if game.index in games:
            raise ValueError(
                f"{path}, line {number}: game {game.index} is stored twice (also line "
                f"{first_line[game.index]}); {_DAMAGED}"
            )
        games[game.index] = game
        first_line[game.index] = number
    return [games[i] for i in sorted(games)], cut


def append_games(path: str, games: Sequence[GameResult]) -> None:
    """Add ``games`` to the file ``path``, one whole line each, on disk before it returns."""
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(json.dumps(asdict(g)) + "\n" for g in games))
        f.flush()
        os.fsync(f.fileno())


def drop_cut_line(path: str, cut: int) -> None:
    """Remove the unfinished last line that begins at byte ``cut`` (:func:`read_games`)."""
    with open(path, "r+b") as f:
        f.truncate(cut)


KEY_FORMAT = 1


def evaluation_key(config: TournamentConfig, pins: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What decides an evaluation's games: the players as listed and what each was (its pin),
    the seed, the games, the contracts, duplicate decks or not, the move cap, the games recorded."""
    return {
        "format": KEY_FORMAT,
        "players": list(config.players),
        "pins": list(pins),
        "seed": config.seed,
        "games": config.total_games,
        "contracts": list(config.contracts),
        "duplicate": config.duplicate,
        "max_moves_per_deal": config.max_moves_per_deal,
        "record_games": config.record_games,
    }


def played_path(out_dir: str, config: TournamentConfig, pins: Sequence[dict[str, Any]]) -> str:
    """The file of the games played so far by the evaluation of ``config`` in ``out_dir``."""
    key = json.dumps(evaluation_key(config, pins), sort_keys=True)
    return os.path.join(out_dir, f"played-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsonl")
