"""``shanghai-train``: a MaskablePPO player for Shanghai Rummy.

A thin command line over :mod:`shanghai_env.agents.learned.training`.

The default is a short demonstration (a few minutes on two cores) against the greedy bot in
contract 1; it prints evaluation numbers as it learns::

    python train.py

The recipe behind the shipped model, and everything about the options, is in docs/training.md.
The trained model plays in tournaments like any bot::

    python evaluate.py --players runs/demo/model.zip,greedy,greedy,greedy --contracts 1

Every option is checked before anything is built (models named are opened and checked against
the table, factories called, the output folder created): a bad one exits with status 2 and one
line saying what is wrong and what is allowed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from shanghai_env.agents.registry import check_player, check_spec, contracts_arg
from shanghai_env.cli import given, int_in, number_in, options_once, prepare_output, require_extra, run

SELF = "self"  # the self-play opponent (shanghai_env.agents.learned.training.SELF; that module loads torch)
PRETRAIN_OPTIONS = ("pretrain_steps", "pretrain_epochs", "pretrain_lr", "dagger_rounds", "dagger_epochs")
POOL_OPTIONS = ("snapshot_every", "pool_size")


def _names(text: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one player")
    for n in names:
        if n != SELF:
            try:
                check_spec(n)
            except ValueError as err:
                raise argparse.ArgumentTypeError(f"{err} (or 'self' for self-play)") from None
    return names


def _bots(text: str) -> tuple[str, ...]:
    """Evaluation opponents: like ``--opponents`` without ``self``."""
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one player")
    if SELF in names:
        raise argparse.ArgumentTypeError("the model is evaluated against bots or models, not 'self'")
    try:
        return tuple(check_spec(n) for n in names)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _teacher(text: str) -> str:
    """The player to imitate: a bot, a model or module:factory (not ``self``); "" for none."""
    if not text:
        return ""
    if text.strip() == SELF:
        raise argparse.ArgumentTypeError("'self' has nothing to teach yet; name a bot, e.g. planner")
    try:
        return check_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _model_file(text: str) -> str:
    """An existing file (a saved model.zip; "" for none); its table is checked in check_args."""
    if not text:
        return ""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; name a saved model.zip")
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"no file {text!r}; name a saved model.zip")
    return text


def _ints(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive layer sizes, got {text!r}")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    from shanghai_env.agents.learned.training import (  # imported here: Ctrl-C while torch loads is quiet
        FEATURES,
        TrainConfig,
    )

    d = TrainConfig()
    p = argparse.ArgumentParser(prog="shanghai-train", description="Train MaskablePPO on Shanghai Rummy.")
    options_once(p)  # an option given twice is an error, not a silent override
    a = p.add_argument
    count = int_in(1)
    a(
        "--timesteps",
        type=int_in(0),
        default=d.timesteps,
        help="learner decisions to train for (0: clone only)",
    )
    a("--n-envs", type=count, default=d.n_envs, help="parallel environments")
    a("--vec-env", choices=("subproc", "dummy"), default=d.vec_env, help="one process per env, or one in all")
    a(
        "--opponents",
        type=_names,
        default=d.opponents,
        help="comma-separated opponent names, drawn per seat and episode: bot names (random, greedy, "
        "planner), model paths (.zip), 'self' (a pool of the learner's past snapshots)",
    )
    a("--contracts", type=contracts_arg, default=d.contracts, help="contracts of one episode, e.g. 1 or 1,2")
    a("--players", type=int_in(3, 8), default=d.num_players, help="players at the table (3-8)")
    a("--reward", choices=("deal", "win"), default=d.reward, help="the AEC env's reward mode")
    a(
        "--shaping",
        type=number_in(0),
        default=d.shaping,
        help="distance-to-contract potential coefficient; 0: off",
    )
    a(
        "--pretrain",
        type=_teacher,
        default=d.pretrain,
        help="a bot to imitate before PPO (behaviour cloning), e.g. planner",
    )
    a("--pretrain-steps", type=count, default=d.pretrain_steps, help="teacher decisions to record")
    a("--pretrain-epochs", type=count, default=d.pretrain_epochs)
    positive = number_in(0, low_open=True)
    a("--pretrain-lr", type=positive, default=d.pretrain_lr, help="peak learning rate of the cloning")
    a(
        "--dagger-rounds",
        type=int_in(0),
        default=d.dagger_rounds,
        help="after cloning: rounds of the clone playing, the teacher labelling",
    )
    a(
        "--dagger-epochs",
        type=int_in(0),
        default=d.dagger_epochs,
        help="epochs per DAgger refit (0: as cloning)",
    )
    a(
        "--init",
        type=_model_file,
        default=d.init,
        help="start PPO from this saved model.zip instead of a fresh network",
    )
    a("--seed", type=int_in(0, 2**31 - 1), default=d.seed)
    a("--out", default=d.out, help="output folder")
    a("--lr", type=positive, default=d.learning_rate, help="learning rate")
    a("--n-steps", type=count, default=d.n_steps, help="rollout steps per env and update")
    a("--batch-size", type=int_in(2), default=d.batch_size, help="minibatch size (at most n-steps x n-envs)")
    a("--n-epochs", type=count, default=d.n_epochs)
    a("--gamma", type=number_in(0, 1), default=d.gamma)
    a("--ent-coef", type=number_in(0), default=d.ent_coef)
    a("--net-arch", type=_ints, default=d.net_arch, help="hidden layer sizes of policy and value nets")
    a(
        "--features",
        choices=FEATURES,
        default=d.features,
        help="the policy: per-card rummy features or the older card counts before an MLP, or 'structured' "
        "(per-card and per-meld embeddings scoring each action; width = --net-arch's first size); "
        "docs/training.md",
    )
    a(
        "--max-moves-per-deal",
        type=count,
        default=d.max_moves_per_deal,
        help="end a deal after this many moves",
    )
    a("--eval-every", type=count, default=d.eval_every, help="steps between evaluations")
    a("--eval-games", type=count, default=d.eval_games, help="games per evaluation and bot")
    a("--eval-opponents", type=_bots, default=d.eval_opponents, help="bots to evaluate against")
    a("--checkpoint-every", type=count, default=d.checkpoint_every)
    a("--snapshot-every", type=count, default=d.snapshot_every, help="steps between self-play snapshots")
    a("--pool-size", type=count, default=d.pool_size, help="self-play snapshots kept")
    a(
        "--derived",
        action="store_true",
        help="add the derived inputs (hand analysis from the player's view, agents/learned/derived.py) "
        "to the observation; needs --features structured, or an --init model trained with them",
    )
    a(
        "--resume",
        action="store_true",
        help="continue the run in --out from its newest checkpoint (give the same options again)",
    )
    a("--no-progress", dest="progress", action="store_false", help="no progress bar")
    a("--verbose", type=int_in(0, 2), default=d.verbose, help="SB3 verbosity (1 prints PPO's tables)")
    return p


def _option(dest: str) -> str:
    return "--" + {"learning_rate": "lr", "num_players": "players"}.get(dest, dest).replace("_", "-")


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """What one option alone cannot tell: contradictions, models for another table, factories
    that fail, an output folder that cannot be written. Exits with a usage error."""
    from shanghai_env.rules import Rules

    seen = given(args)
    if args.derived and args.features != "structured" and not args.init:
        parser.error("--derived: the derived inputs are read by --features structured only")
    if args.init and args.pretrain:
        parser.error("--init and --pretrain: start from a saved model or from cloning a bot, not both")
    if args.init:
        for dest in ("net_arch", "features"):
            if dest in seen:
                parser.error(f"{_option(dest)}: the network of --init comes from its file; leave it out")
    if not args.pretrain:
        for dest in PRETRAIN_OPTIONS:
            if dest in seen:
                parser.error(f"{_option(dest)} applies only with --pretrain BOT (behaviour cloning)")
    if "dagger_epochs" in seen and args.dagger_rounds == 0:
        parser.error("--dagger-epochs applies only with --dagger-rounds 1 or more")
    if SELF not in args.opponents:
        for dest in POOL_OPTIONS:
            if dest in seen:
                parser.error(f"{_option(dest)} applies only with 'self' among --opponents (self-play)")
    if args.timesteps == 0 and not (args.pretrain or args.init):
        parser.error("--timesteps 0 trains nothing: give --pretrain BOT to clone a bot only, or more steps")
    rollout = args.n_steps * args.n_envs
    if args.timesteps > 0 and rollout < 2:
        parser.error("--n-steps x --n-envs must be at least 2 (PPO normalises advantages over a rollout)")
    if args.timesteps > 0 and args.batch_size > rollout:
        parser.error(
            f"--batch-size {args.batch_size} is more than a rollout: --n-steps {args.n_steps} x "
            f"--n-envs {args.n_envs} = {rollout} decisions; use a batch of 2..{rollout}"
        )
    rules = Rules(num_players=args.players, contracts=args.contracts)
    named = {"opponents": args.opponents, "eval_opponents": args.eval_opponents}
    named["pretrain"] = (args.pretrain,) if args.pretrain else ()
    named["init"] = (args.init,) if args.init else ()
    for dest, specs in named.items():
        for spec in dict.fromkeys(specs):
            if spec == SELF:
                continue
            try:
                check_player(spec, rules, where="the training table")
            except ValueError as err:
                parser.error(f"argument {_option(dest)}: {err}")
    problem = prepare_output(args.out, ("model.zip", "model.json", "best_model.zip", "eval.csv"))
    if problem:
        parser.error(f"argument --out: {problem}")


def main(argv: Sequence[str] | None = None) -> Any:
    from shanghai_env.agents.learned.training import TrainConfig, train

    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    config = TrainConfig(
        timesteps=args.timesteps,
        n_envs=args.n_envs,
        vec_env=args.vec_env,
        opponents=args.opponents,
        contracts=args.contracts,
        num_players=args.players,
        reward=args.reward,
        shaping=args.shaping,
        pretrain=args.pretrain,
        pretrain_steps=args.pretrain_steps,
        pretrain_epochs=args.pretrain_epochs,
        pretrain_lr=args.pretrain_lr,
        dagger_rounds=args.dagger_rounds,
        dagger_epochs=args.dagger_epochs,
        init=args.init,
        seed=args.seed,
        out=args.out,
        learning_rate=args.lr,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        net_arch=args.net_arch,
        features=args.features,
        max_moves_per_deal=args.max_moves_per_deal,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
        eval_opponents=args.eval_opponents,
        checkpoint_every=args.checkpoint_every,
        snapshot_every=args.snapshot_every,
        pool_size=args.pool_size,
        progress=args.progress,
        verbose=args.verbose,
        resume=args.resume,
        derived=args.derived,
    )
    model = train(config)
    print(f"saved {os.path.join(config.out, 'model.zip')} and model.json; try:")
    seats = ",".join(["planner"] * (config.num_players - 1))
    print(
        f"  python evaluate.py --players {os.path.join(config.out, 'model.zip')},{seats} "
        f"--contracts {','.join(map(str, config.contracts))}"
    )
    return model


def cli() -> None:
    """The ``shanghai-train`` command."""
    require_extra("shanghai-train", "train")
    run(main)


if __name__ == "__main__":
    cli()
