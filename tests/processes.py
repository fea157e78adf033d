"""Shared by the tests that stop a command and check that its worker processes went with it:
reading a process's children and liveness from /proc (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def default_ctrl_c() -> None:
    """``preexec_fn`` for a command that a test stops with SIGINT: Ctrl-C as a terminal's
    foreground command has it. (A shell that starts a job in the background sets SIGINT to ignored,
    every child inherits that, and Python then installs no KeyboardInterrupt handler.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            found |= {int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()}
    return found


def workers(pid: int) -> set[int]:
    """The children of ``pid`` started by multiprocessing's spawn."""
    out = set()
    for child in children(pid):
        with contextlib.suppress(OSError):
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.add(child)
    return out


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False
