"""The worker processes of the tournament and of the scorer's data end with the command that
started them, however it ends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import processes
import pytest

ROOT = Path(__file__).resolve().parents[1]


# commands whose two workers play for minutes, against the test's seconds
COMMANDS = {
    # full games with search: one deck set (three games) takes minutes
    "tournament": ["evaluate.py", "--players", "search,planner,greedy", "--games", "12", "--workers", "2",
                   "--no-progress", "--quiet", "--out", "{tmp}/res"],
    # rollout-valued decisions of the move scorer's training data
    "scorer data": ["train.py", "scorer", "gen", "--out", "{tmp}/shard.npz", "--workers", "2",
                    "--games", "20"],
}  # fmt: skip


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_killed_command_takes_its_workers_with_it(tmp_path: Path, command: str) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]]
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = processes.workers(proc.pid)
        assert len(workers) == 2, "the workers did not start"
        time.sleep(2.0)  # into their games
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while any(processes.alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(processes.alive(w) for w in workers)
    finally:  # leave nothing running, whatever failed
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:
            with contextlib.suppress(OSError):
                if processes.alive(w) and b"spawn_main" in Path(f"/proc/{w}/cmdline").read_bytes():
                    os.kill(w, signal.SIGKILL)
