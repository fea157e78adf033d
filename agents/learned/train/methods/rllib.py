"""Multi-agent self-play with Ray RLlib's PPO (new API stack) on the loop, locally or on a Ray cluster.

A step is one ``algo.train()``, its env steps the learner's decisions; the player is the learner
as a MaskablePPO ``model.zip`` (:func:`export_policy`). Usage and options: docs/rllib.md.
"""

from __future__ import annotations

import argparse
import functools
import operator
import os
import shutil
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from shanghai_env.agents.arena.ray_address import connection_problem, ray_address_problem
from shanghai_env.agents.learned.players.sb3 import save_maskable
from shanghai_env.agents.learned.train.options import option
from shanghai_env.agents.learned.train.run import RunConfig, seed32
from shanghai_env.agents.registry import check_spec, make_agent
from shanghai_env.cli import int_in
from shanghai_env.rllib_env import LEARNER, POLICY_ROLES, SNAPSHOT, Opponent, ShanghaiMultiAgentEnv
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv

SNAPSHOT_PREFIX = "snapshot_"
FOLDER = "rllib"  # in the run folder: RLlib's checkpoint of the algorithm


def _address(text: str) -> str:
    """An argparse type: a Ray cluster's address, probed (:func:`ray_address_problem`); "": a local Ray."""
    problem = ray_address_problem(text) if text else None
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


@dataclass
class RLlibOptions:
    num_env_runners: int = option(0, "sampling processes (0: the driver samples)", type=int_in(0))
    address: str = option("", "a Ray cluster: 'auto' (on one of its nodes) or HOST:6379", type=_address)
    pool_size: int = 3  # frozen snapshots (only with "snapshot" among the opponents)
    snapshot_every: int = 5  # iterations between snapshots
    train_batch: int = 2000  # env steps sampled per iteration
    minibatch: int = 500
    epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    ent_coef: float = 0.003
    net_arch: tuple[int, ...] = (256, 256)  # hidden layers of the actor and of the critic (tanh)
    max_moves_per_deal: int = 1000  # the env's step cap per deal


def policy_mapping_fn(agent_id: str, episode: Any, pool_size: int = 0, **kwargs: Any) -> str:
    """``learner`` and every ``self_k`` seat: the learner; ``snapshot_k``: one frozen copy, fixed
    for the episode and the seat (a hash of both), uniform over the pool."""
    if agent_id.startswith(SNAPSHOT_PREFIX) and pool_size > 0:
        key = f"{getattr(episode, 'id_', episode)}/{agent_id}".encode()
        return f"{SNAPSHOT_PREFIX}{zlib.crc32(key) % pool_size}"
    return LEARNER


def module_spec(rules: Rules, net_arch: Sequence[int]) -> RLModuleSpec:
    """One masked PPO module for this table: separate actor and critic MLPs, as SB3's ``MlpPolicy``."""
    # imported here: importing it logs a deprecation warning of Ray's, which --help must not print
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    env = ShanghaiMultiAgentEnv({"num_players": rules.num_players, "contracts": rules.contracts})
    hidden = {"fcnet_hiddens": list(net_arch), "fcnet_activation": "tanh"}
    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=env.agent_observation_space,
        action_space=env.agent_action_space,
        model_config={**hidden, "vf_share_layers": False, "head_fcnet_hiddens": []},
    )


def learner_state(algo: Any) -> dict[str, Any]:
    """The learner module's weights, from the learner group (the full module, critic included)."""
    return algo.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]


def copy_to_snapshots(algo: Any, snapshot_ids: Sequence[str]) -> None:
    """Overwrite frozen modules with the learner's current weights, in the learners and env runners."""
    algo.learner_group.set_weights(dict.fromkeys(snapshot_ids, learner_state(algo)))
    algo.env_runner_group.sync_weights(
        policies=list(snapshot_ids),
        from_worker_or_learner_group=algo.learner_group,
        inference_only=True,
        timeout_seconds=60.0,
    )


def export_policy(
    rules: Rules, net_arch: Sequence[int], state: dict[str, Any], path: str, seed: int = 0
) -> str:
    """Write the learner (``state``, from :func:`learner_state`) as a MaskablePPO ``.zip``; the path."""
    # RLlib's module is the function SB3's MlpPolicy with net_arch={"pi": H, "vf": H} and tanh
    # computes, so the weights are copied layer by layer (shapes checked)
    from sb3_contrib import MaskablePPO  # the 'rllib' extra's: checked before Ray starts (cli)

    module: Any = module_spec(rules, net_arch).build()
    module.set_state(state)
    model = MaskablePPO(
        "MlpPolicy",
        SingleAgentEnv(None, num_players=rules.num_players, contracts=rules.contracts),
        policy_kwargs={
            "net_arch": {"pi": list(net_arch), "vf": list(net_arch)},
            "activation_fn": torch.nn.Tanh,
        },
        device="cpu",
        seed=seed,
    )
    policy, mlp = model.policy, model.policy.mlp_extractor
    source = _linears(module.encoder.actor_encoder, module.pi, module.encoder.critic_encoder, module.vf)
    target = _linears(mlp.policy_net, policy.action_net, mlp.value_net, policy.value_net)
    if [s.weight.shape for s in source] != [t.weight.shape for t in target]:
        raise ValueError("the RLlib module and the SB3 policy have different layers")
    with torch.no_grad():
        for s, t in zip(source, target):
            t.weight.copy_(s.weight)
            t.bias.copy_(s.bias)
    save_maskable(model, path)
    return path


def _linears(*parts: torch.nn.Module) -> list[Any]:
    return [m for part in parts for m in part.modules() if isinstance(m, torch.nn.Linear)]


def _metric(result: dict[str, Any], *path: str) -> float:
    """A number of RLlib's result dict, NaN where it has none."""
    try:
        value: Any = functools.reduce(operator.getitem, path, result)
        return float(value)
    except (KeyError, TypeError, ValueError):
        return float("nan")


def _time_updates(algo: Any) -> list[float]:
    """Make the learner group add the seconds of each update to the list returned."""
    spent = [0.0]
    update = algo.learner_group.update

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return update(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start

    algo.learner_group.update = timed
    return spent


def env_opponents(names: Sequence[str]) -> tuple[Opponent, ...]:
    """``--opponents`` for the env: roles as they are, names as player factories (ValueError: unknown)."""
    return tuple(n if n in POLICY_ROLES else functools.partial(make_agent, check_spec(n)) for n in names)


def check_config(config: RunConfig, opt: RLlibOptions) -> None:
    """ValueError for the run options rllib cannot follow (before Ray starts)."""
    env_opponents(config.opponents)
    refused = {
        "--facts": (config.facts, "the module reads the env's observation; leave it out"),
        "--init": (config.init, "rllib starts from a fresh module; leave it out"),
        "--encoding": (config.encoding != "table", "the RLlib env gives the table encoding; leave it out"),
        "--env-workers": (config.env_workers > 1, "RLlib samples in --num-env-runners processes; use 1"),
        "--reward": (config.reward != "deal", "the RLlib env pays the deal score: use deal"),
        "--minibatch": (
            opt.minibatch > opt.train_batch,
            f"must not exceed --train-batch ({opt.train_batch})",
        ),
    }
    for flag, (bad, why) in refused.items():
        if bad:
            raise ValueError(f"argument {flag}: {why}")


class RLlib:
    """RLlib's PPO as a loop method; :meth:`setup` starts Ray (or joins it), :meth:`close` stops it."""

    Options = RLlibOptions
    player_file = "model.zip"
    # the command line's defaults for this method's run options (the env pays the deal score)
    run_defaults: ClassVar[dict[str, Any]] = {"reward": "deal"}

    def setup(self, config: RunConfig, device: torch.device) -> None:
        self.config, self.opt = config, RLlibOptions(**config.method_options)
        check_config(config, self.opt)
        pool = self.opt.pool_size if SNAPSHOT in config.opponents else 0
        self.snapshots = [f"{SNAPSHOT_PREFIX}{j}" for j in range(pool)]
        self.env_steps = self.iteration = self.slot = 0
        self.saved = ""  # the folder of RLlib's checkpoint that the run's checkpoint names
        self.started = False
        if not ray.is_initialized():
            cpus = None if self.opt.address else max(os.cpu_count() or 1, self.opt.num_env_runners + 1)
            try:
                ray.init(
                    self.opt.address or None,
                    num_cpus=cpus,
                    include_dashboard=False,
                    log_to_driver=config.progress,
                )
            except (ConnectionError, ValueError, RuntimeError) as err:
                raise ValueError(
                    f"argument --address: {connection_problem(self.opt.address or None, err)}"
                ) from None
            self.started = True
        self.algo = self._build()
        self.learn_seconds = _time_updates(self.algo)

    def _build(self) -> Any:
        """The PPO algorithm: the learner and the frozen snapshots (each the untrained learner)."""
        config, opt, modules = self.config, self.opt, [LEARNER, *self.snapshots]
        names = ("num_players", "contracts", "reward", "opponents", "max_moves_per_deal")
        opponents = env_opponents(config.opponents)
        values = (config.players, config.contracts, config.reward, opponents, opt.max_moves_per_deal)
        spec = module_spec(config.rules, opt.net_arch)
        ppo = (
            PPOConfig()
            .environment(ShanghaiMultiAgentEnv, env_config=dict(zip(names, values)))
            .env_runners(num_env_runners=opt.num_env_runners, num_envs_per_env_runner=1)
            .multi_agent(
                policies=set(modules),
                policy_mapping_fn=functools.partial(policy_mapping_fn, pool_size=len(self.snapshots)),
                policies_to_train=[LEARNER],
            )
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(modules, spec)))
            .training(
                train_batch_size_per_learner=opt.train_batch,
                minibatch_size=opt.minibatch,
                num_epochs=opt.epochs,
                lr=opt.lr,
                gamma=opt.gamma,
                lambda_=opt.gae_lambda,
                entropy_coeff=opt.ent_coef,
            )
            .debugging(seed=seed32(config.seed))
        )
        algo = ppo.build_algo()
        if self.snapshots:
            copy_to_snapshots(algo, self.snapshots)
        return algo

    def step(self) -> dict[str, float]:
        """One PPO iteration and, when due, a snapshot of the learner."""
        start = time.perf_counter()
        result = self.algo.train()
        learn, self.learn_seconds[0] = self.learn_seconds[0], 0.0
        self.iteration += 1
        if self.snapshots and self.iteration % self.opt.snapshot_every == 0:
            copy_to_snapshots(self.algo, [self.snapshots[self.slot]])
            self.slot = (self.slot + 1) % len(self.snapshots)
        steps = _metric(result, "env_runners", "num_module_steps_sampled", LEARNER)
        steps = int(steps) if steps == steps else 0  # (NaN: the learner did not act)
        self.env_steps += steps
        return {
            "env_steps": steps,
            "iteration": self.iteration,
            "sampled_env_steps": _metric(result, "env_runners", "num_env_steps_sampled"),
            "sample_seconds": round(time.perf_counter() - start - learn, 3),  # and the weight sync
            "learn_seconds": round(learn, 3),
            "learner_return_mean": _metric(result, "env_runners", "agent_episode_returns_mean", LEARNER),
            "episodes": _metric(result, "env_runners", "num_episodes"),
        }

    def state_dict(self) -> dict[str, Any]:
        """The counters and the name of RLlib's checkpoint of the algorithm, written whole to
        ``rllib/<env steps>``; the others go, but for the one the run's checkpoint names until now."""
        name, folder = f"{FOLDER}/{self.env_steps}", os.path.abspath(os.path.join(self.config.out, FOLDER))
        path = os.path.join(folder, str(self.env_steps))
        if name != self.saved:
            shutil.rmtree(path + ".part", ignore_errors=True)
            self.algo.save_to_path(path + ".part")
            shutil.rmtree(path, ignore_errors=True)
            os.replace(path + ".part", path)
        for old in os.listdir(folder):
            if f"{FOLDER}/{old}" not in (name, self.saved):
                shutil.rmtree(os.path.join(folder, old), ignore_errors=True)
        self.saved = name
        return {
            "algorithm": name,
            "env_steps": self.env_steps,
            "iteration": self.iteration,
            "slot": self.slot,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        name = str(state["algorithm"])
        path = os.path.join(self.config.out, name)
        if not name.startswith(f"{FOLDER}/") or ".." in name or not os.path.isdir(path):
            raise ValueError(f"RLlib's checkpoint {path} is missing")
        self.algo.restore_from_path(os.path.abspath(path))
        self.saved, self.env_steps = name, int(state["env_steps"])
        self.iteration, self.slot = int(state["iteration"]), int(state["slot"])

    def export(self, path: str, meta: dict[str, Any]) -> None:
        """The learner as a MaskablePPO ``.zip`` (its recipe is the loop's ``model.json``)."""
        export_policy(
            self.config.rules, self.opt.net_arch, learner_state(self.algo), path, seed32(self.config.seed)
        )

    def close(self) -> None:
        """Stop the algorithm, and Ray if :meth:`setup` started it."""
        algo, self.algo = getattr(self, "algo", None), None
        if algo is not None:
            algo.stop()
        if getattr(self, "started", False):
            ray.shutdown()
            self.started = False
