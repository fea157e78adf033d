"""Search over the scorer network (agents/bots/scorer_search.py): the network is the prior and
the rollout policy; a searcher that never switches plays exactly as the network does."""

from __future__ import annotations

import pytest

from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.scorer import ScorerBot
from shanghai_env.agents.bots.scorer_search import scorer_search
from shanghai_env.agents.bots.search import SearchBot
from shanghai_env.agents.registry import make_agent
from shanghai_env.engine import Game


def test_a_searcher_that_never_switches_plays_as_the_network() -> None:
    def record(first: object) -> object:
        players = [first] + [make_agent("shanghai_4p") for _ in range(3)]
        for seat, player in enumerate(players):
            player.reset(100 + seat)  # type: ignore[attr-defined]
        result = play_game(Game(num_players=4, contracts=(2, 6)), players, seed=11, record=True)  # type: ignore[arg-type]
        assert result.record is not None
        return result.record["deals"], result.scores

    stubborn = scorer_search(worlds=2, round_worlds=2, switch_se=1e9)
    assert record(stubborn) == record(make_agent("shanghai_4p"))
    assert stubborn.stats.rollouts > 0  # it did search, and kept the network's moves


def test_named_budgets_build_searchers_over_the_network() -> None:
    bot = make_agent("shanghai_env.agents.bots.scorer_search:shanghai_w4")
    assert isinstance(bot, SearchBot) and bot.params.worlds == 4 and bot.name == "shanghai-w4"
    assert isinstance(bot.prior, ScorerBot) and bot.prior.net is not None
    assert all(isinstance(b, ScorerBot) and b.net is bot.prior.net for b in bot._bots)
    players = [bot, PlannerBot(), PlannerBot()]
    for seat, player in enumerate(players):
        player.reset(seat)
    result = play_game(Game(num_players=3, contracts=(1,)), players, seed=2)
    assert len(result.deal_scores) == 1 and bot.stats.decisions > 0
    for bad in ("shanghai_w0", "shanghai_wx", "shanghai"):
        with pytest.raises(ValueError, match=bad):
            make_agent(f"shanghai_env.agents.bots.scorer_search:{bad}")


def test_prior_and_rollout_are_checked() -> None:
    with pytest.raises(TypeError, match="prior"):
        SearchBot(prior=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rollout"):
        SearchBot(rollout=3)  # type: ignore[arg-type]
