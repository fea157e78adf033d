"""exit's searched decisions, measured here or in worker processes (each task seeded: the same run)."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from shanghai_env.agents.arena.workers import stop_workers, worker_start
from shanghai_env.agents.learned.players.net_search import NetSearchBot, NetSearchParams
from shanghai_env.agents.learned.players.policy import PolicyAgent, save_policy
from shanghai_env.any_table import encoding_tables
from shanghai_env.decision import Decision
from shanghai_env.engine import PlayerView
from shanghai_env.rules import Rules

# (view, rules, candidates, seed): one searched decision, its generator's seed a pair (run, search)
Task = tuple[PlayerView, Rules, list[int], tuple[int, int]]
Values = list[list[float]]  # each candidate's values, as NetSearchBot.measure gives them

_worker: dict[str, Any] = {}  # a worker process's searcher and the network file it was read from


def measure(searcher: NetSearchBot, task: Task) -> Values:
    """The search's values of one task, from the task's own generator."""
    view, rules, candidates, seed = task
    table, _ = encoding_tables(rules, "table")
    searcher.rng = np.random.default_rng(list(seed))
    return searcher.measure(Decision(view, table, rules), candidates)


def _measure_in_worker(path: str, version: int, params: NetSearchParams, task: Task) -> Values:
    if _worker.get("version") != (path, version):
        agent = PolicyAgent(path, name="learner")
        _worker["searcher"] = NetSearchBot(agent, params=params)
        _worker["version"] = (path, version)
    return measure(_worker["searcher"], task)


def _ready() -> None:
    """A first task: the worker has started and imported what it needs."""


class SearchPool:
    """Measures tasks here (``workers`` 1) or in ``workers`` processes over the network last published."""

    def __init__(self, searcher: NetSearchBot, workers: int) -> None:
        self.searcher = searcher
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None
        self.folder = ""
        self.version = -1
        if workers > 1:
            ctx = multiprocessing.get_context("spawn")
            self.folder = tempfile.mkdtemp(prefix="shanghai-search-")
            self.pool = ProcessPoolExecutor(
                workers, mp_context=ctx, initializer=worker_start, initargs=(os.getpid(),)
            )
            # start every worker now (the caller holds Ctrl-C off its children while it sets up)
            for future in [self.pool.submit(_ready) for _ in range(workers)]:
                future.result()

    def publish(self, version: int, rules: Rules, meta: dict[str, Any]) -> None:
        """The network the workers measure with from now on (written once per ``version``)."""
        if self.pool is None or version == self.version:
            return
        self.version = version
        net = self.searcher.agent.net
        save_policy(os.path.join(self.folder, "net.pt"), net, rules, meta)

    def submit(self, tasks: list[Task]) -> list[Any]:
        """Start measuring ``tasks`` (in the workers: the caller goes on while they search); what
        :meth:`gather` turns into their values, in order. Here (one worker) they are measured now."""
        if self.pool is None:
            return [measure(self.searcher, task) for task in tasks]
        path = os.path.join(self.folder, "net.pt")
        params = self.searcher.params
        return [self.pool.submit(_measure_in_worker, path, self.version, params, t) for t in tasks]

    def gather(self, handles: list[Any]) -> list[Values]:
        if self.pool is None:
            return handles
        return [h.result() for h in handles]

    def close(self) -> None:
        if self.pool is not None:
            stop_workers(self.pool)
            self.pool = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = ""
