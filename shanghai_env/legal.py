"""Legal-move generation, one small function per phase (the engine's only source of legality)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, Protocol

from .cards import ACE_HIGH_BASE, JOKER, NUM_NATURALS, PLACE_CARD, make_place
from .melds import RUN, SET, Meld, MeldSpec, can_fulfil, completion_feasible, placement_options, pos_of
from .moves import BUY, DRAW, FINISH, PASS, TAKE, Move, MoveKind
from .rules import Rules


class Game(Protocol):
    """What legal-move generation reads of a game; :class:`shanghai_env.engine.Game` is one.

    Spelled out here so that this module sits below the engine that calls it (no import cycle).
    """

    @property
    def rules(self) -> Rules: ...
    @property
    def num_players(self) -> int: ...
    @property
    def phase(self) -> int: ...
    @property
    def turn_player(self) -> int: ...
    @property
    def contract(self) -> int: ...
    @property
    def specs(self) -> tuple[MeldSpec, ...]: ...
    @property
    def hands(self) -> list[list[int]]: ...
    @property
    def hand_sizes(self) -> list[int]: ...
    @property
    def table(self) -> list[list[Meld]]: ...
    @property
    def down(self) -> list[bool]: ...
    @property
    def went_down_this_turn(self) -> bool: ...
    @property
    def table_version(self) -> int: ...

    table_index: tuple[Any, ...] | None  # this module's cache, brought up to date when table_version moves


_DISCARDS = tuple(Move(MoveKind.DISCARD, c) for c in range(NUM_NATURALS + 1))


# The moves of the two phases whose moves never vary, as shared tuples: a caller may recognise
# them by identity (the env keeps one read-only mask for each).
DRAW_PHASE_MOVES: tuple[Move, ...] = (TAKE, DRAW)
BUY_PHASE_MOVES: tuple[Move, ...] = (BUY, PASS)


def legal_moves(game: Game) -> tuple[Move, ...]:
    phase = int(game.phase)
    if phase == 0:  # DRAW
        return DRAW_PHASE_MOVES
    if phase == 1:  # BUY
        return BUY_PHASE_MOVES
    if phase == 2:  # PLAY
        return tuple(_play_moves(game))
    if phase == 3:  # GOING_DOWN
        p = game.turn_player
        moves = _placements(game, game.hands[p], game.table[p])
        if not game.rules.exact_contract_melds and all(m.is_complete(False) for m in game.table[p]):
            moves.append(FINISH)
        return tuple(moves)
    return ()


def _play_moves(game: Game) -> list[Move]:
    p = game.turn_player
    hand = game.hands[p]
    moves = list(compress(_DISCARDS, hand))  # one discard per kind of card held, in card order
    rules = game.rules
    if not game.down[p]:
        if can_fulfil(hand, game.contract, gap=rules.same_suit_run_gap, exact=rules.exact_contract_melds):
            moves += _placements(game, hand, [Meld(s) for s in game.specs])
    elif not game.went_down_this_turn:
        if game.hand_sizes[p] >= 2:  # nobody may lay off their last card
            moves += _layoffs(game, hand)
        if rules.joker_swaps:
            moves += _swaps(game, hand)
    return moves


def _candidates(meld: Meld, hand: list[int]) -> list[tuple[int, int]]:
    """(card, place) pairs from the hand that may join a meld being laid down, before feasibility."""
    out: list[tuple[int, int]] = []
    if not meld.places:
        for c in range(NUM_NATURALS):
            if hand[c]:
                out.append((c, c))
                if meld.spec.kind == RUN and c % 13 == 0:
                    out.append((c, ACE_HIGH_BASE + c // 13))
        return out
    has_joker = hand[JOKER] > 0 and meld.jokers < meld.spec.max_jokers
    if meld.spec.kind == SET:
        for s in range(4):
            c = s * 13 + meld.rank
            if hand[c]:
                out.append((c, c))
            if has_joker:
                out.append((JOKER, c))
        return out
    filled = {pos_of(p) for p in meld.places}
    for pos in range(14):
        if pos in filled:
            continue
        place = make_place(meld.suit, pos)
        c = meld.suit * 13 + pos % 13
        if hand[c]:
            out.append((c, place))
        if has_joker:
            out.append((JOKER, place))
    return out


def _placements(game: Game, hand: list[int], melds: list[Meld]) -> list[Move]:
    """Going-down moves that keep the contract completable (so going down never dead-ends)."""
    rules = game.rules
    if not rules.exact_contract_melds:
        return placements_by_search(game, hand, melds)
    options = placement_options(hand, melds, gap=rules.same_suit_run_gap)
    # Every option is one of _candidates(meld, hand); listed here in that order (by card for an
    # empty meld, by place in a set, by run position in a run; a natural before a joker).
    per_meld: list[list[tuple[int, int]]] = [[] for _ in melds]
    for i, card, place in options:
        per_meld[i].append((card, place))
    moves: list[Move] = []
    for i, meld in enumerate(melds):
        mine = per_meld[i]
        if not mine:
            continue
        if not meld.places:
            mine.sort()
        elif meld.spec.kind == SET:
            mine.sort(key=_by_place)
        else:
            mine.sort(key=_by_position)
        for card, place in mine:
            if meld.fits_building(card, place, True):
                moves.append(Move(MoveKind.MELD, card, place, 0, i))
    return moves


def _by_place(option: tuple[int, int]) -> tuple[int, int]:
    return option[1], option[0]


def _by_position(option: tuple[int, int]) -> tuple[int, int]:
    return pos_of(option[1]), option[0]


def placements_by_search(game: Game, hand: list[int], melds: list[Meld]) -> list[Move]:
    """The same moves by one feasibility search per candidate: the reference, and the way for
    ``exact_contract_melds=False``, where melds may grow past any minimal completion."""
    rules = game.rules
    exact = rules.exact_contract_melds
    gap = rules.same_suit_run_gap
    moves: list[Move] = []
    for i, meld in enumerate(melds):
        for card, place in _candidates(meld, hand):
            if not meld.fits_building(card, place, exact):
                continue
            trial = meld.copy()
            trial.add(card, place)
            hand[card] -= 1
            ok = completion_feasible(hand, [*melds[:i], trial, *melds[i + 1 :]], gap=gap, exact=exact)
            hand[card] += 1
            if ok:
                moves.append(Move(MoveKind.MELD, card, place, 0, i))
    return moves


# Per table state (Game.table_version), for each owner: the cards each meld accepts. A table
# changes only on meld, layoff and swap moves, while layoffs are asked for on every turn of a
# player who is down, so the scan of every meld is done once per table state; and when the table
# changes, only the owners whose melds changed are scanned again (a layoff or a swap changes one
# meld of one owner: with eight players down, the other seven owners' entries are kept).
_Accepts = tuple[tuple[int, int, int, bool], ...]  # one owner's (meld, card, place, joker fits)
_Spots = tuple[tuple[int, int, int], ...]  # one owner's (meld, natural, place) of its jokers
_Targets = tuple[_Accepts, ...]  # per owner
_JokerSpots = tuple[_Spots, ...]  # per owner
_Owner = tuple[list[Meld], tuple[int, ...], _Accepts, _Spots]  # melds list, a key per meld, targets, spots


def _table_index(game: Game) -> tuple[_Targets, _JokerSpots]:
    cached = game.table_index
    version = game.table_version
    if cached is not None and cached[0] == version:
        return cached[1], cached[2]
    before: tuple[_Owner, ...] | None = cached[3] if cached is not None and len(cached) > 3 else None
    owners: list[_Owner] = []
    for q, melds in enumerate(game.table):
        # A meld's key, its length plus 64 times its jokers, changes with every move that changes
        # the meld (a layoff adds a card, a swap takes a joker away; a meld holds at most 14
        # cards) and never comes back to an earlier value along one deal; a new deal, going down
        # and a copied game bring new lists, and forget_caches drops the index.
        key = tuple([len(m.places) + 64 * m.jokers for m in melds])
        if before is not None:
            kept = before[q]
            if kept[0] is melds and kept[1] == key:
                owners.append(kept)
                continue
        owners.append((melds, key, *_owner_index(melds)))
    index = (tuple(o[2] for o in owners), tuple(o[3] for o in owners))
    game.table_index = (version, *index, tuple(owners))
    return index


def _owner_index(melds: list[Meld]) -> tuple[_Accepts, _Spots]:
    """One owner's layoff targets (meld, card, place, joker fits) and joker spots (meld, natural, place)."""
    accepts: list[tuple[int, int, int, bool]] = []
    spots: list[tuple[int, int, int]] = []
    for j, meld in enumerate(melds):
        joker_fits = meld.jokers < meld.spec.max_jokers
        if meld.jokers:
            for card, place in zip(meld.cards, meld.places):
                if card == JOKER:
                    spots.append((j, PLACE_CARD[place], place))
        accepts.extend((j, c, place, joker_fits) for c, place in meld_accepts(meld))
    return tuple(accepts), tuple(spots)


def meld_accepts(meld: Meld) -> list[tuple[int, int]]:
    """The natural cards ``meld`` takes as a layoff now, with the place each would stand at: a
    set's rank in every suit, a run's next card at either end (none once it holds 13)."""
    if meld.spec.kind == SET:
        return [(s * 13 + meld.rank, s * 13 + meld.rank) for s in range(4)]
    lo, hi = pos_of(meld.places[0]), pos_of(meld.places[-1])
    if hi - lo + 1 >= 13:
        return []
    ends = [pos for pos in (lo - 1, hi + 1) if 0 <= pos <= 13]
    return [(meld.suit * 13 + pos % 13, make_place(meld.suit, pos)) for pos in ends]


def table_accepts(table: Sequence[Sequence[Meld]]) -> int:
    """Bit ``c`` set for every card kind some meld on ``table`` takes as a layoff now (the joker's
    bit, 52, when some meld has room for another joker). Melds still being laid down (short of
    their size) take nothing yet."""
    bits = 0
    for melds in table:
        for meld in melds:
            if not meld.is_complete(False):
                continue
            for c, _ in meld_accepts(meld):
                bits |= 1 << c
            if meld.jokers < meld.spec.max_jokers:
                bits |= 1 << JOKER
    return bits


def _layoffs(game: Game, hand: list[int]) -> list[Move]:
    n, p = game.num_players, game.turn_player
    has_joker = hand[JOKER] > 0
    targets = _table_index(game)[0]
    moves: list[Move] = []
    for seat in range(n):
        for j, c, place, joker_fits in targets[(p + seat) % n]:
            if hand[c]:
                moves.append(Move(MoveKind.LAYOFF, c, place, seat, j))
            if has_joker and joker_fits:
                moves.append(Move(MoveKind.LAYOFF, JOKER, place, seat, j))
    return moves


def _swaps(game: Game, hand: list[int]) -> list[Move]:
    n, p = game.num_players, game.turn_player
    spots = _table_index(game)[1]
    moves: list[Move] = []
    for seat in range(n):
        for j, natural, place in spots[(p + seat) % n]:
            if hand[natural]:
                moves.append(Move(MoveKind.SWAP, natural, place, seat, j))
    return moves
