"""The seat design of duplicate tournaments (agents/arena/seating.py): every player in every seat,
and right after every other player, equally often in every round; every deck played under
every rotation of its block's cycle; ``games`` rounded up to whole rounds."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

import pytest

from shanghai_env.agents.arena.seating import reflection, rotations, seat_design
from shanghai_env.agents.arena.tournament import GameTask, TournamentConfig, schedule

ROUND = {3: 6, 4: 24, 5: 20, 6: 60, 7: 42, 8: 112}  # the round sizes docs/bots.md gives


def config(n: int, games: int, **kw: object) -> TournamentConfig:
    return TournamentConfig(players=("random",) * n, games=games, contracts=(1,), **kw)  # type: ignore[arg-type]


def seat_counts(tasks: list[GameTask]) -> Counter[tuple[int, int]]:
    """(player, seat) -> games."""
    return Counter((player, seat) for t in tasks for seat, player in enumerate(t.seats))


def after_counts(tasks: list[GameTask]) -> Counter[tuple[int, int]]:
    """(a, b) -> games in which b sits right after a (the next seat round the table: b gets a's
    discards)."""
    return Counter((t.seats[seat - 1], t.seats[seat]) for t in tasks for seat in range(len(t.seats)))


@pytest.mark.parametrize("n", range(3, 9))
def test_every_player_sits_after_every_other_equally_often(n: int) -> None:
    tasks = schedule(config(n, 1))
    assert len(tasks) == ROUND[n] == seat_design(n).games_per_round
    assert {t.round for t in tasks} == {0}
    assert all(sorted(t.seats) == list(range(n)) for t in tasks)
    assert len({t.seats for t in tasks}) == len(tasks)  # no order twice
    seats = seat_counts(tasks)
    assert len(seats) == n * n and len(set(seats.values())) == 1
    after = after_counts(tasks)
    assert len(after) == n * (n - 1) and len(set(after.values())) == 1
    assert sum(after.values()) == n * len(tasks)
    # and so in every round of a longer run
    longer = schedule(config(n, ROUND[n] + 1))
    assert {t.round for t in longer} == {0, 1}
    for k in (0, 1):
        assert len(set(after_counts([t for t in longer if t.round == k]).values())) == 1


@pytest.mark.parametrize("n", range(3, 9))
def test_each_deck_is_played_in_every_rotation_of_its_cycle(n: int) -> None:
    cfg = config(n, 2 * ROUND[n])
    tasks = schedule(cfg)
    design = seat_design(n)
    assert cfg.blocks == 2 * design.blocks_per_round
    for block in range(cfg.blocks):
        games = [t for t in tasks if t.block == block]
        assert len({t.game_seed for t in games}) == 1
        assert [t.rotation for t in games] == list(range(n))
        assert {t.round for t in games} == {block // design.blocks_per_round}
        assert [t.seats for t in games] == rotations(design.cycles[block % design.blocks_per_round])
        counts = seat_counts(games)  # within a block: every player in every seat once
        assert len(counts) == n * n and set(counts.values()) == {1}
    assert len({t.game_seed for t in tasks}) == cfg.blocks


def test_cyclic_rotations_alone_were_not_balanced() -> None:
    """What the design replaces: the n rotations of one order keep each player's neighbours."""
    after = after_counts([GameTask(r, 0, 0, r, 0, s, ()) for r, s in enumerate(rotations((0, 1, 2, 3)))])
    assert after[(0, 1)] == 4 and after[(0, 2)] == 0 and after[(1, 0)] == 0


def test_small_tables_play_every_order() -> None:
    assert {t.seats for t in schedule(config(3, 1))} == set(permutations(range(3)))
    assert {t.seats for t in schedule(config(4, 1))} == set(permutations(range(4)))


def test_the_first_game_seats_the_players_as_listed() -> None:
    for n in range(3, 9):
        assert schedule(config(n, 1))[0].seats == tuple(range(n))
    assert reflection((0, 1, 2, 3)) == (0, 3, 2, 1)


@pytest.mark.parametrize(
    ("n", "games", "played", "blocks"),
    [(3, 1, 6, 2), (3, 7, 12, 4), (4, 400, 408, 102), (4, 800, 816, 204), (4, 24, 24, 6), (8, 113, 224, 28)],
)
def test_games_round_up_to_whole_rounds(n: int, games: int, played: int, blocks: int) -> None:
    cfg = config(n, games)
    assert (cfg.total_games, cfg.blocks, len(schedule(cfg))) == (played, blocks, played)
    seating = cfg.seating()
    assert seating["balanced"] and seating["rounds"] == played // ROUND[n]
    assert (seating["games_per_block"], seating["games_per_round"]) == (n, ROUND[n])


def test_fresh_decks_play_exactly_the_games_asked_for() -> None:
    cfg = config(4, 30, duplicate=False)
    tasks = schedule(cfg)
    assert len(tasks) == cfg.total_games == 30
    assert len({t.game_seed for t in tasks}) == 30 == len({t.block for t in tasks})
    assert [t.seats for t in tasks[:24]] == list(seat_design(4).orders)
    assert tasks[24].seats == tasks[0].seats and [t.round for t in tasks[23:25]] == [0, 1]
    assert not cfg.seating()["balanced"]
    assert config(4, 48, duplicate=False).seating()["balanced"]


def test_bad_player_counts_are_refused() -> None:
    for n in (2, 9, "4"):
        with pytest.raises(ValueError, match="3 to 8 players"):
            seat_design(n)  # type: ignore[arg-type]


def test_a_ladder_seated_the_old_way_is_not_resumed(tmp_path) -> None:
    import json

    from shanghai_env.agents.arena.ladder import CONFIG_FILE, LadderConfig, run_ladder

    ladder = LadderConfig(
        players=("random", "greedy", "planner"), table_size=3, games_per_table=1, contracts=(1,)
    )
    old = {k: v for k, v in ladder.to_json().items() if k != "seating"}
    (tmp_path / CONFIG_FILE).write_text(json.dumps(old))
    with pytest.raises(ValueError, match="other settings"):
        run_ladder(ladder, str(tmp_path))
