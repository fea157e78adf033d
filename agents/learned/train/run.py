"""The run: its configuration, and the folder that holds everything it writes.

See docs/training.md, section "The run", for the folder's files, resuming and refused checkpoints.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import secrets
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from shanghai_env.agents.learned.nets.facts import FACTS_VERSION
from shanghai_env.agents.learned.train.evaluation import ROUNDS
from shanghai_env.agents.learned.train.options import init_arg, option, players_list, seed_arg
from shanghai_env.agents.registry import contracts_arg
from shanghai_env.any_table import ENCODINGS
from shanghai_env.cli import int_in, write_atomically
from shanghai_env.rules import ALL_CONTRACTS, Rules

try:
    import fcntl
except ImportError:  # Windows: run folders are not locked there
    fcntl = None  # type: ignore[assignment]

SELF = "self"
CHECKPOINT = "checkpoint.pt"
CHECKSUM = "checkpoint.json"  # the checkpoint's sha256 (and its method and steps), written with it
LOCK = ".lock"  # held (flock) by the trainer writing the folder
# checkpoints with pickles (the games in progress, a method's bookkeeping): the last release that
# reads them, and why this one does not
OLD_RELEASE = "shanghai-env==0.2.0"
PICKLED = (
    "was written by shanghai-env 0.2.0 or earlier (it holds pickled games, which this version does not read)"
)


@dataclass
class RunConfig:
    """Options every method shares (``shanghai-train METHOD --help`` lists them with the method's
    own); a field made by :func:`.options.option` is a flag, with its help."""

    method: str = "ppo"
    players: int = option(4, "seats at the table (3-8)", type=int_in(3, 8))
    contracts: tuple[int, ...] = option(
        ALL_CONTRACTS, "e.g. 1 or 1,2,3 (default: all ten)", type=contracts_arg
    )
    timesteps: int = option(1_000_000, "learner decisions to train on", type=int_in(1))
    seed: int = option(1, type=seed_arg)
    out: str = option("runs/ppo", "the run folder (a stopped run resumes from it)", type=str)
    num_envs: int = option(64, "games stepped together", type=int_in(1, 4096))
    env_workers: int = option(
        1, "processes stepping the games (1: this one; the same games either way)", type=int_in(1, 256)
    )  # (shanghai_env.blocks)
    opponents: tuple[str, ...] = option(
        (SELF,),
        "'self' (every seat the learner) or the players of the other seats (one name: all)",
        type=players_list,
    )
    facts: bool = option(
        False,
        "add the exact facts of the own hand (distance to the contract, outs, what each card is worth "
        "to it) to the network's input",  # nets/facts.py
        action="store_true",
    )
    # which facts (nets/facts.py FACTS_VERSION): not an option but a record, since a run goes on
    # reading the facts it started with (a folder from before versions read version 1)
    facts_version: int = FACTS_VERSION
    # the layout the network reads and answers in (shanghai_env.any_table)
    encoding: str = option(
        "table",
        "table: the env's observation and actions (default); any_table (ppo, dmc, dagger): the 8-seat "
        "layout, whose player plays every table size, 3 to 8 players",
        choices=ENCODINGS,
    )
    init: str = option(
        "",
        "start from this player's network: a .pt of shanghai-train (grown into wider --net-arch or "
        "--move-net layers), or (sb3) a MaskablePPO .zip of shanghai-train sb3",
        type=init_arg,
    )
    reward: str = option(
        "relative",
        "relative: -deal score/100 minus the table's mean (default); deal: the env's reward",
        choices=("relative", "deal"),
    )
    eval_every: int = option(500_000, "env steps between evaluations (0: at the end only)", type=int_in(0))
    eval_games: int = option(48, "duplicate games per evaluation bot (0: none)", type=int_in(0))
    eval_opponents: tuple[str, ...] = option(("greedy", "planner"), type=players_list)
    eval_seed: int = option(10_000, type=seed_arg)
    checkpoint_every: int = option(100_000, type=int_in(1))
    # a curve's best point can then be played and checked on fresh decks
    keep_players: bool = option(
        False,
        "keep every evaluated player as players/model_STEPS.pt (default: the latest only, model.pt)",
        action="store_true",
    )
    device: str = option("auto", choices=("auto", "cpu", "cuda"))
    threads: int = option(1, "torch threads (default 1)", type=int_in(1, 256))
    progress: bool = option(True, "no progress bar or messages", flag="--no-progress", action="store_false")
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
    """The run folder: config, logs, checkpoints, the learning curve; held by one trainer at a time."""

    def __init__(self, config: RunConfig, option_defaults: Mapping[str, Any] | None = None) -> None:
        """``option_defaults``: the method's options at their defaults (a run made before an
        option existed ran at its default), given by the trainer that knows the method."""
        self.config = config
        self.option_defaults = dict(option_defaults or {})
        self.out = config.out
        self.made_folder = not os.path.isdir(self.out)
        os.makedirs(self.out, exist_ok=True)
        self.path = lambda name: os.path.join(self.out, name)
        self.started = time.perf_counter()
        self.wall_before = 0.0  # wall seconds of earlier sessions of this run (resume)
        self.made_lock = not os.path.exists(self.path(LOCK))
        self._lock: int | None = None
        try:
            self._lock = _lock(self.path(LOCK))
        except BlockingIOError:
            self.close(discard=True)
            raise ValueError(
                f"{self.out} is in use by another shanghai-train (it holds {self.path(LOCK)}); "
                "wait for it to end, or use another --out"
            ) from None

    def close(self, discard: bool = False) -> None:
        """Let go of the folder; ``discard``: a run refused before it wrote anything leaves nothing
        it made (its lock file, the folder if it made it and it is empty)."""
        if discard and self.made_lock:
            with contextlib.suppress(OSError):
                os.unlink(self.path(LOCK))  # before the lock is let go: nobody else holds this name
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
        if discard and self.made_folder:
            with contextlib.suppress(OSError):
                os.rmdir(self.out)  # only if empty

    def resumes(self) -> bool:
        """Whether the run goes on from a checkpoint (after comparing its config.json with this
        config: ValueError for other options). Writes nothing."""
        mine = json.loads(json.dumps(self.config.to_json()))  # tuples as lists, as in the file
        path = self.path("config.json")
        if not (os.path.exists(self.path(CHECKPOINT)) and os.path.exists(path)):
            return False
        try:
            with open(path, encoding="utf-8") as f:
                theirs = json.load(f)
        except (OSError, ValueError) as err:
            again = f"delete {self.path(CHECKPOINT)} to start over"
            raise ValueError(f"{path} cannot be read ({err}): {again}") from None
        if not isinstance(theirs, dict):
            raise ValueError(f"{path} is not a run's config: delete {self.path(CHECKPOINT)} to start over")
        theirs = self._as_now(mine, theirs)
        for key in RECORDED:
            setattr(self.config, key, theirs[key])
            mine[key] = theirs[key]
        diff = [k for k in mine if k not in RESUMABLE and theirs.get(k) != mine[k]]
        if diff:
            shown = ", ".join(f"{k}: {theirs.get(k)!r} there, {mine[k]!r} now" for k in diff)
            raise ValueError(f"{self.out} holds a run with other options ({shown}); use another --out")
        return True

    def _as_now(self, mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
        """A stored config with the options added since at the values the run used."""
        # an option the run's version did not have yet ran at its default then
        defaults = json.loads(json.dumps(RunConfig(method=self.config.method).to_json()))
        theirs = {**{k: defaults[k] for k in mine if k not in theirs}, **RECORDED, **theirs}
        # likewise a method option added since: the run used what is now its default
        option_defaults = self.option_defaults
        own = mine.get("method_options", {})
        theirs["method_options"] = {
            **{k: option_defaults[k] for k in own if k in option_defaults},
            **(theirs.get("method_options") or {}),
        }
        result: dict[str, Any] = json.loads(json.dumps(theirs))
        return result

    def start_fresh(self) -> None:
        """A run with no checkpoint: write config.json and drop the rows of an earlier start."""
        write_atomically(self.path("config.json"), json.dumps(self.config.to_json(), indent=2))
        for name in ("progress.csv", "eval.csv"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path(name))

    def wall(self) -> float:
        """Wall seconds of this run, every session of it."""
        return self.wall_before + time.perf_counter() - self.started

    def log(self, name: str, row: dict[str, Any]) -> None:
        """Append a row; a new column widens the header (earlier rows leave it empty)."""
        path = self.path(name)
        fields = list(row)
        if os.path.exists(path):
            header, rows, _ = log_rows(path)
            fields = header + [k for k in row if k not in header]
            if fields != header:
                self._rewrite(path, fields, [r for _, r in rows])
        new = not os.path.exists(path)
        with open(path, "a", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=fields, restval="")
            if new:
                writer.writeheader()
            writer.writerow(row)

    @staticmethod
    def _rewrite(path: str, fields: list[str], rows: list[dict[str, str]]) -> None:
        """Write the file again: the header ``fields``, then ``rows``."""
        with replaced(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=fields, restval="", extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)

    def truncate_logs(self, env_steps: int) -> None:
        """Drop the log rows after the checkpoint a resumed run starts from, and a row cut short."""
        for name in ("progress.csv", "eval.csv"):
            path = self.path(name)
            if not os.path.exists(path):
                continue
            header, rows, _ = log_rows(path)
            if header:
                self._rewrite(path, header, [r for _, r in rows if _steps(r) <= env_steps])

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        """Write checkpoint.pt whole, and beside it checkpoint.json with its sha256."""
        path = self.path(CHECKPOINT)
        with replaced(path) as tmp:
            torch.save(state, tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            # the sidecar first, naming the file it replaces too: a run stopped between the two
            # renames still finds its (old) checkpoint accepted
            sidecar = {
                "sha256": _sha256(tmp),
                "previous": _sha256(path) if os.path.exists(path) else None,
                "method": state.get("method_name"),
                "env_steps": state.get("env_steps"),
            }
            write_atomically(self.path(CHECKSUM), json.dumps(sidecar, indent=2))

    def load_checkpoint(self, device: Any) -> dict[str, Any]:
        """checkpoint.pt, read with weights_only and checked (its checksum, its method, no pickle
        in it, finite weights); ValueError naming the file and what to do."""
        path = self.path(CHECKPOINT)
        start_over = f"delete {path} and {self.path(CHECKSUM)} to start the run over"
        unknown = _not_written_here(path, self.path(CHECKSUM))  # a damaged file is never unpickled
        if unknown:
            raise ValueError(f"{path} {unknown}; {start_over}")
        try:
            ckpt = torch.load(path, map_location=device, weights_only=True)
        except Exception as err:  # any damage: torch's zip reader, the unpickler, an empty file
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
            raise ValueError(f"{path} is damaged or no checkpoint ({first}); {start_over}") from None
        problem = _checkpoint_problem(ckpt, self.config)
        if problem == PICKLED:
            raise ValueError(f"{path} {PICKLED}; resume it with `pip install {OLD_RELEASE}`, or {start_over}")
        if problem:
            raise ValueError(f"{path} {problem}; {start_over}")
        if not isinstance(ckpt, dict):  # (for the type checker: _checkpoint_problem said so)
            raise ValueError(f"{path} is no checkpoint; {start_over}")
        return ckpt


def seed32(seed: int) -> int:
    """``seed`` for a library that takes a 32-bit one: itself below 2**32, else hashed into it."""
    # itself below 2**32: runs made before play the same games
    if seed < 2**32:
        return seed
    return int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:4], "little")


def _steps(row: dict[str, Any]) -> float:
    try:
        return float(row["env_steps"])
    except (KeyError, TypeError, ValueError):
        return float("inf")  # a row without its steps: not kept


def _lock(path: str) -> int:
    """An exclusive lock on ``path`` (created if missing) held while the descriptor is open;
    BlockingIOError if another process holds it. (No locks where fcntl is missing: Windows.)"""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise BlockingIOError(path) from None
    return fd


@contextlib.contextmanager
def replaced(path: str) -> Iterator[str]:
    """A new file name beside ``path`` that replaces ``path`` when the block ends without an
    error; on an error it is removed and ``path`` is left as it was."""
    # the same extension: writers that go by it write the same format
    folder, name = os.path.split(path)
    stem, ext = os.path.splitext(name)
    tmp = os.path.join(folder, f".{stem}.{os.getpid()}-{secrets.token_hex(4)}.part{ext}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _not_written_here(path: str, sidecar: str) -> str | None:
    """Why ``path`` is not the checkpoint its checksum file names (the end of a sentence that
    starts with its path), or None; checked before anything in it is read."""
    if not os.path.exists(sidecar):
        return None
    try:
        with open(sidecar, encoding="utf-8") as f:
            sums = json.load(f)
        known = {sums.get("sha256"), sums.get("previous")} - {None}
    except (OSError, ValueError, AttributeError):
        known = set()
    if _sha256(path) not in known:
        return f"is not the file this run wrote (its sha256 is not the one in {sidecar}): it is damaged"
    return None


def _checkpoint_problem(ckpt: Any, config: RunConfig) -> str | None:
    """What is wrong with a loaded checkpoint (the end of a sentence naming its path), or None."""
    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("method"), dict):
        return "is no checkpoint of shanghai-train"
    method = ckpt.get("method_name")
    if method is not None and method != config.method:
        return (
            f"holds a {method} run, and this is shanghai-train {config.method}: use the matching method "
            f"(shanghai-train {method}) or another --out"
        )
    missing = [k for k in ("env_steps", "train_seconds", "wall_seconds", "next_ckpt") if k not in ckpt]
    if missing:
        return f"lacks {', '.join(missing)}"
    state = ckpt["method"]
    if any(True for _ in _blobs(state)) or ("venv" in state and "games" not in state):
        return PICKLED
    tensors = _tensors(ckpt["method"])
    bad = [name for name, t in tensors if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if bad:
        shown = ", ".join(bad[:4]) + (f" and {len(bad) - 4} more" if len(bad) > 4 else "")
        return f"holds weights that are not finite (NaN or inf: {shown})"
    return None


def _blobs(value: Any) -> Iterator[bytes]:
    """The bytes values in a checkpoint's state (the pickles that releases up to 0.2.0 kept)."""
    if isinstance(value, (bytes, bytearray)):
        yield bytes(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _blobs(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _blobs(v)


def _tensors(value: Any, name: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        yield name, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _tensors(v, f"{name}.{k}" if name else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _tensors(v, f"{name}.{i}")


def log_rows(path: str) -> tuple[list[str], list[tuple[int, dict[str, str]]], list[int]]:
    """A log's header, its whole rows (with their line numbers) and the line numbers of the rows
    cut short (fewer fields than the header, or a last line without its line end); a value past
    the header is dropped. OSError; ValueError for a file that is not text."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    header = next(csv.reader(lines[:1]), [])
    rows: list[tuple[int, dict[str, str]]] = []
    cut: list[int] = []
    for number, line in enumerate(lines[1:], start=2):
        values = next(csv.reader([line]), [])
        if not values:
            continue
        if len(values) < len(header) or not line.endswith(("\n", "\r")):
            cut.append(number)
        else:
            rows.append((number, dict(zip(header, values))))
    return header, rows, cut


def read_curve(path: str) -> tuple[list[dict[str, float]], list[int]]:
    """The rows of an ``eval.csv`` as numbers (empty values left out), and the line numbers of the
    rows skipped (cut short, or holding no number); ValueError naming a file it cannot read."""
    try:
        _, rows, skipped = log_rows(path)
    except (OSError, ValueError, csv.Error) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else "it is not a CSV file"
        raise ValueError(f"{path} cannot be read ({reason})") from None
    out: list[dict[str, float]] = []
    for number, row in rows:
        try:
            out.append({k: float(v) for k, v in row.items() if v != ""})
        except ValueError:
            skipped.append(number)
    return out, sorted(skipped)


def curve_bots(rows: list[dict[str, float]]) -> list[str]:
    """The evaluation bots of eval.csv rows: each ``NAME`` of a ``NAME_diff`` column (not ``NAME#2``)."""
    names = {k[: -len("_diff")] for r in rows for k in r if k.endswith("_diff")}
    seats = {n for n in names if n.rpartition("#")[2].isdigit() and n.rpartition("#")[0] in names}
    return sorted(names - seats)


def plot_curve(eval_csvs: list[str], png: str, title: str) -> None:
    """The learner's paired score difference to each evaluation bot's first seat (95% interval)
    against env steps and wall time, one line per run (CSV) and bot, written to ``png``; rows cut
    short are skipped (said on stderr). ValueError, before anything is drawn, naming a file that
    cannot be read or holds no complete row."""
    curves = {}
    for csv_path in eval_csvs:
        rows, skipped = read_curve(csv_path)
        where = f"line {skipped[0]}" if len(skipped) == 1 else f"lines {', '.join(map(str, skipped))}"
        cut = f"the row on {where} is incomplete (cut short, as a run stopped while writing it leaves)"
        if not rows:
            raise ValueError(f"{csv_path} holds no complete evaluation row{f': {cut}' if skipped else ''}")
        if skipped:
            print(f"{csv_path}: {cut}: skipped", file=sys.stderr)
        curves[csv_path] = rows
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for csv_path, all_rows in curves.items():
        label = os.path.basename(os.path.dirname(os.path.abspath(csv_path)))
        for bot in curve_bots(all_rows):
            # rows of the earlier statistic (no rounds value: the bot seats' mean) drawn apart
            for now, style, said in ((False, "--", " (seats' mean, earlier statistic)"), (True, "-", "")):
                series = [r for r in all_rows if (ROUNDS in r) == now and f"{bot}_diff" in r]
                if not series:
                    continue
                for ax, x_key in zip(axes, ("env_steps", "wall_seconds")):
                    rows = [r for r in series if x_key in r]
                    x = [r[x_key] / (1e6 if x_key == "env_steps" else 3600) for r in rows]
                    y = [r[f"{bot}_diff"] for r in rows]
                    (line,) = ax.plot(x, y, style, marker="o", ms=3, label=f"{label} vs {bot}{said}")
                    low = [r.get(f"{bot}_low", r[f"{bot}_diff"]) for r in rows]
                    high = [r.get(f"{bot}_high", r[f"{bot}_diff"]) for r in rows]
                    ax.fill_between(x, low, high, alpha=0.15, color=line.get_color())
    for ax, xlabel in zip(axes, ("env steps (millions of learner decisions)", "wall time (hours)")):
        ax.axhline(0.0, color="black", lw=0.8)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("game score − the bot's first seat (points; below 0: ahead)")
    axes[1].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    with replaced(png) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
