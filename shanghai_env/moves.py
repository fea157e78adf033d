"""Moves: small immutable values with a canonical text name, and the parser back.

Names (cards in docs/rules.md notation, ``AH^`` a high ace, ``JK=7H`` a joker declared as 7H):

=================  ==================================================================
``take``           take the upcard as your draw
``draw``           decline the upcard; after any buy you draw the top of the stock
``buy`` / ``pass`` answer a buy offer for the upcard (out of turn)
``discard 7H``     end the turn by discarding a card (``discard JK`` a joker)
``meld 1 7H``      going down: put a card into contract meld 1 (counted from 0)
``meld 1 JK=7H``   going down: put a joker, declared as 7H, into contract meld 1
``finish``         end going down (only when ``exact_contract_melds`` is false)
``layoff 7H 2.0``  lay off onto meld 0 of the player two seats to your left
``swap 7H 2.0``    give 7H for the joker declared as 7H in that meld, take the joker
=================  ==================================================================

Table melds are named ``S.M``: seat S counted clockwise from the mover (0 is the mover's own
melds), meld M in that player's contract order. Relative seats let one policy play any seat.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np

from .cards import JOKER, PLACE_CARD, card_to_str, place_to_str, str_to_card, str_to_place


class MoveKind(IntEnum):
    TAKE = 0
    DRAW = 1
    BUY = 2
    PASS = 3
    DISCARD = 4
    MELD = 5
    FINISH = 6
    LAYOFF = 7
    SWAP = 8


class Move(NamedTuple):
    """One decision. Fields a kind does not use are -1 (``seat`` 0)."""

    kind: MoveKind
    card: int = -1  # the card moved: natural id or JOKER; for a swap, the natural given
    place: int = -1  # the place it stands for (a joker's declared place; the swapped joker's)
    seat: int = 0  # owner of the target meld, clockwise from the mover (layoff, swap)
    meld: int = -1  # target meld index in its owner's contract (meld, layoff, swap)

    @property
    def name(self) -> str:
        return move_name(self)

    def __str__(self) -> str:
        return move_name(self)


TAKE = Move(MoveKind.TAKE)
DRAW = Move(MoveKind.DRAW)
BUY = Move(MoveKind.BUY)
PASS = Move(MoveKind.PASS)
FINISH = Move(MoveKind.FINISH)
_SIMPLE = {"take": TAKE, "draw": DRAW, "buy": BUY, "pass": PASS, "finish": FINISH}


_INT_FIELDS = ("card", "place", "seat", "meld")


def checked_move(move: object) -> Move:
    """``move`` with every field a plain int (``kind`` a MoveKind), or TypeError/ValueError.

    Numpy integers and a kind given as its int are converted; bools, floats and anything else
    are refused. ``Move(MoveKind.DISCARD, 5.0) == Move(MoveKind.DISCARD, 5)``, so without this
    check a malformed move would pass a legality test and fail halfway through being applied.
    """
    if not isinstance(move, Move):
        raise TypeError(f"a move is a Move or a move name, got {type(move).__name__}")
    kind = move.kind
    if not isinstance(kind, MoveKind):
        if not _is_int(kind):
            raise TypeError(f"Move.kind must be a MoveKind, got {kind!r} ({type(kind).__name__})")
        try:
            kind = MoveKind(int(kind))
        except ValueError:
            raise ValueError(f"Move.kind must be a MoveKind (0..{len(MoveKind) - 1}), got {kind!r}") from None
    fields = []
    for name in _INT_FIELDS:
        value = getattr(move, name)
        if not _is_int(value):
            raise TypeError(f"Move.{name} must be an int, got {value!r} ({type(value).__name__})")
        fields.append(int(value))
    return Move(kind, *fields)


def _is_int(x: object) -> bool:
    """A Python or numpy integer, but not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def discard(card: int) -> Move:
    return Move(MoveKind.DISCARD, card)


def meld(index: int, card: int, place: int | None = None) -> Move:
    """Going-down placement; ``place`` defaults to the card's own (low) place."""
    return Move(MoveKind.MELD, card, card if place is None else place, 0, index)


def layoff(seat: int, index: int, card: int, place: int | None = None) -> Move:
    return Move(MoveKind.LAYOFF, card, card if place is None else place, seat, index)


def swap(seat: int, index: int, place: int) -> Move:
    return Move(MoveKind.SWAP, PLACE_CARD[place], place, seat, index)


def _card_text(card: int, place: int) -> str:
    return "JK=" + place_to_str(place) if card == JOKER else place_to_str(place)


def move_name(move: Move) -> str:
    k = move.kind
    if k == MoveKind.DISCARD:
        return "discard " + card_to_str(move.card)
    if k == MoveKind.MELD:
        return f"meld {move.meld} {_card_text(move.card, move.place)}"
    if k == MoveKind.LAYOFF:
        return f"layoff {_card_text(move.card, move.place)} {move.seat}.{move.meld}"
    if k == MoveKind.SWAP:
        return f"swap {place_to_str(move.place)} {move.seat}.{move.meld}"
    return k.name.lower()


def _parse_card_text(text: str) -> tuple[int, int]:
    """(card, place) of ``7H``, ``AH^`` or ``JK=7H``."""
    if text.upper().startswith("JK="):
        return JOKER, str_to_place(text[3:])
    place = str_to_place(text)
    return PLACE_CARD[place], place


def _parse_meld_ref(text: str) -> tuple[int, int]:
    seat, sep, index = text.partition(".")
    if not sep or not seat.isdigit() or not index.isdigit():
        raise ValueError(f"meld reference {text!r} must be SEAT.MELD, e.g. '1.0'")
    return int(seat), int(index)


def parse_move(text: str) -> Move:
    """The move named by ``text`` (see the module docstring); raises ValueError otherwise."""
    if not isinstance(text, str):
        raise TypeError(f"a move name is text, got {type(text).__name__}")
    words = text.strip().split()
    try:
        if len(words) == 1 and words[0].lower() in _SIMPLE:
            return _SIMPLE[words[0].lower()]
        verb = words[0].lower() if words else ""
        if verb == "discard" and len(words) == 2:
            return discard(str_to_card(words[1]))
        if verb == "meld" and len(words) == 3 and words[1].isdigit():
            card, place = _parse_card_text(words[2])
            return Move(MoveKind.MELD, card, place, 0, int(words[1]))
        if verb == "layoff" and len(words) == 3:
            card, place = _parse_card_text(words[1])
            seat, index = _parse_meld_ref(words[2])
            return Move(MoveKind.LAYOFF, card, place, seat, index)
        if verb == "swap" and len(words) == 3:
            place = str_to_place(words[1])
            seat, index = _parse_meld_ref(words[2])
            return swap(seat, index, place)
    except ValueError as err:
        raise ValueError(f"cannot read move {text!r}: {err}") from None
    raise ValueError(
        f"unknown move {text!r}: expected take, draw, buy, pass, finish, 'discard 7H', "
        f"'meld 0 7H', 'meld 0 JK=7H', 'layoff 7H 1.0' or 'swap 7H 1.0'"
    )
