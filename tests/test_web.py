"""The browser game's server (``shanghai-play --web``), through its HTTP API: whole games, what
the page may see, refused requests, several games at once, the saved record."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import processes
import pytest

from shanghai_env.actions import action_table
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.ui.cli import main as play_main
from shanghai_env.agents.ui.web import GameServer, Table, WebGame, start_server
from shanghai_env.agents.ui.web.game import HIDDEN
from shanghai_env.cards import card_to_str, cards_of, sort_key_by_rank, str_to_card
from shanghai_env.decision import decision_for
from shanghai_env.draw.state import hand_text, table_state
from shanghai_env.engine import Game
from shanghai_env.record import load, replay
from shanghai_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"game", "seat", "state", "phase", "left", "header", "table", "prompt", "moves", "next", "known"}
KEYS |= {"results", "scores", "winners", "log", "drawn", "status", "hint"}


class Client:
    """Requests to one server, answers as (status, JSON or text)."""

    def __init__(self, server: GameServer) -> None:
        self.server = server
        self.base = server.url.rstrip("/")
        self.bodies: list[str] = []  # every body received, to search for hidden cards

    def raw(
        self, method: str, path: str, data: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        if data is not None and headers is None:
            headers = {"Content-Type": "application/json"}  # what the server takes a body as
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, body = answer.status, answer.read().decode("utf-8")
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read().decode("utf-8")
        self.bodies.append(body)
        return status, body

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        status, text = self.raw(method, path, data, {"Content-Type": "application/json"})
        return status, json.loads(text)

    def new(self) -> dict[str, Any]:
        status, data = self.call("POST", "/api/new", {})
        assert status == 201, data
        return data

    def move(self, game: str, seat: Any, state: Any, name: Any) -> tuple[int, Any]:
        return self.call("POST", f"/api/game/{game}/move", {"seat": seat, "state": state, "move": name})

    def get(self, game: str, seat: int) -> dict[str, Any]:
        status, data = self.call("GET", f"/api/game/{game}?seat={seat}")
        assert status == 200, data
        return data


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[GameServer] = []

    def start(table: Table) -> Client:
        server = start_server(table, "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return Client(server)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def engine_of(client: Client, key: str) -> WebGame:
    return client.server.games.get(key)


def greedy_choice(web: WebGame, bot: GreedyBot) -> str:
    """The move a greedy player in the person's seat would make, by its engine name."""
    table = action_table(web.game.rules)
    return table.decode(bot.act(decision_for(web.game, web.seat, table))).name


def check_seat_view(data: dict[str, Any], web: WebGame, body: str) -> None:
    """The state sent is exactly the person's view: their hand, sizes of the others, the table,
    the upcard; no other hand and no card of the stock is in the body."""
    game, seat = web.game, web.seat
    n = game.num_players
    if data["phase"] == "END":
        return  # every hand is shown as a deal ends (checked in its own test)
    expected = table_state(game)
    if data["phase"] != "GAME_OVER":
        expected["hands"] = [
            hand_text(game.hands[p]) if p == seat else " ".join([HIDDEN] * game.hand_sizes[p])
            for p in range(n)
        ]
        assert data["table"] == expected
        legal = sorted(m.name for m in game.legal_moves()) if game.to_act == seat else []
        assert sorted(m["name"] for m in data["moves"]) == legal
        # the face-up cards every player took and holds, the person's own too: everybody saw them
        known = [
            [card_to_str(c) for c in sorted(cards_of(game.picked_up[p]), key=sort_key_by_rank)]
            for p in range(n)
        ]
        assert data["known"] == known
        assert set(data) == KEYS  # nothing more than the page needs
        # no other hand and no stretch of the stock, in any order the engine keeps them, in the body
        tokens = " ".join(re.findall(r"(?<![A-Za-z0-9])(JK|[A2-9TJQK][CDHS])(?![A-Za-z0-9])", body))
        for p in range(n):
            hidden = [card_to_str(c) for c in cards_of(game.hands[p])]
            if p != seat and len(hidden) >= 4:
                for order in (hand_text(game.hands[p]), " ".join(hidden)):
                    assert order not in tokens
        stock = [card_to_str(c) for c in game.stock]
        for k in range(0, len(stock) - 5):
            run = stock[k : k + 6]
            assert " ".join(run) not in tokens and " ".join(reversed(run)) not in tokens
    else:
        assert data["table"] == expected  # the game is over: every hand shown, as the replay does


def play_out(client: Client, data: dict[str, Any], check: bool = True) -> dict[str, Any]:
    """Play the person's seat greedily through the API to the game's end; check every answer."""
    key = data["game"]
    web = engine_of(client, key)
    bot = GreedyBot()
    bot.reset(0)
    lines = [line["text"] for line in data["log"]]
    for _ in range(3000):
        if data["phase"] == "GAME_OVER":
            data["every_line"] = lines  # the story as the page put it together
            return data
        if check:
            check_seat_view(data, web, client.bodies[-1])
        name = "next" if data["next"] else greedy_choice(web, bot)
        assert name == "next" or name in [m["name"] for m in data["moves"]]
        body = {"seat": web.seat, "state": data["state"], "move": name, "since": len(lines) - 1}
        status, data = client.call("POST", f"/api/game/{key}/move", body)
        assert status == 200, data
        assert [line["n"] for line in data["log"]] == list(range(len(lines), len(lines) + len(data["log"])))
        lines += [line["text"] for line in data["log"]]
    raise AssertionError("the game did not end")


def test_a_whole_game_through_the_api_never_shows_a_hidden_card(serve, tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    client = serve(
        Table(Rules(num_players=4, contracts=(1, 2)), 1, ["greedy", "planner", "random"], 7, record=record)
    )
    data = client.new()
    assert data["seat"] == 1 and data["header"]["names"][1] == "you"
    final = play_out(client, data)
    web = engine_of(client, data["game"])
    check_seat_view(final, web, client.bodies[-1])
    assert final["scores"] == web.game.scores and final["winners"] == web.game.winners()
    assert [r["scores"] for r in final["results"]] == [list(r.scores) for r in web.game.deal_results]
    # every move anyone made is said in words, one line each
    assert final["every_line"] == [line["text"] for line in web.log]
    said = [line for line in web.log if line["kind"] == "move"]
    assert len(said) == len(web.moves.flat())
    assert all(line["text"].startswith("player 1 (you) ") == (line["who"] == 1) for line in said)
    # the record was saved when the game ended and replays to the same scores
    assert replay(load(record)).scores == final["scores"]
    status, got = client.call("GET", f"/api/game/{data['game']}/record?seat=1")
    assert status == 200 and got == load(record)
    status, page = client.raw("GET", f"/api/game/{data['game']}/replay?seat=1")
    assert status == 200 and page.startswith("<!DOCTYPE html>") and "replay-data" in page


def test_a_deal_end_waits_for_the_person_and_shows_every_hand(serve) -> None:
    client = serve(Table(Rules(num_players=3, contracts=(1, 1)), 0, ["greedy", "greedy"], 3))
    data = client.new()
    key = data["game"]
    web = engine_of(client, key)
    bot = GreedyBot()
    bot.reset(0)
    while data["phase"] != "END":
        data = client.move(key, 0, data["state"], greedy_choice(web, bot))[1]
    result = web.game.deal_results[0]
    assert data["table"]["result"]["scores"] == list(result.scores) and data["next"] and data["moves"] == []
    assert data["table"]["phase"] == "END" and HIDDEN not in json.dumps(data["table"])
    # the scores a hand of cards gives are the cards shown
    assert sum(1 for h in data["table"]["hands"] if h) >= 2
    status, refused = client.move(key, 0, data["state"], "take")
    assert status == 400 and "'next'" in refused["error"]
    status, data = client.move(key, 0, data["state"], "next")
    assert status == 200 and data["phase"] != "END" and data["table"]["deal"] == 1
    status, refused = client.move(key, 0, data["state"], "next")
    assert status == 400 and "still on" in refused["error"]


def test_the_page_is_told_what_was_drawn_and_why_only_a_discard_is_offered(serve) -> None:
    client = serve(Table(Rules(num_players=3, contracts=(1, 1)), 0, ["greedy", "greedy"], 21))
    data = client.new()
    key = data["game"]
    web = engine_of(client, key)
    bot = GreedyBot()
    bot.reset(0)
    seen: set[str] = set()
    for _ in range(600):
        if data["phase"] == "GAME_OVER":
            break
        name = "next" if data["next"] else greedy_choice(web, bot)
        kind = name.split()[0]
        before = list(web.game.hands[0])
        data = client.move(key, 0, data["state"], name)[1]
        if data["phase"] in ("END", "GAME_OVER"):
            assert data["drawn"] == [] and data["status"] is None and data["hint"] == ""
            continue
        got = [c for c in range(len(before)) for _ in range(max(0, web.game.hands[0][c] - before[c]))]
        got_text = sorted(card_to_str(c) for c in got)
        if kind in ("take", "draw"):
            # the card drawn (the upcard taken, or the stock's card after the others' answers)
            assert len(got) == 1 and sorted(data["drawn"]) == got_text, (name, data["drawn"], got_text)
            seen.add(kind)
        elif kind == "buy":
            assert len(got) >= 1 and sorted(data["drawn"]) == got_text
            seen.add(kind)
        elif kind == "discard":
            assert data["drawn"] == []  # the turn is over
        elif kind in ("meld", "layoff", "swap"):
            assert all(web.game.hands[0][str_to_card(c)] for c in data["drawn"])  # still held
        if web.game.phase.name == "PLAY" and web.game.to_act == 0 and web.game.view(0).went_down_this_turn:
            # just gone down: laying off waits for the next turn, and the page says so
            assert all(m["kind"] == "discard" for m in data["moves"])
            assert data["hint"] == "You went down this turn: laying off and swapping wait for your next turn."
            assert data["hint"] in data["prompt"] and "went down this turn" in data["status"]
            seen.add("down")
        else:
            assert data["status"] is None
        if data["known"][0]:
            seen.add("known")  # the person's own face-up pickups are listed with everybody's
    assert {"take", "draw", "down", "known"} <= seen, seen


def test_leaving_says_so_on_the_table(serve) -> None:
    client = serve(Table(Rules(num_players=3, contracts=(1,)), 0, ["greedy", "greedy"], 2))
    data = client.new()
    key = data["game"]
    web = engine_of(client, key)
    bot = GreedyBot()
    bot.reset(0)
    while data["phase"] != "BUY":  # an offer of the upcard: the table says who may buy it
        data = client.move(key, 0, data["state"], greedy_choice(web, bot))[1]
    assert data["status"] is None and data["table"]["phase"] == "BUY"  # the drawing says who may buy
    status, left = client.call("POST", f"/api/game/{key}/leave", {"seat": 0})
    assert status == 200 and left["left"] and left["prompt"] == "You left the game."
    assert "left the game" in left["status"] and left["moves"] == [] and left["drawn"] == []


def test_bad_requests_are_refused_and_change_nothing(serve) -> None:
    client = serve(Table(Rules(num_players=3, contracts=(1,)), 0, ["random", "random"], 11))
    data = client.new()
    key, state = data["game"], data["state"]
    web = engine_of(client, key)
    moves_before = web.game.move_count
    legal = data["moves"][0]["name"]
    bad: list[tuple[int, str, Any]] = [
        (400, "is not legal now", {"seat": 0, "state": state, "move": "discard 7H"}),
        (400, "unknown move", {"seat": 0, "state": state, "move": "fly away"}),
        (400, "cannot read move", {"seat": 0, "state": state, "move": "discard 1Z"}),
        (400, "'move' must be", {"seat": 0, "state": state, "move": 7}),
        (409, "stale move", {"seat": 0, "state": state - 1, "move": legal}),
        (409, "stale move", {"seat": 0, "state": "0", "move": legal}),
        (400, "'state' is missing", {"seat": 0, "move": legal}),
        (403, "plays seat 0, not seat 2", {"seat": 2, "state": state, "move": legal}),
        (400, "'seat' must be", {"seat": "0", "state": state, "move": legal}),
        (400, "'seat' must be", {"seat": True, "state": state, "move": legal}),
    ]
    for status, words, body in bad:
        got, answer = client.call("POST", f"/api/game/{key}/move", body)
        assert (got, words in answer["error"]) == (status, True), (body, answer)
    for raw, words in ((b"{not json", "not JSON"), (b"[1, 2]", "JSON object"), (b"\xff\xfe", "not JSON")):
        status, text = client.raw("POST", f"/api/game/{key}/move", raw)
        assert status == 400 and words in json.loads(text)["error"]
    status, text = client.raw("POST", f"/api/game/{key}/move", b"x" * 20_000)
    assert status == 413
    status, answer = client.call("POST", "/api/game/nosuchgame/move", {"seat": 0, "state": 0, "move": legal})
    assert status == 404 and "no game" in answer["error"]
    assert client.call("GET", f"/api/game/{key}?seat=1")[0] == 403
    assert client.call("GET", f"/api/game/{key}")[0] == 400
    status, answer = client.call("GET", f"/api/game/{key}/record?seat=0")
    assert status == 409 and "once the game is over" in answer["error"]  # the seed would tell every card
    assert client.call("GET", "/api/nothing")[0] == 404
    assert client.raw("GET", "/nothing.html")[0] == 404
    status, text = client.raw("GET", "/", headers={"Host": "attacker.example:80"})
    assert status == 421  # a page of another site reaching this server through its own name
    assert web.game.move_count == moves_before and web.version == state
    assert client.get(key, 0) == data
    # and the game goes on from there
    status, after = client.move(key, 0, state, legal)
    assert status == 200 and after["state"] == state + 1


def test_several_games_at_once_are_independent(serve) -> None:
    client = serve(Table(Rules(num_players=3, contracts=(1,)), 2, ["greedy", "greedy"], 5))
    first, second = client.new(), client.new()
    assert first["game"] != second["game"]
    assert first["table"] == second["table"]  # the same seed deals the same cards
    name = first["moves"][0]["name"]
    status, moved = client.move(first["game"], 2, first["state"], name)
    assert status == 200
    assert client.get(second["game"], 2) == second
    # a state counter of one game means nothing in the other
    status, _ = client.move(second["game"], 2, moved["state"], name)
    assert status == 409
    status, left = client.call("POST", f"/api/game/{second['game']}/leave", {"seat": 2})
    assert status == 200 and left["left"] and left["moves"] == []
    assert client.move(second["game"], 2, left["state"], name)[0] == 409
    assert client.get(first["game"], 2)["left"] is False
    status, record = client.call("GET", f"/api/game/{second['game']}/record?seat=2")
    assert status == 200 and replay(record).move_count == engine_of(client, second["game"]).game.move_count


class _Answers:
    """A bot that answers ``answer(decision)``."""

    def __init__(self, name: str, answer: Any) -> None:
        self.name, self.answer = name, answer

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, decision: Any) -> Any:
        return self.answer(decision)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda d: next(a for a in range(d.table.size) if a not in d.legal_actions), "chose illegal action"),
        (lambda d: "x", "returned 'x'"),
    ],
    ids=["illegal", "not-an-id"],
)
def test_a_bots_bad_answer_is_a_value_error_naming_it_and_plays_nothing(answer: Any, message: str) -> None:
    """The web game checks a bot's answer as every other site does (decision.apply_action)."""
    rules = Rules(num_players=3, contracts=(1,))
    game = Game(rules)
    game.reset(7)
    seat = (game.to_act + 1) % 3  # a bot acts first
    bots = {p: _Answers("cheat", answer) for p in range(3) if p != seat}
    with pytest.raises(ValueError, match=rf"^cheat in seat {game.to_act} {message}"):
        WebGame(rules, seat, bots, 7)


def test_the_page_and_the_table_drawing_are_served(serve) -> None:
    client = serve(Table(Rules(num_players=3, contracts=(1,)), 0, ["random", "random"], 1))
    status, page = client.raw("GET", "/")
    assert status == 200 and '<script src="/table.js">' in page and '<script src="/play.js">' in page
    status, script = client.raw("GET", "/table.js")
    drawing = (ROOT / "shanghai_env" / "draw" / "table.js").read_text(encoding="utf-8")
    assert status == 200 and script == drawing  # the replay's own drawing
    status, script = client.raw("GET", "/play.js")
    assert status == 200 and "tableScene(" in script


def test_the_command_line_refuses_bad_web_options(capsys) -> None:
    for argv, words in (
        (["--web", "--port", "70000"], "--port"),
        (["--port", "8000"], "add --web"),
        (["--no-browser"], "add --web"),
        (["--web", "--delay", "1"], "--delay is for the terminal game"),
        (["--web", "--no-menu"], "--no-menu is for the terminal game"),
        (["--web", "--bot", "nosuchbot"], "unknown player"),
        (["--web", "--players", "9"], "3 to 8"),
        (["--web", "--port", "0", "--port", "1"], "given twice"),
    ):
        with pytest.raises(SystemExit) as stop:
            play_main(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert words in err[-1], (argv, err)


def test_shanghai_play_web_serves_until_interrupted(tmp_path: Path) -> None:
    record = tmp_path / "left.json"
    args = ["--web", "--port", "0", "--no-browser", "--players", "3", "--contracts", "1", "--bot", "random"]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "shanghai_env.agents.ui.cli",
            *args,
            "--seed",
            "4",
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # PYTHONFAULTHANDLER: a server that does not stop prints where each of its threads is
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"},
        cwd=tmp_path,
        preexec_fn=processes.default_ctrl_c,  # a test run started in the background ignores SIGINT
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0), timeout=30) as answer:
            assert b"Shanghai Rummy" in answer.read()
        json_body = {"Content-Type": "application/json"}
        request = urllib.request.Request(
            url.group(0) + "api/new", data=b"{}", method="POST", headers=json_body
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            game = json.loads(answer.read())
        body = json.dumps({"seat": 0, "state": game["state"], "move": game["moves"][0]["name"]}).encode()
        request = urllib.request.Request(
            url.group(0) + f"api/game/{game['game']}/move", data=body, method="POST", headers=json_body
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            assert answer.status == 200
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # the fault handler's traceback of every thread
            _, err = process.communicate(timeout=30)
            pytest.fail(f"the server did not stop on Ctrl-C within 60 s:\n{err[-4000:]}")
    assert process.returncode == 0, err
    assert "game record saved to" in err  # the unfinished game, as far as it went
    assert load(record)["game_over"] is False and replay(load(record)).move_count >= 1


def test_the_rules_move_cap_ends_a_deal_and_is_said_and_recorded() -> None:
    """The web game has no cap of its own: the rules' ``max_moves_per_deal`` ends a deal (nobody
    out), the log says so, and the record replays to the same scores."""
    rules = Rules(num_players=3, contracts=(1, 2), max_moves_per_deal=2)
    game = Game(rules)
    game.reset(7)
    seat = (game.to_act + 2) % 3  # the two moves of the first bot's turn reach the cap
    web = WebGame(rules, seat, {p: GreedyBot() for p in range(3) if p != seat}, 7)
    assert [r.capped for r in web.game.deal_results] == [True]
    assert web.game.move_count == 2
    assert any(entry["text"] == "Move limit (2) reached: the deal ends." for entry in web.log)
    assert replay(web.record()).scores == web.game.scores
