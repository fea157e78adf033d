"""The fixed action table: every engine move is exactly one integer, and back.

The table depends only on the rule options (player count and the contracts played):

====================  ===========================================================================
block                 actions
====================  ===========================================================================
simple                ``take`` 0, ``draw`` 1, ``buy`` 2, ``pass`` 3, ``finish`` 4
discard               ``DISCARD_BASE + card`` for cards 0..52 (52 = joker)
meld (going down)     ``MELD_BASE + meld * 112 + k``: k = place (0..55) for a natural card,
                      56 + place for a joker declared as that place
layoff                ``layoff_base + (seat * max_melds + meld) * 112 + k``, k as above
swap                  ``swap_base + (seat * max_melds + meld) * 56 + place``
====================  ===========================================================================

Places 0..51 are cards, 52..55 high aces (see :mod:`shanghai_env.cards`). ``seat`` is counted
clockwise from the acting player, so an action means the same thing from every seat.
``docs/actions.md`` is generated from this table (``python -m shanghai_env.actions``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np

from .cards import NUM_CARD_KINDS, NUM_PLACES, PLACE_CARD
from .melds import CONTRACTS
from .moves import BUY, DRAW, FINISH, PASS, TAKE, Move, MoveKind, move_name, parse_move
from .rules import Rules

NUM_SIMPLE = 5
DISCARD_BASE = NUM_SIMPLE
MELD_BASE = DISCARD_BASE + NUM_CARD_KINDS
PER_MELD = 2 * NUM_PLACES  # natural placements, then joker placements
_SIMPLE_MOVES = (TAKE, DRAW, BUY, PASS, FINISH)
_SIMPLE_INDEX = {MoveKind.TAKE: 0, MoveKind.DRAW: 1, MoveKind.BUY: 2, MoveKind.PASS: 3, MoveKind.FINISH: 4}


class ActionTable:
    """Move <-> action id for one set of rule options."""

    def __init__(self, rules: Rules) -> None:
        self.num_players = rules.num_players
        self.max_melds = rules.max_melds
        targets = self.num_players * self.max_melds
        self.layoff_base = MELD_BASE + self.max_melds * PER_MELD
        self.swap_base = self.layoff_base + targets * PER_MELD
        self.size = self.swap_base + targets * NUM_PLACES
        self._decoded: list[Move] = [self._decode(a) for a in range(self.size)]
        self.moves: tuple[Move, ...] = tuple(self._decoded)  # action id -> move
        self.action_of: dict[Move, int] = {m: a for a, m in enumerate(self._decoded)}
        if any(self._encode(m) != a for m, a in self.action_of.items()):
            raise RuntimeError("action table: encoding is not the inverse of decoding")

    def __len__(self) -> int:
        return self.size

    # --- encoding -------------------------------------------------------------------------

    def encode(self, move: Move) -> int:
        """The action id of a move (a dict lookup: every action's move is precomputed)."""
        try:
            return self.action_of[move]
        except KeyError:
            raise ValueError(
                f"move {move!r} has no action id here ({self.num_players} players, "
                f"{self.max_melds} melds a player)"
            ) from None
        except TypeError:
            raise TypeError(f"a move is a Move, got {type(move).__name__}") from None

    def _encode(self, move: Move) -> int:
        """Arithmetic encoding, the inverse of :meth:`_decode` (builds ``action_of``)."""
        k = move.kind
        if k in _SIMPLE_INDEX:
            return _SIMPLE_INDEX[k]
        if k == MoveKind.DISCARD:
            return DISCARD_BASE + move.card
        offset = move.place + (NUM_PLACES if move.card == 52 else 0)
        if k == MoveKind.MELD:
            return MELD_BASE + move.meld * PER_MELD + offset
        target = move.seat * self.max_melds + move.meld
        if k == MoveKind.LAYOFF:
            return self.layoff_base + target * PER_MELD + offset
        return self.swap_base + target * NUM_PLACES + move.place

    def _decode(self, action: int) -> Move:
        if action < DISCARD_BASE:
            return _SIMPLE_MOVES[action]
        if action < MELD_BASE:
            return Move(MoveKind.DISCARD, action - DISCARD_BASE)
        if action < self.layoff_base:
            meld, k = divmod(action - MELD_BASE, PER_MELD)
            return _placement(MoveKind.MELD, k, 0, meld)
        if action < self.swap_base:
            target, k = divmod(action - self.layoff_base, PER_MELD)
            seat, meld = divmod(target, self.max_melds)
            return _placement(MoveKind.LAYOFF, k, seat, meld)
        target, place = divmod(action - self.swap_base, NUM_PLACES)
        seat, meld = divmod(target, self.max_melds)
        return Move(MoveKind.SWAP, PLACE_CARD[place], place, seat, meld)

    def decode(self, action: int) -> Move:
        """The move of an action id; raises ValueError outside ``0..size-1``."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"an action is an int 0..{self.size - 1}, got {type(action).__name__}")
        if not 0 <= action < self.size:
            raise ValueError(f"action {action} is out of range: actions are 0..{self.size - 1}")
        return self._decoded[int(action)]

    def name(self, action: int) -> str:
        return move_name(self.decode(action))

    def action_id(self, name: str) -> int:
        move = parse_move(name)
        if move.kind in (MoveKind.LAYOFF, MoveKind.SWAP) and not 0 <= move.seat < self.num_players:
            raise ValueError(f"{name!r}: seat must be 0..{self.num_players - 1}")
        if (
            move.kind in (MoveKind.MELD, MoveKind.LAYOFF, MoveKind.SWAP)
            and not 0 <= move.meld < self.max_melds
        ):
            raise ValueError(f"{name!r}: meld must be 0..{self.max_melds - 1}")
        return self.encode(move)

    def mask(self, moves: Iterable[Move], out: np.ndarray | None = None) -> np.ndarray:
        """int8 mask with a 1 at every given move's action."""
        action_of = self.action_of
        if out is None:
            buf = bytearray(self.size)  # item writes here beat numpy's fancy indexing
            for m in moves:
                buf[action_of[m]] = 1
            return np.frombuffer(buf, dtype=np.int8)
        out.fill(0)
        out[[action_of[m] for m in moves]] = 1
        return out


def action_table(rules: Rules) -> ActionTable:
    """The (shared, immutable) action table of these rule options.

    A table holds a few thousand precomputed moves; envs, players and tournaments of the same
    player count and contracts share one instead of building their own.
    """
    return _table_for(rules.num_players, rules.max_melds)


@cache
def _table_for(num_players: int, max_melds: int) -> ActionTable:
    return ActionTable(Rules(num_players=num_players, contracts=_contracts_with(max_melds)))


def _contracts_with(max_melds: int) -> tuple[int, ...]:
    """A contract list whose largest contract has ``max_melds`` melds (the table depends on no more)."""
    return next((c,) for c in sorted(CONTRACTS) if len(CONTRACTS[c]) == max_melds)


def _placement(kind: MoveKind, k: int, seat: int, meld: int) -> Move:
    if k >= NUM_PLACES:
        return Move(kind, 52, k - NUM_PLACES, seat, meld)
    return Move(kind, PLACE_CARD[k], k, seat, meld)


def table_markdown(rules: Rules) -> str:
    """The action table as Markdown (docs/actions.md is this, for a few option sets)."""
    t = ActionTable(rules)
    blocks = [
        ("simple", 0, DISCARD_BASE),
        ("discard", DISCARD_BASE, MELD_BASE),
        ("meld (going down)", MELD_BASE, t.layoff_base),
        ("layoff", t.layoff_base, t.swap_base),
        ("swap", t.swap_base, t.size),
    ]
    lines = [
        f"### {rules.num_players} players, contracts {list(rules.contracts)}: N = {t.size}",
        "",
        "| block | first id | last id | first name | last name |",
        "|---|---|---|---|---|",
    ]
    for label, lo, hi in blocks:
        lines.append(f"| {label} | {lo} | {hi - 1} | `{t.name(lo)}` | `{t.name(hi - 1)}` |")
    return "\n".join(lines)
