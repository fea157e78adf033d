"""``shanghai-train METHOD [options]`` (``python train.py`` is the same command).

Methods on the one loop (:mod:`.loop`; batched self-play through :mod:`shanghai_env.vector`):

- ``ppo``: PPO on the env's observation and actions, self-play (``--opponents self``, the
  default) or against named players;
- ``dmc``: Deep Monte-Carlo (as in DouZero): a value for each legal move, Monte-Carlo targets;
- ``dagger``: behaviour cloning and DAgger of any player (``--teacher planner``, ``shanghai``, a
  saved player) into the same network, for ``ppo --init`` to go on from (RL after cloning);
- ``sb3``: Stable-Baselines3's MaskablePPO on the Gymnasium single-agent view (a ``.zip`` player);
- ``scorer``: expert iteration with rollout-valued decisions (the shipped ``shanghai`` players), a
  round a step; ``shanghai-train scorer gen|fit`` run its stages one at a time;
- ``rllib``: Ray RLlib multi-agent PPO (a PPO iteration a step), the route to a cluster.

``shanghai-train plot RUN... --out curves.png`` draws several runs' learning curves in one picture.

``python train.py`` with no arguments is a short demonstration: ``ppo`` in contract 1 against
three greedy bots, saying what it trains at the start and what came of it at the end.
Every option is checked before anything starts: a bad one prints one line and exits with 2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from shanghai_env.any_table import ENCODINGS
from shanghai_env.cli import (
    Parser,
    extra_hint,
    int_in,
    number_in,
    output_file_problem,
    positive_ints,
    prepare_output,
    require_extra,
)
from shanghai_env.cli import run as run_cli
from shanghai_env.mixed_tables import table_sizes

METHODS = ("ppo", "dmc", "dagger", "sb3", "scorer", "rllib")
SCORER_TOOLS = ("gen", "fit")  # the scorer's stages, one at a time
# scratch_contract1's recipe, shorter: the facts of the own hand and the move network took ppo past
# the greedy bots within a million decisions on every seed tried (docs/training.md); without them
# 600,000 decisions ended 23 points a deal behind the bots
DEMO = [
    "ppo", "--contracts", "1", "--opponents", "greedy", "--facts", "--move-net", "128",
    "--timesteps", "1000000", "--eval-every", "250000", "--eval-games", "200", "--eval-opponents", "greedy",
    "--out", "runs/demo",
]  # fmt: skip


# (low, high, low excluded) of the methods' real-valued options; others are >= 0
FLOAT_BOUNDS: dict[str, tuple[float, float | None, bool]] = {
    "lr": (0.0, None, True),
    "gamma": (0.0, 1.0, False),
    "gae_lambda": (0.0, 1.0, False),
    "td_lambda": (0.0, 1.0, False),
    "epsilon": (0.0, 1.0, False),
    "beta": (0.0, 1.0, False),
    "clip": (0.0, None, True),
    "max_grad_norm": (0.0, None, True),
}


def _players_list(text: str) -> tuple[str, ...]:
    from shanghai_env.agents.registry import check_spec

    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one player")
    for n in names:
        if n not in ("self", "snapshot"):  # (snapshot: rllib's frozen copies, checked in main_loop)
            try:
                check_spec(n)
            except ValueError as err:
                raise argparse.ArgumentTypeError(str(err)) from None
    return names


def _player_name(text: str) -> str:
    from shanghai_env.agents.registry import check_spec

    if text == "":  # the option's default (argparse converts string defaults too): none named
        return text
    try:
        check_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _init_arg(text: str) -> str:
    """A saved network to start from: a shipped model's name or a file (.pt, MaskablePPO .zip, .scorer)."""
    from shanghai_env.agents.registry import check_spec

    if text == "":  # the default (argparse passes a string default through the type too): fresh
        return ""
    try:
        path = check_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if not path.endswith((".pt", ".zip", ".scorer")) or not os.path.isfile(path):
        raise argparse.ArgumentTypeError(
            f"{text!r} is no saved network (.pt of shanghai-train, .zip of sb3, or .scorer)"
        )
    return path


def build_parser(method: str) -> argparse.ArgumentParser:
    from shanghai_env.agents.learned.train.methods import method_class

    p = Parser(
        prog=f"shanghai-train {method}",
        description=f"Train a Shanghai Rummy player with {method} on batched games (docs/training.md).",
    )
    _run_options(p.add_argument_group("the run (every method)"), method)
    _method_options(p.add_argument_group(f"{method} options"), method_class(method).Options)
    p.set_defaults(**getattr(method_class(method), "run_defaults", {}))  # rllib: --reward deal
    return p


def _run_options(g: Any, method: str) -> None:
    """The options of every method's run (:class:`.run.RunConfig`)."""
    from shanghai_env.agents.learned.train.run import RunConfig
    from shanghai_env.agents.registry import contracts_arg

    defaults = RunConfig()
    g.add_argument("--players", type=int_in(3, 8), default=defaults.players, help="seats at the table (3-8)")
    g.add_argument(
        "--contracts",
        type=contracts_arg,
        default=defaults.contracts,
        help="e.g. 1 or 1,2,3 (default: all ten)",
    )
    g.add_argument(
        "--timesteps", type=int_in(1), default=defaults.timesteps, help="learner decisions to train on"
    )
    g.add_argument("--seed", type=int_in(0), default=defaults.seed)
    g.add_argument("--out", default=f"runs/{method}", help="the run folder (a stopped run resumes from it)")
    g.add_argument(
        "--num-envs", type=int_in(1, 4096), default=defaults.num_envs, help="games stepped together"
    )
    g.add_argument(
        "--env-workers",
        type=int_in(1, 256),
        default=defaults.env_workers,
        help="processes stepping the games (1: this one; the same games either way)",
    )
    g.add_argument(
        "--opponents",
        type=_players_list,
        default=defaults.opponents,
        help="'self' (every seat the learner) or the players of the other seats (one name: all)",
    )
    g.add_argument(
        "--facts",
        action="store_true",
        help="add the exact facts of the own hand (distance to the contract, outs, what each card is worth "
        "to it) to the network's input",
    )
    g.add_argument(
        "--encoding",
        choices=ENCODINGS,
        default=defaults.encoding,
        help="table: the env's observation and actions (default); any_table (ppo, dmc, dagger): the 8-seat "
        "layout, whose player plays every table size, 3 to 8 players",
    )
    g.add_argument(
        "--init",
        type=_init_arg,
        default=defaults.init,
        help="start from this player's network: a .pt of shanghai-train, or (ppo, sb3) a MaskablePPO "
        ".zip of shanghai-train sb3",
    )
    g.add_argument(
        "--reward",
        choices=("relative", "deal"),
        default=defaults.reward,
        help="relative: -deal score/100 minus the table's mean (default); deal: the env's reward",
    )
    _bookkeeping_options(g, defaults)


def _bookkeeping_options(g: Any, defaults: Any) -> None:
    """The run options that say when to evaluate and save, and what it runs on."""
    g.add_argument(
        "--eval-every",
        type=int_in(0),
        default=defaults.eval_every,
        help="env steps between evaluations (0: at the end only)",
    )
    g.add_argument(
        "--eval-games",
        type=int_in(0),
        default=defaults.eval_games,
        help="duplicate games per evaluation bot (0: none)",
    )
    g.add_argument("--eval-opponents", type=_players_list, default=defaults.eval_opponents)
    g.add_argument("--eval-seed", type=int_in(0), default=defaults.eval_seed)
    g.add_argument("--checkpoint-every", type=int_in(1), default=defaults.checkpoint_every)
    g.add_argument(
        "--keep-players",
        action="store_true",
        help="keep every evaluated player as players/model_STEPS.pt (default: the latest only, model.pt)",
    )
    g.add_argument("--device", choices=("auto", "cpu", "cuda"), default=defaults.device)
    g.add_argument(
        "--threads", type=int_in(1, 256), default=defaults.threads, help="torch threads (default 1)"
    )
    g.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar or messages")


def _method_options(h: Any, options: Any) -> None:
    """A method's own options, one per field of its ``Options``."""
    for f in dataclasses.fields(options):
        name = "--" + f.name.replace("_", "-")
        default = f.default
        if "type" in f.metadata:  # an option with a parser of its own (rllib's --address)
            h.add_argument(name, type=f.metadata["type"], default=default, help=f.metadata.get("help"))
        elif isinstance(default, tuple):
            h.add_argument(
                name,
                type=positive_ints,
                default=default,
                help=f"comma-separated (default {','.join(map(str, default)) or 'none'})",
            )
        elif isinstance(default, str):  # a player's name (dagger's teacher)
            kind_help = "a bot, a shipped model or a saved player"
            h.add_argument(name, type=_player_name, default=default, help=kind_help)
        elif isinstance(default, bool):
            h.add_argument(name, action=argparse.BooleanOptionalAction, default=default)
        elif isinstance(default, int):
            h.add_argument(name, type=int_in(1), default=default, help=f"(default {default})")
        else:
            low, high, low_open = FLOAT_BOUNDS.get(f.name, (0.0, None, False))
            kind = number_in(low, high, low_open=low_open)
            h.add_argument(name, type=kind, default=default, help=f"(default {default})")


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
    if not pool and "self" in args.opponents and len(args.opponents) > 1:
        parser.error("argument --opponents: 'self' stands alone (every seat the learner)")
    if not pool and args.opponents != ("self",) and len(args.opponents) not in (1, args.players - 1):
        parser.error(f"argument --opponents: name one player or {args.players - 1}, one for each other seat")
    if getattr(args, "teacher", None) == "":
        parser.error("argument --teacher: name the player to imitate, e.g. planner or shanghai")
    if args.encoding != "table" and method not in ("ppo", "dmc", "dagger"):
        parser.error(f"argument --encoding: {args.encoding} trains with ppo, dmc or dagger, not {method}")
    tables = getattr(args, "tables", ())
    if tables and (args.encoding != "any_table" or args.env_workers > 1):
        parser.error(
            "argument --tables: games at several table sizes need --encoding any_table and --env-workers 1"
        )
    try:
        if tables:
            table_sizes(tables)
    except ValueError as err:
        parser.error(f"argument --tables: {err}")
    if tables and args.opponents != ("self",) and len(args.opponents) > 1:
        parser.error("argument --opponents: with --tables name one player, who fills every other seat")
    if method == "dagger" and args.env_workers > 1:
        parser.error("argument --env-workers: dagger asks its teacher in this process; use 1")
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
    main_loop("ppo", DEMO[1:])
    with open(os.path.join("runs", "demo", "model.json"), encoding="utf-8") as f:
        result = json.load(f)["evaluation"]
    diff, low, high = result["greedy_diff"], result["greedy_low"], result["greedy_high"]
    if high < 0:
        verdict = "ahead of the greedy bots (the whole interval below zero)"
    elif low > 0:
        verdict = "still behind the greedy bots (the whole interval above zero)"
    else:
        verdict = "not separated from the greedy bots (the interval holds zero)"
    print(
        f"\nAfter training: the player's game score minus the greedy bots' is {diff:+.1f} points a game "
        f"[95% interval {low:+.1f}, {high:+.1f}]: {verdict}.\n"
        "The learning curve is runs/demo/curve.png (and eval.csv); the player is runs/demo/model.pt.\n"
        "Play it:\n"
        "  python evaluate.py --players runs/demo/model.pt,greedy,greedy,greedy --contracts 1 --games 96\n"
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
        return demo()
    first = argv[0]
    if first in ("-h", "--help"):
        print(__doc__.strip())
        print(
            "\nusage: shanghai-train METHOD [options]; shanghai-train METHOD --help lists a method's options"
        )
        return 0
    if first.startswith("-"):
        methods = ", ".join(METHODS)
        print(f"shanghai-train: name a method before the options; methods: {methods}", file=sys.stderr)
        return 2
    if first == "plot":
        return plot_runs(argv[1:])
    if first not in METHODS:
        print(f"shanghai-train: unknown method {first!r}; methods: {', '.join(METHODS)}", file=sys.stderr)
        return 2
    if first == "scorer" and argv[1:2] and argv[1] in SCORER_TOOLS:
        from shanghai_env.agents.learned.train.methods import scorer as scorer_train

        return scorer_train.tool_main(argv[1:])
    if first == "rllib" and not _rllib_installed():
        return 2
    return main_loop(first, argv[1:])


def plot_runs(argv: Sequence[str]) -> int:
    """``shanghai-train plot RUN... --out PNG``: the learning curves of several runs in one picture."""
    from shanghai_env.agents.learned.train.run import plot_curve

    p = Parser(prog="shanghai-train plot", description=plot_runs.__doc__)
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
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    plot_curve([os.path.join(r, "eval.csv") for r in args.runs], args.out, args.title)
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


def cli() -> None:
    """The ``shanghai-train`` command."""
    require_extra("shanghai-train", "train")
    run_cli(main)


if __name__ == "__main__":
    cli()
