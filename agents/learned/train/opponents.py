"""Who plays the seats the learner does not: bots, saved players, or nobody (self-play). With named
opponents the learner holds seat 0, they the others (one name fills them all).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

from shanghai_env.agents.learned.train.run import SELF, RunConfig
from shanghai_env.batched import BatchedEnv


def make_games(
    config: RunConfig, features: tuple[Callable[..., Any], int] | None = None, tables: tuple[int, ...] = ()
) -> BatchedEnv:
    """The run's batched games, with the run's rewards: in this process, or in ``env_workers``
    processes (the same games); with ``tables``, spread over those table sizes (any_table).
    ``features``: the function and size of the extra inputs the network reads (default: the
    facts block with ``--facts``, else none)."""
    options: dict[str, Any] = {
        "contracts": config.contracts,
        "encoding": config.encoding,
        "reward": config.reward,
    }
    if features is None and config.facts:
        from shanghai_env.agents.learned.nets.facts import FACTS_SIZE, facts_function

        features = (facts_function(config.facts_version), FACTS_SIZE)
    if features is not None:
        options.update(features=features[0], features_size=features[1])
    if tables:
        options["tables"] = tables
        options["players"] = {n: players_for(dataclasses.replace(config, players=n)) for n in tables}
    else:
        options.update(players=players_for(config), num_players=config.players)
    if tables or config.env_workers > 1:  # rows in blocks: at several table sizes, or in processes
        from shanghai_env.blocks import BlockVectorEnv

        return BlockVectorEnv(config.num_envs, workers=config.env_workers, **options)
    from shanghai_env.vector import VectorEnv

    return VectorEnv(config.num_envs, **options)


def players_for(config: RunConfig) -> list[Any]:
    """The ``players`` argument of the vector env for this run (None: the learner's seats)."""
    n = config.players
    if tuple(config.opponents) == (SELF,):
        return [None] * n
    names = list(config.opponents)
    if len(names) == 1:
        names = names * (n - 1)
    if len(names) != n - 1:
        raise ValueError(
            f"--opponents names one player for every other seat ({n - 1}) or one for all, got {len(names)}"
        )
    made: dict[str, Any] = {}  # one network object for all the seats it plays: one batch for all
    return [None, *(_entry(name, seat, made, config.encoding) for seat, name in enumerate(names, start=1))]


def check_encoding(agent: Any, spec: str, encoding: str) -> None:
    """ValueError when ``agent`` cannot read the run's decisions: in an ``any_table`` run, a player
    that reads the observation must be an any_table player (bots and scorers read the game)."""
    own = getattr(agent, "encoding", "table")
    if encoding != "table" and getattr(agent, "needs_observation", False) and own != encoding:
        raise ValueError(
            f"player {spec!r} reads the observation of encoding {own!r}, and this run's is {encoding!r}: "
            "seat bots, scorers or a player trained with the same --encoding"
        )


def _entry(spec: str, seat: int, made: dict[str, Any], encoding: str) -> Any:
    from shanghai_env.agents.registry import make_agent

    if spec == SELF:
        raise ValueError("'self' is the only opponent of self-play: --opponents self")
    if spec in made:
        return made[spec]
    agent = make_agent(spec, seed=seat)
    check_encoding(agent, spec, encoding)
    if hasattr(agent, "act_batch"):
        made[spec] = agent  # a network: one object decides its seats in every game
        return agent
    factory: Callable[[], Any] = partial(make_agent, spec)  # picklable: checkpoints keep the games
    return factory
