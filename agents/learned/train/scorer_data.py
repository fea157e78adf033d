"""Training data for the scorer: real games, with each upcard decision valued by rollouts.

A game is played with the *behaviour* player (the planner, or the current scorer) in one or two
seats and bots in the others. At every decision of a behaviour seat:

- **take or draw, buy or pass** (when the upcard could matter, the decisions the scorer is
  asked): both candidates are played on from the true state ``rollouts`` times to the end of the
  deal, each time with the same rollout seeds and the same coupled stock draws for both
  (common random numbers, as in :mod:`shanghai_env.agents.bots.search`), the behaviour seats by the
  planner and every other seat by its own bot. The label is the mean difference of the seat's
  *relative* deal score (its score minus the mean of the others'; lower is better) between
  taking and not taking. Rolling out from the true state rather than from sampled worlds gives,
  averaged over the data, the value of the move under the real distribution of the hidden cards,
  which is what a network that sees only the player's information can learn;
- **a discard**: the candidates and the planner's choice (cloning labels, no rollouts); with
  ``value_discards`` k, also the behaviour player's k best discards played on the same way, each
  valued against its first choice: pairs like the upcard ones, in the same points, so the
  network's discard costs learn from rollouts rather than from the planner.

Everything is seeded: the same seed gives the same data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.base import Decision, decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.handtools import HeuristicBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.search import DRAWS_PER_PLAYER, apply_coupled, play_out
from shanghai_env.agents.learned.players.scorer import (
    BUY_Q,
    DRAW_Q,
    INPUT_SIZE,
    Candidates,
    ScorerBot,
    ScorerNet,
)
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
        return {
            "pair_x": np.array(self.pair_x, dtype=np.float32).reshape(-1, 2, INPUT_SIZE),
            "pair_a": np.array(self.pair_a, dtype=np.float32),
            "pair_se": np.array(self.pair_se, dtype=np.float32),
            "disc_x": (np.concatenate(self.disc_x) if self.disc_x else np.zeros((0, INPUT_SIZE))).astype(
                np.float16
            ),
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
    """Play games from ``seed`` until ``games`` are done or ``seconds`` have passed; label them.

    The behaviour player is ``ScorerBot(net)`` (the planner when ``net`` is None). Each game seats
    it once or twice, and its opponents are all greedy or all planner bots, drawn per game.
    ``discard_keep`` is the fraction of discard decisions kept (cheap labels, many of them).

    ``rollout_net`` plays the behaviour seats in the rollouts instead of the planner (the value of
    a move when the network itself plays on: the student becomes the teacher); with
    ``opponent_net`` a third kind of table is drawn, its opponents all ``ScorerBot(opponent_net)``
    (and so in their rollouts). ``value_discards`` (0, or 2 and more): see the module's text.
    Without these three, the data are those of earlier versions, seed for seed.
    """
    if games is None and seconds is None:
        raise ValueError("give games or seconds")
    if value_discards == 1 or value_discards < 0:
        raise ValueError(
            f"value_discards is 0 (off) or the number of discards valued, 2 or more; got {value_discards}"
        )
    rng = np.random.default_rng(seed)
    rules = Rules(num_players=num_players, contracts=tuple(contracts))
    table = action_table(rules)
    out = Batch()
    start = time.monotonic()

    def label(game: Game, decision: Decision, agent: ScorerBot, bots: list[HeuristicBot]) -> None:
        _label(game, decision, agent, bots, rng, rollouts, label_upcards, discard_keep, out, value_discards)

    while (games is None or out.games < games) and (seconds is None or time.monotonic() - start < seconds):
        out.moves += _one_game(rng, net, rules, table, label, rollout_net, opponent_net)
        out.games += 1
    return out


PROBES = {
    "down": "going down now minus waiting a turn",
    "layoff": "laying off now minus holding the cards a turn",
}


def probe_rule(
    seed: int,
    net: ScorerNet | None = None,
    *,
    rule: str = "down",
    games: int,
    rollouts: int = 8,
    num_players: int = 4,
    contracts: Sequence[int] = tuple(range(1, 11)),
    rollout_net: ScorerNet | None = None,
    opponent_net: ScorerNet | None = None,
) -> np.ndarray:
    """What one of the planner's fixed rules costs: games played as :func:`generate` plays them;
    at each decision of a behaviour seat where the rule acts, the rule's move and the player's
    best discard instead are played on with coupled rollouts from the true state.

    - ``down``: go down as soon as you can, against waiting a turn (it goes down on a later
      turn, by the rule);
    - ``layoff``: once down, lay off (and swap jokers) whenever you can, against discarding
      without laying off this turn.

    Returns (decisions, rollouts): the seat's relative deal score after the rule's move minus
    after the discard (lower: the rule is better)."""
    if rule not in PROBES:
        raise ValueError(f"rule must be one of {sorted(PROBES)}, got {rule!r}")
    for name, value in (("games", games), ("rollouts", rollouts)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    rng = np.random.default_rng(seed)
    rules = Rules(num_players=num_players, contracts=tuple(contracts))
    table = action_table(rules)
    rows: list[np.ndarray] = []
    acts = MoveKind.MELD if rule == "down" else MoveKind.LAYOFF

    def label(game: Game, decision: Decision, agent: ScorerBot, bots: list[HeuristicBot]) -> None:
        view = decision.view
        me = view.player
        if (
            view.phase != Phase.PLAY
            or view.down[me] != (rule == "layoff")
            or not any(m.kind == acts for m in view.legal_moves)
            or not any(m.kind == MoveKind.DISCARD for m in view.legal_moves)
        ):
            return
        cands = agent.candidates(view, down=view.down[me])
        instead = cands.moves[int(np.argmin(_own_costs(agent, cands)))]
        values = rollout_values(game, me, [None, instead], bots, rng, rollouts, table, rules)
        rows.append(values[:, 0] - values[:, 1])

    for _ in range(games):
        _one_game(rng, net, rules, table, label, rollout_net, opponent_net)
    return np.array(rows, dtype=np.float64).reshape(-1, rollouts)


def _one_game(
    rng: np.random.Generator,
    net: ScorerNet | None,
    rules: Rules,
    table: ActionTable,
    label: Callable[[Game, Decision, ScorerBot, list[HeuristicBot]], None],
    rollout_net: ScorerNet | None = None,
    opponent_net: ScorerNet | None = None,
) -> int:
    """Play one game, calling ``label`` at every decision of a behaviour seat before its move;
    the number of moves played."""
    n = rules.num_players
    learners = sorted(rng.choice(n, size=int(rng.integers(1, 3)), replace=False).tolist())
    kinds = sorted(OPPONENTS) + (["scorer"] if opponent_net is not None else [])
    opponent = str(rng.choice(kinds))

    def opponent_bot() -> HeuristicBot:
        return ScorerBot(opponent_net) if opponent == "scorer" else OPPONENTS[opponent]()

    agents: list[HeuristicBot] = [ScorerBot(net) if s in learners else opponent_bot() for s in range(n)]
    for agent in agents:
        agent.reset(int(rng.integers(1 << 62)))
    # the continuation policy of rollouts: the planner (or rollout_net) for the behaviour seats,
    # the opponents' own bots for theirs
    rollout_bots: list[HeuristicBot] = [
        (ScorerBot(rollout_net) if rollout_net is not None else PlannerBot())
        if s in learners
        else opponent_bot()
        for s in range(n)
    ]
    game = Game(rules)
    game.reset(int(rng.integers(1 << 62)))
    moves = 0
    while not game.game_over:
        p = game.to_act
        decision = decision_for(game, p, table)
        agent = agents[p]
        if p in learners:
            assert isinstance(agent, ScorerBot)
            label(game, decision, agent, rollout_bots)
        # (the rules' move cap ends a stalled deal)
        apply_action(game, decision, agent.act(decision), f"agent {agent.name!r} in seat {p}")
        moves += 1
    return moves


def _label(
    game: Game,
    decision: Decision,
    agent: ScorerBot,
    rollout_bots: list[HeuristicBot],
    rng: np.random.Generator,
    rollouts: int,
    label_upcards: bool,
    discard_keep: float,
    out: Batch,
    value_discards: int = 0,
) -> None:
    view = decision.view
    me = view.player
    agent.rules = decision.rules
    if view.phase in (Phase.DRAW, Phase.BUY):
        prior = PlannerBot.buy(agent, view) if view.phase == Phase.BUY else DRAW
        if not label_upcards or not agent.asks(view, prior):
            return
    elif view.phase == Phase.PLAY:
        if view.went_down_this_turn or not any(m.kind == MoveKind.DISCARD for m in view.legal_moves):
            return
        if not view.down[me] and any(m.kind == MoveKind.MELD for m in view.legal_moves):
            return  # going down now: the arrangement's discard is the planner's
        if view.down[me] and any(m.kind in (MoveKind.LAYOFF, MoveKind.SWAP) for m in view.legal_moves):
            return  # layoffs first
        found = agent.candidates(view) if value_discards else None
        if found is not None:
            _value_discards(
                game, me, found, agent, rollout_bots, rng, rollouts, value_discards, decision, out
            )
        if rng.random() >= discard_keep:
            return
        cands = found if found is not None else agent.candidates(view)
        out.disc_x.append(cands.features)
        out.disc_y.append(int(np.argmin(cands.features[:, -1])))  # the planner's own score
        return
    else:
        return
    cands = agent.candidates(view)
    assert cands.kind in (DRAW_Q, BUY_Q)
    table, rules = decision.table, decision.rules
    values = rollout_values(game, me, cands.moves, rollout_bots, rng, rollouts, table, rules)
    out.rollouts += 2 * rollouts
    _add_pair(out, cands.features, values[:, 0] - values[:, 1])


def _own_costs(agent: ScorerBot, cands: Candidates) -> np.ndarray:
    """The behaviour player's cost of each candidate: its network's, or without one the
    planner's own score (the last feature)."""
    return agent.net.costs(cands.features) if agent.net is not None else cands.features[:, -1]


def _add_pair(out: Batch, features: np.ndarray, diffs: np.ndarray) -> None:
    out.pair_x.append(features)
    out.pair_a.append(float(diffs.mean()))
    out.pair_se.append(float(diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else float("nan"))


def _value_discards(
    game: Game,
    me: int,
    cands: Candidates,
    agent: ScorerBot,
    bots: Sequence[HeuristicBot],
    rng: np.random.Generator,
    rollouts: int,
    k: int,
    decision: Decision,
    out: Batch,
) -> None:
    """The behaviour player's ``k`` best discards (by its own costs; the planner's score when it
    has no network) played on with coupled rollouts; a pair per runner-up, against the first."""
    if len(cands.moves) < 2:
        return
    order = np.argsort(_own_costs(agent, cands), kind="stable")[:k]
    values = rollout_values(
        game, me, [cands.moves[i] for i in order], bots, rng, rollouts, decision.table, decision.rules
    )
    out.rollouts += len(order) * rollouts
    for j in range(1, len(order)):
        _add_pair(out, cands.features[[order[0], order[j]]], values[:, 0] - values[:, j])


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
