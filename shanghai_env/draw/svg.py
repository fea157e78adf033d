"""The table as SVG, by plain string building (no dependency).

``table_svg(game)`` draws every hand face up; ``table_svg(game, viewer=2)`` only player 2's, the
others face down, as player 2 sees the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .scene import Shape, scene_size, table_scene
from .state import table_header, table_state

if TYPE_CHECKING:
    from ..engine import DealResult, Game

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
SUIT_GLYPHS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def scene_svg(scene: Sequence[Shape], width: int, height: int) -> str:
    """One ``<svg>`` element drawing ``scene`` (see :mod:`.scene`)."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}">'
    ]
    for shape in scene:
        kind = shape[0]
        if kind == "group":
            parts.append(f'<g class="{shape[1]}">')
        elif kind == "end":
            parts.append("</g>")
        elif kind == "rect":
            _, x, y, w, h, r, fill, stroke, dash = shape
            attrs = f'x="{x}" y="{y}" width="{w}" height="{h}" rx="{r}" fill="{fill}"'
            if stroke:
                attrs += f' stroke="{stroke}" stroke-width="{2 if fill == "none" else 1}"'
            if dash:
                attrs += ' stroke-dasharray="4 3"'
            parts.append(f"<rect {attrs}/>")
        elif kind == "text":
            _, x, y, size, text, fill, anchor, bold = shape
            weight = ' font-weight="bold"' if bold else ""
            parts.append(
                f'<text x="{x}" y="{y}" font-size="{size}" fill="{fill}" text-anchor="{anchor}"{weight}>'
                f"{escape(text)}</text>"
            )
        elif kind == "suit":
            _, cx, cy, size, suit, fill = shape
            # the glyph's baseline sits about a third of its size below its centre
            parts.append(
                f'<text x="{cx}" y="{cy + size // 3}" font-size="{size}" fill="{fill}" '
                f'text-anchor="middle">{SUIT_GLYPHS[suit]}</text>'
            )
        else:
            raise ValueError(f"unknown shape {kind!r}")
    parts.append("</svg>")
    return "".join(parts)


def table_svg(
    game: Game,
    viewer: int | None = None,
    names: Sequence[str] | None = None,
    *,
    result: DealResult | None = None,
) -> str:
    """The table of ``game`` as an SVG document: every meld (declared jokers shown "JK as 7H"),
    the discard pile's top, the stock, the hands (``viewer``: only that seat's face up), buys
    left, scores, whose turn and what phase, a pending buy offer."""
    if viewer is not None and not (isinstance(viewer, int) and 0 <= viewer < game.num_players):
        raise ValueError(f"viewer must be a seat 0..{game.num_players - 1} or None, got {viewer!r}")
    header = table_header(game, names)
    scene = table_scene(table_state(game, result), header, viewer)
    return scene_svg(scene, *scene_size(scene))
