"""Where train.py's time goes: learner steps per second and their split, per configuration.

Runs a short MaskablePPO training (the library behind train.py, one process, DummyVecEnv) for
each configuration below and times, inside the same run:

- **update**: PPO's gradient steps (``model.train``);
- **env**: the environments' steps (``step_wait``), of which **opponents** (the opponent seats'
  ``act``: bots or networks) and **derived** (the derived-input block of ``--derived``); the rest
  of env is the engine, the observation and the mask;
- **policy**: the rest of collecting a rollout (the learner's network on each observation, the
  rollout buffer).

    python benchmarks/training_sb3.py                   # all configurations, 2048 learner steps each
    python benchmarks/training_sb3.py --steps 4096 --only full_structured_planner
    python benchmarks/training_sb3.py --only full_structured_models --n-envs 8 --steps 8192 --batching

``--batching`` also runs each configuration with its envs stepped one by one (Stable-Baselines3's
``DummyVecEnv``) instead of train.py's ``BatchedVecEnv``, which decides the network opponents of
all envs in one forward pass, and prints the ratio (the same games are played both ways).

Figures depend on the machine and its load; the shares are the useful part (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ALL = tuple(range(1, 11))
CONFIGS: dict[str, dict[str, Any]] = {
    # train.py's defaults: contract 1, per-card features and an MLP, greedy opponents
    "contract1_mlp_greedy": {"contracts": (1,), "opponents": ("greedy",)},
    # the full game with the structured, derived-input policy against planners
    "full_structured_planner": {
        "contracts": ALL,
        "opponents": ("planner",),
        "features": "structured",
        "net_arch": (64,),
        "derived": True,
        "shaping": 0.0,
    },
    # the same against three copies of a network (the shipped clone): opponent inference
    "full_structured_models": {
        "contracts": ALL,
        "opponents": (str(ROOT / "models" / "ppo_full_4p.zip"),),
        "init": str(ROOT / "models" / "ppo_full_4p.zip"),
        "derived": True,
        "shaping": 0.0,
    },
}


class Clock:
    """Seconds spent per bucket."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[bucket] += time.perf_counter() - start

        return timed


class TimedAgent:
    """An opponent whose ``act`` (and ``act_batch``) is timed; everything else is the agent's own."""

    def __init__(self, agent: Any, clock: Clock) -> None:
        self._agent = agent
        self.act = clock.wrap("opponents", agent.act)
        if hasattr(agent, "act_batch"):
            self.act_batch = clock.wrap("opponents", agent.act_batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)


def measure(
    name: str, settings: dict[str, Any], steps: int, n_envs: int = 2, batched: bool = True
) -> dict[str, float]:
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from shanghai_env.agents.learned import training
    from shanghai_env.agents.learned.derived import DerivedSingleAgentEnv
    from shanghai_env.agents.learned.vec_env import BatchedVecEnv

    torch.set_num_threads(1)
    clock = Clock()
    cached = training._cached_agent
    timed: dict[int, TimedAgent] = {}  # one wrapper per agent object, so that batches still form

    def timed_agent(spec: str, seat: int, slot: int = 0) -> Any:
        agent = cached(spec, seat, slot)
        return timed.setdefault(id(agent), TimedAgent(agent, clock))

    training._cached_agent = timed_agent  # type: ignore[assignment]
    extend = DerivedSingleAgentEnv._extend
    DerivedSingleAgentEnv._extend = clock.wrap("derived", extend)  # type: ignore[method-assign]
    step_wait = BatchedVecEnv.step_wait
    if not batched:  # the same envs and opponents, stepped one env at a time
        BatchedVecEnv.step_wait = DummyVecEnv.step_wait  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as out:
            config = training.TrainConfig(
                **{"n_envs": n_envs, "n_steps": 512, "batch_size": 256, "seed": 0, "out": out, **settings},
                progress=False,
            )
            env = training.make_vec_env(config)
            model = training.load_model(config, env) if config.init else training.build_model(config, env)
            model.train = clock.wrap("update", model.train)
            model.collect_rollouts = clock.wrap("rollout", model.collect_rollouts)
            inner = env.venv
            inner.step_wait = clock.wrap("env", inner.step_wait)
            start = time.perf_counter()
            model.learn(steps)
            total = time.perf_counter() - start
            env.close()
    finally:
        training._cached_agent = cached  # type: ignore[assignment]
        DerivedSingleAgentEnv._extend = extend  # type: ignore[method-assign]
        BatchedVecEnv.step_wait = step_wait  # type: ignore[method-assign]
    s = clock.seconds
    row = {
        "steps": float(model.num_timesteps),
        "seconds": total,
        "steps_per_s": model.num_timesteps / total,
        "update": s["update"] / total,
        "env": s["env"] / total,
        "opponents": s["opponents"] / total,
        "derived": s["derived"] / total,
        "policy": (s["rollout"] - s["env"]) / total,
    }
    print(
        f"{name:26s} {n_envs} envs{' batched' if batched else ' one by one'} "
        f"{row['steps_per_s']:7.0f} steps/s | update {row['update']:4.0%} | env {row['env']:4.0%}"
        f" (opponents {row['opponents']:4.0%}, derived {row['derived']:4.0%}) | policy {row['policy']:4.0%}",
        flush=True,
    )
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2048, help="learner steps per configuration")
    parser.add_argument("--only", choices=sorted(CONFIGS), action="append", help="run only these")
    parser.add_argument("--n-envs", type=int, default=2, help="envs in the one process (default 2)")
    parser.add_argument(
        "--batching",
        action="store_true",
        help="for each configuration, also step the same envs one by one (DummyVecEnv) and print "
        "the ratio: what deciding the network opponents of all envs together gains",
    )
    args = parser.parse_args(argv)
    if args.n_envs < 1:
        parser.error("argument --n-envs: at least 1")
    if args.steps < 512 * args.n_envs:
        parser.error(
            f"argument --steps: at least {512 * args.n_envs} (one rollout of {args.n_envs} envs x 512 steps)"
        )
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(f"{args.steps} learner steps per configuration, one process, {args.n_envs} envs")
    for name in args.only or CONFIGS:
        if args.batching:  # interleaved, so that a change of the machine's load hits both alike
            plain = measure(name, CONFIGS[name], args.steps, args.n_envs, batched=False)
        row = measure(name, CONFIGS[name], args.steps, args.n_envs)
        if args.batching:
            print(
                f"{name:26s} batched / one by one: {row['steps_per_s'] / plain['steps_per_s']:.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
