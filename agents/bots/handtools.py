"""Shared machinery of the heuristic bots: phase dispatch, going down card by card, table reading.

A :class:`HeuristicBot` turns a :class:`~shanghai_env.agents.base.Decision` into one of five questions
(``draw``, ``buy``, ``play`` when not down, ``play_down`` once down, and the next card while
going down) and answers with a :class:`~shanghai_env.moves.Move` taken from the view's legal
moves. Everything here reads only the acting player's :class:`PlayerView`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import islice
from operator import sub

import numpy as np

from shanghai_env.agents.base import Decision
from shanghai_env.agents.bots.contract import ContractMeter, shared_meter
from shanghai_env.cards import JOKER, NUM_CARD_KINDS, card_points, deck_counts, rank_of, suit_of
from shanghai_env.engine import Phase, PlayerView
from shanghai_env.melds import RUN, SET, Arrangement, Meld, arrangements, pos_of
from shanghai_env.moves import Move, MoveKind
from shanghai_env.rules import Rules

MAX_ARRANGEMENTS = 64
DISCARDS: tuple[Move, ...] = tuple(Move(MoveKind.DISCARD, c) for c in range(NUM_CARD_KINDS))


class HeuristicBot:
    """Base class: answers each phase with a move; subclasses supply the judgement."""

    name = "bot"

    def __init__(self, name: str | None = None, seed: int | None = None) -> None:
        if name is not None:
            self.name = name
        self.rules = Rules()  # replaced by each decision's rules
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: forget plans and counters, reseed the generator."""
        self.seed = seed
        self.fallbacks = 0  # moves a subclass proposed that were not legal (a bug if ever > 0)
        self.rng = np.random.default_rng(seed)
        self._turns = (-1, 0)  # (deal, turns played in it)
        self._plan: list[Move] = []
        self._plan_key: tuple[int, int, int] | None = None
        self._planned_discard = -1

    # --- dispatch ---------------------------------------------------------------------------

    def act(self, decision: Decision) -> int:
        """Answer the decision's phase with a move and return its action id."""
        return decision.table.encode(self.choose(decision.view, decision.rules))

    def choose(self, view: PlayerView, rules: Rules) -> Move:
        """The move :meth:`act` plays (its action id aside): rollouts ask for moves directly."""
        self.rules = rules
        legal = view.legal_moves
        if not legal:
            raise ValueError(f"{self.name}: asked to act with no legal move")
        phase = view.phase
        if phase == Phase.DRAW:
            move = self.draw(view)
        elif phase == Phase.BUY:
            move = self.buy(view)
        elif phase == Phase.GOING_DOWN:
            move = self._next_placement(view)
        elif view.down[view.player]:
            move = self.play_down(view)
        else:
            move = self.play(view)
        if move not in legal:  # a bot's bug must never become an illegal action
            self.fallbacks += 1
            move = legal[0]
        return move

    def count_turn(self, view: PlayerView) -> int:
        """Count one more own turn in this deal; return how many so far."""
        deal, turns = self._turns
        turns = turns + 1 if deal == view.deal else 1
        self._turns = (view.deal, turns)
        return turns

    def meter(self, contract: int) -> ContractMeter:
        """The distance meter of a contract under these rules: the process's one
        (:func:`~shanghai_env.agents.bots.contract.shared_meter`), so a bot carries no cache of
        its own into a pickle or across the hundreds of bots of a trainer."""
        return shared_meter(contract, self.rules.same_suit_run_gap)

    # --- the questions (subclasses override) ------------------------------------------------

    def draw(self, view: PlayerView) -> Move:
        """Phase DRAW: ``take`` the upcard or ``draw`` from the stock."""
        raise NotImplementedError

    def buy(self, view: PlayerView) -> Move:
        """Phase BUY (out of turn): ``buy`` the declined upcard or ``pass``."""
        raise NotImplementedError

    def play(self, view: PlayerView) -> Move:
        """Phase PLAY before going down (or right after it): go down or discard."""
        raise NotImplementedError

    def play_down(self, view: PlayerView) -> Move:
        """Phase PLAY once down: swap, lay off or discard."""
        raise NotImplementedError

    def choose_arrangement(self, view: PlayerView, options: list[Arrangement]) -> tuple[Arrangement, int]:
        """(arrangement to lay down, card to discard afterwards or -1 to decide later)."""
        return options[0], -1

    # --- going down -------------------------------------------------------------------------

    def arrangements(self, view: PlayerView) -> list[Arrangement]:
        """Up to MAX_ARRANGEMENTS ways to lay the contract down from the hand."""
        rules = self.rules
        return list(
            islice(
                arrangements(
                    view.hand,
                    view.contract,
                    gap=rules.same_suit_run_gap,
                    exact=rules.exact_contract_melds,
                ),
                MAX_ARRANGEMENTS,
            )
        )

    def start_going_down(self, view: PlayerView) -> Move | None:
        """Plan the whole contract and return its first placement (None if it cannot)."""
        options = self.arrangements(view)
        if not options:
            return None
        chosen, discard = self.choose_arrangement(view, options)
        naturals = [
            Move(MoveKind.MELD, card, place, 0, i)
            for i, meld in enumerate(chosen)
            for card, place in meld
            if card != JOKER
        ]
        jokers = [
            Move(MoveKind.MELD, card, place, 0, i)
            for i, meld in enumerate(chosen)
            for card, place in meld
            if card == JOKER
        ]
        self._plan = naturals + jokers
        self._plan_key = (view.deal, view.player, view.contract)
        self._planned_discard = discard
        first = self._plan.pop(0)
        return first if first in view.legal_moves else None

    def _next_placement(self, view: PlayerView) -> Move:
        legal = view.legal_moves
        if self._plan_key == (view.deal, view.player, view.contract):
            while self._plan:
                move = self._plan.pop(0)
                if move in legal:
                    return move
        for move in legal:  # plan lost (should not happen): any placement keeps the contract open
            if move.kind == MoveKind.FINISH:
                return move
        return legal[0]

    def going_down_plan(self) -> tuple[Move, ...]:
        """What this bot means to play after the placement it last chose while going down: the
        placements still planned, then the discard planned with them (if any)."""
        rest = tuple(self._plan)
        if self._planned_discard >= 0:
            rest += (DISCARDS[self._planned_discard],)
        return rest

    def forget_plan(self) -> None:
        """Drop the going-down plan: its caller played something else instead (search does when
        its rollouts beat going down), so the next decision must not continue it."""
        self._plan = []
        self._planned_discard = -1

    def planned_discard(self, view: PlayerView) -> int:
        """The discard chosen with the arrangement, if it is still in hand (else -1)."""
        card = self._planned_discard
        self._planned_discard = -1
        return card if card >= 0 and view.hand[card] else -1


# --- reading the table ------------------------------------------------------------------------


def table_melds(view: PlayerView) -> list[Meld]:
    """Every meld on the table (all players), complete ones only."""
    return [m for melds in view.table for m in melds if m.places]


def fits_meld(card: int, meld: Meld) -> bool:
    """Could ``card`` be laid off on this table meld now?"""
    if card == JOKER:
        if meld.jokers >= meld.spec.max_jokers:
            return False
        if meld.spec.kind == SET:
            return True
        lo, hi = pos_of(meld.places[0]), pos_of(meld.places[-1])
        return hi - lo + 1 < 13 and (lo > 0 or hi < 13)
    if meld.spec.kind == SET:
        return rank_of(card) == meld.rank
    if suit_of(card) != meld.suit:
        return False
    lo, hi = pos_of(meld.places[0]), pos_of(meld.places[-1])
    if hi - lo + 1 >= 13:
        return False
    pos = card % 13
    return pos == lo - 1 or pos == hi + 1 or (pos == 0 and hi == 12)


def fits_table(card: int, melds: Iterable[Meld]) -> bool:
    """Could ``card`` be laid off on any of these melds now?"""
    return any(fits_meld(card, m) for m in melds)


def layable_naturals(melds: Iterable[Meld]) -> list[int]:
    """The natural cards (0..51, ascending) that :func:`fits_table` accepts on these melds, from
    each meld's ends instead of asking every card of every meld."""
    fits = [False] * 52
    for m in melds:
        if m.spec.kind == SET:
            for c in range(m.rank, 52, 13):
                fits[c] = True
            continue
        lo, hi = pos_of(m.places[0]), pos_of(m.places[-1])
        if hi - lo + 1 >= 13:
            continue
        base = m.suit * 13
        if lo > 0:
            fits[base + lo - 1] = True
        if hi < 12:
            fits[base + hi + 1] = True
        elif hi == 12:
            fits[base] = True  # the ace, high
    return [c for c in range(52) if fits[c]]


def near_run_end(card: int, melds: Iterable[Meld], reach: int = 2) -> bool:
    """Is ``card`` within ``reach`` places beyond the end of a run of its suit?"""
    if card == JOKER:
        return False
    suit, pos = suit_of(card), card % 13
    for m in melds:
        if m.spec.kind != RUN or m.suit != suit:
            continue
        lo, hi = pos_of(m.places[0]), pos_of(m.places[-1])
        for p in (pos, 13 if pos == 0 else -99):
            if 0 < lo - p <= reach or 0 < p - hi <= reach:
                return True
    return False


def seen_counts(view: PlayerView) -> list[int]:
    """Cards this player has seen and knows are out of the stock and other hands' unknown part."""
    # count vectors added as integers with a byte per card (no count reaches 256)
    total = int.from_bytes(bytes(view.hand), "little") + int.from_bytes(bytes(view.discard_counts), "little")
    for q, picked in enumerate(view.picked_up):
        if q != view.player:
            total += int.from_bytes(bytes(picked), "little")
    seen = list(total.to_bytes(NUM_CARD_KINDS, "little"))
    for melds in view.table:
        for m in melds:
            for c in m.cards:
                seen[c] += 1
    return seen


_HELD = bytes([48] + [49] * 255)  # a count as the binary digit of "held": b"0" or b"1"


def naturals_held(counts: Sequence[int]) -> int:
    """The natural cards (0..51) of a count vector, as bits (bit c: card c)."""
    return int(bytes(counts[51::-1]).translate(_HELD), 2)


def unseen_counts(view: PlayerView) -> list[int]:
    """Copies of each card kind that may still be drawn or held unseen by others."""
    total = deck_counts(view.num_players)
    seen = seen_counts(view)
    return list(map(max, _ZEROS, map(sub, total, seen)))  # max(0, total - seen), card by card


_ZEROS = (0,) * NUM_CARD_KINDS


def hand_kinds(hand: Sequence[int]) -> list[int]:
    """The card kinds a count vector holds, ascending."""
    return [c for c in range(NUM_CARD_KINDS) if hand[c]]


def cheapest_loss(meter: ContractMeter, hand: Sequence[int], cards: Sequence[int], rules: Rules) -> int:
    """``min(cards, key=lambda c: (meter.distance(minus(hand, c)), -points(c, rules), c))``,
    asking the meter less: losing a card never lowers a hand's distance, so the first card in
    (-points, card) order whose loss keeps the hand's own distance is that minimum, and the
    cards after it need no look."""
    order = sorted(cards, key=lambda c: (-points(c, rules), c))
    if len(order) == 1:
        return order[0]
    keep = meter.distance(hand)
    after: dict[int, int] = {}
    for c in order:
        d = after[c] = meter.distance(minus(hand, c))
        if d <= keep:
            return c
    return min(order, key=lambda c: (after[c], -points(c, rules), c))


def minus(hand: Sequence[int], card: int) -> tuple[int, ...]:
    """The hand (as a tuple) with one ``card`` fewer."""
    h = list(hand)
    h[card] -= 1
    return tuple(h)


def plus(hand: Sequence[int], card: int) -> tuple[int, ...]:
    """The hand (as a tuple) with one ``card`` more."""
    h = list(hand)
    h[card] += 1
    return tuple(h)


def points(card: int, rules: Rules) -> int:
    """What ``card`` scores if held at the end of a deal under these rules."""
    return card_points(card, rules.joker_points)


def moves_of(view: PlayerView, kind: MoveKind) -> list[Move]:
    """The legal moves of one kind."""
    return [m for m in view.legal_moves if m.kind == kind]
