"""The table's drawing shared by the HTML replay and the browser game (``draw/scene.py`` and
``draw/table.js``), and the replay viewer's layout: short panels for players with no melds, a
high ace drawn as an ace, a table that does not move as the move list fills and that fits a
1400x900 window."""

from __future__ import annotations

import contextlib
import itertools
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.draw.replay import replay_frames, replay_html
from shanghai_env.draw.scene import (
    MELD_STEP,
    NARROWEST,
    PANEL_H,
    PANEL_SHORT,
    SMALLEST,
    TOP,
    WIDTH,
    card,
    drawn_height,
    height,
    table_scene,
    text_width,
)
from shanghai_env.draw.state import table_header, table_state
from shanghai_env.draw.svg import scene_svg
from shanghai_env.engine import Game

SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def texts(scene: list[tuple[Any, ...]]) -> list[str]:
    return [t.text or "" for t in ET.fromstring(scene_svg(scene, WIDTH, 100)).iter(f"{SVG}text")]


def test_a_high_ace_is_drawn_as_an_ace() -> None:
    out: list[tuple[Any, ...]] = []
    card(out, 0, 0, "AH^")
    card(out, 40, 0, "JK=AS^")
    card(out, 80, 0, "AD")
    words = [s[4] for s in out if s[0] == "text"]
    assert words == ["A", "JK", "as", "A", "A"]


def test_players_with_no_melds_get_short_panels() -> None:
    game = Game(num_players=4, contracts=(1,))
    game.reset(5)
    state = table_state(game)
    header = table_header(game)
    assert drawn_height(state, header) == TOP + 4 * PANEL_SHORT + 8 < height(4)
    panels = [s for s in table_scene(state, header) if s[0] == "rect" and s[1] == 8]
    assert [(s[2], s[4]) for s in panels] == [(TOP + k * PANEL_SHORT, PANEL_SHORT - 8) for k in range(4)]
    assert "not down" in " ".join(texts(table_scene(state, header)))
    state["melds"][1] = ["7C 7D 7H", ""]  # one player down: only that panel grows
    panels = [s for s in table_scene(state, header) if s[0] == "rect" and s[1] == 8]
    assert [s[4] + 8 for s in panels] == [PANEL_SHORT, PANEL_H, PANEL_SHORT, PANEL_SHORT]
    assert panels[2][2] == TOP + PANEL_SHORT + PANEL_H
    assert drawn_height(state, header) == TOP + 3 * PANEL_SHORT + PANEL_H + 8


def extent(shape: tuple[Any, ...]) -> tuple[float, float]:
    """Where a text shape's estimated width puts its left and right edges."""
    _, x, _, size, text, _, anchor, bold = shape
    w = text_width(text, size, bold)
    left = x - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
    return left, left + w


def long_melds_state() -> tuple[dict[str, Any], dict[str, Any]]:
    """A 4-player table in contract 7 (three runs of 4), player 1 down with long runs and a joker."""
    game = Game(num_players=4, contracts=(7,))
    game.reset(5)
    state, header = table_state(game), table_header(game)
    state["melds"][1] = ["2C 3C 4C 5C 6C 7C 8C 9C", "5D 6D JK=7D 8D 9D TD JD", "9H TH JH QH KH AH^"]
    state["down"][1] = True
    state["phase"], state["act"], state["offer"], state["up"], state["upFrom"] = "BUY", 2, [2, 3], "QS", 0
    return state, header


@pytest.mark.parametrize("width", [NARROWEST, 374, 600, WIDTH])
def test_the_table_is_laid_out_for_its_width(width: int) -> None:
    """At any width, every text (by the layout's own generous estimate) lies inside the table, none
    under the smallest size; on a narrow table the melds take more rows rather than overlap."""
    state, header = long_melds_state()
    scene = table_scene(state, header, viewer=0, width=width)
    assert scene[0][3] == width
    words = [s for s in scene if s[0] == "text"]
    assert min(s[3] for s in words) >= SMALLEST
    for shape in words:
        left, right = extent(shape)
        assert left >= 0 and right <= width, (width, shape, left, right)
    labels = [s for s in words if s[4] == "run of 4"]
    rows = sorted({s[2] for s in labels})
    assert len(labels) == 3 and len(rows) == (1 if width >= 600 else 2 if width >= 374 else 3), rows
    said = " ".join(s[4] for s in words)
    assert "on offer to player 2" in said and "buys" in said
    if width == WIDTH:  # as wide as a picture: nothing wraps, one row of melds
        assert drawn_height(state, header, 0, width=width) == TOP + PANEL_H + 3 * PANEL_SHORT + 8
    # a row holding more than one meld keeps their cards at least MELD_STEP apart
    melds = meld_cards(scene)
    assert [len(m) for m in melds] == [8, 7, 6]
    for xs_y in melds:
        shared = sum(1 for m in melds if m[0][1] == xs_y[0][1]) > 1
        steps = [b[0] - a[0] for a, b in itertools.pairwise(xs_y)]
        assert not shared or min(steps) >= MELD_STEP, (width, steps)


def meld_cards(scene: list[tuple[Any, ...]]) -> list[list[tuple[int, int]]]:
    """Each meld's cards as (x, y) of their outlines, from the scene's ``meld`` groups."""
    melds: list[list[tuple[int, int]]] = []
    depth = 0
    for shape, after in itertools.pairwise(scene):
        if shape == ("group", "meld"):
            melds.append([])
            depth = 1
        elif depth and shape[0] == "group":
            depth += 1
            if shape[1].startswith("card") and after[0] == "rect":
                melds[-1].append((after[1], after[2]))
        elif depth and shape[0] == "end":
            depth -= 1
    return melds


def test_a_width_the_table_cannot_be_laid_out_in_is_refused() -> None:
    state, header = long_melds_state()
    for width in (NARROWEST - 1, 374.0, True, "600"):
        with pytest.raises(ValueError, match=f"width must be a whole number of units, at least {NARROWEST}"):
            table_scene(state, header, width=width)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    config = TournamentConfig(
        players=("greedy", "planner", "random", "greedy"), games=4, seed=2, contracts=(1, 2), record_games=1
    )
    out = play_task(config, schedule(config)[0]).record
    assert out is not None
    return out


@contextlib.contextmanager
def replay_page(tmp_path: Path, record: dict[str, Any], width: int, height: int) -> Iterator[tuple[Any, str]]:
    """The record's HTML replay open in Chromium in a ``width`` x ``height`` window: the page and the
    file's address."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (the dev extra)"
    )
    path = tmp_path / "game.html"
    path.write_text(replay_html(record), encoding="utf-8")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width, "height": height})
        try:
            yield page, path.as_uri()
        finally:
            browser.close()


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
def test_the_replay_table_stays_put_and_fits_a_1400x900_window(
    tmp_path: Path, record: dict[str, Any]
) -> None:
    header, states, _ = replay_frames(record)
    everyone_down = next(i for i, s in enumerate(states) if all(s["down"]) and s["phase"] == "PLAY")
    with replay_page(tmp_path, record, 1400, 900) as (page, uri):
        tops = []
        for frame in range(7):
            page.goto(f"{uri}#step={frame}")
            tops.append(page.evaluate("document.getElementById('table').getBoundingClientRect().top"))
        assert len(set(tops)) == 1, tops  # the move list above it does not push the table down
        page.goto(f"{uri}#step={everyone_down}")
        bottom = page.evaluate("document.querySelector('#table svg').getBoundingClientRect().bottom")
        assert bottom <= 900  # the fourth player's panel is in the window
        # the JavaScript draws a high ace as Python does
        state = dict(states[everyone_down], melds=[["AH^ KH QH JH", "JK=AS^"], [], [], []])
        svg = page.evaluate("([s, h]) => sceneSvg(tableScene(s, h, null), WIDTH, 100)", [state, header])
        drawn = [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]
        assert drawn == texts(table_scene(state, header)) and "A^" not in drawn
        # and lays out a table of any width shape for shape as Python does
        wide, header4 = long_melds_state()
        for frame_state, head in ((states[everyone_down], header), (wide, header4)):
            for width in (NARROWEST, 374, 600, WIDTH):
                for viewer in (None, 0):
                    status = None if viewer is None else "a status that wraps on a phone, as one may"
                    js = page.evaluate(
                        "([s, h, v, w, t]) => tableScene(s, h, v, {width: w, status: t ?? undefined})",
                        [frame_state, head, viewer, width, status],
                    )
                    py = table_scene(frame_state, head, viewer, width=width, status=status)
                    assert js == [list(shape) for shape in py], (width, viewer)


REPLAY_MEASURE = """() => {
  const svg = document.querySelector('#table svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const shown = (e) => e.getClientRects().length > 0;
  const texts = Array.from(document.querySelectorAll('body *')).filter(e =>
    !e.closest('#table') && shown(e) &&
    Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()));
  const drawn = Array.from(svg.querySelectorAll('text'));
  return {
    drawingFont: Math.min(...drawn.map(t => Number(t.getAttribute('font-size')) * scale)),
    htmlFont: Math.min(...texts.map(e => parseFloat(getComputedStyle(e).fontSize))),
    pageWidth: document.documentElement.scrollWidth,
    offSide: drawn.filter(t => t.getBoundingClientRect().right > innerWidth + 0.5).map(t => t.textContent),
    scale: scale,
  };
}"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
@pytest.mark.parametrize("width, height", [(390, 844), (800, 600), (1366, 768), (1400, 900)])
def test_the_replay_is_readable_on_a_phone_a_small_screen_and_a_laptop(
    tmp_path: Path, record: dict[str, Any], width: int, height: int
) -> None:
    """No text under 12 CSS px, the table's included, and nothing off the side of the screen."""
    _, states, _ = replay_frames(record)
    busiest = max(range(len(states)), key=lambda i: sum(len(m) for m in states[i]["melds"]))
    with replay_page(tmp_path, record, width, height) as (page, uri):
        page.goto(f"{uri}#step={busiest}")
        got = page.evaluate(REPLAY_MEASURE)
        page.screenshot(path=str(tmp_path / f"replay-{width}x{height}.png"))
    assert got["drawingFont"] >= 12 and got["htmlFont"] >= 12, got
    assert got["pageWidth"] <= width and got["offSide"] == [], got
    assert got["scale"] >= 1, got  # never drawn smaller than laid out: a unit is a pixel or more
