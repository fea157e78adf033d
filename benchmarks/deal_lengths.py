"""How long deals and games run under random legal play, for every player count.

Random play is the slowest way through a deal (players rarely go down), so its longest deal
says how far the per-deal move cap (the rule ``max_moves_per_deal``, 3000 moves; off here)
is from anything normal play reaches::

    python benchmarks/deal_lengths.py --games 300
"""

from __future__ import annotations

import argparse
import random
import time

from shanghai_env.engine import NO_PLAYER, Game
from shanghai_env.rules import Rules


def measure(num_players: int, games: int, seed: int = 0) -> dict[str, float]:
    """Longest deal and game in moves, and the share of deals nobody went out of."""
    rng = random.Random(seed)
    longest_deal = longest_game = nobody_out = deals = 0
    for game_seed in range(games):
        game = Game(Rules(num_players=num_players, max_moves_per_deal=None))  # measure, do not cap
        game.reset(game_seed)
        start, deal = 0, 0
        while not game.game_over:
            game.apply(rng.choice(game.legal_moves()))
            if game.game_over or game.deal != deal:
                longest_deal = max(longest_deal, game.move_count - start)
                start, deal = game.move_count, game.deal
        longest_game = max(longest_game, game.move_count)
        nobody_out += sum(r.out_player == NO_PLAYER for r in game.deal_results)
        deals += len(game.deal_results)
    return {"longest_deal": longest_deal, "longest_game": longest_game, "nobody_out": nobody_out / deals}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games per player count")
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be a positive integer, got {args.games}")
    print("| players | games | longest deal (moves) | longest game (moves) | deals nobody went out of | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in range(3, 9):
        start = time.perf_counter()
        m = measure(n, args.games)
        print(
            f"| {n} | {args.games} | {m['longest_deal']} | {m['longest_game']} | {m['nobody_out']:.0%} "
            f"| {time.perf_counter() - start:.0f} |"
        )


if __name__ == "__main__":
    main()
