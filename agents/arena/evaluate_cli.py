"""Tournament director: play agents against each other on duplicate deals and report who is better.

Example (docs/bots.md gives the bots' results of this command with ``--games 800``)::

    python evaluate.py --players planner,greedy,random,random --games 400 --seed 0 --out results/

Players are bot names (random, greedy, planner), paths of saved MaskablePPO models (.zip), or
``module:factory`` for any agent; 3 to 8 of them. See ``python evaluate.py --help`` and
``agents/arena/tournament.py`` for how games are scheduled and ``agents/arena/stats.py`` for the statistics.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from collections.abc import Sequence
from typing import Any

from shanghai_env.agents.arena.ray_address import connection_problem, ray_address_problem
from shanghai_env.agents.arena.report import (
    CHART_FILE,
    GAMES_FILE,
    RECORDS_FOLDER,
    SUMMARY_FILE,
    outputs_problem,
    print_tables,
    write_outputs,
)
from shanghai_env.agents.arena.runner import DEFAULT_MAX_MOVES_PER_DEAL
from shanghai_env.agents.arena.stats import Summary, summarize_tournament
from shanghai_env.agents.arena.stored_games import append_games, drop_cut_line, played_path, read_games
from shanghai_env.agents.arena.tasks import Task, current_versions, describe_tasks, task_named, task_record
from shanghai_env.agents.arena.tournament import (
    RAY_MISSING,
    TournamentConfig,
    one_thread_per_worker,
    run_tournament,
    start_ray,
)
from shanghai_env.agents.registry import (
    check_player,
    check_spec,
    contracts_arg,
    describe_allowed,
    player_pin,
)
from shanghai_env.cli import Parser, given, prepare_output, require_extra, run


def _players(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",")]
    if len(names) == 1:  # the player under test of a --task (checked in main)
        try:
            return [check_spec(names[0])]
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    if not 3 <= len(names) <= 8:
        raise argparse.ArgumentTypeError(
            f"a game seats 3 to 8 players, got {len(names)} (with --task: the one player under test); "
            f"list 3-8 of: {describe_allowed()}"
        )
    try:
        return [check_spec(s) for s in names]
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"the seed is a non-negative integer, got {text!r}")
    return value


def _record(text: str) -> int:
    """``all`` (-1) or a number of games to record."""
    return -1 if text.strip().lower() == "all" else _positive(text)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``evaluate.py``."""
    p = Parser(
        prog="shanghai-evaluate",
        description="Play a Shanghai Rummy tournament between bots and trained models.",
    )
    p.add_argument(
        "--players", type=_players, required=True, help=f"3-8 comma-separated players: {describe_allowed()}"
    )
    p.add_argument(
        "--task",
        default=None,
        metavar="NAME",
        help="a benchmark task (docs/benchmark.md): its table, reference players, contracts, games and "
        "seed; --players then names the one player under test. A bare name is the task's current "
        f"version. Tasks: {describe_tasks()}",
    )
    p.add_argument(
        "--games",
        type=_positive,
        default=400,
        help="games to play, rounded up to whole rounds of the seat design (6 games for 3 players, "
        "24 for 4, 20, 60, 42, 112 for 5-8; docs/bots.md)",
    )
    p.add_argument("--seed", type=_seed, default=0, help="tournament seed: decks, dealers and agent seeds")
    p.add_argument(
        "--out",
        default="results",
        help="output folder (created if missing; default: results); an evaluation into a folder that "
        "holds one writes summary-2.json, games-2.csv, scores-2.png (then -3, ...) beside it",
    )
    p.add_argument(
        "--contracts",
        type=contracts_arg,
        default=None,
        help="contracts to play, e.g. 1 or 1,2,3 (default: all ten)",
    )
    p.add_argument(
        "--workers",
        type=_positive,
        default=None,
        help="worker processes (default: all cores); with --ray: the most Ray tasks at once (default: all)",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="play the games as Ray tasks: on a new local Ray (no ADDRESS, or local), on the cluster "
        "this node belongs to (auto) or on the cluster at HOST:6379 or ray://HOST:10001 "
        "(docs/rllib.md; needs the rllib extra)",
    )
    p.add_argument(
        "--no-duplicate",
        dest="duplicate",
        action="store_false",
        help="fresh decks for every game instead of replaying each deck set in every seat rotation",
    )
    p.add_argument(
        "--max-moves-per-deal",
        type=_positive,
        default=DEFAULT_MAX_MOVES_PER_DEAL,
        help="end a deal after this many moves, everybody scoring their hand (recorded as capped)",
    )
    p.add_argument(
        "--record",
        type=_record,
        default=0,
        metavar="N|all",
        help="write the game records (JSON, docs/replay.md) of the first N games, or all, to OUT/records/ "
        "(records-2/ for a folder's second evaluation, ...)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="print no tables")
    return p


def _start_ray(parser: argparse.ArgumentParser, address: str, workers: int | None) -> bool:
    """Join the cluster at ``address`` or start a local Ray before the first game; a missing Ray
    or a cluster that cannot be joined exits with status 2 and one line. True if Ray was started."""
    problem = ray_address_problem(address)
    if problem:
        parser.error(f"argument --ray: {problem}")
    try:
        return start_ray(address, num_cpus=workers)
    except ImportError:
        parser.error(f"argument --ray: {RAY_MISSING}")
    except (ConnectionError, ValueError, RuntimeError) as err:
        parser.error(f"argument --ray: {connection_problem(address, err)}")


def _apply_task(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Task:
    """Fill in the table, contracts, games and seed of ``--task``; the task fixes them, so giving
    any of them too is an error. Returns the task (the version played)."""
    try:
        task = task_named(args.task)
    except ValueError as err:
        parser.error(f"argument --task: {err}")
    fixed = {"--contracts": "contracts", "--games": "games", "--seed": "seed"}
    for option, dest in fixed.items():
        if dest in given(args):
            parser.error(f"argument {option}: --task {task.id} fixes it; leave it out")
    if not args.duplicate:
        parser.error(f"argument --no-duplicate: --task {task.id} plays duplicate games; leave it out")
    if len(args.players) != 1:
        parser.error(
            f"argument --players: with --task, name the one player under test, got {len(args.players)}"
        )
    args.players = list(task.players(args.players[0]))
    args.contracts, args.games, args.seed = task.contracts, task.games, task.seed
    return task


def rounding_notice(config: TournamentConfig, asked: str) -> str | None:
    """One line when more games will be played than ``asked`` for (whole rounds of the seat
    design), else None."""
    if config.total_games == config.games:
        return None
    per_round = config.seat_design.games_per_round
    return (
        f"{asked} rounded up to {config.total_games} games: whole rounds of the seat design "
        f"({per_round} games for {config.num_players} players)"
    )


def _play(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    config: TournamentConfig,
    played: list[Any],
    path: str,
) -> tuple[list[Any], float, int]:
    """Play the games not ``played`` yet (local processes, or Ray tasks with ``--ray``), each
    batch appended to the file ``path`` as it finishes: every game, the seconds this sitting
    took and the workers it used."""
    started_ray = args.ray is not None and _start_ray(parser, args.ray, args.workers)
    try:
        backend = "processes" if args.ray is None else "ray"
        if backend == "ray":  # the most tasks at once: --workers, or every CPU of the cluster
            import ray

            cpus = int(ray.cluster_resources().get("CPU", 1))
            workers = min(args.workers, cpus) if args.workers else cpus
        else:
            workers = args.workers or os.cpu_count() or 1
        run_workers = args.workers if backend == "ray" else workers
        start = time.perf_counter()
        kwargs: dict[str, Any] = {"workers": run_workers, "backend": backend, "played": played}
        kwargs["on_games"] = lambda games: append_games(path, games)
        if args.progress:
            from tqdm import tqdm

            with tqdm(total=config.total_games, initial=len(played), unit="game", desc="games") as bar:
                results = run_tournament(config, progress=bar.update, **kwargs)
        else:
            results = run_tournament(config, **kwargs)
        seconds = time.perf_counter() - start
    finally:
        if started_ray:
            import ray

            ray.shutdown()
    return results, seconds, workers


def main(argv: Sequence[str] | None = None) -> Summary:
    """Run a tournament from command-line arguments; return its summary.

    Everything is checked before the first game (models are opened, factories called, the output
    folder created and its output paths checked): a bad argument exits with status 2 and one line
    saying what is wrong. Each batch of games is kept as it finishes
    (:mod:`shanghai_env.agents.arena.stored_games`): the same command after a stop plays only the games
    not kept, to the same outputs. The outputs are written when the games are done, ``summary.json`` last
    (:func:`shanghai_env.agents.arena.report.write_outputs`): an ``INCOMPLETE`` file says an
    evaluation's outputs are not whole. An evaluation into a folder that holds another replaces
    nothing of it: its outputs are ``summary-2.json``, ``games-2.csv``, ``scores-2.png`` and
    ``records-2/`` (then ``-3``, ...), and a line on stderr says so.
    """
    one_thread_per_worker()  # with --workers 1 this process plays the games itself
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.out:  # one spelling of the folder in every message: "results/" and "results//" are "results"
        args.out = os.path.normpath(args.out)
    task = None
    if args.task is not None:
        task = _apply_task(parser, args)
    elif len(args.players) == 1:
        parser.error(
            f"argument --players: a game seats 3 to 8 players, got 1 (one player is tested against a "
            f"--task's reference players: {', '.join(sorted(current_versions()))})"
        )
    kwargs = {"contracts": args.contracts} if args.contracts else {}
    try:
        config = TournamentConfig(
            players=tuple(args.players),
            games=args.games,
            seed=args.seed,
            duplicate=args.duplicate,
            max_moves_per_deal=args.max_moves_per_deal,
            record_games=args.record,
            **kwargs,
        )
        for spec in dict.fromkeys(config.players):
            check_player(spec, config.rules, where="the tournament")
    except ValueError as err:
        parser.error(f"argument --players: {err}")
    recorded = range(config.total_games if config.record_games < 0 else min(args.record, config.total_games))
    problem = prepare_output(args.out) or outputs_problem(args.out, recorded)
    if problem:
        parser.error(f"argument --out: {problem}")
    notice = rounding_notice(
        config, f"task {task.id}: {task.games} games" if task else f"--games {args.games}"
    )
    if notice and not args.quiet:
        print(notice, file=sys.stderr)
    path = played_path(args.out, config, [player_pin(p) for p in config.players])
    try:
        played, cut = read_games(path, config)
    except ValueError as err:
        parser.error(f"argument --out: {err}")
    if cut is not None:  # a stop cut the last batch short: its games play again
        drop_cut_line(path, cut)
    if played and not args.quiet:
        print(
            f"resuming: {len(played)} of {config.total_games} games were played already ({path})",
            file=sys.stderr,
        )
    try:
        results, seconds, workers = _play(parser, args, config, played, path)
    except KeyboardInterrupt:
        kept = len(read_games(path, config)[0])
        print(
            f"\nstopped; {kept} of {config.total_games} games are kept in {path}: "
            "run the same command again to resume",
            file=sys.stderr,
        )
        raise
    summary = _summarize_and_write(args, argv, task, config, results, seconds, workers, len(played))
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)  # every game is in games.csv now
    return summary


def _summarize_and_write(
    args: argparse.Namespace,
    argv: Sequence[str] | None,
    task: Task | None,
    config: TournamentConfig,
    results: list[Any],
    seconds: float,
    workers: int,
    resumed: int = 0,
) -> Summary:
    """The tournament's statistics, written to ``--out`` and (without ``--quiet``) printed;
    ``seconds`` and ``workers`` are this sitting's, which played all but ``resumed`` games."""
    summary = summarize_tournament(config, results)
    for player in summary.players:
        player.pin = player_pin(player.spec)
    if task is not None:
        summary.task = task_record(task, args.task, summary)
    summary.seconds = seconds
    summary.games_per_second = (len(results) - resumed) / seconds if seconds > 0 else 0.0
    if resumed:
        summary.extra["resumed_games"] = resumed  # played by earlier sittings of the same command
    summary.workers = workers
    args_given = list(argv) if argv is not None else sys.argv[1:]
    summary.command = "python evaluate.py " + " ".join(shlex.quote(a) for a in args_given)
    outputs, records = write_outputs(summary, results, config.labels, args.out)
    names = [outputs.name(n) for n in (SUMMARY_FILE, GAMES_FILE, CHART_FILE)]
    if not args.quiet:
        print_tables(summary)
        print(f"wrote {outputs.path(SUMMARY_FILE)}, {names[1]}, {names[2]}")
        if records:
            print(f"wrote {records} game records to {outputs.records}{os.sep} (see docs/replay.md)")
    if outputs.number > 1:  # said even with --quiet: not where they usually go
        if records:
            names.append(outputs.name(RECORDS_FOLDER) + os.sep)
        print(
            f"{args.out} holds an earlier evaluation (kept): this one's outputs are {', '.join(names)}",
            file=sys.stderr,
        )
    return summary


def cli() -> None:
    """The ``shanghai-evaluate`` command."""
    require_extra("shanghai-evaluate", "eval")
    run(main)


if __name__ == "__main__":
    cli()
