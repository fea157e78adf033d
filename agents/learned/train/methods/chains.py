"""Each learner seat's decisions in a rollout, as a chain through its game (ppo and dagger): a
decision's successor is that seat's next decision in the same game (seats do not alternate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from shanghai_env.batched import BatchedEnv


class SeatChains:
    """The chains of a rollout of ``steps`` steps of every game of ``venv``."""

    def __init__(self, venv: BatchedEnv, steps: int, learner_seats: Sequence[int]) -> None:
        n, p = venv.num_envs, venv.num_players
        size = n * steps
        self.venv = venv
        self.learner_seats = tuple(learner_seats)
        self.rows = np.arange(n)
        self.rewards = np.zeros(size, np.float32)
        self.terminal = np.zeros(size, bool)
        self.nxt = np.full(size, -1, np.int64)  # the same seat's next decision, -1: none yet
        self.last = np.full((n, p), -1, np.int64)  # each seat's latest decision in each game
        self.finished: list[float] = []  # per learner seat of each ended game: its score minus the others'

    def add(self, cur: np.ndarray) -> None:
        """The decisions ``cur`` (one per game, by the seat to act now) join their seats' chains."""
        seat = self.venv.seat
        prev = self.last[self.rows, seat]
        linked = prev >= 0
        self.nxt[prev[linked]] = cur[linked]
        self.last[self.rows, seat] = cur

    def settle(self, rew: np.ndarray, done: np.ndarray) -> None:
        """A step's rewards ``(N, players)`` to each seat's latest decision; ended games close."""
        last = self.last
        for i in np.flatnonzero(rew.any(1)):
            for s in self.learner_seats:
                j = last[i, s]
                if j >= 0:
                    self.rewards[j] += rew[i, s]
        for i in np.flatnonzero(done):
            for s in self.learner_seats:
                j = last[i, s]
                if j >= 0:
                    self.terminal[j] = True
                last[i, s] = -1
            scores = self.venv.final_scores[i]
            self.finished.extend(float(scores[s] - np.delete(scores, s).mean()) for s in self.learner_seats)

    def bootstrap(self, value_of: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """Per decision, the value that closes an open chain (0 elsewhere): ``value_of(obs,
        extra)`` of each open seat's own view now."""
        venv, last = self.venv, self.last
        boot = np.zeros(len(self.rewards), np.float32)
        open_i, open_s = np.nonzero(last >= 0)
        if open_i.size:
            obs_now = np.stack([venv.observe(int(i), int(s)) for i, s in zip(open_i, open_s)])
            extra_now = np.stack([venv.observe_extra(int(i), int(s)) for i, s in zip(open_i, open_s)])
            boot[last[open_i, open_s]] = value_of(obs_now, extra_now)
        return boot

    def advantages(self, values: np.ndarray, boot: np.ndarray, gamma: float, lam: float) -> np.ndarray:
        """Generalised advantage estimates along each seat's chain (``lam`` 1: return minus ``values``)."""
        rewards, terminal, nxt = self.rewards, self.terminal, self.nxt
        adv = np.zeros_like(values)
        for t in range(len(values) - 1, -1, -1):
            if terminal[t]:
                next_value, next_adv = 0.0, 0.0
            elif nxt[t] >= 0:
                next_value, next_adv = values[nxt[t]], adv[nxt[t]]
            else:
                next_value, next_adv = boot[t], 0.0
            delta = rewards[t] + gamma * next_value - values[t]
            adv[t] = delta + gamma * lam * next_adv
        return adv
