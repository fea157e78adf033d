"""``search``: determinised Monte-Carlo search, with planner rollouts to the end of the deal.

At a decision that matters the searcher lists its candidate moves, samples complete worlds
consistent with what it knows (:mod:`shanghai_env.worlds`), plays every candidate in every world
to the end of the deal with a bot in every seat (the *rollout policy*: ``planner``, the bot the
opponents are, or the faster ``greedy``), and compares the candidates by their mean result. Lower
scores are better: a rollout's value is the searcher's deal score minus the mean of the others'
(``relative``, what a game against them is decided by), or its own deal score (``own``).

- **Prior.** An internal planner is asked first on every decision; its move is kept unless a
  search shows another one is better. A forced move, or one the planner gets obviously right
  (passing on or not taking an upcard that brings the hand no closer to its contract, a joker
  taken, laying off, placing the next card while going down) costs no search.
- **Decisions searched** (``decisions``): by default taking or drawing the upcard (``draw``)
  and buying it or passing (``buy``). Also available: which card to discard before going down
  (``discard``: the planner's choice against its next best by its own scores), once down
  (``down_discard``), and going down now against keeping the hand (``go_down``). Measured
  against a large independent sample of worlds, the searcher's changes to buys and draws were
  worth several points each, its changes to discards nothing, and searching going down lost
  (docs/bots.md, "search").
- **Common random numbers.** Every candidate is played in the same worlds with the same rollout
  seeds, and each player's k-th stock draw of a rollout is the card at a fixed quantile of the
  sorted stock (:func:`apply_coupled`), so a candidate that shifts who draws when does not reshuffle
  everybody's later cards.
- **A race, and a cautious switch.** Worlds come in rounds of ``round_worlds``; after each
  round an alternative that does not look better than the planner's move leaves the race. At
  the end (``worlds`` worlds at most) the best remaining alternative replaces the planner's move
  only if it beats it by ``switch_se`` standard errors of the paired differences. Rollouts are
  noisy (the paired difference of two candidates in one world has a standard deviation of
  30-80 points), so an eager switch mostly follows noise.
- **Deterministic.** All sampling comes from a generator seeded by :meth:`SearchBot.reset`; the
  decision depends only on the view, the rules and that seed (never on time or hidden cards).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.base import Decision
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.handtools import (
    DISCARDS,
    HeuristicBot,
    cheapest_loss,
    fits_table,
    table_melds,
)
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.cards import JOKER, NUM_CARD_KINDS, full_deck
from shanghai_env.engine import HAND_SIZE, Game, Phase, PlayerView
from shanghai_env.moves import BUY, DRAW, PASS, TAKE, Move, MoveKind
from shanghai_env.rules import Rules
from shanghai_env.worlds import WorldSampler

ROLLOUT_POLICIES: dict[str, type[HeuristicBot]] = {"planner": PlannerBot, "greedy": GreedyBot}
OBJECTIVES = ("relative", "own")
DECISIONS = frozenset({"draw", "buy", "discard", "go_down", "down_discard"})
DEFAULT_DECISIONS = frozenset({"draw", "buy"})  # where search found gains (see the docstring)

DRAWS_PER_PLAYER = 128  # coupled stock draws prepared per player and world (then they repeat)

Candidate = tuple[Move, ...]  # the searcher's moves from the root (several when going down)


@dataclass(frozen=True)
class SearchParams:
    """The searcher's budget and choices (see the module docstring)."""

    worlds: int = 32  # most worlds per searched decision (the budget)
    rollout_policy: str = "planner"  # the bot playing every seat in rollouts
    objective: str = "relative"  # "relative": own deal score minus the others' mean; "own"
    discards: int = 3  # discard candidates: the planner's choice and its next best
    round_worlds: int = 8  # worlds per round of the race (see SearchBot._search)
    keep_se: float = 0.0  # an alternative stays in the race while it beats the planner's move by this
    switch_se: float = 1.0  # ... and replaces it at the end if it beats it by this many standard errors
    margin: float = 0.0  # ... and by this many points
    decisions: frozenset[str] = field(default=DEFAULT_DECISIONS)  # which decisions are searched
    rollout_cap: int = 1500  # moves a rollout may play before the deal is scored as it stands
    coupled_draws: bool = True  # each player's k-th stock draw comes from its own uniform number
    develop: int = 0  # most improving swaps per other hand in a sampled world (0: uniform worlds)

    def __post_init__(self) -> None:
        if not isinstance(self.worlds, int) or self.worlds < 1:
            raise ValueError(f"worlds must be an int >= 1, got {self.worlds!r}")
        if self.rollout_policy not in ROLLOUT_POLICIES:
            raise ValueError(
                f"rollout_policy must be one of {sorted(ROLLOUT_POLICIES)}, got {self.rollout_policy!r}"
            )
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if not isinstance(self.discards, int) or self.discards < 1:
            raise ValueError(f"discards must be an int >= 1, got {self.discards!r}")
        if not isinstance(self.round_worlds, int) or self.round_worlds < 1:
            raise ValueError(f"round_worlds must be an int >= 1, got {self.round_worlds!r}")
        unknown = set(self.decisions) - DECISIONS
        if unknown:
            raise ValueError(f"unknown decisions {sorted(unknown)}; allowed: {sorted(DECISIONS)}")
        object.__setattr__(self, "decisions", frozenset(self.decisions))
        if not isinstance(self.develop, int) or self.develop < 0:
            raise ValueError(f"develop must be an int >= 0, got {self.develop!r}")
        if self.rollout_cap < 1:
            raise ValueError(f"rollout_cap must be >= 1, got {self.rollout_cap}")


@dataclass
class SearchStats:
    """What the searcher did in the current game (reset with the game)."""

    decisions: int = 0  # decisions asked
    searched: int = 0  # decisions that ran rollouts
    changed: int = 0  # searched decisions where the planner's move was not kept
    rollouts: int = 0
    rollout_moves: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [searched, changed]


class SearchBot:
    """Determinised Monte-Carlo search over the planner's candidates (see the module docstring)."""

    name = "search"

    def __init__(
        self,
        name: str | None = None,
        seed: int | None = None,
        params: SearchParams | None = None,
        prior: PlannerBot | None = None,
        rollout: Callable[[], HeuristicBot] | None = None,
        **options: Any,
    ) -> None:
        if name is not None:
            self.name = name
        self.params = replace(params or SearchParams(), **options)
        # The prior (the move kept unless a search beats it) and the rollout policy are the
        # planner's by default; any planner-shaped bot can be either (e.g. a scorer network,
        # agents/bots/scorer_search.py), in which case it replaces ``rollout_policy``.
        if prior is not None and not isinstance(prior, PlannerBot):
            raise TypeError(f"prior must be a PlannerBot (or a subclass), got {prior!r}")
        if rollout is not None and not callable(rollout):
            raise TypeError(f"rollout must be a factory of rollout bots, got {rollout!r}")
        self.prior = prior if prior is not None else PlannerBot()
        policy = rollout if rollout is not None else ROLLOUT_POLICIES[self.params.rollout_policy]
        self._bots: list[HeuristicBot] = [policy() for _ in range(8)]
        self._tables: dict[Rules, ActionTable] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: reseed, forget the planner's plans and the statistics."""
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        # the planner gets the same seed: a searcher that never changes a move plays as PlannerBot(seed)
        self.prior.reset(seed)
        self.stats = SearchStats()

    # --- acting -----------------------------------------------------------------------------

    def act(self, decision: Decision) -> int:
        """The planner's move, unless rollouts over sampled worlds find a better candidate."""
        view = decision.view
        table = decision.table
        self.stats.decisions += 1
        prior = table.decode(self.prior.act(decision))
        if len(view.legal_moves) == 1:
            return table.encode(prior)
        kind, candidates = self._candidates(view, prior)
        if len(candidates) < 2:
            return table.encode(prior)
        best = self._search(view, decision.rules, candidates)
        counts = self.stats.by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        self.stats.searched += 1
        if candidates[best] != candidates[0]:
            counts[1] += 1
            self.stats.changed += 1
            if prior.kind == MoveKind.MELD:  # the planner's going down was not chosen
                self.prior.forget_plan()
        return table.encode(candidates[best][0])

    # --- candidates -------------------------------------------------------------------------

    def _candidates(self, view: PlayerView, prior: Move) -> tuple[str, list[Candidate]]:
        """(decision kind, candidates with the planner's first); one candidate means no search."""
        wanted = self.params.decisions
        me = view.player
        phase = view.phase
        if phase == Phase.DRAW:
            if "draw" not in wanted or view.upcard == JOKER or not self.prior.upcard_matters(view, False):
                return "draw", [(prior,)]
            return "draw", [(prior,), (DRAW if prior == TAKE else TAKE,)]
        if phase == Phase.BUY:
            if "buy" not in wanted or (prior == PASS and not self.prior.upcard_matters(view, True)):
                return "buy", [(prior,)]
            return "buy", [(prior,), (PASS if prior == BUY else BUY,)]
        if phase != Phase.PLAY or prior.kind in (MoveKind.LAYOFF, MoveKind.SWAP):
            return "other", [(prior,)]
        k = self.params.discards
        if view.down[me]:
            if "down_discard" not in wanted or prior.kind != MoveKind.DISCARD:
                return "down_discard", [(prior,)]
            return "down_discard", self._discard_candidates(prior, self._down_discard_order(view), k)
        if prior.kind == MoveKind.MELD:
            if "go_down" not in wanted:
                return "go_down", [(prior,)]
            going_down = (prior, *self.prior.going_down_plan())
            keep = [(DISCARDS[c],) for c in self._discard_order(view)[: max(1, k - 1)]]
            return "go_down", [going_down, *keep]
        if "discard" not in wanted:
            return "discard", [(prior,)]
        return "discard", self._discard_candidates(prior, self._discard_order(view), k)

    @staticmethod
    def _discard_candidates(prior: Move, order: list[int], k: int) -> list[Candidate]:
        out: list[Candidate] = [(prior,)]
        for c in order:
            if len(out) >= k:
                break
            if DISCARDS[c] != prior:
                out.append((DISCARDS[c],))
        return out

    def _discard_order(self, view: PlayerView) -> list[int]:
        """Cards to discard before going down, best first, by the planner's own score."""
        terms = self.prior.discard_terms(view)
        return sorted(terms, key=lambda c: (terms[c][0], c))

    def _down_discard_order(self, view: PlayerView) -> list[int]:
        """Cards to discard once down, best first, by the planner's own values."""
        values = self.prior.down_discard_values(view)
        return sorted(values, key=lambda c: (-values[c], c))

    # --- search -----------------------------------------------------------------------------

    def _search(self, view: PlayerView, rules: Rules, candidates: list[Candidate]) -> int:
        """Index of the candidate to play: 0 (the planner's move) unless another one beats it.

        A race over rounds of worlds: after each round an alternative whose mean paired
        difference to the planner's move is above ``keep_se`` standard errors (by default: any
        alternative not looking better) leaves the race; the race ends when none is left or after
        ``worlds`` worlds. The best remaining alternative is played if it beats the planner's move
        by ``margin`` points and ``switch_se`` standard errors.
        """
        p = self.params
        sampler = WorldSampler(view, rules)
        n = view.num_players
        me = view.player
        alive = list(range(len(candidates)))
        values: list[list[float]] = [[] for _ in candidates]
        while len(values[0]) < p.worlds and len(alive) > 1:
            for _ in range(min(p.round_worlds, p.worlds - len(values[0]))):
                world = sampler.sample(self.rng)
                if p.develop:
                    self._develop(world, view)
                deal = len(world.deal_results)
                seeds = [int(s) for s in self.rng.integers(1 << 62, size=n)]
                draws = self.rng.random((n, DRAWS_PER_PLAYER)) if p.coupled_draws else None
                for i in alive:
                    game = world.clone()
                    counters = [0] * n
                    for move in candidates[i]:
                        if game.to_act != me or move not in game.legal_moves():
                            break
                        apply_coupled(game, move, draws, counters)
                    scores = self._rollout(game, rules, seeds, draws, counters, deal)
                    values[i].append(relative_points(scores, me) if p.objective == "relative" else scores[me])
            alive = [0] + [i for i in alive[1:] if beats(values[i], values[0], -p.keep_se)]
        best, best_diff = 0, 0.0
        for i in alive[1:]:
            diff, se = paired_difference(values[i], values[0])
            if diff < best_diff and diff < -p.margin and diff < -p.switch_se * se:
                best, best_diff = i, diff
        return best

    def _develop(self, world: Game, view: PlayerView) -> None:
        """Make the other hands' unknown cards look like hands that have been played.

        A uniform world gives the others random cards; real players keep what helps them. A
        player down lays off what it can, so its unknown cards that fit the table are swapped for
        stock cards that do not. A player not down gets up to ``develop`` improving swaps (one per
        stock draw it has had this deal): a random stock card comes in and its unknown card that
        helps its contract least goes back to the stock, as greedy would discard. The view stays
        the same: only hidden cards move between hidden places.
        """
        stock = world.stock
        if not stock:
            return
        rng = self.rng
        me, n = view.player, view.num_players
        meter = self.prior.meter(view.contract)
        melds = table_melds(view)
        dealt = len(full_deck(n)) - HAND_SIZE * n - 1
        steps = min(self.params.develop, max(0, dealt - len(stock)) // n)
        for q in range(n):
            if q == me:
                continue
            hand, known = world.hands[q], world.picked_up[q]
            if world.down[q]:
                for c in range(NUM_CARD_KINDS):
                    for _ in range(hand[c] - known[c]):
                        if c != JOKER and not fits_table(c, melds):
                            break
                        for _ in range(8):
                            j = int(rng.integers(len(stock)))
                            x = stock[j]
                            if x != JOKER and not fits_table(x, melds):
                                hand[c] -= 1
                                hand[x] += 1
                                stock[j] = c
                                break
                continue
            for _ in range(steps):
                j = int(rng.integers(len(stock)))
                c = stock[j]
                hand[c] += 1
                free = [x for x in range(JOKER) if hand[x] > known[x]] or [c]
                x = cheapest_loss(meter, hand, free, world.rules)
                hand[x] -= 1
                stock[j] = x

    def _rollout(
        self,
        game: Game,
        rules: Rules,
        seeds: list[int],
        draws: np.ndarray | None = None,
        counters: list[int] | None = None,
        deal: int | None = None,
    ) -> tuple[int, ...]:
        """Play deal ``deal`` (by default the current one) to its end with the rollout policy in
        every seat; its deal scores."""
        table = self._tables.get(rules)
        if table is None:
            table = self._tables[rules] = action_table(rules)
        if deal is None:  # the deal in play (the root moves may have ended it: then no rollout)
            deal = len(game.deal_results)
        scores, moves = play_out(
            game, self._bots, seeds, rules, table, deal, draws, counters, self.params.rollout_cap
        )
        self.stats.rollouts += 1
        self.stats.rollout_moves += moves
        return scores


def play_out(
    game: Game,
    bots: Sequence[HeuristicBot],
    seeds: Sequence[int],
    rules: Rules,
    table: ActionTable,
    deal: int,
    draws: np.ndarray | None = None,
    counters: list[int] | None = None,
    cap: int = 1500,
) -> tuple[tuple[int, ...], int]:
    """Play deal ``deal`` of ``game`` to its end, ``bots[seat]`` (reset with ``seeds[seat]``) in
    every seat, with coupled stock draws when ``draws`` is given (:func:`apply_coupled`). The rules end
    the deal as in the real game (the world carries its moves so far, so ``max_moves_per_deal``
    ends it where it would end the real deal); ``cap`` is the searcher's own budget: after
    ``cap`` rollout moves the deal is scored as it stands. Returns its deal scores and the moves
    played."""
    for bot, seed in zip(bots, seeds):
        bot.reset(seed)
        bot.rules = rules
    results = game.deal_results
    moves = 0
    while len(results) == deal:
        p = game.to_act
        # The rollout bots are the searcher's own, on its own copy of a sampled world: they read
        # the view sharing the game's melds (Game.shared_view; greedy rollouts ~15% faster than
        # on game.view) and answer with the move itself, which Game.apply checks. A Decision,
        # act() and decision.apply_action (encode, decode, check twice) cost planner rollouts
        # ~12% of their moves a second: rollouts are all of the searcher's time.
        apply_coupled(game, bots[p].choose(game.shared_view(p), rules), draws, counters)
        moves += 1
        if moves >= cap and len(results) == deal:
            game.abandon_deal()
    return results[deal].scores, moves


def relative_points(scores: Sequence[int], me: int) -> float:
    """A deal's scores as the searcher compares them: its own minus the others' mean."""
    return scores[me] - (sum(scores) - scores[me]) / (len(scores) - 1)


def beats(a: list[float], b: list[float], z: float) -> bool:
    """Is the mean of a - b below -z standard errors (a is better: lower scores win)?"""
    diff, se = paired_difference(a, b)
    return diff < -z * se if math.isfinite(se) else diff < 0


def paired_difference(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean of the paired differences a - b and its standard error."""
    k = len(a)
    diffs = [x - y for x, y in zip(a, b)]
    mean = sum(diffs) / k
    if k < 2:
        return mean, math.inf
    var = sum((d - mean) ** 2 for d in diffs) / (k - 1)
    return mean, math.sqrt(var / k)


def apply_coupled(game: Game, move: Move, draws: np.ndarray | None, counters: list[int] | None) -> None:
    """Apply ``move``; with ``draws``, first stack the stock so that each player's k-th stock
    draw of the rollout is the card at quantile ``draws[player, k]`` of the sorted stock.

    The stock of a sampled world is in uniformly random order, so drawing a uniformly random
    remaining card at each draw plays the same game in distribution. Tying each draw to the
    drawer (not to the position in the stock) keeps the candidates' rollouts coupled: when one
    candidate makes a player take the upcard instead of drawing, the later draws of everybody
    stay the same cards instead of all shifting by one.
    """
    kind = move.kind
    if draws is None or counters is None or kind not in _DRAWING or not game.stock:
        game.apply(move)  # a legal move or a candidate: plain fields, legality checked
        return
    drawers = (game.to_act, game.turn_player) if kind == MoveKind.BUY else (game.turn_player,)
    stock = game.stock
    order = sorted(stock)
    picks = []
    for q in drawers:
        if not order:
            break
        u = draws[q, counters[q] % DRAWS_PER_PLAYER]
        picks.append(order.pop(int(u * len(order))))
    for c in picks:
        stock.remove(c)
    stock.extend(reversed(picks))  # the first drawer's card on top (the list's end)
    before, rebuilt = len(stock), game.reshuffles
    game.apply(move)
    drawn = before - len(game.stock) if game.reshuffles == rebuilt else len(picks)
    for q in drawers[:drawn]:
        counters[q] += 1


_DRAWING = (MoveKind.DRAW, MoveKind.PASS, MoveKind.BUY)


# --- named budgets (for the command line: ``shanghai_env.agents.bots.search:search_w16`` etc.) ---


def tiny() -> SearchBot:
    """A test-sized searcher: two worlds per decision."""
    return SearchBot(name="search-tiny", worlds=2, round_worlds=2)


def __getattr__(name: str) -> Any:
    """``search_w<N>`` and ``search_w<N>_greedy``: factories of searchers with N worlds a decision
    (rollouts by the planner, or by greedy): ``shanghai_env.agents.bots.search:search_w32`` names a player."""
    stem, _, policy = name.partition("_w")[2].partition("_")
    if (
        name.startswith("search_w")
        and stem.isdigit()
        and int(stem) > 0
        and policy in ("", "greedy", "planner")
    ):
        worlds = int(stem)

        def factory() -> SearchBot:
            return SearchBot(name=name.replace("_", "-"), worlds=worlds, rollout_policy=policy or "planner")

        return factory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
