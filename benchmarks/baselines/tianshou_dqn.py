"""Tianshou DQN from scratch on the AEC env: the benchmark's Tianshou row (docs/benchmark.md).

Trains a masked DQN (Tianshou 2: ``DiscreteQLearningPolicy`` + ``DQN`` in
``MultiAgentOffPolicyAlgorithm``) in seat ``player_0`` of ``shanghai_env.env()`` wrapped by
Tianshou's own ``PettingZooEnv``, with nothing of this project's in between; the other seats
are Tianshou's masked random players (a Tianshou algorithm sees only the observation, so the
project's bots, which read the game, cannot sit in its seats). Then saves the Q-network::

    python benchmarks/baselines/tianshou_dqn.py --steps 50000 --seed 0 --out runs/tianshou_dqn
    SHANGHAI_DQN=runs/tianshou_dqn python evaluate.py --task contract1_4p \\
        --players benchmarks.baselines.tianshou_dqn:player

``player()`` is the evaluation's ``module:factory``: the greedy, masked choice of the saved
network (the folder from ``$SHANGHAI_DQN``, default ``runs/tianshou_dqn``).
Needs the ``tianshou`` extra (``pip install -e '.[tianshou]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PLAYERS, CONTRACTS = 4, (1,)


def _network(observation_size: int, actions: int, hidden: tuple[int, ...]) -> Any:
    from tianshou.utils.net.common import Net

    return Net(state_shape=(observation_size,), action_shape=actions, hidden_sizes=list(hidden))


def train(steps: int, seed: int, out: str, hidden: tuple[int, ...]) -> dict[str, Any]:
    import torch
    from tianshou.algorithm import (
        DQN,
        MARLRandomDiscreteMaskedOffPolicyAlgorithm,
        MultiAgentOffPolicyAlgorithm,
    )
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams

    import shanghai_env

    def make_env() -> PettingZooEnv:
        return PettingZooEnv(shanghai_env.env(num_players=PLAYERS, contracts=CONTRACTS))

    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = make_env()
    size = int(env.observation_space["observation"].shape[0])
    net = _network(size, int(env.action_space.n), hidden)
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0
    )
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-4), gamma=0.99, target_update_freq=500)
    others = [
        MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in range(PLAYERS - 1)
    ]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *others], env=env)
    train_envs = DummyVectorEnv([make_env, make_env])
    train_envs.seed(seed)
    buffer = VectorReplayBuffer(100_000, len(train_envs))
    collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    collector.reset()
    collector.collect(n_step=2_000)
    test_envs = DummyVectorEnv([make_env])
    test_envs.seed(seed + 1)
    start = time.perf_counter()
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=Collector[CollectStats](algorithm, test_envs),
            max_epochs=max(1, steps // 10_000),
            epoch_num_steps=min(steps, 10_000),
            collection_step_num_env_steps=100,
            test_step_num_episodes=2,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            show_progress=True,
            multi_agent_return_reduction=lambda returns: returns[:, 0],  # the learner's seat
        )
    )
    seconds = time.perf_counter() - start
    os.makedirs(out, exist_ok=True)
    torch.save(net.state_dict(), os.path.join(out, "dqn.pt"))
    meta = {
        "what": "Tianshou 2 masked DQN in seat player_0 against Tianshou's masked random players",
        "players": PLAYERS,
        "contracts": list(CONTRACTS),
        "hidden": list(hidden),
        "env_steps": int(result.train_step),
        "gradient_steps": int(result.update_step),
        "seconds": round(seconds, 1),
        "seed": seed,
        "command": " ".join(["python", "benchmarks/baselines/tianshou_dqn.py", *sys.argv[1:]]),
    }
    with open(os.path.join(out, "dqn.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    return meta


class DQNPlayer:
    """The saved Q-network's greedy choice among the legal actions."""

    needs_observation = True

    def __init__(self, folder: str) -> None:
        import torch

        with open(os.path.join(folder, "dqn.json"), encoding="utf-8") as f:
            meta = json.load(f)
        from shanghai_env.actions import action_table
        from shanghai_env.observation import ObservationEncoder
        from shanghai_env.rules import Rules

        rules = Rules(num_players=meta["players"], contracts=tuple(meta["contracts"]))
        size = int(ObservationEncoder(rules).size)
        self.net = _network(size, action_table(rules).size, tuple(meta["hidden"]))
        self.net.load_state_dict(torch.load(os.path.join(folder, "dqn.pt"), map_location="cpu"))
        self.net.eval()
        self.name = "tianshou_dqn"

    def reset(self, seed: int | None = None) -> None:
        """Greedy play needs no seed."""

    def act(self, decision: Any) -> int:
        import torch

        with torch.inference_mode():
            q = self.net(torch.as_tensor(decision.observation, dtype=torch.float32)[None])[0][0].numpy()
        legal = decision.action_mask.astype(bool)
        return int(np.flatnonzero(legal)[np.argmax(q[legal])])


def player() -> DQNPlayer:
    """The evaluation factory (``benchmarks.baselines.tianshou_dqn:player``)."""
    return DQNPlayer(os.environ.get("SHANGHAI_DQN", "runs/tianshou_dqn"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000, help="env steps of training (all seats)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", default="256,256", help="hidden layer sizes")
    parser.add_argument("--out", default="runs/tianshou_dqn")
    args = parser.parse_args()
    if args.steps < 1000:
        parser.error("argument --steps: at least 1000")
    hidden = tuple(int(h) for h in args.hidden.split(","))
    print(json.dumps(train(args.steps, args.seed, args.out, hidden), indent=2))


if __name__ == "__main__":
    main()
