"""Steps per second of random legal play: the wrapped env, raw_env, and the engine alone.

Every mode plays the same mix: single-deal episodes of each of the ten contracts in turn
(4 players by default), capped at ``--cap`` steps, because random play often never finishes
a deal (see ``shanghai_env.aec``, "Episode end"). The env modes read the observation and the
action mask on every step, as a learner would; the engine mode only asks for legal moves (it
picks among them in the engine's order, so its games differ from the env modes', but not the
mix of contracts or the caps). The figure to compare across machines is the ratio env /
engine, printed last: it does not depend on the machine's speed.

    python benchmarks/env_steps.py            # about half a minute
    python benchmarks/env_steps.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import shanghai_env
from shanghai_env import Game, Rules


def run_env(make: Callable[..., Any], players: int, contract: int, steps: int, cap: int, seed: int) -> int:
    """Random legal play through an AEC env for ``steps`` steps; returns the steps taken."""
    env = make(num_players=players, contracts=(contract,), max_steps=cap)
    rng = random.Random(seed)
    episode = seed
    env.reset(seed=episode)
    done = 0
    while done < steps:
        obs, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            episode += 1
            env.reset(seed=episode)
            continue
        legal = np.flatnonzero(obs["action_mask"].view(np.bool_))  # a bool view: 5x faster than int8
        _features = obs["observation"]
        env.step(int(legal[rng.randrange(len(legal))]))
        done += 1
    return done


def run_engine(players: int, contract: int, steps: int, cap: int, seed: int) -> int:
    """Random legal play on the engine alone (no observation, no mask)."""
    game = Game(Rules(num_players=players, contracts=(contract,)))
    rng = random.Random(seed)
    episode = seed
    game.reset(seed=episode)
    in_episode = done = 0
    while done < steps:
        if game.game_over or in_episode >= cap:
            episode += 1
            game.reset(seed=episode)
            in_episode = 0
            continue
        moves = game.legal_moves()
        game.apply(moves[rng.randrange(len(moves))])
        done += 1
        in_episode += 1
    return done


def measure(name: str, fn: Callable[[int, int], int], steps_per_contract: int) -> float:
    start = time.perf_counter()
    total = sum(fn(contract, steps_per_contract) for contract in range(1, 11))
    rate = total / (time.perf_counter() - start)
    print(f"{name:<28s} {total:>8d} steps  {rate:>10,.0f} steps/s")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--steps", type=int, default=20_000, help="steps per contract and mode")
    parser.add_argument("--cap", type=int, default=1000, help="step cap of an episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="1000 steps per contract and mode")
    args = parser.parse_args()
    steps = 1000 if args.quick else args.steps
    p, cap, seed = args.players, args.cap, args.seed
    print(f"random legal play, {p} players, contracts 1..10 in turn, {steps} steps each, cap {cap}")
    wrapped = measure("shanghai_env.env()", lambda c, s: run_env(shanghai_env.env, p, c, s, cap, seed), steps)
    raw = measure(
        "shanghai_env.raw_env()", lambda c, s: run_env(shanghai_env.raw_env, p, c, s, cap, seed), steps
    )
    engine = measure("engine alone (Game)", lambda c, s: run_engine(p, c, s, cap, seed), steps)
    print(f"ratio env()/engine {wrapped / engine:.2f}, raw_env/engine {raw / engine:.2f}")


if __name__ == "__main__":
    main()
