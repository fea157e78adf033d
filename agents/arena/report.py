"""Tournament output: a rich table on the terminal, ``summary.json``, ``games.csv``, a chart and
game records, written so that a folder never looks complete when it is not, and so that an
evaluation never replaces another's outputs.

One folder can hold several evaluations (:class:`Outputs`): the first's outputs have the plain
names (``summary.json``, ``games.csv``, ``scores.png``, ``records/``), the second's ``-2``
(``summary-2.json``, ``games-2.csv``, ``scores-2.png``, ``records-2/``), and so on; each summary
names its records folder (``"records"``). :func:`write_outputs` writes an evaluation's files in
an order a reader can trust: its ``INCOMPLETE`` file first (``INCOMPLETE-2`` for the second;
made with ``O_EXCL``, it claims the number, so two evaluations writing at once never share
one), then the records, ``games.csv`` and ``scores.png``, ``summary.json`` last, and
``INCOMPLETE`` removed at the end. Every file is written to a temporary name and renamed into
place (:func:`replace_atomically`), so a run killed meanwhile leaves whole files and an
``INCOMPLETE`` that says which evaluation is not whole.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from shanghai_env.agents.arena.stats import Summary, has_interval
from shanghai_env.agents.arena.tournament import GameResult

SUMMARY_FILE = "summary.json"
GAMES_FILE = "games.csv"
CHART_FILE = "scores.png"
RECORDS_FOLDER = "records"
INCOMPLETE_FILE = "INCOMPLETE"  # present while an evaluation's outputs are being written
_RECORD_NAME = re.compile(r"game-\d{5,}\.json")  # a game record's name in RECORDS_FOLDER


def replace_atomically(path: str, write: Callable[[str], object]) -> str:
    """Write a file with ``write(temporary_path)`` beside ``path``, then rename it to ``path``: a
    reader (or a run killed meanwhile) sees the old file or the whole new one, never a part."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_text_atomically(path: str, text: str) -> str:
    """:func:`replace_atomically` for a text file (UTF-8)."""

    def write(tmp: str) -> None:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)

    return replace_atomically(path, write)


@dataclass(frozen=True)
class Outputs:
    """Where evaluation ``number`` of the folder ``folder`` writes: the first under the plain
    names, the Nth with ``-N`` before the extension (``summary-2.json``, ``records-2/``)."""

    folder: str
    number: int = 1

    def name(self, base: str) -> str:
        """The output named ``base`` in the plain scheme (``summary.json``) as this evaluation's."""
        if self.number == 1:
            return base
        stem, ext = os.path.splitext(base)
        return f"{stem}-{self.number}{ext}"

    def path(self, base: str) -> str:
        return os.path.join(self.folder, self.name(base))

    @property
    def records(self) -> str:
        """The folder of the game records."""
        return self.path(RECORDS_FOLDER)

    def record(self, index: int) -> str:
        """Where game ``index``'s record goes: ``records/game-NNNNN.json``."""
        return os.path.join(self.records, f"game-{index:05d}.json")

    def taken(self) -> bool:
        """Whether an earlier evaluation wrote (or began to write) here: one of its files is
        there, or game records are in its records folder. (A folder where a file goes, or a
        file where the records go, is no evaluation: :func:`outputs_problem` refuses it.)"""
        files = (SUMMARY_FILE, GAMES_FILE, CHART_FILE, INCOMPLETE_FILE)
        return any(os.path.isfile(self.path(n)) for n in files) or _holds_records(self.records)


def _holds_records(folder: str) -> bool:
    return os.path.isdir(folder) and any(
        _RECORD_NAME.fullmatch(n) and os.path.isfile(os.path.join(folder, n)) for n in os.listdir(folder)
    )


def next_outputs(out_dir: str) -> Outputs:
    """Where a new evaluation in ``out_dir`` writes: the first :class:`Outputs` no earlier one took
    (an evaluation deletes nothing it did not write)."""
    number = 1
    while Outputs(out_dir, number).taken():
        number += 1
    return Outputs(out_dir, number)


def outputs_problem(out_dir: str, recorded: Sequence[int] = ()) -> str | None:
    """Why a new evaluation's outputs (with the records of games ``recorded``) cannot be written
    in the existing folder ``out_dir`` (a sentence), or None. Checked before the first game."""
    outputs = next_outputs(out_dir)
    for name in (SUMMARY_FILE, GAMES_FILE, CHART_FILE, INCOMPLETE_FILE):
        if os.path.isdir(outputs.path(name)):
            return f"{outputs.path(name)!r} is a folder, where an output file goes"
    if not recorded:
        return None
    records = outputs.records
    if os.path.exists(records) and not os.path.isdir(records):
        return f"{records!r} is a file, where the game records' folder goes"
    if os.path.isdir(records) and not os.access(records, os.W_OK | os.X_OK):
        return f"cannot write the game records in {records!r}: the folder is not writable"
    for index in recorded:
        if os.path.isdir(outputs.record(index)):
            return f"{outputs.record(index)!r} is a folder, where a game record goes"
    return None


def is_complete(out_dir: str, number: int = 1) -> bool:
    """Whether ``out_dir`` holds the whole outputs of its evaluation ``number``: its summary and
    no ``INCOMPLETE`` of its own (an evaluation stopped while writing leaves it)."""
    outputs = Outputs(out_dir, number)
    return os.path.isfile(outputs.path(SUMMARY_FILE)) and not os.path.exists(outputs.path(INCOMPLETE_FILE))


def _claim(out_dir: str) -> Outputs:
    """:func:`next_outputs`, claimed by creating its ``INCOMPLETE`` (``O_EXCL``: of two evaluations
    writing at once, one gets the number and the other the next)."""
    while True:
        outputs = next_outputs(out_dir)
        marker = outputs.path(INCOMPLETE_FILE)
        try:
            with open(marker, "x", encoding="utf-8") as f:
                f.write("an evaluation was writing its outputs here and did not finish: they are not whole\n")
            return outputs
        except FileExistsError:
            if not os.path.isfile(marker):  # no evaluation's: something else made since the check
                raise


def write_outputs(
    summary: Summary, results: Sequence[GameResult], labels: Sequence[str], out_dir: str
) -> tuple[Outputs, int]:
    """Write an evaluation's outputs in ``out_dir`` under the first :class:`Outputs` no earlier
    evaluation took (see the module docstring); ``summary.records`` is set to the name of the
    records folder (None when no game was recorded). Returns (where they went, records written)."""
    outputs = _claim(out_dir)
    recorded = [r for r in results if r.record is not None]
    if recorded:
        os.makedirs(outputs.records, exist_ok=True)
    for r in recorded:
        assert r.record is not None
        _write_record(r.record, outputs.record(r.index))
    summary.records = outputs.name(RECORDS_FOLDER) if recorded else None
    write_games_csv(results, labels, outputs.path(GAMES_FILE))
    write_chart(summary, outputs.path(CHART_FILE))
    write_summary(summary, outputs.path(SUMMARY_FILE))
    os.remove(outputs.path(INCOMPLETE_FILE))
    return outputs, len(recorded)


def _write_record(record: dict[str, Any], path: str) -> None:
    from shanghai_env.record import save

    save(record, path)  # record.save writes whole or not at all (a temporary file, then a rename)


def write_summary(summary: Summary, path: str) -> str:
    """Write ``summary.json`` (the :class:`Summary` as JSON) at ``path``."""
    return write_text_atomically(path, json.dumps(summary.to_json(), indent=2) + "\n")


def write_games_csv(results: Sequence[GameResult], labels: Sequence[str], path: str) -> str:
    """``games.csv`` at ``path``: one row per game: seeds, seating, every player's score and deal
    scores, caps and outs."""
    num_deals = len(results[0].deal_scores) if results else 0
    header = ["game", "round", "block", "rotation", "game_seed", "moves", "capped_deals", "winners"]
    header += [f"seat_of_{name}" for name in labels]
    header += [f"score_{name}" for name in labels]
    header += [f"deal{d + 1}_{name}" for d in range(num_deals) for name in labels]
    header += [f"out_deal{d + 1}" for d in range(num_deals)]
    return replace_atomically(path, lambda tmp: _write_rows(tmp, results, labels, header, num_deals))


def _write_rows(
    path: str, results: Sequence[GameResult], labels: Sequence[str], header: list[str], num_deals: int
) -> None:
    n = len(labels)
    with open(path, "x", newline="", encoding="utf-8") as f:
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


def write_chart(summary: Summary, path: str) -> str:
    """``scores.png`` at ``path``: mean game score with 95% intervals, and mean deal score by
    contract."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players = summary.players
    names = [p.name for p in players]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    means = [p.mean_game_score for p in players]
    bars = all(has_interval(p.ci95) for p in players)
    low = [p.mean_game_score - p.ci95[0] if bars else 0.0 for p in players]
    high = [p.ci95[1] - p.mean_game_score if bars else 0.0 for p in players]
    ax1.bar(names, means, yerr=[low, high] if bars else None, capsize=6, color="#4c72b0")
    ax1.set_ylabel("mean game score (lower is better)")
    what = "95% CI" if bars else "no interval: one round"
    ax1.set_title(f"{summary.games} games, {summary.blocks} deck sets, {summary.rounds} rounds, {what}")
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
    try:
        replace_atomically(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    finally:
        plt.close(fig)
    return path


RATING_NOTE = (
    "rating: OpenSkill Plackett-Luce μ ± σ from each game's finishing order (who finished ahead of "
    "whom, not by how many points): it can rank a player above one with a lower mean game score"
)


def _interval(interval: Sequence[float], signed: bool = False) -> str:
    if not has_interval(interval):
        return "n/a"
    low, high = interval
    return f"[{low:+.1f}, {high:+.1f}]" if signed else f"[{low:.1f}, {high:.1f}]"


def _p(value: float) -> str:
    return f"{value:.2g}" if math.isfinite(value) else "n/a"


def task_line(summary: Summary) -> str:
    """The headline of a benchmark task: the player under test minus each reference seat."""
    task = summary.task
    player = summary.players[0].name if summary.players else ""
    seats = []
    for s in task.get("score", []):
        ci = s["ci95"]
        verdict = s["verdict"] if has_interval(ci) else "n/a"
        seats.append(f"{s['seat']} {s['mean_diff']:+.1f} {_interval(ci, signed=True)} {verdict}")
    return (
        f"task {task.get('id', '')} ({task.get('text', '')}): {player} − each reference seat, paired over "
        f"{summary.rounds} rounds (lower is better; 95% CI, separated where it excludes 0): "
        + "; ".join(seats)
    )


def print_tables(summary: Summary) -> None:
    """The per-player table and the pairwise table, with rich; a task's score line; what the
    rating measures and why an interval or a test is missing."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:  # a pipe or a log file: do not squeeze the tables into 80 columns
        console = Console(width=130)

    def say(text: str) -> None:  # a line of plain text, never wrapped or read as markup
        console.print(text, markup=False, highlight=False, soft_wrap=True)

    rounds = f"{summary.rounds} round{'s' * (summary.rounds != 1)}"
    t = Table(
        title=(
            f"{summary.games} games ({summary.blocks} deck sets in {rounds}, "
            f"{'duplicate' if summary.duplicate else 'independent'} deals), seed {summary.seed}, "
            f"contracts {','.join(map(str, summary.contracts))}"
        )
    )
    for col in ("player", "mean game score", "95% CI", "mean deal score", "win rate", "went out", "rating"):
        t.add_column(col, justify="left" if col == "player" else "right")
    for p in sorted(summary.players, key=lambda p: p.mean_game_score):
        deal = f"{p.mean_deal_score:.1f}" + (
            f" {_interval(p.deal_ci95)}" if has_interval(p.deal_ci95) else ""
        )
        t.add_row(
            p.name,
            f"{p.mean_game_score:.1f}",
            _interval(p.ci95),
            deal,
            f"{p.win_rate:.1%}",
            f"{p.went_out_rate:.1%}",
            f"{p.rating_mu:.1f} ± {p.rating_sigma:.1f}",
        )
    console.print(t)
    say(RATING_NOTE)
    if summary.rounds == 1 and summary.interval_note:
        say(f"95% CI: n/a ({summary.interval_note})")
    pt = Table(title="pairwise: mean game-score difference over the same decks (A - B)")
    for col in ("A", "B", "A - B", "95% CI", "t-test p", "Wilcoxon p", "p < 0.05"):
        pt.add_column(col, justify="left" if col in ("A", "B") else "right")
    for pr in summary.pairs:
        pt.add_row(
            pr.a,
            pr.b,
            f"{pr.mean_diff:+.1f}",
            _interval(pr.ci95, signed=True),
            _p(pr.p_value),
            _p(pr.wilcoxon_p),
            "yes" if pr.significant else "",
        )
    console.print(pt)
    if summary.rounds == 1 and summary.interval_note:
        say(f"intervals and p-values: n/a ({summary.interval_note})")
    elif summary.interval_note:
        say(summary.interval_note)
    if summary.wilcoxon_note:
        say(f"Wilcoxon p: n/a ({summary.wilcoxon_note})")
    if summary.task:
        say(task_line(summary))
    if summary.seating:
        seats = summary.seating
        note = "" if seats.get("balanced", True) else " (the last round is cut short: not balanced)"
        say(f"seats: {seats.get('description', seats.get('design', ''))}{note}")
    say(
        f"{summary.deals} deals, {summary.capped_deals} ended by the move cap; "
        f"{summary.mean_moves_per_game:.0f} moves per game; "
        f"{summary.games_per_second:.2f} games/s on {summary.workers} worker(s)"
    )
