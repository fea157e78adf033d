"""The games an evaluation has played so far, kept in its ``--out`` so that a stopped evaluation
resumes where it stopped.

While it plays, an evaluation appends every finished batch of games to
``played-<key>.jsonl`` in its output folder, ``<key>`` a hash of everything that decides its
games (:func:`evaluation_key`: the players as listed and their pins, the seed, the games, the
contracts, duplicate decks or not, the move cap, the games recorded). The same command run
again finds the file, keeps its games and plays only the others; since each game depends on
its schedule alone (:mod:`shanghai_env.agents.arena.tournament`), the outputs are those of an
evaluation never stopped, whatever ``--workers`` or backend each sitting had. A changed model
file or bot code changes the pins, so the key, and the evaluation starts afresh beside the old
file (which it leaves alone). The file is deleted once the outputs are written.

The first line names the evaluation; each later line is one batch: ``{"seconds": wall seconds
the batch took since the previous line, "games": [GameResult fields, ...]}``. A line cut short
by a kill is the last one and is dropped; any other damage is an error that names the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from shanghai_env.agents.arena.tournament import GameResult, GameTask, TournamentConfig, schedule

FORMAT = 1
PREFIX = "played-"


def evaluation_key(config: TournamentConfig, pins: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What decides an evaluation's games (and so whether a file of played games is its own)."""
    return {
        "format": FORMAT,
        "players": list(config.players),
        "pins": list(pins),
        "seed": config.seed,
        "games": config.total_games,
        "contracts": list(config.contracts),
        "duplicate": config.duplicate,
        "max_moves_per_deal": config.max_moves_per_deal,
        "record_games": config.record_games,
    }


def played_path(out_dir: str, key: dict[str, Any]) -> str:
    """The file of played games of the evaluation ``key`` in ``out_dir``."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return os.path.join(out_dir, f"{PREFIX}{digest}.jsonl")


def _result_of(fields: dict[str, Any]) -> GameResult:
    return GameResult(**{**fields, "seats": tuple(fields["seats"])})


@dataclass
class PlayedGames:
    """An evaluation's file of played games: the games it holds, and :meth:`add` for more."""

    path: str
    key: dict[str, Any]
    games: list[GameResult] = field(default_factory=list)
    seconds: float = 0.0  # the wall time the held games took, over every sitting

    @classmethod
    def open(cls, out_dir: str, config: TournamentConfig, pins: Sequence[dict[str, Any]]) -> PlayedGames:
        """The evaluation's file in ``out_dir`` with the games it holds (none for a new one; the
        file is then made with its first line). Raises ``ValueError`` naming the file when it is
        damaged or holds games that are not this evaluation's."""
        key = evaluation_key(config, pins)
        played = cls(played_path(out_dir, key), key)
        if os.path.isfile(played.path):
            played._read(schedule(config))
        else:
            with open(played.path, "x", encoding="utf-8") as f:
                f.write(json.dumps({"evaluation": key}) + "\n")
        return played

    def _damaged(self, why: str) -> ValueError:
        return ValueError(
            f"{self.path} is damaged ({why}): delete it to play that evaluation from its first game"
        )

    def _read(self, tasks: Sequence[GameTask]) -> None:
        with open(self.path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        whole = len(data) if data.endswith(b"\n") else len(data) - len(lines[-1])  # bytes kept
        if not data.endswith(b"\n"):  # a kill cut the last batch short: drop it
            lines = lines[:-1]
        lines = lines[:-1] if lines and lines[-1] == b"" else lines
        try:
            rows = [json.loads(line) for line in lines]
        except ValueError as err:
            raise self._damaged(f"a line is not JSON: {err}") from None
        if not rows:  # a kill cut its first line short: nothing was played
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(json.dumps({"evaluation": self.key}) + "\n")
            return
        if rows[0] != {"evaluation": self.key}:
            raise self._damaged("its first line does not name this evaluation")
        seen: set[int] = set()
        try:
            for row in rows[1:]:
                for fields in row["games"]:
                    game = _result_of(fields)
                    task = tasks[game.index] if 0 <= game.index < len(tasks) else None
                    if (
                        task is None
                        or game.index in seen
                        or (game.game_seed, game.seats)
                        != (
                            task.game_seed,
                            task.seats,
                        )
                    ):
                        raise self._damaged(f"game {game.index} is not one this evaluation schedules")
                    seen.add(game.index)
                    self.games.append(game)
                self.seconds += float(row["seconds"])
        except (KeyError, TypeError) as err:
            raise self._damaged(f"a batch is not a list of games: {err!r}") from None
        if whole < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(whole)

    def add(self, games: Sequence[GameResult], seconds: float) -> None:
        """Append a batch of finished games that took ``seconds`` of wall time (one line, flushed
        to disk before it returns)."""
        line = json.dumps({"seconds": seconds, "games": [asdict(g) for g in games]}) + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self.games.extend(games)
        self.seconds += seconds

    def remove(self) -> None:
        """Delete the file (the evaluation's outputs are written)."""
        os.remove(self.path)
