"""A trained model as an agent: a saved sb3-contrib ``MaskablePPO`` acting on the observation vector.

The model is loaded lazily (``MaskablePPO.load``) on the first decision, so naming a model costs
nothing until it plays, and worker processes each load their own copy. At every decision it
calls ``predict(observation, action_masks=mask, deterministic=True)`` on the acting player's
observation from :class:`shanghai_env.observation.ObservationEncoder` (imported only here,
only when a model plays), so a model sees exactly what the environment showed it in training.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .base import Decision


class ModelAgent:
    """Acts with a saved MaskablePPO policy (deterministic: the mode of the masked policy)."""

    needs_observation = True

    def __init__(self, path: str, name: str | None = None, device: str = "cpu") -> None:
        self.path = path
        self.name = name or os.path.splitext(os.path.basename(path))[0]
        self.device = device
        self._model: Any = None

    def reset(self, seed: int | None = None) -> None:
        """Deterministic prediction needs no seed; the loaded model is kept across games."""

    def load(self) -> Any:
        """The MaskablePPO model, loaded on first use."""
        if self._model is None:
            try:
                from sb3_contrib import MaskablePPO
            except ImportError as err:  # pragma: no cover - depends on the installed extras
                raise ImportError(
                    "playing a saved model needs sb3-contrib: pip install -e '.[train]'"
                ) from err
            self._model = MaskablePPO.load(self.path, device=self.device)
        return self._model

    def act(self, decision: Decision) -> int:
        """The model's deterministic, masked choice."""
        model = self.load()
        mask = decision.action_mask.astype(bool)
        action, _ = model.predict(self._model_input(model, decision), action_masks=mask, deterministic=True)
        a = int(np.asarray(action).reshape(-1)[0])
        if not 0 <= a < mask.size or not mask[a]:
            raise ValueError(f"model {self.name!r} chose action {a}, which is not legal here")
        return a

    @staticmethod
    def _model_input(model: Any, decision: Decision) -> Any:
        """The observation vector, or a dict of it and the mask if the model was trained on one."""
        space = getattr(model, "observation_space", None)
        keys = list(getattr(space, "spaces", {}) or {})
        if not keys:
            return decision.observation
        return {k: decision.action_mask if "mask" in k else decision.observation for k in keys}


def observation_encoder(rules: Any) -> Any:
    """The environment's observation encoder for these rules (imported lazily)."""
    from shanghai_env.observation import ObservationEncoder

    return ObservationEncoder(rules)
