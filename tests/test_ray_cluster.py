"""The route to a cluster, beyond one process: a Ray cluster of two nodes started on this machine
with Ray's own command line (``ray start --head``, then a second node joining it) runs a short
RLlib training whose env runners need both nodes, and an ``evaluate.py --ray`` tournament whose
games and results are the local run's (docs/rllib.md).

Skipped only where Ray is not installed (``pip install -e '.[rllib]'``). The cluster's processes
are found by its session name and port and stopped at the end, so a Ray that other tests started
in the meantime is left alone (``ray stop`` would end every Ray on the machine).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[rllib]'")

ROOT = Path(__file__).resolve().parents[1]
RAY = shutil.which("ray", path=os.path.dirname(sys.executable)) or shutil.which("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_env() -> dict[str, str]:
    # `ray start` clusters of Ray 2.60 authenticate with a token; drivers and joining nodes need
    # this mode to read it (docs/rllib.md, cluster set-up)
    return {**os.environ, "RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0"}


def _ray(*args: str) -> subprocess.CompletedProcess[str]:
    assert RAY is not None
    return subprocess.run(
        [RAY, *args], env=_cluster_env(), capture_output=True, text=True, timeout=180, check=False
    )


def _processes_with(marks: tuple[str, ...]) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(mark in cmdline for mark in marks):
            pids.append(int(entry.name))
    return pids


def _stop(marks: tuple[str, ...]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _processes_with(marks):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while _processes_with(marks) and time.monotonic() < deadline:
            time.sleep(0.2)


def _alive_nodes(address: str) -> int:
    code = (
        f"import ray, json; ray.init(address={address!r}, log_to_driver=False); "
        "print(json.dumps(sum(1 for n in ray.nodes() if n['Alive'])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_cluster_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[str]:
    if RAY is None or not Path("/proc").is_dir():
        pytest.skip("needs the `ray` command and /proc (Linux)")
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rc", dir="/tmp")  # short: Ray's socket paths have a length limit
    address = f"127.0.0.1:{port}"
    marks: tuple[str, ...] = (temp, f"gcs_server_port={port}", f"127.0.0.1:{port}")
    try:
        head = _ray(
            "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
            f"--temp-dir={temp}", "--disable-usage-stats",
        )  # fmt: skip
        assert head.returncode == 0, head.stdout[-2000:] + head.stderr[-2000:]
        session = os.path.basename(os.path.realpath(os.path.join(temp, "session_latest")))
        marks = (*marks, session)
        joined = _ray("start", f"--address={address}", "--num-cpus=1")
        assert joined.returncode == 0, joined.stdout[-2000:] + joined.stderr[-2000:]
        deadline = time.monotonic() + 60
        while _alive_nodes(address) < 2:
            assert time.monotonic() < deadline, "the second node did not join the cluster in 60 s"
            time.sleep(1)
        yield address
    finally:
        _stop(marks)
        shutil.rmtree(temp, ignore_errors=True)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=_cluster_env(), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _games(folder: Path) -> list[dict[str, str]]:
    with open(folder / "games.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_two_node_cluster_evaluates_like_a_local_run_and_trains(two_nodes: str, tmp_path: Path) -> None:
    assert _alive_nodes(two_nodes) == 2
    table = ["--players", "planner,greedy,random", "--games", "12", "--seed", "5", "--contracts", "1,2"]
    table += ["--no-progress"]
    _run([str(ROOT / "evaluate.py"), *table, "--ray", two_nodes, "--out", str(tmp_path / "cluster")], ROOT)
    _run([str(ROOT / "evaluate.py"), *table, "--workers", "1", "--out", str(tmp_path / "local")], ROOT)
    on_cluster, local = _games(tmp_path / "cluster"), _games(tmp_path / "local")
    assert len(local) == 12 and on_cluster == local  # every game: seeds, seats, moves, scores
    cluster_summary = json.loads((tmp_path / "cluster" / "summary.json").read_text(encoding="utf-8"))
    local_summary = json.loads((tmp_path / "local" / "summary.json").read_text(encoding="utf-8"))
    assert cluster_summary["pairs"] == local_summary["pairs"]

    # Two env runners of one CPU each on a cluster of two one-CPU nodes: one runs on each node.
    out = tmp_path / "train"
    _run(
        [
            str(ROOT / "train.py"),
            "rllib",
            "--address",
            two_nodes,
            "--timesteps",
            "800",
            "--contracts",
            "1",
            "--num-env-runners",
            "2",
            "--train-batch",
            "400",
            "--minibatch",
            "200",
            "--epochs",
            "1",
            "--net-arch",
            "32,32",
            "--eval-games",
            "0",
            "--seed",
            "3",
            "--no-progress",
            "--out",
            str(out),
        ],
        ROOT,
    )
    with open(out / "progress.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == [1, 2]  # self-play: the learner takes every env step
    assert all(float(r["sampled_env_steps"]) >= 400 for r in rows)
    # the exported policy plays a local tournament
    _run(
        [
            str(ROOT / "evaluate.py"),
            "--players",
            f"{out / 'model.zip'},greedy,greedy,greedy",
            "--contracts",
            "1",
            "--games",
            "4",
            "--no-progress",
            "--out",
            str(tmp_path / "policy"),
        ],
        ROOT,
    )
    assert len(_games(tmp_path / "policy")) == 24  # 4 games asked: one round of the 4-seat design
