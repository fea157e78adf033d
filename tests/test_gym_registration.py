"""The single-agent view is registered with Gymnasium on ``import shanghai_env``."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env

import shanghai_env
from shanghai_env import GYM_ENV_ID, SingleAgentEnv, register_gymnasium
from shanghai_env.agents.registry import make_agent


def test_registered_once_with_the_entry_point_string() -> None:
    assert GYM_ENV_ID == "shanghai/ShanghaiSingleAgent-v0"
    spec = gymnasium.spec(GYM_ENV_ID)
    assert spec.entry_point == "shanghai_env.single_agent:SingleAgentEnv"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # registering again would warn "Overriding environment"
        register_gymnasium()
        register_gymnasium()
    assert gymnasium.spec(GYM_ENV_ID) is spec
    assert shanghai_env.register_gymnasium is register_gymnasium


def test_make_with_defaults_plays_and_passes_the_env_checker() -> None:
    env = gymnasium.make(GYM_ENV_ID)  # default opponents: uniformly random legal players
    assert isinstance(env.unwrapped, SingleAgentEnv)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    for _ in range(20):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, _, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs) and not truncated
        if terminated:
            break
    check_env(env.unwrapped)
    env.close()


def test_keyword_arguments_reach_the_env() -> None:
    opponents = [make_agent("greedy"), make_agent("random")]
    env = gymnasium.make(
        GYM_ENV_ID, opponents=opponents, num_players=3, contracts=(1,), learner_seat=2, max_episode_steps=50
    )
    inner = env.unwrapped
    assert isinstance(inner, SingleAgentEnv)
    assert inner.rules.num_players == 3 and inner.rules.contracts == (1,)
    obs, info = env.reset(seed=4)
    assert info["learner_seat"] == 2 and obs.shape == inner.observation_space.shape
    steps, truncated, terminated = 0, False, False
    while not (terminated or truncated):
        action = int(np.flatnonzero(info["action_mask"])[0])
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
    assert steps <= 50  # the TimeLimit gymnasium.make added
    check_env(inner)


def test_make_vec() -> None:
    envs = gymnasium.make_vec(GYM_ENV_ID, num_envs=2, vectorization_mode="sync", contracts=(1,))
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, *envs.single_observation_space.shape)
    envs.close()
