"""Pool the rounds of several evaluations of the same players on other seeds: paired 95% intervals
over all their rounds together.

    python benchmarks/pool_rounds.py results/seed1 results/seed2

Each folder is the ``--out`` of one ``evaluate.py`` run (its ``summary.json`` and ``games.csv``),
with the same players listed in the same order and duplicate decks; their seeds must differ, so
that every round is a fresh set of decks. A round is the unit of the evaluation's own intervals
(every player in every seat and after every other equally often), so pooling rounds is what one
evaluation of all the games would have reported. Decide which seeds to pool before playing them:
pooling only the seeds that agree with a hope is a choice made on the results.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from itertools import combinations

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.agents.arena.stats import paired_tests, t_interval


def _load(folder: str) -> tuple[dict, dict[int, list[dict[str, str]]]]:
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    rounds: dict[int, list[dict[str, str]]] = {}
    with open(os.path.join(folder, "games.csv"), encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            rounds.setdefault(int(row["round"]), []).append(row)
    return summary, rounds


def pool(folders: list[str]) -> tuple[list[str], list[tuple[str, str, float, list[float], float, int]]]:
    """The players, and for every pair (A, B, mean A - B over the pooled round means, its 95%
    interval, the t-test p, rounds). ValueError when the evaluations cannot be pooled."""
    loaded = [_load(f) for f in folders]
    labels = [p["name"] for p in loaded[0][0]["players"]]
    specs = [p["spec"] for p in loaded[0][0]["players"]]
    seeds = [s["seed"] for s, _ in loaded]
    for folder, (summary, _) in zip(folders, loaded):
        if [p["name"] for p in summary["players"]] != labels or [
            p["spec"] for p in summary["players"]
        ] != specs:
            raise ValueError(f"{folder} seats other players than {folders[0]}: pool one line-up only")
        if not summary["duplicate"]:
            raise ValueError(f"{folder} played fresh decks for every game (--no-duplicate): it has no rounds")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"two evaluations share a seed ({seeds}): they played the same decks")
    means = []  # per pooled round: each player's mean game score
    for _, rounds in loaded:
        for games in rounds.values():
            means.append([np.mean([int(g[f"score_{label}"]) for g in games]) for label in labels])
    table = np.array(means)
    pairs = []
    for i, j in combinations(range(len(labels)), 2):
        mean, ci = t_interval(table[:, i] - table[:, j])
        pairs.append((labels[i], labels[j], mean, ci, paired_tests(table[:, i] - table[:, j])[0], len(table)))
    return labels, pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="the --out folders of the evaluations to pool")
    args = parser.parse_args(argv)
    missing = [f for f in args.folders if not os.path.isfile(os.path.join(f, "summary.json"))]
    if missing:
        parser.error(
            f"no summary.json in {', '.join(missing)}: give the --out folders of finished evaluations"
        )
    try:
        _, pairs = pool(args.folders)
    except ValueError as err:
        parser.error(str(err))
    print(f"{'A':<16} {'B':<16} {'A - B':>7}  95% CI            t-test p  rounds")
    for a, b, mean, (low, high), p, n in pairs:
        print(f"{a:<16} {b:<16} {mean:+7.1f}  [{low:+6.1f}, {high:+6.1f}]  {p:8.3f}  {n}")


if __name__ == "__main__":
    main()
