"""The single-agent view is registered with Gymnasium on ``import shanghai_env``."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.passive_env_checker import check_obs
from gymnasium.vector import AutoresetMode

import shanghai_env
from shanghai_env import GYM_ENV_ID, SingleAgentEnv, register_gymnasium
from shanghai_env.agents.registry import make_agent
from shanghai_env.gym_vector import SingleAgentVectorEnv


def test_registered_once_with_the_entry_point_string() -> None:
    assert GYM_ENV_ID == "shanghai/ShanghaiSingleAgent-v0"
    spec = gymnasium.spec(GYM_ENV_ID)
    assert spec.entry_point == "shanghai_env.single_agent:SingleAgentEnv"
    assert spec.vector_entry_point == "shanghai_env.gym_vector:SingleAgentVectorEnv"
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


def test_make_vec_through_the_vector_entry_point_passes_gymnasiums_checks() -> None:
    def made(**kwargs):
        return gymnasium.make_vec(
            GYM_ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", contracts=(1,), **kwargs
        )

    envs = made()
    assert isinstance(envs, SingleAgentVectorEnv) and envs.num_envs == 3
    assert isinstance(envs.metadata["autoreset_mode"], AutoresetMode)
    assert envs.spec is not None and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    assert isinstance(gymnasium.make_vec(GYM_ENV_ID, num_envs=2), SingleAgentVectorEnv)  # no mode named
    obs, info = envs.reset(seed=5)
    assert envs.observation_space.contains(obs)
    for row in obs:  # what check_env checks of a single env's observations, row by row
        check_obs(row, envs.single_observation_space, "reset")
    again, _ = made().reset(seed=5)  # a seed fixes the games (check_env's determinism)
    assert np.array_equal(obs, again)
    actions = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
    assert envs.action_space.contains(actions)
    first = obs
    obs, rewards, terminations, truncations, info = envs.step(actions)
    assert np.array_equal(first, again)  # a returned array is not rewritten by the next step
    assert envs.observation_space.contains(obs)
    assert rewards.shape == terminations.shape == truncations.shape == (3,)
    assert rewards.dtype.kind == "f" and terminations.dtype == truncations.dtype == np.bool_
    # the opponents default to random players, as the single env's: the same games with them named
    named = made(opponents=[shanghai_env.single_agent.UniformRandomAgent] * 3)
    named.reset(seed=5)
    assert np.array_equal(named.step(actions)[0], obs)


def test_sampling_from_every_mask_of_the_vector_entry_point_runs() -> None:
    envs = gymnasium.make_vec(
        GYM_ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", num_players=3, contracts=(1,)
    )
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        masks = info["action_mask"]
        assert masks.any(1).all() and np.array_equal(masks.astype(bool), envs.action_masks())
        actions = [rng.choice(np.flatnonzero(m)) for m in masks]  # fails on an empty mask
        _, _, terminations, truncations, info = envs.step(actions)
        ended += int(terminations.sum())
        assert not truncations.any()
    assert ended >= 4  # games ended and restarted on their own, each with a legal move at once


def test_the_batched_view_refuses_the_single_envs_options() -> None:
    with pytest.raises(TypeError, match=r"learner_seat, max_steps: options of the single env.*sync"):
        gymnasium.make_vec(
            GYM_ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", learner_seat=1, max_steps=9
        )
    SingleAgentVectorEnv(2, render_mode=None, contracts=(1,))  # None is no option given


def test_a_sync_vector_env_under_next_step_autoreset_holds_an_empty_mask_when_a_game_ends() -> None:
    """What the docs say of Gymnasium's default route: the step a game ends shows its final
    observation with no legal move; the next step ignores that row's action and deals anew."""
    envs = gymnasium.make_vec(GYM_ENV_ID, num_envs=2, vectorization_mode="sync", contracts=(1,))
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    done = np.zeros(2, bool)
    for _ in range(3000):
        actions = [rng.choice(np.flatnonzero(m)) if not d else 0 for m, d in zip(info["action_mask"], done)]
        _, _, terminations, truncations, info = envs.step(actions)
        if done.any():  # the step after an end: a new game, with its legal moves
            assert info["action_mask"][done].any(1).all() and not terminations[done].any()
            break
        done = terminations | truncations
        assert not info["action_mask"][terminations].any()
    else:
        raise AssertionError("no game ended")
