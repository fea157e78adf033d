"""Seat orders for duplicate tournaments: every player in every seat, and right after every other
player, equally often.

**Why not just rotate.** Rotating the players through the seats (player *i* in seat *i + r*)
keeps their cyclic order: whoever sits right after a weak player gets its discards in every
game, and the same four players score very differently by the order they were listed in. Where
a player sits *relative to the others* has to be balanced too, not only which seat it takes.

**The design: rotations and reflections of balanced seat cycles.** Play passes to the left
(seat *s* to seat *s + 1*, around the table), so a seat order is a cycle of the players and the
player after *a* is *a*'s successor on it. Take ``m = n - 1``, call one player ∞ and the
others 0 .. m-1 (numbers mod ``m``), and let the base cycle be

    C_0 = (∞, s_0, s_1, ..., s_{m-1})  with  s = 0, 1, -1, 2, -2, ...  (mod m),

the zigzag whose steps s_{i+1} - s_i are +1, -2, +3, -4, ..., ±(m-1). Its shifts
``C_t = (∞, s_0 + t, ..., s_{m-1} + t)`` for t in Z_m give every player ∞ each predecessor and
each successor once (the last and first elements run through Z_m), and a pair x → y of the
others follows once for each step equal to y - x (mod m):

- ``n`` odd (``m`` even): the steps are the m-1 non-zero residues, each once, so the ``m``
  shifts put every player right after every other player exactly once (the zigzag is Williams'
  sequencing of Z_m; this is Walecki's decomposition of the complete graph into Hamilton
  cycles, both ways round). ``C_{t+m/2}`` is ``C_t`` read backwards, so the shifts pair up into
  ``m/2`` cycles and their reflections.
- ``n`` even (``m`` odd): the steps k and -(m-k) are the same residue, so each pair {r, -r} is
  hit twice but not necessarily once each way; the shifts played forwards *and* backwards
  (a reflection negates every step) cover every ordered pair exactly twice. Once is impossible
  for 4 and 6 players (no decomposition of the complete directed graph on 4 or 6 vertices into
  Hamilton cycles exists, Tillson 1980), so twice is the least there; for 8 players a design
  with each pair once exists, but not one closed under reflection, and this one is kept for
  its simple rule.

A **block** is one deck set played under the ``n`` rotations of one of these cycles (every
player in every seat once, the dealer's seat included: the deals' luck cancels within it). A
**round** is one block for each cycle and each reflection: ``n - 1`` blocks, ``n(n-1)`` games,
for odd ``n``; ``2(n - 1)`` blocks, ``2n(n-1)`` games, for even ``n``. In every round each
player sits in each seat equally often and right after each other player equally often: the
order the players were listed in no longer decides who gets whose discards. For three players
a round is the 3! = 6 orders, for four players the 4! = 24; for 5 to 8 players it is 20, 60,
42 and 112 games (a small part of n!). Statistics take the round as their unit (the seating
effects cancel within it; :mod:`shanghai_env.agents.arena.stats`) and pair players on each
deck, and small blocks keep the number of deck sets as high as plain rotation did. The players
are renamed so that the first order is ``(0, 1, ..., n-1)``; the tournament lays the design on
the players' sorted order (:func:`shanghai_env.agents.arena.tournament.canonical_order`), so
that the order they were listed in changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

Order = tuple[int, ...]  # order[seat] = the player (its place in the canonical order) in that seat

DESIGN_NAME = "rotations and reflections of balanced seat cycles"


@dataclass(frozen=True)
class SeatDesign:
    """The seat cycles of one round, one block (deck set) each."""

    num_players: int
    cycles: tuple[Order, ...]  # the players around the table, block by block

    @property
    def blocks(self) -> tuple[tuple[Order, ...], ...]:
        """The seat orders of each block of a round: the rotations of its cycle."""
        return tuple(tuple(rotations(cycle)) for cycle in self.cycles)

    @property
    def games_per_block(self) -> int:
        """Seat orders per deck set: one rotation per seat."""
        return self.num_players

    @property
    def blocks_per_round(self) -> int:
        """Deck sets after which every seat and every neighbour is balanced."""
        return len(self.cycles)

    @property
    def games_per_round(self) -> int:
        """Games after which every seat and every neighbour is balanced."""
        return self.games_per_block * self.blocks_per_round

    @property
    def orders(self) -> tuple[Order, ...]:
        """Every seat order of a round, block by block."""
        return tuple(order for block in self.blocks for order in block)

    def describe(self) -> str:
        """One line for the report."""
        return (
            f"{DESIGN_NAME}: rounds of {self.games_per_round} games, {self.blocks_per_round} deck sets "
            f"of {self.games_per_block} rotations; each round seats every player in every seat and "
            "right after every other player equally often"
        )


def zigzag(m: int) -> list[int]:
    """0, 1, -1, 2, -2, ... mod ``m``: the ``m`` residues, each once."""
    return [0] + [(j + 1) // 2 if j % 2 else (-(j // 2)) % m for j in range(1, m)]


def base_cycles(n: int) -> list[Order]:
    """The cycles (players in order around the table) whose rotations and reflections make a
    round: ``(n-1)/2`` for odd ``n``, ``n-1`` for even ``n``, renamed so that the first one is
    ``(0, 1, ..., n-1)``."""
    m = n - 1
    shifts = m // 2 if m % 2 == 0 else m  # odd n: the other half are the reflections
    s = zigzag(m)
    # player 0 is ∞, residue x is player x + 1
    raw = [(0, *((x + t) % m + 1 for x in s)) for t in range(shifts)]
    rename = {p: i for i, p in enumerate(raw[0])}
    return [tuple(rename[p] for p in cycle) for cycle in raw]


def rotations(cycle: Order) -> list[Order]:
    """The ``n`` seatings of one cycle: in rotation ``r`` player ``cycle[i]`` sits in seat ``i + r``."""
    n = len(cycle)
    return [tuple(cycle[(seat - r) % n] for seat in range(n)) for r in range(n)]


def reflection(cycle: Order) -> Order:
    """The same cycle the other way round, from the same first player."""
    return (cycle[0], *reversed(cycle[1:]))


@cache
def seat_design(num_players: int) -> SeatDesign:
    """The balanced seat design for ``num_players`` (3 to 8)."""
    if not isinstance(num_players, int) or not 3 <= num_players <= 8:
        raise ValueError(f"a game seats 3 to 8 players, got {num_players!r}")
    cycles = tuple(c for base in base_cycles(num_players) for c in (base, reflection(base)))
    return SeatDesign(num_players, cycles)
