"""Expert iteration over the learner's own search, by generations: an update plays whole games of
the network in every seat, the search over it measures every close call, and the network is
fitted to the measured differences between each call's moves. See docs/training.md, "exit".
"""

from __future__ import annotations

import argparse
import copy
import io
import math
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.bots.search import paired_difference
from shanghai_env.agents.learned.players.net_search import NetSearchBot, NetSearchParams
from shanghai_env.agents.learned.players.policy import PolicyAgent, save_policy
from shanghai_env.agents.learned.train.evaluation import evaluate
from shanghai_env.agents.learned.train.methods.base import NetMethod
from shanghai_env.agents.learned.train.options import NetOptions, option
from shanghai_env.agents.learned.train.search_pool import SearchPool, Task
from shanghai_env.any_table import encoding_tables
from shanghai_env.batched import BatchedEnv
from shanghai_env.cli import int_in, number_in, write_atomically
from shanghai_env.decision import apply_action, decision_for
from shanghai_env.engine import Game
from shanghai_env.rules import Rules


def decision_kinds(text: str) -> str:
    """``--decisions``: comma-separated kinds, checked as the search's parameters check them."""
    try:
        NetSearchParams(decisions=frozenset(text.split(",")))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None
    return text


def calls_files(text: str) -> str:
    """``--calls``: comma-separated files of searched calls (``calls_G.npz`` of ``--keep-calls``);
    "": none."""
    for path in filter(None, text.split(",")):
        if not (path.endswith(".npz") and os.path.isfile(path)):
            raise argparse.ArgumentTypeError(f"{path!r} is no file of searched calls (a calls_G.npz)")
    return text


@dataclass
class ExItOptions(NetOptions):
    lr: float = 1e-4
    epochs: int = 10  # the fit's passes over a generation's calls (the best one on the held-out kept)
    batch_size: int = 256
    max_grad_norm: float = 1.0
    n_steps: int = option(64, argparse.SUPPRESS, type=int_in(1))  # not read: a generation is whole games
    tables: tuple[int, ...] = ()  # the generation's games cycle through these sizes (any_table)
    generation_games: int = option(
        40,
        "games a generation: the network in every seat, every close call searched (default 40)",
        type=int_in(1),
    )
    holdout: float = option(
        0.5,
        "share of a generation's games whose calls choose the fit's epoch (default 0.5)",
        type=number_in(0.0, 1.0, low_open=True),
    )
    anchor: float = option(
        0.1, "a fit's weight on every legal move's score staying put (default 0.1)", type=number_in(0.0)
    )
    worlds: int = option(32, "worlds a searched decision (default 32)", type=int_in(1))
    horizon: int = option(
        1,
        "the search's rollouts stop at the searcher's H-th turn, 0: at the deal's end (default 1)",
        type=int_in(0),
    )
    gate: float = option(
        0.02, "search where the two best moves' values differ by less (default 0.02)", type=number_in(0.0)
    )
    alternatives: int = option(
        1, "moves searched besides the network's best, in its order (default 1)", type=int_in(1)
    )
    label_se: float = option(
        0.0,
        "fit only labels this many standard errors or more from 0 (default 0: all)",
        type=number_in(0.0),
    )
    check_games: int = option(
        0,
        "games of a fit's network against the network before it; kept only when ahead (default 0: no check)",
        type=int_in(0),
    )
    decisions: str = option(
        "draw,buy,play,down_play",
        "decisions searched: draw, buy, play, down_play (default all four)",
        type=decision_kinds,
    )
    fit: str = option(
        "differences",
        "fit the measured differences (default), or the search's choices",
        choices=("differences", "choices"),
    )
    margin: float = option(
        0.02,
        "--fit choices: the lead fitted to the chosen move (default 0.02)",
        type=number_in(0.0, low_open=True),
    )
    keep_calls: bool = option(False, "write generation G's searched calls to OUT/calls_G.npz")
    calls: str = option(
        "",
        "the first generation fits these calls (calls_G.npz, comma-separated), unsearched",
        type=calls_files,
    )


@dataclass
class Call:
    """A close call of a generation: its inputs in the run's encoding, the candidates' places in
    ``legal`` (the prior first), and once searched each alternative's measured difference to the
    prior in points (``points``, lower is better) with its standard error (``ses``), the search's
    choice (``chosen``, 0: the prior), and the fit's targets in the network's units (``targets``;
    NaN where the fit leaves it out: under ``--label-se``)."""

    rules: Rules
    obs: np.ndarray
    legal: list[int]
    facts: np.ndarray | None
    positions: list[int]
    points: list[float] = field(default_factory=list)
    ses: list[float] = field(default_factory=list)
    chosen: int = 0
    targets: list[float] = field(default_factory=list)


def with_targets(call: Call, to_value: float, label_se: float) -> Call:
    """``call`` with its targets: each difference in the network's units, NaN unless it lies
    ``label_se`` standard errors or more from 0 (a difference with no spread is exact, and kept)."""
    k = label_se
    pairs = zip(call.points, call.ses)
    return replace(call, targets=[d / to_value if not k or abs(d) >= k * se else math.nan for d, se in pairs])


def save_calls(path: str, calls: list[Call], games_of: np.ndarray, games: int, played: int) -> None:
    """A generation's searched calls as one ``.npz`` (arrays only: read back without pickle), with
    its ``games`` and the moves ``played`` in them."""

    def offsets(lists: list[list[Any]]) -> np.ndarray:
        return np.cumsum([0] + [len(x) for x in lists]).astype(np.int64)

    arrays: dict[str, np.ndarray] = {
        "games": np.array(games, np.int64),
        "played": np.array(played, np.int64),
        "games_of": games_of.astype(np.int64),
        "players": np.array([c.rules.num_players for c in calls], np.int64),
        "obs": np.stack([c.obs for c in calls]),
        "legal": np.concatenate([c.legal for c in calls]).astype(np.int64),
        "legal_at": offsets([c.legal for c in calls]),
        "positions": np.concatenate([c.positions for c in calls]).astype(np.int64),
        "positions_at": offsets([c.positions for c in calls]),
        "points": np.concatenate([c.points for c in calls]).astype(np.float64),
        "ses": np.concatenate([c.ses for c in calls]).astype(np.float64),
        "chosen": np.array([c.chosen for c in calls], np.int64),
    }
    if calls[0].facts is not None:
        arrays["facts"] = np.stack([c.facts for c in calls if c.facts is not None])
    buffer = io.BytesIO()
    save: Any = np.savez_compressed  # numpy's stubs read ``**arrays`` as its allow_pickle flag
    save(buffer, **arrays)
    write_atomically(path, buffer.getvalue())


def load_calls(path: str, rules: Rules, width: int, facts: bool) -> tuple[list[Call], np.ndarray, int, int]:
    """The calls :func:`save_calls` wrote, at ``rules``' table sizes; the game of each; the games;
    the moves played in them.
    ValueError where the file cannot be read or was not made for a network of this input
    (``width`` observation entries, ``facts`` or not)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            a = {k: f[k] for k in f.files}
        obs, legal_at, pos_at = a["obs"], a["legal_at"], a["positions_at"]
        n = len(obs)
        if obs.ndim != 2 or len(legal_at) != n + 1 or len(pos_at) != n + 1:
            raise ValueError("its arrays disagree in length")
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(f"--calls {path}: not a generation's calls (calls_G.npz): {err}") from None
    if obs.shape[1] != width or ("facts" in a) != facts:
        raise ValueError(
            f"--calls {path}: made for another network's input ({obs.shape[1]} entries"
            f"{', facts' if 'facts' in a else ''}); this run's network reads {width}"
            f"{', facts' if facts else ''}"
        )
    calls = []
    for i in range(n):
        p, q = int(pos_at[i]), int(pos_at[i + 1])
        calls.append(
            Call(
                rules=replace(rules, num_players=int(a["players"][i])),
                obs=obs[i],
                legal=a["legal"][legal_at[i] : legal_at[i + 1]].tolist(),
                facts=a["facts"][i] if facts else None,
                positions=a["positions"][p:q].tolist(),
                # an alternative's difference and error sit in its place after the prior's
                points=a["points"][p - i : q - i - 1].tolist(),
                ses=a["ses"][p - i : q - i - 1].tolist(),
                chosen=int(a["chosen"][i]),
            )
        )
    return calls, a["games_of"], int(a["games"]), int(a["played"])


class ExIt(NetMethod):
    name = "exit"
    Options = ExItOptions

    def make_venv(self, config: Any) -> BatchedEnv:
        # the generations play their own games (Game, here, where the search reads them); the
        # loop's batched games are one, never stepped
        return super().make_venv(replace(config, num_envs=1, env_workers=1))

    def reset_extra(self) -> None:
        meta = {"method": "dmc"}  # the network's scores are move values, as dmc's
        agent = PolicyAgent("", loaded=(self.net, self.config.rules, meta), name="learner")
        self.searcher = NetSearchBot(
            agent,
            worlds=self.opt.worlds,
            round_worlds=min(self.opt.worlds, 16),
            horizon=self.opt.horizon,
            gate=self.opt.gate,
            alternatives=self.opt.alternatives,
            decisions=frozenset(self.opt.decisions.split(",")),
            seed=self.config.seed,
        )
        self.searched = 0
        self.switched = 0
        # the calls to fit first, read now: a file that does not fit this network is refused
        # before the run begins
        self.loaded: tuple[list[Call], np.ndarray, int] | None = None
        if self.opt.calls:
            width, facts = int(self.net.inv_scale.shape[0]), self.net.extra_size > 0
            measured, held, played = [], [], 0
            for path in self.opt.calls.split(","):
                calls, games_of, n, moves = load_calls(path, self.config.rules, width, facts)
                measured += calls
                held.append(self.held_out(games_of, n))  # each file's own games held out
                played += moves
            self.loaded = (measured, np.concatenate(held), played)
        self.pool = SearchPool(self.searcher, self.config.env_workers)

    def extra_state(self) -> dict[str, Any]:
        # each search's generator comes from the run's seed and the search's number
        return {"search_counts": [self.searched, self.switched]}

    def load_extra(self, state: dict[str, Any]) -> None:
        self.searched, self.switched = (int(x) for x in state["search_counts"])

    def close(self) -> None:
        pool = getattr(self, "pool", None)  # none if the setup stopped before it
        if pool is not None:
            pool.close()
        super().close()

    def step(self) -> dict[str, float]:
        searched, switched = self.searched, self.switched
        out = self.generation()
        self.searcher.weights_changed()  # the fit changed the network the search plays in place
        out["searched"] = float(self.searched - searched)
        out["switched"] = float(self.switched - switched)
        return out

    def generation(self) -> dict[str, float]:
        """Play ``generation_games`` games of the network in every seat (greedy); search every close
        call; fit the network to the labels, keeping the epoch whose held-out labels gain most."""
        start = time.perf_counter()
        if self.loaded is not None and self.updates == 0:
            # the files' games count as this run's moves: its network learns from them
            measured, held, played = self.loaded
            self.loaded = None
        else:
            self.pool.publish(self.updates, self.config.rules, {"method": "dmc"})
            calls, values, games_of, played = self.generation_calls()
            measured = [self.measured(call, v) for call, v in zip(calls, values)]
            self.searched += len(measured)
            self.switched += sum(c.chosen != 0 for c in measured)
            n = self.opt.generation_games
            held = self.held_out(games_of, n)
            if self.opt.keep_calls:
                path = os.path.join(self.config.out, f"calls_{self.updates + 1}.npz")
                save_calls(path, measured, games_of, n, played)
        to_value = {c.rules: self.searcher.rollouts_for(c.rules).to_points for c in measured}
        labels = [with_targets(c, to_value[c.rules], self.opt.label_se) for c in measured]
        train = [c for c, h in zip(labels, held) if not h]
        valid = [c for c, h in zip(labels, held) if h]
        searched_seconds = time.perf_counter() - start
        before = copy.deepcopy(self.net.state_dict()) if self.opt.check_games else {}
        epoch, gain, loss = self.fit(train, valid)
        out = {
            "env_steps": float(played),
            "trained_decisions": float(len(train)),
            "fit_epoch": float(epoch),
            "fit_loss": round(loss, 6),
            "held_out_gain": round(gain, 4),
            # what a network choosing the search's best-measured move at every held-out call would
            # gain by the same measure: the room a fit had (an upper bound: each minimum is taken
            # over noisy estimates)
            "held_out_room": round(held_out_room(valid), 4),
            "label_seconds": round(searched_seconds, 1),
        }
        if self.opt.check_games:
            # the held-out gain foretold the first generation's strength and none after it
            # (docs/benchmark.md): games decide whether a fit stays
            diff = self.check(before) if epoch else 0.0  # no epoch kept: the network stands as it was
            kept = epoch > 0 and diff < 0.0
            if epoch and not kept:
                self.net.load_state_dict(before)
            out |= {"check_diff": round(diff, 2), "kept": float(kept)}
        self.updates += 1
        return out

    def held_out(self, games_of: np.ndarray, n: int) -> np.ndarray:
        """Which calls of a generation of ``n`` games (``games_of``: each call's game) are held out:
        those of its last ``holdout`` share of games (none of a one-game generation)."""
        return games_of >= n - (max(1, round(self.opt.holdout * n)) if n > 1 else 0)

    def measured(self, call: Call, values: list[list[float]]) -> Call:
        """``call`` with what the search measured (``values``: each candidate's, the prior's first)."""
        pairs = [paired_difference(v, values[0][: len(v)]) for v in values[1:]]
        points, ses = [d for d, _ in pairs], [se for _, se in pairs]
        return replace(call, points=points, ses=ses, chosen=self.searcher.choose(values))

    def check(self, before: dict[str, Any]) -> float:
        """The fitted network's mean paired difference over the seats of the network as it was
        (``before``), in ``check_games`` games at the run's table (below zero: ahead)."""
        rules = self.config.rules
        fitted = copy.deepcopy(self.net).cpu()
        prior = copy.deepcopy(fitted)
        prior.load_state_dict(before)
        with tempfile.TemporaryDirectory(prefix="shanghai-check-") as folder:
            paths = [os.path.join(folder, name) for name in ("fitted.pt", "before.pt")]
            for path, net in zip(paths, (fitted, prior)):
                save_policy(path, net, rules, {"method": "dmc"})
            seed = int(np.random.SeedSequence([self.config.seed, self.updates, 1]).generate_state(1)[0])
            result = evaluate(
                paths[0],
                paths[1],
                players=rules.num_players,
                contracts=rules.contracts,
                games=self.opt.check_games,
                seed=seed,
                workers=self.config.env_workers,
            )
        return float(np.mean([seat["diff"] for seat in result["seats"]]))

    def generation_calls(self) -> tuple[list[Call], list[Any], np.ndarray, int]:
        """The close calls of this generation's games and their search's values (each game's calls
        go to the search pool as the game ends, so the workers search while the next is played);
        the game each came from; the moves played."""
        agent = self.searcher.agent
        sizes = self.opt.tables or (self.config.rules.num_players,)
        calls: list[Call] = []
        handles: list[Any] = []
        games_of: list[int] = []
        played = 0
        for g in range(self.opt.generation_games):
            rules = replace(self.config.rules, num_players=sizes[g % len(sizes)])
            table, encoder = encoding_tables(rules, "table")
            game = Game(rules)
            game.reset(int(np.random.SeedSequence([self.config.seed, self.updates, g]).generate_state(1)[0]))
            tasks: list[Task] = []
            while not game.game_over:
                decision = decision_for(game, game.to_act, table, encoder)
                candidates, _ = self.searcher.scored_candidates(decision)
                if len(candidates) > 1:
                    obs, legal, facts = agent.inputs(decision)
                    places = [decision.legal_actions.index(a) for a in candidates]
                    calls.append(Call(rules, obs, legal, facts, places))
                    seed = (self.config.seed, self.searched + len(handles) + len(tasks))
                    tasks.append((decision.view, rules, candidates, seed))
                    games_of.append(g)
                apply_action(game, decision, agent.act(decision), "the learner")
                played += 1
            handles += self.pool.submit(tasks)
        return calls, self.pool.gather(handles), np.asarray(games_of, np.int64), played

    def fit(self, train: list[Call], valid: list[Call]) -> tuple[int, float, float]:
        """Fit the alternatives' score differences to the measured ones (every legal move's score
        held to its score before by ``anchor``), ``epochs`` passes; keep the epoch (0: none) whose
        choices on ``valid`` gain most by the search's own measure. Its number, gain, loss."""
        # padded once: each call's candidates (the prior first) and targets, its legal moves' scores
        # before the fit (the anchor), and which entries are real
        n, width = len(train), max((len(c.legal) for c in train), default=1)
        most = max((len(c.positions) for c in train), default=2)
        positions = torch.zeros(n, most, dtype=torch.int64)
        targets = torch.zeros(n, most - 1)
        labelled = torch.zeros(n, most - 1, dtype=torch.bool)
        chosen = torch.tensor([c.chosen for c in train], dtype=torch.int64)
        held = torch.zeros(n, width)
        legal = torch.zeros(n, width, dtype=torch.bool)
        for k, c in enumerate(train):
            positions[k, : len(c.positions)] = torch.tensor(c.positions)
            given = torch.tensor(c.targets)
            targets[k, : len(c.targets)] = torch.nan_to_num(given)
            labelled[k, : len(c.targets)] = ~torch.isnan(given)
            legal[k, : len(c.legal)] = True
        if self.opt.fit == "choices":
            # a call's choice is fitted where the search switched, or where it kept the prior and
            # every alternative's label stands (all of them, without --label-se); its candidates
            # are the real entries of ``labelled``, the prior's place before them
            counts = torch.tensor([len(c.targets) for c in train])
            stands = labelled.sum(1) == counts
            candidates = torch.arange(most - 1)[None, :] < counts[:, None]
            labelled = candidates & ((chosen != 0) | stands)[:, None]
        for i in range(0, n, 512):
            block = self.scores(train[i : i + 512])
            held[i : i + 512, : block.shape[1]] = torch.where(torch.isfinite(block), block, 0.0)
        best = (0, self.held_out_gain(valid), 0.0)
        kept = copy.deepcopy(self.net.state_dict())
        size = self.opt.batch_size
        for epoch in range(1, self.opt.epochs + 1):
            total = 0.0
            order = self.np_rng.permutation(n)
            for start in range(0, n, size):
                mb = torch.from_numpy(order[start : start + size])
                scores = self.scores([train[k] for k in mb.tolist()], grad=True)
                k = scores.shape[1]
                pads = (positions[mb], targets[mb], labelled[mb], held[mb, :k], legal[mb, :k])
                if self.opt.fit == "choices":
                    margin = self.opt.margin
                    loss = choice_loss(scores, positions[mb], chosen[mb], *pads[2:], self.opt.anchor, margin)
                else:
                    loss = fit_loss(scores, *pads, self.opt.anchor)
                self.optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.opt.max_grad_norm)
                self.optim.step()
                total += float(loss.detach()) * len(mb)
            gain = self.held_out_gain(valid)
            if gain < best[1] or not valid:  # no held-out games (one game a generation): the last
                best = (epoch, gain, total / max(1, n))
                kept = copy.deepcopy(self.net.state_dict())
        self.net.load_state_dict(kept)
        return best

    def scores(self, calls: list[Call], grad: bool = False) -> torch.Tensor:
        """``(B, K)`` scores of each call's legal moves (-inf in the padding)."""
        obs = np.stack([c.obs for c in calls])
        facts = None if calls[0].facts is None else np.stack([c.facts for c in calls if c.facts is not None])
        with torch.set_grad_enabled(grad):
            return self.searcher.agent.logits_of(obs, [c.legal for c in calls], facts)

    def held_out_gain(self, calls: list[Call]) -> float:
        """Points a call the network's choice among each call's candidates gains on its prior by the
        search's measure (negative: better)."""
        gain = 0.0
        for i in range(0, len(calls), 512):
            block = calls[i : i + 512]
            scores = self.scores(block)
            for row, c in zip(scores, block):
                top = int(torch.argmax(row[c.positions]))
                gain += c.points[top - 1] if top else 0.0
        return gain / max(1, len(calls))

    def export(self, path: str, meta: dict[str, Any]) -> None:
        # the saved player plays as a dmc player: its highest-valued move
        super().export(path, meta | {"method": "dmc", "trained_by": "exit"})


def held_out_room(calls: list[Call]) -> float:
    """Points a call the best-measured candidate of each call gains on its prior (at most 0)."""
    return sum(min(0.0, *c.points) for c in calls) / max(1, len(calls))


def fit_loss(
    scores: torch.Tensor,
    positions: torch.Tensor,
    targets: torch.Tensor,
    labelled: torch.Tensor,
    held: torch.Tensor,
    legal: torch.Tensor,
    anchor: float,
) -> torch.Tensor:
    """A generation's loss on a minibatch of calls, padded: per call, the squared errors of its
    alternatives' score differences to the prior (``positions[:, 0]``) against ``targets``, summed;
    plus ``anchor`` times the mean squared move of its legal moves' scores from ``held``. Both
    averaged over the calls; the padding (``labelled``, ``legal`` False) counts nowhere."""
    diff = scores.gather(1, positions[:, 1:]) - scores.gather(1, positions[:, :1])
    label = torch.where(labelled, diff - targets, 0.0).pow(2).sum(1)
    return label.mean() + anchor * anchor_term(scores, held, legal)


def anchor_term(scores: torch.Tensor, held: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The mean over calls of the mean squared move of each call's legal moves' scores from ``held``."""
    return (torch.where(legal, scores - held, 0.0).pow(2).sum(1) / legal.sum(1)).mean()


def choice_loss(
    scores: torch.Tensor,
    positions: torch.Tensor,
    chosen: torch.Tensor,
    labelled: torch.Tensor,
    held: torch.Tensor,
    legal: torch.Tensor,
    anchor: float,
    margin: float,
) -> torch.Tensor:
    """``--fit choices``: per call, the squared shortfall of the search's choice (``chosen``, a place
    in ``positions``; 0: the prior) from leading each other candidate by ``margin``, summed over
    the candidates (``labelled`` marks a labelled call's alternatives); plus ``anchor`` times the
    mean squared move of its legal moves' scores from ``held``, as :func:`fit_loss`."""
    cand = scores.gather(1, positions)
    lead = cand.gather(1, chosen[:, None]) - cand
    # the candidates: the prior where the call is labelled, the alternatives where labelled
    real = torch.cat([labelled.any(1, keepdim=True), labelled], 1)
    others = real & (torch.arange(cand.shape[1])[None, :] != chosen[:, None])
    label = torch.where(others, torch.relu(margin - lead), 0.0).pow(2).sum(1)
    return label.mean() + anchor * anchor_term(scores, held, legal)
