"""Thinking time of searchers, measured in one run: CPU seconds per searched decision and per game.

    python benchmarks/search_time.py          # search against two searches over scratch, 4 players
    python benchmarks/search_time.py --players 3 --games 2 \\
        --searchers search,shanghai_env.agents.learned.players.net_search:scratch_w8

Each searcher plays seat 0 of the same seeded games against ``--opponents`` (the planner by
default), one game after the other in this process; the time is this process's CPU time spent in
the searcher's ``act`` (other programs on a shared machine do not count). A searcher's budget is
the same "per searched decision" figure the equal-time comparisons of docs/benchmark.md match.
Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.agents.registry import display_name, make_agent
from shanghai_env.any_table import encoding_tables
from shanghai_env.decision import apply_action, decision_for
from shanghai_env.engine import Game
from shanghai_env.rules import Rules

NET_SEARCH = "shanghai_env.agents.learned.players.net_search"


def measure(spec: str, players: int, games: int, opponents: str, seed: int) -> dict[str, float]:
    """CPU seconds in ``spec``'s decisions, its searched decisions, over ``games`` games."""
    rules = Rules(num_players=players)
    table, encoder = encoding_tables(rules, "table")
    spent, searched, decisions = 0.0, 0, 0
    for g in range(games):
        searcher = make_agent(spec, seed=seed + g)
        others = [make_agent(opponents, seed=seed + 100 * g + s) for s in range(players)]
        game = Game(rules)
        game.reset(seed + g)
        while not game.game_over:
            seat = game.to_act
            agent = searcher if seat == 0 else others[seat]
            decision = decision_for(game, seat, table, encoder)
            start = time.process_time()
            action = agent.act(decision)
            if seat == 0:
                spent += time.process_time() - start
            apply_action(game, decision, action, display_name(spec))
        stats = getattr(searcher, "stats", None)
        searched += stats.searched if stats is not None else 0
        decisions += stats.decisions if stats is not None else 0
    return {
        "cpu_s_per_game": spent / games,
        "searched_per_game": searched / games,
        "cpu_s_per_searched": spent / max(1, searched),
        "decisions_per_game": decisions / games,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--opponents", default="planner")
    p.add_argument("--searchers", default=f"search,{NET_SEARCH}:scratch_w8,{NET_SEARCH}:scratch_w128_h2")
    args = p.parse_args()
    import torch

    torch.set_num_threads(1)
    rows = {
        s: measure(s, args.players, args.games, args.opponents, args.seed) for s in args.searchers.split(",")
    }
    base = next(iter(rows.values()))["cpu_s_per_searched"]
    print(f"{args.players} players, {args.games} game(s) a searcher in seat 0 against {args.opponents}")
    print(f"{'searcher':<44} {'s/searched':>10} {'ratio':>6} {'searched/game':>13} {'s/game':>8}")
    for spec, r in rows.items():
        per = r["cpu_s_per_searched"]
        print(
            f"{display_name(spec):<44} {per:>10.3f} {per / base:>6.2f} "
            f"{r['searched_per_game']:>13.1f} {r['cpu_s_per_game']:>8.1f}"
        )


if __name__ == "__main__":
    main()
