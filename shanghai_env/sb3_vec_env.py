"""Stable-Baselines3's ``VecEnv`` over the batched games, so that sb3-contrib's MaskablePPO trains
on N games stepped together in one process::

    from sb3_contrib import MaskablePPO
    from shanghai_env.agents.registry import make_agent
    from shanghai_env.sb3_vec_env import SB3VectorEnv

    env = SB3VectorEnv(16, opponents=[lambda: make_agent("greedy")] * 3, num_players=4, contracts=(1,))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, seed=0)
    model.learn(8192)

It is :class:`shanghai_env.gym_vector.SingleAgentVectorEnv`'s view in SB3's API (SB3 takes no
Gymnasium ``VectorEnv``: it wraps one-game envs in its ``DummyVecEnv``, stepping them one by one);
``shanghai_env`` does not import it, as stable-baselines3 is an optional extra. In every game the
learner holds seat 0 and ``opponents`` the other seats (the vector env's ``players`` entries: a
network with ``act_batch`` or ``act_arrays`` decides its seat in all games in one call, a factory
gives each game its own bot); ``reward`` is the vector env's (``"deal"``, ``"win"`` or
``"relative"``), the learner's share of it. Observations ``(N, L)`` int8 (``ObservationEncoder``),
actions ``Discrete(A)`` per game.

- **Shaping** (off by default) as :class:`~shanghai_env.single_agent.SingleAgentEnv`'s:
  ``potential(game, seat) -> float`` adds ``gamma * potential(s') - potential(s)`` to the
  learner's reward between its consecutive decisions, with potential 0 once its game has ended.

- **Masks**: ``action_masks()`` gives ``(N, A)`` bool, and ``env_method("action_masks")`` one
  row per game, which is what sb3-contrib's ``get_action_masks`` calls.
- **Auto-reset** as SB3's own VecEnvs: a game that ended is ``done`` and its row already shows
  the next game's first decision; ``infos[i]`` then holds ``terminal_observation`` (the learner's
  observation of the finished game's last state), ``TimeLimit.truncated`` (always False: a game
  ends by the rules, and SB3 bootstraps only truncated episodes), ``final_scores`` (the finished
  game's totals) and ``episode`` (``r``: the learner's rewards over the game, ``l``: its
  decisions, ``t``: seconds since the env was made), which SB3's logger reads as a ``Monitor``'s.
- **Seeds**: ``seed(s)`` (SB3's: env ``i`` gets ``s + i``) or ``seed([s_0, ..., s_{N-1}])``, used
  by the next ``reset()``; game ``i`` then deals and plays what ``SingleAgentVectorEnv(1,
  ...).reset(seed=s_i)`` does, so both views give the same observations and rewards. Without a
  seed, ``reset()`` draws one.
- **Attributes**: the N games are one object (the batched env), so ``get_attr`` and
  ``env_method`` answer for every index from it and ``set_attr`` sets it for all of them at once
  (a subset of indices is a ValueError); ``env_is_wrapped`` is False (no Gymnasium wrappers).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from .checks import is_int, real_arg
from .single_agent import Potential, potential_arg
from .vector import PlayerEntry
from .vector import VectorEnv as GameBatch

LEARNER = 0  # the learner's seat in every game


class _Games(GameBatch):
    """The batched games, keeping the learner's last observation of a game that ended (SB3's
    ``terminal_observation``) just before the step deals its successor."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.terminal: dict[int, np.ndarray] = {}
        super().__init__(*args, **kwargs)

    def game_ended(self, row: int) -> None:
        self.terminal[row] = self.observe(row, LEARNER).copy()


class SB3VectorEnv(VecEnv):
    """N games, the learner at seat 0 of each, in Stable-Baselines3's VecEnv API (module docstring)."""

    def __init__(
        self,
        num_envs: int = 8,
        *,
        opponents: Sequence[PlayerEntry],
        reward: str = "deal",
        potential: Potential | None = None,
        gamma: float = 0.99,
        **rule_options: Any,
    ) -> None:
        allowed = "the other seats' players (a network or a factory of bots each)"
        if not isinstance(opponents, (list, tuple)):
            raise TypeError(f"opponents must be a list or tuple of {allowed}, got {opponents!r}")
        if any(o is None for o in opponents):
            raise ValueError(f"opponents: every other seat needs a player: {allowed}")
        self.potential = potential_arg(potential)
        self.gamma = real_arg("gamma", gamma, low=0.0, high=1.0)
        self.games = _Games(num_envs, players=[None, *opponents], reward=reward, **rule_options)
        encoder = self.games.encoder
        observation_space = spaces.Box(encoder.low, encoder.high, dtype=np.int8)
        self.render_mode = None
        super().__init__(self.games.num_envs, observation_space, spaces.Discrete(self.games.num_actions))
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(self.num_envs, np.float64)  # the learner's rewards in the current game
        self._lengths = np.zeros(self.num_envs, np.int64)  # its decisions in the current game
        self._phi = np.zeros(self.num_envs, np.float64)  # the potential at the learner's decision now
        self._start = time.perf_counter()

    # --- SB3's VecEnv ------------------------------------------------------------------------

    def seed(self, seed: Any = None) -> Sequence[int | None]:
        """Seeds for the next ``reset()``: an int ``s`` (env ``i`` gets ``s + i``, as SB3's VecEnvs
        do), one per env (a list; ``None`` entries drawn at random), or None (drawn at random)."""
        if seed is None or is_int(seed):
            return super().seed(None if seed is None else int(seed))
        if isinstance(seed, np.ndarray):
            seed = seed.tolist()
        if not isinstance(seed, (list, tuple)):
            raise TypeError(
                f"seed must be an int, a list of {self.num_envs} ints (one per env) or None, got {seed!r}"
            )
        if len(seed) != self.num_envs:
            raise ValueError(f"seed: a list holds one seed per env ({self.num_envs}), got {len(seed)}")
        for i, s in enumerate(seed):
            if s is not None and (not is_int(s) or s < 0):
                raise ValueError(f"seed[{i}] must be a non-negative int or None, got {s!r}")
        self._seeds = [None if s is None else int(s) for s in seed]
        return list(self._seeds)

    def reset(self) -> np.ndarray:
        if any(self._options):
            options = self._options
            self._reset_options()
            raise ValueError(
                f"reset options {options!r} are not supported: every game is dealt from its seed"
            )
        seeds = self._seeds
        self._reset_seeds()
        obs, _, _ = self.games.reset(seed=None if all(s is None for s in seeds) else list(seeds))
        self.games.terminal.clear()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._phi = self._potentials()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() needs a step_async(actions) first")
        actions, self._actions = self._actions, None
        obs, _, _, rewards, done = self.games.step(actions)
        reward = rewards[:, LEARNER].astype(np.float32)
        if self.potential is not None:
            phi = self._potentials()  # a row whose game ended shows its next game: its start's
            shaping = self.gamma * np.where(done, 0.0, phi) - self._phi
            self._phi = phi
            reward += shaping.astype(np.float32)
        self._returns += reward
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        terminal = self.games.terminal
        for i in np.flatnonzero(done).tolist():
            infos[i] = {
                "terminal_observation": terminal.pop(i),
                "TimeLimit.truncated": False,
                "final_scores": self.games.final_scores[i].copy(),
                "episode": {
                    "r": float(self._returns[i]),
                    "l": int(self._lengths[i]),
                    "t": round(time.perf_counter() - self._start, 6),
                },
            }
            self._returns[i] = 0.0
            self._lengths[i] = 0
        terminal.clear()  # a second game ended in one step (inside seats only): not the learner's
        return obs.copy(), reward, done.copy(), infos

    def close(self) -> None:
        """Nothing to release: the games live in this process."""

    def action_masks(self) -> np.ndarray:
        """The legal moves of every game, ``(N, A)`` bool (sb3-contrib's name)."""
        return self.games.mask.astype(bool)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of the batched games' env (one object for every index)."""
        rows = self._indices(indices)
        value = getattr(self, attr_name)  # AttributeError when it has none: has_attr() reads that
        return [value for _ in rows]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the env, for every game at once (they are one object)."""
        rows = self._indices(indices)
        if len(rows) != self.num_envs:
            raise ValueError(
                f"set_attr({attr_name!r}): the {self.num_envs} games are one object; set it for all "
                f"(indices=None), not for {len(rows)}"
            )
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """``action_masks``: one ``(A,)`` bool mask per index; any other method of this env is
        called once and its answer given for every index."""
        rows = self._indices(indices)
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.action_masks()
            return [masks[i] for i in rows]
        answer = getattr(self, method_name)(*method_args, **method_kwargs)
        return [answer for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def _potentials(self) -> np.ndarray:
        """The potential of the learner's state in every game now (zeros without shaping)."""
        if self.potential is None:
            return np.zeros(self.num_envs, np.float64)
        return np.array([float(self.potential(game, LEARNER)) for game in self.games.games], np.float64)

    def _indices(self, indices: Any) -> list[int]:
        """SB3's ``indices`` (None: every env; an int; an iterable of ints) checked."""
        if indices is None:
            return list(range(self.num_envs))
        rows = [indices] if is_int(indices) else list(indices) if isinstance(indices, Iterable) else None
        if rows is None or not all(is_int(i) and 0 <= i < self.num_envs for i in rows):
            raise ValueError(
                f"indices must be None, an env index 0..{self.num_envs - 1} or a list of those, "
                f"got {indices!r}"
            )
        return [int(i) for i in rows]
