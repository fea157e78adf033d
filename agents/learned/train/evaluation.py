"""The learner against bots: ``shanghai-evaluate``'s tournament and its own statistics.

An evaluation against one bot is the tournament ``shanghai-evaluate --players LEARNER,BOT,...,BOT
--games G --seed S --contracts C`` plays (the learner, then ``players - 1`` seats of the bot;
duplicate deals, balanced seats), summarized by the arena's
:func:`~shanghai_env.agents.arena.stats.summarize`, the function that command calls. The figures
are that summary's pairwise rows of the learner: for each bot seat, the learner's game score
minus the seat's, paired game by game on the same decks, averaged per round of the seat design,
with a 95% Student-t interval over rounds (NaN on one round). For the same players, seed, games
and contracts they are the numbers ``shanghai-evaluate`` prints (and a benchmark task's score
line gives per reference seat). Below zero the learner scores fewer points than that seat
(better).

The columns of ``eval.csv``, for each evaluation bot ``NAME`` (its spec, commas as underscores):

- ``NAME_diff``, ``NAME_low``, ``NAME_high``: the learner minus the bot's first seat and its
  interval, the row *learner − NAME* of ``shanghai-evaluate``'s pairwise table; the curve draws it;
- ``NAME#2_diff``, ``NAME#2_low``, ``NAME#2_high``, ... ``NAME#k``: the bot's k-th seat as listed
  (the rows *learner − NAME#2*, ...: for a bot by name, the labels the arena gives its copies);
- ``NAME_score``: the learner's mean game score (the per-player table's);
- ``games`` (played: whole rounds) and ``rounds`` (the samples of the intervals).

The mean over a bot's seats is not given: no table of ``shanghai-evaluate`` holds it, nor its
interval. Rows written before this statistic (no ``rounds`` value) hold in ``NAME_diff`` the
learner minus the mean of the bot seats, averaged per deck set, with an interval over deck sets;
``shanghai-train plot`` draws those rows apart, marked as such.
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
    """The pairwise rows of the first player listed (the learner): one per other seat, in the
    order listed (as a task's score line takes them)."""
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
    """One row of eval.csv (the module's docstring says what each column is)."""
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
