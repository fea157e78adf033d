"""Expert iteration over the learner's own search, by generations: an update plays whole games of
the network in every seat, the search over it measures every close call, and the network is
fitted to the measured differences between each call's moves. See docs/training.md, "exit".
"""

from __future__ import annotations

import argparse
import copy
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
from shanghai_env.cli import int_in, number_in
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


@dataclass
class Call:
    """A close call of a generation: its inputs in the run's encoding, the candidates' places in
    ``legal`` (the prior first), and once searched each alternative's measured difference to the
    prior, in points (``points``, lower is better) and in the network's units (``targets``; NaN
    where the fit leaves it out: under ``--label-se``)."""

    rules: Rules
    obs: np.ndarray
    legal: list[int]
    facts: np.ndarray | None
    positions: list[int]
    points: list[float] = field(default_factory=list)
    targets: list[float] = field(default_factory=list)


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
        self.pool.publish(self.updates, self.config.rules, {"method": "dmc"})
        calls, values, games_of, played = self.generation_calls()
        labels = []
        for call, measured in zip(calls, values):
            to_value = self.searcher.rollouts_for(call.rules).to_points
            pairs = [paired_difference(v, measured[0][: len(v)]) for v in measured[1:]]
            diffs = [d for d, _ in pairs]
            # the noise of the labels the search could not tell from zero is left out of the fit (a
            # difference with no spread over the worlds is exact, and kept)
            k = self.opt.label_se
            targets = [d / to_value if not k or abs(d) >= k * se else math.nan for d, se in pairs]
            labels.append(replace(call, points=diffs, targets=targets))
            self.searched += 1
            self.switched += int(self.searcher.choose(measured) != 0)
        n = self.opt.generation_games
        held = games_of >= n - (max(1, round(self.opt.holdout * n)) if n > 1 else 0)
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
        held = torch.zeros(n, width)
        legal = torch.zeros(n, width, dtype=torch.bool)
        for k, c in enumerate(train):
            positions[k, : len(c.positions)] = torch.tensor(c.positions)
            given = torch.tensor(c.targets)
            targets[k, : len(c.targets)] = torch.nan_to_num(given)
            labelled[k, : len(c.targets)] = ~torch.isnan(given)
            legal[k, : len(c.legal)] = True
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
    moved = torch.where(legal, scores - held, 0.0).pow(2).sum(1) / legal.sum(1)
    return label.mean() + anchor * moved.mean()
