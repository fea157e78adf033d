"""``python -m shanghai_env.draw``: pictures of a recorded game.

    python -m shanghai_env.draw svg record.json --frame 120 -o table.svg      # the table at frame 120
    python -m shanghai_env.draw png record.json --frame 120 --view 2 -o t.png # player 2's view (Pillow)
    python -m shanghai_env.draw replay record.json -o game.html               # the HTML replay

Frames are numbered as in the replay: 0 is the first deal as dealt, then one per move, with the
table at each deal's end before the next deal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..record import load
from .replay import main as replay_main
from .replay import replay_frames
from .scene import WIDTH, height, table_scene
from .svg import scene_svg


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m shanghai_env.draw", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (("svg", "an SVG file"), ("png", "a PNG file (needs Pillow, the draw extra)")):
        p = sub.add_parser(name, help=f"the table at one frame of a record as {what}")
        p.add_argument("record", help="a game record (JSON)")
        p.add_argument(
            "--frame", type=int, default=-1, help="the frame (default: the last; negative counts back)"
        )
        p.add_argument("--view", type=int, default=None, help="show only this seat's hand face up")
        p.add_argument("--scale", type=float, default=1.0, help="PNG only: size relative to the SVG")
        p.add_argument("-o", "--output", required=True, help="the file to write")
    sub.add_parser(
        "replay", help="the HTML replay (python -m shanghai_env.draw replay --help)", add_help=False
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["replay"]:
        return replay_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        header, states, _ = replay_frames(load(args.record))
    except (OSError, ValueError) as err:
        parser.error(f"{args.record}: {err}")
    if not -len(states) <= args.frame < len(states):
        parser.error(f"--frame must be 0..{len(states) - 1} (or negative, from the end), got {args.frame}")
    if args.view is not None and not 0 <= args.view < header["players"]:
        parser.error(f"--view must be a seat 0..{header['players'] - 1}")
    scene = table_scene(states[args.frame], header, args.view)
    size = (WIDTH, height(header["players"]))
    out = Path(args.output)
    if args.command == "svg":
        out.write_text(scene_svg(scene, *size) + "\n", encoding="utf-8")
    else:
        from .raster import scene_image

        scene_image(scene, *size, scale=args.scale).save(out, optimize=True)
    print(f"wrote {out}")
    return 0


def cli() -> None:
    """The ``shanghai-draw`` command."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
