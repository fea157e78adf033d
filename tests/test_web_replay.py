"""The table's drawing shared by the HTML replay and the browser game (``draw/scene.py`` and
``draw/table.js``), and the replay viewer's layout: short panels for players with no melds, a
high ace drawn as an ace, a table that does not move as the move list fills and that fits a
1400x900 window."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.draw.replay import replay_frames, replay_html
from shanghai_env.draw.scene import PANEL_H, PANEL_SHORT, TOP, WIDTH, card, drawn_height, height, table_scene
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


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    config = TournamentConfig(
        players=("greedy", "planner", "random", "greedy"), games=4, seed=2, contracts=(1, 2), record_games=1
    )
    out = play_task(config, schedule(config)[0]).record
    assert out is not None
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
def test_the_replay_table_stays_put_and_fits_a_1400x900_window(
    tmp_path: Path, record: dict[str, Any]
) -> None:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (the dev extra)"
    )
    header, states, _ = replay_frames(record)
    path = tmp_path / "game.html"
    path.write_text(replay_html(record), encoding="utf-8")
    everyone_down = next(i for i, s in enumerate(states) if all(s["down"]) and s["phase"] == "PLAY")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        tops = []
        for frame in range(7):
            page.goto(f"{path.as_uri()}#step={frame}")
            tops.append(page.evaluate("document.getElementById('table').getBoundingClientRect().top"))
        assert len(set(tops)) == 1, tops  # the move list above it does not push the table down
        page.goto(f"{path.as_uri()}#step={everyone_down}")
        bottom = page.evaluate("document.querySelector('#table svg').getBoundingClientRect().bottom")
        assert bottom <= 900  # the fourth player's panel is in the window
        # the JavaScript draws a high ace as Python does
        state = dict(states[everyone_down], melds=[["AH^ KH QH JH", "JK=AS^"], [], [], []])
        svg = page.evaluate("([s, h]) => sceneSvg(tableScene(s, h, null), WIDTH, 100)", [state, header])
        drawn = [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]
        assert drawn == texts(table_scene(state, header)) and "A^" not in drawn
        browser.close()
