"""The learner against bots: ``shanghai-evaluate``'s tournament and its own statistics (the
learner's game score minus each bot seat's, paired, 95% interval over rounds; below zero: ahead).
The columns of ``eval.csv``: docs/training.md, section "The run" (Evaluation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shanghai_env.agents.arena.stats import PairStats, Summary

ROUNDS = "rounds"  # the column that marks a row of this statistic (per seat, over rounds)


def seat_column(name: str, seat: int) -> str:
    """The column prefix of the ``seat``-th (1-based) seat of the evaluation bot ``name``."""
    base = name.replace(",", "_")
    return base if seat == 1 else f"{base}#{seat}"


def learner_pairs(summary: Summary) -> list[PairStats]:
    """The pairwise rows of the first player listed (the learner): one per other seat, in order."""
    me = summary.players[0].name
    return [pair for pair in summary.pairs if pair.a == me]


def evaluate(
    model: str,
    opponent: str,
    *,
    players: int,
    contracts: tuple[int, ...],
    games: int,
    seed: int,
    workers: int = 1,
) -> dict[str, Any]:
    """``model`` against ``players - 1`` seats of ``opponent``: ``seats``, the learner's paired
    difference to each bot seat (``diff``, ``low``, ``high``, ``label``: the arena's name for the
    seat); ``diff``, ``low``, ``high`` of the first seat again; ``score``, ``games``, ``rounds``:
    the figures ``shanghai-evaluate --players MODEL,OPPONENT,...`` reports for the same games."""
    from shanghai_env.agents.arena import tournament
    from shanghai_env.agents.arena.stats import summarize_tournament

    config = tournament.TournamentConfig(
        players=(model, *([opponent] * (players - 1))), games=games, seed=seed, contracts=contracts
    )
    results = tournament.run_tournament(config, workers=workers)
    tournament.forget_agents(config.players)
    summary = summarize_tournament(config, results)
    pairs = learner_pairs(summary)
    seats = [{"label": p.b, "diff": p.mean_diff, "low": p.ci95[0], "high": p.ci95[1]} for p in pairs]
    return {
        **{k: seats[0][k] for k in ("diff", "low", "high")},
        "seats": seats,
        "score": summary.players[0].mean_game_score,
        "games": float(summary.games),
        "rounds": float(summary.rounds),
    }


def evaluate_all(model: str, config: Any, workers: int = 1) -> dict[str, float]:
    """One row of eval.csv (docs/training.md says what each column is)."""
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
        for k, seat in enumerate(r["seats"], start=1):
            for key in ("diff", "low", "high"):
                row[f"{seat_column(bot, k)}_{key}"] = round(seat[key], 2)
        row[f"{seat_column(bot, 1)}_score"] = round(r["score"], 2)
        row["games"] = r["games"]
        row[ROUNDS] = r["rounds"]
    return row


def describe(row: dict[str, Any], opponents: Sequence[str]) -> str:
    """The seats' figures of an eval.csv row in words: ``greedy +1.2 [-3.0, +5.4], greedy#2 ...``
    (an interval of one round, which has none: ``[n/a: one round]``)."""
    shown = []
    for bot in opponents:
        seat = 1
        while f"{seat_column(bot, seat)}_diff" in row:
            name = seat_column(bot, seat)
            low, high = row[f"{name}_low"], row[f"{name}_high"]
            interval = f"[{low:+.1f}, {high:+.1f}]" if math.isfinite(low + high) else "[n/a: one round]"
            shown.append(f"{name} {row[f'{name}_diff']:+.1f} {interval}")
            seat += 1
    return ", ".join(shown)
