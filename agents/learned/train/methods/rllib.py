"""Multi-agent self-play with Ray RLlib's PPO (new API stack), locally or on a Ray cluster.

    shanghai-train rllib --iterations 20 --out runs/rllib
    shanghai-train rllib --address auto --num-env-runners 16 --iterations 500

The env is :class:`~shanghai_env.agents.learned.train.rllib_env.ShanghaiMultiAgentEnv`. One
shared, action-masked policy (module ``learner``) plays the learner and every ``self_k`` seat;
``snapshot_k`` seats play frozen copies of it (``snapshot_0..``, the oldest overwritten every
``snapshot_every`` iterations); bots play inside the env. The learner is exported as a MaskablePPO
``.zip`` (:func:`export_policy`) that every command plays, evaluated as every method of
shanghai-train is (``eval.csv``, ``curve.png``). Outputs, options and measurements: docs/rllib.md.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import operator
import os
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from shanghai_env.agents.arena.ray_address import connection_problem, ray_address_problem
from shanghai_env.agents.learned.players.policy import rules_json
from shanghai_env.agents.learned.players.sb3 import save_maskable
from shanghai_env.agents.learned.train.evaluation import evaluate_all
from shanghai_env.agents.learned.train.rllib_env import (
    LEARNER,
    POLICY_ROLES,
    SELF,
    SNAPSHOT,
    ShanghaiMultiAgentEnv,
    check_opponents,
)
from shanghai_env.agents.learned.train.run import Run, RunConfig, plot_curve
from shanghai_env.agents.registry import contracts_arg
from shanghai_env.checks import int_arg
from shanghai_env.cli import Parser, int_in, number_in, positive_ints, require_extra, write_atomically
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv

COMMAND = "shanghai-train rllib"
SNAPSHOT_PREFIX = "snapshot_"
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


@dataclass
class RLlibConfig:
    """Everything a run depends on (saved in ``config.json`` and ``run.json``)."""

    iterations: int = 20
    num_env_runners: int = 0  # 0: sample in the driver process
    address: str | None = None  # a Ray cluster ("auto", "host:6379"); None: a local Ray
    players: int = 4
    contracts: tuple[int, ...] = (1,)
    seed: int = 0
    out: str = "runs/rllib"
    opponents: tuple[str, ...] = (SELF, SNAPSHOT, "greedy")
    pool_size: int = 3  # frozen snapshots (only with "snapshot" among the opponents)
    snapshot_every: int = 5  # iterations between snapshots
    reward: str = "deal"
    train_batch: int = 2000  # env steps sampled per iteration
    minibatch: int = 500
    epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.995
    lambda_: float = 0.95
    entropy_coeff: float = 0.003
    net_arch: tuple[int, ...] = (256, 256)
    activation: str = "tanh"
    rollout_fragment_length: int | str = "auto"
    max_moves_per_deal: int = 1000
    eval_every: int = 5  # iterations; 0: only at the end
    eval_games: int = 40
    eval_opponents: tuple[str, ...] = ("greedy",)
    eval_seed: int = 1_000_003
    checkpoint_every: int = 10  # iterations; 0: only at the end
    num_cpus: int | None = None  # a local Ray's CPUs (default: enough for the env runners)
    verbose: bool = True

    def __post_init__(self) -> None:
        self.contracts, self.net_arch = tuple(self.contracts), tuple(self.net_arch)
        self.opponents = check_opponents(self.opponents)
        self.eval_opponents = check_opponents(self.eval_opponents, roles=())
        Rules(num_players=self.players, contracts=self.contracts)  # raises on a bad table
        for name in ("iterations", "train_batch", "minibatch", "epochs", "pool_size", "snapshot_every"):
            int_arg(name, getattr(self, name), low=1)
        for name in ("num_env_runners", "eval_every", "checkpoint_every", "eval_games"):
            int_arg(name, getattr(self, name), low=0)
        if self.minibatch > self.train_batch:
            raise ValueError(f"minibatch ({self.minibatch}) must not exceed train_batch ({self.train_batch})")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {tuple(ACTIVATIONS)}, got {self.activation!r}")
        if not self.net_arch or min(self.net_arch) < 1:
            raise ValueError(f"net_arch must be one or more positive layer sizes, got {self.net_arch}")

    @property
    def rules(self) -> Rules:
        return Rules(num_players=self.players, contracts=self.contracts)

    @property
    def snapshots(self) -> list[str]:
        """The frozen modules' ids (none unless ``snapshot`` is an opponent)."""
        return [f"{SNAPSHOT_PREFIX}{j}" for j in range(self.pool_size)] if SNAPSHOT in self.opponents else []

    @property
    def env_config(self) -> dict[str, Any]:
        names = ("num_players", "contracts", "reward", "opponents", "max_moves_per_deal")
        values = (self.players, self.contracts, self.reward, self.opponents, self.max_moves_per_deal)
        return dict(zip(names, values))


def policy_mapping_fn(agent_id: str, episode: Any, pool_size: int = 0, **kwargs: Any) -> str:
    """``learner`` and every ``self_k`` seat: the learner; ``snapshot_k``: one frozen copy, fixed
    for the episode and the seat (a hash of both), uniform over the pool."""
    if agent_id.startswith(SNAPSHOT_PREFIX) and pool_size > 0:
        key = f"{getattr(episode, 'id_', episode)}/{agent_id}".encode()
        return f"{SNAPSHOT_PREFIX}{zlib.crc32(key) % pool_size}"
    return LEARNER


# --- the algorithm and its learner as a player -----------------------------------------------------


def module_spec(config: RLlibConfig) -> RLModuleSpec:
    """One masked PPO module for this table: separate actor and critic MLPs, as SB3's ``MlpPolicy``."""
    # imported here: importing it logs a deprecation warning of Ray's, which --help and a usage error
    # (one line) must not print
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    env = ShanghaiMultiAgentEnv(config.env_config)
    hidden = {"fcnet_hiddens": list(config.net_arch), "fcnet_activation": config.activation}
    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=env.agent_observation_space,
        action_space=env.agent_action_space,
        model_config={**hidden, "vf_share_layers": False, "head_fcnet_hiddens": []},
    )


def build_algorithm(config: RLlibConfig) -> Any:
    """The PPO algorithm: the learner and the frozen snapshots (each the untrained learner)."""
    modules = [LEARNER, *config.snapshots]
    spec = module_spec(config)
    ppo = (
        PPOConfig()
        .environment(ShanghaiMultiAgentEnv, env_config=config.env_config)
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=1,
            rollout_fragment_length=config.rollout_fragment_length,
        )
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=functools.partial(policy_mapping_fn, pool_size=len(config.snapshots)),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(modules, spec)))
        .training(
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch,
            num_epochs=config.epochs,
            lr=config.lr,
            gamma=config.gamma,
            lambda_=config.lambda_,
            entropy_coeff=config.entropy_coeff,
        )
        .debugging(seed=config.seed)
    )
    algo = ppo.build_algo()
    if config.snapshots:
        copy_to_snapshots(algo, config.snapshots)
    return algo


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


def export_policy(config: RLlibConfig, state: dict[str, Any], path: str) -> str:
    """Write the learner (``state``, from :func:`learner_state`) as a MaskablePPO ``.zip``, with a
    ``.json`` beside it naming its table.

    RLlib's module (actor MLP + linear head, critic MLP + linear value head, on the raw
    observation) is the function SB3's ``MlpPolicy`` with ``net_arch={"pi": H, "vf": H}`` and the
    same activation computes, so the weights are copied layer by layer (shapes checked).
    """
    from sb3_contrib import MaskablePPO  # the 'rllib' extra's: checked before Ray starts (main)

    module: Any = module_spec(config).build()
    module.set_state(state)
    arch = {"pi": list(config.net_arch), "vf": list(config.net_arch)}
    model = MaskablePPO(
        "MlpPolicy",
        SingleAgentEnv(None, num_players=config.players, contracts=config.contracts),
        policy_kwargs={"net_arch": arch, "activation_fn": ACTIVATIONS[config.activation]},
        device="cpu",
        seed=config.seed,
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
    meta = {"config": rules_json(config.rules), "exported_from": "rllib"}
    write_atomically(os.path.splitext(path)[0] + ".json", json.dumps(meta, indent=2))
    return path


def _linears(*parts: torch.nn.Module) -> list[Any]:
    return [m for part in parts for m in part.modules() if isinstance(m, torch.nn.Linear)]


# --- the training loop ---------------------------------------------------------------------------


def _metric(result: dict[str, Any], *path: str) -> float:
    """A number of RLlib's result dict, NaN where it has none."""
    try:
        value: Any = functools.reduce(operator.getitem, path, result)
        return float(value)
    except (KeyError, TypeError, ValueError):
        return float("nan")


def _time_updates(algo: Any) -> list[float]:
    """Make the learner group add the seconds of each update to the list returned (the rest of a
    PPO iteration is sampling and the weight sync)."""
    spent = [0.0]
    group = algo.learner_group
    update = group.update

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return update(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start

    group.update = timed
    return spent


def start_ray(config: RLlibConfig) -> bool:
    """Connect to ``config.address``, or start a local Ray; True if this call started it."""
    if ray.is_initialized():
        return False
    cpus = None if config.address else config.num_cpus or max(os.cpu_count() or 1, config.num_env_runners + 1)
    ray.init(address=config.address, num_cpus=cpus, include_dashboard=False, log_to_driver=config.verbose)
    return True


class _Training:
    """A run in progress: the algorithm, the run folder, the env steps sampled, the evaluations."""

    def __init__(self, config: RLlibConfig, algo: Any, run: Run) -> None:
        self.config, self.algo, self.run = config, algo, run
        self.learn_seconds = _time_updates(algo)
        self.sampled = 0.0
        self.evals: list[dict[str, Any]] = []
        self.best: dict[str, Any] = {}
        self.slot = 0  # the snapshot overwritten next

    def say(self, text: str) -> None:
        if self.config.verbose:
            print(text, flush=True)

    def export(self, path: str) -> str:
        return export_policy(self.config, learner_state(self.algo), path)

    def evaluate(self, it: int) -> None:
        """The learner against each evaluation bot: a row of eval.csv, the curve, the best player."""
        path = self.export(self.run.path("policy.zip"))
        row = {"env_steps": int(self.sampled), "wall_seconds": round(self.run.wall(), 1), "iteration": it}
        row.update(evaluate_all(path, self.config))
        self.evals.append(row)
        self.run.log("eval.csv", row)
        plot_curve([self.run.path("eval.csv")], self.run.path("curve.png"), f"rllib: {self.config.out}")
        bots = self.config.eval_opponents
        shown = ", ".join(
            f"{b} {row[f'{b}_diff']:+.1f} [{row[f'{b}_low']:+.1f}, {row[f'{b}_high']:+.1f}]" for b in bots
        )
        self.say(f"eval {it}: game score minus each bot seat (below 0: ahead of it): {shown}")
        key = f"{bots[0]}_diff"
        if not self.best or row[key] < self.best[key]:
            self.best = row
            self.export(self.run.path("best_policy.zip"))

    def iterate(self, it: int) -> None:
        """One PPO iteration, its progress row and, when due, a snapshot of the learner."""
        t0 = time.perf_counter()
        result = self.algo.train()
        seconds = time.perf_counter() - t0
        now_sampled = _metric(result, "env_runners", "num_env_steps_sampled_lifetime")
        steps, self.sampled = now_sampled - self.sampled, now_sampled
        learn_s, self.learn_seconds[0] = self.learn_seconds[0], 0.0
        sample_s = seconds - learn_s  # sampling, plus the (small) weight sync
        row = {
            "env_steps": int(self.sampled),
            "wall_seconds": round(self.run.wall(), 2),
            "iteration": it,
            "steps": steps,
            "seconds": round(seconds, 3),
            "sample_seconds": round(sample_s, 3),
            "learn_seconds": round(learn_s, 3),
            "steps_per_second": round(steps / seconds, 1),
            "sampled_per_s": round(steps / sample_s, 1) if sample_s > 0 else float("nan"),
            "trained_per_s": round(steps / learn_s, 1) if learn_s > 0 else float("nan"),
            "learner_steps": _metric(result, "env_runners", "num_module_steps_sampled", LEARNER),
            "learner_return_mean": _metric(result, "env_runners", "agent_episode_returns_mean", LEARNER),
            "episodes": _metric(result, "env_runners", "num_episodes"),
        }
        self.run.log("progress.csv", row)
        self.say(
            f"iter {it}: {steps:.0f} env steps in {seconds:.1f} s ({row['sampled_per_s']:.0f}/s "
            f"sampling, {row['trained_per_s']:.0f}/s learning), "
            f"learner return {row['learner_return_mean']:.3f}"
        )
        snapshots = self.config.snapshots
        if snapshots and it % self.config.snapshot_every == 0:
            copy_to_snapshots(self.algo, [snapshots[self.slot]])
            self.slot = (self.slot + 1) % len(snapshots)

    def checkpoint(self, it: int) -> None:
        """RLlib's checkpoint (``Algorithm.from_checkpoint``) and its learner as a player beside it."""
        ckpt = os.path.join(os.path.abspath(self.config.out), "checkpoints", f"iter_{it:06d}")
        self.algo.save_to_path(ckpt)
        self.export(ckpt + ".zip")

    def finish(self, seconds: float) -> dict[str, Any]:
        """The final player and run.json (the configuration and the results)."""
        self.export(self.run.path("policy.zip"))
        meta = {
            "config": asdict(self.config),
            "iterations": self.config.iterations,
            "env_steps_sampled": self.sampled,
            "seconds": seconds,
            "env_steps_per_s": self.sampled / seconds if seconds > 0 else 0.0,  # evaluations included
            "final_eval": self.evals[-1] if self.evals else {},
            "best_eval_vs_first_bot": self.best,
            "ray": ray.__version__,
        }
        write_atomically(self.run.path("run.json"), json.dumps(meta, indent=2, default=str))
        return meta


def train(config: RLlibConfig) -> dict[str, Any]:
    """Train for ``config.iterations`` iterations, write the outputs (docs/rllib.md), return run.json."""
    run = Run(RunConfig(method="rllib", out=config.out))  # the folder's lock, the logs, the wall time
    started = algo = None
    try:
        for name in ("progress.csv", "eval.csv"):  # a run starts afresh (RLlib's checkpoints resume it)
            with contextlib.suppress(FileNotFoundError):
                os.remove(run.path(name))
        write_atomically(run.path("config.json"), json.dumps(asdict(config), indent=2, default=str))
        started = start_ray(config)
        algo = build_algorithm(config)
        training = _Training(config, algo, run)
        start = time.perf_counter()
        if config.eval_games and config.eval_every:
            training.evaluate(0)  # the untrained policy: where the curve starts
        for it in range(1, config.iterations + 1):
            training.iterate(it)
            last = it == config.iterations
            if (config.checkpoint_every and it % config.checkpoint_every == 0) or last:
                training.checkpoint(it)
            if config.eval_games and ((config.eval_every and it % config.eval_every == 0) or last):
                training.evaluate(it)
        return training.finish(time.perf_counter() - start)
    finally:
        run.close()  # another run (in this process too) may use the folder now
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()


# --- the command line ----------------------------------------------------------------------------


def _names(roles: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: comma-separated player names (or ``roles``), checked."""

    def parse(text: str) -> tuple[str, ...]:
        try:
            return check_opponents([s for s in text.split(",") if s.strip()], roles)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


# option -> (type, help); its RLlibConfig field has its name, and the default comes from there
_OPTIONS: dict[str, tuple[Callable[[str], Any], str]] = {
    "--iterations": (int_in(1), "PPO iterations"),
    "--num-env-runners": (int_in(0), "sampling processes (0: the driver samples)"),
    "--address": (str, "a Ray cluster: 'auto' (on one of its nodes) or HOST:6379; default: a local Ray"),
    "--contracts": (contracts_arg, "contracts of one game, e.g. 1 or 1,2,3"),
    "--players": (int_in(3, 8), "seats at the table (3-8)"),
    "--seed": (int_in(0), "seeds RLlib, the envs and the evaluation"),
    "--out": (str, "output folder (created if missing)"),
    "--opponents": (
        _names(POLICY_ROLES),
        "what an opponent seat may be (one drawn per seat and episode): "
        "self (the learner), snapshot (a frozen copy), or a player (greedy, a .zip, ...)",
    ),
    "--pool-size": (int_in(1), "frozen snapshots"),
    "--snapshot-every": (int_in(1), "iterations between snapshots"),
    "--train-batch": (int_in(1), "env steps sampled per iteration"),
    "--minibatch": (int_in(1), "SGD minibatch"),
    "--epochs": (int_in(1), "SGD epochs per iteration"),
    "--lr": (number_in(0.0, low_open=True), "learning rate"),
    "--net-arch": (positive_ints, "hidden layers of the actor and of the critic, e.g. 256,256"),
    "--eval-every": (int_in(0), "iterations between evaluations (0: at the end only)"),
    "--eval-games": (int_in(0), "duplicate games per evaluation bot (0: no evaluation)"),
    "--eval-opponents": (_names(()), "bots to evaluate against, e.g. greedy,random"),
    "--eval-seed": (int_in(0), "the evaluation's decks"),
    "--checkpoint-every": (int_in(0), "iterations between checkpoints (0: at the end)"),
    "--max-moves-per-deal": (int_in(1), "step cap per deal (truncation)"),
}


def _field(flag: str) -> str:
    return flag[2:].replace("-", "_")


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``shanghai-train rllib``."""
    defaults = RLlibConfig()
    p = Parser(
        prog=COMMAND,
        description="Multi-agent self-play PPO with Ray RLlib on Shanghai Rummy (docs/rllib.md).",
    )
    for flag, (kind, text) in _OPTIONS.items():
        default = getattr(defaults, _field(flag))
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        p.add_argument(
            flag, type=kind, default=default, metavar=_field(flag).upper(), help=f"{text} [{shown}]"
        )
    p.add_argument("--quiet", action="store_true", help="print nothing per iteration")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``shanghai-train rllib [options]``: train; a bad argument exits with status 2 before Ray starts."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        options = {_field(flag): getattr(args, _field(flag)) for flag in _OPTIONS}
        config = RLlibConfig(**options, verbose=not args.quiet)
    except ValueError as err:
        parser.error(str(err))
    if os.path.exists(config.out) and not os.path.isdir(config.out):
        parser.error(f"argument --out: {config.out!r} exists and is not a folder")
    require_extra(COMMAND, "rllib")  # sb3-contrib too, which the first export needs
    problem = ray_address_problem(config.address)
    if problem:
        parser.error(f"argument --address: {problem}")
    try:
        started = start_ray(config)
    except (ConnectionError, ValueError, RuntimeError) as err:
        parser.error(f"argument --address: {connection_problem(config.address, err)}")
    try:
        return train(config)
    finally:
        if started:
            ray.shutdown()
