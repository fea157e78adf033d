"""The run: its configuration, and the folder that holds everything it writes.

A run folder (``--out``) holds ``config.json`` (every option, written once; a resumed run must
be asked for with the same options), ``checkpoint.pt`` (the method's state and the counters,
rewritten every ``checkpoint_every`` env steps: a stopped run goes on from there with the same
command), ``progress.csv`` (one row per update: env steps, wall time, the method's statistics),
``eval.csv`` and ``curve.png`` (the learning curve: the learner's game score minus each bot seat's
against env steps and wall time), ``model.pt`` (the latest player) and ``model.json`` (how it was
made).
"""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from shanghai_env.rules import ALL_CONTRACTS, Rules

from .facts import FACTS_VERSION

SELF = "self"
RUN_FILES = ("config.json", "checkpoint.pt", "progress.csv", "eval.csv", "model.pt", "model.json")


@dataclass
class RunConfig:
    """Options every method shares (``shanghai-train METHOD --help`` lists them with the method's own)."""

    method: str = "ppo"
    players: int = 4
    contracts: tuple[int, ...] = ALL_CONTRACTS
    timesteps: int = 1_000_000  # learner decisions to train on
    seed: int = 1
    out: str = "runs/ppo"
    num_envs: int = 64  # games stepped together
    env_workers: int = 1  # processes stepping the games (shanghai_env.vector_workers); 1: this one
    opponents: tuple[str, ...] = (
        SELF,
    )  # "self": every seat is the learner; else players for the other seats
    facts: bool = False  # the exact facts of the own hand as extra inputs (train/facts.py)
    # which facts (train/facts.py FACTS_VERSION): not an option but a record, since a run goes on
    # reading the facts it started with (a folder from before versions read version 1)
    facts_version: int = FACTS_VERSION
    # the starting network: "" (fresh), a .pt of shanghai-train, or a saved MaskablePPO player
    # (a .zip such as ppo_full_4p: RL after cloning, train/sb3_net.py; ppo only)
    init: str = ""
    reward: str = "relative"  # "deal": -deal score/100; "relative": that minus the table's mean
    eval_every: int = 500_000  # env steps between evaluations; 0: only at the end
    eval_games: int = 48
    eval_opponents: tuple[str, ...] = ("greedy", "planner")
    eval_seed: int = 10_000
    checkpoint_every: int = 100_000
    # keep every evaluated player as players/model_<env steps>.pt (+ .json), not only the latest:
    # a curve's best point can then be played and checked on fresh decks
    keep_players: bool = False
    device: str = "auto"
    threads: int = 1
    progress: bool = True
    method_options: dict[str, Any] = field(default_factory=dict)

    @property
    def rules(self) -> Rules:
        return Rules(num_players=self.players, contracts=self.contracts)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["contracts"] = list(self.contracts)
        d["opponents"] = list(self.opponents)
        d["eval_opponents"] = list(self.eval_opponents)
        return d


# options that may differ between a run and its resumption (they change no result)
RESUMABLE = (
    "timesteps",
    "progress",
    "threads",
    "device",
    "eval_every",
    "checkpoint_every",
    "env_workers",
    "keep_players",
)
# what a run records rather than is asked for: a resumed run keeps its folder's value (that of
# the code before the key existed, when the folder has none)
RECORDED = {"facts_version": 1}


class Run:
    """The run folder: config, logs, the learning curve."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.out = config.out
        os.makedirs(self.out, exist_ok=True)
        self.path = lambda name: os.path.join(self.out, name)
        self.started = time.perf_counter()
        self.wall_before = 0.0  # wall seconds of earlier sessions of this run (resume)

    def check_config(self) -> bool:
        """Write config.json, or compare with it; True if the run resumes (a checkpoint exists)."""
        mine = json.loads(json.dumps(self.config.to_json()))  # tuples as lists, as in the file
        path = self.path("config.json")
        if os.path.exists(self.path("checkpoint.pt")) and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                theirs = json.load(f)
            # an option the run's version did not have yet ran at its default then
            defaults = json.loads(json.dumps(RunConfig(method=self.config.method).to_json()))
            theirs = {**{k: defaults[k] for k in mine if k not in theirs}, **RECORDED, **theirs}
            # likewise a method option added since: the run used what is now its default
            from .methods import method_class

            option_defaults = asdict(method_class(self.config.method).Options())
            own = mine.get("method_options", {})
            theirs["method_options"] = {
                **{k: option_defaults[k] for k in own if k in option_defaults},
                **theirs.get("method_options", {}),
            }
            theirs = json.loads(json.dumps(theirs))
            for key in RECORDED:
                setattr(self.config, key, theirs[key])
                mine[key] = theirs[key]
            diff = [k for k in mine if k not in RESUMABLE and theirs.get(k) != mine[k]]
            if diff:
                shown = ", ".join(f"{k}: {theirs.get(k)!r} there, {mine[k]!r} now" for k in diff)
                raise ValueError(f"{self.out} holds a run with other options ({shown}); use another --out")
            return True
        with open(path, "w", encoding="utf-8") as f:
            json.dump(mine, f, indent=2)
        return False

    def wall(self) -> float:
        """Wall seconds of this run, every session of it."""
        return self.wall_before + time.perf_counter() - self.started

    def log(self, name: str, row: dict[str, Any]) -> None:
        """Append a row; a column the file does not have yet widens its header (earlier rows
        leave it empty), so every row lines up with the header."""
        path = self.path(name)
        fields = list(row)
        if os.path.exists(path):
            with open(path, newline="", encoding="utf-8") as f:
                header = next(csv.reader(f), [])
            fields = header + [k for k in row if k not in header]
            if fields != header:
                self._rewrite(path, fields)
        new = not os.path.exists(path)
        with open(path, "a", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=fields, restval="")
            if new:
                writer.writeheader()
            writer.writerow(row)

    @staticmethod
    def _rewrite(path: str, fields: list[str], keep: Any = None) -> None:
        """Write the file again under the header ``fields``, with the rows ``keep`` accepts.
        (A value past its row's header, as older versions could write, is dropped.)"""
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if keep is None or keep(r)]
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=fields, restval="", extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)

    def truncate_logs(self, env_steps: int) -> None:
        """Drop log rows written after the checkpoint a resumed run starts from."""
        for name in ("progress.csv", "eval.csv"):
            path = self.path(name)
            if not os.path.exists(path):
                continue
            with open(path, newline="", encoding="utf-8") as f:
                header = next(csv.reader(f), [])
            if header:
                self._rewrite(path, header, lambda r: int(float(r["env_steps"])) <= env_steps)


def read_csv(path: str) -> list[dict[str, float]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f)  # (a value past its row's header, as older versions wrote: skipped)
        return [{k: float(v) for k, v in r.items() if k is not None and v not in ("", None)} for r in rows]


def plot_curve(eval_csvs: list[str], png: str, title: str) -> None:
    """Paired score difference (learner − each bot seat, 95% interval) against env steps and
    wall time; one line per run and bot (several seeds: several CSVs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for csv_path in eval_csvs:
        rows = read_csv(csv_path)
        if not rows:
            continue
        label = os.path.basename(os.path.dirname(os.path.abspath(csv_path)))
        bots = sorted(k[: -len("_diff")] for k in rows[0] if k.endswith("_diff"))
        for bot in bots:
            for ax, x_key in zip(axes, ("env_steps", "wall_seconds")):
                x = [r[x_key] / (1e6 if x_key == "env_steps" else 3600) for r in rows]
                y = [r[f"{bot}_diff"] for r in rows]
                (line,) = ax.plot(x, y, marker="o", ms=3, label=f"{label} vs {bot}")
                low = [r.get(f"{bot}_low", r[f"{bot}_diff"]) for r in rows]
                high = [r.get(f"{bot}_high", r[f"{bot}_diff"]) for r in rows]
                ax.fill_between(x, low, high, alpha=0.15, color=line.get_color())
    for ax, xlabel in zip(axes, ("env steps (millions of learner decisions)", "wall time (hours)")):
        ax.axhline(0.0, color="black", lw=0.8)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("game score − each bot seat (points; below 0: ahead)")
    axes[1].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
