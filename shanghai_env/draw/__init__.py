"""Pictures of a game: SVG tables, rasters for ``render_mode="rgb_array"``, HTML replays.

Kept apart from the rules: nothing in the engine imports this package.

- :func:`table_state` reads a :class:`~shanghai_env.engine.Game` into a small JSON-able dict;
- :func:`table_svg` draws it as SVG (plain string building, no dependency);
- :func:`table_array` rasterises the same drawing to an ``(H, W, 3)`` uint8 array (Pillow, the
  ``draw`` extra);
- :func:`write_replay` turns a game record into one self-contained HTML file that steps
  through the game (``python -m shanghai_env.draw.replay record.json -o game.html``).
"""

from __future__ import annotations

from typing import Any

from .scene import table_scene
from .state import table_header, table_state
from .svg import scene_svg, table_svg

__all__ = [
    "scene_svg",
    "table_array",
    "table_header",
    "table_scene",
    "table_state",
    "table_svg",
    "write_replay",
]


def table_array(*args: Any, **kwargs: Any) -> Any:
    """See :func:`shanghai_env.draw.raster.table_array` (imports Pillow on first use)."""
    from .raster import table_array as draw

    return draw(*args, **kwargs)


def write_replay(*args: Any, **kwargs: Any) -> Any:
    """See :func:`shanghai_env.draw.replay.write_replay`."""
    from .replay import write_replay as write

    return write(*args, **kwargs)
