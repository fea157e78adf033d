"""The table's layout as a list of shapes, drawn by :mod:`.svg` (SVG) and :mod:`.raster` (Pillow).

The pages' JavaScript (``table.js``, drawing the HTML replay and the browser game) lays the table
out the same way, shape for shape; keep the two in step (``tests/test_draw.py`` compares them in a
browser).

Shapes are tuples of integers and strings:

- ``("group", cls)`` ... ``("end",)``: a group of shapes (a card: ``card``, ``card back``,
  ``card joker``);
- ``("rect", x, y, w, h, r, fill, stroke, dash)``: a rounded rectangle (``dash`` 0 or 1);
- ``("text", x, y, size, text, fill, anchor, bold)``: ``anchor`` ``start``/``middle``/``end``,
  ``y`` the baseline;
- ``("suit", cx, cy, size, suit, fill)``: a suit symbol (``C D H S``) centred on ``cx, cy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Shape = tuple[Any, ...]

WIDTH = 1000
CARD_W, CARD_H, CARD_STEP = 34, 48, 37
TOP = 134  # the first player's panel
PANEL_H = 156  # a panel with melds: name, hand, melds
PANEL_SHORT = 92  # a panel without melds: name and hand only
RED, BLACK, JOKER_INK = "#c0172b", "#1b1b1b", "#7a2fa8"
FELT, PANEL, PANEL_ACT, INK, DIM = "#23643f", "#2e7a4e", "#3f9663", "#f4f1e8", "#cfe3d2"
GOLD = "#f2c14e"
SUIT_WORDS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def height(players: int) -> int:
    """The largest table (every panel with melds): the size of pictures, which keep one size."""
    return TOP + PANEL_H * players + 8


def panel_tops(state: Mapping[str, Any]) -> list[int]:
    """Where each player's panel starts: a player with no melds gets a short panel, without the
    empty band melds would fill (so a table where few are down fits a screen)."""
    tops, y = [], TOP
    for melds in state["melds"]:
        tops.append(y)
        y += PANEL_H if melds else PANEL_SHORT
    return tops


def drawn_height(state: Mapping[str, Any]) -> int:
    """The height the table of ``state`` takes (at most :func:`height`); pages show this much."""
    return panel_tops(state)[-1] + (PANEL_H if state["melds"][-1] else PANEL_SHORT) + 8


def _ink(suit: str) -> str:
    return RED if suit in ("D", "H") else BLACK


def _rank(rank: str) -> str:
    return "10" if rank == "T" else rank


def card(out: list[Shape], x: int, y: int, text: str) -> None:
    """A face-up card: ``7H``, ``AH^`` (a high ace, drawn as any ace), ``JK`` or ``JK=7H`` (a
    declared joker)."""
    if text.startswith("JK"):
        out.append(("group", "card joker"))
        out.append(("rect", x, y, CARD_W, CARD_H, 4, "#fffdf6", JOKER_INK, 0))
        out.append(("text", x + 4, y + 14, 12, "JK", JOKER_INK, "start", 1))
        if text.startswith("JK="):
            place = text[3:]
            suit = place[1]
            out.append(("text", x + 17, y + 28, 9, "as", JOKER_INK, "middle", 0))
            label = _rank(place[0])  # a high ace is an ace: its place in the run says it is high
            out.append(("text", x + 14, y + 42, 11, label, _ink(suit), "middle", 1))
            out.append(("suit", x + 26, y + 38, 9, suit, _ink(suit)))
        else:
            out.append(("text", x + 17, y + 38, 9, "joker", JOKER_INK, "middle", 0))
        out.append(("end",))
        return
    rank, suit = text[0], text[1]
    ink = _ink(suit)
    out.append(("group", "card"))
    out.append(("rect", x, y, CARD_W, CARD_H, 4, "#fffdf6", "#55585c", 0))
    out.append(("text", x + 4, y + 15, 13, _rank(rank), ink, "start", 1))
    out.append(("suit", x + 21, y + 33, 16, suit, ink))
    out.append(("end",))


def card_back(out: list[Shape], x: int, y: int) -> None:
    out.append(("group", "card back"))
    out.append(("rect", x, y, CARD_W, CARD_H, 4, "#2f5d8a", "#16324d", 0))
    out.append(("rect", x + 4, y + 4, CARD_W - 8, CARD_H - 8, 3, "#3b73a8", "#9cc0e4", 0))
    out.append(("end",))


def _step(count: int, room: int) -> int:
    """The distance between cards so that ``count`` of them fit in ``room`` pixels."""
    if count <= 1:
        return CARD_STEP
    return max(8, min(CARD_STEP, (room - CARD_W) // (count - 1)))


def _status(state: Mapping[str, Any], header: Mapping[str, Any], player: Any) -> str:
    phase = state["phase"]
    up = _card_words(state["up"]) if state["up"] else "nothing"
    last = state["deal"] + 1 == len(header["contracts"])
    if phase == "END" or phase == "GAME_OVER":
        result = state["result"]
        if result is None:
            return "Game over"
        how = "nobody went out" if result["out"] is None else f"{player(result['out'])} went out"
        how += " blind" if result["blind"] else ""
        if last:
            low = min(state["scores"])
            winners = [player(p) for p, s in enumerate(state["scores"]) if s == low]
            return f"Game over: {how} · winner{'s' if len(winners) > 1 else ''} {' and '.join(winners)}"
        return f"Deal {state['deal'] + 1} over: {how}"
    act = player(state["act"])
    if phase == "DRAW":
        return f"{act} to draw: take the {up} or draw from the stock"
    if phase == "BUY":
        then = [player(p) for p in state["offer"][1:]]
        more = f" (then {', '.join(then)})" if then else ""
        return f"{player(state['turn'])} declined the {up}: {act} may buy it{more}"
    if phase == "GOING_DOWN":
        return f"{act} is going down"
    return f"{act} to play: meld, lay off, swap, then discard"


def _card_words(text: str) -> str:
    if text == "JK":
        return "joker"
    return _rank(text[0]) + SUIT_WORDS[text[1]]


def table_scene(
    state: Mapping[str, Any], header: Mapping[str, Any], viewer: int | None = None
) -> list[Shape]:
    """The shapes of one table; ``viewer``: show only that seat's hand face up (None: all).

    Every hand is face up at a deal's end, as the cards are counted.
    """
    n = header["players"]
    names = header["names"]

    def player(p: int) -> str:
        return f"player {p}"

    out: list[Shape] = [("rect", 0, 0, WIDTH, height(n), 0, FELT, "", 0)]
    contract = str(state["contract"])
    title = (
        f"Deal {state['deal'] + 1}/{len(header['contracts'])} · contract {contract}: "
        f"{header['describe'][contract]} · dealer {player(state['dealer'])}"
    )
    out.append(("text", 16, 26, 17, title, INK, "start", 1))
    out.append(("text", 16, 50, 14, _status(state, header, player), GOLD, "start", 0))
    view = "all hands" if viewer is None else f"{player(viewer)}'s view"
    out.append(("text", WIDTH - 16, 26, 13, view, DIM, "end", 0))

    # the stock and the discard pile
    out.append(("group", "stock"))
    if state["stock"]:
        card_back(out, 16, 66)
    else:
        out.append(("rect", 16, 66, CARD_W, CARD_H, 4, FELT, DIM, 1))
    out.append(("end",))
    out.append(("text", 58, 84, 13, f"stock {state['stock']}", INK, "start", 0))
    rebuilds = state["rebuilds"]
    rebuild_text = "no limit on rebuilds" if rebuilds is None else f"rebuilds left {rebuilds}"
    out.append(("text", 58, 102, 11, rebuild_text, DIM, "start", 0))
    out.append(("group", "upcard"))
    if state["up"]:
        card(out, 196, 66, state["up"])
    else:
        out.append(("rect", 196, 66, CARD_W, CARD_H, 4, FELT, DIM, 1))
    out.append(("end",))
    out.append(("text", 238, 84, 13, f"discard pile {state['pile']}", INK, "start", 0))
    if state["upFrom"] is not None and state["up"]:
        out.append(("text", 238, 102, 11, f"top from {player(state['upFrom'])}", DIM, "start", 0))
    if state["phase"] == "BUY" and state["up"]:
        out.append(("rect", 192, 62, CARD_W + 8, CARD_H + 8, 6, "none", GOLD, 0))
        out.append(("text", 238, 120, 12, f"on offer to {player(state['act'])}", GOLD, "start", 1))

    specs = header["melds"][contract]
    result = state["result"]
    tops = panel_tops(state)
    for p in range(n):
        y = tops[p]
        melds = state["melds"][p]
        acting = p == state["act"]
        out.append(("group", f"player p{p}"))
        out.append(
            (
                "rect",
                8,
                y,
                WIDTH - 16,
                (PANEL_H if melds else PANEL_SHORT) - 8,
                8,
                PANEL_ACT if acting else PANEL,
                GOLD if acting else "",
                0,
            )
        )
        mark = "▶ " if acting else ""
        named = f" · {names[p]}" if names[p] and names[p] != f"player_{p}" else ""
        out.append(("text", 20, y + 20, 14, f"{mark}{player(p)}{named}", INK, "start", 1))
        hand = state["hands"][p].split() if state["hands"][p] else []
        facts = [f"score {state['scores'][p]}"]
        if result is not None:
            facts.append(f"this deal {result['scores'][p]:+d}")
        facts += [f"buys {state['buys'][p]}", f"{len(hand)} card{'s' if len(hand) != 1 else ''}"]
        facts.append("down" if state["down"][p] else "not down")
        out.append(("text", WIDTH - 20, y + 20, 13, " · ".join(facts), INK, "end", 0))
        # the hand
        face_up = viewer is None or viewer == p or state["phase"] in ("END", "GAME_OVER")
        step = _step(len(hand), WIDTH - 40)
        out.append(("group", "hand"))
        for i, text in enumerate(hand):
            if face_up:
                card(out, 20 + i * step, y + 28, text)
            else:
                card_back(out, 20 + i * step, y + 28)
        out.append(("end",))
        # the melds
        if not melds:
            out.append(("end",))
            continue
        laid = [m.split() if m else [] for m in melds]
        total = sum(max(len(m), 1) for m in laid)
        room = WIDTH - 40 - 16 * (len(laid) - 1)
        spread = total - len(laid)
        mstep = CARD_STEP if spread <= 0 else max(8, min(CARD_STEP, (room - CARD_W * len(laid)) // spread))
        x = 20
        for j, cards in enumerate(laid):
            out.append(("text", x, y + 94, 11, specs[j], DIM, "start", 0))
            out.append(("group", "meld"))
            if not cards:
                out.append(("rect", x, y + 98, CARD_W, CARD_H, 4, "none", DIM, 1))
            for i, text in enumerate(cards):
                card(out, x + i * mstep, y + 98, text)
            out.append(("end",))
            x += mstep * (max(len(cards), 1) - 1) + CARD_W + 16
        out.append(("end",))
    return out


def card_count(scene: Sequence[Shape]) -> dict[str, int]:
    """How many cards a scene draws: ``{"card": face up, "back": face down}``."""
    up = sum(1 for s in scene if s[0] == "group" and s[1] in ("card", "card joker"))
    back = sum(1 for s in scene if s[0] == "group" and s[1] == "card back")
    return {"card": up, "back": back}
