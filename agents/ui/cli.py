"""``shanghai-play``: the command that seats a person at a table, in the terminal
(:mod:`.terminal`) or in the browser (``--web``, :mod:`.web`); docs/play.md."""

from __future__ import annotations

import argparse
import secrets
import sys
import threading
import webbrowser
from collections.abc import Sequence
from typing import IO, NamedTuple

from shanghai_env.agents.registry import BOTS, shipped_models
from shanghai_env.agents.ui.terminal import HAVE_RICH, PlaySession, ReadLine
from shanghai_env.agents.ui.web.server import DEFAULT_PORT, start_server
from shanghai_env.agents.ui.web.server import Table as WebTable
from shanghai_env.cli import Parser, int_in, number_in, output_file_problem, run
from shanghai_env.engine import DEFAULT_MAX_MOVES_PER_DEAL, Game
from shanghai_env.rules import ALL_CONTRACTS, Rules

if HAVE_RICH:  # without the `play` extra main() says so
    from rich.console import Console


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="shanghai-play",
        description="Play Shanghai Rummy in the terminal against bots or a saved model.",
        epilog=(
            f"Players: the bots {', '.join(BOTS)}; a shipped player ({', '.join(sorted(shipped_models()))}); "
            "a saved player (.pt, .zip, .scorer); or module:factory (docs/bots.md)."
        ),
    )
    add = parser.add_argument
    add("--opponents", help="the other players, clockwise from you, e.g. greedy,planner,random")
    add("--players", type=int, help="number of players 3..8 (default 4)")
    add("--bot", help="the bot in every other seat (default greedy)")
    add("--seat", type=int, default=0, help="your seat, 0-based (default 0)")
    add("--contracts", type=_int_list, help="contracts to play in order, e.g. 1,2 (default 1..10)")
    add("--seed", type=int_in(0), help="deals and bots are reproducible from it (default: random)")
    add("--delay", type=number_in(0, 60), default=0.0, help="seconds to pause after each bot move (0..60)")
    add("--no-menu", action="store_true", help="do not list the legal moves at each prompt")
    add("--max-moves", type=int, default=DEFAULT_MAX_MOVES_PER_DEAL, help="end a deal after this many moves")
    add("--record", metavar="FILE", help="save the game as a game record (JSON) to FILE, to replay it later")
    web = parser.add_argument_group("the browser game (docs/play.md)")
    web.add_argument(
        "--web", action="store_true", help="play in a browser: start a local server and open its page"
    )
    web.add_argument(
        "--port", type=int_in(0, 65535), help="the server's port (default 8765; 0: any free port)"
    )
    web.add_argument(
        "--no-browser", action="store_true", help="do not open a browser (print the address only)"
    )
    return parser


class TableSetup(NamedTuple):
    """A table the command line asked for, checked: the rules, the person's seat, and the other
    players' names (clockwise from the person), each one :func:`~shanghai_env.agents.registry.make_agent`
    builds."""

    rules: Rules
    seat: int
    specs: list[str]


def check_table(parser: argparse.ArgumentParser, args: argparse.Namespace, default_bot: str) -> TableSetup:
    """The table of a parsed command line (the terminal game's or the browser game's), every player
    checked before any game starts; a bad option ends with ``parser.error`` (one line, status 2)."""
    # Imported here, not at module level: agents/ depends on this library, never the reverse.
    from shanghai_env.agents.registry import check_player, check_spec

    option = "--bot"
    if args.opponents is not None:
        option = "--opponents"
        if args.bot is not None:
            parser.error("--bot fills every other seat, --opponents names them one by one: give one of them")
        specs = [s.strip() for s in args.opponents.split(",")]
        if args.players is not None and args.players != len(specs) + 1:
            parser.error(f"--players {args.players} but --opponents names {len(specs)} players (plus you)")
    else:
        specs = [args.bot or default_bot] * ((args.players if args.players is not None else 4) - 1)
    try:
        specs = [check_spec(s) for s in specs]
    except ValueError as err:
        parser.error(f"argument {option}: {err}")
    n = len(specs) + 1
    if not 3 <= n <= 8:
        if args.opponents is not None:
            parser.error(f"--opponents names {n - 1} player(s), {n} with you; Shanghai is played by 3 to 8")
        parser.error(f"--players {n}: Shanghai is played by 3 to 8 players")
    if not 0 <= args.seat < n:
        parser.error(f"--seat must be 0..{n - 1}, got {args.seat}")
    if args.max_moves < 1:
        parser.error("--max-moves must be at least 1")
    try:
        contracts = ALL_CONTRACTS if args.contracts is None else tuple(args.contracts)
        rules = Rules(num_players=n, contracts=contracts, max_moves_per_deal=args.max_moves)
    except (TypeError, ValueError) as err:
        parser.error(f"argument --contracts: {err}")
    try:  # before the game: a model must be trained for this table, a factory must build an agent
        for spec in dict.fromkeys(specs):
            check_player(spec, rules, where="this game")
    except ValueError as err:
        parser.error(f"argument {option}: {err}")
    problem = output_file_problem(args.record) if args.record is not None else None
    if problem:
        parser.error(f"argument --record: {problem}")
    return TableSetup(rules, args.seat, specs)


def _stream_reader(stream: IO[str]) -> ReadLine:
    def read(prompt: str) -> str:
        line = stream.readline()
        if not line:
            raise EOFError
        return line.rstrip("\r\n")

    return read


def _terminal_reader(session: PlaySession) -> ReadLine:
    """input() with tab completion of move names and commands (where readline exists)."""
    try:
        import readline
    except ImportError:  # e.g. Windows: plain input
        return input
    matches: list[str] = []

    def complete(text: str, state: int) -> str | None:
        if state == 0:
            matches[:] = session.completions(readline.get_line_buffer().lstrip())
        return matches[state] if state < len(matches) else None

    readline.set_completer_delims("")
    readline.set_completer(complete)
    binding = "bind ^I rl_complete" if "libedit" in (readline.__doc__ or "") else "tab: complete"
    readline.parse_and_bind(binding)
    return input


def web_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``shanghai-play --web``: check the table, start the server, open the page, serve until
    Ctrl-C."""
    for option, given in (("--delay", args.delay != 0.0), ("--no-menu", args.no_menu)):
        if given:
            parser.error(f"{option} is for the terminal game, not --web")
    setup = check_table(parser, args, default_bot="shanghai_4p")
    table = WebTable(setup.rules, setup.seat, setup.specs, args.seed, args.record)
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        server = start_server(table, "127.0.0.1", port)
    except OSError as err:
        parser.error(f"argument --port: cannot listen on 127.0.0.1:{port} ({err.strerror}); try --port 0")
    print(f"Shanghai Rummy in your browser: {server.url}  (Ctrl-C stops the server)", flush=True)
    if not args.no_browser:
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
    finally:
        server.server_close()
        server.games.save_unfinished()
    return 0


def main(
    argv: Sequence[str] | None = None,
    *,
    console: Console | None = None,
    read_line: ReadLine | None = None,
    stdin: IO[str] | None = None,
) -> int:
    """Run the game; 0 when it was played to the end, 1 when the person left, 2 on a usage error.

    ``console`` (a rich Console), ``read_line`` (like ``input``) and ``stdin`` (a text stream of
    input lines) replace the terminal, for scripted play; without them stdin and stdout are used.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.web:  # the browser game needs no rich
        return web_main(parser, args)
    if args.port is not None or args.no_browser:
        parser.error("--port and --no-browser are for the browser game: add --web")
    if not HAVE_RICH:
        print("The terminal game needs the 'rich' package: pip install 'shanghai-env[play]'", file=sys.stderr)
        return 2
    from shanghai_env.agents.registry import make_agent

    setup = check_table(parser, args, default_bot="greedy")
    game, specs = Game(setup.rules), setup.specs
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    n = game.num_players
    seats = [(args.seat + k) % n for k in range(1, n)]
    bots = {p: make_agent(spec, seed + 1 + p) for p, spec in zip(seats, specs)}
    encoder = None
    if any(getattr(b, "needs_observation", False) for b in bots.values()):
        from shanghai_env.observation import ObservationEncoder

        encoder = ObservationEncoder(game.rules)
    interactive = read_line is None and stdin is None and sys.stdin.isatty() and sys.stdout.isatty()
    if console is None:
        console = Console(highlight=False)
    if read_line is None:
        read_line = _stream_reader(stdin if stdin is not None else sys.stdin)
    session = PlaySession(game, args.seat, bots, console, read_line, interactive=interactive, encoder=encoder)
    session.show_menu, session.delay = not args.no_menu, args.delay
    if interactive:
        session.read_line = _terminal_reader(session)
    try:
        return 0 if session.play(seed) else 1
    except KeyboardInterrupt:
        console.print("\n[yellow]Interrupted.[/]")
        return 1
    finally:
        if args.record:
            _save_record(session, args.record, seed)


def _save_record(session: PlaySession, path: str, seed: int) -> None:
    from shanghai_env.record import save

    if session.game.move_count == 0 and not session.game.deal_results:
        return
    try:
        save(session.record({"program": "shanghai_env.agents.ui.terminal", "seed": seed}), path)
    except OSError as err:
        session.console.print(f"[red]Could not save the game record to {path}: {err.strerror}[/]")
        return
    # a path is not wrapped, so that it can be copied
    session.console.print(f"Game record saved to {path}", highlight=False, soft_wrap=True)
    session.console.print(
        f"Replay it: python -m shanghai_env.draw.replay {path}", highlight=False, soft_wrap=True
    )


def cli() -> None:
    """The ``shanghai-play`` command."""
    run(main)


if __name__ == "__main__":
    cli()
