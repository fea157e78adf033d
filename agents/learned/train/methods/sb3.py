"""Stable-Baselines3's MaskablePPO (sb3-contrib) on the batched games, on the loop.

A ``step`` is one MaskablePPO iteration on an :class:`~shanghai_env.sb3_vec_env.SB3VectorEnv`;
the player is a ``model.zip``. See docs/training.md, "sb3".
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import VecEnvWrapper

from shanghai_env.agents.bots.contract import shared_meter
from shanghai_env.agents.learned.nets.features import RummyFeatures
from shanghai_env.agents.learned.nets.sb3_policy import RummyPolicy, RummyRolloutBuffer
from shanghai_env.agents.learned.players.sb3 import legal_modes, load_maskable, save_maskable, saved_table
from shanghai_env.agents.learned.train.methods.base import training_games
from shanghai_env.agents.learned.train.opponents import players_for
from shanghai_env.agents.learned.train.options import AdvantageOptions, LearnerOptions
from shanghai_env.agents.learned.train.run import SELF, RunConfig, seed32
from shanghai_env.decision import Decision
from shanghai_env.engine import Game
from shanghai_env.rules import Rules
from shanghai_env.sb3_vec_env import LEARNER, SB3VectorEnv


@dataclass
class SB3Options(AdvantageOptions, LearnerOptions):
    epochs: int = 4
    batch_size: int = 512
    norm_adv: bool = True  # Stable-Baselines3's default
    shaping: float = 0.0  # potential -shaping * distance of the hand to the contract (0: none)


class SelfPlayer:
    """The learner's current policy at every other seat: its most probable legal move, one forward pass."""

    name = "self"
    needs_observation = True

    def __init__(self, method: SB3) -> None:
        self.method = method

    def reset(self, seed: int | None = None) -> None:
        """The policy keeps nothing between decisions."""

    def act(self, decision: Decision) -> int:
        return self.act_batch([decision])[0]

    def act_batch(self, decisions: list[Decision]) -> list[int]:
        obs = np.stack([d.observation for d in decisions])
        return self.act_arrays(obs, [np.flatnonzero(d.action_mask).tolist() for d in decisions])

    def act_arrays(self, obs: np.ndarray, legal: list[list[int]]) -> list[int]:
        """The choices from the batched games' arrays (no view of a game built)."""
        return legal_modes(self.method.model.policy, obs, legal)


class DistancePotential:
    """Potential ``-coef * distance of the hand to the contract`` (0 once down), for shaping."""

    def __init__(self, coef: float) -> None:
        self.coef = coef

    def __call__(self, game: Game, seat: int) -> float:
        if game.down[seat]:
            return 0.0
        return -self.coef * shared_meter(game.contract, 1).distance(game.hands[seat])


class Scored(VecEnvWrapper):
    """Keeps each finished game's learner score minus the others' mean (for the progress rows)."""

    def __init__(self, venv: SB3VectorEnv) -> None:
        super().__init__(venv)
        self.finished: list[float] = []

    def reset(self) -> Any:
        return self.venv.reset()

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        for i in np.flatnonzero(dones):
            scores = np.asarray(infos[i]["final_scores"], float)
            self.finished.append(float(scores[LEARNER] - np.delete(scores, LEARNER).mean()))
        return obs, rewards, dones, infos


class SB3:
    name = "sb3"
    Options = SB3Options
    player_file = "model.zip"

    def setup(self, config: RunConfig, device: torch.device) -> None:
        check_config(config)
        self.config, self.device = config, device
        self.opt = SB3Options(**config.method_options)
        set_random_seed(seed32(config.seed))
        games = SB3VectorEnv(
            config.num_envs,
            opponents=self._opponents(),
            reward=config.reward,
            potential=DistancePotential(self.opt.shaping) if self.opt.shaping else None,
            gamma=self.opt.gamma,
            num_players=config.players,
            contracts=config.contracts,
        )
        self.venv = Scored(games)
        self.venv.seed(config.seed)
        if config.init:
            self.model = load_init(config, self.venv, device, settings(self.opt))
        else:
            self.model = build_model(config.rules, self.opt, self.venv, seed32(config.seed), device)
        self.model.set_logger(Logger(folder=None, output_formats=[]))  # the loop keeps the logs
        if isinstance(self.model.rollout_buffer, RummyRolloutBuffer):  # it keeps the features found acting
            self.model.rollout_buffer.acting = self.model.policy
        self.updates, self.new_games = 0, True

    def _opponents(self) -> list[Any]:
        """The other seats' players: the current policy (one object for every seat of every game),
        else the named players as ``shanghai-train ppo`` seats them (:func:`.players_for`)."""
        if tuple(self.config.opponents) == (SELF,):
            return [SelfPlayer(self)] * (self.config.players - 1)
        return players_for(self.config)[1:]

    def step(self) -> dict[str, float]:
        steps = self.opt.n_steps * self.config.num_envs
        # new games (the first step, or after a resume) are dealt by learn() resetting the envs
        self.model.learn(steps, reset_num_timesteps=self.new_games, log_interval=None)
        self.new_games = False
        self.updates += 1
        logged = self.model.logger.name_to_value
        out = {k.split("/", 1)[1]: round(float(v), 5) for k, v in logged.items() if k.startswith("train/")}
        self.model.logger.dump()  # (no outputs: clears the values for the next iteration)
        finished, self.venv.finished = self.venv.finished, []
        out["games_finished"] = float(len(finished))
        out.update(training_games(self.config, finished))
        out["env_steps"] = float(steps)
        return out

    def state_dict(self) -> dict[str, Any]:
        # tensors and plain values only (no pickle, not SB3's zip): the checkpoint reads with
        # torch's weights_only and runs nothing it holds
        policy = self.model.policy
        numpy_state = np.random.get_state(legacy=False)
        numpy_state["state"] = {k: np.asarray(v).tolist() for k, v in numpy_state["state"].items()}
        return {
            "policy": policy.state_dict(),
            "optimizer": policy.optimizer.state_dict(),
            "updates": self.updates,
            "streams": (torch.get_rng_state(), numpy_state, random.getstate()),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.policy.load_state_dict(state["policy"])
        self.model.policy.optimizer.load_state_dict(state["optimizer"])
        self.updates = int(state["updates"])
        torch_state, numpy_state, py_state = state["streams"]
        torch.set_rng_state(torch_state)
        keys = np.asarray(numpy_state["state"]["key"], np.uint32)
        np.random.set_state({**numpy_state, "state": {**numpy_state["state"], "key": keys}})
        random.setstate(py_state)
        self.venv.seed(self.config.seed + 1_000_003 * self.updates)
        self.new_games = True

    def export(self, path: str, meta: dict[str, Any]) -> None:
        """The player as a MaskablePPO ``.zip`` (its recipe is the loop's ``model.json``)."""
        save_maskable(self.model, path)


def settings(opt: SB3Options) -> dict[str, Any]:
    """MaskablePPO's arguments for the options (a fresh model's and those a loaded one gets)."""
    return {
        "learning_rate": opt.lr,
        "n_steps": opt.n_steps,
        "batch_size": opt.batch_size,
        "n_epochs": opt.epochs,
        "gamma": opt.gamma,
        "gae_lambda": opt.gae_lambda,
        "clip_range": opt.clip,
        "ent_coef": opt.ent_coef,
        "vf_coef": opt.vf_coef,
        "max_grad_norm": opt.max_grad_norm,
        "normalize_advantage": opt.norm_adv,
    }


def build_model(rules: Rules, opt: SB3Options, env: Any, seed: int = 0, device: Any = "cpu") -> Any:
    """A fresh MaskablePPO for ``rules``' table on ``env`` (a single-agent env or a vector of them),
    with :class:`~shanghai_env.agents.learned.nets.sb3_policy.RummyPolicy` and its
    :class:`~shanghai_env.agents.learned.nets.sb3_policy.RummyRolloutBuffer` (a loaded model
    keeps the buffer it was saved with)."""
    features = {"num_players": rules.num_players, "contracts": tuple(rules.contracts)}
    # the features named in the file's record, as in the files of earlier versions
    policy = {"features_extractor_class": RummyFeatures, "features_extractor_kwargs": features}
    policy["net_arch"] = list(opt.net_arch)
    return MaskablePPO(
        RummyPolicy,
        env,
        policy_kwargs=policy,
        rollout_buffer_class=RummyRolloutBuffer,
        rollout_buffer_kwargs={"features_extractor_kwargs": features},
        seed=seed,
        device=device,
        **settings(opt),
    )


def check_config(config: RunConfig) -> None:
    """ValueError for the run options sb3 cannot follow (before anything is built)."""
    if config.facts:
        raise ValueError("--facts: sb3 reads the env's observation through its own features; leave it out")
    if config.env_workers > 1:
        raise ValueError("--env-workers: sb3 steps its games in this process; use 1")
    if config.init and not config.init.endswith(".zip"):
        raise ValueError(f"--init {config.init!r}: sb3 goes on from a MaskablePPO player (.zip)")


def load_init(config: RunConfig, venv: Any, device: torch.device, settings: dict[str, Any]) -> Any:
    """The MaskablePPO player ``config.init`` with this run's settings, to train further; ValueError
    if it is none or plays another table."""
    try:
        model = load_maskable(config.init, env=venv, device=device, custom_objects=settings)
    except Exception as err:  # SB3 raises many kinds; say which file and why in one line
        try:
            why = f"it plays {saved_table(config.init).describe()}"
        except ValueError as not_a_model:
            why = str(not_a_model)
        wanted = f"{config.players} players, contracts {','.join(map(str, config.contracts))}"
        raise ValueError(f"--init {config.init!r}: sb3 cannot go on from it at {wanted}: {why}") from err
    model.set_random_seed(seed32(config.seed))
    return model
