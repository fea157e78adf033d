"""CPU seconds of an evaluation with a network at the table: its games played together (the
tournament's chunks, one ``act_batch`` a network and step) against the same games played one by
one, in the same run, and the two checked equal.

    python benchmarks/evaluation.py                                   # scratch against itself, 3 players
    python benchmarks/evaluation.py --players scratch,planner,planner --games 24

The two ways alternate over ``--rounds`` (each plays every game), so a load that comes and goes
hits both alike. Time is this process's CPU time. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import time

from shanghai_env.agents.arena import tournament
from shanghai_env.agents.registry import contracts_arg
from shanghai_env.rules import ALL_CONTRACTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="scratch,scratch,scratch", help="comma-separated players")
    parser.add_argument("--games", type=int, default=48, help="games (rounded up to whole rounds)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2, help="times each way plays the games")
    parser.add_argument("--contracts", type=contracts_arg, default=ALL_CONTRACTS, help="e.g. 1 or 1,2,3")
    args = parser.parse_args()
    config = tournament.TournamentConfig(
        players=tuple(args.players.split(",")), games=args.games, seed=args.seed, contracts=args.contracts
    )
    tasks = tournament.schedule(config)
    spent = {"together": 0.0, "one by one": 0.0}
    results = {}
    for _ in range(args.rounds):
        for way in spent:
            start = time.process_time()
            if way == "together":
                got = tournament.play_tasks(config, tasks)
            else:
                got = [tournament.play_task(config, task) for task in tasks]
            spent[way] += time.process_time() - start
            results[way] = [(r.scores, r.moves) for r in got]
    same = results["together"] == results["one by one"]
    moves = sum(m for _, m in results["together"])
    for way, seconds in spent.items():
        per_game = seconds / args.rounds / len(tasks)
        print(f"{way:>10}: {per_game:.3f} CPU s a game, {moves * args.rounds / seconds:,.0f} moves/s")
    ratio = spent["one by one"] / spent["together"]
    print(
        f"together / one by one: {ratio:.2f}x, {len(tasks)} games of {args.players}; the same games: {same}"
    )


if __name__ == "__main__":
    main()
