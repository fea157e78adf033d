"""A game record as one self-contained HTML page that steps through the game.

    python -m shanghai_env.draw.replay record.json -o game.html

The page needs no server and no network: the table of every moment ("frame") is embedded as
JSON, each frame only where it differs from the one before, and drawn by inline JavaScript the
way :mod:`.scene` draws it. Frame 0 is the first deal as dealt; then one frame per move, and at
a deal's end one frame with the table as the deal ended (every hand face up, the deal's scores)
before the next deal is dealt. Buttons, the arrow keys (left/right: a move, up/down: a deal), a
slider and a deal menu step through it; a menu shows all hands or one player's view. The
address remembers where you are: ``game.html#step=120&view=2`` opens at frame 120 in player 2's
view.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

from ..cli import Parser, output_file_problem, run, write_atomically, writes_over
from ..engine import NO_PLAYER, Phase
from ..melds import describe_contract
from ..moves import MoveKind
from ..narrate import describe_move
from ..record import Step, iter_replay, load, start_game
from .state import table_header, table_state

PER_PLAYER = ("hands", "melds", "buys", "down", "scores")


def _player(p: int) -> str:
    return f"player {p}"


def deal_start_caption(game: Any) -> str:
    return (
        f"Deal {game.deal + 1} begins: contract {game.contract} ({describe_contract(game.contract)}), "
        f"{_player(game.dealer)} deals, {_player(game.turn_player)} plays first"
    )


def step_caption(step: Step) -> str:
    """The move in words, with what followed at once (the draw from the stock, a deal's end)."""
    before, game = step.before, step.game
    words = describe_move(before, step.move, style="symbols")
    move = step.move
    if step.ended is not None:
        result = step.ended
        if result.out_player != NO_PLAYER:
            return f"{words} and goes out{' blind' if result.blind else ''}: deal {step.deal + 1} is over"
        if move is None:
            return f"{words}: nobody went out"
        return f"{words}; the stock has run out: deal {step.deal + 1} ends with nobody out"
    if (
        move is not None
        and move.kind in (MoveKind.DRAW, MoveKind.PASS, MoveKind.BUY)
        and game.phase == Phase.PLAY
    ):
        joiner = " and" if move.kind == MoveKind.DRAW else ";"
        drawer = "draws" if move.kind == MoveKind.DRAW else f"{_player(game.turn_player)} draws"
        return f"{words}{joiner} {drawer} from the stock"
    return words


def replay_frames(record: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(header, the table of every frame, every frame's caption) of a record, checked by replay."""
    first = start_game(record)
    header = table_header(first, record["players"])
    states = [table_state(first)]
    captions = [deal_start_caption(first)]
    for step in iter_replay(record, copies=True):
        if step.ended is not None and step.deal_end is not None:
            states.append(table_state(step.deal_end, step.ended))
            captions.append(step_caption(step))
            if not step.game.game_over:
                states.append(table_state(step.game))
                captions.append(deal_start_caption(step.game))
        else:
            states.append(table_state(step.game))
            captions.append(step_caption(step))
    return header, states, captions


def encode_frames(states: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each frame as its differences from the one before (per player, for per-player lists)."""
    out: list[dict[str, Any]] = []
    prev: Mapping[str, Any] | None = None
    for state in states:
        if prev is None:
            out.append(dict(state))
        else:
            diff: dict[str, Any] = {}
            for key, value in state.items():
                old = prev[key]
                if value == old:
                    continue
                if key in PER_PLAYER:
                    diff[key] = {str(i): v for i, (v, o) in enumerate(zip(value, old)) if v != o}
                else:
                    diff[key] = value
            out.append(diff)
        prev = state
    return out


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


CSS = """
body { margin: 0; background: #153d27; color: #f4f1e8;
  font: 14px/1.4 "DejaVu Sans", Verdana, Arial, sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 10px; }
h1 { font-size: 18px; margin: 4px 0 8px; }
.controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 8px; }
button, select { background: #2e7a4e; color: #f4f1e8; border: 1px solid #5fae7e; border-radius: 4px;
  padding: 4px 8px; font: inherit; cursor: pointer; }
button:hover { background: #3f9663; }
#slider { flex: 1 1 200px; }
#where { min-width: 120px; text-align: right; color: #cfe3d2; }
#caption { font-size: 16px; font-weight: bold; color: #f2c14e; min-height: 24px; margin: 6px 0; }
#log { color: #cfe3d2; font-size: 12px; line-height: 17px; height: 85px; overflow: hidden; }
#log div { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#table svg { height: auto; display: block; margin: 0 auto; border-radius: 8px; }
/* a wide screen: the moves beside the table, so that a four-player table is in view at 1400x900 */
@media (min-width: 1360px) {
  main { max-width: 1340px; }
  .stage { display: flex; flex-direction: row-reverse; gap: 16px; align-items: flex-start; }
  .moves { flex: 1 1 0; min-width: 0; }
  #table { flex: 0 0 1000px; }
}
footer { color: #9fc7ab; font-size: 12px; margin-top: 8px; }
"""


def _read(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def table_script() -> str:
    """The JavaScript that draws a table (``tableScene``, ``sceneSvg``), as :mod:`.scene` does:
    one source for the replay and the browser game (:mod:`shanghai_env.agents.ui.web`)."""
    return _read("table.js")


def replay_html(record: Mapping[str, Any], title: str | None = None) -> str:
    """The whole page for ``record`` (replayed and checked first)."""
    header, states, captions = replay_frames(record)
    names = ", ".join(f"{_player(p)} {n}" for p, n in enumerate(header["names"]))
    title = title or f"Shanghai Rummy · {header['players']} players · {names}"
    data = {
        "header": header,
        "frames": encode_frames(states),
        "captions": captions,
        "record": {k: record[k] for k in ("package", "start", "meta") if k in record},
    }
    script = table_script() + "\n" + _read("replay.js")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_escape(title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<h1>{_escape(title)}</h1>
<div class="controls">
<button id="first" title="first frame (Home)">|◀</button>
<button id="prevdeal" title="start of this deal, or the deal before (↑)">◀◀ deal</button>
<button id="prev" title="one move back (←)">◀</button>
<button id="play" title="play or pause (space)">▶ play</button>
<button id="next" title="one move on (→)">▶</button>
<button id="nextdeal" title="next deal (↓)">deal ▶▶</button>
<button id="last" title="last frame (End)">▶|</button>
<input id="slider" type="range" min="0" max="0" value="0" aria-label="frame">
<span id="where"></span>
</div>
<div class="controls">
<select id="deal" aria-label="jump to a deal"></select>
<select id="view" aria-label="whose cards are shown"><option value="all">all hands</option></select>
</div>
<div class="stage">
<div class="moves"><div id="log"></div><div id="caption"></div></div>
<div id="table"></div>
</div>
<footer>← → one move · ↑ ↓ one deal · Home End · space plays · the address (#step=N&amp;view=P) keeps
the frame and the view. Made by {_escape(str(record.get("package", "shanghai-env")))}.</footer>
</main>
<script id="replay-data" type="application/json">{_script_json(data)}</script>
<script>
{script}
</script>
</body>
</html>
"""


def write_replay(record: Mapping[str, Any] | str | Path, path: str | Path, title: str | None = None) -> Path:
    """Write the HTML replay of ``record`` (a record, or the path of one) to ``path``, whole or
    not at all. Raises ValueError for an invalid record or a ``path`` that is the record's file,
    OSError when ``path`` cannot be written."""
    if not isinstance(record, Mapping):
        problem = writes_over(str(path), [str(record)])
        if problem:
            raise ValueError(problem)
        record = load(record)
    write_atomically(path, replay_html(record, title))
    return Path(path)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog or "python -m shanghai_env.draw.replay",
        description="Turn a game record (JSON) into one self-contained HTML page that replays the game.",
    )
    parser.add_argument("record", help="a game record, as written by evaluate.py --record or play --record")
    parser.add_argument(
        "-o", "--output", help="the HTML file to write (default: the record's name with .html)"
    )
    parser.add_argument("--title", help="the page's title")
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """The replay command: 0 when the page is written; a bad command line, an unreadable or
    invalid record, or an output that cannot be written ends with one line and status 2."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)

    def fail(message: str) -> NoReturn:
        parser.error(" ".join(message.splitlines()))

    try:
        output = args.output if args.output is not None else str(Path(args.record).with_suffix(".html"))
    except ValueError:  # "", "/", "..": no name to put .html on
        fail(f"cannot name the page after the record {args.record!r}: give -o/--output")
    problem = output_file_problem(output) or writes_over(output, [args.record])
    if problem:
        fail(f"{'-o/--output' if args.output is not None else 'the output (the default: no -o)'}: {problem}")
    try:
        record = load(args.record)
    except ValueError as err:  # it names the file
        fail(str(err))
    try:
        page = replay_html(record, args.title)
    except ValueError as err:
        fail(f"{args.record}: {err}")
    try:
        write_atomically(output, page)
    except OSError as err:
        fail(f"cannot write {output!r}: {err.strerror or err}")
    print(f"wrote {output} ({len(page.encode('utf-8')) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    run(main)
