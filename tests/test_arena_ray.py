"""The tournament's Ray backend: the same games and results as the local workers, errors in one line.

Skipped where Ray is not installed (``pip install -e '.[rllib]'``).
"""

from __future__ import annotations

import contextlib
import json
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[rllib]'")

import ray

from shanghai_env.agents.arena import evaluate_cli as evaluate
from shanghai_env.agents.arena.ray_address import ray_address_problem
from shanghai_env.agents.arena.tournament import RAY_MISSING, GameResult, TournamentConfig, run_tournament


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def key(results: list[GameResult]) -> list[dict]:
    """Everything a game's result says (scores, deal scores, moves, records...) but its duration."""
    return [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in results]


def test_ray_tasks_give_the_local_results(local_ray: None) -> None:
    config = TournamentConfig(
        players=("planner", "greedy", "random"), games=12, seed=5, contracts=(1, 2), record_games=2
    )
    local = run_tournament(config, workers=1)
    seen: list[int] = []
    on_ray = run_tournament(config, backend="ray", progress=seen.append)
    assert key(on_ray) == key(local)
    assert [r.index for r in on_ray] == list(range(12)) and sum(seen) == 12
    assert on_ray[0].record is not None and on_ray[2].record is None
    # two tasks at a time, fresh decks for every game: still the local results
    fresh = TournamentConfig(
        players=("greedy", "random", "random"), games=5, seed=2, contracts=(1,), duplicate=False
    )
    assert key(run_tournament(fresh, workers=2, backend="ray")) == key(run_tournament(fresh, workers=1))


def test_ray_tasks_play_only_the_games_not_played_yet(local_ray: None) -> None:
    config = TournamentConfig(players=("planner", "greedy", "random"), games=12, seed=5, contracts=(1,))
    local = run_tournament(config, workers=1)
    batches: list[list[GameResult]] = []
    on_ray = run_tournament(config, backend="ray", played=local[:6], on_games=batches.append)
    assert key(on_ray) == key(local)
    assert sorted(r.index for b in batches for r in b) == list(range(6, 12))


def test_evaluate_with_ray_writes_the_local_summary(local_ray: None, tmp_path: Path) -> None:
    common = ["--players", "greedy,random,random", "--games", "6", "--seed", "1", "--contracts", "1"]
    common += ["--no-progress", "--quiet"]
    evaluate.main([*common, "--workers", "1", "--out", str(tmp_path / "local")])
    evaluate.main([*common, "--ray", "--out", str(tmp_path / "ray")])
    local = json.loads((tmp_path / "local" / "summary.json").read_text())
    on_ray = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert on_ray["players"] == local["players"] and on_ray["pairs"] == local["pairs"]
    assert (tmp_path / "ray" / "games.csv").read_text() == (tmp_path / "local" / "games.csv").read_text()
    assert ray.is_initialized()  # the CLI used the running Ray and left it running


def error_line(stderr: str) -> str:
    """The one error line, without the program's name and the pointer to --help."""
    errors = [line for line in stderr.splitlines() if line.startswith("shanghai-evaluate: error: ")]
    assert len(errors) == 1 and stderr.strip().endswith(errors[0]) and "Traceback" not in stderr
    line = errors[0].removeprefix("shanghai-evaluate: error: ")
    assert line.endswith(" (see shanghai-evaluate --help)"), line
    return line.removesuffix(" (see shanghai-evaluate --help)")


@pytest.mark.parametrize(
    "address, message",
    [("no-port-here", "expected auto, local, HOST:PORT"), ("127.0.0.1:1", "nothing answers")],
)
def test_bad_ray_addresses_exit_2_with_one_line(
    address: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        evaluate.main(["--players", "greedy,random,random", "--ray", address, "--out", str(tmp_path)])
    assert exc.value.code == 2
    line = error_line(capsys.readouterr().err)
    assert line.startswith("argument --ray: ") and message in line


def test_without_ray_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails as if it were not installed
    config = TournamentConfig(players=("greedy", "random", "random"), games=3, contracts=(1,))
    with pytest.raises(ImportError, match=r"\.\[rllib\]"):
        run_tournament(config, backend="ray")
    with pytest.raises(SystemExit) as exc:
        evaluate.main(["--players", "greedy,random,random", "--ray", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert error_line(capsys.readouterr().err) == "argument --ray: " + RAY_MISSING
    with pytest.raises(ValueError, match="backend"):
        run_tournament(config, backend="threads")


@pytest.fixture
def not_ray() -> Iterator[str]:
    """An address where something answers that is not Ray (it reads, then says HTTP/1.0 400)."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.settimeout(5)
            with contextlib.suppress(OSError):
                self.request.recv(1024)
                self.request.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_where_something_else_listens_is_refused_at_once(
    scheme: str, not_ray: str, tmp_path: Path
) -> None:
    args = ["evaluate.py", "--players", "greedy,random,random", "--contracts", "1", "--out", str(tmp_path)]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, *args, "--ray", scheme + not_ray],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=45,  # Ray itself keeps trying such an address for a minute or more
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    line = error_line(done.stderr)  # one line: none of Ray's log lines
    assert line.startswith("argument --ray: ") and "is not Ray" in line
    assert time.monotonic() - started < 45


def test_a_running_ray_passes_the_address_check(local_ray: None) -> None:
    assert ray_address_problem(ray.get_runtime_context().gcs_address) is None
