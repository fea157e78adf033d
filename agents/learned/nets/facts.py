"""Exact facts of the acting player's own hand (:class:`~shanghai_env.agents.bots.contract.ContractMeter`),
as extra network inputs (``--facts``): ``distance`` (to the contract, / 8); ``outs`` (53: 1 for every
card kind whose arrival lowers it; once down, version 2: the kinds the table takes as a layoff,
version 1: none); ``losses`` (53: for every kind held, how much it grows if let go). ``FACTS_SIZE``
= 107. From version 2 the network gives the moves without a card the upcard's ``outs`` bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from shanghai_env.agents.bots.contract import shared_meter
from shanghai_env.engine import Game
from shanghai_env.legal import table_accepts

FACTS_SIZE = 1 + 53 + 53
FACTS_VERSION = 2  # what a new run reads; saved players and run folders record theirs
_BITS = np.arange(53, dtype=np.int64)
# the facts of hands not down, by (hand, contract, gap): a search's worlds and a turn's decisions
# ask for the same hand again and again (about 2 of 3 asks in a searched game)
_KNOWN: dict[tuple[bytes, int, int], np.ndarray] = {}
_KNOWN_MAX = 50_000


def describe_facts(version: int) -> list[str]:
    """The facts of ``version`` in words, in input order (a trained player's JSON lists them)."""
    facts_function(version)  # refuses an unknown version
    down = (
        "the card kinds the table takes as a layoff now (every meld is public)"
        if version >= 2
        else "nothing (all zero)"
    )
    described = [
        "distance: the fewest natural cards still to acquire for the contract / 8 (0 once down)",
        "outs (53): 1 for every card kind whose arrival lowers the distance; once down: " + down,
        "losses (53): for every card kind held, how much the distance grows if it is let go (0 once down)",
        "a move that names a card reads that card's outs and losses bits",
    ]
    if version >= 2:
        described.append("take, draw, buy and pass read whether the upcard on offer is an out")
    return described


def hand_facts(
    hand: Sequence[int], contract: int, gap: int, down: bool = False, accepted: int = 0
) -> np.ndarray:
    """The facts of ``hand`` (53 counts) for ``contract`` under the rule ``same_suit_run_gap``;
    ``accepted``: once down, the bits of the card kinds the table takes (0 in version 1)."""
    out = np.zeros(FACTS_SIZE, np.float32)
    if down:
        out[1:54] = (np.int64(accepted) >> _BITS) & 1
        return out
    key = (bytes(hand), contract, gap)
    known = _KNOWN.get(key)
    if known is not None:
        return known.copy()  # the caller may write into its array
    if not any(hand):
        return out
    meter = shared_meter(contract, gap)
    distance, outs = meter.analyse(hand)
    out[0] = distance / 8
    out[1:54] = (np.int64(outs) >> _BITS) & 1
    held = [c for c in range(53) if hand[c]]
    for c, (after, _) in zip(held, meter.analyse_losses(hand, held)):
        out[54 + c] = after - distance
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN[key] = out.copy()
    return out


def game_facts(game: Game, seat: int) -> np.ndarray:
    """Version 1: the facts of ``seat``'s own hand in ``game`` (only what the seat sees)."""
    return hand_facts(game.hands[seat], game.contract, game.rules.same_suit_run_gap, game.down[seat])


def game_facts_v2(game: Game, seat: int) -> np.ndarray:
    """Version 2: as :func:`game_facts`, and once down the card kinds the table takes (public)."""
    down = game.down[seat]
    accepted = table_accepts(game.table) if down else 0
    return hand_facts(game.hands[seat], game.contract, game.rules.same_suit_run_gap, down, accepted)


def view_facts(view: Any, gap: int, version: int) -> np.ndarray:
    """The facts of a player's view (``Game.view``), as the games give them in ``version``."""
    down = view.down[view.player]
    accepted = table_accepts(view.table) if down and version >= 2 else 0
    return hand_facts(view.hand, view.contract, gap, down, accepted)


def facts_function(version: int) -> Callable[[Game, int], np.ndarray]:
    """The function the batched games compute ``version``'s facts with (picklable)."""
    if version not in (1, 2):
        raise ValueError(f"facts version is 1 or 2, got {version!r}")
    return game_facts if version == 1 else game_facts_v2
