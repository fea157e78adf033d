"""Search over a trainer network: determinised rollouts with the network in every seat, batched.

:class:`NetSearchBot` searches where the network is unsure (docs/bots.md, "Search over a network");
all its sampling comes from the generator :meth:`NetSearchBot.reset` seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from shanghai_env.actions import ActionTable
from shanghai_env.agents.bots.search import (
    DRAWS_PER_PLAYER,
    SearchStats,
    apply_coupled,
    beats,
    paired_difference,
    relative_points,
)
from shanghai_env.agents.learned.nets.facts import facts_function
from shanghai_env.agents.learned.nets.policy import padded
from shanghai_env.agents.learned.players.policy import PolicyAgent
from shanghai_env.any_table import encoding_tables
from shanghai_env.decision import Decision
from shanghai_env.engine import Game, Phase
from shanghai_env.models import shipped_path
from shanghai_env.moves import Move
from shanghai_env.observation import INT8, ObservationEncoder
from shanghai_env.rules import Rules
from shanghai_env.worlds import WorldSampler

# the kinds of decision: taking or drawing the upcard, buying it or passing, a move before going
# down (going down, a discard), a move once down (a layoff, a discard)
DECISIONS = frozenset({"draw", "buy", "play", "down_play"})


@dataclass(frozen=True)
class NetSearchParams:
    """The searcher's budget and choices (docs/bots.md); ValueError for a value out of range."""

    worlds: int = 32  # most worlds per searched decision
    round_worlds: int = 8  # worlds per round of the race
    alternatives: int = 1  # moves searched besides the network's best
    gate: float = 0.02  # search where the runner-up scores within this of the best
    decisions: frozenset[str] = DECISIONS  # which decisions are searched (all: docs/bots.md)
    horizon: int = 1  # 0: rollouts to the deal's end; h: to the searcher's h-th turn, then the value
    switch_se: float = 2.0  # an alternative replaces the best move if it beats it by this many SEs
    keep_se: float = 0.0  # ... and stays in the race while it beats it by this many
    rollout_cap: int = 1500  # rollout moves before the deal is scored as it stands

    def __post_init__(self) -> None:
        for name in ("worlds", "round_worlds", "alternatives", "rollout_cap"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if not isinstance(self.horizon, int) or isinstance(self.horizon, bool) or self.horizon < 0:
            raise ValueError(f"horizon must be an int >= 0 (0: to the deal's end), got {self.horizon!r}")
        unknown = set(self.decisions) - DECISIONS
        if unknown:
            raise ValueError(f"unknown decisions {sorted(unknown)}; allowed: {sorted(DECISIONS)}")
        object.__setattr__(self, "decisions", frozenset(self.decisions))
        for name in ("gate", "switch_se", "keep_se"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")


class BatchRollouts:
    """A network playing every seat of many games at once: one forward pass a step for all."""

    def __init__(self, agent: PolicyAgent, rules: Rules) -> None:
        self.net = agent.net
        self.rules = rules
        self.table: ActionTable
        self.encoder: ObservationEncoder
        self.table, self.encoder = encoding_tables(rules, self.net.encoding)
        self.facts = facts_function(self.net.facts_version) if self.net.extra_size else None
        self.q_values = agent.meta.get("method") == "dmc"  # the scores are move values
        # a value in the deal's result over 100 (the run's relative reward) is -n/(n-1)/100 of the
        # searcher's own deal score minus the others' mean (what the search compares)
        n = rules.num_players
        self.to_points = -100.0 * n / (n - 1)
        self.rows: torch.Tensor | None = None  # every action's row, made at the first play

    def weights_changed(self) -> None:
        """Drop what was made from the weights (a trainer changes them in place)."""
        self.rows = None

    def scores(
        self, games: Sequence[Game], rows: torch.Tensor | None
    ) -> tuple[torch.Tensor, np.ndarray, torch.Tensor]:
        """The legal moves' scores for each game's player to act, the padded ids, the trunk's features."""
        enc, action_of = self.encoder, self.table.action_of
        # a bytearray: torch takes the buffer as it is (writable), no copy of the batch
        data = bytearray(b"".join(enc.encode_bytes(g, g.to_act) for g in games))
        obs = np.frombuffer(data, INT8).reshape(len(games), -1)
        legal = [sorted(map(action_of.__getitem__, g.legal_moves())) for g in games]
        idx, valid = padded(legal)
        t_extra = None
        if self.facts is not None:
            t_extra = torch.from_numpy(np.stack([self.facts(g, g.to_act) for g in games]))
        t_obs = torch.from_numpy(obs)
        h = self.net.features(t_obs, t_extra)
        logits = self.net.logits(h, torch.from_numpy(idx), torch.from_numpy(valid), t_extra, t_obs, rows)
        return logits, idx, h

    @torch.no_grad()
    def play(
        self,
        games: list[Game],
        me: int,
        deal: int,
        draws: list[np.ndarray],
        counters: list[list[int]],
        horizon: int = 0,
        cap: int = 1500,
    ) -> tuple[list[float], int]:
        """Play deal ``deal`` of each game on (the network in every seat, greedily) to its end, or
        with ``horizon`` h to ``me``'s h-th turn (then the network's estimate); each game's value for
        ``me`` in points (:func:`relative_points`; lower is better), and the moves played."""
        values = [
            relative_points(g.deal_results[deal].scores, me) if len(g.deal_results) > deal else 0.0
            for g in games
        ]
        active = [i for i, g in enumerate(games) if len(g.deal_results) == deal]
        turns = [0] * len(games)
        played = [0] * len(games)
        moves = 0
        if self.rows is None:
            self.rows = self.net.acting_table()
        rows = self.rows
        while active:
            logits, idx, h = self.scores([games[i] for i in active], rows)
            best = logits.argmax(1).numpy()
            estimate = logits.max(1).values if self.q_values else self.net.value(h)
            still = []
            for j, i in enumerate(active):
                game = games[i]
                if horizon and game.to_act == me:
                    turns[i] += 1
                    if turns[i] > horizon:
                        values[i] = self.to_points * float(estimate[j])
                        continue
                apply_coupled(game, self.table.moves[int(idx[j, best[j]])], draws[i], counters[i])
                moves += 1
                played[i] += 1
                if played[i] >= cap and len(game.deal_results) == deal:
                    game.abandon_deal()
                if len(game.deal_results) == deal:
                    still.append(i)
                else:
                    values[i] = relative_points(game.deal_results[deal].scores, me)
            active = still
        return values, moves


def coupled_starts(
    start: Game, moves: Sequence[Move], draws: np.ndarray
) -> tuple[list[Game], list[list[int]]]:
    """A copy of ``start`` for each move, the move played in it with the coupled stock draws
    ``draws`` (:func:`~shanghai_env.agents.bots.search.apply_coupled`), and each copy's counters."""
    games, counters = [], []
    for move in moves:
        game = start.clone()
        counter = [0] * start.rules.num_players
        apply_coupled(game, move, draws, counter)
        games.append(game)
        counters.append(counter)
    return games, counters


class NetSearchBot:
    """A trainer network that searches where it is unsure (docs/bots.md, "Search over a network")."""

    needs_observation = True  # the prior is the network's scores of the real decision

    def __init__(
        self,
        player: str | PolicyAgent,
        name: str | None = None,
        seed: int | None = None,
        params: NetSearchParams | None = None,
        **options: Any,
    ) -> None:
        self.agent = player if isinstance(player, PolicyAgent) else PolicyAgent(player)
        self.name = name or f"search_{self.agent.name}"
        self.params = replace(params or NetSearchParams(), **options)
        self._rollouts: dict[Rules, BatchRollouts] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.stats = SearchStats()

    def candidates(self, decision: Decision) -> list[int]:
        """Action ids to search, the network's best first (alone where the decision is not searched)."""
        return self.scored_candidates(decision)[0]

    def scored_candidates(self, decision: Decision) -> tuple[list[int], list[float]]:
        """:meth:`candidates` and the network's score of each."""
        ids, scores = self.agent.move_scores(decision)
        order = np.argsort(-scores, kind="stable")
        if (
            len(ids) < 2
            or _kind(decision) not in self.params.decisions
            or scores[order[0]] - scores[order[1]] > self.params.gate
        ):
            order = order[:1]
        else:
            order = order[: 1 + self.params.alternatives]
        return [ids[int(k)] for k in order], [float(scores[k]) for k in order]

    def act(self, decision: Decision) -> int:
        self.stats.decisions += 1
        candidates = self.candidates(decision)
        best = candidates[0]
        if len(candidates) < 2:
            return best
        chosen = candidates[self.search(decision, candidates)]
        kind = _kind(decision)
        counts = self.stats.by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        self.stats.searched += 1
        if chosen != best:
            counts[1] += 1
            self.stats.changed += 1
        return chosen

    def weights_changed(self) -> None:
        """Call after the network's weights change in place (a trainer's): the rollouts remake
        what they keep from them."""
        for rollouts in self._rollouts.values():
            rollouts.weights_changed()

    def rollouts_for(self, rules: Rules) -> BatchRollouts:
        """The batched rollouts of a table (made once per table)."""
        rollouts = self._rollouts.get(rules)
        if rollouts is None:
            rollouts = self._rollouts[rules] = BatchRollouts(self.agent, rules)
        return rollouts

    def search(self, decision: Decision, candidates: list[int]) -> int:
        """Index of the candidate (action ids of the decision's table, the prior first) to play."""
        return self.choose(self.measure(decision, candidates))

    def measure(self, decision: Decision, candidates: list[int]) -> list[list[float]]:
        """The race: each candidate's values (points, lower is better) in the worlds it was
        played in; every candidate shares the prior's first worlds, a dropped one has fewer."""
        p = self.params
        view, rules = decision.view, decision.rules
        rollouts = self.rollouts_for(rules)
        moves = [decision.table.moves[a] for a in candidates]
        sampler = WorldSampler(view, rules)
        me, n = view.player, view.num_players
        alive = list(range(len(candidates)))
        values: list[list[float]] = [[] for _ in candidates]
        while len(values[0]) < p.worlds and len(alive) > 1:
            games: list[Game] = []
            draws: list[np.ndarray] = []
            counters: list[list[int]] = []
            owners: list[int] = []
            for _ in range(min(p.round_worlds, p.worlds - len(values[0]))):
                world = sampler.sample(self.rng)
                deal = len(world.deal_results)  # the deal in play, in every world
                world_draws = self.rng.random((n, DRAWS_PER_PLAYER))
                started, counted = coupled_starts(world, [moves[i] for i in alive], world_draws)
                games += started
                counters += counted
                draws += [world_draws] * len(alive)
                owners += alive
            got, played = rollouts.play(games, me, deal, draws, counters, p.horizon, p.rollout_cap)
            self.stats.rollouts += len(games)
            self.stats.rollout_moves += played
            for i, value in zip(owners, got):
                values[i].append(value)
            alive = [0] + [i for i in alive[1:] if beats(values[i], values[0], -p.keep_se)]
        return values

    def choose(self, values: list[list[float]]) -> int:
        """The candidate to play: the best of those still in the race at the end that beats the
        prior by ``switch_se`` standard errors, else the prior (0)."""
        best, best_diff = 0, 0.0
        for i in range(1, len(values)):
            if len(values[i]) < len(values[0]):  # left the race
                continue
            diff, se = paired_difference(values[i], values[0][: len(values[i])])
            if diff < best_diff and diff < -self.params.switch_se * se:
                best, best_diff = i, diff
        return best


def decision_kind(phase: Phase, down: bool) -> str:
    """The kind (one of :data:`DECISIONS`) of a decision in ``phase`` by a player ``down`` or not."""
    if phase == Phase.DRAW:
        return "draw"
    if phase == Phase.BUY:
        return "buy"
    return "down_play" if down else "play"


def _kind(decision: Decision) -> str:
    view = decision.view
    return decision_kind(view.phase, view.down[view.player])


def __getattr__(name: str) -> Any:
    """``scratch_w<N>`` and ``scratch_w<N>_h<H>``: factories of searches over the shipped
    ``scratch`` with N worlds a searched decision and horizon H (none: 0, to the deal's end):
    ``shanghai_env.agents.learned.players.net_search:scratch_w8`` names a player."""
    stem, _, horizon = name.removeprefix("scratch_w").partition("_h")
    if (
        name.startswith("scratch_w")
        and stem.isdigit()
        and int(stem) > 0
        and (not horizon or horizon.isdigit())
    ):
        worlds, h = int(stem), int(horizon or 0)

        def factory() -> NetSearchBot:
            rounds = min(worlds, NetSearchParams.round_worlds * max(1, worlds // 32))
            return NetSearchBot(
                shipped_path("scratch"),
                name=name.replace("_", "-"),
                worlds=worlds,
                round_worlds=rounds,
                horizon=h,
            )

        return factory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
