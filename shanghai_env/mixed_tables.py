"""Games at several table sizes in one batch: one network trained at every table size.

``MixedTablesEnv(num_envs, tables=(3, 4, 5, 6, 7, 8), **options)`` is
:class:`~shanghai_env.blocks.BlockVectorEnv` with ``tables`` required: its rows split in order
over one :class:`~shanghai_env.vector.VectorEnv` per entry of ``tables`` (as evenly as the count
allows, so a size named twice gets two shares of the rows: a way to weight the sizes; rows keep
their numbers in the seeds: ``first_row``), all in the 8-seat encoding ``any_table``, where
observations and actions have one shape whatever the number of players (docs/observation.md). It
steps like the batched env, with two differences that come from the sizes: a step's rewards have
eight columns (a seat the row's table lacks gets 0), and ``final_scores`` holds one array per row,
as long as its table. ``players`` maps each table size to that size's ``players`` list (default:
every seat played through ``step``). Every action is checked before any game moves, so a bad one
changes no game. ``workers`` (default 1) steps the rows in that many processes: the same games.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .blocks import BlockVectorEnv, table_sizes

__all__ = ["MixedTablesEnv", "table_sizes"]


class MixedTablesEnv(BlockVectorEnv):
    """``num_envs`` games spread over the table sizes ``tables``; see the module docstring."""

    def __init__(
        self,
        num_envs: int = 64,
        *,
        tables: Sequence[int] = (3, 4, 5, 6, 7, 8),
        players: Mapping[int, Sequence[Any]] | None = None,
        workers: int = 1,
        **options: Any,
    ) -> None:
        super().__init__(num_envs, tables=tables, players=players, workers=workers, **options)
