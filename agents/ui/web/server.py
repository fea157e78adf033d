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

A refused request gets a 4xx status (503 when the server holds as many games as it may and none
can be dropped) and ``{"error": "..."}``, and changes nothing. The server answers only requests
addressed to itself (``Host``: 127.0.0.1 or localhost, at its port) and takes a ``POST`` only as
JSON (``Content-Type: application/json``) and, where the browser names the page it comes from
(``Origin``), only from its own page: a page of another site can neither read nor play.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shanghai_env.agents.ui.web.game import Refused, WebGame
from shanghai_env.agents.ui.web.page import PAGE, PLAY_SCRIPT
from shanghai_env.draw.replay import replay_html, table_script
from shanghai_env.record import save
from shanghai_env.rules import Rules

DEFAULT_PORT = 8765
MAX_BODY = 16_384  # bytes: a move request is a few dozen
MAX_GAMES = 64  # games held at once; a game being played is never dropped for a new one
IDLE_S = 30 * 60  # a game nobody asked about for this long may be dropped (its record saved)
BACKLOG = 256  # connections the system queues for the server; the library's default (5) turns away a burst
MAX_DIGITS = 18  # digits of a number in a request: seats, states and log lines are small
MAX_DEPTH = 8  # JSON nesting of a request body: a request is one flat object
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")

# A Host header: a name (or a bracketed IPv6 address) and an optional port, nothing else.
HOST_RE = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?")
# ASCII digits only: str.isdigit() and int() also take "²" or "٣", which are no request's numbers
INT_RE = re.compile(rf"-?[0-9]{{1,{MAX_DIGITS}}}")
LENGTH_RE = re.compile(r"[0-9]{1,15}")


@dataclass
class Table:
    """What every game of a server plays: the rules, the person's seat, the other players (names
    for :func:`~shanghai_env.agents.registry.make_agent`, clockwise from the person), the seed
    (None: a new one per game), and where records go (None: nowhere)."""

    rules: Rules
    seat: int
    specs: Sequence[str]
    seed: int | None = None
    record: str | Path | None = None


class Games:
    """The server's games by id; builds each with its bots and saves its record when it ends.

    At most ``limit`` games are held. A new game makes room by dropping a finished (or left)
    game, else one nobody has asked about for ``idle`` seconds, the longest unasked first; a
    game being played is never dropped, and while every game is, a new one is refused (503).
    A dropped game's record is saved (with ``--record``) as at the game's end.
    """

    def __init__(self, table: Table, limit: int = MAX_GAMES, idle: float = IDLE_S) -> None:
        self.table, self.limit, self.idle = table, limit, idle
        self.games: dict[str, WebGame] = {}
        self.seen: dict[str, float] = {}  # game id: when it was last asked about (clock())
        self.clock: Callable[[], float] = time.monotonic
        self.lock = threading.Lock()
        self.made = 0  # games started, for the record files' names
        self.building = 0  # games being dealt, whose room is kept for them
        self.saved: dict[str, Path] = {}  # game id: where its record was written

    def new(self) -> tuple[str, WebGame]:
        """A new game and its id; Refused (503) when no game can be dropped to make room."""
        with self.lock:
            dropped = self._make_room()
            self.building += 1  # room kept while the game is dealt and the bots play to the person
        try:
            for key, game in dropped:
                self._save_dropped(key, game)
            key, game = self._build()
        finally:
            with self.lock:
                self.building -= 1
        with self.lock:
            self.games[key] = game
            self.seen[key] = self.clock()
        return key, game

    def _make_room(self) -> list[tuple[str, WebGame]]:
        """Drop games (self.lock held) until a new one fits: finished ones first, then those left
        alone for ``idle`` seconds; the dropped games, for their records."""
        dropped = []
        now = self.clock()
        while len(self.games) + self.building >= self.limit:
            by_age = sorted(self.games, key=lambda k: self.seen[k])
            done = [k for k in by_age if self.games[k].over]
            idle = [k for k in by_age if now - self.seen[k] >= self.idle]
            if not done and not idle:
                minutes = f"{self.idle / 60:g} minutes"
                raise Refused(
                    503,
                    f"the server holds {self.limit} games and every one is being played (none is over "
                    f"and none was left alone for {minutes}): finish or leave one of them, or try again "
                    "later",
                )
            key = (done or idle)[0]
            dropped.append((key, self.games.pop(key)))
            del self.seen[key]
        return dropped

    def _save_dropped(self, key: str, game: WebGame) -> None:
        """Save the record of a game dropped before its end (a finished game's is saved already)."""
        if game.on_over is None or self.table.record is None or key in self.saved:
            return
        with game.lock:
            if game.game.move_count > 0:
                game.on_over(game)
        if key in self.saved:
            print(
                f"an idle game was closed to make room; its record is in {self.saved[key]}", file=sys.stderr
            )

    def _build(self) -> tuple[str, WebGame]:
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
            encoder=encoder,
            on_over=self._saver(key, number),
        )
        return key, game

    def get(self, key: str) -> WebGame:
        """The game ``key`` (Refused 404 when there is none), now counted as asked about."""
        with self.lock:
            game = self.games.get(key)
            if game is not None:
                self.seen[key] = self.clock()
        if game is None:
            shown = key if len(key) <= 40 else key[:40] + "..."
            raise Refused(404, f"no game {shown!r} here: start a new game")
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
            except (OSError, ValueError) as err:  # save() says which file and why
                print(f"could not save the game record: {err}", file=sys.stderr)

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
        if self.close_connection:
            self.send_header("Connection", "close")
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
            size = self._body_size()
            if method == "POST":
                self._check_origin()
                self._check_json()
            else:
                self._skip_body()  # a GET's body means nothing, but must not be read as a request
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
                self._api(method, parts[1:], query, size)
            else:
                raise Refused(404, f"nothing at {url.path[:80]}")
        except Refused as refused:
            self._skip_body()
            self._refuse(refused.status, refused.message)
        except Exception as err:  # a bug, or a bot that failed: say so, keep serving
            self.log_error("%s %s: %s", method, self.path, repr(err))
            self.close_connection = True
            self._refuse(500, f"the server failed: {type(err).__name__}: {err}")

    def _check_host(self) -> None:
        """Answer only requests addressed to this server: one ``Host`` header, exactly a name of
        it and its port. On the loopback address the name must be 127.0.0.1 or localhost: a page
        from elsewhere that reaches the server through a name of its own ('DNS rebinding') is
        refused."""
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1:
            self.close_connection = True  # a request that two hosts may read differently: no more
            raise Refused(400, f"send exactly one Host header (this request has {len(hosts)})")
        host = hosts[0].strip(" \t").lower()
        match = HOST_RE.fullmatch(host)
        if match is None:
            self.close_connection = True
            raise Refused(400, f"malformed Host header {host[:80]!r}: send host or host:port")
        bound, port = self.server.server_address[:2]
        name, given = match["name"], int(match["port"] or 80)
        if given != port or (bound in LOOPBACK and name not in LOOPBACK):
            raise Refused(
                421,
                f"this server answers at 127.0.0.1:{port} or localhost:{port} only, "
                f"not at Host {host[:80]!r}",
            )

    def _check_origin(self) -> None:
        """A request that changes something is taken only from this server's own page: a browser
        names the page a request comes from (``Origin``) and a page of another site is refused."""
        origins = self.headers.get_all("Origin")
        if origins is None:
            return  # not sent by a page (a script, a test); the Host was checked
        own = self._own_origins()
        if len(origins) != 1 or origins[0].strip().lower() not in own:
            shown = ", ".join(repr(o[:80]) for o in origins)
            raise Refused(
                403,
                f"refused: a request from the page at {shown}; this server takes moves only "
                f"from its own page ({sorted(own)[0]})",
            )

    def _own_origins(self) -> set[str]:
        """The origins of this server's own pages: http:// and each name it answers at, with its
        port (a browser leaves port 80 out)."""
        bound, port = self.server.server_address[:2]
        names = set(LOOPBACK) - {"::1"} if bound in LOOPBACK else set()
        host = (self.headers.get("Host") or "").strip(" \t").lower()
        match = HOST_RE.fullmatch(host)
        if match is not None:
            names.add(match["name"])
        suffix = "" if port == 80 else f":{port}"
        return {f"http://{name}{suffix}" for name in names}

    def _check_json(self) -> None:
        """A POST's body is JSON: a page of another site could send a form or text/plain to this
        server without asking the browser first, never application/json."""
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Refused(
                415, f"send the body as JSON with Content-Type: application/json, not {kind or 'none'}"
            )

    def _body_size(self) -> int:
        """The body's length (0: none), from one Content-Length of plain digits; Refused (400,
        411, 413) otherwise, and the connection is closed after the answer (the body is not
        read)."""
        if self.headers.get_all("Transfer-Encoding"):
            self.close_connection = True
            raise Refused(411, "send the body with a Content-Length (no Transfer-Encoding)")
        lengths = self.headers.get_all("Content-Length") or []
        if not lengths:
            return 0
        text = lengths[0].strip(" \t")
        if len(lengths) > 1 or LENGTH_RE.fullmatch(text) is None:
            self.close_connection = True
            shown = ", ".join(repr(v[:20]) for v in lengths)
            raise Refused(400, f"bad Content-Length {shown}: send one, a number of bytes")
        size = int(text)
        if size > MAX_BODY:
            self.close_connection = True
            raise Refused(413, f"the body is {size} bytes; at most {MAX_BODY}")
        return size

    def _skip_body(self) -> None:
        """Read the body and throw it away (so that the connection may carry the next request);
        a body too large or of an unknown length is not read, and the connection closes."""
        if self._body_read:
            return
        self._body_read = True
        try:
            size = self._body_size()
        except Refused:
            self.close_connection = True
            return
        if size:
            self.rfile.read(size)

    def _read_body(self, size: int) -> dict[str, Any]:
        """The request's JSON object (``size`` bytes, checked); Refused (400, 411) when it is
        missing or malformed."""
        if size == 0 and self.headers.get("Content-Length") is None:
            raise Refused(411, "send a JSON body with a Content-Length")
        self._body_read = True
        raw = self.rfile.read(size)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise Refused(400, f"the body is not JSON: {err}") from None
        depth = _nesting(text)
        if depth > MAX_DEPTH:
            raise Refused(
                400, f"the body nests {depth} deep; at most {MAX_DEPTH} (a request is one flat JSON object)"
            )
        try:
            data = json.loads(text, parse_int=_json_int)
        except json.JSONDecodeError as err:
            raise Refused(400, f"the body is not JSON: {err}") from None
        except RecursionError:  # not reached past the nesting check; kept as a refusal all the same
            raise Refused(400, f"the body nests too deep; at most {MAX_DEPTH}") from None
        if not isinstance(data, dict):
            raise Refused(400, f"the body must be a JSON object, got {type(data).__name__}")
        return data

    def _api(self, method: str, parts: list[str], query: dict[str, list[str]], size: int) -> None:
        games = self.server.games
        if parts == ["new"]:
            if method != "POST":
                raise Refused(405, "POST /api/new starts a game")
            if size:
                self._read_body(size)  # anything sent must be JSON; nothing in it is needed
            self._body_read = True
            key, game = games.new()
            with game.lock:
                self._send_json(201, {"game": key, **game.state()})
            return
        if len(parts) < 2 or parts[0] != "game":
            raise Refused(404, f"no such API: /api/{'/'.join(parts)[:80]}")
        game = games.get(parts[1])
        action = parts[2] if len(parts) > 2 else ""
        if len(parts) > 3:
            raise Refused(404, f"no such API: /api/{'/'.join(parts)[:80]}")
        if method == "GET":
            self._get(game, parts[1], action, query)
            return
        if action not in ("move", "leave"):
            raise Refused(
                404 if action not in ("", "record", "replay") else 405, f"cannot POST {self.path[:80]}"
            )
        body = self._read_body(size)
        with game.lock:
            if action == "move":
                game.play(body.get("seat"), body.get("state"), body.get("move"))
            else:
                game.leave(body.get("seat"), body.get("state"))
            self._send_json(200, {"game": parts[1], **game.state(body.get("since"))})

    def _get(self, game: WebGame, key: str, action: str, query: dict[str, list[str]]) -> None:
        seat = _query_int(query, "seat", 0, "your seat number")
        if seat is None:
            raise Refused(400, "give your seat: ?seat=S")
        since = _query_int(query, "since", -1, "the number of the last line of the game's story you have")
        with game.lock:
            game.check(seat)
            if action == "":
                self._send_json(200, {"game": key, **game.state(since)})
                return
            if action not in ("record", "replay"):
                raise Refused(404, f"no such API: {action[:80]!r}")
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


def _json_int(text: str) -> int:
    """A JSON integer of a request body, refused when too long (Python would not read one of
    more than 4300 digits at all; no request needs more than a few)."""
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise Refused(400, f"a number in the body has {digits} digits; at most {MAX_DIGITS} are allowed")
    return int(text)


def _nesting(text: str) -> int:
    """How deep the JSON ``text`` nests (brackets inside strings left out): checked before it is
    read, which would otherwise recurse once per level."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _query_int(query: dict[str, list[str]], name: str, low: int, what: str) -> int | None:
    """The whole number ``?name=`` of the address (None when absent); Refused (400) when it is
    given twice, is not ASCII digits, is too long or is below ``low``."""
    values = query.get(name)
    if not values:
        return None
    if len(values) == 1 and INT_RE.fullmatch(values[0]) and int(values[0]) >= low:
        return int(values[0])
    shown = ", ".join(repr(v if len(v) <= 20 else v[:20] + "...") for v in values)
    raise Refused(
        400,
        f"'{name}' must be {what}: one whole number, {low} or more, at most {MAX_DIGITS} digits; got {shown}",
    )


class GameServer(ThreadingHTTPServer):
    """A threading HTTP server holding :class:`Games` (each game locks itself per request)."""

    daemon_threads = True
    request_queue_size = BACKLOG

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
