"""Multi-agent self-play with Ray RLlib's PPO (new API stack), locally or on a Ray cluster.

    shanghai-train rllib --iterations 20 --out runs/rllib
    shanghai-train rllib --address auto --num-env-runners 16 --iterations 500

The environment is
:class:`shanghai_env.agents.learned.train.rllib_env.ShanghaiMultiAgentEnv` (the AEC env, observations
as RLlib's action-masking module wants them). The full description, the cluster recipe and
the throughput measurements are in docs/rllib.md.

- **One shared policy** (module ``learner``) for every seat it plays: observations are
  seat-relative, so one network plays any seat. It plays the ``learner`` agent and every
  ``self_k`` seat, and all of that experience trains it.
- **Frozen snapshots**: ``pool_size`` modules ``snapshot_0..`` that are never trained; every
  ``snapshot_every`` iterations the oldest is overwritten with the learner's current weights.
  ``policy_mapping_fn`` maps each ``snapshot_k`` seat to one of them per episode.
- **Bots** (``random``, ``greedy``, ``planner``, saved models, ``module:factory``) are played
  inside the env (they need the engine's view of the game, which an RLlib module never sees).
  Each opponent seat draws one of ``opponents`` per episode.
- **Action masking**: RLlib's ``ActionMaskingTorchRLModule`` (illegal logits pushed to the
  float minimum before sampling and in the loss).
- **Evaluation** before training (iteration 0) and every ``eval_every`` iterations: the learner
  is exported as a MaskablePPO ``.zip`` (same network, same weights: see :func:`export_policy`)
  plays duplicate games against each ``eval_opponents`` bot through shanghai-train's evaluation
  (:func:`~shanghai_env.agents.learned.train.evaluation.evaluate_all`: the learner's game score
  minus the bot seats', with its 95% interval, the columns of every method's ``eval.csv``), and
  the shared ``plot_curve`` draws ``eval.csv`` as ``curve.png``.
- **Outputs** in ``out``: ``policy.zip`` (the final learner; ``python evaluate.py --players
  runs/rllib/policy.zip,greedy,greedy,greedy --contracts 1``), ``best_policy.zip`` (best
  evaluation against the first bot), ``checkpoints/iter_NNNNNN/`` (RLlib's checkpoint, for
  ``Algorithm.from_checkpoint``) with ``iter_NNNNNN.zip`` beside it (that checkpoint's learner as
  a player), ``config.json`` (the options), ``progress.csv`` (per iteration: env steps, wall
  time, throughput, returns), ``eval.csv``, ``curve.png`` and ``run.json`` (the results). Every
  ``.zip`` has a ``.json`` beside it naming its table, so evaluate.py checks it against the
  tournament's table.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from shanghai_env.agents.arena.ray_address import connection_problem
from shanghai_env.agents.arena.ray_address import ray_address_problem as address_problem
from shanghai_env.agents.learned.train.evaluation import evaluate_all
from shanghai_env.agents.learned.train.rllib_env import (
    LEARNER,
    SELF,
    SNAPSHOT,
    ShanghaiMultiAgentEnv,
    check_opponents,
)
from shanghai_env.agents.learned.train.run import Run, RunConfig, plot_curve
from shanghai_env.agents.registry import check_spec, contracts_arg
from shanghai_env.cli import EXTRA_MODULES, Parser, extra_hint, int_in, missing_modules, number_in
from shanghai_env.rules import Rules

COMMAND = "shanghai-train rllib"
SNAPSHOT_PREFIX = "snapshot_"
ACTIVATIONS = ("tanh", "relu")


@dataclass
class RLlibConfig:
    """Everything a run depends on (saved in ``run.json``)."""

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
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.contracts = tuple(self.contracts)
        self.net_arch = tuple(self.net_arch)
        self.opponents = check_opponents(self.opponents)
        self.eval_opponents = tuple(self.eval_opponents)
        Rules(num_players=self.players, contracts=self.contracts)  # raises on a bad table
        for name in ("iterations", "train_batch", "minibatch", "epochs", "pool_size", "snapshot_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("num_env_runners", "eval_every", "checkpoint_every", "eval_games"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.minibatch > self.train_batch:
            raise ValueError(f"minibatch ({self.minibatch}) must not exceed train_batch ({self.train_batch})")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
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
        return {
            "num_players": self.players,
            "contracts": self.contracts,
            "reward": self.reward,
            "opponents": self.opponents,
            "max_moves_per_deal": self.max_moves_per_deal,
        }


def policy_mapping_fn(agent_id: str, episode: Any, pool_size: int = 0, **kwargs: Any) -> str:
    """``learner`` and every ``self_k`` seat: the learner; ``snapshot_k``: one frozen copy.

    The copy is fixed for the episode and the seat (a hash of both), uniform over the pool.
    """
    if agent_id.startswith(SNAPSHOT_PREFIX) and pool_size > 0:
        key = f"{getattr(episode, 'id_', episode)}/{agent_id}".encode()
        return f"{SNAPSHOT_PREFIX}{zlib.crc32(key) % pool_size}"
    return LEARNER


# --- building the algorithm --------------------------------------------------------------------


def model_config(config: RLlibConfig) -> dict[str, Any]:
    """The PPO module's network: separate actor and critic MLPs, as SB3's ``MlpPolicy`` has."""
    return {
        "fcnet_hiddens": list(config.net_arch),
        "fcnet_activation": config.activation,
        "vf_share_layers": False,
        "head_fcnet_hiddens": [],
    }


def module_spec(config: RLlibConfig, env: ShanghaiMultiAgentEnv | None = None) -> Any:
    """One masked PPO module (RLlib's ``ActionMaskingTorchRLModule``) for this table."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    env = env or ShanghaiMultiAgentEnv(config.env_config)
    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=env.agent_observation_space,
        action_space=env.agent_action_space,
        model_config=model_config(config),
    )


def build_algorithm(config: RLlibConfig) -> Any:
    """The PPO algorithm: the learner and the frozen snapshots, one env per env runner."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    env = ShanghaiMultiAgentEnv(config.env_config)
    spec = module_spec(config, env)
    modules = [LEARNER, *config.snapshots]
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
    if config.snapshots:  # every snapshot starts as the untrained learner
        copy_to_snapshots(algo, config.snapshots)
    return algo


def learner_state(algo: Any) -> dict[str, Any]:
    """The learner module's weights, from the learner group (the full module, critic included)."""
    return algo.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]


def copy_to_snapshots(algo: Any, snapshot_ids: Sequence[str]) -> None:
    """Overwrite frozen modules with the learner's current weights, in the learners and env runners."""
    state = learner_state(algo)
    algo.learner_group.set_weights(dict.fromkeys(snapshot_ids, state))
    algo.env_runner_group.sync_weights(
        policies=list(snapshot_ids),
        from_worker_or_learner_group=algo.learner_group,
        inference_only=True,
        timeout_seconds=60.0,
    )


# --- the learner as a player ---------------------------------------------------------------------


def export_policy(config: RLlibConfig, state: dict[str, Any], path: str) -> str:
    """Write the learner (``state``, from :func:`learner_state`) as a MaskablePPO ``.zip``.

    RLlib's module is an actor MLP, a linear policy head, a critic MLP and a linear value head on
    the raw observation values; SB3's ``MlpPolicy`` with ``net_arch={"pi": H, "vf": H}`` and the
    same activation is the same function, so the weights are copied layer by layer (shapes
    checked). The file plays through
    :class:`shanghai_env.agents.learned.players.sb3.ModelAgent` (evaluate.py, train.py's
    opponents) without Ray. A ``.json`` beside it records the table for evaluate.py's checks.
    """
    import torch
    from sb3_contrib import MaskablePPO

    from shanghai_env.agents.learned.players.sb3 import save_maskable
    from shanghai_env.single_agent import SingleAgentEnv

    module = module_spec(config).build()
    module.set_state(state)
    env = SingleAgentEnv(None, num_players=config.players, contracts=config.contracts)
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation]
    model = MaskablePPO(
        "MlpPolicy",
        env,
        policy_kwargs={
            "net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
            "activation_fn": activation,
        },
        device="cpu",
        seed=config.seed,
    )
    policy = model.policy
    pairs = [
        (
            _linears(module.encoder.actor_encoder, module.pi),
            [*_linears(policy.mlp_extractor.policy_net), policy.action_net],
        ),
        (
            _linears(module.encoder.critic_encoder, module.vf),
            [*_linears(policy.mlp_extractor.value_net), policy.value_net],
        ),
    ]
    with torch.no_grad():
        for source, target in pairs:
            if [s.weight.shape for s in source] != [t.weight.shape for t in target]:
                raise ValueError("the RLlib module and the SB3 policy have different layers")
            for s, t in zip(source, target):
                t.weight.copy_(s.weight)
                t.bias.copy_(s.bias)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    save_maskable(model, path)
    meta = {
        "config": {"num_players": config.players, "contracts": list(config.contracts)},
        "exported_from": "rllib",
    }
    with open(os.path.splitext(path)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    env.close()
    return path


def _linears(*parts: Any) -> list[Any]:
    import torch

    return [m for part in parts for m in part.modules() if isinstance(m, torch.nn.Linear)]


# --- the training loop ---------------------------------------------------------------------------


def _metric(result: dict[str, Any], *path: str) -> float:
    node: Any = result
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return float("nan")
        node = node[key]
    try:
        return float(node)
    except (TypeError, ValueError):
        return float("nan")


class _LearnTimer:
    """Times the learner group's updates (the rest of a PPO iteration is sampling and weight sync)."""

    def __init__(self, algo: Any) -> None:
        self.seconds = 0.0
        group = algo.learner_group
        update = group.update

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return update(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        group.update = timed


def start_ray(config: RLlibConfig) -> bool:
    """Connect to ``config.address``, or start a local Ray; True if this call started it."""
    import ray

    if ray.is_initialized():
        return False
    if config.address:
        ray.init(address=config.address, include_dashboard=False, log_to_driver=config.verbose)
    else:
        cpus = config.num_cpus or max(os.cpu_count() or 1, config.num_env_runners + 1)
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=config.verbose)
    return True


def run_config(config: RLlibConfig) -> RunConfig:
    """The options an RLlib run shares with every method of shanghai-train: its table, folder and
    evaluation (the same statistic and ``eval.csv`` columns as the loop's, and shanghai-evaluate's)."""
    return RunConfig(
        method="rllib",
        players=config.players,
        contracts=config.contracts,
        seed=config.seed,
        out=config.out,
        opponents=config.opponents,
        eval_games=config.eval_games,
        eval_opponents=config.eval_opponents,
        eval_seed=config.eval_seed,
        progress=config.verbose,
    )


class _Session:
    """A run in progress: the algorithm, the run folder, the env steps sampled, the evaluations."""

    def __init__(self, config: RLlibConfig, algo: Any) -> None:
        self.config, self.algo = config, algo
        self.shared = run_config(config)
        self.run = Run(self.shared)
        self.timer = _LearnTimer(algo)
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
        out = self.config.out
        path = self.export(os.path.join(out, "policy.zip"))
        row = {"env_steps": int(self.sampled), "wall_seconds": round(self.run.wall(), 1), "iteration": it}
        row.update(evaluate_all(path, self.shared))
        self.evals.append(row)
        self.run.log("eval.csv", row)
        plot_curve([self.run.path("eval.csv")], self.run.path("curve.png"), f"rllib: {out}")
        bots = self.config.eval_opponents
        shown = ", ".join(
            f"{b} {row[f'{b}_diff']:+.1f} [{row[f'{b}_low']:+.1f}, {row[f'{b}_high']:+.1f}]" for b in bots
        )
        self.say(f"eval {it}: game score minus each bot seat (below 0: ahead of it): {shown}")
        key = f"{bots[0]}_diff"
        if not self.best or row[key] < self.best[key]:
            self.best = row
            self.export(os.path.join(out, "best_policy.zip"))

    def iterate(self, it: int) -> None:
        """One PPO iteration, its progress row and, when due, a snapshot of the learner."""
        t0 = time.perf_counter()
        result = self.algo.train()
        seconds = time.perf_counter() - t0
        now_sampled = _metric(result, "env_runners", "num_env_steps_sampled_lifetime")
        steps, self.sampled = now_sampled - self.sampled, now_sampled
        learn_s, self.timer.seconds = self.timer.seconds, 0.0
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

    def finish(self, seconds: float, ray_version: str) -> dict[str, Any]:
        """The final player and run.json (the configuration and the results)."""
        config = self.config
        self.export(os.path.join(config.out, "policy.zip"))
        meta = {
            "config": asdict(config),
            "iterations": config.iterations,
            "env_steps_sampled": self.sampled,
            "seconds": seconds,
            "env_steps_per_s": self.sampled / seconds if seconds > 0 else 0.0,  # evaluations included
            "final_eval": self.evals[-1] if self.evals else {},
            "best_eval_vs_first_bot": self.best,
            "ray": ray_version,
        }
        with open(os.path.join(config.out, "run.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, default=str)
        return meta


def train(config: RLlibConfig) -> dict[str, Any]:
    """Train for ``config.iterations`` iterations, write the outputs (module docstring), return run.json."""
    import ray

    missing = missing_modules(EXTRA_MODULES["rllib"])  # exporting the policy needs sb3-contrib and torch
    if missing:
        raise ImportError(f"training with RLlib needs {', '.join(missing)}: {extra_hint('rllib')}")
    out = config.out
    os.makedirs(os.path.join(out, "checkpoints"), exist_ok=True)
    for name in ("progress.csv", "eval.csv"):  # a run starts afresh (RLlib's checkpoints resume it)
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    started = start_ray(config)
    algo = session = None
    try:
        algo = build_algorithm(config)
        session = _Session(config, algo)
        with open(session.run.path("config.json"), "w", encoding="utf-8") as f:
            json.dump(asdict(config), f, indent=2, default=str)
        start = time.perf_counter()
        if config.eval_games and config.eval_every:
            session.evaluate(0)  # the untrained policy: where the curve starts
        for it in range(1, config.iterations + 1):
            session.iterate(it)
            last = it == config.iterations
            if (config.checkpoint_every and it % config.checkpoint_every == 0) or last:
                session.checkpoint(it)
            if config.eval_games and ((config.eval_every and it % config.eval_every == 0) or last):
                session.evaluate(it)
        return session.finish(time.perf_counter() - start, ray.__version__)
    finally:
        if session is not None:
            session.run.close()  # the folder's lock: another run (in this process too) may use it now
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()


# --- the command line ----------------------------------------------------------------------------


def _names(text: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one player")
    return names


def _opponents(text: str) -> tuple[str, ...]:
    try:
        return check_opponents(_names(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err} (or self, snapshot)") from None


def _bots(text: str) -> tuple[str, ...]:
    try:
        return tuple(check_spec(n) for n in _names(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive layer sizes, got {text!r}")
    return sizes


# (option, RLlibConfig field, type, help); defaults come from RLlibConfig; the names of the options
# every method of shanghai-train has are theirs
_OPTIONS: list[tuple[str, str, Any, str]] = [
    ("--iterations", "iterations", int_in(1), "PPO iterations"),
    ("--num-env-runners", "num_env_runners", int_in(0), "sampling processes (0: the driver samples)"),
    (
        "--address",
        "address",
        str,
        "a Ray cluster: 'auto' (on one of its nodes) or HOST:6379; default: a local Ray",
    ),
    ("--contracts", "contracts", contracts_arg, "contracts of one game, e.g. 1 or 1,2,3"),
    ("--players", "players", int_in(3, 8), "seats at the table (3-8)"),
    ("--seed", "seed", int_in(0), "seeds RLlib, the envs and the evaluation"),
    ("--out", "out", str, "output folder (created if missing)"),
    (
        "--opponents",
        "opponents",
        _opponents,
        "what an opponent seat may be, one drawn per seat and episode: self (the learner), snapshot "
        "(a frozen copy), or a player as evaluate.py names them (random, greedy, planner, a model .zip)",
    ),
    ("--pool-size", "pool_size", int_in(1), "frozen snapshots"),
    ("--snapshot-every", "snapshot_every", int_in(1), "iterations between snapshots"),
    ("--train-batch", "train_batch", int_in(1), "env steps sampled per iteration"),
    ("--minibatch", "minibatch", int_in(1), "SGD minibatch"),
    ("--epochs", "epochs", int_in(1), "SGD epochs per iteration"),
    ("--lr", "lr", number_in(0.0, low_open=True), "learning rate"),
    ("--net-arch", "net_arch", _sizes, "hidden layers of the actor and of the critic, e.g. 256,256"),
    ("--eval-every", "eval_every", int_in(0), "iterations between evaluations (0: at the end only)"),
    ("--eval-games", "eval_games", int_in(0), "duplicate games per evaluation bot (0: no evaluation)"),
    ("--eval-opponents", "eval_opponents", _bots, "bots to evaluate against, e.g. greedy,random"),
    ("--eval-seed", "eval_seed", int_in(0), "the evaluation's decks"),
    ("--checkpoint-every", "checkpoint_every", int_in(0), "iterations between checkpoints (0: at the end)"),
    ("--max-moves-per-deal", "max_moves_per_deal", int_in(1), "step cap per deal (truncation)"),
]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``shanghai-train rllib``."""
    defaults = RLlibConfig()
    p = Parser(
        prog=COMMAND,
        description="Multi-agent self-play PPO with Ray RLlib on Shanghai Rummy (docs/rllib.md).",
    )
    for flag, dest, kind, text in _OPTIONS:
        default = getattr(defaults, dest)
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        metavar = flag[2:].upper().replace("-", "_")
        p.add_argument(flag, dest=dest, type=kind, default=default, metavar=metavar, help=f"{text} [{shown}]")
    p.add_argument("--quiet", action="store_true", help="print nothing per iteration")
    return p


def _connect(parser: argparse.ArgumentParser, config: RLlibConfig) -> bool:
    """Start or reach Ray (a usage error when it cannot); True if this call started it."""
    problem = address_problem(config.address)
    if problem:
        parser.error(f"argument --address: {problem}")
    try:
        return start_ray(config)
    except (ConnectionError, ValueError, RuntimeError) as err:
        parser.error(f"argument --address: {connection_problem(config.address, err)}")


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``shanghai-train rllib [options]``: train; a bad argument exits with status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = RLlibConfig(
            **{dest: getattr(args, dest) for _, dest, _, _ in _OPTIONS}, verbose=not args.quiet
        )
    except ValueError as err:
        parser.error(str(err))
    if os.path.exists(config.out) and not os.path.isdir(config.out):
        parser.error(f"argument --out: {config.out!r} exists and is not a folder")
    # every dependency before Ray starts: sb3-contrib is first needed at the first export
    missing = missing_modules(EXTRA_MODULES["rllib"])
    if missing:
        parser.error(
            f"{COMMAND} needs the 'rllib' extra (not installed: {', '.join(missing)}): {extra_hint('rllib')}"
        )
    import ray

    started = _connect(parser, config)
    try:
        return train(config)
    finally:
        if started:
            ray.shutdown()
