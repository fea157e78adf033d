"""``shanghai-draw`` (``python -m shanghai_env.draw``): pictures of a recorded game.

    shanghai-draw svg record.json --frame 120 -o table.svg             # the table at frame 120
    shanghai-draw png record.json --frame 120 --view 2 -o t.png        # player 2's view (Pillow)
    shanghai-draw replay record.json -o game.html                      # the HTML replay

Frames are numbered as in the replay: 0 is the first deal as dealt, then one per move, with the
table at each deal's end before the next deal. A bad command line, an unreadable or invalid
record, or an output that cannot be written ends with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from typing import NoReturn

from gymnasium.error import DependencyNotInstalled

from ..cli import Parser, number_in, output_file_problem, plain, run, write_atomically, writes_over
from ..record import load
from .replay import main as replay_main
from .replay import replay_frames
from .scene import WIDTH, scene_size, table_scene
from .svg import scene_svg

PROG = "shanghai-draw"
SCALES = (0.1, 4.0)  # PNG sizes 100 to 4000 pixels wide; 4 takes about 1.5 s and 300 MB


def _scale(text: str) -> float:
    """--scale: bounded, for a larger picture takes minutes and gigabytes."""
    low, high = SCALES
    try:
        return number_in(low, high, what="a size")(text)
    except argparse.ArgumentTypeError as err:
        raise argparse.ArgumentTypeError(
            f"{err} ({high:g} is already {high * WIDTH:.0f} pixels wide; larger ones take minutes)"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    # the docstring's first paragraph as plain text
    parser = Parser(prog=PROG, description=plain(__doc__.split("\n\n")[0]))
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (("svg", "an SVG file"), ("png", "a PNG file (needs Pillow, the draw extra)")):
        p = sub.add_parser(name, help=f"the table at one frame of a record as {what}")
        p.add_argument("record", help="a game record (JSON)")
        p.add_argument(
            "--frame", type=int, default=-1, help="the frame (default: the last; negative counts back)"
        )
        p.add_argument("--view", type=int, default=None, help="show only this seat's hand face up")
        if name == "png":
            low, high = SCALES
            p.add_argument(
                "--scale",
                type=_scale,
                default=1.0,
                help=f"the size relative to the SVG's 1000 pixels wide, {low:g} to {high:g} (default 1)",
            )
        p.add_argument(
            "-o", "--output", required=True, help=f"the {name.upper()} file to write (not the record)"
        )
    sub.add_parser("replay", help=f"the HTML replay ({PROG} replay --help)", add_help=False)
    return parser


def fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Usage, then one line of error, exit status 2."""
    parser.error(" ".join(message.splitlines()))


def output_problem(output: str, record: str) -> str | None:
    """Why ``output`` cannot be written (a folder, under a file, unwritable, the record itself)."""
    problem = output_file_problem(output) or writes_over(output, [record])
    return f"-o/--output: {problem}" if problem else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["replay"]:
        return replay_main(argv[1:], prog=f"{PROG} replay")
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = output_problem(args.output, args.record)
    if problem is None and args.command == "png" and not args.output.lower().endswith(".png"):
        problem = f"-o/--output: png writes a PNG file: name it *.png, got {args.output!r}"
    if problem:
        fail(parser, problem)
    if args.command == "png":
        from .raster import require_pillow

        try:
            require_pillow()
        except DependencyNotInstalled as err:
            fail(parser, str(err))
    try:
        record = load(args.record)
    except ValueError as err:  # it names the file
        fail(parser, str(err))
    try:
        header, states, _ = replay_frames(record)
    except ValueError as err:
        fail(parser, f"{args.record}: {err}")
    if not -len(states) <= args.frame < len(states):
        fail(parser, f"--frame must be 0..{len(states) - 1} (or negative, from the end), got {args.frame}")
    if args.view is not None and not 0 <= args.view < header["players"]:
        fail(parser, f"--view must be a seat 0..{header['players'] - 1}, got {args.view}")
    scene = table_scene(states[args.frame], header, args.view)
    size = scene_size(scene)
    if args.command == "svg":
        data: str | bytes = scene_svg(scene, *size) + "\n"
    else:
        from .raster import scene_image

        png = io.BytesIO()
        scene_image(scene, *size, scale=args.scale).save(png, format="PNG", optimize=True)
        data = png.getvalue()
    try:
        write_atomically(args.output, data)
    except OSError as err:
        fail(parser, f"-o/--output: cannot write {args.output!r}: {err.strerror or err}")
    print(f"wrote {args.output}")
    return 0


def cli() -> None:
    """The ``shanghai-draw`` command."""
    run(main)


if __name__ == "__main__":
    cli()
