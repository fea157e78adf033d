"""Training the scorer (:mod:`shanghai_env.agents.bots.scorer`) by expert iteration: ``gen`` labels
a shard (``.npz``) of decisions, ``fit`` fits a ``.scorer`` to every shard so far. :class:`Scorer`
runs the rounds (``shanghai-train scorer``), :func:`tool_main` one stage (``shanghai-train scorer
gen|fit``); see docs/training.md, "scorer".
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from shanghai_env.agents.arena.workers import map_in_workers
from shanghai_env.agents.bots.scorer import (
    DISCARD_Q,
    DOWN_DISCARD_Q,
    EXTENSION,
    INPUT_SIZE,
    KIND_AT,
    ScorerNet,
)
from shanghai_env.agents.learned.train.options import add_options, option
from shanghai_env.agents.learned.train.scorer_data import generate
from shanghai_env.cli import Parser, int_in, number_in, output_file_problem
from shanghai_env.rules import ALL_CONTRACTS

if TYPE_CHECKING:
    from shanghai_env.agents.learned.train.run import RunConfig

_MODELS = ("model", "rollout_model", "opponent_model")


def _gen_worker(job: tuple[int, dict[str, Any]]) -> dict[str, np.ndarray]:
    """One worker's part of a shard: its seed and the options every worker shares."""
    seed, options = job
    nets = {k: ScorerNet.load(options[k]) if options[k] else None for k in _MODELS}
    rest = {k: v for k, v in options.items() if k not in _MODELS}
    return generate(
        seed, nets["model"], rollout_net=nets["rollout_model"], opponent_net=nets["opponent_model"], **rest
    ).arrays()


def gen(
    out: str | Path,
    seed: int,
    workers: int,
    model: str | None = None,
    seconds: float | None = None,
    games: int | None = None,
    rollouts: int = 6,
    discard_keep: float = 1.0,
    label_upcards: bool = True,
    rollout_model: str | None = None,
    opponent_model: str | None = None,
    value_discards: int = 0,
    num_players: int = 4,
    contracts: Sequence[int] = ALL_CONTRACTS,
    log: Any = print,
) -> Path:
    """Generate one shard with ``workers`` processes (seeds ``seed * 1000 + i``); its path. The
    options are :func:`scorer_data.generate`'s (``*_model``: the files of its ``*_net``)."""
    options = {"num_players": num_players, "contracts": list(contracts), "model": model}
    options |= {"seconds": seconds, "games": games, "rollouts": rollouts, "discard_keep": discard_keep}
    options |= {"label_upcards": label_upcards, "rollout_model": rollout_model}
    options |= {"opponent_model": opponent_model, "value_discards": value_discards}
    t0 = time.monotonic()
    jobs = [(seed * 1000 + i, options) for i in range(workers)]
    if workers == 1:
        merged = merge([_gen_worker(jobs[0])])
    else:  # the arena's workers end with this command however it ends (Ctrl-C, a kill)
        merged = merge(map_in_workers([(_gen_worker, (job,)) for job in jobs], workers))
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"seed": seed, "workers": workers, **options, "wall_s": round(time.monotonic() - t0, 1)}
    merged["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(path, **merged)  # type: ignore[arg-type]
    stats = merged["stats"]
    valued = int(discard_pairs(merged["pair_x"]).sum())
    log(
        f"{path}: {stats[0]} games, {len(merged['pair_a']) - valued} upcard decisions, "
        f"{valued} valued discard pairs ({stats[2]} rollouts), "
        f"{len(merged['disc_y'])} discards, {meta['wall_s']} s"
    )
    return path


def discard_pairs(pair_x: np.ndarray) -> np.ndarray:
    """Which pairs are valued discards (``gen --value-discards``), not upcard decisions."""
    return (pair_x[:, 0, KIND_AT + DISCARD_Q] > 0.5) | (pair_x[:, 0, KIND_AT + DOWN_DISCARD_Q] > 0.5)


def merge(parts: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One set of arrays from several (discard offsets re-based)."""
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for p in parts:
        offsets.append(p["disc_offsets"][1:] + base)
        base += int(p["disc_offsets"][-1])
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("pair_x", "pair_a", "pair_se", "disc_x")}
    out["pair_x"], out["disc_x"] = out["pair_x"].astype(np.float16), out["disc_x"].astype(np.float16)
    out["disc_offsets"] = np.concatenate(offsets)
    out["disc_y"] = np.concatenate([p["disc_y"] for p in parts])
    out["stats"] = np.sum([p["stats"] for p in parts], axis=0)
    return out


def load_shards(paths: Sequence[str | Path]) -> dict[str, np.ndarray]:
    """Every shard's arrays, merged."""
    parts = []
    for path in paths:
        with np.load(path) as z:
            parts.append({k: z[k] for k in z.files if k != "meta"})
    return merge(parts)


# a fit's costs are in tens of points (the rollout advantages are divided by this); a saved
# scorer's last layer is scaled back, so that its costs are in points
SCALE = 10.0
BATCH = 512


@dataclass
class FitData:
    """A fit's examples as tensors: the pairs (upcard decisions, valued discards) and the discard
    decisions, padded to the largest candidate set (the padding masked out)."""

    pair_x: torch.Tensor  # (pairs, 2, INPUT_SIZE): [take/buy, draw/pass], or two discards
    pair_a: torch.Tensor  # (pairs,): the rollout advantage of the first over the second, points
    disc_x: torch.Tensor  # (decisions, k, INPUT_SIZE)
    disc_mask: torch.Tensor  # (decisions, k): a real candidate, not padding
    disc_y: torch.Tensor  # (decisions,): the chosen candidate (the planner's)


def fit_data(shards: Sequence[str | Path], valued_discards: bool = True) -> FitData:
    """Every shard's examples (without the valued discard pairs unless ``valued_discards``)."""
    data = load_shards(shards)
    if not valued_discards:
        keep = ~discard_pairs(data["pair_x"])
        data.update({k: data[k][keep] for k in ("pair_x", "pair_a", "pair_se")})
    sizes = np.diff(data["disc_offsets"])
    dm = np.arange(int(sizes.max()) if len(sizes) else 1) < sizes[:, None]
    dx = np.zeros((*dm.shape, INPUT_SIZE), dtype=np.float32)
    dx[dm] = data["disc_x"]  # the candidates in order, decision by decision (C order of the mask)
    return FitData(
        pair_x=torch.tensor(data["pair_x"].astype(np.float32)),
        pair_a=torch.tensor(data["pair_a"].astype(np.float32)),
        disc_x=torch.tensor(dx),
        disc_mask=torch.tensor(dm),
        disc_y=torch.tensor(data["disc_y"]),
    )


def scorer_model(hidden: Sequence[int], start: ScorerNet | None = None) -> torch.nn.Sequential:
    """The network a fit trains (costs in tens of points); ``start``: that scorer's layers and weights."""
    if start is not None:
        hidden = [w.shape[1] for w in start.weights[:-1]]
    linear = [torch.nn.Linear(a, b) for a, b in itertools.pairwise([INPUT_SIZE, *hidden, 1])]
    model = torch.nn.Sequential(*[m for layer in linear for m in (layer, torch.nn.ReLU())][:-1])
    if start is not None:  # the saved last layer is in points: back to tens
        for i, (m, w, b) in enumerate(zip(linear, start.weights, start.biases)):
            gain = SCALE if i == len(linear) - 1 else 1.0
            with torch.no_grad():
                m.weight.copy_(torch.tensor(w.T / gain))
                m.bias.copy_(torch.tensor(b / gain))
    return model


def saved_scorer(model: torch.nn.Sequential, config: dict[str, Any]) -> ScorerNet:
    """The fitted network as a scorer, its costs in points."""
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    gains = [1.0] * (len(linears) - 1) + [SCALE]
    weights = [m.weight.detach().numpy().T.copy() * g for m, g in zip(linears, gains)]
    biases = [m.bias.detach().numpy().copy() * g for m, g in zip(linears, gains)]
    return ScorerNet(weights, biases, config)


def own_discard_targets(start: ScorerNet, data: FitData) -> torch.Tensor:
    """The starting scorer's own choice probabilities over each discard decision's candidates
    (``softmax(-cost)``, costs in tens of points): targets at which its discards learn nothing."""
    n, k = data.disc_mask.shape
    own = start.costs(data.disc_x.numpy().reshape(-1, INPUT_SIZE)).reshape(n, k) / SCALE
    return torch.softmax(torch.tensor(-own, dtype=torch.float32).masked_fill(~data.disc_mask, -1e9), 1)


def pair_loss(model: torch.nn.Module, data: FitData, ix: np.ndarray, hub: torch.nn.Module) -> torch.Tensor:
    """Huber loss of the two candidates' cost difference against the rollout advantage."""
    c = model(data.pair_x[ix].reshape(-1, INPUT_SIZE)).reshape(-1, 2)
    return hub(c[:, 0] - c[:, 1], data.pair_a[ix] / SCALE)


def discard_logits(model: torch.nn.Module, data: FitData, ix: np.ndarray) -> torch.Tensor:
    c = model(data.disc_x[ix].reshape(-1, INPUT_SIZE)).reshape(len(ix), data.disc_x.shape[1])
    return (-c).masked_fill(~data.disc_mask[ix], -1e9)


def discard_loss(
    model: torch.nn.Module, data: FitData, ix: np.ndarray, targets: torch.Tensor
) -> torch.Tensor:
    """Cross-entropy of the costs' softmin over each decision's candidates to ``targets`` (the
    chosen candidates, or probabilities over them)."""
    return torch.nn.functional.cross_entropy(discard_logits(model, data, ix), targets[ix])


def holdout_metrics(
    model: torch.nn.Module, data: FitData, pairs: np.ndarray, discards: np.ndarray, hub: torch.nn.Module
) -> dict[str, float]:
    """How the network does on the held-out pairs and discards."""
    with torch.no_grad():
        m: dict[str, float] = {}
        if len(pairs):
            c = model(data.pair_x[pairs].reshape(-1, INPUT_SIZE)).reshape(-1, 2)
            pred = (c[:, 0] - c[:, 1]) * SCALE
            truth = data.pair_a[pairs]
            m["pair_huber"] = float(hub(pred / SCALE, truth / SCALE))
            # of held-out decisions: the share where the predicted sign agrees with the label's
            m["pair_sign_agree"] = float(((pred < 0) == (truth < 0)).float().mean())
            # the label value of the network's choices, against always passing / planner's
            m["pair_gain"] = float(torch.where(pred < 0, truth, torch.zeros_like(truth)).mean())
            m["pair_best_gain"] = float(torch.clamp(truth, max=0).mean())
        if len(discards):
            logits = discard_logits(model, data, discards)
            m["discard_agree"] = float((logits.argmax(1) == data.disc_y[discards]).float().mean())
        return m


def _batch(order: np.ndarray, step: int) -> np.ndarray:
    """The ``step``-th batch of ``order``, wrapping around (none when ``order`` is empty)."""
    return order[(step * BATCH) % len(order) :][:BATCH] if len(order) else order


def _train(
    model: torch.nn.Module,
    loss: Callable[[np.ndarray, np.ndarray], torch.Tensor],
    train: tuple[np.ndarray, np.ndarray],
    rng: np.random.Generator,
    epochs: int,
    lr: float,
    report: Callable[[int], None],
) -> None:
    """``epochs`` of Adam on a one-cycle schedule; a step's ``loss`` is of a batch of the training
    pairs and one of the discards (``train``); ``report(epoch)`` every ten epochs and the last."""
    pair_train, disc_train = train
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = max(1, max(len(pair_train), len(disc_train)) // BATCH)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps_per_epoch)
    for epoch in range(epochs):
        pairs, discards = rng.permutation(pair_train), rng.permutation(disc_train)
        for s in range(steps_per_epoch):
            opt.zero_grad()
            loss(_batch(pairs, s), _batch(discards, s)).backward()
            opt.step()
            sched.step()
        if epoch == epochs - 1 or epoch % 10 == 0:
            report(epoch)


def fit(
    shards: Sequence[str | Path],
    out: str | Path,
    hidden: Sequence[int] = (128, 128),
    epochs: int = 30,
    lr: float = 1e-3,
    seed: int = 0,
    huber: float = 30.0,
    discard_weight: float = 1.0,
    holdout: float = 0.1,
    log: Any = print,
    init: str | Path | None = None,
    valued_discards: bool = True,
    own_discards: bool = False,
) -> dict[str, float]:
    """Fit a scorer to the shards and save it to ``out``; held-out metrics. ``init``: start from
    that saved scorer (its widths replace ``hidden``); without ``valued_discards`` the valued
    discard pairs are left out; ``own_discards``: the discards' targets are ``init``'s own choice
    probabilities, not the planner's choices (ValueError without ``init``)."""
    if own_discards and init is None:
        raise ValueError("own_discards keeps the starting scorer's discards: give init")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    data = fit_data(shards, valued_discards)
    split = [np.split(rng.permutation(n), [int(n * holdout)]) for n in (len(data.pair_a), len(data.disc_y))]
    (pair_held, pair_train), (disc_held, disc_train) = split  # a random ``holdout`` of each held out
    start = ScorerNet.load(init) if init is not None else None
    targets = data.disc_y
    if own_discards and start is not None and len(data.disc_y):
        targets = own_discard_targets(start, data)
        data.disc_y = targets.argmax(1)  # what the held-out agreement compares with
    model = scorer_model(hidden, start)
    hub = torch.nn.HuberLoss(delta=huber / SCALE)

    def loss(pairs: np.ndarray, discards: np.ndarray) -> torch.Tensor:
        total = pair_loss(model, data, pairs, hub) if len(pairs) else torch.zeros(())
        if len(discards):
            total = total + discard_weight * discard_loss(model, data, discards, targets)
        return total

    def report(epoch: int) -> None:
        shown = holdout_metrics(model, data, pair_held, disc_held, hub)
        log(f"epoch {epoch + 1}/{epochs}: " + ", ".join(f"{k} {v:.4f}" for k, v in shown.items()))

    _train(model, loss, (pair_train, disc_train), rng, epochs, lr, report)
    metrics = holdout_metrics(model, data, pair_held, disc_held, hub)
    widths = [m.out_features for m in model if isinstance(m, torch.nn.Linear)][:-1]
    config = {"shards": [str(s) for s in shards], "hidden": widths, "epochs": epochs, "lr": lr, "seed": seed}
    config |= {"huber": huber, "discard_weight": discard_weight, "init": None if init is None else str(init)}
    config |= {"valued_discards": valued_discards, "own_discards": own_discards, "pairs": len(data.pair_a)}
    config |= {"discards": len(data.disc_y), "holdout_metrics": metrics}
    saved_scorer(model, config).save(out)
    log(f"saved {out}: {len(data.pair_a)} upcard decisions, {len(data.disc_y)} discards")
    return metrics


# --- the options of the stages (gen, fit) and of the loop's method -------------------------------


def _widths(text: str) -> tuple[int, ...]:
    widths = tuple(int(h) for h in text.split(",") if h.strip().isdecimal())
    if len(widths) != text.count(",") + 1 or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"layer widths are comma-separated positive ints, got {text!r}")
    return widths


def _scorer_file(text: str) -> str:
    """An argparse ``type``: a saved scorer, read to check it."""
    try:
        ScorerNet.load(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _shard_problem(path: str) -> str | None:
    """Why ``path`` is no shard written by gen (None when it is one)."""
    if not Path(path).is_file():
        return f"no shard at {path!r}"
    try:
        load_shards([path])
    except (OSError, ValueError, KeyError, EOFError) as err:
        return f"{path!r} is not a shard written by gen ({err})"
    return None


@dataclass
class GenStage:
    """``shanghai-train scorer gen``: one shard of labelled decisions; the fields are :func:`gen`'s."""

    out: str = option("", "the shard to write (.npz)", type=str, required=True)
    seed: int = option(0, type=int_in(0, 2**31 - 1))
    workers: int = option(2, type=int_in(1))
    model: str | None = option(None, "the behaviour scorer; the planner if omitted", type=_scorer_file)
    seconds: float | None = option(None, "play per worker", type=number_in(1.0))
    games: int | None = option(None, "... or this many games each", type=int_in(1))
    rollouts: int = option(6, "rollouts per upcard candidate", type=int_in(1))
    discard_keep: float = option(1.0, "fraction of discards kept", type=number_in(0.0, 1.0))
    label_upcards: bool = option(
        True, "no upcard decisions valued", flag="--no-upcards", action="store_false"
    )
    value_discards: int = option(
        0,
        "also value the behaviour player's K best discards by rollouts (0: off; 2 or more)",
        type=int_in(0),
        metavar="K",
    )
    rollout_model: str | None = option(
        None, "a scorer playing the behaviour seats in rollouts (default: the planner)", type=_scorer_file
    )
    opponent_model: str | None = option(
        None, "a scorer that also sits as some games' opponents", type=_scorer_file
    )


@dataclass
class FitStage:
    """``shanghai-train scorer fit``: fit a scorer to shards; the fields are :func:`fit`'s parameters."""

    shards: tuple[str, ...] = option((), "shards written by gen (.npz)", flag="shards", nargs="+")
    out: str = option("", f"the scorer to write ({EXTENSION})", type=str, required=True)
    hidden: tuple[int, ...] = option((128, 128), "hidden layer widths, e.g. 128,128", type=_widths)
    epochs: int = option(30, type=int_in(1))
    lr: float = option(1e-3, type=number_in(0.0, None, low_open=True))
    seed: int = option(0, type=int_in(0, 2**31 - 1))
    huber: float = option(30.0, type=number_in(0.0, None, low_open=True))
    discard_weight: float = option(1.0, type=number_in(0.0))
    init: str | None = option(None, "start from this saved scorer's weights", type=_scorer_file)
    own_discards: bool = option(
        False,
        "the discards' targets are the --init scorer's own choices, not the planner's (no teacher)",
        action="store_true",
    )
    valued_discards: bool = option(
        True,
        "leave out the valued discard pairs of shards made with gen --value-discards",
        flag="--no-valued-discards",
        action="store_false",
    )


# each stage's options and what it does (its --help)
STAGES = {
    "gen": (GenStage, "play games and label their decisions (one shard)"),
    "fit": (FitStage, "fit a scorer to shards"),
}


@dataclass
class ScorerOptions:
    """``shanghai-train scorer``'s own options; the run's (``--players``, ``--init`` a saved scorer:
    rounds of its own play, ``--env-workers``: the processes of a round's games, ...) are the loop's."""

    games: int = 100  # games each worker plays in a round
    rollouts: int = GenStage.rollouts  # rollouts per upcard candidate
    discard_games: int = 150  # games per worker of the planner's discards, before the first round
    hidden: tuple[int, ...] = FitStage.hidden  # the network's hidden layers (with --init: that scorer's)
    epochs: int = FitStage.epochs  # epochs of each round's fit (own play made shanghai with 10)
    lr: float = FitStage.lr  # the fits' learning rate (own play made shanghai with 2e-4)


def _quiet(text: str) -> None:
    """The stages' messages inside the loop, which reports the rounds itself."""


class Scorer:
    """Expert iteration as a method of ``shanghai-train``'s loop: a step is a round (one shard
    played by the latest scorer, then a fit on every shard so far), kept in ``rounds/``; a round's
    env steps are the moves of its games, its seed ``seed + 1 + round``."""

    Options = ScorerOptions
    player_file = "model" + EXTENSION

    def setup(self, config: RunConfig, device: torch.device) -> None:
        if config.facts:
            raise ValueError("--facts: the scorer describes each move by features of its own; leave it out")
        if tuple(config.opponents) != ("self",):
            raise ValueError(
                "--opponents: the scorer's tables draw greedy or planner bots per game (with --init, "
                "itself); leave it out"
            )
        self.config = config
        self.opt = ScorerOptions(**config.method_options)
        self.own_play = bool(config.init)
        # the planner before the first fit: no layers (not ``net``, which the loop checks as a
        # torch module; a ScorerNet refuses non-finite weights itself)
        self.scorer = ScorerNet([], [], {})
        if config.init:
            try:
                self.scorer = ScorerNet.load(config.init)
            except ValueError as err:
                raise ValueError(f"argument --init: {err}") from None
        self.folder = Path(config.out) / "rounds"
        self.round = 0
        self.shards: list[str] = []  # file names in ``folder``, in the order they are fitted

    def _gen(self, name: str, seed: int, games: int, **options: Any) -> int:
        """A shard ``name`` in the rounds' folder; the moves of its games."""
        c, o = self.config, self.opt
        out, table = self.folder / name, {"num_players": c.players, "contracts": c.contracts}
        gen(out, seed, c.env_workers, games=games, rollouts=o.rollouts, log=_quiet, **table, **options)  # type: ignore[arg-type]
        self.shards.append(name)
        with np.load(self.folder / name) as z:
            return int(z["stats"][1])

    def step(self) -> dict[str, float]:
        c, o, r = self.config, self.opt, self.round
        moves = 0
        if not self.own_play and not self.shards:
            moves += self._gen("discards.npz", c.seed, o.discard_games, discard_keep=0.5, label_upcards=False)
        latest = self.folder / f"scorer{r}{EXTENSION}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.scorer.save(latest)  # the workers read the player from a file
        model = str(latest) if self.scorer.weights else None
        mine = {"rollout_model": model, "opponent_model": model, "discard_keep": 0.3} if self.own_play else {}
        options = {"model": model, "discard_keep": 0.1} | mine
        moves += self._gen(f"round{r}.npz", c.seed + 1 + r, o.games, **options)
        fitted = self.folder / f"scorer{r + 1}{EXTENSION}"
        own = {"init": latest, "own_discards": True} if self.own_play else {}
        shards = [self.folder / s for s in self.shards]
        metrics = fit(shards, fitted, o.hidden, o.epochs, o.lr, c.seed, log=_quiet, **own)  # type: ignore[arg-type]
        self.scorer = ScorerNet.load(fitted)
        self.round += 1
        counts = {k: float(self.scorer.config[k]) for k in ("pairs", "discards")}
        return {"env_steps": moves, "round": float(self.round), **counts, **metrics}

    def state_dict(self) -> dict[str, Any]:
        """Tensors and plain values only (a checkpoint loads without unpickling code)."""
        return {
            "round": self.round,
            "shards": list(self.shards),
            "weights": [torch.from_numpy(w) for w in self.scorer.weights],
            "biases": [torch.from_numpy(b) for b in self.scorer.biases],
            "config": json.dumps(self.scorer.config),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.round, self.shards = int(state["round"]), [str(s) for s in state["shards"]]
        weights = [w.numpy() for w in state["weights"]]
        self.scorer = ScorerNet(weights, [b.numpy() for b in state["biases"]], json.loads(state["config"]))

    def export(self, path: str, meta: dict[str, Any]) -> None:
        ScorerNet(self.scorer.weights, self.scorer.biases, {**self.scorer.config, **meta}).save(path)


# --- shanghai-train scorer gen|fit: one stage at a time -----------------------------------------


def tool_parser(name: str) -> argparse.ArgumentParser:
    """The command line of ``shanghai-train scorer NAME`` (one of :data:`STAGES`)."""
    options, description = STAGES[name]
    parser = Parser(prog=f"shanghai-train scorer {name}", description=description)
    add_options(parser, options)
    return parser


def _usage_problem(name: str, args: argparse.Namespace) -> str | None:
    """What argparse cannot see wrong in a stage's command line (None: nothing)."""
    problem = output_file_problem(args.out)
    if problem:
        return f"argument --out: {problem}"
    if name == "gen" and (args.seconds is None) == (args.games is None):
        return "give one of --seconds and --games"
    if name == "gen" and args.value_discards == 1:
        return "argument --value-discards: 0 (off), or the number of discards valued, 2 or more"
    if name == "gen" and not args.out.endswith(".npz"):  # numpy would add it, and the log not
        return f"argument --out: a shard is saved as .npz, got {args.out!r}"
    if name == "fit" and not args.out.endswith(EXTENSION):
        return f"argument --out: a scorer is saved as {EXTENSION}, got {args.out!r}"
    if name == "fit" and args.own_discards and args.init is None:
        return "argument --own-discards: the targets are the --init scorer's own choices; give --init"
    # every option checked first, then the shards read
    return next(filter(None, map(_shard_problem, getattr(args, "shards", ()))), None)


def tool_main(argv: Sequence[str]) -> int:
    """``shanghai-train scorer gen|fit ...``: one stage of expert iteration."""
    name = argv[0]
    if name not in STAGES:
        Parser(prog="shanghai-train scorer").error(f"no stage {name!r}; the stages are {', '.join(STAGES)}")
    parser = tool_parser(name)
    args = parser.parse_args(argv[1:])
    problem = _usage_problem(name, args)
    if problem:
        parser.error(problem)
    # the options' names are the stages' parameters (the parser's own bookkeeping left out)
    given = {k: v for k, v in vars(args).items() if not k.startswith("_")}
    try:
        (gen if name == "gen" else fit)(**given)
    except ValueError as err:  # what the data cannot give (too few decisions, ...)
        parser.error(str(err))
    return 0
