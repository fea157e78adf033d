"""``shanghai-train METHOD [options]`` (``python train.py`` is the same command).

Methods on the one loop (``train/loop.py``; batched games through :mod:`shanghai_env.vector`):

- ``ppo``: PPO on the env's observation and actions, self-play (``--opponents self``, the
  default) or against named players;
- ``dmc``: Deep Monte-Carlo (as in DouZero): a value for each legal move, Monte-Carlo targets;
- ``dagger``: behaviour cloning and DAgger of any player (``--teacher planner``, ``shanghai``, a
  saved player) into the same network, for ``ppo --init`` to go on from (RL after cloning);
- ``sb3``: Stable-Baselines3's MaskablePPO on the batched games' SB3 ``VecEnv`` (a ``.zip`` player);
- ``scorer``: expert iteration with rollout-valued decisions (the shipped ``shanghai`` players), a
  round a step; ``shanghai-train scorer gen|fit`` run its stages one at a time;
- ``rllib``: Ray RLlib multi-agent PPO (a PPO iteration a step), the route to a cluster;
- ``exit``: expert iteration over the learner's own search, by generations: games of the network
  in every seat, every close call measured by the search over it, the network fitted to that.

``shanghai-train plot RUN... --out curves.png`` draws several runs' learning curves in one picture.

``shanghai-train demo`` (``python train.py`` with no arguments) is a short demonstration: ``ppo``
in contract 1 against three greedy bots, saying what it trains at the start and what came of it.
Every option is checked before anything starts: a bad one prints one line and exits with 2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import shlex
import sys
from collections.abc import Sequence

from shanghai_env.blocks import table_sizes
from shanghai_env.cli import Parser, extra_hint, output_file_problem, plain, prepare_output, require_extra
from shanghai_env.cli import run as run_cli

METHODS = ("ppo", "dmc", "dagger", "sb3", "scorer", "rllib", "exit")
# scratch_contract1's recipe, shorter: the facts of the own hand and the move network took ppo past
# the greedy bots within a million decisions on every seed tried (docs/training.md); without them
# 600,000 decisions ended 23 points a deal behind the bots
DEMO = [
    "ppo", "--contracts", "1", "--opponents", "greedy", "--facts", "--move-net", "128",
    "--timesteps", "1000000", "--eval-every", "250000", "--eval-games", "200", "--eval-opponents", "greedy",
    "--out", "runs/demo",
]  # fmt: skip
# what the demo's closing lines suggest (the README's commands after the demo are the same): an
# evaluation on fresh deals (seed 5; the trainer's are seed 10,000's) with an interval about half
# as wide as the trainer's 216 games, and a game of one's own against the player
DEMO_EVALUATION = (
    "python evaluate.py --players runs/demo/model.pt,greedy,greedy,greedy --contracts 1 --games 1000 --seed 5"
)
DEMO_PLAY = "shanghai-play --opponents runs/demo/model.pt,greedy,greedy --contracts 1"


def build_parser(method: str) -> argparse.ArgumentParser:
    from shanghai_env.agents.learned.train.methods import method_class
    from shanghai_env.agents.learned.train.options import add_options
    from shanghai_env.agents.learned.train.run import RunConfig

    p = Parser(
        prog=f"shanghai-train {method}",
        description=f"Train a Shanghai Rummy player with {method} on batched games (docs/training.md).",
    )
    add_options(p.add_argument_group("the run (every method)"), RunConfig, declared_only=True)
    add_options(p.add_argument_group(f"{method} options"), method_class(method).Options)
    # the run folder is named for the method; rllib's run_defaults: --reward deal
    p.set_defaults(out=f"runs/{method}", **getattr(method_class(method), "run_defaults", {}))
    return p


def main_loop(method: str, argv: Sequence[str]) -> int:
    from shanghai_env.agents.learned.train.methods import method_class
    from shanghai_env.agents.learned.train.run import RunConfig

    parser = build_parser(method)
    args = parser.parse_args(argv)
    for role in ("self", "snapshot"):
        if role in args.eval_opponents:
            what = "the learner is evaluated against bots or saved players"
            parser.error(f"argument --eval-opponents: {what}, not '{role}'")
    pool = method == "rllib"  # its --opponents: what each other seat may be, drawn per seat and game
    if "snapshot" in args.opponents and not pool:
        parser.error("argument --opponents: 'snapshot' (a frozen copy of the learner) plays in rllib only")
    if method == "exit" and args.opponents != ("self",):
        parser.error("argument --opponents: exit plays its network in every seat (self, the default)")
    if not pool and "self" in args.opponents and len(args.opponents) > 1:
        parser.error("argument --opponents: 'self' stands alone (every seat the learner)")
    if not pool and args.opponents != ("self",) and len(args.opponents) not in (1, args.players - 1):
        parser.error(f"argument --opponents: name one player or {args.players - 1}, one for each other seat")
    if getattr(args, "teacher", None) == "":
        parser.error("argument --teacher: name the player to imitate, e.g. planner or shanghai")
    if args.encoding != "table" and method not in ("ppo", "dmc", "dagger", "exit"):
        parser.error(
            f"argument --encoding: {args.encoding} trains with ppo, dmc, dagger or exit, not {method}"
        )
    tables = getattr(args, "tables", ())
    if tables and args.encoding != "any_table":
        parser.error("argument --tables: games at several table sizes need --encoding any_table")
    try:
        if tables:
            table_sizes(tables)
    except ValueError as err:
        parser.error(f"argument --tables: {err}")
    if tables and args.opponents != ("self",) and len(args.opponents) > 1:
        parser.error("argument --opponents: with --tables name one player, who fills every other seat")
    if method == "dagger" and args.env_workers > 1:
        parser.error(f"argument --env-workers: {method} reads its games in this process; use 1")
    made = not os.path.exists(args.out)  # a refused run leaves no folder it made
    problem = prepare_output(args.out, ("model.pt", "model.json", "checkpoint.pt"))
    if problem:
        parser.error(f"argument --out: {problem}")
    option_names = [f.name for f in dataclasses.fields(method_class(method).Options)]
    # every run option's flag has the field's name; sequences become tuples, the folder normal
    fields = dataclasses.fields(RunConfig)
    run_options = {f.name: getattr(args, f.name) for f in fields if hasattr(args, f.name)}
    run_options.update({k: tuple(run_options[k]) for k in ("contracts", "opponents", "eval_opponents")})
    config = RunConfig(
        method=method,
        **{**run_options, "out": os.path.normpath(args.out)},
        method_options={k: getattr(args, k) for k in option_names},
    )
    from shanghai_env.agents.learned.train.loop import train

    try:
        train(config, command="shanghai-train " + " ".join([method, *argv]))
    except ValueError as err:  # a run folder with other options, no CUDA device, ...
        if made:
            with contextlib.suppress(OSError):
                os.rmdir(args.out)  # only when empty: nothing was written
        parser.error(str(err))
    return 0


def demo() -> int:
    """``python train.py``: 15 to 20 minutes of ppo against greedy bots, said in plain words."""
    print(
        "Training a 4-player player from scratch with PPO, in contract 1 only, against three greedy bots\n"
        "(1,000,000 of its decisions, 15 to 20 minutes on two cores; the network also reads the\n"
        "exact facts of its hand, such as how far it is from the contract). Scores are points left in\n"
        "hand: lower is better. Each evaluation plays 216 duplicate games against three greedy bots and\n"
        "prints the player's game score minus each bot's: below zero it is ahead of the bots, above zero\n"
        "behind them.",
        flush=True,
    )
    from shanghai_env.agents.learned.train.evaluation import describe, seat_column

    main_loop("ppo", DEMO[1:])
    with open(os.path.join("runs", "demo", "model.json"), encoding="utf-8") as f:
        result = json.load(f)["evaluation"]
    # the player minus each greedy seat, as shanghai-evaluate reports it (train/evaluation.py)
    seats = [seat_column("greedy", k) for k in range(1, 8) if f"{seat_column('greedy', k)}_diff" in result]
    ahead = sum(result[f"{s}_high"] < 0 for s in seats)
    behind = sum(result[f"{s}_low"] > 0 for s in seats)
    if not all(math.isfinite(result[f"{s}_low"] + result[f"{s}_high"]) for s in seats):
        verdict = "not separated from the greedy bots (one round of games gives no interval)"
    elif ahead == len(seats):
        verdict = "ahead of the greedy bots in every seat (each interval below zero)"
    elif behind == len(seats):
        verdict = "still behind the greedy bots in every seat (each interval above zero)"
    elif ahead == behind == 0:
        verdict = "not separated from the greedy bots (each interval holds zero)"
    else:
        verdict = f"against the greedy bots ahead of {ahead} seats, behind {behind}, not separated elsewhere"
    print(
        f"\nAfter training: the player's game score minus each greedy bot's, points a game with its 95% "
        f"interval: {describe(result, ['greedy'])}: {verdict}.\n"
        "The learning curve is runs/demo/curve.png (and eval.csv); the player is runs/demo/model.pt.\n"
        "Evaluate it on 1,000 duplicate games of fresh deals, to confirm the verdict or temper it (its\n"
        "intervals less than half as wide as those of the training's 216 games; 1-2 minutes on two cores):\n"
        f"  {DEMO_EVALUATION}\n"
        "Play it yourself in the terminal game, against it and two greedy bots:\n"
        f"  {DEMO_PLAY}\n"
        "Train longer: the same run with a larger --timesteps resumes from its checkpoint:\n"
        f"  {longer_demo_command()}",
        flush=True,
    )
    return 0


def longer_demo_command(timesteps: int = 4_000_000) -> str:
    """The command that goes on with the demo's run folder to ``timesteps`` decisions."""
    argv = list(DEMO)
    argv[argv.index("--timesteps") + 1] = str(timesteps)
    return shlex.join(["python", "train.py", *argv])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        methods = ", ".join(METHODS)
        print(
            f"shanghai-train: name a method ({methods}), or 'demo' for a 15-20 minute demonstration; "
            "shanghai-train --help says more",
            file=sys.stderr,
        )
        return 2
    first = argv[0]
    if first in ("-h", "--help"):
        print(plain(__doc__))
        print(
            "\nusage: shanghai-train METHOD [options]; shanghai-train METHOD --help lists a method's options"
        )
        return 0
    if first == "demo" and len(argv) == 1:
        return demo()
    if first.startswith("-"):
        methods = ", ".join(METHODS)
        print(f"shanghai-train: name a method before the options; methods: {methods}", file=sys.stderr)
        return 2
    if first == "plot":
        return plot_runs(argv[1:])
    if first not in METHODS:
        print(f"shanghai-train: unknown method {first!r}; methods: {', '.join(METHODS)}", file=sys.stderr)
        return 2
    if first == "scorer" and argv[1:2] and not argv[1].startswith("-"):  # a stage: gen or fit
        from shanghai_env.agents.learned.train.methods import scorer as scorer_train

        return scorer_train.tool_main(argv[1:])
    if first == "rllib" and not _rllib_installed():
        return 2
    return main_loop(first, argv[1:])


def plot_runs(argv: Sequence[str]) -> int:
    """``shanghai-train plot RUN... --out PNG``: the learning curves of several runs in one picture."""
    from shanghai_env.agents.learned.train.run import plot_curve

    p = Parser(prog="shanghai-train plot", description=plain(plot_runs.__doc__))
    p.add_argument("runs", nargs="+", help="run folders (each with its eval.csv)")
    p.add_argument("--out", required=True, help="the picture to write (.png)")
    p.add_argument("--title", default="", help="the picture's title")
    args = p.parse_args(argv)
    missing = [r for r in args.runs if not os.path.isfile(os.path.join(r, "eval.csv"))]
    if missing:
        p.error(f"no eval.csv in {', '.join(missing)}: name run folders of shanghai-train")
    if not args.out.endswith(".png"):
        p.error(f"argument --out: a .png file, got {args.out!r}")
    problem = output_file_problem(args.out)
    if problem:
        p.error(f"argument --out: {problem}")
    tables = _tables(args.runs)
    if len(set(tables.values())) > 1:
        shown = "; ".join(f"{run}: {table}" for run, table in tables.items())
        p.error(f"the runs play different tables ({shown}): plot each table's runs apart")
    try:  # (it makes the picture's folder once the curves are read)
        plot_curve([os.path.join(r, "eval.csv") for r in args.runs], args.out, args.title)
    except ValueError as err:  # an eval.csv that cannot be read, or with no complete row
        p.error(str(err))
    print(f"wrote {args.out}")
    return 0


def _tables(runs: Sequence[str]) -> dict[str, str]:
    """The table (players, contracts) each run played, from its config.json (runs without one:
    left out), in words: curves of different tables are no comparison."""
    out: dict[str, str] = {}
    for run in runs:
        try:
            with open(os.path.join(run, "config.json"), encoding="utf-8") as f:
                config = json.load(f)
            players, contracts = int(config["players"]), ",".join(map(str, config["contracts"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        out[run] = f"{players} players, contracts {contracts}"
    return out


def _rllib_installed() -> bool:
    """Whether rllib's packages import (Ray RLlib, and sb3-contrib for its player); if not, one line
    naming the extra (exit 2 from require_extra, or False here), before Ray starts."""
    require_extra("shanghai-train rllib", "rllib")
    try:  # the method's module imports Ray RLlib as it loads
        from shanghai_env.agents.learned.train.methods import rllib  # noqa: F401
    except ModuleNotFoundError as err:  # Ray without RLlib's own dependencies
        print(
            f"shanghai-train rllib needs the 'rllib' extra (importing RLlib: {err}): {extra_hint('rllib')}",
            file=sys.stderr,
        )
        return False
    return True


def cli(bare: Sequence[str] = ()) -> None:
    """The ``shanghai-train`` command; ``bare``: what it runs when given no arguments
    (``python train.py``: the demonstration)."""
    require_extra("shanghai-train", "train")
    run_cli(lambda: main(sys.argv[1:] or list(bare)))


if __name__ == "__main__":
    cli()
