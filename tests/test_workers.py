"""The worker pool of the tournament and the ladder ends cleanly when it is stopped."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from shanghai_env.agents.arena.workers import stop_workers, worker_start


def test_stopping_the_workers_waits_for_the_pools_manager_thread() -> None:
    # The interpreter's exit hook wakes every pool's manager thread through a pipe that thread
    # closes when it ends; a thread still ending at exit made the hook write to a closed pipe
    # and print a traceback after a stopped command. After stop_workers nothing is left to race.
    pool = ProcessPoolExecutor(
        2, mp_context=multiprocessing.get_context("spawn"), initializer=worker_start, initargs=(os.getpid(),)
    )
    futures = [pool.submit(time.sleep, 60) for _ in range(4)]
    deadline = time.monotonic() + 60
    while not any(f.running() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.05)
    processes = list(pool._processes.values())
    manager = pool._executor_manager_thread
    wakeup = pool._executor_manager_thread_wakeup
    assert manager is not None and manager.is_alive() and processes

    started = time.monotonic()
    stop_workers(pool)

    assert time.monotonic() - started < 30  # the sleeping calls were not waited for
    assert not any(p.is_alive() for p in processes)
    assert not manager.is_alive()
    assert wakeup._closed  # the exit hook's wake-up is now a no-op
    assert all(f.done() for f in futures)
