"""The tournament's worker processes end with the command that started them, however it ends."""

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


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc (Linux)")
def test_a_killed_tournament_takes_its_workers_with_it(tmp_path: Path) -> None:
    # full games with search: one deck set (three games) takes minutes, the test seconds
    args = ["evaluate.py", "--players", "search,planner,greedy", "--games", "12", "--workers", "2"]
    args += ["--no-progress", "--quiet", "--out", str(tmp_path / "res")]
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
