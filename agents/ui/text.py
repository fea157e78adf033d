"""Text pieces of the terminal game (:mod:`shanghai_env.agents.ui.terminal`): cards in colour, hands, the
menu's order, and why a move is not legal now."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from shanghai_env.cards import JOKER, NUM_CARD_KINDS, RANKS, SUITS, card_to_str, cards_of, sort_key_by_rank
from shanghai_env.engine import Phase, PlayerView
from shanghai_env.moves import Move, MoveKind

# Without the `play` extra rich is missing; shanghai_env.agents.ui.cli.main() then says so.
with contextlib.suppress(ImportError):
    from rich.text import Text

_MENU_KINDS = ["TAKE", "DRAW", "BUY", "PASS", "MELD", "FINISH", "LAYOFF", "SWAP", "DISCARD"]
_KIND_ORDER = {MoveKind[k]: i for i, k in enumerate(_MENU_KINDS)}


def menu_order(moves: Sequence[Move]) -> list[Move]:
    """The legal moves in menu order: draws and answers first, then melds, layoffs, swaps, discards."""

    def key(m: Move) -> tuple[int, int, int, int, int]:
        card = (99, 0) if m.card < 0 else sort_key_by_rank(m.card)
        return (_KIND_ORDER[m.kind], m.seat, m.meld, card[0] * 4 + card[1], m.place)

    return sorted(moves, key=key)


def card_text(card: int, text: str | None = None) -> Text:
    """A card (or a place's text) in its suit's colour: hearts and diamonds red, jokers magenta."""
    t = text if text is not None else card_to_str(card)
    style = "magenta" if card == JOKER else ("red" if card // 13 in (1, 2) else "bold")
    return Text(t, style=style)


def hand_by_rank(hand: Sequence[int]) -> Text:
    """The hand sorted by rank (ace first), equal ranks grouped, jokers last."""
    out = Text()
    last = -2
    for c in sorted(cards_of(hand), key=sort_key_by_rank):
        rank = -1 if c == JOKER else c % 13
        if out:
            out.append("   " if rank != last else " ")
        out.append_text(card_text(c))
        last = rank
    return out


def hand_by_suit(hand: Sequence[int]) -> Text:
    """The hand grouped by suit, ranks ascending (for runs), jokers last."""
    groups: list[Text] = []
    for s, suit in enumerate(SUITS):
        ranks = [RANKS[r] for r in range(13) for _ in range(hand[s * 13 + r])]
        if ranks:
            groups.append(
                Text(f"{suit}: ", style="dim").append(" ".join(ranks), style=card_text(s * 13).style)
            )
    if hand[JOKER]:
        groups.append(card_text(JOKER, " ".join(["JK"] * hand[JOKER])))
    return Text("   ").join(groups)


def why_illegal(view: PlayerView, move: Move) -> str:
    """A short reason a well-formed move is not legal now, for the message the person sees."""
    phase, me = view.phase, view.player
    if phase == Phase.DRAW:
        return "it is your turn to draw first: 'take' the upcard or 'draw' from the stock"
    if phase == Phase.BUY:
        return "you are being offered the upcard: answer 'buy' or 'pass'"
    if move.kind in (MoveKind.TAKE, MoveKind.DRAW, MoveKind.BUY, MoveKind.PASS):
        return "you have already drawn this turn"
    if 0 <= move.card < NUM_CARD_KINDS and not view.hand[move.card]:
        return f"you hold no {card_to_str(move.card)}"
    if phase == Phase.GOING_DOWN and move.kind != MoveKind.MELD:
        return "you are going down: place the rest of your contract with 'meld N CARD'"
    if move.kind == MoveKind.MELD:
        if view.down[me]:
            return "you are already down this deal"
        return "that placement does not fit a contract meld (or your hand cannot complete the contract)"
    if move.kind in (MoveKind.LAYOFF, MoveKind.SWAP):
        if not view.down[me]:
            return "you may lay off or swap only after going down"
        if view.went_down_this_turn:
            return "you may lay off or swap only from your next turn after going down"
        return "that card does not fit there (is the meld name S.M right? see the table)"
    return "not allowed now"
