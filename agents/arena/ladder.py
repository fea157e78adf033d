"""The ladder: a round-robin of tables among any set of players, with ratings and resumable runs.

Every combination of ``table_size`` distinct players (4 by default) plays its own duplicate
tournament (:mod:`shanghai_env.agents.arena.tournament`) on the same deck sets, so every table meets the same
deals, under the balanced seat design (:mod:`shanghai_env.agents.arena.seating`: every player
in every seat and right after every other player equally often; ``games_per_table`` rounds up
to whole rounds of it, 24 games for four players). The ladder then ranks everyone with one
OpenSkill Plackett-Luce rating over all games (tables in order, games in schedule order), and
reports each player's mean game score with a 95% interval over its (table, round) means and its
mean deal score per contract.

Every player is checked before the first game (models opened for the table size, factories
called), and the output folder before anything is written in it.

Runs resume: each finished deck set of each table is appended to ``table_<k>.jsonl`` in the
output folder as soon as it is played, and a restarted ladder with the same settings plays only
what is missing; more games per table than before plays only the games added. The settings are
kept in ``ladder_config.json``; a restart with other settings, or into a folder whose tables have
no settings, is refused rather than mixing incompatible games. Every stored game is checked
against the schedule on a restart: a damaged line is refused with its file and line number, and
only a last line cut off by a stop (it has no newline) is dropped, its games played again.
``ladder.json`` is written when every game is played, and removed while games are missing.
Games run in worker processes (``workers``) that end with the ladder (Ctrl-C, SIGTERM, or the
ladder killed outright: :mod:`shanghai_env.agents.arena.workers`), and the results do not depend
on how many. Ctrl-C keeps every game finished before it and says how to resume.

The order the players are listed in changes nothing: the tables are formed, and played, from the
players' canonical order (:func:`shanghai_env.agents.arena.tournament.canonical_order`), so the
same players and seed give the same games, ratings and scores in any listing.

    shanghai-ladder --players random,greedy,planner,search --games-per-table 40 --out results/ladder
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from shanghai_env.agents.arena.report import RATING_NOTE, write_text_atomically
from shanghai_env.agents.arena.runner import DEFAULT_MAX_MOVES_PER_DEAL
from shanghai_env.agents.arena.seating import DESIGN_NAME
from shanghai_env.agents.arena.stats import has_interval, t_interval, to_json_safe
from shanghai_env.agents.arena.stored_games import append_games, drop_cut_line, is_int, read_games
from shanghai_env.agents.arena.tournament import (
    ORDER_NAME,
    GameResult,
    GameTask,
    TournamentConfig,
    canonical_order,
    one_thread_per_worker,
    play_task,
    schedule,
)
from shanghai_env.agents.arena.workers import run_in_workers
from shanghai_env.agents.registry import (
    check_player,
    check_spec,
    contracts_arg,
    describe_allowed,
    player_labels,
    spec_stem,
)
from shanghai_env.cli import Parser, int_in, prepare_output, require_extra, run
from shanghai_env.rules import ALL_CONTRACTS, Rules

CONFIG_FILE = "ladder_config.json"
RESULT_FILE = "ladder.json"


@dataclass(frozen=True)
class LadderConfig:
    """Who is on the ladder, how big a table is and how many games each table plays."""

    players: tuple[str, ...]
    table_size: int = 4
    games_per_table: int = 40
    seed: int = 0
    contracts: tuple[int, ...] = ALL_CONTRACTS
    max_moves_per_deal: int | None = DEFAULT_MAX_MOVES_PER_DEAL  # the rule (docs/rules.md 5.5)

    def __post_init__(self) -> None:
        players = tuple(check_spec(p) for p in self.players)
        if len(set(players)) != len(players):
            raise ValueError(f"ladder players must be distinct, got {', '.join(players)}")
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "contracts", tuple(self.contracts))
        if not isinstance(self.table_size, int) or not 3 <= self.table_size <= 8:
            raise ValueError(f"table_size must be an int 3..8, got {self.table_size!r}")
        if len(players) < self.table_size:
            raise ValueError(
                f"a ladder of {self.table_size}-player tables needs at least {self.table_size} "
                f"players, got {len(players)}"
            )
        for table in self.tables:  # checks games, seed, contracts and the cap once per table
            self.tournament(table)

    @property
    def tables(self) -> list[tuple[str, ...]]:
        """Every combination of ``table_size`` players, in a fixed order: that of the players'
        canonical order, whatever order they were listed in."""
        ordered = [self.players[i] for i in canonical_order(self.players)]
        return list(combinations(ordered, self.table_size))

    def tournament(self, table: Sequence[str]) -> TournamentConfig:
        """The duplicate tournament one table plays (every table shares the deck seeds)."""
        return TournamentConfig(
            players=tuple(table),
            games=self.games_per_table,
            seed=self.seed,
            contracts=self.contracts,
            duplicate=True,
            max_moves_per_deal=self.max_moves_per_deal,
        )

    @property
    def rules(self) -> Rules:
        """The rule options of every table."""
        return Rules(num_players=self.table_size, contracts=tuple(self.contracts))

    def to_json(self) -> dict[str, Any]:
        """The settings as ``ladder_config.json`` holds them."""
        # the seat design is part of the settings: a folder of games seated otherwise (before,
        # the players were only rotated) is refused rather than resumed
        # so is the order the players are seated in (before, the order they were listed in)
        return {
            **asdict(self),
            "players": list(self.players),
            "contracts": list(self.contracts),
            "seating": DESIGN_NAME,
            "order": ORDER_NAME,
        }


@dataclass
class LadderEntry:
    """One player's standing (scores are points: lower is better)."""

    name: str
    games: int
    rating_mu: float
    rating_sigma: float
    rating_ordinal: float  # mu - 3 sigma: the ladder's order
    mean_game_score: float
    ci95: list[float]  # NaN (null in ladder.json) with a single (table, round) mean
    win_rate: float
    mean_deal_score_by_contract: dict[str, float]


def label(spec: str) -> str:
    """A short display name: a model's file name without the folder and ``.zip``."""
    return spec_stem(spec)


def check_players(config: LadderConfig) -> None:
    """Raise ValueError (one sentence) unless every player can sit at the ladder's tables: a model
    must be a saved model trained for the table size and contracts, a ``module:factory`` must
    build an agent. The worker processes would otherwise fail on their first game."""
    for spec in config.players:
        check_player(spec, config.rules, where="a ladder table")


def _table_path(out_dir: str, k: int) -> str:
    return os.path.join(out_dir, f"table_{k}.jsonl")


def load_results(out_dir: str, config: LadderConfig) -> list[list[GameResult]]:
    """The games already played, per table (empty lists for a new ladder), each checked against
    the table's schedule; a last line cut off by a stop is left out. ValueError (naming the file
    and line) for anything else that is not a game of this ladder."""
    return [read_games(_table_path(out_dir, k), config.tournament(t))[0] for k, t in enumerate(config.tables)]


def _stored_config(out_dir: str, config: LadderConfig) -> dict[str, Any] | None:
    """The settings ``out_dir`` holds (None for a new ladder); ValueError if they are not this
    ladder's, or fewer games per table than it holds. Changes nothing."""
    path = os.path.join(out_dir, CONFIG_FILE)
    if not os.path.lexists(path):
        tables = sorted(
            os.path.basename(t) for t in glob.glob(os.path.join(glob.escape(out_dir), "table_*.jsonl"))
        )
        if tables:
            raise ValueError(
                f"{out_dir} holds ladder tables ({', '.join(tables)}) but no {CONFIG_FILE}, so their "
                "settings are unknown; use another --out folder"
            )
        return None
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else err
        raise ValueError(
            f"{path} cannot be read as the ladder's settings ({why}); use another --out folder"
        ) from None
    wanted = config.to_json()
    if not isinstance(found, dict):
        raise ValueError(f"{path} does not hold ladder settings (a JSON object); use another --out folder")
    other = sorted(
        k for k in found.keys() | wanted.keys() if k != "games_per_table" and found.get(k) != wanted.get(k)
    )
    if other:
        theirs = ", ".join(f"{k} {found.get(k)!r}" for k in other)
        raise ValueError(
            f"{out_dir} holds a ladder with other settings ({theirs}); use another --out folder or the "
            "same settings to resume it"
        )
    have = found.get("games_per_table")
    if not isinstance(have, int) or isinstance(have, bool) or have < 1:
        raise ValueError(
            f"{path}: games_per_table is {have!r}, not a positive integer; use another --out folder"
        )
    if have > config.games_per_table:
        raise ValueError(
            f"{out_dir} holds a ladder of {have} games per table; ask for {have} or more to resume it "
            "(more games per table plays only the games added)"
        )
    return found


def _play_block(config: TournamentConfig, tasks: list[GameTask]) -> list[GameResult]:
    return [play_task(config, t) for t in tasks]


def run_ladder(
    config: LadderConfig,
    out_dir: str,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    notice: Callable[[str], object] | None = None,
) -> list[list[GameResult]]:
    """Play every table's missing games (resuming from ``out_dir``); return all games per table.

    Before anything is written or played, the players are checked (:func:`check_players`), and the
    folder's settings and stored games (:func:`load_results`): ValueError says what is wrong. A last
    line cut off by a stop is then dropped from its file, and ``notice`` (default: stderr) says so.
    """
    if not is_int(workers) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    check_players(config)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"{out_dir!r} exists and is not a folder")
    found = _stored_config(out_dir, config) if os.path.isdir(out_dir) else None
    done: list[list[GameResult]] = []
    cuts: dict[int, int] = {}
    for k, table in enumerate(config.tables):
        games, cut = read_games(_table_path(out_dir, k), config.tournament(table))
        done.append(games)
        if cut is not None:
            cuts[k] = cut
    # everything checked: from here on the folder changes
    say = notice or (lambda text: print(text, file=sys.stderr))
    for k, cut in cuts.items():
        path = _table_path(out_dir, k)
        drop_cut_line(path, cut)
        say(f"{path}: dropped its last line, cut off when the ladder stopped; its games play again")
    os.makedirs(out_dir, exist_ok=True)
    if found != config.to_json():
        write_text_atomically(
            os.path.join(out_dir, CONFIG_FILE), json.dumps(config.to_json(), indent=2) + "\n"
        )
    jobs: list[tuple[int, TournamentConfig, list[GameTask]]] = []
    for k, table in enumerate(config.tables):
        tconf = config.tournament(table)
        have = {g.index for g in done[k]}
        tasks = [t for t in schedule(tconf) if t.index not in have]
        blocks: dict[int, list[GameTask]] = {}
        for t in tasks:
            blocks.setdefault(t.block, []).append(t)
        jobs.extend((k, tconf, block) for block in blocks.values())
    if jobs:  # a standings file of fewer games would look like this ladder's
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out_dir, RESULT_FILE))
    if progress:
        progress(sum(len(d) for d in done))

    def save(k: int, results: list[GameResult]) -> None:
        append_games(_table_path(out_dir, k), results)
        done[k].extend(results)
        if progress:
            progress(len(results))

    if workers == 1 or len(jobs) <= 1:
        for k, tconf, block in jobs:
            save(k, _play_block(tconf, block))
    else:
        # Ctrl-C, a stop or a failed game: every finished block saved, the workers ended at once
        run_in_workers(
            [(_play_block, (tconf, block)) for _, tconf, block in jobs],
            workers,
            lambda i, results: save(jobs[i][0], results),
        )
    return [sorted(d, key=lambda g: g.index) for d in done]


def standings(config: LadderConfig, results: Sequence[Sequence[GameResult]]) -> list[LadderEntry]:
    """Every player's rating, game score and per-contract deal score, best first."""
    from openskill.models import PlackettLuce

    names = list(config.players)
    labels = player_labels(names)
    index = {p: i for i, p in enumerate(names)}
    model = PlackettLuce()
    ratings = [model.rating(name=labels[i]) for i in range(len(names))]
    round_means: list[list[float]] = [[] for _ in names]
    games = [0] * len(names)
    wins = [0.0] * len(names)
    contract_sums: list[dict[int, list[float]]] = [{} for _ in names]
    for table, table_games in zip(config.tables, results):
        ids = [index[p] for p in table]
        by_round: dict[int, list[GameResult]] = {}  # the seat design's unit (stats.py)
        for g in table_games:
            by_round.setdefault(g.round, []).append(g)
            teams = model.rate([[ratings[i]] for i in ids], ranks=[float(s) for s in g.scores])
            for i, team in zip(ids, teams):
                ratings[i] = team[0]
            low = min(g.scores)
            winners = [j for j, s in enumerate(g.scores) if s == low]
            for j, i in enumerate(ids):
                games[i] += 1
                if j in winners:
                    wins[i] += 1 / len(winners)
                for deal, contract in enumerate(g.contracts):
                    contract_sums[i].setdefault(contract, []).append(g.deal_scores[deal][j])
        for round_games in by_round.values():
            for j, i in enumerate(ids):
                round_means[i].append(float(np.mean([g.scores[j] for g in round_games])))
    entries = []
    for i in range(len(names)):
        mean, ci = t_interval(round_means[i]) if round_means[i] else (float("nan"), [float("nan")] * 2)
        r = ratings[i]
        entries.append(
            LadderEntry(
                name=labels[i],
                games=games[i],
                rating_mu=float(r.mu),
                rating_sigma=float(r.sigma),
                rating_ordinal=float(r.mu - 3 * r.sigma),
                mean_game_score=mean,
                ci95=ci,
                win_rate=wins[i] / games[i] if games[i] else 0.0,
                mean_deal_score_by_contract={
                    str(c): float(np.mean(v)) for c, v in sorted(contract_sums[i].items())
                },
            )
        )
    entries.sort(key=lambda e: (-e.rating_ordinal, e.name))  # ties by name: the same in any listing
    return entries


def markdown(entries: Sequence[LadderEntry], contracts: Sequence[int]) -> str:
    """The ladder as a Markdown table (the README's)."""
    head = "| player | rating μ ± σ | mean game score [95% CI] | win rate | " + " | ".join(
        f"c{c}" for c in contracts
    )
    lines = [head + " |", "|---|---:|---:|---:|" + "---:|" * len(contracts)]
    for e in entries:
        per = " | ".join(f"{e.mean_deal_score_by_contract.get(str(c), float('nan')):.1f}" for c in contracts)
        ci = f"[{e.ci95[0]:.1f}, {e.ci95[1]:.1f}]" if has_interval(e.ci95) else "n/a"
        lines.append(
            f"| {e.name} | {e.rating_mu:.1f} ± {e.rating_sigma:.1f} | {e.mean_game_score:.1f} "
            f"{ci} | {e.win_rate:.1%} | {per} |"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The ladder's command line."""
    p = Parser(
        prog="shanghai-ladder",
        description="Round-robin of tables among players: ratings, game scores, scores per contract.",
    )
    p.add_argument("--players", required=True, help=f"comma-separated distinct players: {describe_allowed()}")
    p.add_argument("--table-size", type=int_in(3, 8), default=4, help="players per table (3-8)")
    p.add_argument(
        "--games-per-table",
        type=int_in(1),
        default=40,
        help="games each table plays, rounded up to whole rounds of the seat design (24 for 4 players); "
        "more than a stopped or finished ladder in --out had plays only the games added",
    )
    p.add_argument("--seed", type=int_in(0), default=0, help="deck seed shared by every table")
    p.add_argument("--contracts", type=contracts_arg, default=ALL_CONTRACTS, help="e.g. 1 or 1,2,3")
    p.add_argument("--workers", type=int_in(1), default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--out", default="results/ladder", help="output folder; a rerun resumes it")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return p


class _Stopped(BaseException):
    """SIGTERM arrived: unwind (ending the workers) and exit with the signal's status."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into :class:`_Stopped` in the main thread, so the ladder ends its workers
    before it exits (the default action would leave them playing)."""

    def stop(signum: int, frame: object) -> None:
        raise _Stopped

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> list[LadderEntry]:
    """Run (or resume) a ladder, print its table and write ``ladder.json``.

    Everything is checked before the first game: a bad argument, player or output folder exits
    with status 2 and one line saying what is wrong.
    """
    one_thread_per_worker()  # with one worker this process plays the games itself
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.out:  # one spelling of the folder in every message
        args.out = os.path.normpath(args.out)
    try:
        config = LadderConfig(
            players=tuple(s.strip() for s in args.players.split(",")),
            table_size=args.table_size,
            games_per_table=args.games_per_table,
            seed=args.seed,
            contracts=args.contracts,
        )
        check_players(config)
    except (ValueError, TypeError) as err:
        parser.error(f"argument --players: {err}")
    problem = prepare_output(args.out, (CONFIG_FILE, RESULT_FILE))
    if problem:
        parser.error(f"argument --out: {problem}")
    try:  # the folder's settings and stored games, before a game is played
        _stored_config(args.out, config)
        load_results(args.out, config)
    except ValueError as err:
        parser.error(f"argument --out: {err}")
    total = sum(config.tournament(t).total_games for t in config.tables)
    try:
        with _sigterm_unwinds():
            if args.progress:
                from tqdm import tqdm

                with tqdm(total=total, unit="game", desc=f"{len(config.tables)} tables") as bar:
                    results = run_ladder(
                        config, args.out, workers=args.workers, progress=bar.update, notice=bar.write
                    )
            else:
                results = run_ladder(config, args.out, workers=args.workers)
    except KeyboardInterrupt:
        print("stopped; run the same command again to resume", file=sys.stderr)
        raise SystemExit(130) from None
    except _Stopped:
        print("stopped (SIGTERM); run the same command again to resume", file=sys.stderr)
        raise SystemExit(128 + signal.SIGTERM) from None
    entries = standings(config, results)
    result = {"config": config.to_json(), "standings": [asdict(e) for e in entries]}
    write_text_atomically(
        os.path.join(args.out, RESULT_FILE), json.dumps(to_json_safe(result), indent=2) + "\n"
    )
    print(markdown(entries, config.contracts))
    print(RATING_NOTE)
    if any(not has_interval(e.ci95) for e in entries):
        print("95% CI: n/a for a player with one (table, round) mean: play two rounds a table or more")
    played = sum(len(r) for r in results)
    print(f"{len(config.tables)} tables, {played} games; wrote {os.path.join(args.out, RESULT_FILE)}")
    return entries


def cli() -> None:
    """The ``shanghai-ladder`` command."""
    require_extra("shanghai-ladder", "eval")
    run(main)  # Ctrl-C while the players and the folder are checked: "interrupted", status 130


if __name__ == "__main__":
    cli()
