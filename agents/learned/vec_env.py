"""A vector env that decides the network opponents of all its envs together.

In one env the seats act one after another, so an opponent network decides one observation at
a time; with several envs in one process, :func:`shanghai_env.single_agent.step_envs` plays each
env on to its next network decision and lets each network decide all of them in one forward pass
(:meth:`~shanghai_env.agents.learned.model.ModelAgent.act_batch`). Same observations, rewards
and infos as Stable-Baselines3's ``DummyVecEnv`` (tests/test_vec_env.py); the speed-up grows
with the number of envs (docs/performance.md, "Training throughput").
"""

from __future__ import annotations

from copy import deepcopy

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

from shanghai_env.single_agent import SingleAgentEnv, step_envs


class BatchedVecEnv(DummyVecEnv):
    """``DummyVecEnv`` of :class:`SingleAgentEnv` whose opponents' networks decide in batches.

    An env that is not a ``SingleAgentEnv`` (a wrapped one) makes it step one env at a time, as
    ``DummyVecEnv`` does."""

    def step_wait(self) -> VecEnvStepReturn:
        envs = self.envs
        if not all(isinstance(env, SingleAgentEnv) for env in envs):
            return super().step_wait()
        stepped = step_envs(envs, list(self.actions))  # type: ignore[arg-type]  # checked above
        # the rest as DummyVecEnv.step_wait (stable-baselines3 2.x)
        for env_idx, (obs, reward, terminated, truncated, info) in enumerate(stepped):
            self.buf_rews[env_idx] = reward
            self.buf_infos[env_idx] = info
            self.buf_dones[env_idx] = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            if self.buf_dones[env_idx]:
                info["terminal_observation"] = obs
                obs, self.reset_infos[env_idx] = envs[env_idx].reset()
            self._save_obs(env_idx, obs)
        infos = deepcopy(self.buf_infos)
        return self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones), infos
