"""The batched env with its games in several processes: the same games, more cores.

``WorkerVectorEnv(num_envs, workers=W, **options)`` is :class:`~shanghai_env.blocks.BlockVectorEnv`
with ``workers`` 2 unless told: the ``num_envs`` rows in ``W`` contiguous blocks, block 0 stepped in
this process while ``W - 1`` worker processes step the others, writing the arrays the caller gets
straight into memory shared with it. It plays exactly the same games, observations and rewards as
:class:`~shanghai_env.vector.VectorEnv` for the same seed and actions, whatever ``W`` (tested), and
takes ``tables=`` too (games at several table sizes). The module docstring of
:mod:`shanghai_env.blocks` says what it takes, what must pickle and how errors reach the caller.

Worth it where stepping the games is a large part of the time and there are cores to spare
(docs/performance.md has the figures).
"""

from __future__ import annotations

from typing import Any

from .blocks import BlockVectorEnv


class WorkerVectorEnv(BlockVectorEnv):
    """:class:`~shanghai_env.vector.VectorEnv` with its rows in ``workers`` processes."""

    def __init__(self, num_envs: int = 64, *, workers: int = 2, **options: Any) -> None:
        super().__init__(num_envs, workers=workers, **options)
