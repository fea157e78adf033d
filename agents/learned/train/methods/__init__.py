"""Training methods, each a small module over the shared loop (:mod:`..loop`) with ``setup(config,
device)``, ``step() -> stats`` (collect and learn once; ``env_steps``: the learner decisions it
consumed), ``state_dict()``/``load_state_dict()`` and ``export(path)`` (a saved player).
"""

from __future__ import annotations

import importlib
from typing import Any

# name: (module, class). A method's module is imported when it is used, so that one method's
# libraries (Stable-Baselines3 for sb3, Ray for rllib) cost the others nothing.
METHODS = {
    "ppo": (".ppo", "PPO"),
    "dmc": (".dmc", "DMC"),
    "dagger": (".dagger", "Dagger"),
    "sb3": (".sb3", "SB3"),
    "scorer": (
        "shanghai_env.agents.learned.train.methods.scorer",
        "Scorer",
    ),  # expert iteration, a round a step
    "rllib": (".rllib", "RLlib"),  # Ray RLlib's PPO, an iteration a step
    "exit": (".exit", "ExIt"),  # expert iteration over the learner's own search, by generations
}


def method_class(name: str) -> Any:
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; methods: {', '.join(METHODS)}")
    module, cls = METHODS[name]
    return getattr(importlib.import_module(module, __name__), cls)
