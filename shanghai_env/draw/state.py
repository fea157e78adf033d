"""A game's table as a small JSON-able dict: what the drawings (Python and the replay's
JavaScript) read.

``table_header(game, names)`` holds what stays for the whole game (player names, the
contracts and their melds); ``table_state(game)`` what one moment shows:

======================  ==========================================================================
``deal``, ``contract``  0-based deal number and its contract; ``dealer``
``phase``               ``DRAW``, ``BUY``, ``PLAY``, ``GOING_DOWN``, ``GAME_OVER``, or ``END``
                        (the table as a deal ended, before the next deal is dealt)
``act``, ``turn``       who acts (-1 when nobody) and whose turn it is
``offer``               during a buy offer, the players still to be asked, the one asked first
``up``, ``upFrom``      the discard pile's top (``null`` if empty) and who discarded it
``pile``, ``stock``     sizes of the discard pile and of the stock; ``rebuilds`` stock rebuilds
                        left (``null``: no limit)
``hands``               each hand, cards sorted by rank (``"7D 7H JK"``)
``melds``               each player's melds, in contract order (``"7C 7D JK=7H"``; ``""`` empty)
``buys``, ``down``      buys left and whether each player is down
``scores``              game totals (at a deal's end: with that deal)
``result``              at a deal's end: ``{"scores", "out", "blind"}``, else ``null``
======================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..cards import JOKER, card_to_str, cards_of, place_to_str, sort_key_by_rank
from ..melds import CONTRACTS, RUN, describe_contract

if TYPE_CHECKING:
    from ..engine import DealResult, Game


def table_header(game: Game, names: Sequence[str] | None = None) -> dict[str, Any]:
    """What stays the same for a whole game: names, contracts, each contract's melds."""
    n = game.num_players
    names = [""] * n if names is None else [str(x) for x in names]
    if len(names) != n:
        raise ValueError(f"names must name {n} seats, got {len(names)}")
    contracts = list(game.rules.contracts)
    return {
        "players": n,
        "names": names,
        "contracts": contracts,
        "melds": {str(c): [str(s) for s in CONTRACTS[c]] for c in sorted(set(contracts))},
        "describe": {str(c): describe_contract(c) for c in sorted(set(contracts))},
    }


def meld_text(cards: Sequence[int], places: Sequence[int], kind: int) -> str:
    laid = list(zip(places, cards)) if kind == RUN else sorted(zip(places, cards))
    return " ".join(("JK=" if c == JOKER else "") + place_to_str(p) for p, c in laid)


def hand_text(counts: Sequence[int]) -> str:
    return " ".join(card_to_str(c) for c in sorted(cards_of(counts), key=sort_key_by_rank))


def table_state(game: Game, result: DealResult | None = None) -> dict[str, Any]:
    """The table of ``game`` now; ``result``: the game is a deal's end (see ``Step.deal_end``)."""
    from ..engine import NO_PLAYER, Phase

    n = game.num_players
    over = game.phase == Phase.GAME_OVER
    ended = result is not None
    if over and game.deal_results and not ended:
        result = game.deal_results[-1]  # the table as the last deal ended
    return {
        "deal": game.deal,
        "contract": game.contract,
        "dealer": game.dealer,
        "phase": "END" if ended else game.phase.name,
        "act": NO_PLAYER if over or ended else game.to_act,
        "turn": game.turn_player,
        "offer": list(game.offer) if game.phase == Phase.BUY and not ended else [],
        "up": card_to_str(game.upcard) if game.upcard != NO_PLAYER else None,
        "upFrom": None if game.upcard_from == NO_PLAYER else game.upcard_from,
        "pile": len(game.discard),
        "stock": len(game.stock),
        "rebuilds": game.stock_rebuilds_left,
        "hands": [hand_text(game.hands[p]) for p in range(n)],
        "melds": [[meld_text(m.cards, m.places, m.kind) for m in game.table[p]] for p in range(n)],
        "buys": list(game.buys_left),
        "down": list(game.down),
        "scores": list(game.scores),
        "result": None
        if result is None
        else {
            "scores": list(result.scores),
            "out": None if result.out_player == NO_PLAYER else result.out_player,
            "blind": result.blind,
        },
    }
