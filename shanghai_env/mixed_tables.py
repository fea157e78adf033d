"""Games at several table sizes in one batch: one network trained at every table size.

``MixedTablesEnv(num_envs, tables=(3, 4, 5, 6, 7, 8), **options)`` splits its rows in order
over one :class:`~shanghai_env.vector.VectorEnv` per entry of ``tables`` (as evenly as the count
allows, so a size named twice gets two shares of the rows: a way to weight the sizes;
rows keep their numbers in the seeds: ``first_row``), all in the 8-seat encoding
``any_table``, where observations and actions have one shape whatever the number of players
(docs/observation.md). It steps like the batched env (``reset``, ``step``, ``obs``, ``mask``,
``seat``, ``extra``, ``legal_actions``, ``legal_ids``, ``deal_counts``, ``deal_ended``,
``observe``), with two differences that come from the sizes: a step's rewards have eight columns
(a seat the row's table lacks gets 0), and ``final_scores`` holds one array per row, as long as
its table. ``players`` maps each table size to that size's ``players`` list (default: every seat
played through ``step``). Every action is checked before any game moves, so a bad one changes
no game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .any_table import MAX_SEATS, MIN_SEATS
from .checks import int_arg
from .vector import VectorEnv, checked_actions, env_count


def table_sizes(tables: Any) -> tuple[int, ...]:
    """``tables`` checked: numbers of players, each 3 to 8, ascending (a size may repeat: each
    entry is a share of the rows)."""
    if isinstance(tables, (str, bytes)) or not isinstance(tables, Sequence) or not tables:
        raise TypeError(f"tables must be a non-empty list of numbers of players (3 to 8), got {tables!r}")
    return tuple(sorted(int_arg("tables[]", n, low=MIN_SEATS, high=MAX_SEATS) for n in tables))


class MixedTablesEnv:
    """``num_envs`` games spread over the table sizes ``tables``; see the module docstring."""

    def __init__(
        self,
        num_envs: int = 64,
        *,
        tables: Sequence[int] = (3, 4, 5, 6, 7, 8),
        players: Mapping[int, Sequence[Any]] | None = None,
        first_row: int = 0,
        **options: Any,
    ) -> None:
        self.num_envs = env_count(num_envs)
        self.tables = table_sizes(tables)
        if self.num_envs < len(self.tables):
            raise ValueError(
                f"num_envs ({self.num_envs}) must give every table size a game: at least {len(self.tables)}"
            )
        if options.pop("encoding", "any_table") != "any_table":
            raise ValueError("games at several table sizes share one encoding, 'any_table'")
        if "num_players" in options or "copy" in options:
            raise TypeError(
                "MixedTablesEnv takes tables=, not num_players=; no copy= (its arrays are new every step)"
            )
        if players is not None and (not isinstance(players, Mapping) or set(players) - set(self.tables)):
            raise TypeError(
                f"players maps table sizes among {self.tables} to their players lists, got {players!r}"
            )
        first_row = int_arg("first_row", first_row, low=0)
        share, more = divmod(self.num_envs, len(self.tables))
        counts = [share + (k < more) for k in range(len(self.tables))]
        starts = np.cumsum([0, *counts[:-1]]).tolist()
        self.blocks = [
            VectorEnv(
                count,
                first_row=first_row + start,
                num_players=n,
                players=(players or {}).get(n),
                encoding="any_table",
                **options,
            )
            for n, count, start in zip(self.tables, counts, starts)
        ]
        self._bounds = [(start, start + count) for start, count in zip(starts, counts)]
        first = self.blocks[0]
        self.encoding, self.reward_mode = "any_table", first.reward_mode
        self.num_actions, self.observation_length = first.num_actions, first.observation_length
        # the seats every table has played through step (the learner's, in every game)
        self.caller_seats = tuple(
            s for s in first.caller_seats if all(s in b.caller_seats for b in self.blocks)
        )
        self._gather()

    def _gather(self) -> None:
        blocks = self.blocks
        self.obs = np.concatenate([b.obs for b in blocks])
        self.mask = np.concatenate([b.mask for b in blocks])
        self.seat = np.concatenate([b.seat for b in blocks])
        self.extra = np.concatenate([b.extra for b in blocks])
        self.deal_ended = np.concatenate([b.deal_ended for b in blocks])
        self._legal = [ids for b in blocks for ids in b.legal_ids]

    def reset(
        self, seed: int | Sequence[int | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal a fresh game in every row. ``seed``: one int, one per game (a list, each block
        given its rows' part), or None (drawn at random)."""
        if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
            if len(seed) != self.num_envs:
                raise ValueError(f"seed: one per game ({self.num_envs}), got {len(seed)}")
            for block, (a, b) in zip(self.blocks, self._bounds):
                block.reset(list(seed[a:b]))
        else:
            for block in self.blocks:
                block.reset(seed)
        self._gather()
        return self.obs, self.mask, self.seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play one action in every game; returns ``(obs, mask, seat, rewards, done)``, rewards
        ``(num_envs, 8)``."""
        acts = checked_actions(actions, self._legal, self.num_actions, self.blocks[0].table.name)
        rewards = np.zeros((self.num_envs, MAX_SEATS), np.float32)
        done = np.zeros(self.num_envs, bool)
        for block, (a, b) in zip(self.blocks, self._bounds):
            _, _, _, rew, ended = block.step(acts[a:b])
            rewards[a:b, : block.num_players] = rew
            done[a:b] = ended
        self._gather()
        return self.obs, self.mask, self.seat, rewards, done

    @property
    def legal_ids(self) -> tuple[tuple[int, ...], ...]:
        return tuple(self._legal)

    @property
    def legal_actions(self) -> list[list[int]]:
        return [list(ids) for ids in self._legal]

    @property
    def final_scores(self) -> list[np.ndarray]:
        """Each row's last finished game's scores, one per seat of its table."""
        return [row for block in self.blocks for row in block.final_scores]

    @property
    def games(self) -> list[Any]:
        return [game for block in self.blocks for game in block.games]

    @property
    def deal_counts(self) -> dict[str, int]:
        """Deals ended since reset (all tables), those someone went out of, and their moves."""
        return {k: sum(b.deal_counts[k] for b in self.blocks) for k in ("deals", "went_out", "moves")}

    def observe(self, row: int, seat: int) -> np.ndarray:
        block, local = self._locate(row)
        return block.observe(local, seat)

    def observe_extra(self, row: int, seat: int) -> np.ndarray:
        block, local = self._locate(row)
        return block.observe_extra(local, seat)

    def _locate(self, row: Any) -> tuple[VectorEnv, int]:
        row = int_arg("row", row, low=0, high=self.num_envs - 1)
        k = next(k for k, (a, b) in enumerate(self._bounds) if a <= row < b)
        return self.blocks[k], row - self._bounds[k][0]
