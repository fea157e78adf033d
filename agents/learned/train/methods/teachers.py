"""A player asked about the learner's decisions of the batched games: dagger's teacher, whose
answers are its labels. A checkpoint keeps none: :meth:`Teachers.replay` rebuilds the bots' plans.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from shanghai_env.agents.registry import make_agent
from shanghai_env.decision import decision_for
from shanghai_env.engine import Game


class Teachers:
    """The player ``spec`` at every learner seat of every game of ``venv``."""

    def __init__(self, spec: str, venv: Any, seats: tuple[int, ...]) -> None:
        self.spec, self.venv = spec, venv
        # a bot keeps plans between decisions: a copy per game and seat, reset when its game is
        # dealt again; a network decides each decision on its own: one object for all, one batch
        first = make_agent(spec, seed=0)
        self.shared = first if hasattr(first, "act_batch") else None
        self.seats: list[dict[int, Any]] = [
            {s: self.shared or make_agent(spec) for s in seats} for _ in range(venv.num_envs)
        ]
        self.games_seen = [0] * venv.num_envs
        for i in range(venv.num_envs):
            self.new_game(i)

    def new_game(self, i: int) -> None:
        """Row ``i`` dealt a new game: its copies forget the last one."""
        venv = self.venv
        self.games_seen[i] = venv.games_played[i]
        if self.shared is None:
            for s, agent in self.seats[i].items():
                agent.reset((venv.game_seeds[i] * 17 + s) % 2**31)

    def dealt_again(self) -> list[int]:
        """The rows whose game ended since they were last seen (each reset by :meth:`new_game`)."""
        venv = self.venv
        rows = [i for i in range(venv.num_envs) if venv.games_played[i] != self.games_seen[i]]
        for i in rows:
            self.new_game(i)
        return rows

    def ask(self, rows: list[int]) -> np.ndarray:
        """The player's action at the decision now of each of ``rows`` (-1 for the rows not asked)."""
        venv = self.venv
        labels = np.full(venv.num_envs, -1, np.int64)
        asked = [(i, decision_for(venv.games[i], int(venv.seat[i]), venv.table, venv.encoder)) for i in rows]
        if self.shared is not None and asked:
            chosen = self.shared.act_batch([d for _, d in asked])
        else:
            chosen = [self.seats[i][int(venv.seat[i])].act(d) for i, d in asked]
        for (i, d), a in zip(asked, chosen):
            if int(a) not in d.legal_actions:
                raise ValueError(f"player {self.spec!r} chose illegal action {a} in game {i}")
            labels[i] = int(a)
        return labels

    def replay(self, asked: Callable[[int, Game], bool]) -> None:
        """After the games were restored: every row's bots asked again at each learner decision
        where ``asked(row, game)`` says they were, so that their plans and generators stand as
        they stood."""
        venv = self.venv
        for i in range(venv.num_envs):
            self.new_game(i)
            if self.shared is not None:
                continue
            game = Game(venv.games[i].rules)
            game.reset(venv.game_seeds[i])
            for a in venv.game_moves(i):
                s = game.to_act
                if s in self.seats[i] and asked(i, game):
                    self.seats[i][s].act(decision_for(game, s, venv.table, venv.encoder))
                game.apply(venv.table.moves[a])
