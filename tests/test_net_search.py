"""The search over a trainer network: named like every player, as the network where it does not
search, deterministic, and its batched rollouts play whole deals (or stop at the horizon)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from shanghai_env.agents.base import decision_for
from shanghai_env.agents.learned.players.net_search import (
    DECISIONS,
    BatchRollouts,
    NetSearchBot,
    NetSearchParams,
)
from shanghai_env.agents.learned.players.policy import PolicyAgent
from shanghai_env.agents.registry import (
    check_player,
    display_name,
    make_agent,
    player_pin,
    searched_models,
)
from shanghai_env.any_table import encoding_tables
from shanghai_env.engine import Game
from shanghai_env.models import shipped_path
from shanghai_env.rules import Rules

SCRATCH = shipped_path("scratch")


def decisions_of_a_deal(seed: int, players: int = 4, limit: int = 60) -> list[object]:
    """The first ``limit`` decisions of a game the network plays in every seat (with their games)."""
    rules = Rules(num_players=players)
    table, encoder = encoding_tables(rules, "table")
    agent = PolicyAgent(SCRATCH)
    game = Game(rules)
    game.reset(seed)
    out = []
    while len(out) < limit and not game.deal_results:
        decision = decision_for(game, game.to_act, table, encoder)
        out.append((game.clone(), decision))
        game.apply(table.moves[agent.act(decision)])
    return out


def test_search_names_are_players() -> None:
    assert "search_scratch" in searched_models()
    agent = make_agent("search_scratch", seed=1)
    assert isinstance(agent, NetSearchBot) and agent.name == "search_scratch"
    assert display_name(f"search@{SCRATCH}") == "search_scratch"
    assert make_agent(f"search@{SCRATCH}").name == "search_scratch"
    pin = player_pin("search_scratch")
    assert (
        pin["kind"] == "search over a saved player"
        and pin["file"] == "scratch.pt"
        and len(pin["sha256"]) == 64
    )
    assert check_player("search_scratch", Rules(num_players=6)) == "search_scratch"


@pytest.mark.parametrize("bad", ["search@nowhere.pt", "search@README.md", "search_nobody"])
def test_a_search_over_no_network_is_refused_in_one_line(bad: str) -> None:
    with pytest.raises(ValueError) as err:
        make_agent(bad)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "options",
    [
        {"worlds": 0},
        {"round_worlds": True},
        {"alternatives": 0},
        {"horizon": -1},
        {"gate": float("nan")},
        {"decisions": frozenset({"discard"})},
        {"switch_se": "1"},
    ],
)
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        NetSearchParams(**options)  # type: ignore[arg-type]


def test_where_it_does_not_search_it_plays_as_the_network() -> None:
    network = PolicyAgent(SCRATCH)
    never = NetSearchBot(SCRATCH, seed=0, gate=-1.0, decisions=DECISIONS)  # no gap is below -1
    for _, decision in decisions_of_a_deal(3):
        assert never.act(decision) == network.act(decision)  # type: ignore[attr-defined]
    assert never.stats.searched == 0


def test_the_search_is_deterministic_and_keeps_the_legal_moves() -> None:
    options = {"worlds": 2, "round_worlds": 2, "gate": 1.0, "decisions": DECISIONS, "horizon": 1}
    decisions = [d for _, d in decisions_of_a_deal(5, limit=24)]
    first = NetSearchBot(SCRATCH, seed=7, **options)  # type: ignore[arg-type]
    second = NetSearchBot(SCRATCH, seed=7, **options)  # type: ignore[arg-type]
    chosen = [first.act(d) for d in decisions]  # type: ignore[arg-type]
    assert chosen == [second.act(d) for d in decisions]  # type: ignore[arg-type]
    assert all(a in d.legal_actions for a, d in zip(chosen, decisions))  # type: ignore[attr-defined]
    assert first.stats.searched > 0 and first.stats.rollouts > 0


def test_rollouts_end_the_deal_or_stop_at_the_horizon() -> None:
    game, _ = decisions_of_a_deal(11, limit=8)[-1]
    rules = game.rules  # type: ignore[attr-defined]
    rollouts = BatchRollouts(PolicyAgent(SCRATCH), rules)
    n, me = rules.num_players, game.to_act  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    games = [game.clone() for _ in range(3)]  # type: ignore[attr-defined]
    draws = [rng.random((n, 128)) for _ in games]
    values, moves = rollouts.play(games, me, 0, draws, [[0] * n for _ in games])
    assert len(values) == 3 and all(np.isfinite(values))
    assert all(len(g.deal_results) == 1 for g in games)
    for g, v in zip(games, values):  # the value is the deal's own result, in points
        scores = g.deal_results[0].scores
        assert v == pytest.approx(scores[me] - (sum(scores) - scores[me]) / (n - 1))
    short = [game.clone() for _ in range(3)]  # type: ignore[attr-defined]
    values_h, moves_h = rollouts.play(short, me, 0, draws, [[0] * n for _ in short], horizon=1)
    assert len(values_h) == 3 and all(np.isfinite(values_h)) and moves_h < moves
    assert all(not g.deal_results and g.to_act == me for g in short)
