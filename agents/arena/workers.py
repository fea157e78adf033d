"""Worker processes for the tournament and the ladder, which end with the command that started them.

:func:`run_in_workers` runs calls in spawned worker processes and hands each result back in the
calling thread as it finishes. However the command ends, its workers end with it:

- **Ctrl-C** reaches the terminal's whole process group. The workers ignore it (an interrupt
  arriving while a worker still imports would otherwise print a traceback from that worker); the
  command records it, hands over every result already finished, ends the workers and raises
  ``KeyboardInterrupt`` in its own thread, where the command says it stopped.
- **Killed outright** (SIGKILL, nothing runs in the command): on Linux the kernel ends each worker
  with its parent (``PR_SET_PDEATHSIG``); everywhere a thread in each worker also checks twice a
  second whether its parent is still there, and ends the worker when it is not. Otherwise the
  workers would play on for nobody, for minutes, a game of the search bot each.
- **An error** in a game or in the caller's handling of a result: the workers are ended at once
  (waiting for the games in progress could take minutes) and the error is raised.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

R = TypeVar("R")

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_PARENT_POLL_S = 0.5
_RESULT_POLL_S = 0.2  # how soon a recorded Ctrl-C stops the pool


def one_thread_per_worker() -> None:
    """In a worker process, before any numerical library loads: one thread for its linear algebra.

    A model decides one observation at a time, where extra threads only wait for each other; with
    one worker per core, torch's default of one thread per core in every worker made a 4-player
    game of a model and three planners 4 times slower on 2 cores. A value the user set is kept.
    The commands (evaluate.py, the ladder) also call it in their own process, which plays the
    games itself with ``--workers 1``.
    """
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    torch = sys.modules.get("torch")  # already loaded (a model was checked): tell it directly
    if torch is not None:
        try:
            torch.set_num_threads(max(1, int(os.environ["OMP_NUM_THREADS"])))
        except ValueError:
            torch.set_num_threads(1)


def worker_start(parent: int) -> None:
    """The initializer of every worker process: ignore Ctrl-C (the parent stops the pool), end
    when the parent process ``parent`` ends, one linear-algebra thread."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # started with Ctrl-C held back (run_in_workers)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    end_with_parent(parent)
    one_thread_per_worker()


def end_with_parent(parent: int) -> None:
    """End this process (at once, silently) when the process ``parent`` ends, however it ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # it ended before the kernel was asked to tell
        os._exit(1)

    def watch() -> None:  # everywhere: the parent's end makes this process another's child
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C back in this thread for a moment: one arriving meanwhile is delivered at the end.

    Processes started meanwhile inherit the hold, so a worker still importing cannot be
    interrupted with a traceback; :func:`worker_start` then ignores Ctrl-C and releases it.
    (POSIX; elsewhere a no-op.)
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextlib.contextmanager
def _interrupts_recorded() -> Iterator[threading.Event]:
    """Ctrl-C sets the event instead of raising wherever this thread happens to be (in the middle
    of storing a result, say). Only the main thread receives signals; elsewhere nothing changes."""
    interrupted = threading.Event()
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.set())
    except ValueError:  # not the main thread
        yield interrupted
        return
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (shutdown alone would wait for the
    games in progress)."""
    # CPython keeps the pool's processes here (shutdown forgets them); there is no public way to
    # end a running task.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown forgets it too
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(5)
    # Wait for the pool's manager thread to see the ended workers and close its wake-up pipe.
    # Otherwise the interpreter's exit hook may write to that pipe while the thread closes it,
    # printing an "OSError: Bad file descriptor" traceback after the command has stopped cleanly.
    if isinstance(manager, threading.Thread):
        with contextlib.suppress(Exception):
            manager.join(10)


def run_in_workers(
    calls: Sequence[tuple[Callable[..., R], tuple[Any, ...]]],
    workers: int,
    on_result: Callable[[int, R], object],
) -> None:
    """Run ``fn(*args)`` for every ``(fn, args)`` of ``calls`` in up to ``workers`` spawned worker
    processes; ``on_result(i, result)`` runs in this thread as call ``i`` finishes (in the order
    they finish). See the module docstring for how it ends on Ctrl-C, a kill or an error."""
    if not calls:
        return
    ctx = multiprocessing.get_context("spawn")
    with _interrupts_recorded() as interrupted:
        with _interrupts_held():  # the workers start (on submit) with Ctrl-C held back
            pool = ProcessPoolExecutor(
                min(workers, len(calls)), mp_context=ctx, initializer=worker_start, initargs=(os.getpid(),)
            )
        try:
            with _interrupts_held():
                futures: dict[Future[R], int] = {
                    pool.submit(fn, *args): i for i, (fn, args) in enumerate(calls)
                }
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=_RESULT_POLL_S, return_when=FIRST_COMPLETED)
                for fut in sorted(done, key=futures.__getitem__):
                    on_result(futures[fut], fut.result())
                if interrupted.is_set():
                    # what finished before the interrupt is kept; only the games in progress are lost
                    for fut in sorted(pending, key=futures.__getitem__):
                        if fut.done() and not fut.cancelled() and fut.exception() is None:
                            on_result(futures[fut], fut.result())
                    raise KeyboardInterrupt
        except BaseException:
            stop_workers(pool)
            raise
        pool.shutdown(wait=True)


def map_in_workers(calls: Sequence[tuple[Callable[..., R], tuple[Any, ...]]], workers: int) -> list[R]:
    """:func:`run_in_workers`, the results as a list in the order of ``calls``."""
    results: list[Any] = [None] * len(calls)
    run_in_workers(calls, workers, results.__setitem__)
    return results
