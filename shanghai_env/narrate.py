"""Moves in words, with absolute seats: "player 0 lays off 7H on player 3's run".

Move names (:mod:`shanghai_env.moves`) count seats from the mover, which suits a policy but
not a person watching. :func:`describe_move` says what a move does, seen from the table: who
moves, which card, whose meld (``their first set``, ``player 3's run``). Cards are written in
the engine's notation (``7H``, ``TS``) or, with ``style="symbols"``, as ``7♥``, ``10♠``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .cards import ACE_HIGH_BASE, JOKER, RANKS, SUITS, place_to_str
from .melds import CONTRACTS, SET
from .moves import Move, MoveKind

if TYPE_CHECKING:
    from .engine import Game

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
_ORDINALS = ("first", "second", "third", "fourth")
ABANDON_WORDS = "the move cap ends the deal"


def symbol_text(place: int) -> str:
    """``7♥``, ``10♠``, ``A♥`` (a high ace: ``A♥ high``); ``JK`` for the joker."""
    if place == JOKER:
        return "JK"
    if place >= ACE_HIGH_BASE:
        return f"A{SUIT_SYMBOLS[SUITS[place - ACE_HIGH_BASE]]} high"
    rank = RANKS[place % 13]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[SUITS[place // 13]]


def card_words(card: int, place: int | None = None, style: str = "plain") -> str:
    """A card (standing for ``place``) in words: ``7H``, or ``a joker as 7H`` for a joker."""
    text = symbol_text if style == "symbols" else place_to_str
    if card == JOKER:
        return "a joker" if place is None or place == JOKER else f"a joker as {text(place)}"
    return text(card if place is None else place)


def meld_words(contract: int, index: int) -> str:
    """``set``, ``run``, or ``first set``/``second run`` when the contract has several."""
    specs = CONTRACTS[contract]
    kind = specs[index].kind
    same = [i for i, s in enumerate(specs) if s.kind == kind]
    word = "set" if kind == SET else "run"
    return word if len(same) == 1 else f"{_ORDINALS[same.index(index)]} {word}"


def default_names(num_players: int) -> list[str]:
    return [f"player {p}" for p in range(num_players)]


def move_predicate(
    game: Game,
    move: Move,
    names: Sequence[str] | None = None,
    style: str = "plain",
) -> str:
    """What ``move`` does, without its subject: ``lays off 7H on player 3's run``.

    ``game`` is the state before the move (it says who moves and which upcard is concerned).
    """
    names = names if names is not None else default_names(game.num_players)
    k = move.kind
    mover = game.to_act

    def card(c: int, place: int | None = None) -> str:
        return card_words(c, place, style)

    up = card(game.upcard) if game.upcard >= 0 else "upcard"
    if k == MoveKind.TAKE:
        return f"takes the {up}"
    if k == MoveKind.DRAW:
        return f"declines the {up}"
    if k == MoveKind.BUY:
        return f"buys the {up} (and a penalty card)"
    if k == MoveKind.PASS:
        return f"passes on the {up}"
    if k == MoveKind.DISCARD:
        return f"discards {card(move.card)}"
    if k == MoveKind.FINISH:
        return "finishes going down"
    meld = meld_words(game.contract, move.meld)
    if k == MoveKind.MELD:
        first = "goes down: " if not game.table[mover] else ""
        return f"{first}puts {card(move.card, move.place)} in their {meld}"
    owner = (mover + move.seat) % game.num_players
    whose = "their" if owner == mover else f"{names[owner]}'s"
    if k == MoveKind.LAYOFF:
        return f"lays off {card(move.card, move.place)} on {whose} {meld}"
    if k == MoveKind.SWAP:
        return f"swaps {card(move.card)} for the joker in {whose} {meld}"
    raise ValueError(f"unknown move kind {k!r}")


def describe_move(
    game: Game,
    move: Move | None,
    names: Sequence[str] | None = None,
    style: str = "plain",
) -> str:
    """``player 2 discards 7H``: the move (None: a move cap ending the deal) in words, from the
    state ``game`` before it."""
    if move is None:
        return ABANDON_WORDS
    names = names if names is not None else default_names(game.num_players)
    return f"{names[game.to_act]} {move_predicate(game, move, names, style)}"
