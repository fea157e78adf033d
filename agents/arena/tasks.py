"""Named benchmark tasks: a table, a reference field and a fixed evaluation protocol, versioned.

A task fixes everything but the player under test, so that results from different people and
methods are comparable (docs/benchmark.md)::

    python evaluate.py --task full_4p --players runs/mine/model.zip

plays ``model.zip`` against the task's reference players on the task's decks (its seed), for its
number of duplicate games under the tournament's balanced seat orders, and reports the paired
difference of the player's game score to each reference seat (the task's score line).

**Versions.** A task that changes (more games, another seed or reference field) gets a new
version, ``full_6p-v2``, and the old one stays as it was, so that a result names exactly what it
was measured on; the bare name (``full_6p``) means the current version. ``summary.json``
records the version played and what every reference player was (:func:`task_record`: the
package version, a bot's source hash, a saved model's file hash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shanghai_env.agents.arena.stats import Summary, has_interval
from shanghai_env.agents.registry import player_pin
from shanghai_env.rules import ALL_CONTRACTS


@dataclass(frozen=True)
class Task:
    """One version of one benchmark task."""

    name: str
    version: int
    num_players: int
    contracts: tuple[int, ...]
    reference: tuple[str, ...]  # the other seats, num_players - 1 of them
    games: int
    seed: int
    text: str

    @property
    def id(self) -> str:
        """The name with its version: ``full_6p-v2``."""
        return f"{self.name}-v{self.version}"

    def players(self, player: str) -> tuple[str, ...]:
        """The table of one evaluation: the player under test, then the reference seats."""
        return (player, *self.reference)


_ALL = (
    Task(
        "contract1_4p",
        1,
        4,
        (1,),
        ("planner",) * 3,
        1000,
        20_261,
        "contract 1 only (two sets of three), 4 players, against three planners",
    ),
    Task(
        "full_4p",
        1,
        4,
        ALL_CONTRACTS,
        ("planner",) * 3,
        400,
        20_262,
        "the full ten-deal game, 4 players, against three planners",
    ),
    Task(
        "full_3p",
        1,
        3,
        ALL_CONTRACTS,
        ("planner",) * 2,
        400,  # rounded up to 402: 67 rounds of the 3-seat design (6 games each), as full_4p's 68
        20_264,
        "the full ten-deal game, 3 players, against two planners",
    ),
    Task(
        "full_6p",
        1,
        6,
        ALL_CONTRACTS,
        ("planner",) * 5,
        240,  # 4 rounds of the 6-seat design: intervals on 3 degrees of freedom
        20_263,
        "the full ten-deal game, 6 players, against five planners",
    ),
    Task(
        "full_6p",
        2,
        6,
        ALL_CONTRACTS,
        ("planner",) * 5,
        420,  # 7 rounds of the 6-seat design (60 games each); 4 rounds could not separate 40 points
        20_263,
        "the full ten-deal game, 6 players, against five planners",
    ),
)

TASKS: dict[str, Task] = {t.id: t for t in _ALL}  # every version, by id


def current_versions() -> dict[str, Task]:
    """Each task's newest version, by its bare name."""
    out: dict[str, Task] = {}
    for task in TASKS.values():
        if task.name not in out or task.version > out[task.name].version:
            out[task.name] = task
    return out


def task_named(name: str) -> Task:
    """The task ``name``: an id (``full_6p-v1``) or a bare name, which means its current version;
    a ValueError names the tasks there are."""
    if name in TASKS:
        return TASKS[name]
    current = current_versions()
    if name in current:
        return current[name]
    names = ", ".join(f"{n} (= {t.id})" for n, t in sorted(current.items()))
    others = ", ".join(sorted(set(TASKS) - {t.id for t in current.values()}))
    raise ValueError(
        f"no task {name!r}; the tasks are {names}" + (f"; earlier versions: {others}" if others else "")
    )


def describe_tasks() -> str:
    """The tasks for ``--help``: the current versions by name, and the earlier versions."""
    current = current_versions()
    text = ", ".join(f"{n} ({t.id})" for n, t in sorted(current.items()))
    others = sorted(set(TASKS) - {t.id for t in current.values()})
    return text + (f"; earlier versions: {', '.join(others)}" if others else "")


def task_record(task: Task, asked_as: str, summary: Summary) -> dict[str, Any]:
    """What ``summary.json`` keeps of a task run: the task's version and definition, what the
    player under test and every reference player were (:func:`~shanghai_env.agents.registry.player_pin`),
    and the score: the player's paired game-score difference to each reference seat, with its
    95% interval and whether that interval excludes 0 (``ahead``: below it; ``behind``: above)."""
    player = summary.players[0]
    score = []
    for pair in summary.pairs:
        if pair.a != player.name:
            continue
        low, high = pair.ci95
        verdict = "ahead" if high < 0 else "behind" if low > 0 else "not separated"
        score.append(
            {
                "seat": pair.b,
                "mean_diff": pair.mean_diff,
                "ci95": pair.ci95,
                "separated": has_interval(pair.ci95) and verdict != "not separated",
                "verdict": verdict if has_interval(pair.ci95) else "n/a",
            }
        )
    return {
        "id": task.id,
        "name": task.name,
        "version": task.version,
        "asked_as": asked_as,
        "text": task.text,
        "num_players": task.num_players,
        "contracts": list(task.contracts),
        "games": task.games,
        "seed": task.seed,
        "player": player_pin(player.spec),
        "reference": [player_pin(spec) for spec in task.reference],
        "score": score,
    }
