"""Play one game with one agent per seat, checking every action.

:func:`play_game` is the loop the tournament director runs in its worker processes; it is also
the simplest way to watch agents play (``play_game(Game(num_players=4), agents, seed=0)``).
A deal ends by the game's rules alone, its move cap included (the rule option
``max_moves_per_deal`` of ``game.rules``, docs/rules.md 5.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.base import Agent, Encoder
from shanghai_env.decision import play_turn
from shanghai_env.engine import Game
from shanghai_env.record import MoveLog, make_record
from shanghai_env.rules import DEFAULT_MAX_MOVES_PER_DEAL

# DEFAULT_MAX_MOVES_PER_DEAL is the default of the rule max_moves_per_deal (re-exported here for
# the tournament's configuration).
__all__ = ["DEFAULT_MAX_MOVES_PER_DEAL", "GameRecord", "play_game"]


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


def play_game(
    game: Game,
    agents: Sequence[Agent],
    seed: int | None = None,
    *,
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
    table = table if table is not None else action_table(game.rules)
    game.reset(seed)
    log = MoveLog() if record else None
    first_dealer = game.dealer
    while not game.game_over:
        move = play_turn(game, agents[game.to_act], table, encoder)
        if log is not None:
            log.add(move.name, len(game.deal_results))
    results = game.deal_results
    return GameRecord(
        scores=list(game.scores),
        deal_scores=[list(r.scores) for r in results],
        out_players=[r.out_player for r in results],
        blind=[r.blind for r in results],
        capped=[r.capped for r in results],
        moves=game.move_count,
        record=None
        if log is None
        else make_record(game, log, dealer=first_dealer, players=[a.name for a in agents]),
    )
