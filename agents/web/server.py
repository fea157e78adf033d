"""The browser game's server: the standard library's ``http.server``, a JSON API and one page.

``shanghai-play --web`` (:func:`web_main`) checks the table as the terminal game does, starts
the server on 127.0.0.1 and opens the page. Every page load starts a game of its own (a game id
per page: several games at once are independent); the server holds the games, the page gets
each state as the person's seat sees it (:meth:`WebGame.state`).

======================================  ========================================================
``GET /``                                the page (``/table.js`` draws the table, ``/play.js``
                                         plays)
``POST /api/new``                        a new game: its state, with ``game`` (its id)
``GET /api/game/ID?seat=S``              the game's state as seat S sees it
``POST /api/game/ID/move``               ``{"seat": S, "state": N, "move": "discard 7H"}``: play
                                         a move (``next`` deals on after a deal's end)
``POST /api/game/ID/leave``              ``{"seat": S}``: leave the game
``GET /api/game/ID/record?seat=S``       the game record (JSON), once the game is over or left
``GET /api/game/ID/replay?seat=S``       the HTML replay of that record
======================================  ========================================================

A refused request gets a 4xx status and ``{"error": "..."}``, and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import threading
import webbrowser
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shanghai_env.agents.web.game import Refused, WebGame
from shanghai_env.agents.web.page import PAGE, PLAY_SCRIPT
from shanghai_env.draw.replay import replay_html, table_script
from shanghai_env.engine import DEFAULT_MAX_MOVES_PER_DEAL
from shanghai_env.record import save
from shanghai_env.rules import Rules

DEFAULT_PORT = 8765
MAX_BODY = 16_384  # bytes: a move request is a few dozen
MAX_GAMES = 64  # games kept at once; the oldest goes first
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass
class Table:
    """What every game of a server plays: the rules, the person's seat, the other players (names
    for :func:`~shanghai_env.agents.registry.make_agent`, clockwise from the person), the seed
    (None: a new one per game), the move cap per deal, and where records go (None: nowhere)."""

    rules: Rules
    seat: int
    specs: Sequence[str]
    seed: int | None = None
    max_moves: int = DEFAULT_MAX_MOVES_PER_DEAL
    record: str | Path | None = None


class Games:
    """The server's games by id; builds each with its bots and saves its record when it ends."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.games: dict[str, WebGame] = {}
        self.lock = threading.Lock()
        self.made = 0  # games started, for the record files' names
        self.saved: dict[str, Path] = {}  # game id: where its record was written

    def new(self) -> tuple[str, WebGame]:
        from shanghai_env.agents.registry import make_agent

        t = self.table
        n = t.rules.num_players
        seed = t.seed if t.seed is not None else secrets.randbelow(2**31)
        seats = [(t.seat + k) % n for k in range(1, n)]
        bots = {p: make_agent(spec, seed + 1 + p) for p, spec in zip(seats, t.specs)}
        encoder = None
        if any(getattr(b, "needs_observation", False) for b in bots.values()):
            from shanghai_env.observation import ObservationEncoder

            encoder = ObservationEncoder(t.rules)
        with self.lock:
            self.made += 1
            number = self.made
            key = secrets.token_urlsafe(12)  # unguessable: a page reaches only its own game
        game = WebGame(
            t.rules,
            t.seat,
            bots,
            seed,
            max_moves=t.max_moves,
            encoder=encoder,
            on_over=self._saver(key, number),
        )
        with self.lock:
            while len(self.games) >= MAX_GAMES:
                self.games.pop(next(iter(self.games)))
            self.games[key] = game
        return key, game

    def get(self, key: str) -> WebGame:
        with self.lock:
            game = self.games.get(key)
        if game is None:
            raise Refused(404, f"no game {key!r} here: start a new game")
        return game

    def _saver(self, key: str, number: int) -> Callable[[WebGame], None]:
        def save_record(game: WebGame) -> None:
            if self.table.record is None or key in self.saved:
                return
            path = Path(self.table.record)
            if number > 1:  # the first game is saved under the name given, the next ones beside it
                path = path.with_name(f"{path.stem}-{number}{path.suffix}")
            try:
                self.saved[key] = save(game.record(), path)
            except OSError as err:
                print(f"could not save the game record to {path}: {err.strerror}", file=sys.stderr)

        return save_record

    def save_unfinished(self) -> None:
        """Save the record of every game that was played but not ended (when the server stops)."""
        with self.lock:
            games = list(self.games.items())
        for key, game in games:
            if not game.over and game.game.move_count > 0 and game.on_over is not None:
                game.on_over(game)
            if key in self.saved:
                print(f"game record saved to {self.saved[key]}", file=sys.stderr)


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Handler(BaseHTTPRequestHandler):
    """One request; the games are the server's (:attr:`server.games`)."""

    server: GameServer
    server_version = "shanghai-env"
    protocol_version = "HTTP/1.1"

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # one line per request would drown the address printed at the start

    # --- answers ---

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, data: Any) -> None:
        self._send(status, _json(data), "application/json; charset=utf-8")

    def _refuse(self, status: int, message: str) -> None:
        self._send_json(status, {"error": message, "status": status})

    # --- routing ---

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        self._body_read = False  # one connection may carry several requests
        try:
            self._check_host()
            url = urlsplit(self.path)
            parts = [p for p in url.path.split("/") if p]
            query = parse_qs(url.query)
            if method == "GET" and not parts:
                self._send(200, PAGE.encode("utf-8"), "text/html; charset=utf-8")
            elif method == "GET" and parts == ["table.js"]:
                self._send(200, table_script().encode("utf-8"), "text/javascript; charset=utf-8")
            elif method == "GET" and parts == ["play.js"]:
                self._send(200, PLAY_SCRIPT.encode("utf-8"), "text/javascript; charset=utf-8")
            elif method == "GET" and parts == ["favicon.ico"]:
                self._send(204, b"", "image/x-icon")
            elif parts[:1] == ["api"]:
                self._api(method, parts[1:], query)
            else:
                raise Refused(404, f"nothing at {url.path}")
        except Refused as refused:
            self._read_body(discard=True)
            self._refuse(refused.status, refused.message)
        except Exception as err:  # a bug, or a bot that failed: say so, keep serving
            self.log_error("%s %s: %s", method, self.path, repr(err))
            self.close_connection = True
            self._refuse(500, f"the server failed: {type(err).__name__}: {err}")

    def _check_host(self) -> None:
        """On the loopback address, answer only pages of this machine (a page from elsewhere that
        reaches it through its own name, 'DNS rebinding', is refused)."""
        bound = self.server.server_address[0]
        if bound not in LOOPBACK:
            return
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name not in LOOPBACK:
            raise Refused(403, f"this server answers only at 127.0.0.1 or localhost, not {host!r}")

    def _read_body(self, discard: bool = False) -> Any:
        """The request's JSON object; Refused (400, 411, 413) when it is missing or malformed."""
        if getattr(self, "_body_read", False):
            return None
        self._body_read = True
        length = self.headers.get("Content-Length")
        if length is None:
            if discard:
                return None
            raise Refused(411, "send a JSON body with a Content-Length")
        try:
            size = int(length)
        except ValueError:
            self.close_connection = True
            raise Refused(400, f"bad Content-Length {length!r}") from None
        if size < 0 or size > MAX_BODY:
            self.close_connection = True
            raise Refused(413, f"the body is {size} bytes; at most {MAX_BODY}")
        raw = self.rfile.read(size)
        if discard:
            return None
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise Refused(400, f"the body is not JSON: {err}") from None
        if not isinstance(data, dict):
            raise Refused(400, f"the body must be a JSON object, got {type(data).__name__}")
        return data

    def _api(self, method: str, parts: list[str], query: dict[str, list[str]]) -> None:
        games = self.server.games
        if parts == ["new"]:
            if method != "POST":
                raise Refused(405, "POST /api/new starts a game")
            self._read_body(discard=True)
            key, game = games.new()
            with game.lock:
                self._send_json(201, {"game": key, **game.state()})
            return
        if len(parts) < 2 or parts[0] != "game":
            raise Refused(404, f"no such API: /api/{'/'.join(parts)}")
        game = games.get(parts[1])
        action = parts[2] if len(parts) > 2 else ""
        if len(parts) > 3:
            raise Refused(404, f"no such API: /api/{'/'.join(parts)}")
        if method == "GET":
            self._get(game, parts[1], action, query)
            return
        body = self._read_body()
        with game.lock:
            if action == "move":
                game.play(body.get("seat"), body.get("state"), body.get("move"))
            elif action == "leave":
                game.leave(body.get("seat"), body.get("state"))
            else:
                raise Refused(
                    404 if action not in ("", "record", "replay") else 405, f"cannot POST {self.path}"
                )
            self._send_json(200, {"game": parts[1], **game.state(body.get("since"))})

    def _get(self, game: WebGame, key: str, action: str, query: dict[str, list[str]]) -> None:
        seats = query.get("seat", [])
        try:
            seat: object = int(seats[0]) if len(seats) == 1 else None
        except ValueError:
            seat = seats[0]
        if seat is None:
            raise Refused(400, "give your seat: ?seat=S")
        with game.lock:
            game.check(seat)
            if action == "":
                since = query.get("since", [""])[0]
                self._send_json(200, {"game": key, **game.state(int(since) if since.isdigit() else None)})
                return
            if action not in ("record", "replay"):
                raise Refused(404, f"no such API: {action!r}")
            if not game.over:
                # a record holds the seed, and so every card: not while the game is on
                raise Refused(409, "the record is given once the game is over (or you left it)")
            record = game.record()
        if action == "record":
            body = json.dumps(record, indent=1).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Disposition", 'attachment; filename="shanghai-game.json"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self._send(200, replay_html(record).encode("utf-8"), "text/html; charset=utf-8")


class GameServer(ThreadingHTTPServer):
    """A threading HTTP server holding :class:`Games` (each game locks itself per request)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], games: Games) -> None:
        self.games = games
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = "127.0.0.1" if host in ("", "0.0.0.0") else str(host)
        return f"http://{shown}:{port}/"


def start_server(table: Table, host: str = "127.0.0.1", port: int = 0) -> GameServer:
    """A server for ``table`` listening on ``host:port`` (0: any free port); call
    ``serve_forever()`` on it (or run that in a thread) and ``shutdown()`` to stop."""
    return GameServer((host, port), Games(table))


def web_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``shanghai-play --web``: check the table, start the server, open the page, serve until
    Ctrl-C."""
    from shanghai_env.agents.play import check_table

    for option, given in (("--delay", args.delay != 0.0), ("--no-menu", args.no_menu)):
        if given:
            parser.error(f"{option} is for the terminal game, not --web")
    setup = check_table(parser, args, default_bot="shanghai_4p")
    table = Table(setup.rules, setup.seat, setup.specs, args.seed, args.max_moves, args.record)
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        server = start_server(table, "127.0.0.1", port)
    except OSError as err:
        parser.error(f"argument --port: cannot listen on 127.0.0.1:{port} ({err.strerror}); try --port 0")
    print(f"Shanghai Rummy in your browser: {server.url}  (Ctrl-C stops the server)", flush=True)
    if not args.no_browser:
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
    finally:
        server.server_close()
        server.games.save_unfinished()
    return 0
