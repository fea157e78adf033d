"""Play one game with one agent per seat, checking every action, with a move cap per deal.

:func:`play_game` is the loop the tournament director runs in its worker processes; it is also
the simplest way to watch agents play (``play_game(Game(num_players=4), agents, seed=0)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.base import Agent, Encoder, decision_for
from shanghai_env.engine import DEFAULT_MAX_MOVES_PER_DEAL, Game
from shanghai_env.record import ABANDON, MoveLog, make_record

# DEFAULT_MAX_MOVES_PER_DEAL is the engine's one safety cap: the stock rule ends every deal of
# random or bot play long before it, but players who keep taking the upcard never empty the
# stock, so a cap still bounds the cost of a game.
__all__ = ["DEFAULT_MAX_MOVES_PER_DEAL", "GameRecord", "end_deal_at_cap", "play_game"]


@dataclass
class GameRecord:
    """What one game produced, by seat."""

    scores: list[int]  # final totals by seat
    deal_scores: list[list[int]]  # [deal][seat]
    out_players: list[int]  # per deal: the seat that went out, or -1
    blind: list[bool]  # per deal: went out blind
    capped: list[bool]  # per deal: ended by the move cap (everybody scored their hand)
    moves: int
    extra: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] | None = None  # the game record (shanghai_env.record), when asked for


def end_deal_at_cap(game: Game) -> None:
    """End the current deal as if the stock had run dry: every player scores their hand."""
    game.abandon_deal()


def play_game(
    game: Game,
    agents: Sequence[Agent],
    seed: int | None = None,
    *,
    max_moves_per_deal: int = DEFAULT_MAX_MOVES_PER_DEAL,
    encoder: Encoder | None = None,
    table: ActionTable | None = None,
    record: bool = False,
) -> GameRecord:
    """Reset ``game`` with ``seed`` and play it to the end; ``agents[s]`` plays seat ``s``.

    Every action is checked against the acting player's legal moves; an illegal one raises
    ValueError naming the agent. Agents are not reset here (the caller seeds them).
    With ``record`` the moves are logged by name and the result carries the game's record.
    """
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"need one agent per seat: {n} seats, got {len(agents)} agents")
    if max_moves_per_deal < 1:
        raise ValueError(f"max_moves_per_deal must be >= 1, got {max_moves_per_deal}")
    table = table if table is not None else action_table(game.rules)
    game.reset(seed)
    log = MoveLog() if record else None
    first_dealer = game.dealer
    capped: list[bool] = []
    deal_start = 0
    deal = 0
    while not game.game_over:
        if game.deal != deal:
            capped.extend([False] * (game.deal - deal))
            deal = game.deal
            deal_start = game.move_count
        if game.move_count - deal_start >= max_moves_per_deal:
            end_deal_at_cap(game)
            if log is not None:
                log.add(ABANDON, len(game.deal_results))
            capped.append(True)
            deal += 1
            deal_start = game.move_count
            continue
        p = game.to_act
        decision = decision_for(game, p, table, encoder)
        action = agents[p].act(decision)
        try:
            move = table.decode(action)
        except (TypeError, ValueError) as err:
            raise ValueError(f"agent {agents[p].name!r} in seat {p} returned {action!r}: {err}") from None
        if move not in decision.view.legal_moves:
            raise ValueError(
                f"agent {agents[p].name!r} in seat {p} chose illegal action {action} ({move.name}) "
                f"in phase {game.phase.name}"
            )
        game.apply(move)
        if log is not None:
            log.add(move.name, len(game.deal_results))
    capped.extend([False] * (len(game.deal_results) - len(capped)))
    results = game.deal_results
    return GameRecord(
        scores=list(game.scores),
        deal_scores=[list(r.scores) for r in results],
        out_players=[r.out_player for r in results],
        blind=[r.blind for r in results],
        capped=capped,
        moves=game.move_count,
        record=None
        if log is None
        else make_record(game, log, dealer=first_dealer, players=[a.name for a in agents]),
    )
