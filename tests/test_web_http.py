"""The browser game's server as an HTTP server (``shanghai-play --web``): many requests at once,
requests from other sites, bodies too large or malformed, odd ``Host`` headers, numbers too long,
and how many games it holds. Every refusal is an HTTP answer with a JSON error, never a dropped
connection."""

from __future__ import annotations

import json
import selectors
import socket
import socketserver
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shanghai_env.agents.ui.web import GameServer, Table, start_server
from shanghai_env.agents.ui.web.server import MAX_BODY, MAX_GAMES
from shanghai_env.record import load, replay
from shanghai_env.rules import Rules

TABLE = Table(Rules(num_players=3, contracts=(1,)), 0, ["random", "random"], 5)


@pytest.fixture
def make_server() -> Iterator[Any]:
    servers: list[GameServer] = []

    def make(table: Table = TABLE, serve: bool = True) -> GameServer:
        server = start_server(table, "127.0.0.1", 0)
        if serve:
            start(server)
        servers.append(server)
        return server

    yield make
    for server in servers:
        if server in serving:  # shutdown() waits for serve_forever(): only for a server started
            server.shutdown()
        server.server_close()


serving: set[GameServer] = set()


def start(server: GameServer) -> None:
    serving.add(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def host_of(server: GameServer) -> str:
    return f"127.0.0.1:{server.server_address[1]}"


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP answer from ``sock``: status, headers (lower-case names), body. A connection
    closed before a whole answer came is an AssertionError."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection was closed without an answer (got {data!r})"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    size = int(headers.get("content-length", "0"))
    while len(body) < size:
        chunk = sock.recv(65536)
        assert chunk, "the connection was closed in the middle of the answer"
        body += chunk
    return status, headers, body[:size]


def closed_after(sock: socket.socket) -> bool:
    """Whether the server closes the connection (within a few seconds)."""
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def exchange(
    server: GameServer, head: str, body: bytes = b""
) -> tuple[int, dict[str, str], dict[str, Any], bool]:
    """Send ``head`` (request line and headers, without the blank line) and ``body`` on a new
    connection; the answer's status, headers, JSON body, and whether the server then closed."""
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n\r\n" + body)
        status, headers, raw = read_answer(sock)
        # a server that says it closes must then close (and one that does not say so keeps it open)
        closed = headers.get("connection") == "close" and closed_after(sock)
    return status, headers, json.loads(raw) if raw else {}, closed


def post(
    server: GameServer, path: str, body: bytes, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    base = server.url.rstrip("/")
    kind = {"Content-Type": "application/json"}
    request = urllib.request.Request(
        base + path, data=body, method="POST", headers={**kind, **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def get(server: GameServer, path: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


# --- many requests at once -----------------------------------------------------------------------


def system_backlog_cap() -> int | None:
    """The most connections Linux queues for any listening socket (None: not known here)."""
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return None


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or (system_backlog_cap() or 0) < 200,
    reason="needs Linux queueing at least 200 connections (net.core.somaxconn)",
)
def test_two_hundred_requests_at_once_are_all_answered(make_server) -> None:
    server = make_server(serve=False)
    key, _ = server.games.new()
    address = server.server_address[:2]
    # 200 connections opened before the server takes any: all must be queued, none turned away
    selector = selectors.DefaultSelector()
    socks = []
    for _ in range(200):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(address)
        selector.register(sock, selectors.EVENT_WRITE)
        socks.append(sock)
    connected: set[socket.socket] = set()
    deadline = time.monotonic() + 2.5
    while len(connected) < len(socks) and time.monotonic() < deadline:
        for event, _ in selector.select(timeout=0.1):
            sock = event.fileobj
            assert isinstance(sock, socket.socket)
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.add(sock)
            selector.unregister(sock)
    selector.close()
    try:
        assert len(connected) == 200, f"only {len(connected)} of 200 connections were queued"
        start(server)
        request = f"GET /api/game/{key}?seat=0 HTTP/1.1\r\nHost: {host_of(server)}\r\n\r\n".encode()
        for sock in socks:
            sock.setblocking(True)
            sock.settimeout(20)
            sock.sendall(request)
        statuses = [read_answer(sock)[0] for sock in socks]
        assert statuses == [200] * 200
    finally:
        for sock in socks:
            sock.close()


def test_the_server_queues_many_connections_and_answers_each_in_a_thread(make_server) -> None:
    server = make_server(serve=False)
    assert server.request_queue_size >= 256
    assert isinstance(server, socketserver.ThreadingMixIn) and server.daemon_threads


# --- requests from other sites ---------------------------------------------------------------------


def test_requests_from_another_site_are_refused(make_server) -> None:
    server = make_server()
    before = len(server.games.games)
    evil = {"Origin": "http://evil.example"}
    # a "simple" cross-site request: a form or fetch() with text/plain, which a browser sends unasked
    status, answer = post(server, "/api/new", b"{}", {**evil, "Content-Type": "text/plain"})
    assert status == 403 and "evil.example" in answer["error"]
    status, answer = post(server, "/api/new", b"{}", evil)
    assert status == 403 and answer["status"] == 403
    status, answer = post(server, "/api/new", b"{}", {"Origin": "null"})
    assert status == 403
    port = server.server_address[1]
    for other in (f"http://127.0.0.1:{port + 1}", f"https://127.0.0.1:{port}", f"http://evil.example:{port}"):
        assert post(server, "/api/new", b"{}", {"Origin": other})[0] == 403, other
    # without Origin, a body that is not declared JSON is refused too
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        status, answer = post(server, "/api/new", b"{}", {"Content-Type": kind})
        assert status == 415 and "application/json" in answer["error"], kind
    assert len(server.games.games) == before  # nothing was started
    # the page's own requests: its origin, by either loopback name
    status, game = post(server, "/api/new", b"{}", {"Origin": f"http://127.0.0.1:{port}"})
    assert status == 201
    status, _ = post(server, "/api/new", b"{}", {"Origin": f"http://localhost:{port}"})
    assert status == 201
    body = json.dumps({"seat": 0, "state": game["state"], "move": game["moves"][0]["name"]}).encode()
    move = f"/api/game/{game['game']}/move"
    assert post(server, move, body, evil)[0] == 403
    assert post(server, move, body, {"Content-Type": "text/plain"})[0] == 415
    assert server.games.get(game["game"]).version == game["state"]  # the refused moves changed nothing
    status, moved = post(server, move, body, {"Origin": f"http://127.0.0.1:{port}"})
    assert status == 200 and moved["state"] == game["state"] + 1
    leave = f"/api/game/{game['game']}/leave"
    assert post(server, leave, b'{"seat": 0}', evil)[0] == 403
    assert server.games.get(game["game"]).left is False


# --- bodies too large or malformed ------------------------------------------------------------------


def test_a_body_too_large_is_refused_without_reading_it(make_server) -> None:
    server = make_server()
    key, _ = server.games.new()
    host = host_of(server)
    start = b"x" * 65536  # what a client sends before it reads the answer: the rest never goes
    for path in ("/nothing", f"/api/game/{key}/move", "/api/game/nosuchgame/move", "/api/new"):
        head = f"POST {path} HTTP/1.1\nHost: {host}\nContent-Type: application/json\nContent-Length: 52428800"
        status, headers, answer, closed = exchange(server, head, start)
        assert status == 413 and f"at most {MAX_BODY}" in answer["error"], (path, answer)
        assert headers.get("connection") == "close" and closed, path
    # a foreign Host with a body: the Host is refused, the body too large is not read either
    head = (
        "POST /api/new HTTP/1.1\nHost: evil.example\nContent-Type: application/json\nContent-Length: 52428800"
    )
    status, headers, answer, closed = exchange(server, head, start)
    assert status in (413, 421) and answer["error"] and closed


def test_a_refused_request_with_a_small_body_leaves_the_connection_usable(make_server) -> None:
    server = make_server()
    host = host_of(server)
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        body = b'{"seat": 0}'
        request = (
            f"POST /api/game/nosuchgame/move HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        sock.sendall(request)
        assert read_answer(sock)[0] == 404
        sock.sendall(f"GET /play.js HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        assert read_answer(sock)[0] == 200  # the refused request's body was read, not taken as a request
        head = f"POST /api/new HTTP/1.1\r\nHost: evil.example:80\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode() + body)
        assert read_answer(sock)[0] == 421


def test_a_malformed_content_length_is_a_400(make_server) -> None:
    server = make_server()
    host = host_of(server)
    for length in ("abc", "-5", "5_0", "+5", "1e3", "٣"):
        for method in ("GET /", "POST /api/new"):
            head = (
                f"{method} HTTP/1.1\nHost: {host}\nContent-Type: application/json\nContent-Length: {length}"
            )
            status, _, answer, closed = exchange(server, head.encode("utf-8").decode("latin-1"))
            assert status == 400 and "Content-Length" in answer["error"], (method, length, answer)
            assert closed
    head = f"POST /api/new HTTP/1.1\nHost: {host}\nContent-Type: application/json"
    head += "\nContent-Length: 2\nContent-Length: 3"
    status, _, answer, closed = exchange(server, head, b"{}")
    assert status == 400 and "Content-Length" in answer["error"] and closed
    head = f"POST /api/new HTTP/1.1\nHost: {host}\nContent-Type: application/json\nTransfer-Encoding: chunked"
    status, _, answer, closed = exchange(server, head, b"2\r\n{}\r\n0\r\n\r\n")
    assert status in (400, 411, 501) and "Content-Length" in answer["error"] and closed


# --- numbers and nesting ----------------------------------------------------------------------------


def test_numbers_too_long_and_json_too_deep_are_400s(make_server) -> None:
    server = make_server()
    key, game = server.games.new()
    move = f"/api/game/{key}/move"
    seat = "1" * 5000
    status, answer = post(server, move, f'{{"seat": {seat}, "state": 0, "move": "draw"}}'.encode())
    assert status == 400 and "digits" in answer["error"] and "at most" in answer["error"], answer
    status, answer = post(server, move, f'{{"seat": 0, "state": -{seat}, "move": "draw"}}'.encode())
    assert status == 400 and "digits" in answer["error"]
    deep = '{"seat": ' + "[" * 5000 + "]" * 5000 + "}"
    status, answer = post(server, move, deep.encode())
    assert status == 400 and "nest" in answer["error"] and "at most" in answer["error"], answer
    deep = '{"seat": 0, "x": ' + '{"a": ' * 2000 + "1" + "}" * 2000 + "}"
    status, answer = post(server, move, deep.encode())
    assert status == 400 and "nest" in answer["error"]
    for since in ("%C2%B2", "1" * 5000, "%D9%A3", "1.5", "abc", "-2"):
        status, answer = get(server, f"/api/game/{key}?seat=0&since={since}")
        assert status == 400 and "'since'" in answer["error"] and "at most" in answer["error"], (
            since,
            answer,
        )
    for seat_text in ("%C2%B2", "1" * 5000, "%D9%A3"):
        status, answer = get(server, f"/api/game/{key}?seat={seat_text}")
        assert status == 400 and "'seat'" in answer["error"] and len(answer["error"]) < 300, seat_text
    # what is allowed still works
    status, answer = get(server, f"/api/game/{key}?seat=0&since=0")
    assert status == 200 and [line["n"] for line in answer["log"]] == list(range(1, len(game.log)))
    status, answer = get(server, f"/api/game/{key}?seat=0&since=-1")
    assert status == 200 and answer["log"][0]["n"] == 0
    assert game.version == 0  # the refused requests changed nothing


# --- the Host header --------------------------------------------------------------------------------


def test_only_this_servers_own_host_is_answered(make_server) -> None:
    server = make_server()
    port = server.server_address[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        status, _, _, _ = exchange(server, f"GET /api/nothing HTTP/1.1\nHost: {host}")
        assert status == 404, host  # answered: no such API
    refused = {
        "127.0.0.1:1@evil.com": 400,
        f"127.0.0.1:{port}@evil.com": 400,
        "127.0.0.1:evil.com": 400,
        f"127.0.0.1:{port}:{port}": 400,
        f"127.0.0.1:{port}/x": 400,
        f"127.0.0.1 :{port}": 400,
        "127.0.0.1:": 400,
        f"[::1]x:{port}": 400,
        f"127.0.0.1:{port + 1}": 421,
        "127.0.0.1": 421,  # no port: port 80, not this server's
        f"evil.com:{port}": 421,
        f"127.0.0.1.evil.com:{port}": 421,
        "attacker.example:80": 421,
    }
    for host, expected in refused.items():
        status, _, answer, _ = exchange(server, f"GET / HTTP/1.1\nHost: {host}")
        assert status == expected and "Host" in answer["error"], (host, status, answer)
    status, _, answer, closed = exchange(server, f"GET / HTTP/1.1\nHost: 127.0.0.1:{port}\nHost: evil.com")
    assert status == 400 and "Host" in answer["error"] and closed
    status, _, answer, _ = exchange(server, f"GET / HTTP/1.1\nHost: 127.0.0.1:{port}\nHost: 127.0.0.1:{port}")
    assert status == 400
    status, _, answer, _ = exchange(server, "GET / HTTP/1.1\nX-Nothing: 1")
    assert status == 400 and "Host" in answer["error"]


# --- how many games the server holds ----------------------------------------------------------------


def test_games_being_played_are_never_dropped_for_new_ones(make_server, tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    table = Table(Rules(num_players=3, contracts=(1,)), 0, ["random", "random"], 5, record=record)
    server = make_server(table)
    now = [1000.0]
    server.games.clock = lambda: now[0]
    games = []
    for _ in range(MAX_GAMES):
        status, game = post(server, "/api/new", b"{}")
        assert status == 201
        games.append(game)
    status, answer = post(server, "/api/new", b"{}")
    assert status == 503 and f"{MAX_GAMES} games" in answer["error"], answer
    assert all(get(server, f"/api/game/{g['game']}?seat=0")[0] == 200 for g in games)  # none dropped
    # a game left (finished) makes room: it goes first
    left = games[5]
    status, _ = post(server, f"/api/game/{left['game']}/leave", b'{"seat": 0}')
    assert status == 200
    status, _ = post(server, "/api/new", b"{}")
    assert status == 201
    assert get(server, f"/api/game/{left['game']}?seat=0")[0] == 404
    assert all(get(server, f"/api/game/{g['game']}?seat=0")[0] == 200 for g in games if g is not left)
    # a game nobody has asked about for a long while goes next, its record written
    idle = games[9]
    body = json.dumps({"seat": 0, "state": idle["state"], "move": idle["moves"][0]["name"]}).encode()
    assert post(server, f"/api/game/{idle['game']}/move", body)[0] == 200
    idle_web = server.games.get(idle["game"])
    now[0] += 29 * 60  # within the half hour: every other game is asked about, and stays
    for g in games:
        if g is not left and g is not idle:
            assert get(server, f"/api/game/{g['game']}?seat=0")[0] == 200
    status, answer = post(server, "/api/new", b"{}")
    assert status == 503
    now[0] += 2 * 60  # the idle game has now been left alone for 31 minutes
    status, _ = post(server, "/api/new", b"{}")
    assert status == 201
    assert get(server, f"/api/game/{idle['game']}?seat=0")[0] == 404
    # the left game's record was written as it was left, the idle one's as it was dropped
    assert sorted(path.name for path in tmp_path.iterdir()) == ["game-10.json", "game-6.json"]
    assert replay(load(tmp_path / "game-10.json")).move_count == idle_web.game.move_count
    assert load(tmp_path / "game-10.json")["game_over"] is False
