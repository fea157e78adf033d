"""MaskablePPO training on :class:`shanghai_env.single_agent.SingleAgentEnv` (the library behind train.py).

- **Opponents** are named as on evaluate.py's command line (``random``, ``greedy``, ``planner``,
  a saved model's path) plus ``self``: a snapshot of the learner drawn from a pool of its last
  ``pool_size`` snapshots (one is saved before training starts and one every
  ``snapshot_every`` steps). Every opponent seat draws one of the names, uniformly, per episode.
- **Evaluation** every ``eval_every`` steps plays the current policy against each bot in
  ``eval_opponents`` (``model, bot, bot, bot``) through :mod:`shanghai_env.agents.arena.tournament`, the code
  evaluate.py runs, on duplicate deals with a fixed seed, and logs the model's mean deal score
  (with its 95% interval) and win rate to TensorBoard, the terminal and ``eval.csv``.
- **Outputs** in ``out``: ``model.zip`` and ``model.json`` (the configuration, the final
  evaluation, the throughput), ``best_model.zip`` (best evaluation against the first
  evaluation bot), ``checkpoints/``, ``pool/`` (self-play snapshots), ``eval.csv``,
  ``learning_curve.png`` and TensorBoard logs in ``tb/``.
- **Determinism**: one seed fixes the environments (``seed + rank``), the opponents' seeds,
  the network's initialisation and PPO's sampling; evaluation saves and restores the global
  random state it would otherwise disturb.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import os
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback

from shanghai_env.agents.base import Agent
from shanghai_env.agents.bots.contract import shared_meter
from shanghai_env.agents.learned.features import CardFeatures, RummyFeatures
from shanghai_env.agents.registry import make_agent
from shanghai_env.engine import Game
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv

SELF = "self"
FEATURES = ("rummy", "cards", "structured")


@dataclass
class TrainConfig:
    """Everything a training run depends on (saved beside the model as JSON)."""

    timesteps: int = 60_000
    n_envs: int = 2
    opponents: tuple[str, ...] = ("greedy",)
    contracts: tuple[int, ...] = (1,)
    num_players: int = 4
    reward: str = "deal"
    seed: int = 0
    out: str = "runs/demo"
    shaping: float = 0.1  # potential = -shaping * distance to the contract (0: off)
    learning_rate: float = 3e-4
    n_steps: int = 512
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    ent_coef: float = 0.003
    net_arch: tuple[int, ...] = (128, 128)
    # the policy: "rummy" (RummyFeatures, then an MLP), "cards" (CardFeatures, then an MLP) or
    # "structured" (StructuredPolicy: per-card and per-meld embeddings scoring each action; its
    # width is net_arch[0])
    features: str = "rummy"
    max_moves_per_deal: int = 1000
    eval_every: int = 10_000
    eval_games: int = 100
    eval_opponents: tuple[str, ...] = ("greedy",)
    eval_seed: int = 1_000_003
    checkpoint_every: int = 50_000
    snapshot_every: int = 20_000
    pool_size: int = 5
    vec_env: str = "dummy"  # or "subproc"; on 2 cores one process is faster (benchmarks/throughput.py)
    pretrain: str = ""  # a bot to imitate before PPO (behaviour cloning); "" for none
    pretrain_steps: int = 40_000  # its decisions recorded
    pretrain_epochs: int = 5
    pretrain_lr: float = 1e-3  # peak of the cloning's one-cycle schedule
    pretrain_batch: int = 512
    dagger_rounds: int = 0  # after cloning: rounds of the clone playing, the teacher labelling
    dagger_epochs: int = 0  # epochs of each DAgger refit (0: pretrain_epochs)
    init: str = ""  # a saved model to start PPO from (its network and features), "" for a fresh one
    torch_threads: int = 1  # the learner's torch threads (more only help on idle machines)
    resume: bool = False  # continue from the newest checkpoint in out/checkpoints (cloning included)
    derived: bool = False  # the observation followed by the derived inputs (agents/learned/derived.py)
    progress: bool = True
    verbose: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.opponents = tuple(self.opponents)
        self.contracts = tuple(self.contracts)
        self.net_arch = tuple(self.net_arch)
        self.eval_opponents = tuple(self.eval_opponents)
        if self.features not in FEATURES:
            raise ValueError(f"features must be one of {sorted(FEATURES)}, got {self.features!r}")
        if self.vec_env not in ("subproc", "dummy"):
            raise ValueError(f"vec_env must be 'subproc' or 'dummy', got {self.vec_env!r}")
        if self.timesteps < 0 or self.n_envs < 1:
            raise ValueError("timesteps must be >= 0 (0: cloning only) and n_envs positive")
        if self.derived and self.features != "structured" and not self.init:
            raise ValueError(
                "the derived inputs are read by the structured policy only: features='structured'"
            )
        if self.init and self.pretrain:
            raise ValueError("start from a saved model (init) or from cloning a bot (pretrain), not both")
        if not self.opponents:
            raise ValueError("name at least one opponent (a bot, a model path, or 'self')")


# --- opponents and shaping (built in the environment's process) ---------------------------------

_AGENT_CACHE: dict[tuple[str, int, int], Agent] = {}
_SHARED: dict[str, Agent] = {}


def _cached_agent(spec: str, seat: int, slot: int = 0) -> Agent:
    """One agent object per (name, opponent seat, env slot) and process: bots keep per-game state,
    so two envs of one process never share one. A network that decides in batches
    (``act_batch``, no state between decisions) is one object per name and process, so that
    :class:`~shanghai_env.agents.learned.vec_env.BatchedVecEnv` decides its seats of every env in
    one forward pass (and the weights are loaded once)."""
    key = (spec, seat, slot)
    agent = _AGENT_CACHE.get(key)
    if agent is None:
        shared = _SHARED.get(spec)
        agent = shared if shared is not None else make_agent(spec)
        if hasattr(agent, "act_batch"):
            _SHARED[spec] = agent
        _AGENT_CACHE[key] = agent
    return agent


@dataclass(frozen=True)
class OpponentSampler:
    """Opponent factory for :class:`SingleAgentEnv`: each seat draws one name per episode.

    ``self`` draws a snapshot path from ``pool`` (uniformly). Plain data, so it pickles into
    worker processes; agents are built there and cached, per env ``slot`` (see
    :func:`_cached_agent`).
    """

    specs: tuple[str, ...]
    pool: tuple[str, ...] = ()
    seats: int = 3
    slot: int = 0  # the env's index in its vector env

    def __call__(self, rng: np.random.Generator) -> list[Agent]:
        out = []
        for k in range(self.seats):
            spec = self.specs[int(rng.integers(len(self.specs)))]
            if spec == SELF:
                if not self.pool:
                    raise ValueError("self-play needs at least one snapshot in the pool")
                spec = self.pool[int(rng.integers(len(self.pool)))]
            out.append(_cached_agent(spec, k, self.slot))
        return out


def set_pool(env: Any, config: TrainConfig, pool: Sequence[str]) -> None:
    """Hand a vector env's envs (each in its slot) the opponents drawing from ``pool``."""
    for slot in range(env.num_envs):
        sampler = OpponentSampler(config.opponents, tuple(pool), config.num_players - 1, slot)
        env.env_method("set_opponents", sampler, indices=slot)


class DistancePotential:
    """Potential ``-coef * distance of the hand to the contract`` (0 once down), for shaping."""

    def __init__(self, coef: float, gap: int = 1) -> None:
        self.coef = coef
        self.gap = gap

    def __call__(self, game: Game, seat: int) -> float:
        if game.down[seat]:
            return 0.0
        return -self.coef * shared_meter(game.contract, self.gap).distance(game.hands[seat])


def env_factory(config: TrainConfig, pool: Sequence[str] = (), slot: int = 0) -> Callable[[], SingleAgentEnv]:
    """A picklable constructor of one training env, the ``slot``-th of its vector env
    (single-threaded torch in workers)."""

    def make() -> SingleAgentEnv:
        if multiprocessing.current_process().name != "MainProcess":
            torch.set_num_threads(1)  # one core per worker; the learner keeps its own threads
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the learner stops, workers follow
        env_class = SingleAgentEnv
        if config.derived:
            from shanghai_env.agents.learned.derived import DerivedSingleAgentEnv

            env_class = DerivedSingleAgentEnv
        return env_class(
            OpponentSampler(config.opponents, tuple(pool), config.num_players - 1, slot),
            num_players=config.num_players,
            contracts=config.contracts,
            reward=config.reward,
            max_moves_per_deal=config.max_moves_per_deal,
            potential=DistancePotential(config.shaping) if config.shaping else None,
            gamma=config.gamma,
        )

    return make


# --- evaluation --------------------------------------------------------------------------------


def evaluate_model(
    path: str, config: TrainConfig, opponent: str, games: int | None = None, workers: int = 1
) -> dict[str, float]:
    """Duplicate-deal tournament ``model, opponent x (n-1)``: the model's mean deal score and win rate."""
    from shanghai_env.agents.arena import tournament
    from shanghai_env.agents.arena.stats import summarize

    players = (path, *([opponent] * (config.num_players - 1)))
    tconfig = tournament.TournamentConfig(
        players=players, games=games or config.eval_games, seed=config.eval_seed, contracts=config.contracts
    )
    results = tournament.run_tournament(tconfig, workers=workers)
    tournament.forget_agents(tconfig.players)  # a path is evaluated once: free its model
    summary = summarize(results, tconfig.labels, tconfig.players, duplicate=True, seed=tconfig.seed)
    me, others = summary.players[0], summary.players[1:]
    return {
        "mean_deal_score": me.mean_deal_score,
        "ci_low": float(me.deal_ci95[0]),
        "ci_high": float(me.deal_ci95[1]),
        "win_rate": me.win_rate,
        "opponent_mean_deal_score": float(np.mean([p.mean_deal_score for p in others])),
        "games": float(len(results)),
    }


def _callbacks(config: TrainConfig, out: str, pool: list[str]) -> list[Any]:
    class SnapshotPool(BaseCallback):
        """Saves a snapshot every ``snapshot_every`` steps and hands the pool to the envs."""

        def __init__(self) -> None:
            super().__init__()
            self.next = config.snapshot_every

        def _on_step(self) -> bool:
            if SELF in config.opponents and self.num_timesteps >= self.next:
                self.next += config.snapshot_every
                path = os.path.join(out, "pool", f"step_{self.num_timesteps}.zip")
                self.model.save(path)
                pool.append(path)
                del pool[: -config.pool_size]
                set_pool(self.training_env, config, pool)
            return True

    class TournamentEval(BaseCallback):
        """Evaluates against the bots through the arena's tournament; logs, prints, keeps the best."""

        def __init__(self) -> None:
            super().__init__()
            self.next = 0
            self.rows: list[dict[str, float]] = (
                _read_csv(os.path.join(out, "eval.csv")) if config.resume else []
            )
            first = f"{config.eval_opponents[0]}_mean_deal_score"
            self.best = min((r[first] for r in self.rows if first in r), default=float("inf"))
            self.start = time.perf_counter() - (self.rows[-1]["seconds"] if self.rows else 0.0)

        def _on_training_start(self) -> None:
            self.evaluate()

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.evaluate()
            return True

        def _on_training_end(self) -> None:
            if not self.rows or self.rows[-1]["timesteps"] != self.num_timesteps:
                self.evaluate()

        def evaluate(self) -> None:
            self.next = self.num_timesteps + config.eval_every
            path = os.path.join(out, "eval", f"step_{self.num_timesteps}.zip")
            self.model.save(path)
            states = (torch.get_rng_state(), np.random.get_state(), random.getstate())
            row: dict[str, float] = {
                "timesteps": float(self.num_timesteps),
                "seconds": time.perf_counter() - self.start,
            }
            parts = []
            for i, bot in enumerate(config.eval_opponents):
                r = evaluate_model(path, config, bot)
                for k in ("mean_deal_score", "ci_low", "ci_high", "win_rate", "opponent_mean_deal_score"):
                    row[f"{bot}_{k}"] = r[k]
                self.logger.record(f"eval/{bot}_mean_deal_score", r["mean_deal_score"])
                self.logger.record(f"eval/{bot}_win_rate", r["win_rate"])
                parts.append(
                    f"vs {bot}: {r['mean_deal_score']:.1f} [{r['ci_low']:.1f}, {r['ci_high']:.1f}] "
                    f"(bots {r['opponent_mean_deal_score']:.1f}), win {100 * r['win_rate']:.0f}%"
                )
                if i == 0 and r["mean_deal_score"] < self.best:
                    self.best = r["mean_deal_score"]
                    save_for_play(self.model, os.path.join(out, "best_model.zip"))
            torch.set_rng_state(states[0])
            np.random.set_state(states[1])
            random.setstate(states[2])
            os.remove(path)
            self.rows.append(row)
            _write_csv(os.path.join(out, "eval.csv"), self.rows)
            print(f"[eval] step {self.num_timesteps:>8}: mean deal score " + "; ".join(parts), flush=True)

    return [SnapshotPool(), TournamentEval()]


def _read_csv(path: str) -> list[dict[str, float]]:
    """The rows of an earlier run's eval.csv (none if it is missing), to continue its curve."""
    if not os.path.isfile(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _write_csv(path: str, rows: list[dict[str, float]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot_curve(csv_path: str, png_path: str, title: str = "") -> None:
    """The learning curve: mean deal score (95% interval) against each evaluation bot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path, encoding="utf-8") as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    bots = sorted({k[: -len("_mean_deal_score")] for k in rows[0] if k.endswith("_mean_deal_score")})
    bots = [b for b in bots if not b.endswith("_opponent")]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = [r["timesteps"] for r in rows]
    for bot in bots:
        y = [r[f"{bot}_mean_deal_score"] for r in rows]
        (line,) = ax.plot(x, y, marker="o", label=f"model vs 3 {bot}")
        color = line.get_color()  # the bots' own mean in the same colour as the model's line
        low, high = [r[f"{bot}_ci_low"] for r in rows], [r[f"{bot}_ci_high"] for r in rows]
        ax.fill_between(x, low, high, alpha=0.2, color=color)
        ax.axhline(
            float(np.mean([r[f"{bot}_opponent_mean_deal_score"] for r in rows])),
            ls="--",
            lw=1,
            color=color,
            label=f"{bot}'s own mean in those games",
        )
    ax.set_xlabel("training steps (learner decisions)")
    ax.set_ylabel("mean deal score (lower is better)")
    ax.set_title(title or "MaskablePPO learning curve")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


# --- training ----------------------------------------------------------------------------------


def ppo_settings(config: TrainConfig) -> dict[str, Any]:
    """MaskablePPO's learning-rate, rollout and update settings of ``config`` (a fresh model's and
    the ones a loaded model is given)."""
    return {
        "learning_rate": config.learning_rate,
        "n_steps": config.n_steps,
        "batch_size": config.batch_size,
        "n_epochs": config.n_epochs,
        "gamma": config.gamma,
        "gae_lambda": config.gae_lambda,
        "ent_coef": config.ent_coef,
    }


def build_model(config: TrainConfig, env: Any, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO for ``config`` on ``env``."""
    from sb3_contrib import MaskablePPO

    arch = list(config.net_arch)
    common: dict[str, Any] = {
        **ppo_settings(config),
        "tensorboard_log": tensorboard_log,
        "seed": config.seed,
        "device": "cpu",
        "verbose": config.verbose,
    }
    if config.features == "structured":
        from shanghai_env.agents.learned.structured import StructuredPolicy

        kwargs = {
            "num_players": config.num_players,
            "contracts": config.contracts,
            "width": arch[0],
            "derived": config.derived,
        }
        return MaskablePPO(StructuredPolicy, env, policy_kwargs=kwargs, **common)
    extractor: type = RummyFeatures
    extractor_kwargs: dict[str, Any] = {"num_players": config.num_players, "contracts": config.contracts}
    if config.features == "cards":
        rules = Rules(num_players=config.num_players, contracts=config.contracts)
        extractor = CardFeatures
        extractor_kwargs = {"upcard_start": ObservationEncoder(rules).slices["upcard_offered"].start}
    return MaskablePPO(
        "MlpPolicy",
        env,
        policy_kwargs={
            "features_extractor_class": extractor,
            "features_extractor_kwargs": extractor_kwargs,
            "net_arch": {"pi": arch, "vf": arch},
        },
        **common,
    )


def load_model(config: TrainConfig, env: Any, tensorboard_log: str | None = None) -> Any:
    """``config.init`` (a saved MaskablePPO) with ``config``'s PPO settings, to train further.

    The network, its feature extractor and its weights come from the file; the learning rate,
    rollout and update settings from ``config``, so a cloned policy can be fine-tuned gently.
    """
    from shanghai_env.agents.learned.model import load_maskable

    settings = ppo_settings(config)
    try:
        model = load_maskable(
            config.init, env=env, device="cpu", custom_objects=settings, tensorboard_log=tensorboard_log
        )
    except ValueError as err:  # SB3 compares the saved spaces with the environment's
        raise ValueError(f"{config.init} was trained for another table (players, contracts): {err}") from None
    model.set_random_seed(config.seed)
    model.verbose = config.verbose
    return model


def save_for_play(model: Any, path: str) -> None:
    """Save ``model`` with a fresh optimizer: a third of the size, plays the same (checkpoints/
    keep the optimizer's state for resuming training)."""
    policy = model.policy
    trained = policy.optimizer
    lr = float(model.lr_schedule(1.0))
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=lr, **policy.optimizer_kwargs)
    try:
        model.save(path)
    finally:
        policy.optimizer = trained


def _collect_shard(config: TrainConfig, steps: int, seed: int, driver_path: str) -> Any:
    """One shard of teacher decisions (in a worker process, or in this one): ``config.pretrain``
    in the learner's seat against the non-self opponents; with ``driver_path`` (DAgger) that saved
    model plays and the teacher only labels."""
    from shanghai_env.agents.learned.imitation import collect

    bots = tuple(o for o in config.opponents if o != SELF) or (config.pretrain,)
    env = env_factory(TrainConfig(**{**asdict(config), "opponents": bots}))()
    driver = None
    if driver_path:
        from shanghai_env.agents.learned.model import load_maskable, policy_mode

        policy = load_maskable(driver_path, device="cpu").policy

        def driver(obs: np.ndarray, mask: np.ndarray) -> int:
            return policy_mode(policy, obs, mask)

    return collect(env, config.pretrain, steps, config.gamma, seed, driver)


def _collect_demos(config: TrainConfig, steps: int, seed: int, driver_path: str = "") -> Any:
    """``steps`` teacher decisions in ``n_envs`` shards of whole episodes, one worker process each
    (the teacher's and opponents' moves dominate the time, and shards are independent); shard ``k``
    is seeded from ``(seed, k)``, so the same seed and n_envs give the same demonstrations."""
    shards = max(1, config.n_envs)
    per = -(-steps // shards)
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(shards)]
    if shards == 1:
        return _collect_shard(config, per, seeds[0], driver_path)
    from shanghai_env.agents.arena.workers import map_in_workers

    # the arena's workers: one torch thread each, and they end with this command however it ends
    parts = map_in_workers([(_collect_shard, (config, per, s, driver_path)) for s in seeds], shards)
    demos = parts[0]
    for part in parts[1:]:
        demos = demos + part
    return demos


def _pretrain(config: TrainConfig, model: Any) -> list[dict[str, float]]:
    """Behaviour cloning of ``config.pretrain`` (a bot or a saved player) against the non-self
    opponents, then ``dagger_rounds`` rounds of the clone playing and the teacher labelling."""
    from shanghai_env.agents.learned.imitation import pretrain

    start = time.perf_counter()
    demos = _collect_demos(config, config.pretrain_steps, config.seed)
    print(
        f"[pretrain] {len(demos)} decisions of {config.pretrain} in {time.perf_counter() - start:.0f}s",
        flush=True,
    )
    batch, lr = config.pretrain_batch, config.pretrain_lr
    history = pretrain(model, demos, config.pretrain_epochs, batch, config.seed, lr)
    for r in range(config.dagger_rounds):
        # DAgger: the clone plays, the teacher labels; refit on everything gathered so far.
        clone = os.path.join(config.out, "checkpoints", f"clone_round_{r}.zip")
        model.save(clone)
        start = time.perf_counter()
        steps, seed = config.pretrain_steps // 2, config.seed + 1 + r
        more = _collect_demos(config, steps, seed, clone)
        demos = demos + more
        elapsed = time.perf_counter() - start
        print(
            f"[dagger] round {r + 1}: {len(more)} states of the clone labelled in {elapsed:.0f}s", flush=True
        )
        epochs = config.dagger_epochs or config.pretrain_epochs
        history += pretrain(model, demos, epochs, batch, seed, lr)
    for i, row in enumerate(history):
        print(
            f"[pretrain] epoch {i + 1}: policy loss {row['policy_loss']:.3f}, value loss "
            f"{row['value_loss']:.4f}, agrees with {config.pretrain} on {100 * row['accuracy']:.1f}%",
            flush=True,
        )
    return history


def latest_checkpoint(out: str) -> str | None:
    """The checkpoint of ``out`` with the most steps (``checkpoints/model_<steps>_steps.zip``), or None."""
    folder = os.path.join(out, "checkpoints")
    found = []
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        parts = name.split("_")
        if len(parts) == 3 and parts[0] == "model" and parts[2] == "steps.zip" and parts[1].isdigit():
            found.append((int(parts[1]), os.path.join(folder, name)))
    return max(found)[1] if found else None


def make_vec_env(config: TrainConfig, pool: Sequence[str] = ()) -> Any:
    """The training envs: in this process (``dummy``: a :class:`BatchedVecEnv`, which decides the
    network opponents' seats of all envs together) or one process each (``subproc``)."""
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecMonitor

    from shanghai_env.agents.learned.vec_env import BatchedVecEnv

    fns: list[Callable[[], Any]] = [env_factory(config, pool, slot) for slot in range(config.n_envs)]
    vec = SubprocVecEnv(fns) if config.vec_env == "subproc" and config.n_envs > 1 else BatchedVecEnv(fns)
    vec.seed(config.seed)
    return VecMonitor(vec)


def train(config: TrainConfig) -> Any:
    """Train, evaluate along the way, save ``model.zip`` + ``model.json``; returns the model."""
    import sb3_contrib
    import stable_baselines3
    from stable_baselines3.common.callbacks import CheckpointCallback
    from stable_baselines3.common.utils import set_random_seed

    out = config.out
    for sub in ("", "pool", "eval", "checkpoints"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    set_random_seed(config.seed)
    torch.set_num_threads(config.torch_threads)
    pool: list[str] = []
    env = make_vec_env(config, pool)
    tb = os.path.join(out, "tb")
    checkpoint = latest_checkpoint(out) if config.resume else None
    pretraining: list[dict[str, float]] = []
    if checkpoint is not None:
        from shanghai_env.agents.learned.model import load_maskable

        model = load_maskable(checkpoint, env=env, device="cpu", tensorboard_log=tb)
        model.verbose = config.verbose
        print(f"[resume] from {checkpoint} ({model.num_timesteps} steps done)", flush=True)
    else:
        model = load_model(config, env, tb) if config.init else build_model(config, env, tensorboard_log=tb)
        pretraining = _pretrain(config, model) if config.pretrain else []
        # The starting point is a checkpoint too: a resumed run never clones again.
        model.save(os.path.join(out, "checkpoints", "model_0_steps.zip"))
    if SELF in config.opponents:  # the pool starts with the policy as it is before PPO
        pool.append(os.path.join(out, "pool", "step_0.zip"))
        if not os.path.exists(pool[0]):
            model.save(pool[0])
        set_pool(env, config, pool)
    callbacks = _callbacks(config, out, pool)
    every = max(1, config.checkpoint_every // config.n_envs)
    callbacks.append(CheckpointCallback(every, os.path.join(out, "checkpoints"), name_prefix="model"))
    start = time.perf_counter()
    remaining = max(0, config.timesteps - model.num_timesteps)
    model.learn(
        remaining,
        callback=callbacks,
        progress_bar=config.progress,
        tb_log_name="ppo",
        reset_num_timesteps=checkpoint is None,
    )
    seconds = time.perf_counter() - start
    env.close()
    save_for_play(model, os.path.join(out, "model.zip"))
    evaluator = callbacks[1]
    final = evaluator.rows[-1] if evaluator.rows else {}
    meta = {
        "config": asdict(config),
        "timesteps": int(model.num_timesteps),
        "seconds": seconds,  # evaluations included
        "steps_per_second": model.num_timesteps / seconds if seconds > 0 else 0.0,
        "final_eval": final,
        "best_eval_vs_first_bot": evaluator.best,
        "pretraining": pretraining,
        "versions": {
            "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__,
            "torch": torch.__version__,
        },
    }
    with open(os.path.join(out, "model.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    if evaluator.rows:
        plot_curve(os.path.join(out, "eval.csv"), os.path.join(out, "learning_curve.png"))
    return model
