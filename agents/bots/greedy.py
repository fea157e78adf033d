"""``greedy``: plays the contract sensibly and fast, one move at a time, never looking ahead.

Strategy (``d`` is the distance of the hand to the contract, :mod:`shanghai_env.agents.bots.contract`):

- **Draw.** Before going down: take the upcard when it lowers ``d`` (a joker always), else draw
  from the stock. Once down: take the upcard when it can be laid off, else draw.
- **Buy.** Only before going down, and only when the upcard lowers ``d``, within a budget
  (keeps one buy in contracts 1–6). When the hand has the contract but too few cards to go
  down and still discard (contracts 7–10), it buys whatever is offered.
- **Go down** as soon as the engine offers it, with the first arrangement
  :func:`shanghai_env.melds.arrangements` finds (naturals first, jokers last).
- **Once down:** swap a table joker for a natural it holds when that natural cannot be laid
  off directly (the joker is then laid off), lay off every card it can (naturals first), then
  discard its costliest card.
- **Discard** (before going down): the card whose loss raises ``d`` least; ties go to the card
  worth most points. Never a joker while it has another card.
"""

from __future__ import annotations

from shanghai_env.agents.bots.contract import size_deficit
from shanghai_env.agents.bots.handtools import (
    DISCARDS,
    HeuristicBot,
    cheapest_loss,
    fits_table,
    hand_kinds,
    moves_of,
    plus,
    points,
    table_melds,
)
from shanghai_env.cards import JOKER
from shanghai_env.engine import PlayerView
from shanghai_env.moves import BUY, DRAW, PASS, TAKE, Move, MoveKind


class GreedyBot(HeuristicBot):
    """Myopic contract player: distance first, points second."""

    name = "greedy"

    def draw(self, view: PlayerView) -> Move:
        up = view.upcard
        if up < 0:
            return DRAW
        if view.down[view.player]:
            return TAKE if fits_table(up, table_melds(view)) else DRAW
        if up == JOKER:
            return TAKE
        meter = self.meter(view.contract)
        return TAKE if meter.distance(plus(view.hand, up)) < meter.distance(view.hand) else DRAW

    def buy(self, view: PlayerView) -> Move:
        p = view.player
        if view.down[p] or view.upcard < 0:
            return PASS
        meter = self.meter(view.contract)
        d = meter.distance(view.hand)
        if d == 0:
            return BUY if size_deficit(view.hand_sizes[p], view.contract) > 0 else PASS
        keep = 1 if view.contract <= 6 else 0
        if view.buys_left[p] <= keep:
            return PASS
        return BUY if meter.distance(plus(view.hand, view.upcard)) < d else PASS

    def play(self, view: PlayerView) -> Move:
        if not view.went_down_this_turn and any(m.kind == MoveKind.MELD for m in view.legal_moves):
            first = self.start_going_down(view)
            if first is not None:
                return first
        if view.went_down_this_turn:
            return self._costliest(view)
        hand = view.hand
        kinds = [c for c in hand_kinds(hand) if c != JOKER] or [JOKER]
        # the card whose loss raises the distance least, then the costliest
        return DISCARDS[cheapest_loss(self.meter(view.contract), hand, kinds, self.rules)]

    def play_down(self, view: PlayerView) -> Move:
        layoffs = moves_of(view, MoveKind.LAYOFF)
        natural_layoffs = {m.card for m in layoffs if m.card != JOKER}
        for m in moves_of(view, MoveKind.SWAP):
            if m.card not in natural_layoffs:
                return m
        for m in layoffs:
            if m.card != JOKER:
                return m
        if layoffs:
            return layoffs[0]
        return self._costliest(view)

    def _costliest(self, view: PlayerView) -> Move:
        kinds = hand_kinds(view.hand)
        return DISCARDS[max(kinds, key=lambda c: (points(c, self.rules), c))]
