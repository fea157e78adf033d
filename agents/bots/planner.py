"""``planner``: the strongest heuristic bot; plays by distance, live outs, points at risk and danger.

Strategy (``d`` is the distance to the contract, :mod:`shanghai_env.agents.bots.contract`; *outs* are the card
kinds that would lower ``d``; *live outs* count the copies of those cards this player has not
seen, i.e. that may still come from the stock or an opponent's discard):

- **Discard before going down.** Every distinct card is scored by what the hand would be
  without it: ``d`` first, then live outs, then the points it sheds (weighted by the risk that
  someone goes out soon: opponents down with few cards), minus a *danger* term for feeding the
  next players: a card that a down opponent could lay off, or that matches what a not-down
  opponent visibly picked up (same rank, or same suit close by). The next player, who may take
  the card for free, weighs most; the others would have to buy it. Jokers are never discarded.
- **Draw.** Take the upcard when it lowers ``d`` (a joker always); once down, when it can be
  laid off.
- **Buy.** Never once down (it adds two cards and sheds one at most). Before going down, buy a
  card that lowers ``d`` when the hand is close to the contract (so the buy brings going down
  nearer). When the hand is still short of the cards going down needs (contracts 7–10), buy
  every card that lowers ``d``, and in contracts 7 and 9, where the hand then holds one card
  more than the contract, buy any card at all (the buys are needed anyway and a useless card
  costs nothing there); once the contract is complete, buy whatever brings the last cards. In
  contracts where going down is going out blind (6 with no buy, 8 with one, 10 with two) it
  does not buy past that count unless it is far from the contract: an extra buy would turn a
  blind out (−25 or −50) into a hand of leftovers.
- **Deadlocks.** Past 100 of its own turns in one deal (every player holding what another
  needs), it now and then throws a random card, from its seeded generator.
- **Go down** as soon as the engine allows, choosing among the arrangements the one whose
  leftover cards are cheapest: low points, and laid off easily next turn (on the table or on
  its own new melds). When going down is going out, it prefers an arrangement without a joker
  (−50 instead of −25).
- **Once down:** swap jokers for naturals it holds, lay off everything (declaring jokers where
  they open a place for another card it holds), take layable upcards, and discard the card
  with the most points and least chance of becoming layable (cards next to a run's end, or
  of ranks opponents collect, may become layable), avoiding cards opponents want.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shanghai_env.agents.bots.contract import bits, size_deficit
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.handtools import (
    DISCARDS,
    HeuristicBot,
    fits_meld,
    fits_table,
    hand_kinds,
    layable_naturals,
    moves_of,
    naturals_held,
    near_run_end,
    plus,
    points,
    table_melds,
    unseen_counts,
)
from shanghai_env.cards import JOKER, rank_of
from shanghai_env.engine import PlayerView
from shanghai_env.melds import CONTRACTS, Arrangement, Meld, contract_size
from shanghai_env.moves import BUY, PASS, Move, MoveKind

BLIND_CONTRACT_BUYS = {6: 0, 8: 1, 10: 2}  # buys after which going down is going out blind
# bit b of a count 0..255 as the binary digit b"0" or b"1"
_BIT_PLANES = tuple(bytes(48 + (k >> b & 1) for k in range(256)) for b in range(2))


@dataclass(frozen=True)
class PlannerParams:
    """Weights of the planner's scores (distance units: one card of distance = 10)."""

    w_distance: float = 10.0
    w_live: float = 0.4  # per live out (capped at live_cap)
    live_cap: int = 24
    w_points: float = 0.08  # per point shed, before risk scaling
    risk_scale: float = 8.0  # points weigh (1 + risk_scale * risk)
    w_danger: float = 1.0
    next_player_weight: float = 1.0
    other_player_weight: float = 0.35
    buy_max_distance: int = 2  # contracts 1-6: buy an improving card when d <= this
    late_buy_max_distance: int = 2  # contracts 7-10 (long hands), once the size deficit is met
    blind_buy_min_distance: int = 4  # in a blind-eligible hand, buy only when d >= this
    w_unlayable: float = 12.0  # leftover card not layable next turn (going down), in points
    keep_near_end: float = 6.0  # post-down: value of a card near a run end, in points
    keep_wanted_rank: float = 4.0  # post-down: a rank an opponent collects (a set may appear)
    deficit_buy_any_distance: int = 99  # short of cards (with a spare place): buy any when d <= this
    patience: int = 100  # own turns in a deal before it may throw a random card now and then
    shake: float = 0.2  # chance per turn, past patience, of that random discard


class PlannerBot(HeuristicBot):
    """Distance + live outs + points at risk + danger; chooses arrangements and buys with care."""

    name = "planner"

    def __init__(self, name: str | None = None, seed: int | None = None, params: PlannerParams | None = None):
        self.params = params or PlannerParams()
        super().__init__(name, seed)

    # --- shared estimates -------------------------------------------------------------------

    def risk(self, view: PlayerView) -> float:
        """0..1: how likely an opponent goes out soon (down opponents with few cards)."""
        risk = 0.0
        for q in range(view.num_players):
            if q == view.player or not view.down[q]:
                continue
            h = view.hand_sizes[q]
            risk = max(risk, 1.0 if h <= 1 else 1.0 / h)
        return risk

    def live_outs(self, outs: int, unseen: list[int]) -> int:
        """The live outs: the copies of the cards in ``outs`` (a bit set of card kinds) this
        player has not seen (``unseen``, per kind), capped at ``params.live_cap``."""
        total = 0
        for c in bits(outs):
            total += unseen[c]
        return min(total, self.params.live_cap)

    def _live_counter(self, unseen: list[int]) -> Callable[[int], int]:
        """``live_outs(outs, unseen)`` as a function of ``outs`` alone: the unseen counts (0..3: at
        most three decks) split into two bit planes, so that a sum over outs is two popcounts."""
        if max(unseen) > 3:
            return lambda outs: self.live_outs(outs, unseen)
        counts = bytes(unseen[::-1])  # read as binary digits: card c is bit c
        ones = int(counts.translate(_BIT_PLANES[0]), 2)
        twos = int(counts.translate(_BIT_PLANES[1]), 2)
        cap = self.params.live_cap

        def live(outs: int) -> int:
            total = (outs & ones).bit_count() + 2 * (outs & twos).bit_count()
            return total if total < cap else cap

        return live

    def danger(self, view: PlayerView) -> list[float]:
        """Per card kind: how much discarding it would help the players after this one."""
        p = self.params
        n, me = view.num_players, view.player
        danger = [0.0] * 53
        danger[JOKER] = 10.0
        layable: list[int] | None = None  # the cards a down player could lay off
        for k in range(1, n):
            q = (me + k) % n
            weight = p.next_player_weight if k == 1 else p.other_player_weight
            if view.down[q]:
                # a down player who takes it lays it off; others would have to buy it
                w = weight * (1.0 if k == 1 else 0.3)
                if layable is None:
                    layable = layable_naturals(table_melds(view))
                for c in layable:
                    danger[c] += w
                continue
            picked = naturals_held(view.picked_up[q])
            if not picked:
                continue  # nothing picked up: no interest shown
            interest: dict[int, float] = {}  # card -> interest, where there is any
            for c in bits(picked):
                rank, suit = c % 13, c // 13
                for s in range(4):
                    x = s * 13 + rank
                    interest[x] = max(interest.get(x, 0.0), 0.7)
                for dr in (-2, -1, 1, 2):
                    r = rank + dr
                    if 0 <= r < 13:
                        x = suit * 13 + r
                        interest[x] = max(interest.get(x, 0.0), 0.5)
                interest[c] = 1.0
            for c, v in interest.items():  # one addition per card and player, as before
                danger[c] += weight * v
        return danger

    # --- draw and buy ----------------------------------------------------------------------

    # The upcard is taken exactly when greedy takes it (when it lowers the distance, or can be
    # laid off once down); tournaments found no better rule for the free card.
    draw = GreedyBot.draw

    def buy(self, view: PlayerView) -> Move:
        me = view.player
        up = view.upcard
        if view.down[me] or up < 0:
            return PASS
        contract = view.contract
        meter = self.meter(contract)
        size = view.hand_sizes[me]
        d = meter.distance(view.hand)
        deficit = size_deficit(size, contract)
        if deficit > 0:
            # short of cards to go down: the buys are needed anyway; when the hand will then hold
            # a card more than the contract (7 and 9), a useless card costs nothing, so any will do
            slack = size + 2 * ((deficit + 1) // 2) - contract_size(contract)
            if d == 0 or (slack > 0 and d <= self.params.deficit_buy_any_distance):
                return BUY
            return BUY if up == JOKER or meter.distance(plus(view.hand, up)) < d else PASS
        improving = up == JOKER or meter.distance(plus(view.hand, up)) < d
        if not improving:
            return PASS
        if contract in BLIND_CONTRACT_BUYS and size == contract_size(contract):
            # going down would be going out blind: keep it so unless far from the contract
            return BUY if d >= self.params.blind_buy_min_distance else PASS
        limit = self.params.buy_max_distance if contract <= 6 else self.params.late_buy_max_distance
        return BUY if d <= limit else PASS

    # --- before going down -------------------------------------------------------------------

    def play(self, view: PlayerView) -> Move:
        if view.went_down_this_turn:
            card = self.planned_discard(view)
            return DISCARDS[card] if card >= 0 else self.discard_down(view)
        if any(m.kind == MoveKind.MELD for m in view.legal_moves):
            first = self.start_going_down(view)
            if first is not None:
                return first
        return DISCARDS[self.discard_before_down(view)]

    def discard_before_down(self, view: PlayerView) -> int:
        """The card kind to discard before going down (the lowest :meth:`discard_terms` score, or
        past ``patience`` now and then a random one); a subclass may choose otherwise."""
        p = self.params
        if self.count_turn(view) > p.patience and self.rng.random() < p.shake:
            # a long deal is usually a deadlock (each holds what another needs): shake it
            kinds = [c for c in hand_kinds(view.hand) if c != JOKER] or [JOKER]
            return kinds[int(self.rng.integers(len(kinds)))]
        terms = self.discard_terms(view)
        return min(terms, key=lambda c: terms[c][0])  # the first of the lowest, cards ascending

    def discard_terms(
        self, view: PlayerView, danger: list[float] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        """Before going down, per card kind it may discard (jokers only if nothing else), in
        ascending order: (its score, lower is better; the distance after; the live outs after).
        ``danger`` is :meth:`danger` of the view, when the caller has it already."""
        p = self.params
        hand = view.hand
        kinds = [c for c in hand_kinds(hand) if c != JOKER] or [JOKER]
        meter = self.meter(view.contract)
        live_of = self._live_counter(unseen_counts(view))
        weight_pts = p.w_points * (1.0 + p.risk_scale * self.risk(view))
        if danger is None:
            danger = self.danger(view)
        terms = {}
        for c, (d, outs) in zip(kinds, meter.analyse_losses(hand, kinds)):
            live = live_of(outs)
            pts = points(c, self.rules)
            terms[c] = (
                p.w_distance * d - p.w_live * live - weight_pts * pts + p.w_danger * danger[c],
                d,
                live,
            )
        return terms

    def choose_arrangement(self, view: PlayerView, options: list[Arrangement]) -> tuple[Arrangement, int]:
        """The arrangement (and discard) leaving the cheapest leftover hand."""
        p = self.params
        specs = CONTRACTS[view.contract]
        table = table_melds(view)
        danger = self.danger(view)
        best = (float("inf"), 0, -1)
        for i, arrangement in enumerate(options):
            left = list(view.hand)
            jokers_used = 0
            mine: list[Meld] = []
            for spec, cards in zip(specs, arrangement):
                meld = Meld(spec)
                for card, place in sorted(cards, key=lambda cp: cp[0] == JOKER):
                    meld.add(card, place)
                    left[card] -= 1
                    jokers_used += card == JOKER
                mine.append(meld)
            kinds = hand_kinds(left)
            if sum(left) == 1:  # going down is going out blind
                score = -50.0 if jokers_used == 0 else -25.0
                cand = (score, i, kinds[0])
            else:
                melds = table + mine
                cost = {
                    c: points(c, self.rules) + (0.0 if fits_table(c, melds) else p.w_unlayable) for c in kinds
                }
                total = sum(cost[c] * left[c] for c in kinds)
                # discard the card that costs most to keep, unless it feeds the next player
                x = max(kinds, key=lambda c: (cost[c] - 3.0 * danger[c], -c))
                cand = (total - cost[x], i, x)
            if cand[0] < best[0]:
                best = cand
        return options[best[1]], best[2]

    # --- once down ----------------------------------------------------------------------------

    def play_down(self, view: PlayerView) -> Move:
        layoffs = moves_of(view, MoveKind.LAYOFF)
        natural = [m for m in layoffs if m.card != JOKER]
        natural_cards = {m.card for m in natural}
        for m in moves_of(view, MoveKind.SWAP):
            if m.card not in natural_cards:
                return m
        if natural:
            return natural[0]
        if layoffs:
            return self._best_joker_layoff(view, layoffs)
        return self.discard_down(view)

    def _best_joker_layoff(self, view: PlayerView, layoffs: list[Move]) -> Move:
        """Declare the joker where it opens a place for another card in hand."""
        n = view.num_players
        hand = view.hand
        kinds = [c for c in hand_kinds(hand) if c != JOKER]
        best, best_gain = layoffs[0], -1
        for m in layoffs:
            meld = view.table[(view.player + m.seat) % n][m.meld].copy()
            meld.add(JOKER, m.place)
            gain = sum(1 for c in kinds if fits_meld(c, meld))
            if gain > best_gain:
                best, best_gain = m, gain
        return best

    def discard_down(self, view: PlayerView) -> Move:
        """The discard once down (the highest :meth:`down_discard_values`); a subclass may choose
        otherwise."""
        values = self.down_discard_values(view)
        return DISCARDS[max(values, key=lambda c: (values[c], -c))]

    def down_discard_values(
        self,
        view: PlayerView,
        danger: list[float] | None = None,
        melds: list[Meld] | None = None,
        wanted: set[int] | None = None,
    ) -> dict[int, float]:
        """Once down, per card kind in hand (ascending): how good it is to throw away (higher:
        better): its points at risk, less the value of keeping it and its danger. ``danger``,
        ``melds`` (:func:`table_melds`) and ``wanted`` (:func:`wanted_ranks`) of the view may
        be passed in when the caller has them already."""
        p = self.params
        melds = table_melds(view) if melds is None else melds
        wanted = wanted_ranks(view) if wanted is None else wanted
        risk_w = 1.0 + p.risk_scale * self.risk(view)
        if danger is None:
            danger = self.danger(view)

        def value(c: int) -> float:
            v = points(c, self.rules) * risk_w
            if c == JOKER:
                return v - 200.0
            if near_run_end(c, melds):
                v -= p.keep_near_end
            if rank_of(c) in wanted:
                v -= p.keep_wanted_rank
            return v - p.w_danger * danger[c]

        return {c: value(c) for c in hand_kinds(view.hand)}

    # --- the upcard ---------------------------------------------------------------------------

    def upcard_matters(self, view: PlayerView, buying: bool) -> bool:
        """Could taking (or, with ``buying``, buying) the upcard be right? A card that lowers the
        distance, once down a card that can be laid off, and when buying short of cards any card.
        Otherwise the answer is plainly no."""
        up = view.upcard
        if up < 0:
            return False
        me = view.player
        if view.down[me]:
            return fits_table(up, table_melds(view))
        if buying and size_deficit(view.hand_sizes[me], view.contract) > 0:
            return True  # short of cards: any buy may be worth it
        meter = self.meter(view.contract)
        return meter.distance(plus(view.hand, up)) < meter.distance(view.hand)


def wanted_ranks(view: PlayerView) -> set[int]:
    """Ranks of the cards that players not yet down were seen to pick up (they collect them)."""
    return {
        rank_of(c)
        for q in range(view.num_players)
        if q != view.player and not view.down[q]
        for c in range(52)
        if view.picked_up[q][c]
    }
