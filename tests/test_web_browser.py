"""The browser game in a real browser: headless Chromium (through Playwright) plays a whole deal
by clicking, and what the page shows is compared with the engine at every decision.

Skipped where Playwright (the ``dev`` extra) or Chromium (Debian's ``chromium`` package, which
.ci/run installs) is missing.
"""

from __future__ import annotations

import re
import shutil
import threading
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from shanghai_env.actions import action_table
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.web import GameServer, Table, WebGame, start_server
from shanghai_env.decision import decision_for
from shanghai_env.draw.scene import WIDTH, table_scene
from shanghai_env.draw.state import hand_text
from shanghai_env.draw.svg import scene_svg
from shanghai_env.rules import Rules

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the dev extra)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except sync_api.Error as err:  # a Chromium that cannot start here: nothing to test with
            pytest.skip(f"Chromium does not start: {str(err).splitlines()[0]}")
        yield chromium
        chromium.close()


@pytest.fixture
def server() -> Iterator[GameServer]:
    table = Table(Rules(num_players=3, contracts=(1,)), 0, ["greedy", "greedy"], seed=12)
    running = start_server(table, "127.0.0.1", 0)
    threading.Thread(target=running.serve_forever, daemon=True).start()
    yield running
    running.shutdown()
    running.server_close()


def python_texts(web: WebGame) -> list[str]:
    """The texts Python's drawing (shanghai_env.draw.scene) puts on the person's table."""
    state = web.state()
    svg = scene_svg(table_scene(state["table"], state["header"], web.seat), WIDTH, 100)
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def wait_settled(page: Any, before: str | None = None) -> str:
    """Wait until the page shows a new state (not ``before``) and no request is on its way."""
    page.wait_for_function(
        "([before]) => document.body.dataset.state !== undefined && document.body.dataset.state !== before"
        " && document.body.dataset.busy === '0'",
        arg=[before],
    )
    return page.evaluate("document.body.dataset.state")


def click_card(page: Any, index: int) -> None:
    # the card's left edge: the rest of it may lie under the next card of the hand
    page.locator(f"#table g.hand > g[data-index='{index}']").click(position={"x": 3, "y": 12})


def play_by_clicks(page: Any, web: WebGame, move: dict[str, Any], used: Counter[str]) -> None:
    """Make ``move`` (one of the state's moves) as a person would, by clicking."""
    kind, name = move["kind"], move["name"]
    if kind == "take" or kind == "buy":
        page.locator("#table g.upcard").click()
        used["upcard"] += 1
    elif kind == "draw":
        page.locator("#table g.stock").click()
        used["stock"] += 1
    elif move["card"] is None:  # pass, finish
        page.locator(f'#actions button[data-move="{name}"]').click()
        used["button"] += 1
    else:
        index = hand_text(web.game.hands[web.seat]).split().index(move["card"])
        click_card(page, index)
        if kind == "discard":
            click_card(page, index)  # a second click on the picked card discards it
            used["discard"] += 1
            return
        meld = page.locator(f"#table g[data-meld='{move['owner']}.{move['meld']}'].target")
        if meld.count():
            meld.click()
            used["meld click"] += 1
            fits = [
                m
                for m in web.state()["moves"]
                if (m["card"], m["owner"], m["meld"]) == (move["card"], move["owner"], move["meld"])
            ]
            if len(fits) > 1:  # a joker (or an ace) fits in several places: say which
                page.locator(f'#actions button[data-move="{name}"]').click()
                used["choice"] += 1
        else:
            page.locator(f'#actions button[data-move="{name}"]').click()
            used["meld button"] += 1


def test_a_whole_deal_played_by_clicking_shows_what_the_engine_holds(browser, server: GameServer) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(server.url)
    state = wait_settled(page)
    key = re.search(r"game=([\w-]+)", page.evaluate("location.hash"))
    assert key
    web = server.games.get(key.group(1))
    assert web.version == int(state)
    bot = GreedyBot()
    bot.reset(0)
    table = action_table(web.game.rules)
    used: Counter[str] = Counter()
    for _ in range(400):
        if web.game.game_over:
            break
        game = web.game
        # what the page shows is the engine's table as the person's seat sees it
        hand = page.evaluate(
            "Array.from(document.querySelectorAll('#table g.player.p0 > g.hand > g'))"
            ".map(g => g.dataset.card)"
        )
        assert hand == hand_text(game.hands[0]).split()
        backs = page.locator("#table g.back").count()
        assert backs == sum(game.hand_sizes[1:]) + (1 if game.stock else 0)
        texts = page.evaluate(
            "Array.from(document.querySelectorAll('#table svg text')).map(t => t.textContent)"
        )
        assert texts == python_texts(web)
        assert page.locator("#prompt").text_content() == web.state()["prompt"]
        offered = page.evaluate("Array.from(document.querySelectorAll('#menu button')).map(b => b.title)")
        assert sorted(offered) == sorted(m.name for m in game.legal_moves())
        # the person's move: a greedy player's choice, made by clicking
        name = table.decode(bot.act(decision_for(game, 0, table))).name
        move = next(m for m in web.state()["moves"] if m["name"] == name)
        moves_before = game.move_count
        play_by_clicks(page, web, move, used)
        state = wait_settled(page, state)
        assert web.moves.flat()[moves_before] == name  # the engine played the move clicked
    assert web.game.game_over, "the deal did not end"
    assert page.evaluate("document.body.dataset.phase") == "GAME_OVER"
    assert used["stock"] + used["upcard"] >= 3 and used["discard"] >= 3
    assert used["meld button"] + used["meld click"] >= 6  # going down, card by card
    # the scores shown are the engine's, and so is the story of the game, line for line
    totals = page.evaluate(
        "Array.from(document.querySelectorAll('#scores tr')).slice(1)"
        ".map(r => Number(r.lastChild.textContent))"
    )
    assert totals == web.game.scores
    said = page.evaluate("Array.from(document.querySelectorAll('#log div')).map(d => d.textContent)")
    assert said == [line["text"] for line in web.log]
    assert page.locator("#prompt").text_content().startswith("Game over")
    assert page.locator("#record-link").count() == 1 and page.locator("#replay-link").count() == 1
    assert errors == []
    page.close()


def test_the_page_says_why_a_move_is_refused(browser, server: GameServer) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server.url)
    wait_settled(page)
    # a move sent for an older state (another tab played meanwhile, say) is refused and said
    web = next(iter(server.games.games.values()))
    name = web.state()["moves"][0]["name"]
    with web.lock:
        web.play(0, web.version, name)
    page.locator("#menu button").first.dispatch_event("click")
    page.wait_for_function("document.getElementById('error').textContent.includes('stale move')")
    page.close()
