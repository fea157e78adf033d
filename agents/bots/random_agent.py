"""``random``: a uniformly random legal action.

Strategy: none. Every legal action id (ascending order) is equally likely, drawn from a
``numpy.random.Generator`` seeded by :meth:`RandomAgent.reset`. It is the floor every other
player should beat, and a stress test for the engine: random players rarely go down, buy
whenever the coin says so, and can make a deal last very long (the tournament caps each deal).
"""

from __future__ import annotations

import numpy as np

from shanghai_env.agents.base import Decision


class RandomAgent:
    """Uniform over legal actions."""

    def __init__(self, name: str = "random", seed: int | None = None) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the generator."""
        self.rng = np.random.default_rng(seed)

    def act(self, decision: Decision) -> int:
        """A uniformly random legal action id."""
        legal = decision.legal_actions
        return legal[int(self.rng.integers(len(legal)))]
