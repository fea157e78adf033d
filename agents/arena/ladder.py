"""The ladder: a round-robin of tables among any set of players, with ratings and resumable runs.

Every combination of ``table_size`` distinct players (4 by default) plays its own duplicate
tournament (:mod:`shanghai_env.agents.arena.tournament`) on the same deck sets, so every table meets the same
deals, under the balanced seat design (:mod:`shanghai_env.agents.arena.seating`: every player
in every seat and right after every other player equally often; ``games_per_table`` rounds up
to whole rounds of it, 24 games for four players). The ladder then ranks everyone with one
OpenSkill Plackett-Luce rating over all games (tables in order, games in schedule order), and
reports each player's mean game score with a 95% interval over its (table, round) means and its
mean deal score per contract.

Runs resume: each finished deck set of each table is appended to ``table_<k>.jsonl`` in the
output folder as soon as it is played, and a restarted ladder with the same settings plays only
what is missing. The settings are kept in ``ladder_config.json``; a restart with other settings
is refused rather than mixing incompatible games. Games run in worker processes
(``workers``), and the results do not depend on how many.

    shanghai-ladder --players random,greedy,planner,search --games-per-table 40 --out results/ladder
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from shanghai_env.agents.arena.runner import DEFAULT_MAX_MOVES_PER_DEAL
from shanghai_env.agents.arena.seating import DESIGN_NAME
from shanghai_env.agents.arena.stats import t_interval
from shanghai_env.agents.arena.tournament import GameResult, GameTask, TournamentConfig, play_task, schedule
from shanghai_env.agents.registry import check_spec, contracts_arg, describe_allowed
from shanghai_env.rules import ALL_CONTRACTS

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
    max_moves_per_deal: int = DEFAULT_MAX_MOVES_PER_DEAL

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
        """Every combination of ``table_size`` players, in a fixed order."""
        return list(combinations(self.players, self.table_size))

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

    def to_json(self) -> dict[str, Any]:
        # the seat design is part of the settings: a folder of games seated otherwise (before,
        # the players were only rotated) is refused rather than resumed
        return {
            **asdict(self),
            "players": list(self.players),
            "contracts": list(self.contracts),
            "seating": DESIGN_NAME,
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
    ci95: list[float]
    win_rate: float
    mean_deal_score_by_contract: dict[str, float]


def label(spec: str) -> str:
    """A short display name: a model's file name without the folder and ``.zip``."""
    return os.path.splitext(os.path.basename(spec))[0] if spec.endswith(".zip") else spec


def _table_path(out_dir: str, k: int) -> str:
    return os.path.join(out_dir, f"table_{k}.jsonl")


def _result_from_json(d: dict[str, Any]) -> GameResult:
    d = dict(d)
    d["seats"] = tuple(d["seats"])
    return GameResult(**d)


def load_results(out_dir: str, config: LadderConfig) -> list[list[GameResult]]:
    """The games already played, per table (empty lists for a new ladder)."""
    out: list[list[GameResult]] = []
    for k in range(len(config.tables)):
        path = _table_path(out_dir, k)
        games: dict[int, GameResult] = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.strip():  # a line cut off by a crash is incomplete JSON: replay it
                        try:
                            g = _result_from_json(json.loads(line))
                        except (json.JSONDecodeError, TypeError, KeyError):
                            continue
                        games[g.index] = g
        out.append([games[i] for i in sorted(games)])
    return out


def _check_or_write_config(out_dir: str, config: LadderConfig) -> None:
    path = os.path.join(out_dir, CONFIG_FILE)
    wanted = config.to_json()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
        if found != wanted:
            raise ValueError(
                f"{out_dir} holds a ladder with other settings ({found}); use another --out folder "
                "or the same settings to resume it"
            )
        return
    with open(path, "w", encoding="utf-8") as f:
        json.dump(wanted, f, indent=2)


def _play_block(config: TournamentConfig, tasks: list[GameTask]) -> list[GameResult]:
    return [play_task(config, t) for t in tasks]


def run_ladder(
    config: LadderConfig,
    out_dir: str,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[list[GameResult]]:
    """Play every table's missing games (resuming from ``out_dir``); return all games per table."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    os.makedirs(out_dir, exist_ok=True)
    _check_or_write_config(out_dir, config)
    done = load_results(out_dir, config)
    jobs: list[tuple[int, TournamentConfig, list[GameTask]]] = []
    for k, table in enumerate(config.tables):
        tconf = config.tournament(table)
        have = {g.index for g in done[k]}
        tasks = [t for t in schedule(tconf) if t.index not in have]
        blocks: dict[int, list[GameTask]] = {}
        for t in tasks:
            blocks.setdefault(t.block, []).append(t)
        jobs.extend((k, tconf, block) for block in blocks.values())
    if progress:
        progress(sum(len(d) for d in done))

    def save(k: int, results: list[GameResult]) -> None:
        with open(_table_path(out_dir, k), "a", encoding="utf-8") as f:
            for g in results:
                f.write(json.dumps(asdict(g)) + "\n")
        done[k].extend(results)
        if progress:
            progress(len(results))

    if workers == 1 or len(jobs) <= 1:
        for k, tconf, block in jobs:
            save(k, _play_block(tconf, block))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as pool:
            pending: dict[Future[list[GameResult]], int] = {
                pool.submit(_play_block, tconf, block): k for k, tconf, block in jobs
            }
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    save(pending.pop(fut), fut.result())
    return [sorted(d, key=lambda g: g.index) for d in done]


def standings(config: LadderConfig, results: Sequence[Sequence[GameResult]]) -> list[LadderEntry]:
    """Every player's rating, game score and per-contract deal score, best first."""
    from openskill.models import PlackettLuce

    names = list(config.players)
    index = {p: i for i, p in enumerate(names)}
    model = PlackettLuce()
    ratings = [model.rating(name=label(p)) for p in names]
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
    for i, spec in enumerate(names):
        mean, ci = t_interval(round_means[i]) if round_means[i] else (float("nan"), [float("nan")] * 2)
        r = ratings[i]
        entries.append(
            LadderEntry(
                name=label(spec),
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
    entries.sort(key=lambda e: -e.rating_ordinal)
    return entries


def markdown(entries: Sequence[LadderEntry], contracts: Sequence[int]) -> str:
    """The ladder as a Markdown table (the README's)."""
    head = "| player | rating μ ± σ | mean game score [95% CI] | win rate | " + " | ".join(
        f"c{c}" for c in contracts
    )
    lines = [head + " |", "|---|---:|---:|---:|" + "---:|" * len(contracts)]
    for e in entries:
        per = " | ".join(f"{e.mean_deal_score_by_contract.get(str(c), float('nan')):.1f}" for c in contracts)
        lines.append(
            f"| {e.name} | {e.rating_mu:.1f} ± {e.rating_sigma:.1f} | {e.mean_game_score:.1f} "
            f"[{e.ci95[0]:.1f}, {e.ci95[1]:.1f}] | {e.win_rate:.1%} | {per} |"
        )
    return "\n".join(lines)


def _int_at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The ladder's command line."""
    p = argparse.ArgumentParser(
        prog="shanghai-ladder",
        description="Round-robin of tables among players: ratings, game scores, scores per contract.",
    )
    p.add_argument("--players", required=True, help=f"comma-separated distinct players: {describe_allowed()}")
    p.add_argument("--table-size", type=_int_at_least(3), default=4, help="players per table (3-8)")
    p.add_argument(
        "--games-per-table",
        type=_int_at_least(1),
        default=40,
        help="games each table plays, rounded up to whole rounds of the seat design (24 for 4 players)",
    )
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="deck seed shared by every table")
    p.add_argument("--contracts", type=contracts_arg, default=ALL_CONTRACTS, help="e.g. 1 or 1,2,3")
    p.add_argument("--workers", type=_int_at_least(1), default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--out", default="results/ladder", help="output folder; a rerun resumes it")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> list[LadderEntry]:
    """Run (or resume) a ladder, print its table and write ``ladder.json``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        parser.error(f"--out {args.out!r} is a file; give a folder (created if missing)")
    try:
        config = LadderConfig(
            players=tuple(s.strip() for s in args.players.split(",")),
            table_size=args.table_size,
            games_per_table=args.games_per_table,
            seed=args.seed,
            contracts=args.contracts,
        )
        os.makedirs(args.out, exist_ok=True)
        _check_or_write_config(args.out, config)
    except (ValueError, TypeError, OSError) as err:
        parser.error(str(err))
    total = sum(config.tournament(t).total_games for t in config.tables)
    try:
        if args.progress:
            from tqdm import tqdm

            with tqdm(total=total, unit="game", desc=f"{len(config.tables)} tables") as bar:
                results = run_ladder(config, args.out, workers=args.workers, progress=bar.update)
        else:
            results = run_ladder(config, args.out, workers=args.workers)
    except KeyboardInterrupt:
        print("stopped; run the same command again to resume", file=sys.stderr)
        raise SystemExit(130) from None
    entries = standings(config, results)
    with open(os.path.join(args.out, RESULT_FILE), "w", encoding="utf-8") as f:
        json.dump({"config": config.to_json(), "standings": [asdict(e) for e in entries]}, f, indent=2)
    print(markdown(entries, config.contracts))
    played = sum(len(r) for r in results)
    print(f"{len(config.tables)} tables, {played} games; wrote {os.path.join(args.out, RESULT_FILE)}")
    return entries


def cli() -> None:
    """The ``shanghai-ladder`` command."""
    main()


if __name__ == "__main__":
    cli()
