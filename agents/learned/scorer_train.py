"""Training the scorer (:mod:`shanghai_env.agents.learned.scorer`): generate, fit, repeat.

Expert iteration without search at play time:

1. ``gen``: the behaviour player (the planner at first, then the latest scorer) plays games;
   every upcard decision it meets is valued by coupled rollouts from the true state, every
   discard is labelled with the planner's choice (:mod:`shanghai_env.agents.learned.scorer_data`).
   Workers run in parallel processes, each from its own seed, for a number of seconds or games;
   the shard is written once, as one ``.npz``, so a run cut off loses only the shard in progress.
2. ``fit``: a network is fitted to every shard given: for upcard pairs, the difference of the
   two costs to the rollout advantage (Huber loss, in points); for discards, cross-entropy of
   the costs' softmin to the planner's choice. Fitting is seeded and takes seconds.
3. Play the new scorer, generate again from its games, refit on everything.

``python -m shanghai_env.agents.learned.scorer_train gen --help`` and ``fit --help``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.scorer import DISCARD_Q, DOWN_DISCARD_Q, INPUT_SIZE, KIND_AT, ScorerNet
from shanghai_env.cli import int_in, number_in, options_once, output_file_problem, prepare_output
from shanghai_env.cli import run as run_cli

# a worker's job: its seed and the options every worker of the shard shares
Job = tuple[int, dict[str, Any]]
_MODELS = ("model", "rollout_model", "opponent_model")
# run's fits: epochs of the expert-iteration rounds; with --own-play a gentler fine-tune of the latest
RUN_EPOCHS = 30
OWN_PLAY_EPOCHS = 10
OWN_PLAY_LR = 2e-4


def _net(path: str | None) -> ScorerNet | None:
    return ScorerNet.load(path) if path else None


def _in_workers(worker: Callable[[Job], Any], seed: int, workers: int, options: dict[str, Any]) -> list[Any]:
    """``worker`` on seeds ``seed * 1000 + i``, in ``workers`` spawned processes (in this one
    when there is one)."""
    jobs = [(seed * 1000 + i, options) for i in range(workers)]
    if workers == 1:
        return [worker(jobs[0])]
    from shanghai_env.agents.arena.workers import map_in_workers

    # the arena's workers end with this command however it ends (Ctrl-C, a kill), not minutes later
    return map_in_workers([(worker, (job,)) for job in jobs], workers)


def _gen_worker(job: Job) -> dict[str, np.ndarray]:
    from shanghai_env.agents.learned.scorer_data import generate

    seed, options = job
    rest = {k: v for k, v in options.items() if k not in _MODELS}
    return generate(
        seed,
        _net(options["model"]),
        rollout_net=_net(options["rollout_model"]),
        opponent_net=_net(options["opponent_model"]),
        **rest,
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
) -> Path:
    """Generate one shard with ``workers`` processes (seeds ``seed * 1000 + i``); its path.
    ``rollout_model``, ``opponent_model`` and ``value_discards``: see
    :func:`scorer_data.generate` (rollout_net, opponent_net)."""
    options = {
        "model": model,
        "seconds": seconds,
        "games": games,
        "rollouts": rollouts,
        "discard_keep": discard_keep,
        "label_upcards": label_upcards,
        "rollout_model": rollout_model,
        "opponent_model": opponent_model,
        "value_discards": value_discards,
    }
    t0 = time.monotonic()
    parts = _in_workers(_gen_worker, seed, workers, options)
    merged = merge(parts)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"seed": seed, "workers": workers, **options, "wall_s": round(time.monotonic() - t0, 1)}
    merged["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(path, **merged)  # type: ignore[arg-type]
    stats = merged["stats"]
    valued = int(discard_pairs(merged["pair_x"]).sum())
    print(
        f"{path}: {stats[0]} games, {len(merged['pair_a']) - valued} upcard decisions, "
        f"{valued} valued discard pairs ({stats[2]} rollouts), "
        f"{len(merged['disc_y'])} discards, {meta['wall_s']} s"
    )
    return path


def _probe_worker(job: Job) -> np.ndarray:
    from shanghai_env.agents.learned.scorer_data import probe_rule

    seed, options = job
    net = _net(options["model"])
    return probe_rule(
        seed,
        net,
        rule=options["rule"],
        games=options["games"],
        rollouts=options["rollouts"],
        rollout_net=net,
        opponent_net=net,
    )


def probe(
    seed: int, workers: int, games: int, rollouts: int, model: str | None = None, rule: str = "down"
) -> str:
    """:func:`scorer_data.probe_rule` in ``workers`` processes (seeds ``seed * 1000 + i``), the
    network (or the planner) in the behaviour seats, the rollouts and some tables' opponents;
    one line: the mean difference with its 95% interval over decisions."""
    from shanghai_env.agents.learned.scorer_data import PROBES

    options = {"model": model, "rule": rule, "games": games, "rollouts": rollouts}
    parts = _in_workers(_probe_worker, seed, workers, options)
    rows = np.concatenate(parts)
    per = rows.mean(axis=1)
    se_each = rows.std(axis=1, ddof=1) / np.sqrt(rows.shape[1])
    mean = float(per.mean()) if len(per) else float("nan")
    half = 1.96 * float(per.std(ddof=1)) / np.sqrt(len(per)) if len(per) > 1 else float("nan")
    against = int((per > 2 * se_each).sum())
    return (
        f"{len(per)} decisions ({workers * games} games): {PROBES[rule]}, relative deal score "
        f"{mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}] (lower: the rule is better); "
        f"the other move better by two standard errors at {against} ({against / max(1, len(per)):.1%})"
    )


def discard_pairs(pair_x: np.ndarray) -> np.ndarray:
    """Which pairs are valued discards (``gen --value-discards``), not upcard decisions: read
    from the decision kind in the context block of their first row."""
    return (pair_x[:, 0, KIND_AT + DISCARD_Q] > 0.5) | (pair_x[:, 0, KIND_AT + DOWN_DISCARD_Q] > 0.5)


def merge(parts: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One set of arrays from several (discard offsets re-based)."""
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for p in parts:
        offsets.append(p["disc_offsets"][1:] + base)
        base += int(p["disc_offsets"][-1])
    return {
        "pair_x": np.concatenate([p["pair_x"] for p in parts]).astype(np.float16),
        "pair_a": np.concatenate([p["pair_a"] for p in parts]),
        "pair_se": np.concatenate([p["pair_se"] for p in parts]),
        "disc_x": np.concatenate([p["disc_x"] for p in parts]).astype(np.float16),
        "disc_offsets": np.concatenate(offsets),
        "disc_y": np.concatenate([p["disc_y"] for p in parts]),
        "stats": np.sum([p["stats"] for p in parts], axis=0),
    }


def load_shards(paths: Sequence[str | Path]) -> dict[str, np.ndarray]:
    """Every shard's arrays, merged."""
    parts = []
    for path in paths:
        with np.load(path) as z:
            parts.append({k: z[k] for k in z.files if k != "meta"})
    return merge(parts)


# the network's margin between the two candidates, in points: where its choice is close or clear
MARGINS = (0.0, 5.0, 10.0, 20.0)


def label_stats(shards: Sequence[str | Path], models: Sequence[str | Path] = ()) -> dict[str, Any]:
    """How much of the upcard labels is signal, and how each scorer's choices stand against
    them. A label is the mean of coupled rollout differences, so its squared standard error
    estimates the rollouts' noise in it; what is left of the labels' variance is the spread of
    the moves' values from the true states (hidden cards included, so more than a player's view
    can explain)."""
    data = load_shards(shards)
    keep = ~discard_pairs(data["pair_x"])
    x = data["pair_x"][keep].astype(np.float32)
    a = data["pair_a"][keep].astype(np.float64)
    se = data["pair_se"][keep].astype(np.float64)
    if len(a) < 2:
        raise ValueError(f"the shards hold {len(a)} upcard decisions; the labels' report needs at least 2")
    var = float(a.var())
    noise = float(np.nanmean(se**2)) if np.isfinite(se).any() else float("nan")  # nan: one rollout
    stats: dict[str, Any] = {
        "decisions": len(a),
        "label_sd": float(np.sqrt(var)),
        "median_se": float(np.nanmedian(se)) if np.isfinite(se).any() else float("nan"),
        "noise_share": noise / var if var > 0 else float("nan"),
        "signal_sd": float(np.sqrt(max(var - noise, 0.0))),
        "best_value": float(np.minimum(a, 0.0).mean()),
        "models": {},
    }
    for path in models:
        costs = ScorerNet.load(path).costs(x.reshape(-1, INPUT_SIZE)).reshape(-1, 2)
        margin = costs[:, 0] - costs[:, 1]  # below zero: it takes (or buys) the upcard
        agree = (margin < 0) == (a < 0)
        bands = []
        for lo, hi in zip(MARGINS, (*MARGINS[1:], np.inf)):
            band = (np.abs(margin) >= lo) & (np.abs(margin) < hi)
            agreed = float(agree[band].mean()) if band.any() else float("nan")
            bands.append((lo, hi, float(band.mean()), agreed))
        stats["models"][str(path)] = {
            "value": float(np.where(margin < 0, a, 0.0).mean()),
            "corr": float(np.corrcoef(margin, a)[0, 1]) if margin.std() > 0 and a.std() > 0 else float("nan"),
            "agree": float(agree.mean()),
            "bands": bands,
        }
    return stats


def label_lines(stats: dict[str, Any]) -> list[str]:
    """:func:`label_stats` in words."""
    lines = [
        f"{stats['decisions']:,} upcard decisions: labels' sd {stats['label_sd']:.1f} points, median "
        f"standard error {stats['median_se']:.1f}; the rollouts' noise is {stats['noise_share']:.0%} of "
        f"the labels' variance (what is left: sd {stats['signal_sd']:.1f}); the value of choosing by "
        f"the labels themselves {stats['best_value']:+.2f} points a decision (always passing: 0)"
    ]
    for path, m in stats["models"].items():
        bands = "; ".join(
            (f"{lo:g}-{hi:g}" if np.isfinite(hi) else f">={lo:g}") + f": {share:.0%} of them, {agree:.0%}"
            for lo, hi, share, agree in m["bands"]
        )
        lines.append(
            f"{path}: value of its choices {m['value']:+.2f} points a decision; its cost difference "
            f"correlates {m['corr']:.3f} with the label; its choice has the label's sign on "
            f"{m['agree']:.1%}; by its margin in points: {bands}"
        )
    return lines


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
    offs = data["disc_offsets"]
    sizes = np.diff(offs)
    k = int(sizes.max()) if len(sizes) else 1
    dx = np.zeros((len(sizes), k, INPUT_SIZE), dtype=np.float32)
    dm = np.zeros((len(sizes), k), dtype=bool)
    flat = data["disc_x"].astype(np.float32)
    for i, (a, b) in enumerate(itertools.pairwise(offs)):
        dx[i, : b - a] = flat[a:b]
        dm[i, : b - a] = True
    return FitData(
        pair_x=torch.tensor(data["pair_x"].astype(np.float32)),
        pair_a=torch.tensor(data["pair_a"].astype(np.float32)),
        disc_x=torch.tensor(dx),
        disc_mask=torch.tensor(dm),
        disc_y=torch.tensor(data["disc_y"]),
    )


def scorer_model(hidden: Sequence[int], start: ScorerNet | None = None) -> torch.nn.Sequential:
    """The network a fit trains (costs in tens of points); with ``start``, that saved scorer's
    layers and weights."""
    if start is not None:
        hidden = [w.shape[1] for w in start.weights[:-1]]
    layers: list[torch.nn.Module] = []
    width = INPUT_SIZE
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 1))
    model = torch.nn.Sequential(*layers)
    if start is not None:  # the saved last layer is in points: back to tens
        linear = [m for m in model if isinstance(m, torch.nn.Linear)]
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
    return torch.softmax(torch.tensor(-own).masked_fill(~data.disc_mask, -1e9), 1)


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


def _split(rng: np.random.Generator, n: int, holdout: float) -> tuple[np.ndarray, np.ndarray]:
    idx = rng.permutation(n)
    cut = int(n * holdout)
    return idx[cut:], idx[:cut]


def _batch(order: np.ndarray, step: int) -> np.ndarray:
    """The ``step``-th batch of ``order``, wrapping around (none when ``order`` is empty)."""
    return order[(step * BATCH) % len(order) :][:BATCH] if len(order) else order


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
    """Fit a scorer to the shards and save it to ``out``; held-out metrics. With ``init`` the
    network starts from that saved scorer's weights (its hidden widths replace ``hidden``);
    without ``valued_discards`` the shards' valued discard pairs (``gen --value-discards``) are
    left out, their upcard pairs and cloned discards kept. With ``own_discards`` (needs
    ``init``) the discards' targets are the starting scorer's own choice probabilities
    (:func:`own_discard_targets`) instead of the planner's choices: the discards stay the
    player's own while the rollout-valued decisions move, and no teacher's label enters the fit."""
    if own_discards and init is None:
        raise ValueError("own_discards keeps the starting scorer's discards: give init")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    data = fit_data(shards, valued_discards)
    pair_train, pair_held = _split(rng, len(data.pair_a), holdout)
    disc_train, disc_held = _split(rng, len(data.disc_y), holdout)
    start = ScorerNet.load(init) if init is not None else None
    targets = data.disc_y
    if own_discards and start is not None and len(data.disc_y):
        targets = own_discard_targets(start, data)
        data.disc_y = targets.argmax(1)  # what the held-out agreement compares with
    model = scorer_model(hidden, start)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps_per_epoch = max(1, max(len(pair_train), len(disc_train)) // BATCH)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps_per_epoch)
    hub = torch.nn.HuberLoss(delta=huber / SCALE)
    for epoch in range(epochs):
        pairs, discards = rng.permutation(pair_train), rng.permutation(disc_train)
        for s in range(steps_per_epoch):
            loss = torch.zeros(())
            if len(pairs):
                loss = loss + pair_loss(model, data, _batch(pairs, s), hub)
            if len(discards):
                loss = loss + discard_weight * discard_loss(model, data, _batch(discards, s), targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        if epoch == epochs - 1 or epoch % 10 == 0:
            shown = holdout_metrics(model, data, pair_held, disc_held, hub)
            log(f"epoch {epoch + 1}/{epochs}: " + ", ".join(f"{k} {v:.4f}" for k, v in shown.items()))
    metrics = holdout_metrics(model, data, pair_held, disc_held, hub)
    config = {
        "shards": [str(s) for s in shards],
        "hidden": [m.out_features for m in model if isinstance(m, torch.nn.Linear)][:-1],
        "epochs": epochs,
        "lr": lr,
        "seed": seed,
        "huber": huber,
        "discard_weight": discard_weight,
        "init": None if init is None else str(init),
        "valued_discards": valued_discards,
        "own_discards": own_discards,
        "pairs": len(data.pair_a),
        "discards": len(data.disc_y),
        "holdout_metrics": metrics,
    }
    saved_scorer(model, config).save(out)
    log(f"saved {out}: {len(data.pair_a)} upcard decisions, {len(data.disc_y)} discards")
    return metrics


def run_rounds(
    out: str | Path,
    rounds: int,
    seconds: float | None,
    workers: int,
    rollouts: int = 6,
    discard_games: int = 150,
    seed: int = 0,
    hidden: Sequence[int] = (128, 128),
    epochs: int = RUN_EPOCHS,
    log: Any = print,
    games: int | None = None,
    own_play: str | Path | None = None,
    lr: float | None = None,
) -> Path:
    """Expert iteration in ``out``: a discard shard, then ``rounds`` rounds of (generate with the
    latest scorer, the planner in round 0; fit on every shard so far). Every shard and scorer is a
    file; a run started again skips the files that exist, so it resumes where it was cut off.
    Each worker plays ``games`` games a round (the same data on any machine), or plays for
    ``seconds`` (as many games as fit: faster machines make more). Returns the last scorer.

    With ``own_play`` (a saved scorer) the rounds are that scorer's own play and take no label
    from the planner: in each round the latest scorer (``own_play`` first) is the behaviour,
    rollout and opponent player, its upcard decisions are valued by the rollouts it plays on,
    and the next scorer is the latest fine-tuned on every round's shard so far with its own
    discards as targets (``fit --init latest --own-discards``, learning rate ``lr``, 2e-4 if
    not given): approximate policy iteration, docs/training.md ("Rounds of its own play")."""
    if (seconds is None) == (games is None):
        raise ValueError("give one of seconds and games")
    if own_play is not None:
        ScorerNet.load(own_play)  # a clear error before any folder is made or game played
    own_lr = OWN_PLAY_LR if lr is None else lr
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    model: Path | None = None if own_play is None else Path(own_play)
    shards: list[Path] = []
    if own_play is None:
        shards.append(folder / "discards.npz")
        if not shards[0].exists():
            gen(shards[0], seed, workers, None, None, discard_games, rollouts, 0.5, False)
    for r in range(rounds):
        shard = folder / f"round{r}.npz"
        if not shard.exists():
            if own_play is None:
                gen(
                    shard, seed + 1 + r, workers, str(model) if model else None, seconds, games, rollouts, 0.1
                )
            else:  # the latest scorer in every role; its discards are states only (fit below)
                latest = str(model)
                gen(shard, seed + 1 + r, workers, latest, seconds, games, rollouts, 0.3, True, latest, latest)
        shards.append(shard)
        nxt = folder / f"scorer{r + 1}.zip"
        if nxt.exists():
            log(f"round {r}: {nxt} is there (resumed)")
        elif own_play is None:
            log(f"round {r}: fitting {nxt} on {len(shards)} shards")
            fit(shards, nxt, hidden, epochs, seed=seed, log=log)
        else:
            log(f"round {r}: fitting {nxt} from {model} on {len(shards)} shards of its own play")
            fit(shards, nxt, epochs=epochs, lr=own_lr, seed=seed, log=log, init=model, own_discards=True)
        model = nxt
    assert model is not None
    return model


def _evaluation(folder: str | Path) -> tuple[dict[str, Any], list[str], list[float]]:
    """The first player of the evaluation in ``folder`` (``summary.json``'s entry), every player's
    name, and the first player's game score minus the mean of the other seats', per game
    (``games.csv``); ValueError naming the file when the folder holds no whole evaluation."""
    from shanghai_env.agents.arena.report import INCOMPLETE_FILE, is_complete

    folder = Path(folder)
    summary_path, games_path = folder / "summary.json", folder / "games.csv"
    if not is_complete(str(folder)) or not games_path.is_file():
        if (folder / INCOMPLETE_FILE).exists():
            raise ValueError(
                f"{str(folder)!r} holds an evaluation that did not finish writing ({INCOMPLETE_FILE})"
            )
        raise ValueError(f"{str(folder)!r} holds no evaluation (summary.json and games.csv)")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        players = summary["players"]
        names = [str(p["name"]) for p in players]
        first = dict(players[0])
        if not isinstance(first["spec"], str):
            raise ValueError(f"the first player's spec is {first['spec']!r}")
        if len(names) < 2:
            raise ValueError("fewer than two players")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as err:
        why = f"{type(err).__name__}: {err}" if isinstance(err, KeyError) else str(err)
        raise ValueError(f"{str(summary_path)!r} is not an evaluation summary ({why})") from None
    import csv

    try:
        with open(games_path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        diffs = [
            float(r[f"score_{names[0]}"]) - sum(float(r[f"score_{n}"]) for n in names[1:]) / (len(names) - 1)
            for r in rows
        ]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, csv.Error) as err:
        why = f"no column {err}" if isinstance(err, KeyError) else str(err)
        raise ValueError(f"{str(games_path)!r} is not the games of {str(summary_path)!r} ({why})") from None
    if len(diffs) < 2:
        raise ValueError(f"{str(games_path)!r} holds {len(diffs)} games; a curve point needs two or more")
    return first, names, diffs


def curve_points(folders: Sequence[str | Path]) -> list[dict[str, Any]]:
    """One point per evaluation folder (``evaluate.py --out``, first player the model): upcard
    decisions it was fitted to (0 for a bot), and its game score minus the mean of the other
    seats', per game, with a 95% t interval over the duplicate games. ValueError (naming the file)
    for a folder that holds no whole evaluation, or a model that cannot be read."""
    from shanghai_env.agents.arena.stats import t_interval

    points = []
    for folder in folders:
        first, names, diffs = _evaluation(folder)
        mean, ci = t_interval(diffs)
        spec = first["spec"]
        pairs = 0
        if spec.endswith(".zip"):
            pairs = int(ScorerNet.load(spec).config.get("pairs", 0))
        opponents = sorted({n.split("#")[0] for n in names[1:]})
        points.append(
            {
                "name": first["name"],
                "pairs": pairs,
                "opponents": ",".join(opponents),
                "mean": mean,
                "ci95": ci,
            }
        )
    return points


def plot_curve(
    folders: Sequence[str | Path], out: str | Path, points: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Draw :func:`curve_points` (``points``, if already read) against the labelled upcard
    decisions, one line per opponent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = curve_points(folders) if points is None else points
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for opp in sorted({p["opponents"] for p in points}):
        line = sorted((p for p in points if p["opponents"] == opp), key=lambda p: p["pairs"])
        x = [p["pairs"] / 1000 for p in line]
        y = [p["mean"] for p in line]
        err = [[p["mean"] - p["ci95"][0] for p in line], [p["ci95"][1] - p["mean"] for p in line]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"against 3 {opp}")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("upcard decisions valued by rollouts (thousands); 0 = the planner")
    ax.set_ylabel("game score minus the others' mean (lower is better)")
    ax.set_title("The move scorer, full 4-player games (duplicate, 95% CI)")
    ax.legend()
    fig.tight_layout()
    from shanghai_env.agents.arena.report import replace_atomically

    kind = Path(out).suffix.lstrip(".").lower() or "png"
    try:  # a picture cut off half-way never stands where the last one was
        replace_atomically(str(out), lambda tmp: fig.savefig(tmp, dpi=110, format=kind))
    finally:
        plt.close(fig)
    return points


def picture_formats() -> set[str]:
    """The file name endings :func:`plot_curve` can write (matplotlib's formats)."""
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.figure import Figure

    return set(FigureCanvasBase(Figure()).get_supported_filetypes())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shanghai-train-scorer", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,gen,fit,labels,plot,probe}")
    count = int_in(1)
    seed = int_in(0, 2**31 - 1)
    r = sub.add_parser("run", help="rounds of gen and fit in one folder, resuming from the files there")
    options_once(r)
    r.add_argument("--out", required=True, help="the run's folder")
    r.add_argument("--rounds", type=count, default=2)
    r.add_argument("--games", type=count, default=None, help="games per worker and round (default 100)")
    r.add_argument(
        "--seconds", type=number_in(1.0), default=None, help="... or seconds of play per worker and round"
    )
    r.add_argument("--workers", type=count, default=2)
    r.add_argument("--rollouts", type=count, default=6, help="rollouts per upcard candidate")
    r.add_argument("--discard-games", type=count, default=150, help="games per worker of planner discards")
    r.add_argument("--seed", type=seed, default=0)
    r.add_argument("--hidden", type=_widths, default=(128, 128))
    r.add_argument(
        "--epochs",
        type=count,
        default=None,
        help=f"epochs per fit (default {RUN_EPOCHS}; {OWN_PLAY_EPOCHS} with --own-play)",
    )
    r.add_argument(
        "--own-play",
        default=None,
        metavar="MODEL",
        help="rounds of this saved scorer's (.zip) own play, no planner label: each round's latest scorer "
        "plays every role and is fine-tuned with its own discards as targets",
    )
    r.add_argument(
        "--lr",
        type=number_in(0.0, None, low_open=True),
        default=None,
        help=f"the fits' learning rate with --own-play (default {OWN_PLAY_LR:g})",
    )
    g = sub.add_parser("gen", help="play games and label their decisions (one shard)")
    options_once(g)
    g.add_argument("--out", required=True, help="the shard to write (.npz)")
    g.add_argument("--seed", type=seed, default=0)
    g.add_argument("--workers", type=count, default=2)
    g.add_argument("--model", default=None, help="the behaviour scorer (.zip); the planner if omitted")
    g.add_argument("--seconds", type=number_in(1.0), default=None, help="play per worker")
    g.add_argument("--games", type=count, default=None, help="... or this many games each")
    g.add_argument("--rollouts", type=count, default=6, help="rollouts per upcard candidate")
    g.add_argument("--discard-keep", type=number_in(0.0, 1.0), default=1.0, help="fraction of discards kept")
    g.add_argument("--no-upcards", action="store_true", help="no upcard decisions valued")
    g.add_argument(
        "--value-discards",
        type=int_in(0),
        default=0,
        metavar="K",
        help="also value the behaviour player's K best discards by rollouts (0: off; 2 or more)",
    )
    g.add_argument(
        "--rollout-model",
        default=None,
        help="a scorer (.zip) playing the behaviour seats in rollouts (default: the planner)",
    )
    g.add_argument(
        "--opponent-model", default=None, help="a scorer (.zip) that also sits as the opponents of some games"
    )
    f = sub.add_parser("fit", help="fit a scorer to shards")
    options_once(f)
    f.add_argument("shards", nargs="+")
    f.add_argument("--out", required=True, help="the scorer to write (.zip)")
    f.add_argument("--hidden", type=_widths, default=(128, 128), help="hidden layer widths, e.g. 128,128")
    f.add_argument("--epochs", type=count, default=30)
    f.add_argument("--lr", type=number_in(0.0, None, low_open=True), default=1e-3)
    f.add_argument("--seed", type=seed, default=0)
    f.add_argument("--huber", type=number_in(0.0, None, low_open=True), default=30.0)
    f.add_argument("--discard-weight", type=number_in(0.0), default=1.0)
    f.add_argument("--init", default=None, help="start from this saved scorer's weights (.zip)")
    f.add_argument(
        "--own-discards",
        action="store_true",
        help="the discards' targets are the --init scorer's own choices, not the planner's (no teacher)",
    )
    f.add_argument(
        "--no-valued-discards",
        action="store_true",
        help="leave out the valued discard pairs of shards made with gen --value-discards",
    )
    q = sub.add_parser("probe", help="what a fixed rule (going down, laying off) costs, by rollouts")
    options_once(q)
    q.add_argument(
        "--rule",
        choices=("down", "layoff"),
        default="down",
        help="down: going down at once against waiting a turn; layoff: laying off against holding",
    )
    q.add_argument("--model", default=None, help="the behaviour scorer (.zip); the planner if omitted")
    q.add_argument("--games", type=count, default=20, help="games per worker")
    q.add_argument("--rollouts", type=int_in(2), default=8, help="rollouts per decision")
    q.add_argument("--seed", type=seed, default=0)
    q.add_argument("--workers", type=count, default=2)
    lab = sub.add_parser(
        "labels", help="how much of the shards' upcard labels is noise; scorers' choices against them"
    )
    options_once(lab)
    lab.add_argument("shards", nargs="+")
    lab.add_argument("--model", action="append", default=[], help="a scorer (.zip) to compare; repeatable")
    c = sub.add_parser("plot", help="the learning curve from evaluation folders (evaluate.py --out)")
    options_once(c)
    c.add_argument("folders", nargs="+")
    c.add_argument("--out", required=True, help="the picture to write (.png)")
    return parser


def _widths(text: str) -> tuple[int, ...]:
    try:
        widths = tuple(int(h) for h in text.split(","))
    except ValueError:
        widths = ()
    if not widths or min(widths) < 1:
        raise argparse.ArgumentTypeError(
            f"layer widths are comma-separated positive ints (e.g. 128,128), got {text!r}"
        )
    return widths


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.lr is not None and args.own_play is None:
            parser.error(
                "argument --lr: only with --own-play (the expert-iteration fits use the fit default)"
            )
        if args.own_play is not None:
            try:
                ScorerNet.load(args.own_play)
            except ValueError as err:
                parser.error(f"argument --own-play: {err}")
        problem = prepare_output(args.out)
        if problem:
            parser.error(f"argument --out: {problem}")
        if args.seconds is not None and args.games is not None:
            parser.error("give one of --seconds and --games")
        games = args.games if args.games is not None or args.seconds is not None else 100
        epochs = args.epochs
        if epochs is None:
            epochs = RUN_EPOCHS if args.own_play is None else OWN_PLAY_EPOCHS
        run_rounds(
            args.out,
            args.rounds,
            args.seconds,
            args.workers,
            args.rollouts,
            args.discard_games,
            args.seed,
            args.hidden,
            epochs,
            games=games,
            own_play=args.own_play,
            lr=args.lr,
        )
        return 0
    if args.command == "probe":
        if args.model is not None:
            try:
                ScorerNet.load(args.model)
            except ValueError as err:
                parser.error(f"argument --model: {err}")
        print(probe(args.seed, args.workers, args.games, args.rollouts, args.model, args.rule))
        return 0
    if args.command == "labels":
        for path in args.model:
            try:
                ScorerNet.load(path)
            except ValueError as err:
                parser.error(f"argument --model: {err}")
        _check_shards(parser, args.shards)
        try:
            stats = label_stats(args.shards, args.model)
        except ValueError as err:
            parser.error(str(err))
        print("\n".join(label_lines(stats)))
        return 0
    problem = output_file_problem(args.out)
    if problem:
        parser.error(f"argument --out: {problem}")
    if args.command == "plot":
        kind = Path(args.out).suffix.lstrip(".").lower()
        if kind and kind not in picture_formats():
            parser.error(
                f"argument --out: cannot draw a .{kind} picture; end the name with one of: "
                + ", ".join(sorted(picture_formats()))
            )
        try:  # every folder read (and every model opened) before the picture is drawn
            points = curve_points(args.folders)
        except ValueError as err:
            parser.error(str(err))
        for p in plot_curve(args.folders, args.out, points):
            lo, hi = p["ci95"]
            print(
                f"{p['name']}: {p['pairs']} upcard decisions, against {p['opponents']}: "
                f"{p['mean']:+.1f} [{lo:+.1f}, {hi:+.1f}]"
            )
        return 0
    if args.command == "gen":
        if (args.seconds is None) == (args.games is None):
            parser.error("give one of --seconds and --games")
        if args.value_discards == 1:
            parser.error("argument --value-discards: 0 (off), or the number of discards valued, 2 or more")
        for flag, path in (
            ("--model", args.model),
            ("--rollout-model", args.rollout_model),
            ("--opponent-model", args.opponent_model),
        ):
            if path is not None:
                try:
                    ScorerNet.load(path)
                except ValueError as err:
                    parser.error(f"argument {flag}: {err}")
        gen(
            args.out,
            args.seed,
            args.workers,
            args.model,
            args.seconds,
            args.games,
            args.rollouts,
            args.discard_keep,
            not args.no_upcards,
            args.rollout_model,
            args.opponent_model,
            args.value_discards,
        )
        return 0
    if args.own_discards and args.init is None:
        parser.error("argument --own-discards: the targets are the --init scorer's own choices; give --init")
    if args.init is not None:
        try:
            ScorerNet.load(args.init)
        except ValueError as err:
            parser.error(f"argument --init: {err}")
    _check_shards(parser, args.shards)
    fit(
        args.shards,
        args.out,
        args.hidden,
        args.epochs,
        args.lr,
        args.seed,
        args.huber,
        args.discard_weight,
        init=args.init,
        valued_discards=not args.no_valued_discards,
        own_discards=args.own_discards,
    )
    return 0


def _check_shards(parser: argparse.ArgumentParser, shards: Sequence[str]) -> None:
    for s in shards:
        if not Path(s).is_file():
            parser.error(f"no shard at {s!r}")
        try:
            load_shards([s])
        except (OSError, ValueError, KeyError, EOFError) as err:
            parser.error(f"{s!r} is not a shard written by gen ({err})")


def cli() -> None:
    """The ``shanghai-train-scorer`` command."""
    run_cli(main)


if __name__ == "__main__":
    cli()
