"""One's own method on the training benchmark protocol (docs/benchmark.md, "Your own method").

The protocol calls a method's function once per seed, with keyword arguments, and evaluates the
player it returns as it evaluates ``ppo``'s::

    function(budget=1_000_000, seed=1, players=3, contracts=(1, ..., 10), out="FOLDER") -> str

From the repository's folder (a module of the current folder needs no ``PYTHONPATH``; ``--size
smoke`` checks the pipeline in a minute)::

    python benchmarks/training.py protocol --method examples.protocol_method:no_training --players 4
    python benchmarks/training.py protocol --method examples.protocol_method:dmc_facts --players 3

``no_training`` trains nothing and returns a bot: the row of a player that spends none of the
budget. ``dmc_facts`` is the shape of a real entry: its own trainer (here the project's ``dmc``
with the facts of the own hand and a move network, options the protocol's ``dmc`` row does
not use) on the table and contracts given, for the budget, saving its player in ``out``.
"""

from __future__ import annotations

import os


def no_training(budget: int, seed: int, players: int, contracts: tuple[int, ...], out: str) -> str:
    """The ``greedy`` bot, whatever the budget: what a method that learns nothing scores."""
    return "greedy"


def dmc_facts(budget: int, seed: int, players: int, contracts: tuple[int, ...], out: str) -> str:
    """``shanghai-train dmc --facts --move-net 128`` for ``budget`` learner decisions; the saved
    player's path."""
    from shanghai_env.agents.learned.train import loop
    from shanghai_env.agents.learned.train.run import RunConfig

    config = RunConfig(
        method="dmc",
        players=players,
        contracts=contracts,
        timesteps=budget,  # self-play: every seat's decision is a learner decision
        seed=seed,
        out=out,
        num_envs=64 if budget >= 100_000 else 4,  # a toy budget (--size smoke) fills a few games
        facts=True,
        method_options={"move_net": (128,)},
        eval_every=0,  # the protocol evaluates the player; no evaluation while training
        eval_games=0,
        progress=False,
    )
    loop.train(config)
    return os.path.join(out, "model.pt")
