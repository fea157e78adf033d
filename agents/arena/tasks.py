"""Named benchmark tasks: a table, a reference field and a fixed evaluation protocol.

A task fixes everything but the player under test, so that results from different people and
methods are comparable (docs/benchmark.md)::

    python evaluate.py --task full_4p --players runs/mine/model.zip

plays ``model.zip`` against the task's reference players on the task's decks (its seed), for its
number of duplicate games under the tournament's balanced seat orders, and reports the paired
difference of the player's game score to each reference seat.
"""

from __future__ import annotations

from dataclasses import dataclass

from shanghai_env.rules import ALL_CONTRACTS


@dataclass(frozen=True)
class Task:
    """One benchmark task."""

    name: str
    num_players: int
    contracts: tuple[int, ...]
    reference: tuple[str, ...]  # the other seats, num_players - 1 of them
    games: int
    seed: int
    text: str

    def players(self, player: str) -> tuple[str, ...]:
        """The table of one evaluation: the player under test, then the reference seats."""
        return (player, *self.reference)


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task(
            "contract1_4p",
            4,
            (1,),
            ("planner",) * 3,
            1000,
            20_261,
            "contract 1 only (two sets of three), 4 players, against three planners",
        ),
        Task(
            "full_4p",
            4,
            ALL_CONTRACTS,
            ("planner",) * 3,
            400,
            20_262,
            "the full ten-deal game, 4 players, against three planners",
        ),
        Task(
            "full_6p",
            6,
            ALL_CONTRACTS,
            ("planner",) * 5,
            420,  # 7 rounds of the 6-seat design (60 games each); 4 rounds could not separate 40 points
            20_263,
            "the full ten-deal game, 6 players, against five planners",
        ),
    )
}


def task_named(name: str) -> Task:
    """The task called ``name``; a ValueError names the tasks there are."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"no task {name!r}; the tasks are {', '.join(sorted(TASKS))}") from None
