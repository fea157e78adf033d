"""Training data for the scorer: real games, with each upcard decision valued by rollouts (the
mean difference of the seat's relative deal score, coupled) and each discard labelled with the
planner's choice; docs/training.md, "scorer". The same seed gives the same data.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.base import Decision, decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.handtools import HeuristicBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.scorer import (
    BUY_Q,
    DRAW_Q,
    INPUT_SIZE,
    ScorerBot,
    ScorerNet,
)
from shanghai_env.agents.bots.search import DRAWS_PER_PLAYER, apply_coupled, play_out
from shanghai_env.decision import apply_action
from shanghai_env.engine import Game, Phase
from shanghai_env.moves import DRAW, Move, MoveKind
from shanghai_env.rules import Rules

OPPONENTS: dict[str, type[HeuristicBot]] = {"greedy": GreedyBot, "planner": PlannerBot}


@dataclass
class Batch:
    """Labelled decisions: upcard pairs with rollout advantages, discards with planner labels."""

    pair_x: list[np.ndarray] = field(default_factory=list)  # (2, INPUT_SIZE): [take/buy, draw/pass]
    pair_a: list[float] = field(default_factory=list)  # mean relative-score difference, take - pass
    pair_se: list[float] = field(default_factory=list)  # its standard error
    disc_x: list[np.ndarray] = field(default_factory=list)  # (k, INPUT_SIZE) per decision
    disc_y: list[int] = field(default_factory=list)  # the planner's choice among the k
    games: int = 0
    moves: int = 0
    rollouts: int = 0

    def arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays for ``np.savez`` (discards as one matrix with group offsets)."""
        sizes = np.array([len(x) for x in self.disc_x], dtype=np.int64)
        disc_x = np.concatenate([np.zeros((0, INPUT_SIZE), np.float32), *self.disc_x])
        return {
            "pair_x": np.array(self.pair_x, dtype=np.float32).reshape(-1, 2, INPUT_SIZE),
            "pair_a": np.array(self.pair_a, dtype=np.float32),
            "pair_se": np.array(self.pair_se, dtype=np.float32),
            "disc_x": disc_x.astype(np.float16),
            "disc_offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            "disc_y": np.array(self.disc_y, dtype=np.int64),
            "stats": np.array([self.games, self.moves, self.rollouts], dtype=np.int64),
        }


def generate(
    seed: int,
    net: ScorerNet | None = None,
    *,
    games: int | None = None,
    seconds: float | None = None,
    rollouts: int = 6,
    num_players: int = 4,
    contracts: Sequence[int] = tuple(range(1, 11)),
    label_upcards: bool = True,
    discard_keep: float = 1.0,
    rollout_net: ScorerNet | None = None,
    opponent_net: ScorerNet | None = None,
    value_discards: int = 0,
) -> Batch:
    """Play games from ``seed`` until ``games`` are done or ``seconds`` have passed (ValueError
    without either); label them. The behaviour player is ``ScorerBot(net)`` (None: the planner);
    its opponents all greedy or all planner bots, drawn per game (``opponent_net``: all
    ``ScorerBot(opponent_net)``); ``rollout_net`` plays the behaviour seats in the rollouts
    instead of the planner; ``value_discards`` k: the k best discards valued by rollouts too;
    ``discard_keep``: the fraction of discard decisions kept."""
    if games is None and seconds is None:
        raise ValueError("give games or seconds")
    if value_discards == 1 or value_discards < 0:
        raise ValueError(
            f"value_discards is 0 (off) or the number of discards valued, 2 or more; got {value_discards}"
        )
    rules = Rules(num_players=num_players, contracts=tuple(contracts))
    rng, nets = np.random.default_rng(seed), (net, rollout_net, opponent_net)
    play = _Games(rng, rules, nets, rollouts, label_upcards, discard_keep, value_discards)
    out, start = play.out, time.monotonic()
    while (games is None or out.games < games) and (seconds is None or time.monotonic() - start < seconds):
        play.one()
    return out


@dataclass
class _Games:
    """:func:`generate`'s games, and what it records of them into ``out``; every draw from ``rng``."""

    rng: np.random.Generator
    rules: Rules
    nets: tuple[ScorerNet | None, ScorerNet | None, ScorerNet | None]  # behaviour, rollout, opponent
    rollouts: int
    label_upcards: bool
    discard_keep: float
    value_discards: int
    out: Batch = field(default_factory=Batch)

    def one(self) -> None:
        """Play one game, labelling every decision of a behaviour seat before its move."""
        rng, n, table = self.rng, self.rules.num_players, action_table(self.rules)
        net, rollout_net, opponent_net = self.nets
        learners = sorted(rng.choice(n, size=int(rng.integers(1, 3)), replace=False).tolist())
        opponent = str(rng.choice(sorted(OPPONENTS) + (["scorer"] if opponent_net is not None else [])))

        def opponent_bot() -> HeuristicBot:
            return ScorerBot(opponent_net) if opponent == "scorer" else OPPONENTS[opponent]()

        agents: list[HeuristicBot] = [ScorerBot(net) if s in learners else opponent_bot() for s in range(n)]
        for agent in agents:
            agent.reset(int(rng.integers(1 << 62)))

        # the continuation policy of rollouts: the planner (or rollout_net) for the behaviour
        # seats, the opponents' own bots for theirs
        def learner_bot() -> HeuristicBot:
            return ScorerBot(rollout_net) if rollout_net is not None else PlannerBot()

        rollout_bots = [learner_bot() if s in learners else opponent_bot() for s in range(n)]
        game = Game(self.rules)
        game.reset(int(rng.integers(1 << 62)))
        while not game.game_over:  # (the rules' move cap ends a stalled deal)
            p = game.to_act
            decision, agent = decision_for(game, p, table), agents[p]
            if isinstance(agent, ScorerBot) and p in learners:
                self._label(game, decision, agent, rollout_bots)
            apply_action(game, decision, agent.act(decision), f"agent {agent.name!r} in seat {p}")
            self.out.moves += 1
        self.out.games += 1

    def _label(self, game: Game, decision: Decision, agent: ScorerBot, bots: list[HeuristicBot]) -> None:
        view = decision.view
        agent.rules = decision.rules
        if view.phase == Phase.PLAY:
            self._discard(game, decision, agent, bots)
        elif view.phase in (Phase.DRAW, Phase.BUY):
            prior = PlannerBot.buy(agent, view) if view.phase == Phase.BUY else DRAW
            if self.label_upcards and agent.asks(view, prior):
                cands = agent.candidates(view)
                assert cands.kind in (DRAW_Q, BUY_Q)
                values = self._values(game, decision, cands.moves, bots)
                self._add_pair(cands.features, values[:, 0] - values[:, 1])

    def _discard(self, game: Game, decision: Decision, agent: ScorerBot, bots: list[HeuristicBot]) -> None:
        view = decision.view
        kinds = {m.kind for m in view.legal_moves}
        down = view.down[view.player]
        # none to label: going down now (the arrangement's discard is the planner's), layoffs first
        first = {MoveKind.LAYOFF, MoveKind.SWAP} if down else {MoveKind.MELD}
        if view.went_down_this_turn or MoveKind.DISCARD not in kinds or kinds & first:
            return
        found = agent.candidates(view) if self.value_discards else None
        if found is not None and len(found.moves) >= 2:
            # the behaviour player's k best (by its network's costs, or the planner's own score,
            # the last feature), each valued against the first
            costs = agent.net.costs(found.features) if agent.net is not None else found.features[:, -1]
            order = np.argsort(costs, kind="stable")[: self.value_discards]
            values = self._values(game, decision, [found.moves[i] for i in order], bots)
            for j in range(1, len(order)):
                self._add_pair(found.features[[order[0], order[j]]], values[:, 0] - values[:, j])
        if self.rng.random() < self.discard_keep:
            cands = found if found is not None else agent.candidates(view)
            self.out.disc_x.append(cands.features)
            self.out.disc_y.append(int(np.argmin(cands.features[:, -1])))  # the planner's own score

    def _values(
        self, game: Game, decision: Decision, moves: Sequence[Move], bots: list[HeuristicBot]
    ) -> np.ndarray:
        self.out.rollouts += len(moves) * self.rollouts
        me, table, rules = decision.view.player, decision.table, decision.rules
        return rollout_values(game, me, moves, bots, self.rng, self.rollouts, table, rules)

    def _add_pair(self, features: np.ndarray, diffs: np.ndarray) -> None:
        self.out.pair_x.append(features)
        self.out.pair_a.append(float(diffs.mean()))
        se = float(diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else float("nan")
        self.out.pair_se.append(se)


def rollout_values(
    game: Game,
    me: int,
    moves: Sequence[Move | None],
    bots: Sequence[HeuristicBot],
    rng: np.random.Generator,
    rollouts: int,
    table: ActionTable,
    rules: Rules,
) -> np.ndarray:
    """(rollouts, len(moves)): the seat's relative deal score after each move (None: the
    seat's rollout bot chooses it), every move of a rollout played on with the same seeds and
    stock draws (coupled)."""
    n = game.num_players
    deal = len(game.deal_results)
    rows = []
    for _ in range(rollouts):
        seeds = [int(s) for s in rng.integers(1 << 62, size=n)]
        draws = rng.random((n, DRAWS_PER_PLAYER))
        values = []
        for move in moves:
            g = game.clone()
            counters = [0] * n
            if move is not None:
                apply_coupled(g, move, draws, counters)
            scores, _ = play_out(g, bots, seeds, rules, table, deal, draws, counters)
            values.append(scores[me] - (sum(scores) - scores[me]) / (n - 1))
        rows.append(values)
    return np.array(rows, dtype=np.float64)
