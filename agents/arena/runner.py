"""Play games with one agent per seat, checking every action.

:func:`play_games` is the loop the tournament director runs in its worker processes (several
games stepped together); :func:`play_game`, the same loop for one game, is the simplest way to
watch agents play (``play_game(Game(num_players=4), agents, seed=0)``).
A deal ends by the game's rules alone, its move cap included (the rule option
``max_moves_per_deal`` of ``game.rules``, docs/rules.md 5.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.base import Agent, Encoder
from shanghai_env.decision import Decision, apply_action, decision_for
from shanghai_env.engine import Game
from shanghai_env.record import MoveLog, make_record
from shanghai_env.rules import DEFAULT_MAX_MOVES_PER_DEAL

# DEFAULT_MAX_MOVES_PER_DEAL is the default of the rule max_moves_per_deal (re-exported here for
# the tournament's configuration).
__all__ = ["DEFAULT_MAX_MOVES_PER_DEAL", "GameRecord", "play_game", "play_games"]


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
    return play_games([game], [agents], [seed], encoder=encoder, table=table, record=[record])[0]


def play_games(
    games: Sequence[Game],
    agents: Sequence[Sequence[Agent]],
    seeds: Sequence[int | None],
    *,
    encoder: Encoder | None = None,
    table: ActionTable | None = None,
    record: Sequence[bool] | None = None,
) -> list[GameRecord]:
    """:func:`play_game` for several games at once, stepped together: at each step every game's
    player to act decides, and an agent seated in several games answers all of them in one
    ``act_batch`` call (a network: one forward pass). Each game is the one :func:`play_game` plays
    with the same agents and seed, since a :class:`~shanghai_env.decision.BatchAgent`'s answer
    depends on its decision alone; an agent without ``act_batch`` may sit in one game only."""
    if not len(games) == len(agents) == len(seeds):
        raise ValueError(
            f"one list of agents and one seed per game: {len(games)} games, got "
            f"{len(agents)} and {len(seeds)}"
        )
    record = [False] * len(games) if record is None else record
    if len(record) != len(games):
        raise ValueError(f"record: one flag per game: {len(games)} games, got {len(record)}")
    sits: dict[int, tuple[Agent, set[int]]] = {}  # id(agent): the agent and the games it sits in
    for g, (game, seated) in enumerate(zip(games, agents)):
        if len(seated) != game.num_players:
            raise ValueError(f"need one agent per seat: {game.num_players} seats, got {len(seated)} agents")
        for agent in seated:
            sits.setdefault(id(agent), (agent, set()))[1].add(g)
    for agent, where in sits.values():
        if len(where) > 1 and not hasattr(agent, "act_batch"):
            raise ValueError(
                f"agent {agent.name!r} sits in several games and has no act_batch: its answers "
                "could depend on the other games; give each game its own"
            )
    tables = [table if table is not None else action_table(game.rules) for game in games]
    logs: list[MoveLog | None] = []
    dealers = []
    for game, seed, rec in zip(games, seeds, record):
        game.reset(seed)
        logs.append(MoveLog() if rec else None)
        dealers.append(game.dealer)
    live = [g for g, game in enumerate(games) if not game.game_over]
    while live:
        asked: dict[int, tuple[Agent, list[tuple[int, Decision]]]] = {}  # id(agent): its decisions
        for g in live:
            game = games[g]
            agent = agents[g][game.to_act]
            decision = decision_for(game, game.to_act, tables[g], encoder)
            asked.setdefault(id(agent), (agent, []))[1].append((g, decision))
        for agent, pending in asked.values():
            if len(pending) == 1:
                answers = [agent.act(pending[0][1])]
            else:
                answers = agent.act_batch([d for _, d in pending])  # type: ignore[attr-defined]
                if len(answers) != len(pending):
                    raise ValueError(
                        f"agent {agent.name!r} answered {len(answers)} of {len(pending)} decisions"
                    )
            for (g, decision), action in zip(pending, answers):
                game = games[g]
                move = apply_action(game, decision, action, f"agent {agent.name!r} in seat {game.to_act}")
                log = logs[g]
                if log is not None:
                    log.add(move.name, len(game.deal_results))
        live = [g for g in live if not games[g].game_over]
    return [
        _game_record(game, log, dealer, seated)
        for game, log, dealer, seated in zip(games, logs, dealers, agents)
    ]


def _game_record(game: Game, log: MoveLog | None, first_dealer: int, agents: Sequence[Agent]) -> GameRecord:
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
