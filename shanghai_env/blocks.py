"""The one batched engine over blocks: rows split into :class:`~shanghai_env.vector.VectorEnv`
blocks, at one table size or several, stepped in this process or in worker processes.

``BlockVectorEnv(num_envs, *, workers=1, tables=None, players=None, first_row=0, **options)``:

- ``tables`` (None: one table size, ``num_players`` among the rule options): table sizes, 3 to 8,
  each a share of the rows in order (as evenly as the count allows; a size named twice gets two
  shares), all in the 8-seat encoding ``any_table`` (docs/observation.md); ``players`` then maps
  each size to that size's ``players`` list, else it is the one list of the batched env.
- ``workers``: processes stepping the rows, each a contiguous share of them; the first share is
  stepped in this process while ``workers - 1`` worker processes step the others (1: no process).

Rows keep their numbers in the seeds (``first_row``), so where a row lives changes nothing: the
same seed and actions give the same games, observations and rewards for every ``workers``
(tested). Each process holds the pieces where its share of the rows meets the table sizes' shares.

It has the batched env's interface (:class:`~shanghai_env.batched.BatchedEnv`): ``reset``,
``step``, ``obs``, ``mask``, ``seat``, ``extra``, ``legal_actions``, ``legal_ids``,
``final_scores``, ``game_seeds``, ``observe``, ``deal_counts``, ``deal_ended``, ``bool_mask``,
``broken``, ``started``, ``close`` and the options ``reward``, ``mask_dtype`` and ``copy``; with
several table sizes a step's rewards have eight columns (``num_players`` is 8; a seat the row's
table lacks gets 0) and ``final_scores`` holds one array per row, as long as its table.
``games`` and ``blocks`` are readable only with ``workers=1`` (the games are in this process).

The workers write the observations, masks, seats, scores and extra inputs straight into memory
shared with this process, which are the arrays the caller gets; only the actions, legal ids, seeds
and rewards cross a pipe. Players played inside are copied into each worker's pieces (bots made by
their factories here, pickled with the games, and so is a network), so with ``workers`` above 1
they must pickle: one that does not is a TypeError before any worker starts. ``state()`` gives the
games in progress as plain data (every block's, each worker's from its process) and
``load_state`` rebuilds them in an env made with the same arguments (a checkpoint); pickling the
object takes every piece's games, and a copy starts workers of its own with them.

Arguments are checked in this process before anything is sent, with the batched env's messages.
A worker's error reaches the caller naming the worker and carrying its message (a TypeError or
ValueError stays one; anything else is a RuntimeError naming its type); an error of a player
inside leaves the env refusing every use until ``reset``, as the batched env does. A worker that
died is a RuntimeError naming it, and the env is then closed. After ``close`` every call says so.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import pickle
import signal
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from .any_table import MAX_SEATS, MIN_SEATS
from .checks import int_arg
from .engine import Game
from .vector import VectorEnv, checked_actions, env_count, reset_seeds, state_format

# the arrays each process writes into memory shared with the caller after every reset and step,
# in this order (the 8-byte ones first, so that every array starts aligned)
_SHARED = ("seat", "final_scores", "extra", "obs", "mask")
BLOCKS_FORMAT = "shanghai-blocks-state"  # what BlockVectorEnv.state() returns, and its version
BLOCKS_VERSION = 1
Layout = list[tuple[str, tuple[int, ...], str]]


def table_sizes(tables: Any) -> tuple[int, ...]:
    """``tables`` checked: numbers of players, each 3 to 8, ascending (a size may repeat: each
    entry is a share of the rows)."""
    if isinstance(tables, (str, bytes)) or not isinstance(tables, Sequence) or not tables:
        raise TypeError(f"tables must be a non-empty list of numbers of players (3 to 8), got {tables!r}")
    return tuple(sorted(int_arg("tables[]", n, low=MIN_SEATS, high=MAX_SEATS) for n in tables))


def _shares(total: int, parts: int) -> list[tuple[int, int]]:
    """``total`` rows cut into ``parts`` contiguous shares as even as can be: ``(start, stop)``."""
    each, more = divmod(total, parts)
    return _consecutive([each + (k < more) for k in range(parts)])


def _consecutive(counts: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive ``(start, stop)`` of blocks of ``counts`` rows."""
    bounds, start = [], 0
    for n in counts:
        bounds.append((start, start + n))
        start += n
    return bounds


def _layout(piece: VectorEnv, num_envs: int, width: int) -> Layout:
    """Each shared array's name, shape (``num_envs`` rows, as wide as ``piece``'s; the scores
    ``width`` seats) and dtype."""
    out = []
    for name in _SHARED:
        array = getattr(piece, name)
        tail = (width,) if name == "final_scores" else array.shape[1:]
        out.append((name, (num_envs, *tail), array.dtype.str))
    return out


def _padded_bytes(shape: tuple[int, ...], dtype: str) -> int:
    """An array's bytes rounded up to 8, so that the next array starts aligned."""
    return -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // 8) * 8


def _views(buffer: Any, layout: Layout) -> dict[str, np.ndarray]:
    """Numpy arrays over ``buffer``, one per entry of ``layout``."""
    views, offset = {}, 0
    for name, shape, dtype in layout:
        views[name] = np.frombuffer(buffer, dtype, int(np.prod(shape)), offset).reshape(shape)
        offset += _padded_bytes(shape, dtype)
    return views


class _Group:
    """One process's share of the rows: its pieces, stepped one after the other, writing into its
    rows of the shared arrays (``views``)."""

    def __init__(self, pieces: list[VectorEnv], views: dict[str, np.ndarray]) -> None:
        self.pieces, self.views = pieces, views
        self.width = views["final_scores"].shape[1]
        self.bounds = _consecutive([p.num_envs for p in pieces])

    @property
    def broken(self) -> bool:
        return any(p.broken is not None for p in self.pieces)

    def reset(self, base: int, rows: list[int] | None) -> tuple[Any, ...]:
        for piece, (a, b) in zip(self.pieces, self.bounds):
            piece.reset_checked(base, rows[a:b] if rows is not None else None)
        return self.publish(None)

    def step(self, acts: np.ndarray) -> tuple[Any, ...]:
        n = self.bounds[-1][1]
        rewards = np.zeros((n, self.width), np.float32)
        done = np.zeros(n, bool)
        for piece, (a, b) in zip(self.pieces, self.bounds):
            _, _, _, rew, ended = piece.step(acts[a:b])
            rewards[a:b, : piece.num_players] = rew
            done[a:b] = ended
        return self.publish((rewards, done))

    def load_state(self, states: list[Any]) -> tuple[Any, ...]:
        """Each piece's games from its :meth:`VectorEnv.state`; the answer's tail is the rows
        (of this share) where a seated bot chose otherwise in the replay."""
        differ: list[int] = []
        for piece, (a, _), state in zip(self.pieces, self.bounds, states):
            differ.extend(a + row for row in piece.load_state(state))
        return self.publish(differ)

    def locate(self, row: int) -> tuple[VectorEnv, int]:
        k = next(k for k, (a, b) in enumerate(self.bounds) if a <= row < b)
        return self.pieces[k], row - self.bounds[k][0]

    def publish(self, tail: Any) -> tuple[Any, ...]:
        """The arrays into the shared memory; the rest (small) is the answer through the pipe."""
        counts = {"deals": 0, "went_out": 0, "moves": 0}
        legal: list[tuple[int, ...]] = []
        seeds: list[int] = []
        for piece, (a, b) in zip(self.pieces, self.bounds):
            for name, view in self.views.items():
                if name == "final_scores":
                    view[a:b, : piece.num_players] = piece.final_scores
                else:
                    view[a:b] = getattr(piece, name)
            legal.extend(piece.legal_ids)
            seeds.extend(piece.game_seeds)
            for key in counts:
                counts[key] += piece.deal_counts[key]
        ended = np.concatenate([p.deal_ended for p in self.pieces])
        return ("ok", legal, seeds, counts, ended, tail)


def _answer(group: _Group, cmd: str, arg: Any) -> tuple[Any, ...]:
    if cmd == "reset":
        return group.reset(*arg)
    if cmd == "step":
        return group.step(arg)
    if cmd in ("observe", "observe_extra"):
        piece, local = group.locate(arg[0])
        return ("ok", getattr(piece, cmd)(local, arg[1]))
    if cmd == "game_moves":
        piece, local = group.locate(arg)
        return ("ok", piece.game_moves(local))
    if cmd == "state":
        return ("ok", [piece.state() for piece in group.pieces])
    if cmd == "load_state":
        return group.load_state(arg)
    if cmd == "pickle":
        return ("ok", pickle.dumps(group.pieces))
    raise ValueError(f"unknown command {cmd!r}")


def _serve(conn: Connection, blob: bytes, buffer: Any, layout: Layout, rows: slice) -> None:
    # Ctrl-C reaches every process of the terminal's group: the parent decides what stops (it
    # may save a checkpoint, which needs the workers' games), so the workers ignore it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    group = _Group(pickle.loads(blob), {name: view[rows] for name, view in _views(buffer, layout).items()})
    while True:
        try:
            cmd, arg = conn.recv()
        except EOFError:  # the parent is gone
            return
        if cmd == "close":
            conn.close()
            return
        try:
            reply = _answer(group, cmd, arg)
        except Exception as err:  # the parent raises it, naming this worker; the worker lives on
            reply = ("error", type(err).__name__, str(err), group.broken)
        conn.send(reply)


def _error_type(name: str) -> type[Exception]:
    return {"TypeError": TypeError, "ValueError": ValueError}.get(name, RuntimeError)


def _pieces(
    num_envs: int,
    workers: int,
    tables: tuple[int, ...] | None,
    players: Any,
    first_row: int,
    options: dict[str, Any],
) -> list[list[VectorEnv]]:
    """Each process's pieces: where its share of the rows meets each table size's share."""
    sizes: list[int | None] = list(tables) if tables else [None]
    table_rows = _shares(num_envs, len(sizes))
    groups = []
    for start, stop in _shares(num_envs, workers):
        group = []
        for n, (a, b) in zip(sizes, table_rows):
            lo, hi = max(start, a), min(stop, b)
            if lo >= hi:
                continue
            if n is None:
                group.append(VectorEnv(hi - lo, first_row=first_row + lo, players=players, **options))
            else:
                seats = (players or {}).get(n)
                group.append(
                    VectorEnv(hi - lo, first_row=first_row + lo, num_players=n, players=seats, **options)
                )
        groups.append(group)
    return groups


def _checked_tables(num_envs: int, tables: Any, players: Any, options: dict[str, Any]) -> tuple[int, ...]:
    sizes = table_sizes(tables)
    if num_envs < len(sizes):
        raise ValueError(f"num_envs ({num_envs}) must give every table size a game: at least {len(sizes)}")
    if options.setdefault("encoding", "any_table") != "any_table":
        raise ValueError("games at several table sizes share one encoding, 'any_table'")
    if "num_players" in options:
        raise TypeError("with tables= the table sizes come from tables, not num_players=")
    if players is not None and (not isinstance(players, Mapping) or set(players) - set(sizes)):
        raise TypeError(f"players maps table sizes among {sizes} to their players lists, got {players!r}")
    return sizes


class BlockVectorEnv:
    """``num_envs`` games in :class:`~shanghai_env.vector.VectorEnv` blocks; see the module docstring."""

    def __init__(
        self,
        num_envs: int = 64,
        *,
        workers: int = 1,
        tables: Sequence[int] | None = None,
        players: Any = None,
        first_row: int = 0,
        **options: Any,
    ) -> None:
        num_envs = env_count(num_envs)
        workers = int_arg("workers", workers, low=1, high=num_envs)
        first_row = int_arg("first_row", first_row, low=0)
        sizes = None if tables is None else _checked_tables(num_envs, tables, players, options)
        groups = _pieces(num_envs, workers, sizes, players, first_row, options)
        self._init(groups, sizes)

    def _init(self, groups: list[list[VectorEnv]], tables: tuple[int, ...] | None) -> None:
        pieces = [p for group in groups for p in group]
        first = pieces[0]
        n = self.num_envs = sum(p.num_envs for p in pieces)
        self.workers = len(groups)
        self.tables = tables or (first.num_players,)
        self._several = tables is not None  # rewards and scores in eight columns
        self._closed: str | None = None  # why every call is refused (set by close)
        self._conns: dict[int, Connection] = {}  # worker k's pipe (k >= 1; share 0 is stepped here)
        self._procs: dict[int, Any] = {}
        self._due: set[int] = set()  # workers whose answer has not been read yet
        # the smallest table's rules and encoder: one table size but for tables=
        self.rules, self.table, self.encoder = first.rules, first.table, first.encoder
        self.encoding, self.first_row = first.encoding, first.first_row
        self.num_players = MAX_SEATS if tables else first.num_players
        self.num_actions, self.observation_length = first.num_actions, first.observation_length
        # the seats every table plays through step (the learner's, in every game)
        self.caller_seats = tuple(s for s in first.caller_seats if all(s in p.caller_seats for p in pieces))
        self.reward_mode, self.copy = first.reward_mode, first.copy
        self._row_players = [p.num_players for p in pieces for _ in range(p.num_envs)]
        self._piece_counts = [len(group) for group in groups]  # each process's blocks
        self._bounds = _consecutive([sum(p.num_envs for p in group) for group in groups])
        self.deal_ended = np.zeros(n, bool)
        self.game_seeds = [0] * n
        self._legal: list[tuple[int, ...]] = [() for _ in range(n)]  # what step checks against
        self._legal_lists: list[list[int]] | None = None  # legal_actions, built when first read
        self.deal_counts = {"deals": 0, "went_out": 0, "moves": 0}
        self._broken = next((p.broken for p in pieces if p.broken is not None), None)
        # every worker's pieces pickled before any process starts: a player that does not pickle
        # starts none (the share stepped here is never pickled: its players need not pickle)
        blobs = [b"", *(_pickled(group) for group in groups[1:])]
        layout = _layout(first, n, self.num_players)
        size = max(sum(_padded_bytes(shape, dtype) for _, shape, dtype in layout), 8)
        ctx = mp.get_context("spawn")  # no fork of a process that may hold torch threads
        # the arrays the caller gets are memory the workers write, each into its rows (no copies)
        buffer = ctx.RawArray("b", size) if len(groups) > 1 else bytearray(size)
        shared = _views(buffer, layout)
        self.seat, self._scores, self.extra = shared["seat"], shared["final_scores"], shared["extra"]
        self.obs, self.mask = shared["obs"], shared["mask"]
        here = {name: view[: self._bounds[0][1]] for name, view in shared.items()}
        self._here = _Group(groups[0], here)
        for k in range(1, len(groups)):
            start, stop = self._bounds[k]
            parent, child = ctx.Pipe()
            args = (child, blobs[k], buffer, layout, slice(start, stop))
            proc = ctx.Process(target=_serve, args=args, daemon=True)
            proc.start()
            child.close()
            self._conns[k] = parent
            self._procs[k] = proc
        self._started = first.started
        if self._started:  # games in progress (a copy): their arrays as they stand
            replies = {}
            for k, (group, (start, stop)) in enumerate(zip(groups, self._bounds)):
                views = {name: view[start:stop] for name, view in shared.items()}
                replies[k] = _Group(group, views).publish(None)
            self._take(replies)

    def _name(self, k: int) -> str:
        start, stop = self._bounds[k]
        return f"worker {k} (games {start}..{stop - 1})"

    def _call(self, messages: dict[int, tuple[str, Any]]) -> dict[int, tuple[Any, ...]]:
        """Send each worker its message, answer share 0's here meanwhile, then take every answer
        before raising any error, so that the pipes stay in step; a worker's error is raised here
        naming the worker."""
        self._drain()
        dead: list[int] = []
        replies = {}
        try:
            for k, message in messages.items():
                if k == 0:
                    continue
                try:
                    self._conns[k].send(message)
                    self._due.add(k)
                except OSError:  # a broken pipe: the worker is gone
                    dead.append(k)
            if 0 in messages:
                replies[0] = self._answer_here(*messages[0])
            for k in messages:
                if k not in self._due:
                    continue
                try:
                    replies[k] = self._conns[k].recv()
                except (EOFError, OSError):
                    dead.append(k)
                self._due.discard(k)
        except BaseException:
            # interrupted (Ctrl-C): the answers still due are read before the next call, and
            # this object's arrays may no longer be its workers' games
            if any(m[0] in ("reset", "step", "load_state") for m in messages.values()):
                self._broken = "its last reset() or step() was interrupted part-way"
            raise
        if dead:
            k = min(dead)
            proc = self._procs[k]
            proc.join(timeout=5)
            why = f"{self._name(k)} stopped (exit code {proc.exitcode})"
            self._shut(why)
            raise RuntimeError(f"{why}: the env cannot go on and is closed; make a new one")
        for k, reply in replies.items():
            if reply[0] == "error":
                _, kind, message, broken, *here = reply
                text = f"{self._name(k)}: {kind}: {message}"
                if broken:
                    self._broken = f"its last call stopped part-way in {text}"
                    text += " (the env is unusable until reset())"
                if here and self.workers == 1:  # no worker to name: the error as the batched env's
                    raise here[0]
                raise _error_type(kind)(text)
        return replies

    def _answer_here(self, cmd: str, arg: Any) -> tuple[Any, ...]:
        """Share 0's answer, as a worker gives it (an error too, and the error itself)."""
        try:
            return _answer(self._here, cmd, arg)
        except Exception as err:
            return ("error", type(err).__name__, str(err), self._here.broken, err)

    def _drain(self) -> None:
        """Read (and drop) the answers an interrupted call left due."""
        for k in sorted(self._due):
            with contextlib.suppress(EOFError, OSError):  # a dead worker shows at the next send
                self._conns[k].recv()
            self._due.discard(k)

    @property
    def broken(self) -> str | None:
        """Why the env refuses every use until ``reset``, or None."""
        return self._broken

    @property
    def started(self) -> bool:
        """Whether ``reset`` has dealt the games (a copy of a started env is started too)."""
        return self._started

    def _fill(self, k: int, reply: tuple[Any, ...]) -> None:
        """Share ``k``'s legal ids, seeds and ends of deals after its reset or step (it wrote its
        arrays)."""
        _, legal, seeds, _, ended, _ = reply
        start, stop = self._bounds[k]
        self._legal[start:stop] = legal
        self._legal_lists = None
        self.game_seeds[start:stop] = seeds
        self.deal_ended[start:stop] = ended

    @property
    def legal_ids(self) -> tuple[tuple[int, ...], ...]:
        """Each game's legal action ids now, immutable (what :meth:`step` checks actions against)."""
        return tuple(self._legal)

    @property
    def legal_actions(self) -> list[list[int]]:
        """Each row's legal action ids, ascending, as the batched env's: the caller's lists, new
        after every call (built when first read)."""
        if self._legal_lists is None:
            self._legal_lists = [list(ids) for ids in self._legal]
        return self._legal_lists

    @property
    def final_scores(self) -> np.ndarray | list[np.ndarray]:
        """Each row's last finished game's totals: ``(num_envs, players)``, or with several table
        sizes one array per row, as long as its table."""
        if not self._several:
            return self._scores
        return [row[:n] for row, n in zip(self._scores, self._row_players)]

    @property
    def games(self) -> list[Game]:
        """The engine's games, one per row (omniscient); only with ``workers=1``."""
        return [game for piece in self.blocks for game in piece.games]

    @property
    def blocks(self) -> list[VectorEnv]:
        """The :class:`~shanghai_env.vector.VectorEnv` blocks in row order; only with ``workers=1``."""
        self._open()
        if self.workers > 1:
            raise RuntimeError(
                f"the games of this env are in {self.workers - 1} worker processes: only an env with "
                "workers=1 hands out its games and blocks"
            )
        return self._here.pieces

    def _open(self) -> None:
        if self._closed is not None:
            raise RuntimeError(f"this {type(self).__name__} is closed ({self._closed}): make a new one")

    def _usable(self, call: str) -> None:
        self._open()
        if self._broken is not None:
            raise RuntimeError(f"this env is unusable until reset(): {self._broken}")
        if not self._started:
            raise RuntimeError(f"call reset() before {call}")

    def _take(self, replies: dict[int, tuple[Any, ...]]) -> None:
        for k in range(self.workers):
            self._fill(k, replies[k])
        self.deal_counts = _summed([replies[k][3] for k in range(self.workers)])

    def reset(
        self, seed: int | Sequence[int | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`VectorEnv.reset <shanghai_env.vector.VectorEnv.reset>`: one seed, one per
        game (each row seeded as row 0 of its own seed), or None."""
        self._open()
        base, rows = reset_seeds(seed, self.num_envs)
        self._broken = None
        self._take(
            self._call(
                {
                    k: ("reset", (base, rows[start:stop] if rows is not None else None))
                    for k, (start, stop) in enumerate(self._bounds)
                }
            )
        )
        self._started = True
        if self.copy:
            return self.obs.copy(), self.mask.copy(), self.seat.copy()
        return self.obs, self.mask, self.seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`VectorEnv.step <shanghai_env.vector.VectorEnv.step>`; with several table
        sizes the rewards have eight columns."""
        self._usable("step()")
        # checked here first, so that a bad action changes no game
        acts = checked_actions(actions, self._legal, self.num_actions, self.table.name)
        replies = self._call({k: ("step", acts[start:stop]) for k, (start, stop) in enumerate(self._bounds)})
        self._take(replies)
        rewards = np.concatenate([replies[k][5][0] for k in range(self.workers)])
        done = np.concatenate([replies[k][5][1] for k in range(self.workers)])
        if self.copy:
            return self.obs.copy(), self.mask.copy(), self.seat.copy(), rewards, done
        return self.obs, self.mask, self.seat, rewards, done

    @property
    def bool_mask(self) -> np.ndarray:
        """:attr:`mask` seen as bool (a view, no copy), as the batched env's."""
        return self.mask.view(np.bool_)

    def observe(self, row: int, seat: int) -> np.ndarray:
        """The observation of any seat (of row ``row``'s table) in game ``row`` now."""
        return self._ask("observe", row, seat)

    def observe_extra(self, row: int, seat: int) -> np.ndarray:
        """The extra inputs (``features``) of any seat in game ``row`` now."""
        return self._ask("observe_extra", row, seat)

    def game_moves(self, row: int) -> list[int]:
        """The action ids played in game ``row`` since it was dealt."""
        self._usable("game_moves()")
        row = int_arg("row", row, low=0, high=self.num_envs - 1)
        k = next(k for k, (start, stop) in enumerate(self._bounds) if start <= row < stop)
        return list(self._call({k: ("game_moves", row - self._bounds[k][0])})[k][1])

    def _ask(self, cmd: str, row: Any, seat: Any) -> np.ndarray:
        self._usable(f"{cmd}()")
        row = int_arg("row", row, low=0, high=self.num_envs - 1)
        seat = int_arg("seat", seat, low=0, high=self._row_players[row] - 1)
        k = next(k for k, (start, stop) in enumerate(self._bounds) if start <= row < stop)
        return np.asarray(self._call({k: (cmd, (row - self._bounds[k][0], seat))})[k][1])

    def state(self) -> dict[str, Any]:
        """The games in progress as plain data for :meth:`load_state`: every block's
        :meth:`VectorEnv.state <shanghai_env.vector.VectorEnv.state>` in row order (a worker's from
        its process). RuntimeError before ``reset`` or while the env is unusable."""
        self._usable("state()")
        replies = self._call({k: ("state", None) for k in range(self.workers)})
        return {
            "format": BLOCKS_FORMAT,
            "version": BLOCKS_VERSION,
            "num_envs": self.num_envs,
            "tables": list(self.tables) if self._several else None,
            "blocks": [block for k in range(self.workers) for block in replies[k][1]],
        }

    def load_state(self, state: Mapping[str, Any]) -> list[int]:
        """Rebuild the games of :meth:`state` in this env, made with the same arguments (each
        block as :meth:`VectorEnv.load_state <shanghai_env.vector.VectorEnv.load_state>` does, a
        worker's in its process); returns the rows where a seated bot chose otherwise in the replay.
        TypeError/ValueError naming what does not fit."""
        self._open()
        state_format(state, BLOCKS_FORMAT, BLOCKS_VERSION, "BlockVectorEnv.state()")
        tables = list(self.tables) if self._several else None
        blocks = state.get("blocks")
        if state.get("num_envs") != self.num_envs or state.get("tables") != tables:
            raise ValueError(
                f"state holds {state.get('num_envs')!r} games at tables {state.get('tables')!r}, this env "
                f"{self.num_envs} at {tables!r}: load a state into an env made with the same arguments"
            )
        if not isinstance(blocks, (list, tuple)) or len(blocks) != sum(self._piece_counts):
            raise ValueError(
                f"state['blocks'] must be a list of {sum(self._piece_counts)} blocks' states (the same "
                "workers and tables as the env that saved it)"
            )
        messages, start = {}, 0
        for k, count in enumerate(self._piece_counts):
            messages[k] = ("load_state", list(blocks[start : start + count]))
            start += count
        replies = self._call(messages)
        self._take(replies)
        self._started, self._broken = True, None
        return [self._bounds[k][0] + row for k in range(self.workers) for row in replies[k][5]]

    def close(self) -> None:
        """Stop the workers; every later call says that the env is closed (a second close does
        nothing)."""
        self._shut("close() was called")

    def _shut(self, why: str) -> None:
        if getattr(self, "_closed", None) is None:
            self._closed = why
        for k, conn in self._conns.items():
            proc = self._procs[k]
            with contextlib.suppress(EOFError, OSError):  # a worker already gone
                if k in self._due and conn.poll(5):  # an answer left due would block its sender
                    conn.recv()
                conn.send(("close", None))
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
            conn.close()
        self._conns, self._procs, self._due = {}, {}, set()

    def __del__(self) -> None:
        if getattr(self, "_procs", None):
            self.close()

    def __getstate__(self) -> dict[str, Any]:
        self._open()
        replies = self._call({k: ("pickle", None) for k in range(self.workers)})
        groups = [replies[k][1] for k in range(self.workers)]
        return {"groups": groups, "tables": self.tables if self._several else None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "groups" in state:
            groups = [pickle.loads(blob) for blob in state["groups"]]
            self._init(groups, state["tables"])
        elif "_bounds" in state:  # a MixedTablesEnv of before the one engine: its blocks, here
            self._init([state["blocks"]], state["tables"])
        else:  # a WorkerVectorEnv of before the one engine: a block per process
            self._init([[pickle.loads(blob)] for blob in state["blocks"]], None)


def _pickled(group: list[VectorEnv]) -> bytes:
    try:
        return pickle.dumps(group)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise TypeError(
            "the players and features of games in worker processes must pickle to reach them "
            "(module-level classes and functions, or functools.partial of them; no lambdas or "
            f"local functions): {err}"
        ) from None


def _summed(counts: list[dict[str, int]]) -> dict[str, int]:
    return {key: sum(c[key] for c in counts) for key in ("deals", "went_out", "moves")}
