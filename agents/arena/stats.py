"""Tournament statistics that respect the duplicate structure.

Games of one block share their decks, so they are not independent samples; and the seat
design (:mod:`shanghai_env.agents.arena.seating`) balances who sits where, and after whom, only
over a whole *round* of blocks. Every interval and test here is therefore computed over
*rounds*: a player's statistic is first averaged over each round's games (every seat, every
neighbour, every deck of the round), then a Student-t interval is taken over the round means.
Pairwise differences are formed game by game, so on the same deck from the same deal, and
averaged per round: a one-sample t-test on the per-round differences, with a Wilcoxon
signed-rank test beside it. Ratings come from
openskill's Plackett-Luce model, fed every game in schedule order with ranks by final score.

**Few rounds.** One round is one sample: it has no interval and no test, and the summary holds
NaN there (``null`` in ``summary.json``; the report prints n/a and how many games would give
one). Two rounds give a t interval on 1 degree of freedom, 12.7 standard errors wide each side:
the report says so. The Wilcoxon test on ``n`` rounds cannot give a two-sided p below
``2 / 2**n`` (every difference of one sign), 0.5 on two rounds: below six rounds it cannot reach
0.05, and its p-value is left out (NaN) rather than shown as if it could be evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from shanghai_env.agents.arena.tournament import GameResult, TournamentConfig, games_per_round


@dataclass
class PlayerStats:
    """One player's results (scores are points: lower is better)."""

    name: str
    spec: str
    games: int
    mean_game_score: float
    ci95: list[float]
    mean_deal_score: float
    deal_ci95: list[float]
    win_rate: float
    went_out_rate: float  # deals this player ended by going out
    blind_outs: int
    mean_deal_score_by_contract: dict[str, float]
    rating_mu: float = 0.0
    rating_sigma: float = 0.0
    rating_ordinal: float = 0.0
    pin: dict[str, Any] = field(default_factory=dict)  # what the player was (registry.player_pin)


@dataclass
class PairStats:
    """Two players compared over the same decks."""

    a: str
    b: str
    mean_diff: float  # a's mean game score minus b's (negative: a scores fewer points, better)
    ci95: list[float]  # NaN on one round
    p_value: float  # paired t-test over rounds; NaN on one round
    wilcoxon_p: float  # NaN below WILCOXON_MIN_ROUNDS rounds (it could not reach 0.05)
    blocks: int  # deck sets
    rounds: int  # the samples of the tests
    significant: bool


@dataclass
class Summary:
    """Everything ``summary.json`` holds."""

    players: list[PlayerStats]
    pairs: list[PairStats]
    games: int
    blocks: int  # deck sets
    rounds: int  # rounds of the seat design: the samples of the intervals
    duplicate: bool
    seed: int
    contracts: list[int]
    deals: int
    capped_deals: int
    mean_moves_per_game: float
    seconds: float = 0.0
    games_per_second: float = 0.0
    workers: int = 1
    command: str = ""
    seating: dict[str, Any] = field(default_factory=dict)  # the seat design (TournamentConfig.seating)
    interval_note: str = ""  # why there is no interval, or why it is so wide ("" when neither)
    wilcoxon_note: str = ""  # why there is no Wilcoxon p-value ("" when there is one)
    task: dict[str, Any] = field(default_factory=dict)  # the benchmark task played, and its score
    # the folder of its game records beside it (records, records-2, ...); None: none recorded
    records: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN becomes null, and so does an interval that could not be formed)."""
        return _clean(asdict(self))


WILCOXON_MIN_ROUNDS = 6  # 2 / 2**6 < 0.05 <= 2 / 2**5: fewer rounds cannot give a p below 0.05
_INTERVALS = {"ci95", "deal_ci95"}


def to_json_safe(obj: Any) -> Any:
    """``obj`` (plain dicts and lists) with NaN and infinities as None, an interval without
    bounds (``ci95``, ``deal_ci95``) as None: what ``json.dumps`` writes as valid JSON."""
    return _clean(obj)


def _clean(obj: Any) -> Any:
    """JSON-safe: NaN and infinities become None, an interval without bounds None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: None if k in _INTERVALS and _no_bounds(v) else _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _no_bounds(interval: object) -> bool:
    return isinstance(interval, (list, tuple)) and any(
        isinstance(x, float) and not math.isfinite(x) for x in interval
    )


def has_interval(interval: Sequence[float] | None) -> bool:
    """Whether ``interval`` has both bounds (one round gives NaN for both)."""
    return interval is not None and all(math.isfinite(x) for x in interval)


def t_interval(samples: Sequence[float] | np.ndarray) -> tuple[float, list[float]]:
    """(mean, [low, high]) 95% Student-t interval; a single sample has none: [NaN, NaN]."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, [math.nan, math.nan]
    half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, [mean - half, mean + half]


def paired_tests(diffs: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(t-test p, Wilcoxon p) that the mean per-block difference is zero; NaN for a single sample."""
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    if len(d) < 2:
        return math.nan, math.nan
    if not np.any(d):
        return 1.0, 1.0
    if np.all(d == d[0]):
        return 0.0, 0.0  # a constant non-zero difference: no variance, certainly not zero
    t_p = float(stats.ttest_1samp(d, 0.0).pvalue)
    try:
        w_p = float(stats.wilcoxon(d).pvalue)
    except ValueError:
        w_p = float("nan")
    return t_p, w_p


def summarize(
    results: Sequence[GameResult],
    labels: Sequence[str],
    specs: Sequence[str],
    *,
    duplicate: bool,
    seed: int,
    seating: Mapping[str, Any] | None = None,
) -> Summary:
    """Every statistic of a finished tournament (``results`` in schedule order); ``seating``
    says which seat design the games followed (kept in the summary as given)."""
    n = len(labels)
    rounds = games_per_round(results)
    round_ids = sorted(rounds)
    num_deals = len(results[0].deal_scores) if results else 0
    round_game = np.array(
        [[np.mean([g.scores[i] for g in rounds[k]]) for i in range(n)] for k in round_ids], dtype=float
    )
    round_deal = round_game / max(num_deals, 1)
    wins, outs, blind, by_contract = _tallies(results, n)
    games = len(results)
    ratings = _ratings(results, n)
    players = []
    for i in range(n):
        mean, ci = t_interval(round_game[:, i])
        dmean, dci = t_interval(round_deal[:, i])
        players.append(
            PlayerStats(
                name=labels[i],
                spec=specs[i],
                games=games,
                mean_game_score=mean,
                ci95=ci,
                mean_deal_score=dmean,
                deal_ci95=dci,
                win_rate=float(wins[i] / games) if games else 0.0,
                went_out_rate=float(outs[i] / (games * num_deals)) if games and num_deals else 0.0,
                blind_outs=int(blind[i]),
                mean_deal_score_by_contract={
                    str(c): float(np.mean(v)) for c, v in sorted(by_contract[i].items())
                },
                rating_mu=ratings[i][0],
                rating_sigma=ratings[i][1],
                rating_ordinal=ratings[i][0] - 3.0 * ratings[i][1],
            )
        )
    num_blocks = len({g.block for g in results})
    num_rounds = len(round_ids)
    pairs = _pairs(round_game, labels, num_blocks, num_rounds)
    per_round = int((seating or {}).get("games_per_round") or (len(rounds[round_ids[0]]) if round_ids else 0))
    interval_note = wilcoxon_note = ""
    if num_rounds == 1:
        interval_note = f"one round: at least {2 * per_round} games for an interval"
    elif num_rounds == 2:
        interval_note = "two rounds (1 degree of freedom): the intervals are very wide"
    if 1 < num_rounds < WILCOXON_MIN_ROUNDS:
        wilcoxon_note = f"{num_rounds} rounds: it cannot go below {2 / 2**num_rounds:g}"
    capped = sum(sum(g.capped) for g in results)
    return Summary(
        players=players,
        pairs=pairs,
        games=games,
        blocks=num_blocks,
        rounds=num_rounds,
        duplicate=duplicate,
        seed=seed,
        contracts=list(results[0].contracts) if results else [],
        deals=games * num_deals,
        capped_deals=int(capped),
        mean_moves_per_game=float(np.mean([g.moves for g in results])) if results else 0.0,
        seating=dict(seating or {}),
        interval_note=interval_note,
        wilcoxon_note=wilcoxon_note,
    )


def summarize_tournament(config: TournamentConfig, results: Sequence[GameResult]) -> Summary:
    """:func:`summarize` of the games of ``config`` (what ``shanghai-evaluate`` reports)."""
    return summarize(
        results,
        config.labels,
        config.players,
        duplicate=config.duplicate,
        seed=config.seed,
        seating=config.seating(),
    )


def _tallies(
    results: Sequence[GameResult], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[int, list[int]]]]:
    """Per player: wins (a tie shared), deals gone out, of them blind, and deal scores by contract."""
    wins = np.zeros(n)
    outs = np.zeros(n)
    blind = np.zeros(n, dtype=int)
    by_contract: list[dict[int, list[int]]] = [{} for _ in range(n)]
    for g in results:
        winners = g.winners
        for i in winners:
            wins[i] += 1.0 / len(winners)
        for d, row in enumerate(g.deal_scores):
            out = g.went_out[d]
            if out >= 0:
                outs[out] += 1
                blind[out] += int(g.blind[d])
            for i in range(n):
                by_contract[i].setdefault(g.contracts[d], []).append(row[i])
    return wins, outs, blind, by_contract


def _pairs(
    round_game: np.ndarray, labels: Sequence[str], num_blocks: int, num_rounds: int
) -> list[PairStats]:
    """Every pair of players: the mean difference of their round means, its interval and tests."""
    pairs = []
    for i, j in combinations(range(len(labels)), 2):
        # each game's difference is on one deck; a round's mean of them is a round mean difference
        diffs = round_game[:, i] - round_game[:, j]
        mean, ci = t_interval(diffs)
        t_p, w_p = paired_tests(diffs)
        if num_rounds < WILCOXON_MIN_ROUNDS:
            w_p = math.nan
        pairs.append(
            PairStats(labels[i], labels[j], mean, ci, t_p, w_p, num_blocks, num_rounds, bool(t_p < 0.05))
        )
    return pairs


def _ratings(results: Sequence[GameResult], n: int) -> list[tuple[float, float]]:
    """Plackett-Luce (mu, sigma) per player after every game in order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating(name=str(i)) for i in range(n)]
    for g in results:
        teams = model.rate([[r] for r in ratings], ranks=[float(s) for s in g.scores])
        ratings = [team[0] for team in teams]
    return [(float(r.mu), float(r.sigma)) for r in ratings]
