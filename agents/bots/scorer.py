"""``scorer``: a network that scores each candidate move from its own features (no search).

It decides take or draw, buy or pass, and which card to discard; each candidate is a row of
features (the decision's context and what the move does to the hand), the network maps a row to
a cost in points and the player plays the cheapest (docs/training.md, "`scorer`"). Everything
else follows :class:`~shanghai_env.agents.bots.planner.PlannerBot`, which this extends. The
network runs in numpy. A saved scorer is a zip container named ``.scorer`` (:data:`EXTENSION`;
one saved as ``.zip`` before loads the same, told by its content) holding ``scorer.json`` and
``weights.npz``; one with no layers is the planner (expert iteration's player before its first fit).
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from shanghai_env.agents.bots.contract import size_deficit
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.handtools import (
    DISCARDS,
    fits_table,
    hand_kinds,
    near_run_end,
    plus,
    points,
    table_melds,
    unseen_counts,
)
from shanghai_env.agents.bots.planner import BLIND_CONTRACT_BUYS, PlannerBot, wanted_ranks
from shanghai_env.cards import JOKER, rank_of
from shanghai_env.engine import Phase, PlayerView
from shanghai_env.melds import contract_size
from shanghai_env.models import shipped_path
from shanghai_env.moves import BUY, DRAW, PASS, TAKE, Move

FORMAT = "shanghai-scorer/1"
EXTENSION = ".scorer"  # a zip container, named for what it holds (a MaskablePPO model is a .zip)

# decision kinds (the phase block of the context)
DRAW_Q, BUY_Q, DISCARD_Q, DOWN_DISCARD_Q = range(4)
KINDS = ("draw", "buy", "discard", "down_discard")

# the context block: contract one-hot (10), decision kind one-hot (4), then 18 facts
KIND_AT = 10
CONTEXT_SIZE = KIND_AT + len(KINDS) + 18
MOVE_SIZE = 16
PASS_ROW = [0.0, 1.0] + [0.0] * (MOVE_SIZE - 2)  # the move block of draw / pass
INPUT_SIZE = CONTEXT_SIZE + MOVE_SIZE


@dataclass
class Candidates:
    """One decision: its kind, its candidate moves and their feature rows (one per move)."""

    kind: int
    moves: list[Move]
    features: np.ndarray  # (len(moves), INPUT_SIZE) float32


class ScorerNet:
    """A multilayer perceptron (ReLU) from a candidate's features to its cost, in numpy."""

    def __init__(
        self, weights: list[np.ndarray], biases: list[np.ndarray], config: dict[str, Any] | None = None
    ):
        config = {} if config is None else config
        problem = layers_problem(weights, biases) or config_problem(config)
        if problem:
            raise ValueError(f"a ScorerNet's {problem}")
        self.weights = [np.asarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.asarray(b, dtype=np.float32) for b in biases]
        self._wide: list[tuple[np.ndarray, np.ndarray]] | None = None  # float64 copies, made on first use
        self.config = dict(config)

    def costs(self, x: np.ndarray) -> np.ndarray:
        """Cost of each row of ``x`` (lower is better)."""
        if not self.weights:
            raise ValueError("a scorer with no layers scores nothing: it plays the planner's choices")
        # in float64: float32 products summed by another CPU's BLAS kernels (AVX-512 or not) differ
        # in the last bits, enough to turn a near tie between two moves the other way
        if self._wide is None:
            self._wide = [
                (w.astype(np.float64), b.astype(np.float64)) for w, b in zip(self.weights, self.biases)
            ]
        h = np.asarray(x, dtype=np.float64)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(self._wide):
            h = h @ w + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h[:, 0]

    def save(self, path: str | Path) -> None:
        """Write the zip container (``scorer.json`` and ``weights.npz``) to ``path``, whatever its
        name (the trainer names it ``.scorer``)."""
        buf = io.BytesIO()
        arrays = {f"w{i}": w for i, w in enumerate(self.weights)}
        np.savez(buf, **arrays, **{f"b{i}": b for i, b in enumerate(self.biases)})  # type: ignore[arg-type]
        meta = {"format": FORMAT, "layers": len(self.weights), "input_size": INPUT_SIZE}
        meta["config"] = self.config
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr("scorer.json", json.dumps(meta, indent=2, sort_keys=True))
            z.writestr("weights.npz", buf.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> ScorerNet:
        """Read a file written by :meth:`save`, or a shipped scorer by its name (``"shanghai"``);
        ValueError naming the file if it is none, of another format, or damaged."""
        path = shipped_path(path)
        try:
            with zipfile.ZipFile(path) as z:
                meta = json.loads(z.read("scorer.json"))
                with np.load(io.BytesIO(z.read("weights.npz"))) as data:
                    arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as err:
            raise ValueError(f"{path}: not a saved scorer ({err})") from None
        meta = meta if isinstance(meta, dict) else {}
        found, inputs, layers = meta.get("format"), meta.get("input_size"), meta.get("layers")
        if found != FORMAT or inputs != INPUT_SIZE:
            raise ValueError(
                f"{path}: a scorer of format {found!r} with {inputs} inputs; "
                f"this version reads {FORMAT!r} with {INPUT_SIZE}"
            )
        # the count must name every array: weights beside a count of 0, the planner or not?
        if not _count(layers) or set(arrays) != {f"{k}{i}" for k in "wb" for i in range(layers)}:
            raise ValueError(f"{path}: not a saved scorer ('layers' is {layers!r}, arrays {sorted(arrays)})")
        weights, biases = [arrays[f"w{i}"] for i in range(layers)], [arrays[f"b{i}"] for i in range(layers)]
        try:
            return cls(weights, biases, meta.get("config", {}))
        except ValueError as err:
            raise ValueError(f"{path}: a damaged scorer: {err}") from None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _count(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _list_of(ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and all(map(ok, v))


# What a scorer's ``config`` (the record of its training: methods/scorer.py's fit) may hold: each
# known key's test and what it must be. Other keys are kept as they are.
_COUNT = (_count, "a count")
_NUMBER = (_number, "a number")
_CONFIG_KEYS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "shards": (_list_of(lambda x: isinstance(x, str)), "a list of file names"),
    "hidden": (_list_of(lambda x: _count(x) and x > 0), "a list of layer sizes"),
    "epochs": _COUNT,
    "pairs": _COUNT,
    "discards": _COUNT,
    "seed": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "lr": _NUMBER,
    "huber": _NUMBER,
    "discard_weight": _NUMBER,
    "holdout_metrics": (
        lambda v: isinstance(v, dict) and all(map(_number, v.values())),
        "an object of numbers",
    ),
}


def config_problem(config: Any) -> str | None:
    """What is wrong with a scorer's ``config`` (a phrase), or None."""
    if not isinstance(config, dict):
        return f"config is {type(config).__name__} {config!r:.60}, not an object of training settings"
    for key, (ok, what) in _CONFIG_KEYS.items():
        if key in config and not ok(config[key]):
            return f"config[{key!r}] is {config[key]!r:.60}, not {what}"
    return None


def layers_problem(weights: Sequence[Any], biases: Sequence[Any]) -> str | None:
    """What is wrong with a network's layers (a phrase), or None: as many biases as weights, sizes
    chaining INPUT_SIZE features to 1 cost, finite numbers (or no layers at all: the planner)."""
    if len(weights) != len(biases):
        return "layers need as many bias vectors as weight matrices"
    size = INPUT_SIZE
    for i, (w, b) in enumerate(zip(weights, biases)):
        w, b = np.asarray(w), np.asarray(b)
        if w.dtype.kind not in "fiu" or b.dtype.kind not in "fiu":
            return f"layer {i} holds {w.dtype}/{b.dtype} values, not numbers"
        if w.ndim != 2 or w.shape[0] != size or b.shape != (w.shape[1],):
            return (
                f"layer {i} maps {w.shape} with bias {b.shape}; layers map {INPUT_SIZE} features "
                "through matching sizes to 1 cost"
            )
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            return f"layer {i} holds NaN or infinite weights"
        size = w.shape[1]
    return f"last layer gives {size} values, not 1 cost" if weights and size != 1 else None


def is_scorer_file(path: str | Path) -> bool:
    """Does ``path`` hold a saved scorer (rather than a MaskablePPO model), whatever its name?"""
    try:
        with zipfile.ZipFile(path) as z:
            return "scorer.json" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


class ScorerBot(PlannerBot):
    """The planner's skeleton with every draw, buy and discard chosen by a :class:`ScorerNet`; without
    one (or with one of no layers) the planner. :meth:`candidates` is what training reads."""

    name = "scorer"

    def __init__(self, net: ScorerNet | None = None, name: str | None = None, seed: int | None = None):
        self.net = net if net is not None and net.weights else None
        super().__init__(name, seed)

    def draw(self, view: PlayerView) -> Move:
        return self._upcard(view, GreedyBot.draw(self, view))  # type: ignore[arg-type]  # the planner's is greedy's

    def buy(self, view: PlayerView) -> Move:
        return self._upcard(view, super().buy(view))

    def _upcard(self, view: PlayerView, prior: Move) -> Move:
        """The network's choice where it is asked, the planner's ``prior`` elsewhere."""
        if self.net is None or not self.asks(view, prior):
            return prior
        return self._choose(self.candidates(view))

    def asks(self, view: PlayerView, prior: Move) -> bool:
        """Is this take-or-draw or buy-or-pass decision put to the network? ``prior`` is the
        planner's move (a buy it would make is always asked)."""
        if view.phase == Phase.DRAW:
            return view.upcard != JOKER and self.upcard_matters(view, buying=False)
        buyable = view.phase == Phase.BUY and view.upcard >= 0 and not view.down[view.player]
        return buyable and (prior == BUY or self.upcard_matters(view, buying=True))

    def discard_before_down(self, view: PlayerView) -> int:
        """The network's discard (with the planner's deadlock shake), the planner's without one."""
        if self.net is None:
            return super().discard_before_down(view)
        if self.count_turn(view) > self.params.patience and self.rng.random() < self.params.shake:
            kinds = [c for c in hand_kinds(view.hand) if c != JOKER] or [JOKER]
            return kinds[int(self.rng.integers(len(kinds)))]  # the planner's deadlock shake
        return self._choose(self.candidates(view)).card

    def discard_down(self, view: PlayerView) -> Move:
        """The network's discard once down, the planner's without one."""
        if self.net is None:
            return super().discard_down(view)
        return self._choose(self.candidates(view, down=True))

    def _choose(self, cands: Candidates) -> Move:
        assert self.net is not None
        # rounded: moves whose costs differ only in the last bits of their sums (equal features,
        # another CPU's kernels) are tied, and the first of them is played on every machine
        return cands.moves[int(np.argmin(np.round(self.net.costs(cands.features), 9)))]

    def upcard_matters(self, view: PlayerView, buying: bool) -> bool:
        """The planner's test, and a joker always matters: the network is asked about every
        joker offered to buy (a joker upcard in the draw is always taken)."""
        return view.upcard == JOKER or super().upcard_matters(view, buying)

    def candidates(self, view: PlayerView, down: bool | None = None) -> Candidates:
        """The decision's candidates and their feature rows (phase DRAW, BUY or a discard)."""
        down = view.down[view.player] if down is None else down
        upcard = {Phase.DRAW: (DRAW_Q, [TAKE, DRAW]), Phase.BUY: (BUY_Q, [BUY, PASS])}.get(view.phase)
        kind, moves = upcard or (DOWN_DISCARD_Q if down else DISCARD_Q, [])
        ctx, facts = self._context(view, kind)
        if upcard:
            rows = [self._upcard_row(view, facts, kind), PASS_ROW]
        else:
            by_card = self._discard_rows(view, facts, kind)
            moves = [DISCARDS[c] for c in by_card]
            rows = list(by_card.values())
        feats = np.empty((len(rows), INPUT_SIZE), dtype=np.float32)
        feats[:, :CONTEXT_SIZE] = ctx
        feats[:, CONTEXT_SIZE:] = rows
        return Candidates(kind, moves, feats)

    def _context(self, view: PlayerView, kind: int) -> tuple[np.ndarray, dict[str, Any]]:
        me, n, contract = view.player, view.num_players, view.contract
        size, down = view.hand_sizes[me], view.down[me]
        meter, unseen = self.meter(contract), unseen_counts(view)
        d, live = 0, 0
        if not down:
            d, outs = meter.analyse(view.hand)
            live = self.live_outs(outs, unseen)
        opp = [q for q in range(n) if q != me]
        opp_down = [q for q in opp if view.down[q]]
        risk, scores = self.risk(view), view.scores
        others = sum(scores[q] for q in opp) / len(opp)
        ctx = np.zeros(CONTEXT_SIZE, dtype=np.float32)
        ctx[contract - 1] = 1.0
        ctx[KIND_AT + kind] = 1.0
        blind = contract in BLIND_CONTRACT_BUYS and size == contract_size(contract)
        ctx[14:] = (
            size / 12.0,
            size_deficit(size, contract) / 4.0,
            d / 6.0,
            live / 24.0,
            float(down),
            float(blind),
            view.buys_left[me] / 3.0,
            len(opp_down) / 3.0,
            float(view.down[(me + 1) % n]),
            min(view.hand_sizes[q] for q in opp) / 12.0,
            min((view.hand_sizes[q] for q in opp_down), default=12) / 12.0,
            risk,
            view.stock_size / 60.0,
            float(view.stock_rebuilds_left is None or view.stock_rebuilds_left > 0),
            view.discard_size / 40.0,
            sum(view.hand_sizes) / (12.0 * n),
            min(max((others - scores[me]) / 200.0, -2.0), 2.0),
            1.0,
        )
        facts = {"d": d, "live": live, "meter": meter, "unseen": unseen, "risk": risk, "down": down}
        return ctx, facts

    def _upcard_row(self, view: PlayerView, facts: dict[str, Any], kind: int) -> list[float]:
        up, me = view.upcard, view.player
        row = [0.0] * MOVE_SIZE
        row[0] = 1.0  # take / buy
        d2, live2 = 0, 0
        if not facts["down"]:
            d2, outs2 = facts["meter"].analyse(plus(view.hand, up))
            live2 = self.live_outs(outs2, facts["unseen"])
        row[3:6] = d2 / 6.0, (d2 - facts["d"]) / 2.0, (live2 - facts["live"]) / 12.0
        row[6] = points(up, self.rules) / 50.0
        row[7] = float(up == JOKER)
        row[8] = float(up != JOKER and fits_table(up, table_melds(view)))
        row[9] = view.hand[up] / 2.0
        row[10] = sum(view.hand[s * 13 + rank_of(up)] for s in range(4)) / 4.0 if up != JOKER else 0.0
        row[11] = size_deficit(view.hand_sizes[me] + (2 if kind == BUY_Q else 1), view.contract) / 4.0
        row[12] = float(kind == BUY_Q)
        return row

    def _discard_rows(self, view: PlayerView, facts: dict[str, Any], kind: int) -> dict[int, list[float]]:
        """A row per card the planner would consider discarding, ascending; the planner's own
        score of each is one of its features (negated once down, into a cost)."""
        danger = self.danger(view)
        melds = table_melds(view)
        if kind == DISCARD_Q:
            wanted: set[int] = set()
            terms = self.discard_terms(view, danger)
            costs = {c: t[0] for c, t in terms.items()}
        else:
            wanted = wanted_ranks(view)
            values = self.down_discard_values(view, danger, melds, wanted)
            costs = {c: -v for c, v in values.items()}
            if JOKER in costs:  # the joker's row also counts its danger (the features trained on)
                costs[JOKER] += self.params.w_danger * danger[JOKER]
        hand = view.hand
        # cards of each rank in the hand, once per decision rather than once per candidate
        of_rank = [hand[r] + hand[13 + r] + hand[26 + r] + hand[39 + r] for r in range(13)]
        rows = {}
        for card, cost in costs.items():
            row = [0.0] * MOVE_SIZE
            row[2] = 1.0  # a discard
            if kind == DISCARD_Q:
                _, d2, live2 = terms[card]
                row[3:6] = d2 / 6.0, (d2 - facts["d"]) / 2.0, (live2 - facts["live"]) / 12.0
            natural = card != JOKER
            row[6] = points(card, self.rules) / 50.0
            row[7] = float(not natural)
            row[8] = float(natural and fits_table(card, melds))
            row[9] = hand[card] / 2.0
            row[10] = of_rank[rank_of(card)] / 4.0 if natural else 0.0
            row[11] = float(natural and near_run_end(card, melds))
            row[13] = float(natural and rank_of(card) in wanted)
            row[14] = danger[card] / 3.0
            row[15] = float(min(max(cost / 20.0, -15.0), 15.0))  # builtins: np.clip per row was 7% of play
            rows[card] = row
        return rows


def load_scorer(path: str | Path, name: str | None = None, seed: int | None = None) -> ScorerBot:
    """A :class:`ScorerBot` playing the network saved at ``path`` (or a shipped scorer's name:
    ``shanghai``, ``shanghai_4p``)."""
    path = shipped_path(path)
    return ScorerBot(ScorerNet.load(path), name=name or Path(path).stem, seed=seed)
