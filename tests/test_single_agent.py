"""The single-agent Gymnasium view: env checkers, masks and rewards against the AEC env, vector envs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from shanghai_env.aec import raw_env
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.random_agent import RandomAgent
from shanghai_env.decision import Decision
from shanghai_env.engine import Game
from shanghai_env.single_agent import SingleAgentEnv


class Recorder:
    """Wraps an agent and writes every action it takes into a shared log (seat, action)."""

    def __init__(self, agent: Any, seat_log: list[tuple[int, int]]) -> None:
        self.agent = agent
        self.name = agent.name
        self.log = seat_log

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, decision: Decision) -> int:
        a = self.agent.act(decision)
        self.log.append((decision.view.player, a))
        return a


def _greedy_env(**kwargs: Any) -> SingleAgentEnv:
    return SingleAgentEnv([GreedyBot() for _ in range(3)], **kwargs)


def test_gymnasium_env_checker() -> None:
    env = _greedy_env()
    gym_check_env(env, skip_render_check=True)


def test_sb3_check_env() -> None:
    from stable_baselines3.common.env_checker import check_env

    check_env(_greedy_env(), warn=True)
    check_env(SingleAgentEnv(None, contracts=(1, 2), num_players=3), warn=True)


def test_random_opponents_by_default_and_bad_arguments() -> None:
    env = SingleAgentEnv()
    obs, info = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.int8
    assert env.observation_space.contains(obs)
    assert info["action_mask"].sum() >= 1 and env.action_masks().dtype == bool
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv([GreedyBot()])
    with pytest.raises(ValueError, match="reward"):
        SingleAgentEnv(reward="points")
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentEnv(learner_seat=4)


def test_illegal_action_ends_the_episode() -> None:
    env = _greedy_env()
    env.reset(seed=3)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and info["illegal_action"] and reward == -1.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def _play_and_replay(reward: str, seed: int, seat: int, contracts: tuple[int, ...]) -> None:
    """Play one seeded episode with random learner actions, then replay every action in the AEC
    env: same masks at every learner decision, same rewards in total."""
    log: list[tuple[int, int]] = []
    opponents = [Recorder(GreedyBot(), log) for _ in range(3)]
    env = SingleAgentEnv(opponents, contracts=contracts, reward=reward, learner_seat=seat)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    masks = [info["action_mask"].copy()]
    total = 0.0
    done = False
    while not done:
        mask = env.action_masks()
        assert np.array_equal(mask, masks[-1].astype(bool))
        a = int(rng.choice(np.flatnonzero(mask)))
        log.append((seat, a))
        _, r, terminated, truncated, info = env.step(a)
        total += r
        done = terminated or truncated
        masks.append(info["action_mask"].copy())
    assert terminated and info["capped_deals"] == 0
    assert env.game.game_over

    aec = raw_env(contracts=contracts, reward=reward)
    aec.reset(seed=seed)
    learner = f"player_{seat}"
    aec_total = 0.0
    decisions = 0
    for actor_seat, a in log:
        assert aec.agent_selection == f"player_{actor_seat}"
        if actor_seat == seat:
            assert np.array_equal(aec.observe(learner)["action_mask"], masks[decisions])
            decisions += 1
        aec.step(a)
        aec_total += aec.rewards[learner]
    assert all(aec.terminations.values())
    assert decisions == len(masks) - 1
    assert aec.game.scores == env.game.scores
    assert total == pytest.approx(aec_total)


@pytest.mark.parametrize(
    ("reward", "seed", "seat", "contracts"),
    [("deal", 0, 0, (1, 2)), ("deal", 7, 2, (1,)), ("win", 3, 1, (1, 2)), ("win", 11, 3, (1,))],
)
def test_masks_and_rewards_match_the_aec_env(
    reward: str, seed: int, seat: int, contracts: tuple[int, ...]
) -> None:
    _play_and_replay(reward, seed, seat, contracts)


def test_deal_rewards_add_up_to_minus_the_score() -> None:
    env = _greedy_env(contracts=(1, 2))
    for seed in range(3):
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            a = int(np.flatnonzero(env.action_masks())[0])
            _, r, te, tr, info = env.step(a)
            total += r
            done = te or tr
        assert total == pytest.approx(-info["score"] / 100)
        assert info["game_scores"][env.learner] == info["score"]


def test_same_seed_same_episode_and_random_seats() -> None:
    def run(seed: int) -> tuple[int, list[int], float]:
        env = SingleAgentEnv([RandomAgent() for _ in range(3)], contracts=(1,))
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        obs_sum = [int(obs.sum())]
        total, done = 0.0, False
        while not done:
            obs, r, te, tr, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            obs_sum.append(int(obs.sum()))
            total += r
            done = te or tr
        return info["learner_seat"], obs_sum, total

    assert run(5) == run(5)
    seats = {SingleAgentEnv().reset(seed=s)[1]["learner_seat"] for s in range(12)}
    assert len(seats) > 1


def test_move_cap_ends_deals_with_scores() -> None:
    env = SingleAgentEnv(None, contracts=(1, 2), max_moves_per_deal=40, learner_seat=0)
    env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        _, r, te, tr, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        total += r
        done = te or tr
    assert te and not tr and info["capped_deals"] >= 1
    assert total == pytest.approx(-info["score"] / 100)


def test_step_cap_truncates() -> None:
    env = SingleAgentEnv(None, max_steps=5)
    env.reset(seed=0)
    for _ in range(4):
        _, _, te, tr, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert not te and not tr
    _, _, te, tr, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert tr and not te


def test_potential_shaping_telescopes() -> None:
    """With gamma = 1 the shaping terms add up to -potential(start): the return is unchanged
    up to that constant (potential-based shaping)."""

    def potential(game: Game, seat: int) -> float:
        return -sum(game.hands[seat]) / 10

    env = SingleAgentEnv([GreedyBot() for _ in range(3)], potential=potential, gamma=1.0, learner_seat=1)
    env.reset(seed=4)
    start = potential(env.game, 1)
    shaping, total, done = 0.0, 0.0, False
    while not done:
        _, r, te, tr, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        shaping += info["shaping"]
        total += r
        done = te or tr
    assert shaping == pytest.approx(-start)
    assert total - shaping == pytest.approx(-info["score"] / 100)


def test_subproc_vec_env_with_masks() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([lambda: SingleAgentEnv([GreedyBot() for _ in range(3)]) for _ in range(2)])
    try:
        vec.seed(0)
        vec.reset()
        rng = np.random.default_rng(0)
        for _ in range(60):
            masks = get_action_masks(vec)
            assert masks.shape == (2, vec.action_space.n) and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            vec.step(actions)
    finally:
        vec.close()
