"""Pictures of the table (SVG, pixels, the AEC env's rgb_array) and the HTML replay, which is
opened in headless Chromium where one is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import deal_deck

from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.draw.replay import main as replay_main
from shanghai_env.draw.replay import replay_frames, replay_html
from shanghai_env.draw.scene import WIDTH, card_count, height, scene_size, table_scene
from shanghai_env.draw.state import table_header, table_state
from shanghai_env.draw.svg import table_svg
from shanghai_env.engine import Game, Phase
from shanghai_env.record import Recorder, save

SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def groups(svg: str, cls: str) -> int:
    return sum(1 for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == cls)


def stacked() -> Recorder:
    deck = deal_deck(3, 2, {0: "7H 7D JK 9S 9H 9D 2C 3C 4D 5S KH"}, "QS")
    rec = Recorder(Game(num_players=3, contracts=(1, 2)), players=["you", "greedy", "planner"])
    rec.reset(0, deck=deck, dealer=2)
    return rec


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    config = TournamentConfig(
        players=("greedy", "planner", "random"), games=3, seed=2, contracts=(1, 2), record_games=1
    )
    out = play_task(config, schedule(config)[0]).record
    assert out is not None
    return out


def test_the_svg_shows_every_card_once_face_up_or_down() -> None:
    rec = stacked()
    for name in ["take", "meld 0 7H", "meld 0 7D", "meld 0 JK=7C", "meld 1 9S", "meld 1 9H", "meld 1 9D"]:
        rec.apply(name)
    game = rec.game
    svg = table_svg(game, names=rec.players)
    held = sum(game.hand_sizes)
    assert groups(svg, "card") + groups(svg, "card joker") == held + 6  # hands and melds: no upcard left
    assert groups(svg, "card back") == 1  # the stock
    words = texts(svg)
    assert "▶ player 0 · you" in words and "player 2 · planner" in words
    assert "stock 71" in words and "discard pile 0" in words  # player 0 took the only upcard
    # the joker shows the card it stands for: JK, "as", 7 and a club
    joker = next(g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "card joker")
    assert [t.text for t in joker.iter(f"{SVG}text")] == ["JK", "as", "7", "♣"]
    assert any(w.startswith("score 0 · buys 3 · 6 cards · down") for w in words)
    # one player's view: the other hands face down
    mine = table_svg(game, viewer=0)
    assert groups(mine, "card back") == 1 + game.hand_sizes[1] + game.hand_sizes[2]
    assert "player 0's view" in texts(mine) and "all hands" in words
    with pytest.raises(ValueError, match="viewer must be a seat"):
        table_svg(game, viewer=3)


def test_a_high_ace_is_drawn_as_an_ace() -> None:
    """``AS^`` names a high ace in moves and records; on a drawn card it is an ace like any other
    (its place at the top of the run says it is high), and so is a joker standing for one."""
    deck = deal_deck(3, 2, {0: "JS QS KS JK JH QH KH AH 2C 3D 9C"}, "4C")
    game = Game(num_players=3, contracts=(3,))
    game.reset(0, deck=deck, dealer=2)
    for name in ["draw", "pass", "pass", "meld 0 JS", "meld 0 QS", "meld 0 KS", "meld 0 JK=AS^"]:
        game.apply(name)
    for name in ["meld 1 JH", "meld 1 QH", "meld 1 KH", "meld 1 AH^"]:
        game.apply(name)
    assert table_state(game)["melds"][0] == ["JS QS KS JK=AS^", "JH QH KH AH^"]
    svg = table_svg(game)
    assert not [w for w in texts(svg) if "^" in w]
    melds = [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "meld"]
    assert [[t.text for t in meld.iter(f"{SVG}text")] for meld in melds] == [
        ["J", "♠", "Q", "♠", "K", "♠", "JK", "as", "A", "♠"],
        ["J", "♥", "Q", "♥", "K", "♥", "A", "♥"],
    ]


def test_the_svg_shows_whose_turn_and_a_buy_offer() -> None:
    rec = stacked()
    game = rec.game
    assert "player 0 to draw: take the Q♠ or draw from the stock" in texts(table_svg(game))
    rec.apply("draw")
    assert game.phase == Phase.BUY
    words = texts(table_svg(game))
    assert f"player 0 declined the Q♠: player {game.to_act} may buy it" in " ".join(words)
    assert f"on offer to player {game.to_act}" in words


def test_a_deal_end_shows_every_hand_and_the_deal_scores(record: dict[str, Any]) -> None:
    header, states, captions = replay_frames(record)
    ends = [i for i, s in enumerate(states) if s["phase"] == "END"]
    assert len(ends) == 2
    scene = table_scene(states[ends[0]], header, viewer=1)
    assert card_count(scene)["back"] <= 1  # only the stock: hands are face up at a deal's end
    words = [s[4] for s in scene if s[0] == "text"]
    assert any("this deal +" in w for w in words)
    assert (
        words[1].startswith("Deal 1 over:")
        and "Game over:" in [s[4] for s in table_scene(states[-1], header) if s[0] == "text"][1]
    )
    assert captions[ends[0] + 1].startswith("Deal 2 begins: contract 2")


def test_captions_name_moves_in_words(record: dict[str, Any]) -> None:
    _, _, captions = replay_frames(record)
    joined = "\n".join(captions)
    assert captions[0].startswith("Deal 1 begins: contract 1 (set of 3 + set of 3)")
    assert re.search(r"^player \d discards (10|[2-9AJQK])[♣♦♥♠]$", joined, re.MULTILINE)
    assert re.search(r"^player \d (takes|declines) the ", joined, re.MULTILINE)
    assert "goes out" in joined or "nobody out" in joined


# --- pixels ------------------------------------------------------------------------------------------


def test_pixels_of_the_table() -> None:
    pytest.importorskip("PIL", reason="drawing pixels needs Pillow (the draw extra)")
    from shanghai_env.draw.raster import table_array

    game = stacked().game
    image = table_array(game)
    assert image.shape == (height(3), WIDTH, 3) and image.dtype == np.uint8
    assert tuple(image[5, 500]) == (0x23, 0x64, 0x3F)  # the felt
    assert (image.reshape(-1, 3) == 255).all(axis=1).sum() < image.shape[0] * image.shape[1] // 4
    small = table_array(game, scale=0.5, supersample=1)
    assert small.shape == (height(3) // 2, WIDTH // 2, 3)


def test_a_scale_that_is_no_size_is_refused() -> None:
    pytest.importorskip("PIL", reason="drawing pixels needs Pillow (the draw extra)")
    from shanghai_env.draw.raster import table_array

    game = Game(num_players=3, contracts=(1,))
    game.reset(1)
    for scale in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale must be a positive finite number"):
            table_array(game, scale=scale)


def test_the_aec_env_renders_rgb_arrays() -> None:
    pytest.importorskip("PIL", reason="drawing pixels needs Pillow (the draw extra)")
    import shanghai_env

    env = shanghai_env.env(num_players=3, contracts=(1,), render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=1)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (height(3), WIDTH, 3) and frame.dtype == np.uint8
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.render().shape == frame.shape


def test_rgb_array_without_pillow_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['PIL'] = None\n"
        "import shanghai_env\n"
        "try:\n"
        "    shanghai_env.raw_env(render_mode='rgb_array')\n"
        "except Exception as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "DependencyNotInstalled" in done.stdout and "pip install 'shanghai-env[draw]'" in done.stdout, done


# --- the HTML replay ---------------------------------------------------------------------------------


def test_the_replay_page_is_self_contained(record: dict[str, Any]) -> None:
    page = replay_html(record)
    assert page.startswith("<!DOCTYPE html>") and "<script src" not in page and "<link" not in page
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", page)
    assert page.count("</script>") == 2  # the data and the viewer


def test_the_replay_command(
    tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = save(record, tmp_path / "game.json")
    assert replay_main([str(path)]) == 0
    assert (tmp_path / "game.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "wrote" in capsys.readouterr().out
    bad = dict(record, scores=[1, 2, 3])
    with pytest.raises(SystemExit) as stop:  # as the svg and png commands do
        replay_main([str(save(bad, tmp_path / "bad.json")), "-o", str(tmp_path / "bad.html")])
    assert stop.value.code == 2 and not (tmp_path / "bad.html").exists()
    assert "record final scores [1, 2, 3]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        replay_main([str(tmp_path / "missing.json")])


def dump_dom(url: str, tmp_path: Path) -> str:
    assert CHROMIUM is not None
    args = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--dump-dom",
        url,
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
@pytest.mark.parametrize("view", ["all", 1])
def test_the_replay_in_a_browser_draws_the_frame_asked_for(
    tmp_path: Path, record: dict[str, Any], view
) -> None:
    header, states, captions = replay_frames(record)
    path = tmp_path / "game.html"
    path.write_text(replay_html(record), encoding="utf-8")
    frame = next(i for i, s in enumerate(states) if s["phase"] == "PLAY" and i > 30)
    dom = dump_dom(f"{path.as_uri()}#step={frame}&view={view}", tmp_path)
    caption = re.search(r'<div id="caption">(.*?)</div>', dom)
    assert caption and caption.group(1).replace("&amp;", "&") == captions[frame]
    assert f"frame {frame} / {len(states) - 1}" in dom
    svg = re.search(r"<svg.*?</svg>", dom, re.DOTALL)
    assert svg
    drawn = svg.group(0).replace("&nbsp;", " ")
    viewer = None if view == "all" else view
    scene = table_scene(states[frame], header, viewer)
    expected = table_svg_texts(scene)
    assert texts(drawn) == expected  # the browser's drawing says what Python's does, in order
    counts = card_count(scene)
    assert groups(drawn, "card") + groups(drawn, "card joker") == counts["card"]
    assert groups(drawn, "card back") == counts["back"]
    hands = sum(len(h.split()) for h in states[frame]["hands"])
    if viewer is None:
        assert counts["back"] == 1 and counts["card"] >= hands + 1
    else:
        assert counts["back"] == 1 + hands - len(states[frame]["hands"][viewer].split())


def table_svg_texts(scene: list[tuple[Any, ...]]) -> list[str]:
    from shanghai_env.draw.svg import scene_svg

    return texts(scene_svg(scene, WIDTH, 100))


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
def test_the_browser_replays_every_deal_start_the_same(tmp_path: Path, record: dict[str, Any]) -> None:
    """The frames the page decodes from its differences are the frames Python made."""
    header, states, _ = replay_frames(record)
    path = tmp_path / "game.html"
    path.write_text(replay_html(record), encoding="utf-8")
    for frame in (len(states) - 1, len(states) // 2):
        dom = dump_dom(f"{path.as_uri()}#step={frame}", tmp_path)
        svg = re.search(r"<svg.*?</svg>", dom, re.DOTALL)
        assert svg and texts(svg.group(0)) == table_svg_texts(table_scene(states[frame], header, None))


def test_states_are_json_and_the_header_names_players(record: dict[str, Any]) -> None:
    game = Game(num_players=3, contracts=(1,))
    game.reset(3)
    state = table_state(game)
    assert state["phase"] == "DRAW" and state["act"] == game.to_act and len(state["hands"]) == 3
    assert table_header(game)["names"] == ["", "", ""]
    with pytest.raises(ValueError, match="names must name 3 seats"):
        table_header(game, ["a"])


def test_the_draw_command_writes_pictures_of_a_frame(tmp_path: Path, record: dict[str, Any]) -> None:
    from shanghai_env.draw.__main__ import main as draw_main

    path = save(record, tmp_path / "game.json")
    header, states, _ = replay_frames(record)
    assert draw_main(["svg", str(path), "--frame", "5", "--view", "1", "-o", str(tmp_path / "t.svg")]) == 0
    svg = (tmp_path / "t.svg").read_text(encoding="utf-8")
    assert texts(svg) == table_svg_texts(table_scene(states[5], header, 1))
    assert draw_main(["replay", str(path), "-o", str(tmp_path / "g.html")]) == 0
    with pytest.raises(SystemExit):
        draw_main(["svg", str(path), "--frame", str(len(states)), "-o", str(tmp_path / "x.svg")])
    pytest.importorskip("PIL", reason="PNG files need Pillow (the draw extra)")
    assert (
        draw_main(["png", str(path), "--frame", "-1", "--scale", "0.5", "-o", str(tmp_path / "t.png")]) == 0
    )
    from PIL import Image

    assert Image.open(tmp_path / "t.png").size == (WIDTH // 2, height(3) // 2)


def test_the_rules_core_does_not_import_the_drawing_package() -> None:
    code = (
        "import sys, shanghai_env, shanghai_env.record, shanghai_env.agents.ui.terminal\n"
        "print(sorted(m for m in sys.modules if 'draw' in m))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


# --- the picture in docs/replay.md ------------------------------------------------------------------

WORD_CARDS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}


def card_of(words: str) -> str:
    """``7♣`` or ``10♥`` as a card string (``7C``, ``TH``)."""
    return ("T" if words[:-1] == "10" else words[:-1]) + WORD_CARDS[words[-1]]


def seats_named(text: str, players: int) -> set[int]:
    """The seats "players 0, 1 and 3", "player 2", "everyone" or "nobody" name."""
    if text == "everyone":
        return set(range(players))
    if text == "nobody":
        return set()
    return {int(n) for n in re.findall(r"\d+", text)}


def test_the_picture_in_the_replay_guide_is_what_its_commands_draw() -> None:
    """docs/replay.md's picture is the frame its commands name, of the game its evaluate command
    records (played again here: the first game of that tournament), and its caption says what
    that frame shows: the deal, who is down, the buy offer and the declared joker."""
    from shanghai_env.agents.arena.evaluate_cli import build_parser

    docs = Path(__file__).resolve().parent.parent / "docs"
    guide = (docs / "replay.md").read_text(encoding="utf-8")
    command = re.search(r"^python evaluate\.py (.+?)$", guide, re.MULTILINE)
    frames = set(re.findall(r"-m shanghai_env\.draw (?:svg|png) \S+ --frame (\d+)", guide))
    caption = re.search(r"^\*(Deal .+?)\*$", guide, re.MULTILINE | re.DOTALL)
    assert command and len(frames) == 1 and caption, "the guide's commands or caption moved"
    frame = int(frames.pop())
    args = build_parser().parse_args(command.group(1).split())
    assert args.record >= 1 and args.task is None
    config = TournamentConfig(
        players=tuple(args.players),
        games=args.games,
        seed=args.seed,
        duplicate=args.duplicate,
        max_moves_per_deal=args.max_moves_per_deal,
        record_games=args.record,
        **({"contracts": args.contracts} if args.contracts else {}),
    )
    recorded = play_task(config, schedule(config)[0]).record  # the record game-00000.json holds
    assert recorded is not None
    header, states, _ = replay_frames(recorded)
    state = states[frame]
    said = " ".join(caption.group(1).split())
    # "Deal 2 of a 4-player game ... (the commands below make it, frame 300): players 0, 1 and 3
    # are down, player 1 declined the 5♠ and player 2 (planner) is being offered it. The joker in
    # player 0's run shows the card it stands for ("JK as 7♣")."
    deal = re.match(r"Deal (\d+) of a (\d+)-player game", said)
    assert deal and (int(deal.group(1)), int(deal.group(2))) == (state["deal"] + 1, header["players"]), said
    assert f"frame {frame})" in said
    down = re.search(r": (everyone|nobody|players? [\d, and]+?) (?:is|are) down", said)
    assert down, said
    assert seats_named(down.group(1), header["players"]) == {p for p, d in enumerate(state["down"]) if d}
    offer = re.search(r"player (\d) declined the (\S+) and player (\d) \((\w+)\) is being offered it", said)
    if offer:
        assert state["phase"] == "BUY" and state["turn"] == int(offer.group(1))
        assert state["up"] == card_of(offer.group(2)) and state["act"] == int(offer.group(3))
        assert header["names"][state["act"]].startswith(offer.group(4))
    else:
        assert state["phase"] != "BUY", "the guide says nothing of the buy offer on its picture"
    joker = re.search(r"joker in player (\d)'s (run|set) .*?\(\"JK as (\S+)\"\)", said)
    if joker:
        assert any(f"JK={card_of(joker.group(3))}" in m for m in state["melds"][int(joker.group(1))])
    # the picture beside it is that frame, as the svg command draws it
    scene = table_scene(state, header)
    assert texts((docs / "table.svg").read_text(encoding="utf-8")) == table_svg_texts(scene)
    png = (docs / "table.png").read_bytes()  # its width and height, from the PNG header
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == scene_size(scene)
