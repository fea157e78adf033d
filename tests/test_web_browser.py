"""The browser game in a real browser: headless Chromium (through Playwright) plays a whole deal
by clicking, and what the page shows is compared with the engine at every decision; the page's
layout is measured on a phone, a small laptop and a desktop screen.

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
from shanghai_env.agents.ui.web import GameServer, Table, WebGame, start_server
from shanghai_env.decision import decision_for
from shanghai_env.draw.scene import table_scene
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


def python_texts(web: WebGame, width: int) -> list[str]:
    """The texts Python's drawing (shanghai_env.draw.scene) puts on the person's table laid out
    ``width`` units wide, with the status line the server gives where it gives one."""
    state = web.state()
    scene = table_scene(state["table"], state["header"], web.seat, width=width, status=state["status"])
    return [t.text or "" for t in ET.fromstring(scene_svg(scene, width, 100)).iter(f"{SVG}text")]


# the units the page's drawing is laid out in
LAID_OUT = "document.querySelector('#table svg').viewBox.baseVal.width"

# the drawing's status line (under the title; its lines joined where it wraps)
STATUS = """() => Array.from(document.querySelectorAll('#table svg > text'))
  .filter(t => t.getAttribute('fill') === '#f2c14e' && !t.getAttribute('font-weight'))
  .map(t => t.textContent).join(' ')"""


# How far the picked (lifted) card's top edge, its outline included, stays below the bottom of its
# panel's first line (the player's name): negative when they overlap.
LIFT_GAP = """() => {
  const g = document.querySelector('#table g.hand > g.chosen');
  const rect = g.querySelector('rect');
  const svg = document.querySelector('#table svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const outline = parseFloat(getComputedStyle(rect).strokeWidth) * scale / 2;
  const name = g.closest('g.player').querySelector(':scope > text').getBoundingClientRect();
  return rect.getBoundingClientRect().top - outline - name.bottom;
}"""


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
        assert texts == python_texts(web, page.evaluate(LAID_OUT))
        assert page.locator("#prompt").text_content() == web.state()["prompt"]
        offered = page.evaluate("Array.from(document.querySelectorAll('#menu button')).map(b => b.title)")
        assert sorted(offered) == sorted(m.name for m in game.legal_moves())
        # the cards just drawn are marked in the hand, and only they
        marked = page.evaluate(
            "Array.from(document.querySelectorAll('#table g.hand > g.drawn')).map(g => g.dataset.card)"
        )
        assert sorted(marked) == sorted(web.state()["drawn"])
        used["drawn marked"] += bool(marked)
        known = page.locator("#known").text_content()
        if web.state()["known"][0]:
            assert "player 0 (you): " in known  # the person's own face-up pickups are listed too
            used["own pickups"] += 1
        # the person's move: a greedy player's choice, made by clicking
        name = table.decode(bot.act(decision_for(game, 0, table))).name
        move = next(m for m in web.state()["moves"] if m["name"] == name)
        moves_before = game.move_count
        if move["kind"] == "discard":
            # a picked card lifts clear of the player's name above it; where it may only be
            # discarded because its player just went down, the page says why
            click_card(page, hand_text(game.hands[0]).split().index(move["card"]))
            assert page.evaluate(LIFT_GAP) >= 0
            buttons = page.evaluate(
                "Array.from(document.querySelectorAll('#actions button')).map(b => b.dataset.move)"
            )
            if game.view(0).went_down_this_turn:
                # said in the prompt, on the table and on the card (not again beside the button)
                assert buttons == [name] and page.locator("#actions .why").count() == 0
                assert "wait for your next turn" in page.locator("#prompt").text_content()
                assert "went down this turn" in page.evaluate(STATUS)
                title = page.locator("#table g.hand > g.chosen > title").text_content()
                assert "discard only" in title and "wait for your next turn" in title
                used["why only a discard"] += 1
            elif len(buttons) == 1 and web.state()["hint"]:
                assert page.locator("#actions .why").text_content() == web.state()["hint"]
                used["why beside the button"] += 1
            click_card(page, hand_text(game.hands[0]).split().index(move["card"]))
            used["discard"] += 1
        else:
            play_by_clicks(page, web, move, used)
        state = wait_settled(page, state)
        assert web.moves.flat()[moves_before] == name  # the engine played the move clicked
    assert web.game.game_over, "the deal did not end"
    assert page.evaluate("document.body.dataset.phase") == "GAME_OVER"
    assert used["stock"] + used["upcard"] >= 3 and used["discard"] >= 3
    assert used["meld button"] + used["meld click"] >= 6  # going down, card by card
    assert used["why only a discard"] == 1 and used["why beside the button"] >= 1, used
    assert used["drawn marked"] >= 3 and used["own pickups"] >= 1, used
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


def test_leaving_is_said_on_the_table(browser, server: GameServer) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server.url)
    state = wait_settled(page)
    web = next(iter(server.games.games.values()))
    bot = GreedyBot()
    bot.reset(0)
    table = action_table(web.game.rules)
    used: Counter[str] = Counter()
    # on to an offer of the upcard to the person: the table says who may buy it
    while not (web.game.phase.name == "BUY" and web.game.to_act == 0):
        name = table.decode(bot.act(decision_for(web.game, 0, table))).name
        play_by_clicks(page, web, next(m for m in web.state()["moves"] if m["name"] == name), used)
        state = wait_settled(page, state)
    drawing = "Array.from(document.querySelectorAll('#table svg text')).map(t => t.textContent)"
    assert "player 0 may buy it" in " ".join(page.evaluate(drawing))
    page.locator("#leave").click()
    page.locator("#leave").click()  # "Really leave?"
    wait_settled(page, state)
    texts = page.evaluate(drawing)
    assert page.evaluate(STATUS) == "player 0 (you) left the game: nothing more is played"
    assert not any("may buy" in t for t in texts)
    assert page.locator("#prompt").text_content() == "You left the game."
    page.close()


def test_a_reloaded_page_comes_back_to_its_game(browser, server: GameServer) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server.url)
    state = wait_settled(page)
    page.reload()
    assert wait_settled(page) == state and len(server.games.games) == 1
    page.close()


@pytest.fixture
def server4() -> Iterator[GameServer]:
    table = Table(Rules(num_players=4, contracts=(1, 2)), 0, ["greedy", "greedy", "greedy"], seed=12)
    running = start_server(table, "127.0.0.1", 0)
    threading.Thread(target=running.serve_forever, daemon=True).start()
    yield running
    running.shutdown()
    running.server_close()


# the sizes the page is laid out for: (width, height, the narrowest a card of the hand may be)
SCREENS = {
    "phone": (390, 844, 34),
    "small laptop": (800, 600, 40),
    "laptop": (1366, 768, 56),
    "desktop": (1440, 900, 56),
}

MEASURE = """() => {
  const inTable = (e) => e.closest('#table') !== null;
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const rect = (e) => { const r = e.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height}; };
  const svg = document.querySelector('#table svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const hand = Array.from(document.querySelectorAll('#table g.player.p0 > g.hand > g'));
  const cards = hand.map(g => g.querySelector('rect').getBoundingClientRect());
  // every element outside the table holding text of its own
  const texts = Array.from(document.querySelectorAll('body *')).filter(e => !inTable(e) && shown(e) &&
    Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()));
  const wide = Array.from(document.querySelectorAll('body *')).filter(e => shown(e))
    .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5).map(e => e.tagName + '#' + e.id);
  // the drawing's text: each with its size on the screen and where it is drawn
  const drawn = Array.from(svg.querySelectorAll('text')).map(t => ({
    text: t.textContent, px: Number(t.getAttribute('font-size')) * scale, box: rect(t),
    card: t.closest('g.card') ? rect(t.closest('g.card').querySelector('rect')) : null}));
  const free = drawn.filter(t => t.card === null);
  const overlaps = [];
  free.forEach((a, i) => free.slice(i + 1).forEach(b => {
    const x = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
    const y = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
    if (x > 1 && y > 1) overlaps.push([a.text, b.text]);
  }));
  const outside = drawn.filter(t => t.box.left < -0.5 || t.box.right > innerWidth + 0.5 ||
    (t.card && (t.box.left < t.card.left - 0.5 || t.box.right > t.card.right + 0.5))).map(t => t.text);
  const seats = Array.from(document.querySelectorAll('#table g.player')).map(g =>
    Array.from(g.querySelectorAll(':scope > text')).map(t => t.textContent).join(' '));
  const all = document.querySelector('#all');
  all.open = true;  // the menu of every legal move, opened to measure its buttons
  const buttons = Array.from(document.querySelectorAll('button')).filter(shown).map(b => rect(b).height);
  all.open = false;
  return {
    card: Math.min(...cards.map(r => r.width)),
    handRight: Math.max(...cards.map(r => r.right)),
    handBottom: Math.max(...cards.map(r => r.bottom)),
    htmlFont: Math.min(...texts.map(e => parseFloat(getComputedStyle(e).fontSize))),
    smallHtml: texts.filter(e => parseFloat(getComputedStyle(e).fontSize) < 12).map(e => e.outerHTML),
    drawingFont: Math.min(...drawn.map(t => t.px)),
    smallDrawing: drawn.filter(t => t.px < 12).map(t => t.text + ' ' + t.px.toFixed(1) + 'px'),
    overlaps: overlaps, outside: outside, seats: seats,
    button: Math.min(...buttons), buttons: buttons.length,
    pageWidth: document.documentElement.scrollWidth,
    tableScroll: document.getElementById('table').scrollWidth - document.getElementById('table').clientWidth,
    wide: wide,
    totals: Array.from(document.querySelectorAll('#info b')).map(b => b.getBoundingClientRect().bottom),
    svg: rect(svg), table: rect(document.getElementById('table')),
    scores: rect(document.querySelector('#scores table')),
    prompt: rect(document.getElementById('prompt')), log: rect(document.getElementById('log')),
    width: innerWidth, height: innerHeight,
  };
}"""


def measure(page: Any, tmp_path: Any, name: str) -> dict[str, Any]:
    """What MEASURE finds on ``page``, with a screenshot of the screen and of the whole page."""
    got = page.evaluate(MEASURE)
    size = f"{got['width']}x{got['height']}"
    page.screenshot(path=str(tmp_path / f"{name}-{size}.png"))
    page.screenshot(path=str(tmp_path / f"{name}-{size}-full.png"), full_page=True)
    return got


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_page_is_laid_out_for_phone_laptop_and_desktop(
    browser, server4: GameServer, tmp_path, screen
) -> None:
    width, height, narrowest = SCREENS[screen]
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(server4.url)
    wait_settled(page)
    got = measure(page, tmp_path, screen.replace(" ", "-"))
    # cards wide enough to read and to tap; no text smaller than 12 px, the drawing's included
    assert got["card"] >= narrowest, got
    assert got["htmlFont"] >= 12, got["smallHtml"]
    assert got["drawingFont"] >= 12, got["smallDrawing"]
    # nothing wider than the screen and nothing scrolled sideways, the table included: every text
    # of the drawing on the screen, none over another, each card's inside its card
    assert got["pageWidth"] <= width and got["wide"] == [], got["wide"]
    assert got["tableScroll"] <= 0 and got["svg"]["right"] <= width and got["scores"]["right"] <= width, got
    assert got["outside"] == [] and got["overlaps"] == [], got
    # every seat says its score, buys left, cards and whether it is down
    said = r"score -?\d+.*buys \d.*cards? .*down"
    assert len(got["seats"]) == 4 and all(re.search(said, seat) for seat in got["seats"]), got["seats"]
    # the table takes the width it has
    assert got["svg"]["width"] >= got["table"]["width"] - 2, got
    # the hand is in view without scrolling, and so are the prompt and every player's total score
    assert got["handRight"] <= width and got["handBottom"] <= height, got
    assert got["prompt"]["bottom"] <= height
    assert len(got["totals"]) == 4 and max(got["totals"]) <= height, got
    if screen == "phone":  # buttons a finger can tap
        assert got["buttons"] >= 3 and got["button"] >= 44, got
    else:
        assert got["log"]["bottom"] <= height and got["log"]["right"] <= width  # the story too
    if screen in ("laptop", "desktop"):
        assert got["scores"]["bottom"] <= height and got["table"]["width"] >= 0.6 * width  # beside the table
    else:
        assert got["table"]["width"] >= width - 24  # the table takes the page's width
    assert errors == []
    page.close()
