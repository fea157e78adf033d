"""What a search's switches are worth, valued from the true state: points a game against its network.

    python benchmarks/search_oracle.py --players 4 --games 2 \\
        --searchers shanghai_env.agents.learned.players.net_search:scratch_w8
    python benchmarks/search_oracle.py --players 3 --games 12 --versus worlds=64

Games of the network in every seat (``--network``, by default the shipped ``scratch``) are played
on fixed seeds; at each of seat 0's decisions the searcher is asked what it would play (the game
goes on with the network's move, so every searcher is asked the very same decisions). Where the
searcher switches from the network's move, both moves are valued from the *true* state (every
hand as it is, which no player sees): ``--truth`` rollouts each, the network in every seat,
both moves in the same rollouts with the same coupled stock draws. A switch's gain is the
network's move's mean result minus the searcher's (points of the deal, own score minus the
others' mean: positive when the switch is better). Summed over a game's switches it estimates
what the searcher is worth against its own network per game, where the network plays on after
the switch; a 95% interval comes from the switches' spread. Far cheaper than duplicate games,
and blind to what a switch does to the opponents' play: a tuning aid, not a result. ``--versus``
asks each searcher again with some parameters changed, on the same decisions, and gives the
paired difference of the two's points a game. A searcher may also be any other player (a network
saved by training, for instance): its departures from the network are valued the same way, which
tells what a distilled network's changes are worth.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import replace

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.actions import ActionTable
from shanghai_env.agents.bots.search import DRAWS_PER_PLAYER
from shanghai_env.agents.learned.players.net_search import BatchRollouts, NetSearchBot, coupled_starts
from shanghai_env.agents.learned.players.policy import PolicyAgent
from shanghai_env.agents.registry import display_name, make_agent
from shanghai_env.any_table import encoding_tables
from shanghai_env.decision import apply_action, decision_for
from shanghai_env.engine import Game
from shanghai_env.rules import Rules


def true_gain(
    game: Game,
    prior: int,
    switch: int,
    table: ActionTable,
    rollouts: BatchRollouts,
    truth: int,
    rng: np.random.Generator,
) -> float:
    """The network's move's mean true result minus the switch's, over ``truth`` coupled rollouts."""
    n, me, deal = game.rules.num_players, game.to_act, len(game.deal_results)
    games, draws, counters = [], [], []
    for _ in range(truth):
        d = rng.random((n, DRAWS_PER_PLAYER))
        started, counted = coupled_starts(game, [table.moves[prior], table.moves[switch]], d)
        games += started
        counters += counted
        draws += [d, d]
    values, _ = rollouts.play(games, me, deal, draws, counters)
    return float(np.mean(values[0::2]) - np.mean(values[1::2]))


def parse_options(text: str) -> dict[str, str]:
    return dict(item.partition("=")[::2] for item in filter(None, text.split(",")))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--truth", type=int, default=64, help="true-state rollouts per move of a switch")
    p.add_argument("--network", default="scratch")
    p.add_argument("--searchers", default="search_scratch")
    p.add_argument("--options", default="", help="the searchers' parameters, e.g. switch_se=2,gate=0.05")
    p.add_argument(
        "--versus",
        default="",
        help="also each searcher with these parameters changed (e.g. worlds=64), and the "
        "paired difference of the two's points a game",
    )
    args = p.parse_args()
    import torch

    torch.set_num_threads(1)
    rules = Rules(num_players=args.players)
    network = PolicyAgent(args.network)
    print(
        f"{args.players} players, {args.games} game(s) of {network.name} in every seat; "
        "seat 0's decisions asked"
    )
    for spec in args.searchers.split(","):
        variants = [parse_options(args.options)]
        if args.versus:
            variants.append(variants[0] | parse_options(args.versus))
        per_game = []
        for options in variants:
            label = display_name(spec) + (
                f" ({','.join(f'{k}={v}' for k, v in options.items())})" if options else ""
            )
            per_game.append(oracle(args, rules, network, spec, options, label))
        if len(per_game) == 2:
            diff = np.subtract(per_game[1], per_game[0])
            mean = float(diff.mean())
            se = float(diff.std(ddof=1) / math.sqrt(len(diff))) if len(diff) > 1 else math.inf
            print(
                f"{args.versus} against without: {mean:+.1f} points a game "
                f"[{mean - 1.96 * se:+.1f}, {mean + 1.96 * se:+.1f}] (paired by game, {len(diff)} games)"
            )


def oracle(
    args: argparse.Namespace,
    rules: Rules,
    network: PolicyAgent,
    spec: str,
    options: dict[str, str],
    label: str,
) -> list[float]:
    """Play the games with ``spec`` (its parameters changed by ``options``) asked at seat 0's
    decisions; print its figures; each game's summed gains."""
    table, encoder = encoding_tables(rules, "table")
    rollouts = BatchRollouts(network, rules)
    rng = np.random.default_rng(args.seed + 7)
    gains: list[float] = []
    game_gains: list[float] = []
    searched, is_search = 0, False
    spent = 0.0
    for g in range(args.games):
        searcher = make_agent(spec, seed=args.seed + g)
        is_search = isinstance(searcher, NetSearchBot)
        if options and not is_search:
            raise SystemExit(f"{spec}: --options and --versus need a search over a network")
        for key, value in options.items():
            kind = type(getattr(searcher.params, key))
            searcher.params = replace(searcher.params, **{key: kind(value)})
        game = Game(rules)
        game.reset(args.seed + g)
        before, asked = len(gains), 0
        while not game.game_over:
            seat = game.to_act
            decision = decision_for(game, seat, table, encoder)
            own = network.act(decision)
            if seat == 0:
                asked += 1
                start = time.process_time()
                chosen = searcher.act(decision)
                spent += time.process_time() - start
                if chosen != own:
                    gains.append(true_gain(game, own, chosen, table, rollouts, args.truth, rng))
            apply_action(game, decision, own, network.name)
        game_gains.append(float(sum(gains[before:])))
        if is_search:
            searched += searcher.stats.searched
        else:
            searched += asked
    k = len(gains)
    mean = float(np.mean(gains)) if k else 0.0
    se = float(np.std(gains, ddof=1) / math.sqrt(k)) if k > 1 else math.inf
    print(
        f"{label}: {searched / args.games:.1f} {'searched' if is_search else 'asked'} and "
        f"{k / args.games:.1f} switched a game; "
        f"a switch gains {mean:+.2f} points [{mean - 1.96 * se:+.2f}, {mean + 1.96 * se:+.2f}]; "
        f"{sum(gains) / args.games:+.1f} points a game; "
        f"{spent / max(1, searched):.3f} CPU s a decision",
        flush=True,
    )
    print("points a game:", " ".join(f"{x:+.1f}" for x in game_gains), flush=True)
    return game_gains


if __name__ == "__main__":
    main()
