"""Text rendering of the table (the envs' ansi/human modes): ``render_text(game)``."""

from __future__ import annotations

from .cards import card_to_str, cards_of, format_cards, sort_key_by_rank
from .engine import NO_PLAYER, Game
from .melds import describe_contract


def hand_text(counts: list[int]) -> str:
    return format_cards(sorted(cards_of(counts), key=sort_key_by_rank))


def render_text(game: Game, show_hands: bool = True) -> str:
    """The table as text: every player's melds, hand size, buys and score."""
    rules = game.rules
    lines = [
        f"Deal {game.deal + 1}/{len(rules.contracts)} · contract {game.contract}: "
        f"{describe_contract(game.contract)} · dealer player_{game.dealer}",
    ]
    if game.game_over:
        lines.append("Game over. Winner(s): " + ", ".join(f"player_{p}" for p in game.winners()))
    else:
        upcard = card_to_str(game.upcard) if game.upcard != NO_PLAYER else "--"
        lines.append(
            f"Phase {game.phase.name} · player_{game.to_act} to act · upcard {upcard} · "
            f"stock {len(game.stock)} · discard pile {len(game.discard)}"
        )
    for p in range(game.num_players):
        mark = ">" if p == game.to_act else " "
        status = "down" if game.down[p] else ("going down" if game.table[p] else "not down")
        lines.append(
            f"{mark} player_{p}: {game.hand_sizes[p]:2d} cards · buys {game.buys_left[p]} · "
            f"{status} · score {game.scores[p]}"
        )
        if show_hands:
            lines.append("    hand: " + hand_text(game.hands[p]))
        for j, meld in enumerate(game.table[p]):
            lines.append(f"    meld {j} ({meld.spec}): {meld.text() or '(empty)'}")
    if game.deal_results:
        last = game.deal_results[-1]
        lines.append(
            f"Last deal (contract {last.contract}) scores: "
            + " ".join(f"{s:+d}" for s in last.scores)
            + (f" · player_{last.out_player} went out" if last.out_player >= 0 else " · stock ran dry")
            + (" blind" if last.blind else "")
        )
    return "\n".join(lines)
