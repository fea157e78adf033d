"""Tournament output: a rich table on the terminal, ``summary.json``, ``games.csv`` and a chart."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence

from shanghai_env.agents.arena.stats import Summary
from shanghai_env.agents.arena.tournament import GameResult

SUMMARY_FILE = "summary.json"
GAMES_FILE = "games.csv"
CHART_FILE = "scores.png"


def write_summary(summary: Summary, out_dir: str) -> str:
    """Write ``summary.json`` (the :class:`Summary` as JSON)."""
    path = os.path.join(out_dir, SUMMARY_FILE)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary.to_json(), f, indent=2)
        f.write("\n")
    return path


def write_games_csv(results: Sequence[GameResult], labels: Sequence[str], out_dir: str) -> str:
    """One row per game: seeds, seating, every player's score and deal scores, caps and outs."""
    path = os.path.join(out_dir, GAMES_FILE)
    n = len(labels)
    num_deals = len(results[0].deal_scores) if results else 0
    header = ["game", "round", "block", "rotation", "game_seed", "moves", "capped_deals", "winners"]
    header += [f"seat_of_{name}" for name in labels]
    header += [f"score_{name}" for name in labels]
    header += [f"deal{d + 1}_{name}" for d in range(num_deals) for name in labels]
    header += [f"out_deal{d + 1}" for d in range(num_deals)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for g in results:
            seat_of = [0] * n
            for seat, player in enumerate(g.seats):
                seat_of[player] = seat
            row: list[object] = [
                g.index,
                g.round,
                g.block,
                g.rotation,
                g.game_seed,
                g.moves,
                sum(g.capped),
                ";".join(labels[i] for i in g.winners),
            ]
            row += seat_of
            row += g.scores
            row += [g.deal_scores[d][i] for d in range(num_deals) for i in range(n)]
            row += [
                labels[o] if o >= 0 else ("capped" if g.capped[d] else "") for d, o in enumerate(g.went_out)
            ]
            w.writerow(row)
    return path


def write_chart(summary: Summary, out_dir: str) -> str:
    """Mean game score with 95% intervals, and mean deal score by contract."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = os.path.join(out_dir, CHART_FILE)
    players = summary.players
    names = [p.name for p in players]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    means = [p.mean_game_score for p in players]
    low = [p.mean_game_score - p.ci95[0] for p in players]
    high = [p.ci95[1] - p.mean_game_score for p in players]
    ax1.bar(names, means, yerr=[low, high], capsize=6, color="#4c72b0")
    ax1.set_ylabel("mean game score (lower is better)")
    ax1.set_title(f"{summary.games} games, {summary.blocks} deck sets, {summary.rounds} rounds, 95% CI")
    ax1.tick_params(axis="x", rotation=20)
    contracts = sorted({int(c) for p in players for c in p.mean_deal_score_by_contract})
    for p in players:
        ax2.plot(
            contracts,
            [p.mean_deal_score_by_contract.get(str(c), float("nan")) for c in contracts],
            marker="o",
            label=p.name,
        )
    ax2.set_xlabel("contract")
    ax2.set_ylabel("mean deal score")
    ax2.set_xticks(contracts)
    ax2.legend(fontsize=8)
    ax2.set_title("by contract")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def print_tables(summary: Summary) -> None:
    """The per-player table and the pairwise table, with rich."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:  # a pipe or a log file: do not squeeze the tables into 80 columns
        console = Console(width=130)
    t = Table(
        title=(
            f"{summary.games} games ({summary.blocks} deck sets in {summary.rounds} rounds, "
            f"{'duplicate' if summary.duplicate else 'independent'} deals), seed {summary.seed}, "
            f"contracts {','.join(map(str, summary.contracts))}"
        )
    )
    for col in ("player", "mean game score", "95% CI", "mean deal score", "win rate", "went out", "rating"):
        t.add_column(col, justify="left" if col == "player" else "right")
    for p in sorted(summary.players, key=lambda p: p.mean_game_score):
        t.add_row(
            p.name,
            f"{p.mean_game_score:.1f}",
            f"[{p.ci95[0]:.1f}, {p.ci95[1]:.1f}]",
            f"{p.mean_deal_score:.1f} [{p.deal_ci95[0]:.1f}, {p.deal_ci95[1]:.1f}]",
            f"{p.win_rate:.1%}",
            f"{p.went_out_rate:.1%}",
            f"{p.rating_mu:.1f} ± {p.rating_sigma:.1f}",
        )
    console.print(t)
    pt = Table(title="pairwise: mean game-score difference over the same decks (A - B)")
    for col in ("A", "B", "A - B", "95% CI", "t-test p", "Wilcoxon p", "p < 0.05"):
        pt.add_column(col, justify="left" if col in ("A", "B") else "right")
    for pr in summary.pairs:
        pt.add_row(
            pr.a,
            pr.b,
            f"{pr.mean_diff:+.1f}",
            f"[{pr.ci95[0]:+.1f}, {pr.ci95[1]:+.1f}]",
            f"{pr.p_value:.2g}",
            f"{pr.wilcoxon_p:.2g}",
            "yes" if pr.significant else "",
        )
    console.print(pt)
    if summary.seating:
        seats = summary.seating
        note = "" if seats.get("balanced", True) else " (the last round is cut short: not balanced)"
        console.print(f"seats: {seats.get('description', seats.get('design', ''))}{note}")
    console.print(
        f"{summary.deals} deals, {summary.capped_deals} ended by the move cap; "
        f"{summary.mean_moves_per_game:.0f} moves per game; "
        f"{summary.games_per_second:.2f} games/s on {summary.workers} worker(s)"
    )
