"""The batched env with its games in several processes: the same games, more cores.

``WorkerVectorEnv(num_envs, workers=W, **options)`` splits the ``num_envs`` rows into ``W``
contiguous blocks, each a :class:`~shanghai_env.vector.VectorEnv` (its rows keep their numbers
in the seeds: ``first_row``): block 0 is stepped in this process while ``W - 1`` worker processes
step the others. The workers write the observations, masks, seats, scores and extra inputs straight
into memory shared with this process, which are the arrays the caller gets; only the actions,
legal ids, seeds and rewards cross a pipe. It has the batched env's interface (``reset``, ``step``,
``obs``, ``mask``, ``seat``, ``legal_actions``, ``final_scores``, ``game_seeds``, ``observe``,
``deal_counts``, ``deal_ended``, ``bool_mask``, ``broken``, ``started``; the options ``reward``,
``mask_dtype`` and ``copy``) and plays exactly the same games, observations and rewards for the
same seed and actions, whatever ``W`` (tested). Players played inside are copied into each block
(its bots are made by their factories in this process and pickled with its games, and so is a
network), so they must pickle: one that does not is a TypeError before any worker starts.
Pickling the object (a checkpoint) takes every block's games and a copy starts workers of its
own with them.

Arguments are checked in this process before anything is sent (the same checks as the batched
env's, with the same messages). A worker's error reaches the caller as an error naming the
worker and carrying its message (a TypeError or ValueError stays one; anything else is a
RuntimeError naming its type); an error of a player inside a worker leaves the env refusing
every use until ``reset``, as the batched env does. A worker that died is a RuntimeError naming
it, and the env is then closed. After ``close`` every call says that the env is closed.

Worth it where stepping the games is a large part of the time and there are cores to spare
(docs/performance.md has the figures).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import pickle
import signal
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from .checks import int_arg
from .vector import VectorEnv, checked_actions, env_count, reset_seeds

# the arrays a worker writes into memory it shares with the parent after every reset and step,
# in this order (the 8-byte ones first, so that every array starts aligned)
_SHARED = ("seat", "final_scores", "extra", "obs", "mask")


def _layout(venv: VectorEnv, num_envs: int) -> list[tuple[str, tuple[int, ...], str]]:
    """Each shared array's name, shape (``num_envs`` rows, as wide as ``venv``'s) and dtype."""
    arrays = [(name, getattr(venv, name)) for name in _SHARED]
    return [(name, (num_envs, *array.shape[1:]), array.dtype.str) for name, array in arrays]


def _padded_bytes(shape: tuple[int, ...], dtype: str) -> int:
    """An array's bytes rounded up to 8, so that the next array starts aligned."""
    return -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // 8) * 8


def _views(buffer: Any, layout: list[tuple[str, tuple[int, ...], str]]) -> dict[str, np.ndarray]:
    """Numpy arrays over the shared ``buffer``, one per entry of ``layout``."""
    views, offset = {}, 0
    for name, shape, dtype in layout:
        views[name] = np.frombuffer(buffer, dtype, int(np.prod(shape)), offset).reshape(shape)
        offset += _padded_bytes(shape, dtype)
    return views


def _serve(conn: Connection, blob: bytes, buffer: Any, layout: list[Any], rows: slice) -> None:
    # Ctrl-C reaches every process of the terminal's group: the parent decides what stops (it
    # may save a checkpoint, which needs the workers' games), so the workers ignore it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    venv: VectorEnv = pickle.loads(blob)
    shared = {name: view[rows] for name, view in _views(buffer, layout).items()}
    while True:
        try:
            cmd, arg = conn.recv()
        except EOFError:  # the parent is gone
            return
        if cmd == "close":
            conn.close()
            return
        try:
            reply = _answer(venv, cmd, arg, shared)
        except Exception as err:  # the parent raises it, naming this worker; the worker lives on
            reply = ("error", type(err).__name__, str(err), venv.broken is not None)
        conn.send(reply)


def _answer(venv: VectorEnv, cmd: str, arg: Any, shared: dict[str, np.ndarray]) -> tuple[Any, ...]:
    if cmd == "reset":
        venv.reset_checked(*arg)
        return _publish(venv, shared, None)
    if cmd == "step":
        out = venv.step(arg)
        return _publish(venv, shared, (*out[3:], venv.deal_ended))
    if cmd == "observe":
        return ("ok", venv.observe(*arg))
    if cmd == "observe_extra":
        return ("ok", venv.observe_extra(*arg))
    if cmd == "state":
        return ("ok", pickle.dumps(venv))
    raise ValueError(f"unknown command {cmd!r}")


def _publish(venv: VectorEnv, shared: dict[str, np.ndarray], tail: Any) -> tuple[Any, ...]:
    """The arrays into the shared memory; the rest (small) is the answer through the pipe."""
    for name, view in shared.items():
        view[...] = getattr(venv, name)
    return ("ok", venv.legal_ids, venv.game_seeds, dict(venv.deal_counts), tail)


def _error_type(name: str) -> type[Exception]:
    return {"TypeError": TypeError, "ValueError": ValueError}.get(name, RuntimeError)


class WorkerVectorEnv:
    """:class:`~shanghai_env.vector.VectorEnv` with its rows in ``workers`` processes."""

    def __init__(self, num_envs: int = 64, *, workers: int = 2, **options: Any) -> None:
        self.num_envs = env_count(num_envs)
        self.workers = int_arg("workers", workers, low=1, high=self.num_envs)
        share, extra = divmod(self.num_envs, self.workers)
        sizes = [share + (k < extra) for k in range(self.workers)]
        starts = np.cumsum([0, *sizes[:-1]]).tolist()
        blocks = [VectorEnv(n, first_row=start, **options) for n, start in zip(sizes, starts)]
        self._init(blocks, options)

    def _init(self, blocks: list[VectorEnv], options: dict[str, Any]) -> None:
        first = blocks[0]
        self._options = options
        self._closed: str | None = None  # why every call is refused (set by close)
        self._conns: dict[int, Connection] = {}  # worker k's pipe (k >= 1; block 0 is stepped here)
        self._procs: dict[int, Any] = {}
        self._due: set[int] = set()  # workers whose answer has not been read yet
        self.rules, self.table, self.encoder = first.rules, first.table, first.encoder
        self.num_players, self.num_actions = first.num_players, first.num_actions
        self.observation_length, self.caller_seats = first.observation_length, first.caller_seats
        self._bounds = [(b.first_row - blocks[0].first_row, b.num_envs) for b in blocks]
        n = self.num_envs
        self.reward_mode, self.copy = first.reward_mode, first.copy
        self.deal_ended = np.zeros(n, bool)
        self.game_seeds = [0] * n
        self._legal: list[tuple[int, ...]] = [() for _ in range(n)]  # what step checks against
        self._legal_lists: list[list[int]] | None = None  # legal_actions, built when first read
        self.deal_counts = {"deals": 0, "went_out": 0, "moves": 0}
        self._broken = next((b.broken for b in blocks if b.broken is not None), None)
        # every block pickled before any process starts: a player that does not pickle starts none
        blobs = []
        for block in blocks:
            try:
                blobs.append(pickle.dumps(block))
            except (pickle.PicklingError, AttributeError, TypeError) as err:
                raise TypeError(
                    "the players and features of a WorkerVectorEnv must pickle to reach its worker "
                    "processes (module-level classes and functions, or functools.partial of them; no "
                    f"lambdas or local functions): {err}"
                ) from None
        ctx = mp.get_context("spawn")  # no fork of a process that may hold torch threads
        # the arrays the caller gets are memory the workers write, each into its rows (no copies);
        # the mask is int8 or bool (mask_dtype), as the blocks'
        layout = _layout(first, n)
        buffer = ctx.RawArray("b", max(sum(_padded_bytes(shape, dtype) for _, shape, dtype in layout), 8))
        shared = _views(buffer, layout)
        self.seat, self.final_scores, self.extra = shared["seat"], shared["final_scores"], shared["extra"]
        self.obs, self.mask = shared["obs"], shared["mask"]
        # block 0 is stepped in this process while the workers step theirs: W blocks, W - 1 workers
        self._here = first
        self._here_views = {name: view[: self._bounds[0][1]] for name, view in shared.items()}
        for k in range(1, len(blocks)):
            start, rows = self._bounds[k]
            parent, child = ctx.Pipe()
            args = (child, blobs[k], buffer, layout, slice(start, start + rows))
            proc = ctx.Process(target=_serve, args=args, daemon=True)
            proc.start()
            child.close()
            self._conns[k] = parent
            self._procs[k] = proc
        self._started = any(b.started for b in blocks)
        if self._started:  # games in progress (a copy): their arrays as they stand
            for k, (block, (start, rows)) in enumerate(zip(blocks, self._bounds)):
                views = {name: getattr(self, name)[start : start + rows] for name in _SHARED}
                self._fill(k, _publish(block, views, None))
            self._sum_counts([b.deal_counts for b in blocks])

    def _name(self, k: int) -> str:
        start, n = self._bounds[k]
        return f"worker {k} (games {start}..{start + n - 1})"

    def _call(self, messages: dict[int, tuple[str, Any]]) -> dict[int, tuple[Any, ...]]:
        """Send each worker its message, answer block 0's here meanwhile, then take every answer
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
            if any(m[0] in ("reset", "step") for m in messages.values()):
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
                _, kind, message, broken = reply
                text = f"{self._name(k)}: {kind}: {message}"
                if broken:
                    self._broken = f"its last call stopped part-way in {text}"
                    text += " (the env is unusable until reset())"
                raise _error_type(kind)(text)
        return replies

    def _answer_here(self, cmd: str, arg: Any) -> tuple[Any, ...]:
        """Block 0's answer, as a worker gives it (an error too)."""
        try:
            return _answer(self._here, cmd, arg, self._here_views)
        except Exception as err:
            return ("error", type(err).__name__, str(err), self._here.broken is not None)

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
        """Worker ``k``'s legal ids and seeds after its reset or step (it wrote its arrays)."""
        _, legal, seeds, _, _ = reply
        start, n = self._bounds[k]
        rows = slice(start, start + n)
        self._legal[rows] = legal
        self._legal_lists = None
        self.game_seeds[rows] = seeds

    @property
    def legal_actions(self) -> list[list[int]]:
        """Each row's legal action ids, ascending, as the batched env's: the caller's lists, new
        after every call (built when first read)."""
        if self._legal_lists is None:
            self._legal_lists = [list(ids) for ids in self._legal]
        return self._legal_lists

    def _sum_counts(self, counts: list[dict[str, int]]) -> None:
        self.deal_counts = {k: sum(c[k] for c in counts) for k in self.deal_counts}

    def _open(self) -> None:
        if self._closed is not None:
            raise RuntimeError(f"this WorkerVectorEnv is closed ({self._closed}): make a new one")

    def _usable(self, call: str) -> None:
        self._open()
        if self._broken is not None:
            raise RuntimeError(f"this env is unusable until reset(): {self._broken}")
        if not self._started:
            raise RuntimeError(f"call reset() before {call}")

    def reset(self, seed: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`VectorEnv.reset <shanghai_env.vector.VectorEnv.reset>`: one seed, one per
        game, or None."""
        self._open()
        base, rows = reset_seeds(seed, self.num_envs)
        self._broken = None
        replies = self._call(
            {
                k: ("reset", (base, rows[start : start + n] if rows is not None else None))
                for k, (start, n) in enumerate(self._bounds)
            }
        )
        for k in range(len(self._bounds)):
            self._fill(k, replies[k])
        self._sum_counts([r[3] for r in replies.values()])
        self._started = True
        self.deal_ended = np.zeros(self.num_envs, bool)
        if self.copy:
            return self.obs.copy(), self.mask.copy(), self.seat.copy()
        return self.obs, self.mask, self.seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        self._usable("step()")
        # checked here first, so that a bad action changes no worker's games
        acts = checked_actions(actions, self._legal, self.num_actions, self.table.name)
        replies = self._call(
            {k: ("step", acts[start : start + n]) for k, (start, n) in enumerate(self._bounds)}
        )
        for k in range(len(self._bounds)):
            self._fill(k, replies[k])
        self._sum_counts([r[3] for r in replies.values()])
        tails = [replies[k][4] for k in range(len(self._bounds))]
        rewards = np.concatenate([t[0] for t in tails])
        done = np.concatenate([t[1] for t in tails])
        self.deal_ended = np.concatenate([t[2] for t in tails])
        if self.copy:
            return self.obs.copy(), self.mask.copy(), self.seat.copy(), rewards, done
        return self.obs, self.mask, self.seat, rewards, done

    @property
    def bool_mask(self) -> np.ndarray:
        """:attr:`mask` seen as bool (a view, no copy), as the batched env's."""
        return self.mask.view(np.bool_)

    def observe(self, row: int, seat: int) -> np.ndarray:
        return self._ask("observe", row, seat)

    def observe_extra(self, row: int, seat: int) -> np.ndarray:
        return self._ask("observe_extra", row, seat)

    def _ask(self, cmd: str, row: Any, seat: Any) -> np.ndarray:
        self._usable(f"{cmd}()")
        row = int_arg("row", row, low=0, high=self.num_envs - 1)
        seat = int_arg("seat", seat, low=0, high=self.num_players - 1)
        k = next(k for k, (start, n) in enumerate(self._bounds) if start <= row < start + n)
        return np.asarray(self._call({k: (cmd, (row - self._bounds[k][0], seat))})[k][1])

    def close(self) -> None:
        """Stop the workers; every later call says the env is closed (a second close does nothing)."""
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
        replies = self._call({k: ("state", None) for k in range(len(self._bounds))})
        return {"blocks": [replies[k][1] for k in range(len(self._bounds))], "num_envs": self.num_envs,
                "workers": self.workers, "options": self._options}  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.num_envs, self.workers = state["num_envs"], state["workers"]
        self._init([pickle.loads(b) for b in state["blocks"]], state["options"])
