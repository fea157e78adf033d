"""The table's layout as a list of shapes, drawn by :mod:`.svg` (SVG) and :mod:`.raster` (Pillow).

The pages' JavaScript (``table.js``, drawing the HTML replay and the browser game) lays the table
out the same way, shape for shape; keep the two in step (``tests/test_draw.py`` compares them in a
browser).

The table is laid out for a width (``width`` units; pictures are :data:`WIDTH` wide): on a narrow
one the title and the status wrap, a player's score, buys and cards move below their name, the
texts beside the upcard that do not fit go below it, and melds that would overlap too much take a
second row. Text is never smaller than :data:`SMALLEST` units, so a page that draws one unit as at
least one CSS pixel shows no text under 12 px. Text widths are estimated generously from the
characters (:func:`text_width`), the same way in Python and JavaScript: no font is measured.

Shapes are tuples of integers and strings:

- ``("group", cls)`` ... ``("end",)``: a group of shapes (a card: ``card``, ``card back``,
  ``card joker``);
- ``("rect", x, y, w, h, r, fill, stroke, dash)``: a rounded rectangle (``dash`` 0 or 1);
- ``("text", x, y, size, text, fill, anchor, bold)``: ``anchor`` ``start``/``middle``/``end``,
  ``y`` the baseline;
- ``("suit", cx, cy, size, suit, fill)``: a suit symbol (``C D H S``) centred on ``cx, cy``.

The first shape is the felt, a rectangle as large as the picture (see :func:`scene_size`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Shape = tuple[Any, ...]

WIDTH = 1000  # a picture's width, and the layout's unless another is asked for
NARROWEST = 280  # the narrowest layout: below it text would run off the table
SMALLEST = 12  # the smallest text, in units
CARD_W, CARD_H, CARD_STEP = 34, 48, 37
MELD_STEP = 16  # melds overlapping their cards more than this take another row
TOP = 134  # the first player's panel, where the title, the status and the upcard row take one line each
PANEL_H = 156  # a panel with one row of melds: name, hand, melds
PANEL_SHORT = 92  # a panel without melds: name and hand only
MELD_ROW = 70  # a row of melds: its labels and its cards
RED, BLACK, JOKER_INK = "#c0172b", "#1b1b1b", "#7a2fa8"
FELT, PANEL, PANEL_ACT, INK, DIM = "#23643f", "#2e7a4e", "#3f9663", "#f4f1e8", "#cfe3d2"
GOLD = "#f2c14e"
SUIT_WORDS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}

# A character's width in thousandths of the text's size, bold (DejaVu Sans Bold's widest in each
# class, rounded up; plain text is taken as 9/10 of it, still wider than DejaVu Sans and Verdana).
_NARROW, _MID, _WIDE, _SYMBOL = "ijlI.,:;'!|·", " ()-/frtJ[]", "mwMW", "▶♠♣♥♦+="


def _char_width(ch: str) -> int:
    if ch in _NARROW:
        return 400
    if ch in _MID:
        return 500
    if ch in _WIDE:
        return 1100
    if ch in _SYMBOL:
        return 900
    if "A" <= ch <= "Z":
        return 850
    return 720


def text_width(text: str, size: int, bold: bool | int = False) -> float:
    """A generous estimate of how wide ``text`` is drawn at ``size`` (the layout's wrapping rule)."""
    return sum(_char_width(ch) for ch in text) * size * (1000 if bold else 900) / 1_000_000


def _fits(text: str, size: int, bold: bool | int, room: int) -> bool:
    # in integers, so that Python and JavaScript decide alike
    return sum(_char_width(ch) for ch in text) * size * (1000 if bold else 900) <= room * 1_000_000


def wrap(text: str, size: int, bold: bool | int, room: int, sep: str = " ") -> list[str]:
    """``text`` cut at ``sep`` into lines that fit ``room`` (a word longer than that stays whole)."""
    lines: list[str] = []
    line = ""
    for word in text.split(sep):
        longer = word if not line else line + sep + word
        if line and not _fits(longer, size, bold, room):
            lines.append(line)
            line = word
        else:
            line = longer
    lines.append(line)
    return lines


def height(players: int) -> int:
    """The largest table at :data:`WIDTH` (every panel with one row of melds, nothing wrapped): the
    size of pictures, which keep one size (a taller table makes a taller picture)."""
    return TOP + PANEL_H * players + 8


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
        out.append(("text", x + 4, y + 13, 12, "JK", JOKER_INK, "start", 1))
        if text.startswith("JK="):
            place = text[3:]
            suit = place[1]
            out.append(("text", x + 17, y + 28, 12, "as", JOKER_INK, "middle", 0))
            label = _rank(place[0])  # a high ace is an ace: its place in the run says it is high
            out.append(("text", x + 12, y + 44, 12, label, _ink(suit), "middle", 1))
            out.append(("suit", x + 27, y + 40, 12, suit, _ink(suit)))
        else:
            out.append(("text", x + 17, y + 38, 12, "joker", JOKER_INK, "middle", 0))
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
    """The distance between cards so that ``count`` of them fit in ``room`` units."""
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


def _meld_rows(
    laid: Sequence[Sequence[str]], labels: Sequence[str], room: int
) -> list[tuple[list[int], int]]:
    """The melds' rows, each (the melds in it, the distance between their cards): as many melds in
    a row as fit with their cards at least :data:`MELD_STEP` apart (all of them, at most)."""

    def step(melds: Sequence[int]) -> int:
        # the room the melds' labels need beyond their cards (however close) is taken off first
        free = room - 16 * (len(melds) - 1) - CARD_W * len(melds)
        for j in melds:
            free -= max(0, _room(labels[j]) - CARD_W - 8 * max(len(laid[j]) - 1, 0))
        spread = sum(max(len(laid[j]), 1) - 1 for j in melds)
        return CARD_STEP if spread <= 0 else max(8, min(CARD_STEP, free // spread))

    rows: list[list[int]] = []
    for j in range(len(laid)):
        if rows and step(rows[-1] + [j]) >= MELD_STEP:
            rows[-1].append(j)
        else:
            rows.append([j])
    return [(melds, step(melds)) for melds in rows]


def _room(text: str, size: int = SMALLEST, bold: int = 0) -> int:
    """The whole units ``text`` takes (a meld's label: at the smallest size)."""
    return int(text_width(text, size, bold)) + 1


def _layout(
    state: Mapping[str, Any],
    header: Mapping[str, Any],
    viewer: int | None,
    width: int,
    status: str | None,
) -> tuple[list[Shape], int]:
    if isinstance(width, bool) or not isinstance(width, int) or width < NARROWEST:
        raise ValueError(f"width must be a whole number of units, at least {NARROWEST}, got {width!r}")
    n = header["players"]
    names = header["names"]

    def player(p: int) -> str:
        return f"player {p}"

    out: list[Shape] = [("rect", 0, 0, width, 0, 0, FELT, "", 0)]  # its height is set at the end
    contract = str(state["contract"])
    title = (
        f"Deal {state['deal'] + 1}/{len(header['contracts'])} · contract {contract}: "
        f"{header['describe'][contract]} · dealer {player(state['dealer'])}"
    )
    view = "all hands" if viewer is None else f"{player(viewer)}'s view"
    room = width - 32
    y = 26
    # the title, the status under it, and whose view it is: beside the title, or under it
    if _fits(title, 17, 1, room - 24 - _room(view, 13)):
        out.append(("text", 16, y, 17, title, INK, "start", 1))
        shown: Shape = ("text", width - 16, y, 13, view, DIM, "end", 0)
    else:
        for k, line in enumerate(wrap(title, 17, 1, room)):
            y += 22 * (k > 0)
            out.append(("text", 16, y, 17, line, INK, "start", 1))
        y += 20
        shown = ("text", 16, y, 13, view, DIM, "start", 0)
    y += 24
    said = status if status is not None else _status(state, header, player)
    for k, line in enumerate(wrap(said, 14, 0, room)):
        y += 19 * (k > 0)
        out.append(("text", 16, y, 14, line, GOLD, "start", 0))
    out.append(shown)

    # the stock and the discard pile, each with its words beside it (or below, where they do not fit)
    row = y + 16
    out.append(("group", "stock"))
    if state["stock"]:
        card_back(out, 16, row)
    else:
        out.append(("rect", 16, row, CARD_W, CARD_H, 4, FELT, DIM, 1))
    out.append(("end",))
    rebuilds = state["rebuilds"]
    rebuild_text = "no limit on rebuilds" if rebuilds is None else f"rebuilds left {rebuilds}"
    out.append(("text", 58, row + 18, 13, f"stock {state['stock']}", INK, "start", 0))
    out.append(("text", 58, row + 36, 12, rebuild_text, DIM, "start", 0))
    # the upcard keeps its place as the numbers change: it is placed for the widest of them
    widest = rebuild_text if rebuilds is None else "rebuilds left 00"
    words = max(text_width("stock 000", 13), text_width(widest, 12))
    up_x = max(196 if width >= WIDTH else 0, 58 + int(words) + 20)
    out.append(("group", "upcard"))
    if state["up"]:
        card(out, up_x, row, state["up"])
    else:
        out.append(("rect", up_x, row, CARD_W, CARD_H, 4, FELT, DIM, 1))
    out.append(("end",))
    beside: list[tuple[str, int, str, int]] = [(f"discard pile {state['pile']}", 13, INK, 0)]
    if state["upFrom"] is not None and state["up"]:
        beside.append((f"top from {player(state['upFrom'])}", 12, DIM, 0))
    if state["phase"] == "BUY" and state["up"]:
        out.append(("rect", up_x - 4, row - 4, CARD_W + 8, CARD_H + 8, 6, "none", GOLD, 0))
        beside.append((f"on offer to {player(state['act'])}", 12, GOLD, 1))
    bottom = row + 68
    below = row + CARD_H + 22
    for k, (text, size, fill, bold) in enumerate(beside):
        if _fits(text, size, bold, width - 16 - (up_x + 42)):
            out.append(("text", up_x + 42, row + 18 * (k + 1), size, text, fill, "start", bold))
        else:
            out.append(("text", 16, below, size, text, fill, "start", bold))
            bottom = below + 14
            below += 18

    specs = header["melds"][contract]
    result = state["result"]
    y = bottom
    for p in range(n):
        melds = state["melds"][p]
        acting = p == state["act"]
        out.append(("group", f"player p{p}"))
        panel = len(out)
        out.append(("rect",))  # the panel, once its height is known
        mark = "▶ " if acting else ""
        named = f" · {names[p]}" if names[p] and names[p] != f"player_{p}" else ""
        name = f"{mark}{player(p)}{named}"
        out.append(("text", 20, y + 20, 14, name, INK, "start", 1))
        hand = state["hands"][p].split() if state["hands"][p] else []
        facts = [f"score {state['scores'][p]}"]
        if result is not None:
            facts.append(f"this deal {result['scores'][p]:+d}")
        facts += [f"buys {state['buys'][p]}", f"{len(hand)} card{'s' if len(hand) != 1 else ''}"]
        facts.append("down" if state["down"][p] else "not down")
        said = " · ".join(facts)
        top = y + 28
        if _fits(said, 13, 0, width - 40 - 24 - _room(name, 14, 1)):  # beside the name
            out.append(("text", width - 20, y + 20, 13, said, INK, "end", 0))
        else:  # below it, as many lines as it takes
            for line in wrap(said, 13, 0, width - 40, " · "):
                out.append(("text", 20, top + 10, 13, line, INK, "start", 0))
                top += 18
        # the hand
        face_up = viewer is None or viewer == p or state["phase"] in ("END", "GAME_OVER")
        step = _step(len(hand), width - 40)
        out.append(("group", "hand"))
        for i, text in enumerate(hand):
            if face_up:
                card(out, 20 + i * step, top, text)
            else:
                card_back(out, 20 + i * step, top)
        out.append(("end",))
        below = top + CARD_H + 16
        # the melds
        if melds:
            laid = [m.split() if m else [] for m in melds]
            for r, (row_melds, mstep) in enumerate(_meld_rows(laid, specs, width - 40)):
                x = 20
                for j in row_melds:
                    cards = laid[j]
                    out.append(("text", x, top + 66 + MELD_ROW * r, 12, specs[j], DIM, "start", 0))
                    out.append(("group", "meld"))
                    if not cards:
                        out.append(("rect", x, top + 70 + MELD_ROW * r, CARD_W, CARD_H, 4, "none", DIM, 1))
                    for i, text in enumerate(cards):
                        card(out, x + i * mstep, top + 70 + MELD_ROW * r, text)
                    out.append(("end",))
                    spread = mstep * (max(len(cards), 1) - 1) + CARD_W
                    x += max(spread, _room(specs[j])) + 16
                below = top + 70 + MELD_ROW * r + CARD_H + 10
        fill, stroke = (PANEL_ACT, GOLD) if acting else (PANEL, "")
        out[panel] = ("rect", 8, y, width - 16, below - 8 - y, 8, fill, stroke, 0)
        out.append(("end",))
        y = below
    drawn = y + 8
    out[0] = ("rect", 0, 0, width, max(drawn, height(n)), 0, FELT, "", 0)
    return out, drawn


def table_scene(
    state: Mapping[str, Any],
    header: Mapping[str, Any],
    viewer: int | None = None,
    *,
    width: int = WIDTH,
    status: str | None = None,
) -> list[Shape]:
    """The shapes of one table; ``viewer``: show only that seat's hand face up (None: all);
    ``width``: the units the table is laid out in (at least :data:`NARROWEST`); ``status``: the
    words under the title, where the drawing's own would mislead (the browser game's server says
    when the person has left, say).

    Every hand is face up at a deal's end, as the cards are counted.
    """
    return _layout(state, header, viewer, width, status)[0]


def drawn_height(
    state: Mapping[str, Any],
    header: Mapping[str, Any],
    viewer: int | None = None,
    *,
    width: int = WIDTH,
    status: str | None = None,
) -> int:
    """The height the table of ``state`` takes, laid out as :func:`table_scene` lays it out: at
    :data:`WIDTH`, at most :func:`height` unless a text wraps; pages show this much."""
    return _layout(state, header, viewer, width, status)[1]


def scene_size(scene: Sequence[Shape]) -> tuple[int, int]:
    """A picture's size: the felt's (the first shape), at least :func:`height` high."""
    felt = scene[0]
    return felt[3], felt[4]


def card_count(scene: Sequence[Shape]) -> dict[str, int]:
    """How many cards a scene draws: ``{"card": face up, "back": face down}``."""
    up = sum(1 for s in scene if s[0] == "group" and s[1] in ("card", "card joker"))
    back = sum(1 for s in scene if s[0] == "group" and s[1] == "card back")
    return {"card": up, "back": back}
