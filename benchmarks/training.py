"""Learner steps per second of ``shanghai-train`` against the env's own speed, in one run; and the
training benchmark protocol (``protocol``).

**The protocol** (``python benchmarks/training.py protocol --method ppo --players 3``): a fixed
budget of learner decisions, fixed seeds, three runs, each player evaluated on the table's task,
so that a method's row compares with another's. Protocol ``budget-v1`` (:data:`PROTOCOLS`):

- ``shanghai-train METHOD`` with its default options (``--opponents self``, ``--reward relative``,
  64 games, the full ten-deal game at ``--players`` 3, 4 or 6) for 1,000,000 learner decisions
  (``--timesteps``), no evaluation while training, one run for each seed 1, 2 and 3;
- each run's player evaluated on the task ``full_{players}p`` (``python evaluate.py --task
  full_3p --players RUN/model.pt``: duplicate games against planners, agents/arena/tasks.py);
- the row: each run's score (its mean game-score difference to the reference seats; lower is
  better) and their mean and range, with the training's wall time. ``--out`` keeps the runs,
  their evaluations and ``protocol.json``; the same command into the same folder goes on where it
  stopped.

``--size smoke`` runs the same steps at a toy size (512 decisions, 4 games, contract 1, six
evaluation games against planners, rounded up to whole rounds of the seat design, instead of the
task) to check the pipeline in a minute; its scores mean nothing. A change to the budget, seeds,
options or evaluation is a new version.

    python benchmarks/training.py protocol --method ppo --players 3 --out runs/protocol_ppo_3p
    python benchmarks/training.py protocol --method dmc --players 4 --workers 2
    python benchmarks/training.py protocol --method ppo --players 3 --size smoke

**Your own method**: ``--method package.module:function`` (found as a player's ``module:factory``
is: a module of the current folder needs no ``PYTHONPATH``). The protocol calls the function once
per seed, with keyword arguments, in place of ``shanghai-train``::

    function(budget: int, seed: int, players: int, contracts: tuple[int, ...], out: str) -> str

- ``budget``: the learner decisions to train on (``--timesteps``: in self-play every seat's
  decision is one); ``seed``: 1, 2, 3; ``players``: the table; ``contracts``: the deals to train on
  (all ten, or ``(1,)`` at smoke size); ``out``: an empty folder for its files (kept with ``--out``);
- it returns the trained player as a name :func:`~shanghai_env.agents.registry.make_agent` takes (a
  bot, a saved player's path, a ``module:factory``; a path object is taken too), checked to play the
  table before its evaluation.

Its player is then evaluated as a ``ppo`` run's is, and its row is labelled with the function's
name; its wall time is the call's. Staying within the budget is the method's word.
``examples/protocol_method.py`` has two: ``no_training`` (returns ``greedy``) and ``dmc_facts``.

    python benchmarks/training.py protocol --method examples.protocol_method:no_training --players 4

The throughput benchmark (the rest of this docstring) is the default command.

Measures, one after another on this machine and in this process (one torch thread):

- **env() random play**: the PettingZoo AEC loop of README (``env.last()``, a random legal
  action from the mask, ``env.step``): the reference every ratio is taken against;
- **vector_env random play**: the batched env (64 games) with random legal actions;
- each trainer configuration: ``shanghai-train METHOD`` on the full game at 4 players (the env's
  own observation; the last three also read the facts of the own hand through a move network, as
  the from-scratch players do), self-play from scratch, no evaluation; its **learner steps/s** (decisions
  trained on, over the loop's wall time) and where the time goes: the games (the vector env's
  ``step``, bots and opponent networks inside included), for ``dagger`` asking its teacher
  (``shanghai``) about every decision, the network while playing, and the updates;
- ``sb3`` (MaskablePPO on the batched games) beside ``ppo`` on the same table: its learner steps/s
  as a share of ``ppo``'s in the same run (``sb3_self_play`` of ``ppo_self_play``, ``sb3_vs_3_greedy``
  of ``ppo_vs_3_greedy``). MaskablePPO trains one seat a game, so in self-play each of its learner
  decisions also steps the other seats' (the current policy's) decisions, where ``ppo`` trains on
  every seat's.

    python benchmarks/training.py                  # every configuration, 65,536 learner steps each
    python benchmarks/training.py --steps 32768 --only ppo_self_play
    python benchmarks/training.py --only ppo_self_play --only sb3_self_play   # sb3 against ppo
    python benchmarks/training.py --device cuda --num-envs 512 --env-workers 12   # a GPU machine
    python benchmarks/training.py --clock cpu      # this process's CPU time: a shared machine

``--device``, ``--num-envs`` and ``--env-workers`` are the trainer's options of the same names; the
random-play references stay one process on the CPU.

The env reference is measured before and after the trainers and averaged, so that a change of
the machine's load shows as a difference between the two (printed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shanghai_env.rules import Rules

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("OMP_NUM_THREADS", "1")

CONFIGS: dict[str, dict[str, Any]] = {
    "ppo_self_play": {"method": "ppo"},
    "dmc_self_play": {"method": "dmc"},
    "ppo_vs_3_networks": {"method": "ppo", "opponents": "network"},
    "ppo_vs_3_greedy": {"method": "ppo", "opponents": ("greedy",)},
    # Stable-Baselines3's MaskablePPO on the batched games (one learning seat a game): in
    # self-play the current policy plays the other seats, and against the same bots as ppo
    "sb3_self_play": {"method": "sb3"},
    "sb3_vs_3_greedy": {"method": "sb3", "opponents": ("greedy",)},
    # the configurations of the from-scratch players (docs/training.md): the facts of the own
    # hand and a move network, and for dmc the λ-returns
    "ppo_facts_move_net": {"method": "ppo", "facts": True, "options": {"move_net": (128,)}},
    "dmc_facts_lambda_move_net": {
        "method": "dmc",
        "facts": True,
        "options": {"move_net": (128,), "td_lambda": 0.9},
    },
    # imitation of shanghai into the same network (the start of RL after cloning): the teacher
    # is asked at every learner decision, in the trainer's process
    "dagger_shanghai_facts_move_net": {
        "method": "dagger",
        "facts": True,
        "options": {"move_net": (128,), "teacher": "shanghai"},
    },
}


class Clock:
    """What every figure here is timed with: wall time by default; ``--clock cpu`` makes it this
    process's CPU time, so that other programs on a shared machine do not count (one process
    only: the time of worker processes, or a GPU's, is not the process's)."""

    now: Callable[[], float] = time.perf_counter


def env_random_play(seconds: float, seed: int = 0) -> float:
    """Steps per second of the AEC loop with random legal actions (numpy's generator)."""
    import numpy as np

    import shanghai_env

    env = shanghai_env.env(num_players=4)
    rng = np.random.default_rng(seed)
    steps, start = 0, Clock.now()
    game = 0
    while Clock.now() - start < seconds:
        env.reset(seed=seed + game)
        game += 1
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
            if steps % 4096 == 0 and Clock.now() - start >= seconds:
                break
    return steps / (Clock.now() - start)


def vector_random_play(seconds: float, num_envs: int = 64) -> float:
    import numpy as np

    from shanghai_env import vector_env

    venv = vector_env(num_envs, num_players=4)
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, start = 0, Clock.now()
    while Clock.now() - start < seconds:
        actions = [ids[rng.integers(len(ids))] for ids in venv.legal_actions]
        venv.step(actions)
        steps += num_envs
    return steps / (Clock.now() - start)


def timed(owner: Any, name: str, parts: dict[str, float], part: str) -> Callable[[], None]:
    """Make ``owner.name`` add its wall time to ``parts[part]``; returns what puts it back."""
    original = getattr(owner, name)

    def timed_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = Clock.now()
        try:
            return original(self, *args, **kwargs)
        finally:
            parts[part] += Clock.now() - start

    setattr(owner, name, timed_call)
    return lambda: setattr(owner, name, original)


def timed_parts(method: str, env_workers: int, parts: dict[str, float]) -> list[Callable[[], None]]:
    """Time the games' steps (the vector env, in this process or in workers, the other seats' play
    inside), collecting a rollout (a method's ``collect``, MaskablePPO's ``collect_rollouts``) and
    asking a teacher."""
    from shanghai_env.agents.learned.train.methods import method_class
    from shanghai_env.agents.learned.train.methods.teachers import Teachers
    from shanghai_env.blocks import BlockVectorEnv
    from shanghai_env.vector import VectorEnv

    games: Any = BlockVectorEnv if env_workers > 1 else VectorEnv  # make_games' choice
    collector: Any = method_class(method)
    collect = "collect"
    if method == "sb3":
        from sb3_contrib import MaskablePPO

        collector, collect = MaskablePPO, "collect_rollouts"
    return [
        timed(games, "step", parts, "games"),
        timed(collector, collect, parts, "network"),
        timed(Teachers, "ask", parts, "teacher"),  # dagger's teacher
    ]


def trainer(
    name: str, settings: dict[str, Any], steps: int, network: str, hardware: dict[str, Any]
) -> dict[str, float]:
    """One ``shanghai-train`` run (the loop itself, no evaluation), timed by part.

    ``hardware``: the run's ``device``, ``num_envs`` and ``env_workers``."""
    import csv

    import torch

    from shanghai_env.agents.learned.train import loop
    from shanghai_env.agents.learned.train.run import RunConfig

    opponents = settings.get("opponents", ("self",))
    if opponents == "network":
        opponents = (network,)
    parts = {"games": 0.0, "network": 0.0, "teacher": 0.0}
    restore = timed_parts(settings["method"], hardware["env_workers"], parts)
    try:
        with tempfile.TemporaryDirectory() as out:
            config = RunConfig(
                method=settings["method"],
                timesteps=steps,
                seed=0,
                out=out,
                opponents=tuple(opponents),
                facts=settings.get("facts", False),
                method_options=dict(settings.get("options", {})),
                eval_every=0,
                eval_games=0,
                checkpoint_every=10**12,
                progress=False,
                **hardware,
            )
            torch.set_num_threads(1)
            start = Clock.now()
            loop.train(config)
            total = Clock.now() - start
            with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
                done = int(list(csv.DictReader(f))[-1]["env_steps"])
    finally:
        for put_back in restore:
            put_back()
    collect_s = parts["network"]
    return {
        "steps_per_s": done / total,
        "games": parts["games"] / total,
        "teacher": parts["teacher"] / total,
        "network": (collect_s - parts["games"] - parts["teacher"]) / total,
        "update": (total - collect_s) / total,
    }


def saved_network(folder: str) -> str:
    """A 4-player network player to sit as opponents (one short update from scratch)."""
    from shanghai_env.agents.learned.train import loop
    from shanghai_env.agents.learned.train.run import RunConfig

    loop.train(RunConfig(timesteps=1, out=folder, eval_every=0, eval_games=0, progress=False))
    return os.path.join(folder, "model.pt")


# --- the training benchmark protocol ---------------------------------------------------------------


@dataclass(frozen=True)
class Protocol:
    """One version of the training benchmark protocol at one size."""

    name: str
    decisions: int  # learner decisions of each run (--timesteps)
    seeds: tuple[int, ...]  # one run each
    num_envs: int
    contracts: tuple[int, ...] | None  # None: the full game (the task's contracts)
    eval_games: int  # 0: the task's own evaluation; else this many games against planners


PROTOCOLS = {
    "full": Protocol("budget-v1", 1_000_000, (1, 2, 3), 64, None, 0),
    "smoke": Protocol("budget-v1 (smoke size)", 512, (1, 2, 3), 4, (1,), 6),
}
PROTOCOL_METHODS = ("ppo", "dmc", "sb3")  # the methods that learn from scratch with no teacher
PROTOCOL_PLAYERS = (3, 4, 6)  # the tables with a task (full_3p, full_4p, full_6p)
METHOD_ARGUMENTS = ("budget", "seed", "players", "contracts", "out")  # what a method's function is given


class FolderError(ValueError):
    """``--out`` holds something other than this protocol's runs: a one-line error, not a traceback."""


STARTED = "started.json"  # written first in --out: what a rerun with the same folder resumes


def protocol_folder(out: str, started: dict[str, Any]) -> None:
    """Make ``out`` the folder of the protocol run ``started`` describes: new or empty, or one that
    the same protocol, method and table started (a rerun goes on where it stopped); FolderError
    otherwise, before anything in it changes."""
    import json

    from shanghai_env.cli import write_atomically

    marker = os.path.join(out, STARTED)
    if os.path.exists(marker):
        try:
            with open(marker, encoding="utf-8") as f:
                had = json.load(f)
        except (OSError, ValueError) as err:
            raise FolderError(f"{out!r}: its {STARTED} cannot be read ({err}); give a new folder") from None
        if had != started:
            raise FolderError(f"{out!r} holds the protocol run {had}, not {started}; give a new folder")
        return
    if os.path.exists(out) and os.listdir(out):
        raise FolderError(f"{out!r} is not empty and holds no protocol run to go on with; give a new folder")
    os.makedirs(out, exist_ok=True)
    write_atomically(marker, json.dumps(started))


class MethodError(ValueError):
    """``--method package.module:function`` names no usable method, or its function returned no
    player: a one-line error of the command line, not a traceback."""


def method_function(method: str) -> Callable[..., Any]:
    """The function ``package.module:function`` names (a module of the current folder is found as a
    player's ``module:factory`` is), checked to take the protocol's keyword arguments; MethodError
    saying what is wrong otherwise."""
    import inspect

    from shanghai_env.agents.registry import load_attribute

    module, _, name = method.partition(":")
    if not module or not name:
        raise MethodError(
            f"method {method!r}: expected one of {', '.join(PROTOCOL_METHODS)}, or "
            "package.module:function for your own method"
        )
    try:
        function = load_attribute(method, "method", "a function")
    except ValueError as err:
        raise MethodError(str(err)) from None
    form = f"{name}({', '.join(METHOD_ARGUMENTS)})"
    try:
        inspect.signature(function).bind(**dict.fromkeys(METHOD_ARGUMENTS))
    except TypeError as err:
        raise MethodError(f"method {method!r}: the protocol calls {form} by keyword; {err}") from None
    except ValueError:  # no signature to read (a builtin): the call will tell
        pass
    return function


def method_player(method: str, returned: object, rules: Rules) -> str:
    """The player spec a method's function returned, checked to play ``rules``' table; MethodError
    naming the method and what it returned otherwise."""
    from shanghai_env.agents.registry import check_player

    name = method.partition(":")[2]
    if not isinstance(returned, (str, os.PathLike)):
        raise MethodError(
            f"method {method!r}: {name}() returned {type(returned).__name__}, not a player (a str "
            "make_agent takes: a bot name, a saved player's path or module:factory)"
        )
    spec = os.fspath(returned)
    if not isinstance(spec, str):
        raise MethodError(f"method {method!r}: {name}() returned a bytes path; return a str")
    try:
        return check_player(spec, rules, where=f"the protocol's {rules.num_players}-player table")
    except ValueError as err:
        raise MethodError(f"method {method!r}: {name}() returned {spec!r}: {err}") from None


def last_wall_seconds(folder: str) -> float:
    """The wall seconds of a run folder's last progress row (a resumed run's count them all)."""
    import csv

    with open(os.path.join(folder, "progress.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return float(rows[-1]["wall_seconds"])


def run_protocol(
    method: str, players: int, size: str = "full", out: str | None = None, workers: int = 1
) -> dict[str, Any]:
    """The protocol's runs and evaluations for ``method`` at ``players``; returns its record (also
    written to ``out/protocol.json`` when ``out`` is given).

    ``method``: one of :data:`PROTOCOL_METHODS`, or ``package.module:function`` for one's own
    (the module docstring gives the function's form); a bad one raises :class:`MethodError`.
    ``out`` started by the same protocol, method and table is gone on with: each seed's finished
    run (its ``run.json``) is kept, an unfinished run of the project's methods resumes from its
    checkpoint, and one's own method is called again on an emptied folder; any other non-empty
    ``out`` raises :class:`FolderError`."""
    import json

    import torch

    from shanghai_env.agents.arena.evaluate_cli import main as evaluate
    from shanghai_env.agents.arena.tasks import task_named
    from shanghai_env.agents.learned.train import loop
    from shanghai_env.agents.learned.train.run import RunConfig
    from shanghai_env.cli import write_atomically
    from shanghai_env.rules import Rules

    function = None if method in PROTOCOL_METHODS else method_function(method)
    label = method.partition(":")[2] if function else method  # the row's name: the function's
    if players not in PROTOCOL_PLAYERS:
        raise ValueError(
            f"players must be one of {', '.join(map(str, PROTOCOL_PLAYERS))} (a task each), got {players!r}"
        )
    if size not in PROTOCOLS:
        raise ValueError(f"size must be one of {', '.join(PROTOCOLS)}, got {size!r}")
    spec = PROTOCOLS[size]
    task = task_named(f"full_{players}p")
    contracts = tuple(spec.contracts or task.contracts)
    rules = Rules(num_players=players, contracts=contracts)
    if out:
        protocol_folder(out, {"protocol": spec.name, "method": method, "players": players})
    torch.set_num_threads(1)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        base = out or scratch
        for seed in spec.seeds:
            folder = os.path.join(base, f"{label}_{players}p_s{seed}")
            finished = os.path.join(folder, "run.json")
            if os.path.exists(finished):  # a rerun of the same folder: this seed is done
                with open(finished, encoding="utf-8") as f:
                    runs.append(json.load(f))
                print(f"{spec.name} {label} {players}p seed {seed}: kept from {finished}", flush=True)
                continue
            start = time.perf_counter()
            if function is not None:
                shutil.rmtree(folder, ignore_errors=True)  # one's own method has no resume: anew
                os.makedirs(folder)
                arguments = dict(zip(METHOD_ARGUMENTS, (spec.decisions, seed, players, contracts, folder)))
                returned = function(**arguments)
                seconds = time.perf_counter() - start
                player = method_player(method, returned, rules)
            else:
                config = RunConfig(
                    method=method,
                    players=players,
                    contracts=contracts,
                    timesteps=spec.decisions,
                    seed=seed,
                    out=folder,
                    num_envs=spec.num_envs,
                    eval_every=0,
                    eval_games=0,
                    progress=False,
                )
                loop.train(config)  # resumes the folder's checkpoint, if a rerun finds one
                seconds = last_wall_seconds(folder)  # the run's own, over every session of it
                player = os.path.join(folder, "model.zip" if method == "sb3" else "model.pt")
            where = ["--workers", str(workers), "--no-progress", "--out", os.path.join(folder, "eval")]
            if spec.eval_games:
                table = ",".join([player, *task.reference])
                argv = ["--players", table, "--games", str(spec.eval_games), "--seed", str(task.seed)]
                argv += ["--contracts", ",".join(map(str, contracts))]
            else:
                argv = ["--task", task.id, "--players", player]
            summary = evaluate([*argv, *where])
            tested = summary.players[0].name
            diffs = [pair.mean_diff for pair in summary.pairs if pair.a == tested]
            score = float(sum(diffs) / len(diffs))
            runs.append(
                {
                    "seed": seed,
                    "player": player,
                    "score": round(score, 2),
                    "seat_diffs": diffs,
                    "games": summary.games,  # as played: whole rounds of the seat design
                    "train_seconds": seconds,
                }
            )
            if out:  # whole or not at all: a rerun trusts it
                write_atomically(finished, json.dumps(runs[-1], indent=1))
            print(
                f"{spec.name} {label} {players}p seed {seed}: {score:+.1f} points a game against the "
                f"reference seats over {summary.games} games ({seconds:,.0f} s of training)",
                flush=True,
            )
    scores: list[float] = [r["score"] for r in runs]
    played = "/".join(str(g) for g in sorted({r["games"] for r in runs}))  # one number: same design
    record: dict[str, Any] = {
        "protocol": spec.name,
        "method": method,
        "label": label,
        "players": players,
        "task": task.id if not spec.eval_games else f"{played} games against planners",
        "decisions": spec.decisions,
        "seeds": list(spec.seeds),
        "runs": runs,
        "mean": round(sum(scores) / len(scores), 2),
        "range": [min(scores), max(scores)],
    }
    print(
        f"| `{label}` | {players} | {spec.decisions:,} | {len(runs)} | {record['mean']:+.1f} "
        f"[{min(scores):+.1f} .. {max(scores):+.1f}] | "
        f"{sum(r['train_seconds'] for r in runs) / len(runs):,.0f} s |",
        flush=True,
    )
    if out:
        write_atomically(os.path.join(out, "protocol.json"), json.dumps(record, indent=1))
    return record


def protocol_main(argv: list[str]) -> None:
    from shanghai_env.cli import Parser

    parser = Parser(
        prog="benchmarks/training.py protocol",
        description="the training benchmark protocol (see the module docstring)",
    )
    parser.add_argument(
        "--method",
        required=True,
        help=f"{', '.join(PROTOCOL_METHODS)}, or package.module:function for your own method (see the "
        "module docstring)",
    )
    parser.add_argument("--players", type=int, choices=PROTOCOL_PLAYERS, required=True)
    parser.add_argument("--size", choices=sorted(PROTOCOLS), default="full")
    parser.add_argument("--out", default=None, help="a folder for the runs, evaluations and protocol.json")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the evaluation games")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("argument --workers: at least 1")
    try:
        if args.method not in PROTOCOL_METHODS:
            method_function(args.method)  # before any training
        run_protocol(args.method, args.players, args.size, args.out, args.workers)
    except MethodError as err:  # (a ValueError of the method's own training is its traceback)
        parser.error(f"argument --method: {err}")
    except FolderError as err:
        parser.error(f"argument --out: {err}")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["protocol"]:
        protocol_main(argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=65536, help="learner steps per configuration")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each random-play reference")
    parser.add_argument("--only", choices=sorted(CONFIGS), action="append", help="run only these")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu", help="trainers' device")
    parser.add_argument("--num-envs", type=int, default=64, help="games stepped together by the trainers")
    parser.add_argument("--env-workers", type=int, default=1, help="processes stepping the trainers' games")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: wall time; cpu: this process's CPU time (other programs on the machine do not count)",
    )
    args = parser.parse_args(argv)
    if args.clock == "cpu" and (args.env_workers > 1 or args.device != "cpu"):
        parser.error("--clock cpu needs --env-workers 1 and --device cpu: their time is not this process's")
    Clock.now = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.num_envs < 1 or args.env_workers < 1:
        parser.error("arguments --num-envs and --env-workers: at least 1")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            parser.error("argument --device: cuda, but no CUDA device is available here")
    if args.steps < 64 * args.num_envs:
        parser.error(f"argument --steps: at least {64 * args.num_envs} (a rollout: 64 steps of every game)")
    if args.seconds <= 0:
        parser.error("argument --seconds: must be positive")
    import platform

    import torch

    torch.set_num_threads(1)
    on_gpu = args.device != "cpu" and torch.cuda.is_available()  # auto: the GPU when there is one
    gpu = f"cuda ({torch.cuda.get_device_name()})" if on_gpu else "cpu"
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} (1 thread); "
        f"4 players, all ten contracts; {args.steps:,} learner steps per trainer; trainers on {gpu}, "
        f"{args.num_envs} games, {args.env_workers} process(es) stepping them; {args.clock} time",
        flush=True,
    )
    before = env_random_play(args.seconds)
    print(f"env() random play (AEC loop)      {before:9,.0f} steps/s", flush=True)
    venv = vector_random_play(args.seconds)
    print(f"vector_env(64) random play        {venv:9,.0f} steps/s  ({venv / before:.2f}x env())", flush=True)
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        network = saved_network(folder)
        hardware = {"device": args.device, "num_envs": args.num_envs, "env_workers": args.env_workers}
        for name in args.only or CONFIGS:
            asks = CONFIGS[name]["method"] in ("dagger", "sb3")
            if asks and args.env_workers > 1:
                print(f"{name:33s} skipped: it steps its games or asks in its own process", flush=True)
                continue
            rows[name] = row = trainer(name, CONFIGS[name], args.steps, network, hardware)
            teacher = f", the teacher {row['teacher']:4.0%}" if row["teacher"] else ""
            print(
                f"{name:33s} {row['steps_per_s']:9,.0f} learner steps/s"
                f"  | games {row['games']:4.0%}{teacher}, network while playing {row['network']:4.0%},"
                f" updates {row['update']:4.0%}",
                flush=True,
            )
    after = env_random_play(args.seconds)
    reference = (before + after) / 2
    print(f"env() random play again           {after:9,.0f} steps/s (mean {reference:,.0f})", flush=True)
    for name, row in rows.items():
        print(f"{name:33s} {row['steps_per_s'] / reference:6.1%} of env() random-play steps/s", flush=True)
    for name, row in rows.items():
        ppo = rows.get(name.replace("sb3_", "ppo_", 1)) if name.startswith("sb3_") else None
        if ppo is not None:
            share = row["steps_per_s"] / ppo["steps_per_s"]
            print(f"{name:33s} {share:6.1%} of ppo's learner steps/s on the same table", flush=True)


if __name__ == "__main__":
    main()
