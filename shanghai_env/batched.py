"""What a batched env is to the trainer and the views: :class:`BatchedEnv`, a typing Protocol.

:class:`~shanghai_env.vector.VectorEnv` (the games in this process) and
:class:`~shanghai_env.blocks.BlockVectorEnv` (the rows in blocks, at several table sizes or in
worker processes) both have it; a function that takes any of them is annotated with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from .engine import Game


class BatchedEnv(Protocol):
    """``num_envs`` games stepped together: row ``i`` is game ``i``, its arrays those of the seat to
    act (docs: :mod:`shanghai_env.vector`)."""

    @property
    def num_envs(self) -> int: ...

    @property
    def num_players(self) -> int:
        """The rewards' columns: the table's seats (8 with several table sizes)."""

    @property
    def num_actions(self) -> int: ...

    @property
    def observation_length(self) -> int: ...

    @property
    def caller_seats(self) -> tuple[int, ...]:
        """The seats played through ``step`` in every game (the others are played inside)."""

    # the buffers every step rewrites in place: (N, L) int8, (N, A) int8 or bool, (N,) int64, (N, F)
    @property
    def obs(self) -> np.ndarray: ...

    @property
    def mask(self) -> np.ndarray: ...

    @property
    def seat(self) -> np.ndarray: ...

    @property
    def extra(self) -> np.ndarray: ...

    @property
    def deal_ended(self) -> np.ndarray: ...

    @property
    def legal_actions(self) -> list[list[int]]: ...

    @property
    def final_scores(self) -> np.ndarray | list[np.ndarray]:
        """Each row's last finished game's totals, one per seat of its table."""

    @property
    def deal_counts(self) -> dict[str, int]: ...

    @property
    def game_seeds(self) -> list[int]: ...

    @property
    def games(self) -> list[Game]:
        """The engine's games (a RuntimeError where they live in other processes)."""

    @property
    def started(self) -> bool: ...

    @property
    def broken(self) -> str | None: ...

    def reset(
        self, seed: int | Sequence[int | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...

    def observe(self, row: int, seat: int) -> np.ndarray: ...

    def observe_extra(self, row: int, seat: int) -> np.ndarray: ...

    def game_moves(self, row: int) -> list[int]:
        """The action ids played in game ``row`` since it was dealt."""

    def state(self) -> dict[str, Any]:
        """The games in progress as plain data (ints, floats, lists, dicts)."""

    def load_state(self, state: Mapping[str, Any]) -> list[int]:
        """Rebuild the games of :meth:`state`; the rows where a seated bot chose otherwise."""

    def close(self) -> None: ...
