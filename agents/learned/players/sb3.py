"""A trained model as an agent: a saved sb3-contrib ``MaskablePPO`` acting on the observation vector.

:class:`ModelAgent` loads the model on its first decision and plays the choice
``predict(observation, action_masks=mask, deterministic=True)`` makes; :func:`check_model` tells,
from the zip's metadata alone, whether a file is a model that plays a table. In one's own code,
:func:`load_maskable` loads a ``.zip`` of ``shanghai-train sb3``; its ``.policy`` reads the plain
observation (``venv.obs`` of a vector env with the table of :func:`saved_table`)::

    model = load_maskable("runs/sb3/model.zip", device="cpu")
    obs_t = model.policy.obs_to_tensor(venv.obs)[0]
    dist = model.policy.get_distribution(obs_t, action_masks=venv.mask.astype(bool))
    log_probs = dist.distribution.logits  # (B, A): log-probabilities, -1e8 at illegal actions
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from shanghai_env.actions import action_table
from shanghai_env.agents.base import Decision
from shanghai_env.cli import extra_hint, missing_modules
from shanghai_env.models import shipped_models
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import Rules

SAVED_PLAYER = (
    "a saved player is a .pt of shanghai-train ppo, dmc or dagger, a .zip of shanghai-train sb3 "
    "(a MaskablePPO model) or a .scorer of shanghai-train scorer"
)
# what playing a MaskablePPO model imports (the 'train' extra; a scorer needs only numpy)
PLAY_MODULES = ("torch", "sb3_contrib")
MISSING_PREFIX = "playing a saved MaskablePPO model needs the 'train' extra"
# the modules of policies that models of earlier versions were saved with and this one lacks
RETIRED_POLICIES = ("shanghai_env.agents.learned.structured",)

# Models of 0.1.0 name their feature extractor agents.features.RummyFeatures, those of 0.2.0
# shanghai_env.agents.learned.features.RummyFeatures; while a model loads, those names lead here.
_OLD_MODULES = {
    "agents": "shanghai_env.agents",
    "agents.features": "shanghai_env.agents.learned.nets.features",
    "shanghai_env.agents.learned.features": "shanghai_env.agents.learned.nets.features",
}


@contextmanager
def old_module_names() -> Iterator[None]:
    """Let unpickling find classes under the module paths of 0.1.0 (only while the block runs)."""
    added = [old for old in _OLD_MODULES if old not in sys.modules]
    for old in added:
        sys.modules[old] = importlib.import_module(_OLD_MODULES[old])
    try:
        yield
    finally:
        for old in added:
            sys.modules.pop(old, None)


def load_maskable(path: str, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)``, also for models saved under the old module paths;
    ValueError for a shipped player's name (none is a MaskablePPO model)."""
    if isinstance(path, str) and path in shipped_models():
        raise ValueError(
            f"{path!r} is a shipped player but not a MaskablePPO model: a trainer policy (.pt) loads "
            "as a torch module with shanghai_env.agents.learned.players.policy.load_scorer_module, "
            "any shipped player plays through shanghai_env.agents.registry.make_agent"
        )
    from sb3_contrib import MaskablePPO

    with old_module_names():
        return MaskablePPO.load(path, **kwargs)


def save_maskable(model: Any, path: str | Any) -> None:
    """Save ``model`` to play, with a fresh optimiser (a checkpoint keeps the trained one)."""
    # a fresh optimiser: a third of the size, the same choices
    policy = model.policy
    trained = policy.optimizer
    lr = float(model.lr_schedule(1.0))
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=lr, **policy.optimizer_kwargs)
    try:
        model.save(path)
    finally:
        policy.optimizer = trained


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
            missing = missing_modules(PLAY_MODULES)
            if missing:
                raise ImportError(
                    f"{MISSING_PREFIX} ({', '.join(missing)} not installed): {extra_hint('train')}"
                )
            try:
                self._model = load_maskable(self.path, device=self.device)
            except Exception as err:  # SB3 and torch raise AssertionError, UnpicklingError, KeyError, ...
                first = (str(err).strip().splitlines() or [""])[0][:200]
                raise ValueError(
                    f"{self.path!r} cannot be loaded as a saved MaskablePPO model "
                    f"({type(err).__name__}: {first}); {SAVED_PLAYER}"
                ) from err
        return self._model

    def act(self, decision: Decision) -> int:
        """The model's deterministic, masked choice."""
        return self.act_batch([decision])[0]

    def act_batch(self, decisions: list[Decision]) -> list[int]:
        """``[act(d) for d in decisions]`` from one forward pass over all of them."""
        model = self.load()
        masks = np.stack([d.action_mask for d in decisions]).astype(bool)
        if hasattr(getattr(model, "policy", None), "mlp_extractor"):
            return policy_modes(model.policy, np.stack([d.observation for d in decisions]), masks)
        # a model object that is not an actor-critic: its own predict()
        return [
            int(np.ravel(model.predict(d.observation, action_masks=m, deterministic=True)[0])[0])
            for d, m in zip(decisions, masks)
        ]


def policy_modes(policy: Any, observations: np.ndarray, masks: np.ndarray) -> list[int]:
    """The mode of a MaskablePPO policy at every row of ``observations``, masked by the same row
    of ``masks``: what ``predict(..., deterministic=True)`` returns, from one forward pass."""
    # as MaskableCategorical computes it: masked logits set to -1e8, softmax, argmax
    import torch

    with torch.inference_mode():
        logits = policy.action_net(_actor_latent(policy, observations))
        legal = torch.as_tensor(masks, dtype=torch.bool, device=logits.device)
        masked = logits.masked_fill(~legal, -1e8)
        return [int(a) for a in torch.softmax(masked, dim=1).argmax(dim=1)]


def legal_modes(policy: Any, observations: np.ndarray, legal: list[list[int]]) -> list[int]:
    """The most probable legal action of a MaskablePPO policy at every row of ``observations``,
    from each row's ``legal`` ids: :func:`policy_modes`' choices up to rounding between two nearly
    equal logits, from the logits of the legal actions alone."""
    # the same dot products RummyPolicy samples the learner's moves from (LegalDots)
    import torch

    from shanghai_env.agents.learned.nets.policy import LegalDots

    counts = np.fromiter(map(len, legal), np.int64, len(legal))
    flat = np.fromiter(itertools.chain.from_iterable(legal), np.int64, int(counts.sum()))
    rows = np.repeat(np.arange(len(legal)), counts)
    with torch.inference_mode():
        latent = _actor_latent(policy, observations)
        head = policy.action_net
        actions = torch.from_numpy(flat).to(latent.device)
        dots = LegalDots.dots(head.weight, latent, actions, torch.from_numpy(rows).to(latent.device))
        scores = (dots + head.bias.index_select(0, actions)).cpu().numpy()
    # each row's first best (argmax over the rows padded with -inf), in numpy: a small batch's
    # few operations cost less there
    starts = np.cumsum(counts) - counts
    logits = np.full((len(legal), int(counts.max(initial=1))), -np.inf, np.float32)
    logits[rows, np.arange(len(flat)) - starts[rows]] = scores
    return flat[starts + logits.argmax(1)].tolist()


def _actor_latent(policy: Any, observations: np.ndarray) -> Any:
    """The policy's last hidden layer, in eval mode; call within ``torch.inference_mode()``."""
    import torch
    from stable_baselines3.common.policies import BaseModel

    if policy.training:  # set once: predict() would switch every module on every call
        policy.set_training_mode(False)
    rows = np.asarray(observations).reshape(len(observations), -1)
    if hasattr(policy, "actor_latent"):  # RummyPolicy's: through the features' nonzero entries
        return policy.actor_latent(rows)
    # float32 through numpy: a copy either way, and the batched games' arrays are read-only
    obs = torch.from_numpy(np.asarray(rows, np.float32)).to(policy.device)
    features = BaseModel.extract_features(policy, obs, policy.pi_features_extractor)
    return policy.mlp_extractor.forward_actor(features)


def observation_encoder(rules: Rules) -> ObservationEncoder:
    """The environment's observation encoder for these rules."""
    return ObservationEncoder(rules)


@dataclass(frozen=True)
class ModelTable:
    """A model's table: observation length, number of actions, and players and contracts if recorded."""

    observation: int
    actions: int
    num_players: int | None = None
    contracts: tuple[int, ...] | None = None

    def describe(self) -> str:
        """E.g. ``4 players, contracts 1 (observations of 1382 values, 1626 actions)``."""
        sizes = f"observations of {self.observation} values, {self.actions} actions"
        if self.num_players is None or self.contracts is None:
            return sizes
        return f"{self.num_players} players, contracts {','.join(map(str, self.contracts))} ({sizes})"


def table_for(rules: Rules) -> ModelTable:
    """The table of the environment for these rules (what a model must have been trained on)."""
    return ModelTable(
        ObservationEncoder(rules).size, action_table(rules).size, rules.num_players, rules.contracts
    )


def saved_table(path: str) -> ModelTable:
    """The table the saved model at ``path`` was trained on, read without loading the network
    (the player count and contracts where the zip or the ``.json`` beside it records them);
    ValueError if it is not a saved model."""
    try:
        with zipfile.ZipFile(path) as z:
            if not {"data", "policy.pth"} <= set(z.namelist()):
                raise ValueError(f"{path!r} is a zip file but not a saved MaskablePPO model")
            damaged = z.testzip()
            if damaged is not None:
                raise ValueError(f"{path!r} is damaged ({damaged} in it does not read back)")
            data = json.loads(z.read("data"))
    except ValueError:
        raise
    except zipfile.BadZipFile:
        raise ValueError(f"{path!r} is not a saved model (not a zip file)") from None
    except Exception as err:  # truncated or unreadable files raise many kinds of errors
        raise ValueError(f"{path!r} cannot be read as a saved model: {err}") from None
    policy_class = data.get("policy_class") if isinstance(data, dict) else None
    if isinstance(policy_class, dict) and policy_class.get("__module__") in RETIRED_POLICIES:
        raise ValueError(
            f"{path!r} is a structured MaskablePPO policy (the ppo_full_* players), retired after "
            "shanghai-env 0.2.0, which still plays it (pip install shanghai-env==0.2.0)"
        )
    try:
        observation = int(np.prod(data["observation_space"]["_shape"]))
        actions = int(data["action_space"]["n"])
    except Exception:
        raise ValueError(f"{path!r} is not a model of this game (no observation vector, actions)") from None
    return ModelTable(observation, actions, *_recorded_table(data, path))


def check_model(path: str, rules: Rules, where: str = "this table") -> ModelTable:
    """Raise ValueError unless ``path`` is a saved model that plays ``rules``' table; the message
    names what the model was trained for and ``where`` (e.g. "the tournament") with its table."""
    saved = saved_table(path)
    wanted = table_for(rules)
    same = (saved.observation, saved.actions) == (wanted.observation, wanted.actions)
    if not same or saved.num_players not in (None, wanted.num_players):
        raise ValueError(f"{path!r} was trained for {saved.describe()}; {where} is {wanted.describe()}")
    return saved


def _recorded_table(data: dict[str, Any], path: str) -> tuple[int, tuple[int, ...]] | tuple[None, None]:
    """The player count and contracts recorded with the model, or (None, None)."""
    kwargs = data.get("policy_kwargs")
    candidates = [kwargs.get("features_extractor_kwargs")] if isinstance(kwargs, dict) else []
    try:
        with open(os.path.splitext(path)[0] + ".json", encoding="utf-8") as f:
            meta = json.load(f)
        candidates.append(meta.get("config") if isinstance(meta, dict) else None)
    except (OSError, ValueError):
        pass  # no record beside the file
    for c in candidates:
        if isinstance(c, dict) and isinstance(c.get("num_players"), int) and c.get("contracts"):
            try:
                return int(c["num_players"]), tuple(int(x) for x in c["contracts"])
            except (TypeError, ValueError):
                continue
    return None, None
