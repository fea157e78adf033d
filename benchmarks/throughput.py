"""Steps per second of random legal play, against peer card-game environments in the same run.

    python benchmarks/throughput.py                      # 3, 4, 6 and 8 players, a few minutes
    python benchmarks/throughput.py --players 4          # one table size
    python benchmarks/throughput.py --quick              # a few seconds a figure (CI)
    python benchmarks/throughput.py --json out.json --markdown out.md
    python benchmarks/throughput.py --no-slices --no-extras   # whole games only

Every loop reads the acting player's observation and action mask at every step, as a learner
would, and draws its action among the legal ids (``random.Random.choice``). Two groups per table
size:

- **slices**: the engine alone, the engine with the observation and mask, ``raw_env`` and
  ``env()``, each reset every ``--cap`` (2,000) steps, so the early deals weigh most;
- **whole games**: ``env()`` and the batched env (``vector_env(N)`` for each ``--vector-envs``,
  stepped from a reset until every row has finished a game) play whole games, reset only when a
  game ends, so the long late deals (contracts 7-10) count as often as they come. A batch's
  slice lasts at least one game of its rows (seconds with 64 games of 8 players).

Peers (optional extra ``bench``): OpenSpiel ``gin_rummy`` (C++ behind Python bindings,
``observation_tensor()`` every step; its episodes are whole games) and RLCard ``gin-rummy``.
Ratios (ours / peer, and the batched env / ``env()``) are all measured in this process with the
loops of one group and the peers interleaved: each figure is the sum of ``--rounds`` slices taken
in turn (engine, raw_env, env(), OpenSpiel, RLCard, engine, ...), so a load that comes and goes
on the machine hits every loop alike. Each ratio is printed with its range over the rounds. Time
is this process's CPU time (``--clock wall`` for wall time): on a shared machine other programs'
work does not count, and on an idle one the two agree. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import shanghai_env
from shanghai_env import Game
from shanghai_env.actions import ActionTable
from shanghai_env.observation import ObservationEncoder
from shanghai_env.vector_workers import WorkerVectorEnv


class Slices:
    """A loop (one episode per call, returns its steps) measured in slices taken in turn."""

    clock: Callable[[], float] = time.process_time

    def __init__(self, label: str, loop: Callable[[], int]) -> None:
        self.label = label
        self.loop = loop
        self.steps = 0
        self.elapsed = 0.0
        self.rates: list[float] = []  # steps/s of each slice

    def run(self, seconds: float) -> None:
        """Play whole episodes for about ``seconds``."""
        steps = 0
        clock = Slices.clock
        start = clock()
        while True:
            steps += self.loop()
            elapsed = clock() - start
            if elapsed >= seconds:
                break
        self.steps += steps
        self.elapsed += elapsed
        self.rates.append(steps / elapsed)

    @property
    def rate(self) -> float:
        return self.steps / self.elapsed


def ratio(results: dict[str, Any], ours: Slices, theirs: Slices) -> None:
    """Record and print ``ours / theirs`` with its range over the rounds."""
    key = f"{ours.label} / {theirs.label}"
    per_round = [a / b for a, b in zip(ours.rates, theirs.rates)]
    results["ratios"][key] = ours.rate / theirs.rate
    results["ratio_ranges"][key] = (min(per_round), max(per_round))
    print(f"{key:<58} {results['ratios'][key]:5.2f}x  (rounds {min(per_round):.2f}-{max(per_round):.2f})")


def interleaved(group: list[Slices], seconds: float, rounds: int) -> None:
    """Measure every loop of ``group`` for ``seconds`` in all, in ``rounds`` slices taken in turn."""
    for s in group:
        s.loop()  # warm up
    for _ in range(rounds):
        for s in group:
            s.run(seconds / rounds)


def engine_loop(num_players: int, with_obs: bool, cap: int) -> Callable[[], int]:
    game = Game(num_players=num_players)
    encoder = ObservationEncoder(game.rules)
    table = ActionTable(game.rules)
    obs = np.zeros(encoder.size, dtype=np.int8)
    mask = np.zeros(table.size, dtype=np.int8)
    rng = random.Random(0)
    seeds = iter(range(10**9))

    def episode() -> int:
        game.reset(seed=next(seeds))
        steps = 0
        while not game.game_over and steps < cap:
            moves = game.legal_moves()
            if with_obs:
                encoder.encode(game, game.to_act, out=obs)
                table.mask(moves, out=mask)
            game.apply(rng.choice(moves))
            steps += 1
        return steps

    return episode


def aec_loop(num_players: int, wrapped: bool, cap: int | None) -> Callable[[], int]:
    """One episode per call: ``cap`` steps (truncated), or with ``cap`` None a whole game."""
    make = shanghai_env.env if wrapped else shanghai_env.raw_env
    env = make(num_players=num_players, max_steps=cap)
    rng = random.Random(0)
    seeds = iter(range(10**9))

    def episode() -> int:
        env.reset(seed=next(seeds))
        steps = 0
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                action = rng.choice(observation["action_mask"].view(np.bool_).nonzero()[0].tolist())
                steps += 1
            env.step(action)
        return steps

    return episode


def vector_loop(num_players: int, num_envs: int, copy: bool = False, workers: int = 0) -> Callable[[], int]:
    """One call: ``vector_env(num_envs)`` reset, then stepped until every row has played a whole
    game (the actions drawn among each row's legal ids); returns the steps of all rows.

    Whole games, as env()'s loop plays them: the rows of a batch start together and random games
    of one table size differ in length by a few percent, so a batch measured for a fixed time
    after a reset would see only the early deals (contract 1's sets, its layoffs) of every row.
    Rows whose game ends first start their next and play on until the last row's ends (a few
    percent more early-deal steps). ``copy``: the env made with ``copy=True``; ``workers``: the
    same games in a ``WorkerVectorEnv`` of that many processes."""
    if workers:
        venv: Any = WorkerVectorEnv(num_envs, workers=workers, num_players=num_players, copy=copy)
    else:
        venv = shanghai_env.vector_env(num_envs, num_players=num_players, copy=copy)
    rng = random.Random(0)
    seeds = iter(range(10**9))

    def games() -> int:
        venv.reset(seed=next(seeds))
        steps = 0
        ended = np.zeros(num_envs, bool)
        while not ended.all():
            ended |= venv.step([rng.choice(ids) for ids in venv.legal_actions])[4]
            steps += num_envs
        return steps

    return games


def openspiel_loop() -> Callable[[], int] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(0)

    def episode() -> int:
        state = game.new_initial_state()
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions = [a for a, _ in state.chance_outcomes()]
                state.apply_action(rng.choice(actions))
                continue
            state.observation_tensor()
            state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
        return steps

    return episode


def rlcard_loop() -> Callable[[], int] | None:
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("gin-rummy", config={"seed": 0})
    rng = random.Random(0)

    def episode() -> int:
        state, _ = env.reset()
        steps = 0
        while not env.is_over():
            _ = state["obs"]
            state, _ = env.step(rng.choice(list(state["legal_actions"])))
            steps += 1
        return steps

    return episode


def vec_env_rate(num_envs: int, subprocess: bool, seconds: float) -> float | None:
    """Learner steps/s of the single-agent view in a vector env (random masked actions,
    masks fetched with ``env_method`` as MaskablePPO does)."""
    try:
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
    except ImportError:
        return None
    from shanghai_env.single_agent import SingleAgentEnv

    def make(i: int) -> Callable[[], SingleAgentEnv]:
        # greedy opponents, as in training: their play is most of a learner step's cost
        def build() -> SingleAgentEnv:
            from shanghai_env.agents.registry import make_agent

            opponents = [make_agent("greedy", seed=100 * i + k) for k in range(3)]
            return SingleAgentEnv(opponents, num_players=4, contracts=(1,))

        return build

    fns = [make(i) for i in range(num_envs)]
    vec = SubprocVecEnv(fns) if subprocess else DummyVecEnv(fns)  # type: ignore[arg-type]
    vec.seed(0)
    vec.reset()
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        masks = vec.env_method("action_masks")
        vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        steps += num_envs
    rate = steps / (time.perf_counter() - start)
    vec.close()
    return rate


def cost_along_a_deal(windows: int, window: int = 2000) -> list[float]:
    """Microseconds per step of raw_env in successive windows of one long random deal.

    Random players seldom end a deal (the discard pile is reshuffled into the stock again and
    again), so one deal of contract 7 runs for the whole measurement; a per-step cost that grew
    with the game's length would show as rising figures.
    """

    env = shanghai_env.raw_env(num_players=4, contracts=(7,), max_steps=10**9)
    env.reset(seed=0)
    rng = random.Random(0)
    out = []
    for _ in range(windows):
        start = Slices.clock()
        for _ in range(window):
            observation, _, terminated, _, _ = env.last()
            if terminated:
                env.reset(seed=rng.randrange(10**6))
                continue
            env.step(rng.choice(observation["action_mask"].view(np.bool_).nonzero()[0].tolist()))
        out.append((Slices.clock() - start) / window * 1e6)
    return out


def memory_per_env(num_players: int, count: int = 20, steps: int = 300) -> float:
    """KiB each env instance holds after a reset and some play (tracemalloc, beyond imports)."""
    rng = random.Random(0)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    envs = []
    for i in range(count):
        env = shanghai_env.env(num_players=num_players)
        env.reset(seed=i)
        for _ in range(steps):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            env.step(rng.choice(obs["action_mask"].view(np.bool_).nonzero()[0].tolist()))
        envs.append(env)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return used / count / 1024


def markdown(results: dict[str, Any], players: list[int]) -> str:
    """The figures as Markdown tables (docs/performance.md embeds them)."""
    sps = results["steps_per_second"]
    ratios, ranges = results["ratios"], results["ratio_ranges"]
    lines = [
        "| players | engine, moves only | engine + obs + mask | raw_env | env() |",
        "|---:|---:|---:|---:|---:|",
    ]
    for n in players:
        if f"env {n}p" not in sps:  # --no-slices
            continue
        row = [
            sps.get(f"{label} {n}p", float("nan"))
            for label in ("engine moves only", "engine + obs + mask", "raw_env", "env")
        ]
        lines.append(f"| {n} | " + " | ".join(f"{v:,.0f}" for v in row) + " |")
    peers = [peer for peer in PEERS if peer in sps]
    if peers:
        head = "| players | " + " | ".join(
            f"{peer} steps/s | env() / {peer.split()[0]} | raw_env / {peer.split()[0]}" for peer in peers
        )
        lines += ["", head + " |", "|---:|" + "---:|" * (3 * len(peers))]
        for n in players:
            cells = []
            for peer in peers:
                cells.append(f"{sps[peer][f'{n}p']:,.0f}")
                for ours in ("env", "raw_env"):
                    key = f"{ours} {n}p / {peer}"
                    lo, hi = ranges[key]
                    cells.append(f"{ratios[key]:.2f}x ({lo:.2f}-{hi:.2f})")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += whole_games_table(results, players)
    if "memory_kib_per_env" in results:
        lines += ["", "| players | memory per env (KiB) |", "|---:|---:|"]
        lines += [f"| {n} | {kib:,.0f} |" for n, kib in results["memory_kib_per_env"].items()]
    if "vec_env" in results:
        v = results["vec_env"]
        many = next(k for k in v if k.startswith("subproc"))
        lines += [
            "",
            "| single-agent view (4p, contract 1, greedy opponents) | learner steps/s |",
            "|---|---:|",
            f"| one process | {v['one_process']:,.0f} |",
            f"| {many.replace('_', ' ')} workers | {v[many]:,.0f} ({v['ratio']:.2f}x) |",
        ]
    if "us_per_step_along_one_deal" in results:
        lines += [
            "",
            "raw_env microseconds per step in successive windows of 2000 steps of one deal: "
            + ", ".join(f"{u:.0f}" for u in results["us_per_step_along_one_deal"]),
        ]
    return "\n".join(lines) + "\n"


PEERS = ("openspiel gin_rummy", "rlcard gin-rummy")


def whole_games_table(results: dict[str, Any], players: list[int]) -> list[str]:
    """The whole-games group as a Markdown table (empty if it was not measured)."""
    sps, ratios, ranges = results["steps_per_second"], results["ratios"], results["ratio_ranges"]
    rows = [n for n in players if f"env whole games {n}p" in sps]
    if not rows:
        return []
    counts = sorted({int(m.group(1)) for k in sps if (m := re.match(r"vector_env\((\d+)\) ", k))})
    peer = "openspiel gin_rummy whole games"
    head = "| players | env() | " + " | ".join(f"vector_env({k}) | / env()" for k in counts)
    head += " | OpenSpiel | env() / OpenSpiel |" if peer in sps else " |"
    lines = ["", head, "|---:|---:|" + "---:|---:|" * len(counts) + ("---:|---:|" if peer in sps else "")]
    for n in rows:
        env = f"env whole games {n}p"
        cells = [f"{sps[env]:,.0f}"]
        for k in counts:
            key = f"vector_env({k}) {n}p"
            lo, hi = ranges[f"{key} / {env}"]
            cells += [f"{sps[key]:,.0f}", f"{ratios[f'{key} / {env}']:.2f}x ({lo:.2f}-{hi:.2f})"]
        if peer in sps:
            lo, hi = ranges[f"{env} / {peer}"]
            cells += [f"{sps[peer][f'{n}p']:,.0f}", f"{ratios[f'{env} / {peer}']:.2f}x ({lo:.2f}-{hi:.2f})"]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="short runs (CI)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per figure (all its slices)")
    parser.add_argument("--rounds", type=int, default=None, help="slices per figure, taken in turn")
    parser.add_argument("--players", default="3,4,6,8", help="player counts, e.g. 4 or 3,4,6,8")
    parser.add_argument("--cap", type=int, default=2000, help="steps per episode before a reset")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: this process's CPU time (other programs on the machine do not count); wall: wall time",
    )
    parser.add_argument("--no-extras", action="store_true", help="only the step rates and ratios")
    parser.add_argument("--no-slices", action="store_true", help="skip the 2,000-step slices")
    parser.add_argument("--no-whole", action="store_true", help="skip the whole games")
    parser.add_argument(
        "--copy", action="store_true", help="whole games: also the first batched env made with copy=True"
    )
    parser.add_argument(
        "--vector-envs", default="16,64", help="games of the batched env in the whole-games group, e.g. 16,64"
    )
    parser.add_argument(
        "--workers", type=int, default=0, help="whole games: also each batched env in this many processes"
    )
    parser.add_argument("--json", default=None, help="write the figures to this file")
    parser.add_argument("--markdown", default=None, help="write the figures as Markdown tables to this file")
    args = parser.parse_args(argv)
    if args.workers and args.clock != "wall":
        parser.error("--workers needs --clock wall: the time of the worker processes is not this process's")
    seconds = args.seconds or (0.5 if args.quick else 6.0)
    rounds = args.rounds or (1 if args.quick else 6)
    players = [int(p) for p in args.players.split(",")]
    vector_envs = [int(k) for k in args.vector_envs.split(",") if k]
    Slices.clock = time.process_time if args.clock == "cpu" else time.perf_counter

    results: dict[str, Any] = {
        "clock": args.clock,
        "seconds_per_figure": seconds,
        "rounds": rounds,
        "steps_per_second": {},
        "ratios": {},
        "ratio_ranges": {},
    }
    sps = results["steps_per_second"]
    peers = {"openspiel gin_rummy": openspiel_loop(), "rlcard gin-rummy": rlcard_loop()}
    for peer, loop in peers.items():
        if loop is None:
            print(f"{peer:<34} (not installed: pip install -e '.[bench]')")

    for n in players:
        theirs = {peer: Slices(peer, loop) for peer, loop in peers.items() if loop is not None}
        if not args.no_slices:
            group = [
                Slices(f"engine moves only {n}p", engine_loop(n, False, args.cap)),
                Slices(f"engine + obs + mask {n}p", engine_loop(n, True, args.cap)),
                Slices(f"raw_env {n}p", aec_loop(n, False, args.cap)),
                Slices(f"env {n}p", aec_loop(n, True, args.cap)),
            ]
            interleaved(group + list(theirs.values()), seconds, rounds)
            for s in group:
                sps[s.label] = s.rate
                print(f"{s.label:<34} {s.rate:>10,.0f} steps/s")
            ours = {s.label: s for s in group}
            for peer, s in theirs.items():
                sps.setdefault(peer, {})[f"{n}p"] = s.rate
                print(f"{peer + f' (with {n}p)':<34} {s.rate:>10,.0f} steps/s")
                for label in (f"env {n}p", f"raw_env {n}p"):
                    ratio(results, ours[label], s)
        if not args.no_whole:
            whole = [Slices(f"env whole games {n}p", aec_loop(n, True, None))]
            whole += [Slices(f"vector_env({k}) {n}p", vector_loop(n, k)) for k in vector_envs]
            if args.workers:
                w = args.workers
                for k in vector_envs:
                    whole.append(Slices(f"vector_env({k}, workers={w}) {n}p", vector_loop(n, k, workers=w)))
            if args.copy and vector_envs:
                k = vector_envs[0]
                whole.append(Slices(f"vector_env({k}, copy=True) {n}p", vector_loop(n, k, copy=True)))
            # one peer is enough here (RLCard is the slower one)
            peer_whole = [
                Slices(f"{p} whole games", loop) for p, loop in peers.items() if loop and "rlcard" not in p
            ]
            interleaved(whole + peer_whole, seconds, rounds)
            for s in whole:
                sps[s.label] = s.rate
                print(f"{s.label:<34} {s.rate:>10,.0f} steps/s")
            for s in whole[1:]:
                ratio(results, s, whole[0])
            for k in vector_envs if args.workers else []:  # the workers against one process
                split = next(s for s in whole if s.label == f"vector_env({k}, workers={args.workers}) {n}p")
                ratio(results, split, next(s for s in whole if s.label == f"vector_env({k}) {n}p"))
            for s in peer_whole:
                sps.setdefault(s.label, {})[f"{n}p"] = s.rate
                print(f"{s.label + f' (with {n}p)':<34} {s.rate:>10,.0f} steps/s")
                ratio(results, whole[0], s)

    if not args.no_extras:
        extras(results, players, seconds, args.quick)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results, players))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return results


def extras(results: dict[str, Any], players: list[int], seconds: float, quick: bool) -> None:
    """The vector-env figures, the cost along one long deal and the memory per env."""
    cores = os.cpu_count() or 1
    one = vec_env_rate(1, False, seconds)
    many = vec_env_rate(cores, True, seconds) if one is not None else None
    if one is None or many is None:
        print("vector env (single-agent view)     (needs the train extra: stable-baselines3)")
    else:
        results["vec_env"] = {"one_process": one, f"subproc_{cores}": many, "ratio": many / one}
        print(f"single-agent view, 1 process        {one:>10,.0f} learner steps/s")
        print(f"single-agent view, SubprocVecEnv({cores}) {many:>8,.0f} learner steps/s  ({many / one:.2f}x)")

    along = cost_along_a_deal(4 if quick else 12)
    results["us_per_step_along_one_deal"] = along
    print("raw_env us/step along one deal      " + " ".join(f"{u:.0f}" for u in along))

    mem = {n: memory_per_env(n) for n in players}
    results["memory_kib_per_env"] = mem
    for n, kib in mem.items():
        print(f"memory per env {n}p                  {kib:10.1f} KiB")


if __name__ == "__main__":
    main()
