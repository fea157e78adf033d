"""The batched env with its games in worker processes: the same games, more cores.

``WorkerVectorEnv(num_envs, workers=W, **options)`` splits the ``num_envs`` rows into ``W``
contiguous blocks, each a :class:`~shanghai_env.vector.VectorEnv` in a process of its own (its
rows keep their numbers in the seeds: ``first_row``), steps them all at once and gathers their
arrays. It has the batched env's interface (``reset``, ``step``, ``obs``, ``mask``, ``seat``,
``legal_actions``, ``final_scores``, ``game_seeds``, ``observe``, ``deal_counts``) and plays
exactly the same games, observations and rewards for the same seed and actions, whatever
``W`` (tested). Players played inside are copied into each worker (bots are made there by their
factories; a network is pickled), so they must pickle. Pickling the object (a checkpoint) takes
every worker's games and a copy starts workers of its own with them.

Worth it where stepping the games is a large part of the time and there are cores to spare: on
two cores the trainer's updates dominate and one process is as fast (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import pickle
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from .checks import int_arg
from .vector import VectorEnv, checked_actions


def _serve(conn: Connection, blob: bytes) -> None:
    venv: VectorEnv = pickle.loads(blob)
    while True:
        cmd, arg = conn.recv()
        if cmd == "reset":
            venv.reset(seed=arg)
            conn.send(_arrays(venv, None))
        elif cmd == "step":
            try:
                out = venv.step(arg)
            except (TypeError, ValueError) as err:
                conn.send(("error", err))
                continue
            conn.send(_arrays(venv, out[3:]))
        elif cmd == "observe":
            conn.send(venv.observe(*arg))
        elif cmd == "observe_extra":
            conn.send(venv.observe_extra(*arg))
        elif cmd == "state":
            conn.send(pickle.dumps(venv))
        elif cmd == "close":
            conn.close()
            return


def _arrays(venv: VectorEnv, tail: Any) -> tuple[Any, ...]:
    # no mask: the parent rebuilds it from the legal ids (a tenth of the bytes through the pipe)
    return (
        "ok",
        venv.obs,
        None,
        venv.seat,
        venv.legal_actions,
        venv.final_scores,
        venv.game_seeds,
        dict(venv.deal_counts),
        tail,
        venv.extra,
    )


class WorkerVectorEnv:
    """:class:`~shanghai_env.vector.VectorEnv` with its rows in ``workers`` processes."""

    def __init__(self, num_envs: int = 64, *, workers: int = 2, **options: Any) -> None:
        self.num_envs = int_arg("num_envs", num_envs, low=1)
        self.workers = int_arg("workers", workers, low=1, high=self.num_envs)
        share, extra = divmod(self.num_envs, self.workers)
        sizes = [share + (k < extra) for k in range(self.workers)]
        starts = np.cumsum([0, *sizes[:-1]]).tolist()
        blocks = [VectorEnv(n, first_row=start, **options) for n, start in zip(sizes, starts)]
        self._init(blocks, options)

    def _init(self, blocks: list[VectorEnv], options: dict[str, Any]) -> None:
        first = blocks[0]
        self._options = options
        self.rules, self.table, self.encoder = first.rules, first.table, first.encoder
        self.num_players, self.num_actions = first.num_players, first.num_actions
        self.observation_length, self.caller_seats = first.observation_length, first.caller_seats
        self._bounds = [(b.first_row - blocks[0].first_row, b.num_envs) for b in blocks]
        n = self.num_envs
        self.extra = np.zeros((n, first.extra.shape[1]), np.float32)
        self.obs = np.zeros((n, self.observation_length), np.int8)
        self.mask = np.zeros((n, self.num_actions), np.int8)
        self.seat = np.zeros(n, np.int64)
        self.final_scores = np.zeros((n, self.num_players), np.int64)
        self.game_seeds = [0] * n
        self.legal_actions: list[list[int]] = [[] for _ in range(n)]
        self.deal_counts = {"deals": 0, "went_out": 0, "moves": 0}
        ctx = mp.get_context("spawn")  # no fork of a process that may hold torch threads
        self._conns: list[Connection] = []
        self._procs = []
        for block in blocks:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, pickle.dumps(block)), daemon=True)
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        self._started = any(b._seed is not None for b in blocks)
        if self._started:  # games in progress (a copy): their arrays as they stand
            for (start, n), block in zip(self._bounds, blocks):
                self._fill(start, n, _arrays(block, None))
            self._sum_counts([b.deal_counts for b in blocks])

    def _gather(self) -> list[Any]:
        """Receive every worker's answer and copy its arrays into this object's rows."""
        replies = [conn.recv() for conn in self._conns]
        errors = [r[1] for r in replies if r[0] == "error"]
        if errors:
            raise errors[0]
        for (start, n), reply in zip(self._bounds, replies):
            self._fill(start, n, reply)
        self._sum_counts([r[7] for r in replies])
        return [r[8] for r in replies]

    def _fill(self, start: int, n: int, reply: tuple[Any, ...]) -> None:
        _, obs, _, seat, legal, final, seeds, _, _, extra = reply
        rows = slice(start, start + n)
        self.obs[rows], self.seat[rows], self.final_scores[rows] = obs, seat, final
        self.extra[rows] = extra
        for i, ids in enumerate(legal, start):
            old = self.legal_actions[i]
            if old:
                self.mask[i, old] = 0
            self.mask[i, ids] = 1
            self.legal_actions[i] = ids
        self.game_seeds[rows] = seeds

    def _sum_counts(self, counts: list[dict[str, int]]) -> None:
        self.deal_counts = {k: sum(c[k] for c in counts) for k in self.deal_counts}

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**63)  # type: ignore[operator]
        for conn in self._conns:
            conn.send(("reset", seed))
        self._gather()
        self._started = True
        return self.obs, self.mask, self.seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        # checked here first, so that a bad action changes no worker's games
        acts = checked_actions(actions, self.mask, self.legal_actions, self.table.name)
        for (start, n), conn in zip(self._bounds, self._conns):
            conn.send(("step", acts[start : start + n]))
        tails = self._gather()
        rewards = np.concatenate([t[0] for t in tails])
        done = np.concatenate([t[1] for t in tails])
        return self.obs, self.mask, self.seat, rewards, done

    def observe(self, row: int, seat: int) -> np.ndarray:
        return self._ask("observe", row, seat)

    def observe_extra(self, row: int, seat: int) -> np.ndarray:
        return self._ask("observe_extra", row, seat)

    def _ask(self, cmd: str, row: int, seat: int) -> np.ndarray:
        for k, (start, n) in enumerate(self._bounds):
            if start <= row < start + n:
                self._conns[k].send((cmd, (row - start, seat)))
                return np.asarray(self._conns[k].recv())
        raise ValueError(f"row must be 0..{self.num_envs - 1}, got {row}")

    def close(self) -> None:
        for conn, proc in zip(self._conns, self._procs):
            with contextlib.suppress(BrokenPipeError, OSError):  # a worker already gone
                conn.send(("close", None))
            proc.join(timeout=5)
        self._conns, self._procs = [], []

    def __del__(self) -> None:
        if getattr(self, "_conns", None):
            self.close()

    def __getstate__(self) -> dict[str, Any]:
        for conn in self._conns:
            conn.send(("state", None))
        return {"blocks": [conn.recv() for conn in self._conns], "num_envs": self.num_envs,
                "workers": self.workers, "options": self._options}  # fmt: skip

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.num_envs, self.workers = state["num_envs"], state["workers"]
        self._init([pickle.loads(b) for b in state["blocks"]], state["options"])
