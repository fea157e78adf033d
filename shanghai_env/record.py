"""Game records: one versioned JSON format for a whole game, and its exact replay.

A record holds what makes the game again and what it gave, so that anyone can check it:

.. code-block:: json

    {
      "format": "shanghai-game-record",
      "version": 1,
      "package": "shanghai-env 0.2.0",
      "rules": {"num_players": 4, "contracts": [1, 2], "joker_points": 50, "...": "every option"},
      "start": {"seed": 123, "deck": null, "dealer": 2},
      "players": ["planner", "greedy", "greedy", "random"],
      "deals": [
        {"contract": 1, "moves": ["draw", "pass", "take", "discard 7H", "..."],
         "scores": [0, 35, 60, 105], "out_player": 0, "blind": false},
        {"contract": 2, "moves": ["take", "..."]}
      ],
      "scores": [0, 35, 60, 105],
      "game_over": false,
      "meta": {}
    }

- ``start`` is :meth:`Game.reset`'s arguments: ``seed`` (the game's seed entropy, so that an
  unseeded game replays too), ``deck`` (card strings, top first, when the first deal was stacked)
  and ``dealer`` (the first dealer);
- ``rules`` holds every rule option; a record written before ``max_moves_per_deal`` was a rule
  option lacks it and is read with its default (3000);
- ``deals[i].moves`` are the moves of deal ``i`` by their engine names (:attr:`Move.name`, read
  back by :func:`~shanghai_env.moves.parse_move`). A deal that the rule ``max_moves_per_deal``
  ends needs no entry of its own: replaying its moves ends it. ``"abandon"`` stands for
  :meth:`Game.abandon_deal` (a deal ended early by a caller, everybody scoring their hand);
  records written before the cap was a rule end each capped deal with it, and an ``"abandon"``
  right after the move that reaches the rule's cap is read as that same end;
- a finished deal has its ``scores``, ``out_player`` (``null``: nobody went out) and ``blind``;
  the last deal of an unfinished game has only its moves;
- ``scores`` are the totals after the last move, ``game_over`` whether the game ended;
- ``meta`` is free: where the game was played (a tournament's seed and game index, say).

:func:`replay` rebuilds the :class:`Game` and plays every move, checking every deal's result and
the totals; a record of another format or version, or one that does not replay to what it says
(a changed move, score or rule), is refused with a :class:`ValueError` naming what is wrong.
:func:`load` and :func:`save` refuse a file they cannot read or write with a
:class:`RecordFileError` (a ValueError) naming the file; :func:`save` writes whole or not at all.
:class:`Recorder` records a game as it is played; :func:`make_record` builds a record from a
played game and its moves.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cli import write_atomically
from .engine import NO_PLAYER, DealResult, Game
from .moves import Move, parse_move
from .rules import DEFAULT_MAX_MOVES_PER_DEAL, Rules

FORMAT = "shanghai-game-record"
VERSION = 1
ABANDON = "abandon"  # the move-list entry for Game.abandon_deal()
_KEYS = ("format", "version", "package", "rules", "start", "players", "deals", "scores", "game_over")
# rule options added after records of this version were first written: older records lack them
_LATER_OPTIONS: dict[str, Any] = {"max_moves_per_deal": DEFAULT_MAX_MOVES_PER_DEAL}


def package_version() -> str:
    from . import __version__

    return f"shanghai-env {__version__}"


def rules_dict(rules: Rules) -> dict[str, Any]:
    """Every rule option by name, as JSON values."""
    out = dataclasses.asdict(rules)
    out["contracts"] = list(rules.contracts)
    return out


class MoveLog:
    """The moves of a game by deal, as names. ``add`` after each move (cheap: one append)."""

    def __init__(self) -> None:
        self.deals: list[list[str]] = [[]]

    def add(self, name: str, deals_done: int) -> None:
        """Log move ``name``; ``deals_done`` is ``len(game.deal_results)`` after the move."""
        self.deals[-1].append(name)
        while len(self.deals) <= deals_done:
            self.deals.append([])

    def flat(self) -> list[str]:
        return [name for deal in self.deals for name in deal]


def make_record(
    game: Game,
    moves: MoveLog | Sequence[Sequence[str]],
    *,
    deck: Sequence[str] | None = None,
    dealer: int,
    players: Sequence[str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of ``game`` (played from its reset to now) whose moves, by deal, are ``moves``.

    ``deck`` and ``dealer`` are what the first deal was dealt with (the stacked deck, if any,
    and the first dealer); the seed is the game's own. Nothing is replayed here: use
    :func:`replay` to check a record.
    """
    by_deal = moves.deals if isinstance(moves, MoveLog) else [list(m) for m in moves]
    results = game.deal_results
    played = len(results) + (0 if game.game_over else 1)
    if any(by_deal[played:]) or len(by_deal) < played:
        raise ValueError(f"the moves cover {len(by_deal)} deals, the game has played {played}")
    n = game.num_players
    names = [f"player_{p}" for p in range(n)] if players is None else [str(p) for p in players]
    if len(names) != n:
        raise ValueError(f"players must name {n} seats, got {len(names)}")
    deals: list[dict[str, Any]] = []
    for i in range(played):
        entry: dict[str, Any] = {"contract": game.rules.contracts[i], "moves": list(by_deal[i])}
        if i < len(results):
            entry.update(_result_dict(results[i]))
        deals.append(entry)
    return {
        "format": FORMAT,
        "version": VERSION,
        "package": package_version(),
        "rules": rules_dict(game.rules),
        "start": {
            "seed": int(game.seed_entropy),
            "deck": None if deck is None else [str(c).upper() for c in deck],
            "dealer": int(dealer),
        },
        "players": names,
        "deals": deals,
        "scores": list(game.scores),
        "game_over": game.game_over,
        "meta": dict(meta or {}),
    }


def _result_dict(result: DealResult) -> dict[str, Any]:
    return {
        "scores": list(result.scores),
        "out_player": None if result.out_player == NO_PLAYER else result.out_player,
        "blind": result.blind,
    }


class Recorder:
    """Plays a :class:`Game` and records it: ``reset``, ``apply`` and ``abandon_deal`` as the game's.

    >>> rec = Recorder(Game(num_players=3, contracts=(1,)), players=["me", "bot", "bot"])
    >>> rec.reset(7)
    >>> rec.apply(rec.game.legal_moves()[0])
    >>> rec.record()["deals"][0]["moves"]  # doctest: +SKIP
    ['take']
    """

    def __init__(self, game: Game, players: Sequence[str] | None = None) -> None:
        self.game = game
        self.players = list(players) if players is not None else None
        self.log = MoveLog()
        self.deck: list[str] | None = None
        self.dealer = game.dealer if game.move_count == 0 and not game.deal_results else None

    def reset(
        self, seed: int | None = None, *, deck: list[str] | None = None, dealer: int | None = None
    ) -> None:
        if deck is not None and not isinstance(deck, str) and hasattr(deck, "__iter__"):
            deck = list(deck)  # read twice: by the game and for the record (a generator, say)
        self.game.reset(seed, deck=deck, dealer=dealer)
        self.log = MoveLog()
        self.deck = None if deck is None else [str(c).upper() for c in deck]
        self.dealer = self.game.dealer

    def apply(self, move: Move | str) -> None:
        self.game.apply(move)
        self.log.add(
            move.name if isinstance(move, Move) else parse_move(move).name, len(self.game.deal_results)
        )

    def abandon_deal(self) -> None:
        self.game.abandon_deal()
        self.log.add(ABANDON, len(self.game.deal_results))

    def record(self, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        if self.dealer is None:
            raise ValueError("the recorder has not seen the game's start: call Recorder.reset first")
        return make_record(
            self.game, self.log, deck=self.deck, dealer=self.dealer, players=self.players, meta=meta
        )


# --- reading and replaying ----------------------------------------------------------------------


class RecordFileError(ValueError, OSError):
    """A game record file that cannot be read or written; the message names the file and what is
    wrong.

    A :class:`ValueError`, like every refused record; also an :class:`OSError` (as
    :class:`io.UnsupportedOperation` is both), so that code that catches file errors around
    :func:`load` and :func:`save` still catches it. ``strerror`` is the message too.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


MAX_RECORD_BYTES = 64 * 2**20  # a ten-deal game is about 40 KB; this stops a read of /dev/zero
MAX_RECORD_DEPTH = 32  # a record nests 4 deep (record, deals, a deal, its moves); meta is free


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether JSON ``data`` nests lists and objects more than ``limit`` deep (no recursion)."""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


def save(record: Mapping[str, Any], path: str | Path) -> Path:
    """Write a record as JSON, one move a line (about 15 bytes a move), creating missing folders.

    The file is written whole or not at all (a new file that replaces ``path``). Raises
    :class:`RecordFileError` (a ValueError) naming the file when the record is not JSON (or
    :func:`load` would refuse it) or the file cannot be written.
    """
    if not isinstance(record, Mapping):
        raise TypeError(f"a game record is a JSON object (dict), got {type(record).__name__}")
    where = f"cannot save the game record to {str(path)!r}"
    if _deeper_than(record, MAX_RECORD_DEPTH):  # load() would refuse it
        raise RecordFileError(f"{where}: it nests more than {MAX_RECORD_DEPTH} deep")
    try:
        text = json.dumps(record, indent=1, allow_nan=False) + "\n"
    except (TypeError, ValueError, RecursionError) as err:
        raise RecordFileError(f"{where}: it is not JSON ({err})") from None
    if len(text.encode("utf-8")) > MAX_RECORD_BYTES:  # load() would refuse it
        raise RecordFileError(f"{where}: it is larger than {MAX_RECORD_BYTES >> 20} MiB")
    try:
        write_atomically(path, text)
    except OSError as err:
        raise RecordFileError(f"{where}: {_reason(err)}") from None
    return Path(path)


def load(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`save` (UTF-8 JSON; checked by :func:`replay`, not here).

    Raises :class:`RecordFileError` (a ValueError) naming the file when it cannot be read or is
    not a JSON object: missing, a folder, not UTF-8 text, not JSON, nested too deep, a number too
    long, larger than :data:`MAX_RECORD_BYTES`.
    """
    name = repr(str(path))
    try:
        with open(path, "rb") as stream:
            raw = stream.read(MAX_RECORD_BYTES + 1)
    except OSError as err:
        raise RecordFileError(f"cannot read the game record {name}: {_reason(err)}") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordFileError(f"{name} is not a game record: larger than {MAX_RECORD_BYTES >> 20} MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")
        what = "it is UTF-16; save it as UTF-8" if utf16 else f"byte {err.start} is not UTF-8"
        raise RecordFileError(f"{name} is not a game record: not UTF-8 text ({what})") from None
    data: Any = None
    too_deep = False
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordFileError(f"{name} is not a game record: not JSON ({err})") from None
    except RecursionError:
        too_deep = True
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits())
        raise RecordFileError(f"{name} is not a game record: it holds a number too long to read") from None
    # a fixed bound, so that what loads here can be written and drawn from any depth of calls
    if too_deep or _deeper_than(data, MAX_RECORD_DEPTH):
        raise RecordFileError(
            f"{name} is not a game record: its JSON nests more than {MAX_RECORD_DEPTH} deep"
        )
    if not isinstance(data, dict):
        raise RecordFileError(f"{name} is not a game record: expected a JSON object")
    return data


def check_format(record: Mapping[str, Any]) -> None:
    """Refuse anything but a record of this format and version, with its required fields."""
    if not isinstance(record, Mapping):
        raise ValueError(f"a game record is a JSON object (dict), got {type(record).__name__}")
    if record.get("format") != FORMAT:
        raise ValueError(f"not a game record: format is {record.get('format')!r}, expected {FORMAT!r}")
    if type(record.get("version")) is not int or record.get("version") != VERSION:  # not 1.0, not True
        made_by = record.get("package", "an unknown version")
        raise ValueError(
            f"game record version {record.get('version')!r} (written by {made_by}) cannot be read: "
            f"this package ({package_version()}) reads version {VERSION}"
        )
    missing = [k for k in _KEYS if k not in record]
    if missing:
        raise ValueError(f"game record lacks {', '.join(missing)}")
    # the types of the fields replay() compares with ==, where 1.0 or True would pass for 1
    if not isinstance(record["package"], str):
        raise ValueError(f"record package must be a string, got {record['package']!r}")
    players = record["players"]
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise ValueError(f"record players must be a list of names (strings), got {players!r}")
    if not _ints(record["scores"]):
        raise ValueError(f"record scores must be a list of integers, got {record['scores']!r}")
    if not isinstance(record["game_over"], bool):
        raise ValueError(f"record game_over must be true or false, got {record['game_over']!r}")
    if not isinstance(record.get("meta", {}), Mapping):
        raise ValueError(f"record meta must be an object, got {record['meta']!r}")
    start = record["start"]
    if (
        not isinstance(start, Mapping)
        or set(start) != {"seed", "deck", "dealer"}
        or not _int(start["seed"])
        or not (start["deck"] is None or isinstance(start["deck"], list))
        or not _int(start["dealer"])
    ):
        raise ValueError(
            f"record start must be {{'seed': int, 'deck': list or null, 'dealer': int}}, got {start!r}"
        )


def _int(x: object) -> bool:
    """An integer, not a bool or a float that equals one."""
    return isinstance(x, int) and not isinstance(x, bool)


def _ints(x: object) -> bool:
    return isinstance(x, list) and all(_int(v) for v in x)


def record_rules(record: Mapping[str, Any]) -> Rules:
    """The record's :class:`Rules`; every option must be given (but those older records lack,
    which take their defaults), and no other."""
    given = record["rules"]
    if not isinstance(given, Mapping):
        raise ValueError(f"record rules must be an object of rule options, got {given!r}")
    fields = list(Rules.__dataclass_fields__)
    missing = [f for f in fields if f not in given and f not in _LATER_OPTIONS]
    unknown = sorted(set(given) - set(fields))
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown {', '.join(unknown)}"] if unknown else []
        )
        raise ValueError(f"record rules must give every rule option ({'; '.join(parts)})")
    try:
        options: dict[str, Any] = {**_LATER_OPTIONS, **given}
        if isinstance(options["contracts"], list):
            options["contracts"] = tuple(options["contracts"])
        return Rules(**options)
    except (TypeError, ValueError) as err:
        raise ValueError(f"record rules are not valid: {err}") from None


@dataclass
class Step:
    """One move of a replay: the state before it, the move, and what followed.

    ``game`` is the replaying game after the move (the same object at every step: clone it to
    keep it). When the move ended a deal, ``ended`` is that deal's result and ``deal_end`` a copy
    of the table as the deal ended (hands still held, before the next deal is dealt).
    """

    index: int  # 1-based number of the move in the game
    deal: int  # the deal the move belongs to (0-based)
    name: str  # the move's name, or ABANDON
    move: Move | None  # None for ABANDON
    before: Game  # a copy of the state before the move
    game: Game
    ended: DealResult | None = None
    deal_end: Game | None = None


def start_game(record: Mapping[str, Any]) -> Game:
    """A :class:`Game` dealt as the record's game began (the record's format is checked)."""
    check_format(record)
    rules = record_rules(record)
    start = record["start"]
    players = record["players"]
    if len(players) != rules.num_players:
        raise ValueError(f"record players must name the {rules.num_players} seats, got {players!r}")
    game = Game(rules)
    try:
        game.reset(start["seed"], deck=start["deck"], dealer=start["dealer"])
    except (TypeError, ValueError) as err:
        raise ValueError(f"record start cannot deal the game: {err}") from None
    return game


def iter_replay(record: Mapping[str, Any], *, copies: bool = False) -> Iterator[Step]:
    """Replay a record move by move, checking it; yield a :class:`Step` after each move.

    With ``copies`` each step carries a copy of the state before the move and, at a deal's end,
    a copy of the table as the deal ended (for viewers); otherwise ``before`` is the live game
    and ``deal_end`` is None. Raises ValueError at the first thing that does not match.
    """
    game = start_game(record)
    # written before max_moves_per_deal was a rule: its capped deals end with an explicit "abandon"
    old_cap = "max_moves_per_deal" not in record["rules"]
    deals = record["deals"]
    contracts = game.rules.contracts
    if not isinstance(deals, list) or not deals or len(deals) > len(contracts):
        raise ValueError(f"record deals must list 1 to {len(contracts)} deals, got {_count(deals)}")
    index = 0
    for d, entry in enumerate(deals):
        where = f"record deal {d + 1}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("moves"), list):
            raise ValueError(f"{where} must be an object with a list of moves")
        if not _int(entry.get("contract")) or entry.get("contract") != contracts[d]:
            raise ValueError(
                f"{where} says contract {entry.get('contract')!r}, the rules play {contracts[d]}"
            )
        if game.deal != d or game.game_over:
            raise ValueError(f"{where}: the game is not at that deal (deal {game.deal + 1})")
        finished = "scores" in entry
        moves = entry["moves"]
        for k, name in enumerate(moves):
            index += 1
            at = f"{where} move {k + 1} ({name!r})"
            if game.game_over or game.deal != d:
                raise ValueError(f"{at}: the deal already ended at its move {k}")
            before = game.clone() if copies else game
            move = None
            try:
                if name == ABANDON:
                    game.abandon_deal()
                else:
                    if not isinstance(name, str):
                        raise ValueError(f"a move is a move name, got {name!r}")
                    move = parse_move(name)
                    game.apply(move)
            except (TypeError, ValueError) as err:
                raise ValueError(f"{at}: {err}") from None
            ended = game.deal_results[d] if len(game.deal_results) > d else None
            # an older record's "abandon" after the move that reached the rule's cap: that same end
            old_abandon = old_cap and ended is not None and ended.capped and moves[k + 1 :] == [ABANDON]
            if ended is not None and k + 1 < len(moves) and not old_abandon:
                raise ValueError(
                    f"{at}: the deal ended here, but the record goes on with {len(moves) - k - 1} moves"
                )
            deal_end = before.deal_end_after(move) if copies and ended is not None else None
            yield Step(index, d, name, move, before, game, ended, deal_end)
            if old_abandon:
                break
        if finished:
            if len(game.deal_results) <= d:
                raise ValueError(f"{where}: the record gives its scores, but its moves do not end it")
            _check_result(where, entry, game.deal_results[d])
        elif len(game.deal_results) > d:
            raise ValueError(f"{where}: its moves end the deal, but the record gives no scores")
        elif d + 1 < len(deals):
            raise ValueError(f"{where} has no scores but is not the last deal of the record")
    if record["scores"] != game.scores:
        raise ValueError(f"record final scores {record['scores']!r}, the replay gives {game.scores}")
    if record["game_over"] is not game.game_over:
        raise ValueError(f"record says game_over={record['game_over']!r}, the replay says {game.game_over}")


def _count(x: object) -> str:
    return str(len(x)) if isinstance(x, list) else repr(x)


def _check_result(where: str, entry: Mapping[str, Any], result: DealResult) -> None:
    expected = _result_dict(result)
    for key in ("scores", "out_player", "blind"):
        given = entry.get(key)
        same_type = _ints(given) if key == "scores" else type(given) is type(expected[key])
        if given != expected[key] or not same_type:
            raise ValueError(f"{where} {key}: the record says {given!r}, the replay gives {expected[key]!r}")


def replay(record: Mapping[str, Any]) -> Game:
    """The game of ``record``, rebuilt and replayed move by move, every deal's scores and the
    totals checked. Raises ValueError naming the first thing that does not match."""
    game: Game | None = None
    for step in iter_replay(record):
        game = step.game
    return game if game is not None else start_game(record)


def play_and_record(
    game: Game,
    moves: Sequence[str],
    *,
    seed: int | None = None,
    deck: list[str] | None = None,
    dealer: int | None = None,
    players: Sequence[str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Reset ``game`` and play the flat list ``moves`` (names, :data:`ABANDON` for a deal ended early);
    return its record. For trainers' evaluations that keep only the move names they played."""
    rec = Recorder(game, players)
    rec.reset(seed, deck=deck, dealer=dealer)
    for name in moves:
        if name == ABANDON:
            rec.abandon_deal()
        else:
            rec.apply(name)
    return rec.record(meta)
