"""The order players are listed in changes nothing: the same players and seed play the same games
(decks, seats, agent seeds) whatever the listing, so every player's figures are the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shanghai_env.agents.arena import evaluate_cli as evaluate
from shanghai_env.agents.arena.ladder import LadderConfig, run_ladder, standings
from shanghai_env.agents.arena.stats import summarize
from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament, schedule


def per_player(players: tuple[str, ...], seed: int, games: int = 12) -> dict[str, tuple]:
    config = TournamentConfig(players=players, games=games, seed=seed, contracts=(1, 2))
    results = run_tournament(config, workers=1)
    summary = summarize(results, config.labels, config.players, duplicate=True, seed=seed)
    out = {}
    for i, p in enumerate(summary.players):
        games_of = sorted(
            (
                r.game_seed,
                tuple(config.labels[s] for s in r.seats),
                r.scores[i],
                tuple(row[i] for row in r.deal_scores),
            )
            for r in results
        )
        out[p.name] = (
            round(p.mean_game_score, 9),
            [round(x, 9) for x in p.ci95],
            p.win_rate,
            p.went_out_rate,
            round(p.rating_mu, 9),
            games_of,
        )
    return out


@pytest.mark.parametrize(
    ("first", "second", "games"),
    [
        (("planner", "greedy", "random"), ("random", "greedy", "planner"), 12),
        (("greedy", "random", "planner", "random"), ("random", "planner", "random", "greedy"), 48),
    ],
)
def test_two_listings_give_identical_per_player_results(
    first: tuple[str, ...], second: tuple[str, ...], games: int
) -> None:
    a, b = per_player(first, 43, games), per_player(second, 43, games)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name


def test_the_canonical_order_sorts_by_name_and_keeps_duplicates_apart() -> None:
    from shanghai_env.agents.arena.tournament import canonical_order

    assert canonical_order(("random", "greedy", "planner")) == [1, 2, 0]
    assert canonical_order(("random", "greedy", "random")) == [1, 0, 2]  # the first random first
    # a model is sorted by its file name, wherever the file is
    assert canonical_order(("planner", "/x/y/alpha.zip", "beta")) == [1, 2, 0]
    config = TournamentConfig(players=("random", "greedy", "planner"), games=6, contracts=(1,))
    # the first game seats the players in that order
    assert schedule(config)[0].seats == (1, 2, 0)


def test_the_command_line_gives_the_same_figures_in_any_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures = []
    for players in ("planner,greedy,random", "random,planner,greedy"):
        out = tmp_path / players.replace(",", "_")
        argv = ["--players", players, "--games", "12", "--seed", "43", "--contracts", "1"]
        evaluate.main([*argv, "--workers", "1", "--no-progress", "--quiet", "--out", str(out)])
        summary = json.loads((out / "summary.json").read_text())
        assert [p["name"] for p in summary["players"]] == players.split(
            ","
        )  # the listing is kept for display
        figures.append(
            {
                p["name"]: (p["mean_game_score"], p["ci95"], p["win_rate"], p["rating_mu"])
                for p in summary["players"]
            }
        )
    assert figures[0] == figures[1]


def test_a_ladder_ranks_the_same_in_any_order(tmp_path: Path) -> None:
    factory = "shanghai_env.agents.bots.random_agent:RandomAgent"
    entries = []
    for k, players in enumerate(
        (("random", "greedy", "planner", factory), (factory, "planner", "random", "greedy"))
    ):
        config = LadderConfig(players=players, table_size=3, games_per_table=6, contracts=(1,), seed=9)
        results = run_ladder(config, str(tmp_path / str(k)))
        table = standings(config, results)
        entries.append(sorted((e.name, round(e.rating_mu, 9), round(e.mean_game_score, 9)) for e in table))
    assert entries[0] == entries[1]
