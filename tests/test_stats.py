"""The tournament statistics against values worked out by hand (agents/arena/stats.py).

Every expected number here comes from a closed form or a printed table, not from the library
the code itself calls: Student's t with 1 and 2 degrees of freedom has closed-form quantiles and
tail probabilities (Cauchy for 1; ``t / sqrt(2 + t^2)`` for 2), the 3- and 4-degree quantiles
are the textbook table values, and the exact Wilcoxon signed-rank p-values are counted from the
2^n equally likely sign patterns.
"""

from __future__ import annotations

import math

import pytest

from shanghai_env.agents.arena.stats import paired_tests, summarize, t_interval
from shanghai_env.agents.arena.tournament import GameResult

T975_DF1 = math.tan(math.pi * (0.975 - 0.5))  # 12.7062..., the Cauchy quantile
T975_DF2 = (2 * 0.975 - 1) / math.sqrt(2 * 0.975 * 0.025)  # 4.3027..., the df=2 closed form
T975_DF3 = 3.182446  # Student-t table
T975_DF4 = 2.776445


def p_two_sided_df1(t: float) -> float:
    return 1.0 - 2.0 / math.pi * math.atan(abs(t))


def p_two_sided_df2(t: float) -> float:
    return 1.0 - abs(t) / math.sqrt(2.0 + t * t)


def p_two_sided_df3(t: float) -> float:
    x = abs(t) / math.sqrt(3.0)
    cdf = 0.5 + (x / (1.0 + x * x) + math.atan(x)) / math.pi
    return 2.0 * (1.0 - cdf)


def sd(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


# --- (a) intervals: Student-t quantile times the standard error, s / sqrt(n) -------------------


def test_the_df_closed_forms_are_the_table_values() -> None:
    assert abs(T975_DF1 - 12.7062) < 1e-4
    assert abs(T975_DF2 - 4.3027) < 1e-4


@pytest.mark.parametrize(
    ("samples", "t975"),
    [
        ([0.0, 2.0], T975_DF1),
        ([1.0, 2.0, 6.0], T975_DF2),
        ([10.0, 12.0, 9.0, 15.0], T975_DF3),
        ([1.0, 2.0, 3.0, 4.0, 5.0], T975_DF4),
    ],
)
def test_interval_half_width_is_t_times_s_over_root_n(samples: list[float], t975: float) -> None:
    mean, (low, high) = t_interval(samples)
    n = len(samples)
    half = t975 * sd(samples) / math.sqrt(n)
    assert mean == pytest.approx(sum(samples) / n)
    assert low == pytest.approx(mean - half, rel=1e-5)
    assert high == pytest.approx(mean + half, rel=1e-5)


def test_interval_by_hand_for_one_to_five() -> None:
    # mean 3, s = sqrt(2.5), n = 5: half width 2.776445 * 1.581139 / 2.236068 = 1.963243
    mean, (low, high) = t_interval([1, 2, 3, 4, 5])
    assert (mean, low, high) == pytest.approx((3.0, 3.0 - 1.963243, 3.0 + 1.963243), abs=1e-5)


def test_one_sample_has_no_interval() -> None:
    """One sample has no spread to take an interval from: NaN bounds, not a zero-width interval."""
    mean, (low, high) = t_interval([7.0])
    assert mean == 7.0 and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(p) for p in paired_tests([3.0]))


# --- (c) p-values -------------------------------------------------------------------------------


def test_t_test_p_values_match_the_closed_forms() -> None:
    # [1, 3]: mean 2, s = sqrt(2), t = 2 / (sqrt(2) / sqrt(2)) = 2 on 1 df
    assert paired_tests([1.0, 3.0])[0] == pytest.approx(p_two_sided_df1(2.0), rel=1e-9)
    assert p_two_sided_df1(2.0) == pytest.approx(0.295167, abs=1e-6)
    # [1, 2, 4]: mean 7/3, s = sqrt(7/3), t = sqrt(7) on 2 df
    assert paired_tests([1.0, 2.0, 4.0])[0] == pytest.approx(p_two_sided_df2(math.sqrt(7.0)), rel=1e-9)
    assert p_two_sided_df2(math.sqrt(7.0)) == pytest.approx(1 - math.sqrt(7 / 9), rel=1e-12)


@pytest.mark.parametrize(
    ("diffs", "p"),
    [
        ([1.0, 2.0, 3.0, 4.0, 5.0], 2 / 32),  # all positive: the one most extreme of 2^5 patterns, each side
        ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2 / 64),
        ([1.0, -2.0, 3.0, 4.0, 5.0], 2 * 3 / 32),  # W- = 2: {}, {1}, {2} sum to <= 2
        ([-1.0, -2.0, 3.0, 4.0, 5.0], 2 * 5 / 32),  # W- = 3: {}, {1}, {2}, {3}, {1,2}
    ],
)
def test_wilcoxon_p_values_are_the_exact_counts(diffs: list[float], p: float) -> None:
    assert paired_tests(diffs)[1] == pytest.approx(p, rel=1e-9)


def test_no_difference_and_a_constant_difference() -> None:
    assert paired_tests([0.0, 0.0, 0.0]) == (1.0, 1.0)
    assert paired_tests([4.0, 4.0, 4.0]) == (0.0, 0.0)


# --- (b) pairs are formed on the same deck, and the round is the unit ----------------------------

# Two players' mean game scores in four rounds of the seat design. A and B rank the rounds
# differently, so pairing sorted scores (or pairing by position in a shuffled list) gives other
# differences than pairing game by game: A - B = [-50, +50, -60, +20]; sorted it would be
# [-50, -50, +40, +20].
A_BY_ROUND = [100.0, 300.0, 200.0, 400.0]
B_BY_ROUND = [150.0, 250.0, 260.0, 380.0]
C_BY_ROUND = [500.0, 500.0, 500.0, 500.0]


def hand_made_results() -> list[GameResult]:
    """Each round: two decks (blocks 2k and 2k+1) of two games (rotations). A deck moves A and B
    by +/-e, a rotation by +/-d, so only the round's mean carries the numbers above (the blocks
    alone would give eight other samples); the games are listed rounds and decks interleaved."""
    games = []
    for rotation, d_sign in ((0, 1), (1, -1)):
        for k in (2, 0, 3, 1):
            for half, e_sign in ((0, 1), (1, -1)):
                d, e = d_sign * (k + 1) * 7.0, e_sign * (k + 3) * 11.0
                scores = [A_BY_ROUND[k] + d + e, B_BY_ROUND[k] - d + 2 * e, C_BY_ROUND[k]]
                games.append(
                    GameResult(
                        index=len(games),
                        block=2 * k + half,
                        round=k,
                        rotation=rotation,
                        game_seed=1000 + 2 * k + half,
                        seats=(0, 1, 2) if rotation == 0 else (1, 2, 0),
                        scores=[int(s) for s in scores],
                        deal_scores=[[int(s) for s in scores]],
                        contracts=[1],
                        went_out=[0],
                        blind=[False],
                        capped=[False],
                        moves=10,
                    )
                )
    return games


def test_pairs_are_formed_game_by_game_and_averaged_per_round() -> None:
    summary = summarize(hand_made_results(), ["A", "B", "C"], ["a", "b", "c"], duplicate=True, seed=0)
    assert (summary.games, summary.blocks, summary.rounds) == (16, 8, 4)
    ab = next(p for p in summary.pairs if (p.a, p.b) == ("A", "B"))
    diffs = [a - b for a, b in zip(A_BY_ROUND, B_BY_ROUND)]
    assert diffs == [-50.0, 50.0, -60.0, 20.0]
    mean = sum(diffs) / 4
    half = T975_DF3 * sd(diffs) / 2.0  # sqrt(4) = 2
    assert ab.mean_diff == pytest.approx(-10.0)
    assert ab.ci95 == pytest.approx([mean - half, mean + half], rel=1e-5)
    t = mean / (sd(diffs) / 2.0)
    assert ab.p_value == pytest.approx(p_two_sided_df3(t), rel=1e-6)
    assert (ab.blocks, ab.rounds) == (8, 4) and not ab.significant
    # sorted pairing would have given a visibly different interval
    wrong = [a - b for a, b in zip(sorted(A_BY_ROUND), sorted(B_BY_ROUND))]
    assert abs(sd(wrong) - sd(diffs)) > 5
    # each player's own interval is over the per-round means
    a = summary.players[0]
    half_a = T975_DF3 * sd(A_BY_ROUND) / 2.0
    assert a.mean_game_score == pytest.approx(250.0)
    assert a.ci95 == pytest.approx([250.0 - half_a, 250.0 + half_a], rel=1e-5)
    # C scored the same in every round: its differences vary only with the other player
    ac = next(p for p in summary.pairs if (p.a, p.b) == ("A", "C"))
    assert ac.ci95 == pytest.approx([-250.0 - half_a, -250.0 + half_a], rel=1e-5)
