"""The table as pixels: the SVG drawing's shapes painted with Pillow (the ``draw`` extra).

Pillow's wheels carry FreeType and a font of their own, so this works from ``pip install``
alone, without system libraries or fonts (resvg-py needs system fonts for text, CairoSVG the
cairo library). Suits are drawn as shapes, so no font needs the suit glyphs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .scene import Shape, scene_size, table_scene
from .state import table_header, table_state

if TYPE_CHECKING:
    from ..engine import DealResult, Game

EXTRA_HINT = "pip install 'shanghai-env[draw]'"


def require_pillow() -> Any:
    """The ``PIL`` package, or an error that names the extra to install."""
    try:
        import PIL.Image
        import PIL.ImageDraw
        import PIL.ImageFont
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            f"drawing the table as pixels needs Pillow (>= 10.1), from the 'draw' extra: {EXTRA_HINT}"
        ) from err
    return PIL


@cache
def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one small bitmap font
        return ImageFont.load_default()


def _heart(n: int = 36) -> list[tuple[float, float]]:
    pts = []
    for i in range(n):
        t = 2 * math.pi * i / n
        x = 16 * math.sin(t) ** 3
        y = 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t)
        pts.append((x / 17, -(y + 2) / 17))
    return pts


_HEART = _heart()
_SPADE = [(x, -y - 0.15) for x, y in _HEART]
_DIAMOND = [(0.0, -1.0), (0.72, 0.0), (0.0, 1.0), (-0.72, 0.0)]
_STEM = [(0.0, 0.1), (0.3, 1.0), (-0.3, 1.0)]


def _paint_suit(draw: Any, cx: float, cy: float, size: float, suit: str, fill: str) -> None:
    r = size * 0.42

    def poly(points: Sequence[tuple[float, float]]) -> None:
        draw.polygon([(cx + x * r, cy + y * r) for x, y in points], fill=fill)

    if suit == "H":
        poly(_HEART)
    elif suit == "D":
        poly(_DIAMOND)
    elif suit == "S":
        poly(_SPADE)
        poly(_STEM)
    elif suit == "T":
        poly([(-0.7, -0.8), (0.9, 0.0), (-0.7, 0.8)])
    else:  # clubs: three leaves and a stem
        leaf = r * 0.46
        for dx, dy in ((0.0, -0.48), (-0.5, 0.18), (0.5, 0.18)):
            x, y = cx + dx * r, cy + dy * r
            draw.ellipse([x - leaf, y - leaf, x + leaf, y + leaf], fill=fill)
        poly(_STEM)


_GLYPH_SUITS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "▶": "T"}  # T: a triangle


def _paint_text(
    draw: Any, x: float, y: float, size: float, text: str, fill: str, anchor: str, bold: int
) -> None:
    """Text with its baseline at ``y``; suit glyphs in it are painted as shapes."""
    font = _font(max(1, round(size)))
    stroke = max(1, round(size / 26)) if bold else 0
    pieces: list[tuple[str, float]] = []  # (text or a suit letter prefixed by "\0", width)
    run = ""
    for ch in text:
        if ch in _GLYPH_SUITS:
            if run:
                pieces.append((run, font.getlength(run)))
                run = ""
            pieces.append(("\0" + _GLYPH_SUITS[ch], size * 0.8))
        else:
            run += ch
    if run:
        pieces.append((run, font.getlength(run)))
    total = sum(w for _, w in pieces)
    left = x - (total if anchor == "end" else total / 2 if anchor == "middle" else 0)
    for piece, w in pieces:
        if piece.startswith("\0"):
            _paint_suit(draw, left + w / 2, y - size * 0.33, size * 0.9, piece[1], fill)
        else:
            draw.text(
                (left, y), piece, fill=fill, font=font, anchor="ls", stroke_width=stroke, stroke_fill=fill
            )
        left += w


def scene_image(
    scene: Sequence[Shape], width: int, height: int, scale: float = 1.0, supersample: int = 2
) -> Any:
    """A Pillow RGB image of ``scene`` (see :mod:`.scene`), ``scale`` times its size.

    Drawn ``supersample`` times larger and scaled down, for smooth edges. Raises ValueError for
    a ``scale`` that is not a positive finite number.
    """
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    pil = require_pillow()
    k = scale * max(1, supersample)
    out_size = (max(1, round(width * scale)), max(1, round(height * scale)))
    image = pil.Image.new("RGB", (max(1, round(width * k)), max(1, round(height * k))), "white")
    draw = pil.ImageDraw.Draw(image)
    for shape in scene:
        kind = shape[0]
        if kind == "rect":
            _, x, y, w, h, r, fill, stroke, _dash = shape
            box = [x * k, y * k, (x + w) * k - 1, (y + h) * k - 1]
            width_px = max(1, round((2 if fill == "none" else 1) * k))
            draw.rounded_rectangle(
                box,
                radius=r * k,
                fill=None if fill == "none" else fill,
                outline=stroke or None,
                width=width_px if stroke else 0,
            )
        elif kind == "text":
            _, x, y, size, text, fill, anchor, bold = shape
            _paint_text(draw, x * k, y * k, size * k, text, fill, anchor, bold)
        elif kind == "suit":
            _, cx, cy, size, suit, fill = shape
            _paint_suit(draw, cx * k, cy * k, size * k, suit, fill)
    if image.size != out_size:
        image = image.resize(out_size, pil.Image.LANCZOS)
    return image


def table_image(
    game: Game,
    viewer: int | None = None,
    names: Sequence[str] | None = None,
    *,
    result: DealResult | None = None,
    scale: float = 1.0,
    supersample: int = 2,
) -> Any:
    """The table of ``game`` (as :func:`~shanghai_env.draw.svg.table_svg` draws it) as a Pillow image."""
    scene = table_scene(table_state(game, result), table_header(game, names), viewer)
    return scene_image(scene, *scene_size(scene), scale, supersample)


def table_array(
    game: Game,
    viewer: int | None = None,
    names: Sequence[str] | None = None,
    *,
    scale: float = 1.0,
    supersample: int = 2,
) -> np.ndarray:
    """The table of ``game`` as an ``(H, W, 3)`` uint8 array (for ``render_mode="rgb_array"``)."""
    image = table_image(game, viewer, names, scale=scale, supersample=supersample)
    return np.asarray(image, dtype=np.uint8).copy()
