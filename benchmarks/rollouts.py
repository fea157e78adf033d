"""Rollouts per second and the search player's seconds per game.

    python benchmarks/rollouts.py                 # about a minute
    python benchmarks/rollouts.py --quick         # a few seconds (CI)
    python benchmarks/rollouts.py --json out.json
    python benchmarks/rollouts.py --no-rollouts --worlds 4,8,16,32 --games 2 --contracts 1,2,3,4,5,6,7,8,9,10

A *rollout* is what :class:`shanghai_env.agents.bots.search.SearchBot` runs for every candidate in
every sampled world: a copy of the world, then :func:`shanghai_env.agents.bots.search.play_out`
plays the deal to its end with the rollout policy in every seat (coupled stock draws, as the
searcher does). The worlds are sampled once, up front, from the views of seeded planner games
(4 players, contracts 1, 4, 7 and 9: sets, runs, both), so every run and every version of the
code plays the very same rollouts; the printed checksum of their scores shows it. Every start
is rolled out once by one set of bots, kept from rollout to rollout as the searcher keeps its
own (their caches of hand distances fill as in a search); the figure is the median of
``--repeats`` such passes, each with fresh bots.

``search`` is the default searcher (32 worlds, planner rollouts) in one seat against three
planners, seconds per game of the given contracts. Times are this process's CPU time, so that
other programs on a shared machine do not count. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.actions import action_table
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.base import Agent
from shanghai_env.agents.bots.contract import forget_meters
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.search import DRAWS_PER_PLAYER, ROLLOUT_POLICIES, SearchBot, play_out
from shanghai_env.decision import play_turn
from shanghai_env.engine import Game
from shanghai_env.worlds import WorldSampler

Start = tuple[Game, list[int], np.ndarray, int]  # world, seat seeds, coupled draws, deal


def sample_starts(count: int, num_players: int = 4, seed: int = 0) -> list[Start]:
    """``count`` rollout starts: worlds sampled from the acting player's view every few moves of
    seeded planner games, with the seeds and coupled draws the searcher would give them."""
    rng = np.random.default_rng(seed)
    starts: list[Start] = []
    game_seed = seed
    while len(starts) < count:
        game = Game(num_players=num_players, contracts=(1, 4, 7, 9))
        table = action_table(game.rules)
        bots = [PlannerBot(seed=game_seed * 10 + q) for q in range(num_players)]
        game.reset(game_seed)
        step = 0
        while not game.game_over and len(starts) < count:
            p = game.to_act
            if step % 23 == 7:
                world = WorldSampler(game.view(p), game.rules).sample(rng)
                seeds = [int(s) for s in rng.integers(1 << 62, size=num_players)]
                draws = rng.random((num_players, DRAWS_PER_PLAYER))
                starts.append((world, seeds, draws, len(world.deal_results)))
            play_turn(game, bots[p], table)
            step += 1
        game_seed += 1
    return starts


def rollout_rate(starts: list[Start], policy: str, repeats: int) -> dict[str, Any]:
    """Rollouts (copy + play_out) per second: every start rolled out once by one set of bots
    (kept across rollouts, as a searcher keeps them through a game), ``repeats`` times over
    with fresh bots; the median of the repeats."""
    n = starts[0][0].num_players
    rules = starts[0][0].rules
    table = action_table(rules)
    rates = []
    check = ""
    moves = 0
    for _ in range(repeats):
        forget_meters()  # fresh bots start with cold distance caches (the process's shared ones)
        bots = [ROLLOUT_POLICIES[policy]() for _ in range(n)]
        digest = hashlib.sha256()
        moves = 0
        begin = time.process_time()
        for world, seeds, draws, deal in starts:
            scores, played = play_out(world.clone(), bots, seeds, rules, table, deal, draws, [0] * n)
            digest.update(repr((scores, played)).encode())
            moves += played
        rates.append(len(starts) / (time.process_time() - begin))
        check = digest.hexdigest()[:16]
    rate = sorted(rates)[len(rates) // 2]
    return {
        "rollouts_per_second": rate,
        "moves_per_second": rate * moves / len(starts),
        "moves_per_rollout": moves / len(starts),
        "checksum": check,
    }


def search_seconds(games: int, contracts: tuple[int, ...], worlds: int = 32) -> dict[str, Any]:
    """Seconds per game of the searcher (``worlds`` a decision, the default 32) in seat 0 against
    three planners."""
    times = []
    check = hashlib.sha256()
    for g in range(games):
        searcher = SearchBot(seed=g, worlds=worlds)
        agents: list[Agent] = [searcher] + [PlannerBot(seed=100 * g + q) for q in range(1, 4)]
        begin = time.process_time()
        record = play_game(Game(num_players=4, contracts=contracts), agents, seed=g)
        times.append(time.process_time() - begin)
        check.update(repr((record.scores, record.moves, searcher.stats.rollouts)).encode())
    return {
        "seconds_per_game": sum(times) / len(times),
        "games": games,
        "worlds": worlds,
        "contracts": list(contracts),
        "checksum": check.hexdigest()[:16],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="short runs (CI)")
    parser.add_argument("--starts", type=int, default=None, help="sampled worlds to roll out from")
    parser.add_argument("--repeats", type=int, default=3, help="times every start is rolled out (median)")
    parser.add_argument("--games", type=int, default=None, help="search games (0: skip)")
    parser.add_argument("--contracts", default="1,5", help="contracts of each search game, e.g. 1,5")
    parser.add_argument(
        "--worlds",
        default="32",
        help="the searcher's budgets to time, e.g. 4,8,16,32 (default: 32, search's own)",
    )
    parser.add_argument("--no-rollouts", action="store_true", help="time the searcher only")
    parser.add_argument("--json", default=None, help="write the figures to this file")
    args = parser.parse_args(argv)
    count = args.starts or (40 if args.quick else 300)
    games = args.games if args.games is not None else (1 if args.quick else 3)
    try:
        contracts = tuple(int(c) for c in args.contracts.split(","))
        budgets = [int(w) for w in args.worlds.split(",")]
    except ValueError:
        parser.error("--contracts and --worlds take comma-separated integers, e.g. 1,5 and 4,8,16,32")
    if not contracts or min(contracts) < 1 or max(contracts) > 10 or min(budgets) < 1:
        parser.error("contracts are 1..10 and budgets at least 1 world")

    results: dict[str, Any] = {}
    starts = [] if args.no_rollouts else sample_starts(count)
    for policy in () if args.no_rollouts else ("planner", "greedy"):
        r = results[f"rollouts {policy}"] = rollout_rate(starts, policy, args.repeats)
        print(
            f"rollouts, {policy:<8} {r['rollouts_per_second']:8.1f} rollouts/s "
            f"{r['moves_per_second']:9,.0f} moves/s  ({r['moves_per_rollout']:.0f} moves each, "
            f"checksum {r['checksum']})"
        )
    for worlds in budgets if games else ():
        s = results["search" if worlds == 32 else f"search {worlds} worlds"] = search_seconds(
            games, contracts, worlds
        )
        print(
            f"search, {worlds:2d} worlds      {s['seconds_per_game']:8.2f} s/game  "
            f"({games} games of contracts {args.contracts}, checksum {s['checksum']})"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return results


if __name__ == "__main__":
    main()
