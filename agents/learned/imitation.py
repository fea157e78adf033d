"""Warm start for MaskablePPO: behaviour cloning of a bot's decisions before reinforcement learning.

:func:`collect` lets a *teacher* bot (e.g. ``planner``) play the learning seat of
:class:`~shanghai_env.single_agent.SingleAgentEnv` and records, at each of its decisions, the
observation, the legal-action mask, the action and the (shaped) discounted return that followed.
:func:`pretrain` then fits the policy to the teacher's actions (cross-entropy over the masked
distribution) and the value head to the returns, so PPO starts from a player that already
goes down and goes out, with a value function that matches it, and spends its steps improving
on the teacher rather than rediscovering the game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.registry import make_agent
from shanghai_env.decision import decision_for
from shanghai_env.single_agent import SingleAgentEnv


@dataclass
class Demonstrations:
    """A teacher's decisions: observations, masks, actions and discounted returns."""

    obs: np.ndarray  # int8 [N, L]
    masks: np.ndarray  # bool [N, A]
    actions: np.ndarray  # int64 [N]
    returns: np.ndarray  # float32 [N]

    def __len__(self) -> int:
        return int(self.actions.size)

    def __add__(self, other: Demonstrations) -> Demonstrations:
        return Demonstrations(
            obs=np.concatenate([self.obs, other.obs]),
            masks=np.concatenate([self.masks, other.masks]),
            actions=np.concatenate([self.actions, other.actions]),
            returns=np.concatenate([self.returns, other.returns]),
        )


Driver = Callable[[np.ndarray, np.ndarray], int]  # (observation, mask) -> action


def collect(
    env: SingleAgentEnv,
    teacher: str,
    steps: int,
    gamma: float,
    seed: int = 0,
    driver: Driver | None = None,
) -> Demonstrations:
    """Record ``steps`` decisions of ``teacher`` in the learner's seat of ``env`` (whole episodes).

    With a ``driver`` (DAgger), the driver's action is played and the teacher only labels the
    states the driver reaches, so the clone learns to recover from its own mistakes.
    """
    agent = make_agent(teacher)
    rng = np.random.default_rng(seed)
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    episode = 0
    while len(act_l) < steps:
        obs, _ = env.reset(seed=int(rng.integers(2**63)))
        agent.reset(episode)
        episode += 1
        rewards: list[float] = []
        done = False
        while not done:
            decision = decision_for(env.game, env.learner, env.table, env.encoder)
            action = agent.act(decision)
            mask = env.action_masks()
            obs_l.append(obs)
            mask_l.append(mask)
            act_l.append(action)
            played = action if driver is None else driver(obs, mask)
            obs, reward, terminated, truncated, _ = env.step(played)
            rewards.append(float(reward))
            done = terminated or truncated
        ret, returns = 0.0, []
        for r in reversed(rewards):
            ret = r + gamma * ret
            returns.append(ret)
        ret_l.extend(reversed(returns))
    return Demonstrations(
        obs=np.stack(obs_l),
        masks=np.stack(mask_l),
        actions=np.asarray(act_l, dtype=np.int64),
        returns=np.asarray(ret_l, dtype=np.float32),
    )


def _logits_and_values(
    policy: Any, obs: torch.Tensor, masks: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy's masked action logits and its values, straight from its modules."""
    features = policy.extract_features(obs, policy.features_extractor)
    latent_pi, latent_vf = policy.mlp_extractor(features)
    logits = policy.action_net(latent_pi).masked_fill(~masks, float("-inf"))
    return logits, policy.value_net(latent_vf).flatten()


def pretrain(
    model: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 512,
    seed: int = 0,
    learning_rate: float = 1e-3,
) -> list[dict[str, float]]:
    """Fit ``model.policy`` (a MaskablePPO policy) to the demonstrations; one row of losses per epoch.

    Cross-entropy of the teacher's action under the masked policy, plus half the squared error
    of the value head against the returns. It has its own Adam optimizer with a one-cycle
    schedule peaking at ``learning_rate`` (cloning wants a larger step than PPO's), so PPO's
    optimizer starts fresh afterwards.
    """
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    n = len(demos)
    batches = (n + batch_size - 1) // batch_size
    steps = max(1, epochs * batches)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, learning_rate, total_steps=steps)
    rng = np.random.default_rng(seed)
    history = []
    for _ in range(epochs):
        order = rng.permutation(n)
        totals = {"policy_loss": 0.0, "value_loss": 0.0, "accuracy": 0.0}
        for start in range(0, n, batch_size):
            idx = np.sort(order[start : start + batch_size])  # sorted: faster gathers
            obs = torch.as_tensor(demos.obs[idx])
            masks = torch.as_tensor(demos.masks[idx])
            actions = torch.as_tensor(demos.actions[idx])
            logits, values = _logits_and_values(policy, obs, masks)
            policy_loss = torch.nn.functional.cross_entropy(logits, actions)
            value_loss = torch.nn.functional.mse_loss(values, torch.as_tensor(demos.returns[idx]))
            loss = policy_loss + 0.5 * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            k = len(idx)
            totals["policy_loss"] += float(policy_loss.detach()) * k
            totals["value_loss"] += float(value_loss.detach()) * k
            totals["accuracy"] += float((logits.detach().argmax(1) == actions).float().sum())
        history.append({key: v / n for key, v in totals.items()})
    policy.set_training_mode(False)
    return history
