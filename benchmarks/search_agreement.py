"""How much of the search a network has learned: on held-out close calls, does it now rank the
search's choice first?

    python benchmarks/search_agreement.py --games 40 --networks scratch,runs/exit/model.pt
    python benchmarks/search_agreement.py --players 4 --games 10 --share 0.5 --networks scratch,PATH

Games of ``--network`` (the shipped ``scratch``) in every seat are played on fixed seeds. At a
``--share`` of its close calls (the decisions the search over it would search: the kinds it
searches, two best values within its gate) the search measures the candidates and picks one
(``NetSearchBot.measure`` and ``choose``); the game goes on with the network's move. Then each of
``--networks`` scores the same candidates. At the calls where the search switched, the share
where the network now ranks the search's choice above the prior ("follows"); at the calls where
the search kept the prior, the share where it still ranks the prior above every alternative
("keeps"). The searched network itself follows 0 and keeps 1. A network distilled from the search
should follow more than a network trained as long without it, and keep as much. 95% intervals
are Wilson's. ``--repeat N`` measures the labels' own noise: N switched and N kept calls
searched again with another seed. Not a strength figure: a decision the search gets wrong
counts as one to follow.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.actions import action_table
from shanghai_env.agents.learned.players.net_search import NetSearchBot
from shanghai_env.agents.learned.players.policy import PolicyAgent
from shanghai_env.agents.learned.players.sb3 import observation_encoder
from shanghai_env.decision import Decision, apply_action, decision_for
from shanghai_env.engine import Game
from shanghai_env.rules import Rules


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of a share ``hits / n``."""
    if n == 0:
        return math.nan, math.nan
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def labelled_calls(args: argparse.Namespace, rules: Rules) -> list[tuple[Decision, list[int], int]]:
    """Each searched close call: the decision, its candidates (the network's best first), and the
    index of the candidate the search chose."""
    network = PolicyAgent(args.network)
    search = NetSearchBot(network, seed=args.seed, round_worlds=16)  # exit's races: 2 rounds of 16
    table, encoder = action_table(rules), observation_encoder(rules)
    rng = np.random.default_rng(args.seed)
    calls = []
    for g in range(args.games):
        game = Game(rules)
        game.reset(args.seed * 1000 + g)
        while not game.game_over:
            decision = decision_for(game, game.to_act, table, encoder)
            candidates, _ = search.scored_candidates(decision)
            if len(candidates) > 1 and rng.random() < args.share:
                calls.append((decision, candidates, search.choose(search.measure(decision, candidates))))
            apply_action(game, decision, network.act(decision), "the network")
        print(f"game {g + 1}/{args.games}: {len(calls)} close calls searched", file=sys.stderr, flush=True)
    return calls


def prefers(agent: PolicyAgent, decision: Decision, a: int, b: int) -> bool:
    """Whether ``agent``'s network scores move ``a`` above move ``b`` at ``decision``."""
    ids, scores = agent.move_scores(decision)
    at = {x: i for i, x in enumerate(ids)}
    return bool(scores[at[a]] > scores[at[b]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=3, help="table size (default 3)")
    parser.add_argument("--games", type=int, default=20, help="games whose close calls are searched")
    parser.add_argument("--seed", type=int, default=777)
    parser.add_argument("--share", type=float, default=0.25, help="share of the close calls searched")
    parser.add_argument("--network", default="scratch", help="the network searched over (default scratch)")
    parser.add_argument("--networks", required=True, help="comma-separated networks to score the calls")
    parser.add_argument(
        "--repeat", type=int, default=0, help="search N switched and N kept calls again with another seed"
    )
    args = parser.parse_args()
    if not 0 < args.share <= 1:
        parser.error(f"--share must be in (0, 1], got {args.share}")
    calls = labelled_calls(args, Rules(num_players=args.players))
    switched = [(d, c, b) for d, c, b in calls if b != 0]
    kept = [(d, c) for d, c, b in calls if b == 0]
    print(f"{len(calls)} close calls searched, {len(switched)} switched by the search")
    if args.repeat:
        again = NetSearchBot(PolicyAgent(args.network), seed=args.seed + 1, round_worlds=16)
        pick = np.random.default_rng(args.seed + 1)
        chosen = [
            switched[i] for i in pick.choice(len(switched), min(args.repeat, len(switched)), replace=False)
        ]
        same = sum(again.choose(again.measure(d, c)) == b for d, c, b in chosen)
        held = [kept[i] for i in pick.choice(len(kept), min(args.repeat, len(kept)), replace=False)]
        stays = sum(again.choose(again.measure(d, c)) == 0 for d, c in held)
        print(
            f"the search again, another seed: repeats {same} of {len(chosen)} switches, "
            f"{stays} of {len(held)} keeps"
        )
    for path in args.networks.split(","):
        agent = PolicyAgent(path)
        follows = sum(prefers(agent, d, c[b], c[0]) for d, c, b in switched)
        keeps = sum(all(not prefers(agent, d, x, c[0]) for x in c[1:]) for d, c in kept)
        f_low, f_high = wilson(follows, len(switched))
        k_low, k_high = wilson(keeps, len(kept))
        follow_share, keep_share = follows / max(1, len(switched)), keeps / max(1, len(kept))
        print(
            f"{path}: follows {follow_share:.3f} [{f_low:.3f}, {f_high:.3f}] of {len(switched)}, "
            f"keeps {keep_share:.3f} [{k_low:.3f}, {k_high:.3f}] of {len(kept)}"
        )


if __name__ == "__main__":
    main()
