"""Exact facts of the acting player's own hand, as extra network inputs (``--facts``).

What a rummy player reads off their hand at once and a network must otherwise rediscover from
card counts: how far the hand is from the deal's contract, which cards would bring it closer,
and which held cards the hand cannot spare. Each is computed exactly
(:class:`~shanghai_env.agents.bots.contract.ContractMeter`, the fewest natural cards still to
acquire, jokers counted within their limits) from the player's own hand and the contract, both
part of what the player sees; nothing is a bot's judgement or a tuned score:

- ``distance``: the distance to the contract / 8;
- ``outs`` (53): 1 for every card kind whose arrival lowers the distance;
- ``losses`` (53): for every card kind held, how much the distance grows if it is let go.

All zero once the player is down (the contract is behind them). ``FACTS_SIZE`` = 107.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from shanghai_env.agents.bots.contract import ContractMeter
from shanghai_env.engine import Game

FACTS_SIZE = 1 + 53 + 53
_BITS = np.arange(53, dtype=np.int64)
_METERS: dict[tuple[int, int], ContractMeter] = {}


def hand_facts(hand: Sequence[int], contract: int, gap: int, down: bool = False) -> np.ndarray:
    """The facts of ``hand`` (53 counts) for ``contract`` under the rule ``same_suit_run_gap``."""
    out = np.zeros(FACTS_SIZE, np.float32)
    if down or not any(hand):
        return out
    meter = _METERS.get((contract, gap))
    if meter is None:
        meter = _METERS[(contract, gap)] = ContractMeter(contract, gap)
    distance, outs = meter.analyse(hand)
    out[0] = distance / 8
    out[1:54] = (np.int64(outs) >> _BITS) & 1
    held = [c for c in range(53) if hand[c]]
    for c, (after, _) in zip(held, meter.analyse_losses(hand, held)):
        out[54 + c] = after - distance
    return out


def game_facts(game: Game, seat: int) -> np.ndarray:
    """The facts of ``seat``'s own hand in ``game`` (reads only that hand, the contract and the
    seat's down flag: what the seat sees)."""
    return hand_facts(game.hands[seat], game.contract, game.rules.same_suit_run_gap, game.down[seat])
