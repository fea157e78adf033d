"""The learner against bots, through the tournament (duplicate deals, balanced seats).

The figure is the paired difference of game scores: in every game the learner's total minus
the mean total of the bot seats, averaged over each deck set (a block: the same decks played with
the learner in every seat); its 95% interval is a Student-t interval over deck sets, which are
independent. Below zero the learner scores fewer points than the bots (better).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def evaluate(
    model: str,
    opponent: str,
    *,
    players: int,
    contracts: tuple[int, ...],
    games: int,
    seed: int,
    workers: int = 1,
) -> dict[str, float]:
    """``model`` against ``players - 1`` seats of ``opponent``: paired difference with its interval."""
    from shanghai_env.agents.arena import tournament
    from shanghai_env.agents.arena.stats import t_interval

    config = tournament.TournamentConfig(
        players=(model, *([opponent] * (players - 1))), games=games, seed=seed, contracts=contracts
    )
    results = tournament.run_tournament(config, workers=workers)
    tournament.forget_agents(config.players)
    me = config.players.index(model)
    by_block: dict[int, list[float]] = {}
    for g in results:
        others = [s for i, s in enumerate(g.scores) if i != me]
        by_block.setdefault(g.block, []).append(g.scores[me] - float(np.mean(others)))
    diffs = [float(np.mean(v)) for _, v in sorted(by_block.items())]
    mean, (low, high) = t_interval(diffs) if len(diffs) > 1 else (diffs[0], [float("nan")] * 2)
    score = float(np.mean([g.scores[me] for g in results]))
    return {"diff": mean, "low": low, "high": high, "score": score, "games": float(len(results))}


def evaluate_all(model: str, config: Any, workers: int = 1) -> dict[str, float]:
    """One row of eval.csv: ``<bot>_diff``, ``_low``, ``_high``, ``_score`` for each evaluation bot."""
    row: dict[str, float] = {}
    for bot in config.eval_opponents:
        r = evaluate(
            model,
            bot,
            players=config.players,
            contracts=config.contracts,
            games=config.eval_games,
            seed=config.eval_seed,
            workers=workers,
        )
        name = bot.replace(",", "_")
        for k in ("diff", "low", "high", "score"):
            row[f"{name}_{k}"] = round(r[k], 2)
        row["games"] = r["games"]
    return row
