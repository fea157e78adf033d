"""Train a MaskablePPO agent for Shanghai Rummy (a thin command line over :mod:`agents.training`).

The default is a short demonstration (a few minutes on two cores) against the greedy bot in
contract 1; it prints evaluation numbers as it learns::

    python train.py

The recipe behind the shipped model, and everything about the options, is in docs/training.md.
The trained model plays in tournaments like any bot::

    python evaluate.py --players runs/demo/model.zip,greedy,greedy,greedy --contracts 1
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from agents.registry import check_spec, contracts_arg
from agents.training import FEATURES, SELF, TrainConfig, train


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


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    d = TrainConfig()
    p = argparse.ArgumentParser(prog="train.py", description="Train MaskablePPO on Shanghai Rummy.")
    a = p.add_argument
    a("--timesteps", type=int, default=d.timesteps, help="learner decisions to train for (0: clone only)")
    a("--n-envs", type=int, default=d.n_envs, help="parallel environments")
    a("--vec-env", choices=("subproc", "dummy"), default=d.vec_env, help="one process per env, or one in all")
    a(
        "--opponents",
        type=_names,
        default=d.opponents,
        help="comma-separated opponent names, drawn per seat and episode: bot names (random, greedy, "
        "planner), model paths (.zip), 'self' (a pool of the learner's past snapshots)",
    )
    a("--contracts", type=contracts_arg, default=d.contracts, help="contracts of one episode, e.g. 1 or 1,2")
    a("--players", type=int, default=d.num_players, help="players at the table (3-8)")
    a("--reward", choices=("deal", "win"), default=d.reward, help="the AEC env's reward mode")
    a("--shaping", type=float, default=d.shaping, help="distance-to-contract potential coefficient; 0: off")
    a("--pretrain", default=d.pretrain, help="a bot to imitate before PPO (behaviour cloning), e.g. planner")
    a("--pretrain-steps", type=int, default=d.pretrain_steps, help="teacher decisions to record")
    a("--pretrain-epochs", type=int, default=d.pretrain_epochs)
    a("--pretrain-lr", type=float, default=d.pretrain_lr, help="peak learning rate of the cloning")
    a(
        "--dagger-rounds",
        type=int,
        default=d.dagger_rounds,
        help="after cloning: rounds of the clone playing, the teacher labelling",
    )
    a("--dagger-epochs", type=int, default=d.dagger_epochs, help="epochs per DAgger refit (0: as cloning)")
    a("--init", default=d.init, help="start PPO from this saved model.zip instead of a fresh network")
    a("--seed", type=int, default=d.seed)
    a("--out", default=d.out, help="output folder")
    a("--lr", type=float, default=d.learning_rate, help="learning rate")
    a("--n-steps", type=int, default=d.n_steps, help="rollout steps per env and update")
    a("--batch-size", type=int, default=d.batch_size)
    a("--n-epochs", type=int, default=d.n_epochs)
    a("--gamma", type=float, default=d.gamma)
    a("--ent-coef", type=float, default=d.ent_coef)
    a("--net-arch", type=_ints, default=d.net_arch, help="hidden layer sizes of policy and value nets")
    a(
        "--features",
        choices=FEATURES,
        default=d.features,
        help="the policy's input: per-card rummy features, or the older card counts (docs/training.md)",
    )
    a("--max-moves-per-deal", type=int, default=d.max_moves_per_deal, help="end a deal after this many moves")
    a("--eval-every", type=int, default=d.eval_every, help="steps between evaluations")
    a("--eval-games", type=int, default=d.eval_games, help="games per evaluation and bot")
    a("--eval-opponents", type=_names, default=d.eval_opponents, help="bots to evaluate against")
    a("--checkpoint-every", type=int, default=d.checkpoint_every)
    a("--snapshot-every", type=int, default=d.snapshot_every, help="steps between self-play snapshots")
    a("--pool-size", type=int, default=d.pool_size, help="self-play snapshots kept")
    a("--no-progress", dest="progress", action="store_false", help="no progress bar")
    a("--verbose", type=int, default=d.verbose, help="SB3 verbosity (1 prints PPO's tables)")
    return p


def main(argv: Sequence[str] | None = None) -> Any:
    args = build_parser().parse_args(argv)
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
    )
    model = train(config)
    print(f"saved {os.path.join(config.out, 'model.zip')} and model.json; try:")
    print(
        f"  python evaluate.py --players {os.path.join(config.out, 'model.zip')},greedy,greedy,greedy "
        f"--contracts {','.join(map(str, config.contracts))}"
    )
    return model


if __name__ == "__main__":
    main()
