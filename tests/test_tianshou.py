"""Tianshou 2 on the AEC env: its PettingZooEnv wrapper collects whole games, and a masked DQN
(one seat) trains against masked random players with its multi-agent algorithm.

Skipped where Tianshou is not installed (``pip install -e '.[tianshou]'``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tianshou", reason="Tianshou is not installed: pip install -e '.[tianshou]'")

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
from tianshou.utils.net.common import Net

import shanghai_env

PLAYERS = 3


def make_env() -> PettingZooEnv:
    return PettingZooEnv(shanghai_env.env(num_players=PLAYERS, contracts=(1,)))


def random_players(env: PettingZooEnv, n: int) -> list[MARLRandomDiscreteMaskedOffPolicyAlgorithm]:
    return [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in range(n)]


def stored(buffer: VectorReplayBuffer) -> np.ndarray:
    """Indices of every transition in a buffer."""
    return buffer.sample_indices(0)


def test_the_wrapper_collects_whole_games_with_legal_actions() -> None:
    env = make_env()
    assert env.agents == [f"player_{i}" for i in range(PLAYERS)]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=random_players(env, PLAYERS), env=env)
    envs = DummyVectorEnv([make_env, make_env])
    envs.seed(0)
    buffer = VectorReplayBuffer(20_000, len(envs))
    stats = Collector[CollectStats](algorithm, envs, buffer).collect(n_episode=2, reset_before_collect=True)
    assert stats.n_collected_episodes == 2 and stats.returns.shape == (2, PLAYERS)
    idx = stored(buffer)
    batch = buffer[idx]
    masks = np.asarray(batch.obs.mask, dtype=bool)
    assert masks[np.arange(len(idx)), batch.act.astype(int)].all()  # the masked players only act legally
    ends = idx[np.asarray(batch.terminated, dtype=bool)]
    assert len(ends) == 2
    # each game's rewards add up to minus its final scores / 100, seat by seat
    finals = sorted(
        tuple(np.round(-np.asarray(buffer.info.game_scores[e], dtype=float) / 100, 6)) for e in ends
    )
    assert finals == sorted(tuple(np.round(r, 6)) for r in stats.returns)


def test_a_masked_dqn_trains_for_a_few_hundred_steps() -> None:
    np.random.seed(0)
    torch.manual_seed(0)
    env = make_env()
    observation = env.observation_space["observation"]
    net = Net(state_shape=observation.shape, action_shape=int(env.action_space.n), hidden_sizes=[32])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0
    )
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, target_update_freq=50)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *random_players(env, PLAYERS - 1)], env=env)
    before = [p.detach().clone() for p in net.parameters()]
    train_envs = DummyVectorEnv([make_env, make_env])
    train_envs.seed(0)
    buffer = VectorReplayBuffer(5_000, len(train_envs))
    collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    collector.reset()
    collector.collect(n_step=200)
    test_collector = Collector[CollectStats](algorithm, DummyVectorEnv([make_env]))
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            test_collector=test_collector,
            max_epochs=1,
            epoch_num_steps=300,
            collection_step_num_env_steps=50,
            test_step_num_episodes=1,
            batch_size=32,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            show_progress=False,
            multi_agent_return_reduction=lambda returns: returns[:, 0],  # the learner's seat
        )
    )
    assert result.train_step >= 300 and result.update_step > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))
    batch = buffer[stored(buffer)]
    learner_moves = np.asarray(batch.obs.agent_id) == "player_0"
    masks = np.asarray(batch.obs.mask, dtype=bool)[learner_moves]
    acts = batch.act.astype(int)[learner_moves]
    assert len(acts) > 0 and masks[np.arange(len(acts)), acts].all()  # exploration stays within the mask


def test_the_benchmarks_dqn_baseline_trains_and_plays_in_a_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/baselines/tianshou_dqn.py: a short training saves a Q-network that evaluate.py
    plays as ``benchmarks.baselines.tianshou_dqn:player`` (legal moves only, or the game raises)."""
    import importlib.util

    from shanghai_env.agents.arena.tournament import TournamentConfig, forget_agents, run_tournament

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "tianshou_dqn", root / "benchmarks/baselines/tianshou_dqn.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    meta = module.train(1000, 0, str(tmp_path), (16,))
    assert meta["env_steps"] >= 1000 and (tmp_path / "dqn.pt").exists()
    monkeypatch.setenv("SHANGHAI_DQN", str(tmp_path))
    monkeypatch.chdir(root)
    players = ("benchmarks.baselines.tianshou_dqn:player", "random", "random", "random")
    config = TournamentConfig(players=players, games=4, seed=1, contracts=(1,))
    results = run_tournament(config, workers=1)
    forget_agents(players)
    assert len(results) == 24 and all(r.moves > 0 for r in results)
