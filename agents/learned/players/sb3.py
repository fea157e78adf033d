"""A trained model as an agent: a saved sb3-contrib ``MaskablePPO`` acting on the observation vector.

The model is loaded lazily (``MaskablePPO.load``) on the first decision, so naming a model costs
nothing until it plays, and worker processes each load their own copy. At every decision it
takes the mode of the masked policy on the acting player's observation from
:class:`shanghai_env.observation.ObservationEncoder` (imported only here, only when a model
plays), so a model sees exactly what the environment showed it in training. The choice is the
one ``predict(observation, action_masks=mask, deterministic=True)`` makes, computed without its
per-call overhead (switching every module to eval mode, building a distribution object): the
policy is put in eval mode once, the logits come from one forward pass under
``torch.inference_mode``, and the same masked softmax is maximised (tests/test_model_agent.py
checks the two agree).

:func:`check_model` tells, before any game, whether a saved file is a model at all and whether it
plays a given table: the observation length and the number of actions depend on the player count,
the number of deals and the most melds of a contract, and the file records the ones it was
trained on (read from the zip's metadata, without loading the network).

**In one's own code** a ``.zip`` of ``shanghai-train sb3`` is an sb3-contrib model, not a
:class:`~shanghai_env.agents.learned.nets.policy.PolicyNet` (for those, the ``.pt`` players, see
:func:`shanghai_env.agents.learned.players.policy.load_scorer_module`). Load it with
:func:`load_maskable` (``MaskablePPO.load`` that also finds the classes of older files); its
``.policy`` is a ``MaskableActorCriticPolicy`` reading the plain observation (``venv.obs`` of a
vector env with the table of :func:`saved_table`), and its masked action distribution gives
probabilities over every action::

    model = load_maskable("runs/sb3/model.zip", device="cpu")
    obs_t = model.policy.obs_to_tensor(venv.obs)[0]
    dist = model.policy.get_distribution(obs_t, action_masks=venv.mask.astype(bool))
    log_probs = dist.distribution.logits  # (B, A): log-probabilities, -1e8 at illegal actions
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import pickle
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from shanghai_env.agents.base import Decision
from shanghai_env.cli import extra_hint, missing_modules

SAVED_PLAYER = (
    "a saved player is a .zip written by shanghai-train (a MaskablePPO model) "
    "or by shanghai-train scorer (a scorer)"
)
# what playing a MaskablePPO model imports (the 'train' extra; a scorer needs only numpy)
PLAY_MODULES = ("torch", "sb3_contrib")
MISSING_PREFIX = "playing a saved MaskablePPO model needs the 'train' extra"
# the modules of policies that models of earlier versions were saved with and this one lacks
RETIRED_POLICIES = ("shanghai_env.agents.learned.structured",)

# Models saved before the players moved under shanghai_env.agents name their feature extractor
# by its old module path (agents.features.RummyFeatures); while a model loads, those names lead
# to the modules' new homes.
# 0.2.0 kept the extractor at shanghai_env.agents.learned.features (before the networks moved
# into learned/nets/).
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
    """``MaskablePPO.load(path, **kwargs)``, also for models saved under the old module paths: the
    way to load a ``.zip`` of ``shanghai-train sb3`` in one's own code (the module docstring)."""
    from sb3_contrib import MaskablePPO

    with old_module_names():
        return MaskablePPO.load(path, **kwargs)


def save_maskable(model: Any, path: str | Any) -> None:
    """Save ``model`` to play: with a fresh optimiser (a third of the size, the same choices; a
    checkpoint keeps the trained optimiser to go on training)."""
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
        """``[act(d) for d in decisions]`` from one forward pass over all of them (the model keeps
        nothing between decisions, so several games' decisions can be taken together)."""
        model = self.load()
        masks = np.stack([d.action_mask for d in decisions]).astype(bool)
        inputs = [self._model_input(model, d) for d in decisions]
        policy = getattr(model, "policy", None)
        if isinstance(inputs[0], dict) or not hasattr(policy, "mlp_extractor"):
            # dict observations, or a model object that is not an actor-critic: its own predict()
            chosen = [
                int(np.asarray(model.predict(x, action_masks=m, deterministic=True)[0]).reshape(-1)[0])
                for x, m in zip(inputs, masks)
            ]
        else:
            chosen = policy_modes(policy, np.stack(inputs), masks)
        for a, mask in zip(chosen, masks):
            if not 0 <= a < mask.size or not mask[a]:
                raise ValueError(f"model {self.name!r} chose action {a}, which is not legal here")
        return chosen

    @staticmethod
    def _model_input(model: Any, decision: Decision) -> Any:
        """The observation vector, or a dict of it and the mask if the model was trained on one."""
        space = getattr(model, "observation_space", None)
        keys = list(getattr(space, "spaces", {}) or {})
        if not keys:
            return decision.observation
        return {k: decision.action_mask if "mask" in k else decision.observation for k in keys}


def policy_mode(policy: Any, observation: np.ndarray, mask: np.ndarray) -> int:
    """The mode of a MaskablePPO policy masked by ``mask`` at one observation vector: the action
    ``predict(observation, action_masks=mask, deterministic=True)`` returns, computed as
    MaskableCategorical does (masked logits set to -1e8, softmax, argmax) from one forward pass."""
    return policy_modes(policy, np.asarray(observation).reshape(1, -1), np.asarray(mask).reshape(1, -1))[0]


def policy_modes(policy: Any, observations: np.ndarray, masks: np.ndarray) -> list[int]:
    """:func:`policy_mode` of every row of ``observations`` (masked by the same row of ``masks``),
    from one forward pass over the batch."""
    import torch
    from stable_baselines3.common.policies import BaseModel

    if policy.training:  # once: predict() would switch every module on every call
        policy.set_training_mode(False)
    with torch.inference_mode():
        obs = torch.as_tensor(observations, dtype=torch.float32, device=policy.device)
        obs = obs.reshape(len(observations), -1)
        features = BaseModel.extract_features(policy, obs, policy.pi_features_extractor)
        logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
        legal = torch.as_tensor(masks, dtype=torch.bool, device=logits.device)
        masked = logits.masked_fill(~legal, -1e8)
        return [int(a) for a in torch.softmax(masked, dim=1).argmax(dim=1)]


def observation_encoder(rules: Any) -> Any:
    """The environment's observation encoder for these rules (imported lazily)."""
    from shanghai_env.observation import ObservationEncoder

    return ObservationEncoder(rules)


@dataclass(frozen=True)
class ModelTable:
    """The table a model plays: its observation length and number of actions, and the player
    count and contracts where they are known."""

    observation: int
    actions: int
    num_players: int | None = None
    contracts: tuple[int, ...] | None = None
    deals: int | None = None  # known from the sizes alone when the contracts are not recorded

    def describe(self) -> str:
        """E.g. ``4 players, contracts 1 (observations of 1382 values, 1626 actions)``."""
        sizes = f"observations of {self.observation} values, {self.actions} actions"
        if self.num_players is None:
            return sizes
        text = f"{self.num_players} players"
        if self.contracts:
            text += f", contracts {','.join(map(str, self.contracts))}"
        elif self.deals:
            text += f", {self.deals} deal{'s' * (self.deals > 1)}"
        return f"{text} ({sizes})"


def table_for(rules: Any) -> ModelTable:
    """The table of the environment for these rules (what a model must have been trained on)."""
    from shanghai_env.actions import action_table

    return ModelTable(
        observation_encoder(rules).size,
        action_table(rules).size,
        rules.num_players,
        tuple(rules.contracts),
    )


def saved_table(path: str) -> ModelTable:
    """The table the saved model at ``path`` was trained on; ValueError if it is not a saved model.

    Reads the zip's ``data`` (SB3's JSON of the model's attributes): the spaces' sizes, and the
    player count and contracts from the feature extractor's arguments or, failing that, from the
    training's JSON beside the file (``model.json``, or the zip's name with ``.json``).
    """
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "data" not in names or "policy.pth" not in names:
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
    policy_class = data.get("policy_class")
    if isinstance(policy_class, dict) and policy_class.get("__module__") in RETIRED_POLICIES:
        raise ValueError(
            f"{path!r} is a structured MaskablePPO policy (the ppo_full_* players), retired after "
            "shanghai-env 0.2.0, which still plays it (pip install shanghai-env==0.2.0)"
        )
    try:
        observation = _space_size(data["observation_space"])
        actions = int(data["action_space"]["n"])
    except Exception:
        raise ValueError(f"{path!r} is not a model of this game (no observation vector, actions)") from None
    players, contracts = _recorded_table(data, path)
    table = ModelTable(observation, actions, players, contracts)
    if players is not None and contracts is not None:
        from shanghai_env.rules import Rules

        try:
            recorded = table_for(Rules(num_players=players, contracts=contracts))
        except Exception:
            recorded = None
        if recorded is None or (recorded.observation, recorded.actions) != (observation, actions):
            table = ModelTable(observation, actions)  # the record does not fit the file: sizes only
    if table.num_players is None:
        table = _inferred(observation, actions)
    return table


def check_model(path: str, rules: Any, where: str = "this table") -> ModelTable:
    """Raise ValueError unless ``path`` is a saved model that plays ``rules``' table.

    The message names both tables: what the model was trained for, and ``where`` (e.g. "the
    tournament") with the table it asks for.
    """
    saved = saved_table(path)
    wanted = table_for(rules)
    same = (saved.observation, saved.actions) == (wanted.observation, wanted.actions)
    if not same or saved.num_players not in (None, wanted.num_players):
        raise ValueError(f"{path!r} was trained for {saved.describe()}; {where} is {wanted.describe()}")
    return saved


def _space_size(space: dict[str, Any]) -> int:
    """The observation vector's length from SB3's JSON of a space (a Box, or a Dict with a mask)."""
    shape = space.get("_shape")
    if shape:
        return int(np.prod(shape))
    loaded = pickle.loads(base64.b64decode(space[":serialized:"]))
    spaces = getattr(loaded, "spaces", None)
    if spaces:
        loaded = next(s for k, s in spaces.items() if "mask" not in k)
    return int(np.prod(loaded.shape))


def _inferred(observation: int, actions: int) -> ModelTable:
    """The player count and number of deals whose sizes these are (when only one fits)."""
    from shanghai_env.rules import Rules

    fits = []
    for n in range(3, 9):
        for contract in (1, 4, 9):  # contracts of 2, 3 and 4 melds
            for deals in range(1, 21):
                t = table_for(Rules(num_players=n, contracts=(contract,) * deals))
                if (t.observation, t.actions) == (observation, actions):
                    fits.append((n, deals))
    if len(set(fits)) != 1:
        return ModelTable(observation, actions)
    return ModelTable(observation, actions, fits[0][0], deals=fits[0][1])


def _recorded_table(data: dict[str, Any], path: str) -> tuple[int | None, tuple[int, ...] | None]:
    """The player count and contracts recorded with the model, or (None, None)."""
    candidates: list[Any] = []
    kwargs = data.get("policy_kwargs")
    if isinstance(kwargs, dict):
        candidates += [kwargs.get("features_extractor_kwargs"), kwargs]  # an MLP's extractor, or a policy's
    folder = os.path.dirname(path)
    for meta_path in (os.path.splitext(path)[0] + ".json", os.path.join(folder, "model.json")):
        try:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict):
            candidates.append(meta.get("config"))
            candidates += [v.get("config") for v in meta.values() if isinstance(v, dict)]
    for c in candidates:
        if isinstance(c, dict) and isinstance(c.get("num_players"), int) and c.get("contracts"):
            try:
                return int(c["num_players"]), tuple(int(x) for x in c["contracts"])
            except (TypeError, ValueError):
                continue
    return None, None
