"""Training methods: each a small module over the shared loop (:mod:`..loop`).

A method has ``setup(config, device)``, ``step() -> stats`` (collect and learn once; the stats
include ``env_steps``, the learner decisions it consumed), ``state_dict()``/``load_state_dict()``
for checkpoints and ``export(path)`` (a saved player, :mod:`..policy`).
"""

from __future__ import annotations

from typing import Any


def method_class(name: str) -> Any:
    if name == "ppo":
        from .ppo import PPO

        return PPO
    if name == "dmc":
        from .dmc import DMC

        return DMC
    if name == "dagger":
        from .dagger import Dagger

        return Dagger
    raise ValueError(f"unknown method {name!r}; methods: ppo, dmc, dagger")
