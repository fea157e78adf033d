"""The search player: legal, deterministic, blind to hidden cards, free on forced moves."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from shanghai_env.actions import ActionTable
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament
from shanghai_env.agents.base import Agent, decision_for
from shanghai_env.agents.bots.handtools import fits_table
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.search import (
    DECISIONS,
    DRAWS_PER_PLAYER,
    SearchBot,
    SearchParams,
    apply_coupled,
)
from shanghai_env.agents.registry import BOTS, make_agent
from shanghai_env.engine import Game, Phase
from shanghai_env.moves import DRAW, MoveKind
from shanghai_env.worlds import sample_world


def small(seed: int | None = None, **options: object) -> SearchBot:
    """A searcher with a test-sized budget."""
    options.setdefault("worlds", 2)
    options.setdefault("round_worlds", 2)
    options.setdefault("decisions", DECISIONS)  # every kind, so that every path is exercised
    return SearchBot(seed=seed, **options)  # type: ignore[arg-type]


def test_search_is_a_registered_agent() -> None:
    assert "search" in BOTS
    agent = make_agent("search", seed=3)
    assert isinstance(agent, SearchBot) and isinstance(agent, Agent)
    assert agent.name == "search" and agent.params == SearchParams()


def test_budgets_are_named_by_factories() -> None:
    import shanghai_env.agents.bots.search as search

    bot = make_agent("shanghai_env.agents.bots.search:search_w16_greedy", seed=1)
    assert isinstance(bot, SearchBot) and bot.params.worlds == 16 and bot.params.rollout_policy == "greedy"
    assert make_agent("shanghai_env.agents.bots.search:search_w3").params.worlds == 3  # type: ignore[attr-defined]
    for bad in ("search_w0", "search_wx", "search_w4_random", "other"):
        with pytest.raises(AttributeError):
            getattr(search, bad)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="rollout_policy"):
        SearchBot(rollout_policy="random")
    with pytest.raises(ValueError, match="worlds"):
        SearchBot(worlds=0)
    with pytest.raises(ValueError, match="objective"):
        SearchBot(objective="win")
    with pytest.raises(ValueError, match="decisions"):
        SearchBot(decisions=frozenset({"swap"}))
    with pytest.raises(TypeError):
        SearchBot(budget=3)  # type: ignore[arg-type]


def test_without_searched_decisions_it_plays_as_the_planner() -> None:
    def scores(seat_agent: Agent) -> list[int]:
        agents: list[Agent] = [PlannerBot(seed=q) for q in range(4)]
        agents[2] = seat_agent
        return play_game(Game(num_players=4, contracts=(1, 6)), agents, seed=5).scores

    assert scores(SearchBot(seed=2, decisions=frozenset())) == scores(PlannerBot(seed=2))


@pytest.mark.parametrize("policy", ["planner", "greedy"])
def test_search_plays_legal_deterministic_games(policy: str) -> None:
    def run(seed: int) -> tuple[list[int], int, int]:
        searcher = small(seed, rollout_policy=policy)
        agents: list[Agent] = [searcher, PlannerBot(seed=1), PlannerBot(seed=2)]
        record = play_game(Game(num_players=3, contracts=(1, 2)), agents, seed=11)
        return record.scores, record.moves, searcher.stats.rollouts

    first = run(4)
    assert first[2] > 0  # it searched
    assert run(4) == first


def test_search_seat_in_a_tournament() -> None:
    config = TournamentConfig(
        players=("shanghai_env.agents.bots.search:tiny", "planner", "planner"), games=3, contracts=(1,)
    )
    results = run_tournament(config, workers=1)
    assert len(results) == 6 and all(len(r.scores) == 3 for r in results)  # 3 games: one round of 6


def test_search_ignores_hidden_information() -> None:
    """Re-dealing every card the searcher cannot see never changes its move (same view, same seed)."""
    rng = np.random.default_rng(1)
    game = Game(num_players=4, contracts=(2, 6))
    table = ActionTable(game.rules)
    searcher = small(7, worlds=3, round_worlds=3)
    players: list[Agent] = [searcher, PlannerBot(seed=1), PlannerBot(seed=2), PlannerBot(seed=3)]
    game.reset(3)
    checked = searched = 0
    while not game.game_over and checked < 40:
        p = game.to_act
        if p == 0:
            probe = copy.deepcopy(searcher)
            before = searcher.stats.searched
            action = searcher.act(decision_for(game, p, table))
            twin = sample_world(game.view(p), rng, game.rules)  # the same view, other hidden cards
            assert twin.hands != game.hands or twin.stock != game.stock
            assert probe.act(decision_for(twin, p, table)) == action
            checked += 1
            searched += searcher.stats.searched > before
        else:
            action = players[p].act(decision_for(game, p, table))
        game.apply(table.decode(action))
    assert searched >= 5


def test_forced_and_obvious_moves_cost_no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Phase, int]] = []
    original = SearchBot._search

    def spy(self: SearchBot, view, rules, candidates):  # type: ignore[no-untyped-def]
        calls.append((view.phase, len(view.legal_moves)))
        assert len(candidates) >= 2
        return original(self, view, rules, candidates)

    monkeypatch.setattr(SearchBot, "_search", spy)
    searcher = small(0)
    agents: list[Agent] = [searcher, PlannerBot(seed=1), PlannerBot(seed=2)]
    play_game(Game(num_players=3, contracts=(1, 3)), agents, seed=2)
    assert calls
    assert all(n > 1 and phase != Phase.GOING_DOWN for phase, n in calls)
    assert searcher.stats.searched == len(calls) < searcher.stats.decisions


def test_coupled_draws_give_each_player_its_quantile_card() -> None:
    game = Game(num_players=4, contracts=(1,))
    game.reset(8)
    draws = np.random.default_rng(0).random((4, DRAWS_PER_PLAYER))
    counters = [0] * 4
    p = game.turn_player
    expected = sorted(game.stock)[int(draws[p, 0] * len(game.stock))]
    before = list(game.hands[p])
    apply_coupled(game, DRAW, draws, counters)
    while game.phase == Phase.BUY:  # everybody passes; then the player in turn draws
        apply_coupled(game, game.legal_moves()[1], draws, counters)
    game.validate()
    gained = [c for c in range(53) if game.hands[p][c] > before[c]]
    assert gained == [expected] and counters[p] == 1 and sum(counters) == 1


def test_buy_draws_the_buyers_card_then_the_turn_players() -> None:
    game = Game(num_players=4, contracts=(1,))
    game.reset(9)
    draws = np.random.default_rng(1).random((4, DRAWS_PER_PLAYER))
    counters = [0] * 4
    apply_coupled(game, DRAW, draws, counters)
    buyer, turn = game.to_act, game.turn_player
    order = sorted(game.stock)
    first = order.pop(int(draws[buyer, 0] * len(order)))
    second = order.pop(int(draws[turn, 0] * len(order)))
    hands = [list(h) for h in game.hands]
    upcard = game.upcard
    apply_coupled(game, next(m for m in game.legal_moves() if m.kind == MoveKind.BUY), draws, counters)
    game.validate()
    hands[buyer][first] += 1
    hands[buyer][upcard] += 1
    hands[turn][second] += 1
    assert game.hands == hands and counters[buyer] == counters[turn] == 1


def test_a_candidate_that_ends_the_game_is_scored_without_a_rollout() -> None:
    """Going out on the last deal ends the game: the candidate's value is that deal's score."""
    table = ActionTable(Game(num_players=4, contracts=(1,)).rules)
    for seed in range(30):
        game = Game(num_players=4, contracts=(1,))
        game.reset(seed)
        bots = [PlannerBot(seed=q) for q in range(4)]
        while not game.game_over:
            p = game.to_act
            layoffs = [m for m in game.legal_moves() if m.kind == MoveKind.LAYOFF]
            if game.phase == Phase.PLAY and game.hand_sizes[p] == 2 and layoffs:
                layoff = layoffs[0]
                trial = game.clone()
                trial.apply(layoff)
                last = next(m for m in trial.legal_moves() if m.kind == MoveKind.DISCARD)
                keep = next(m for m in game.legal_moves() if m.kind == MoveKind.DISCARD)
                searcher = small(0, worlds=4, round_worlds=4)
                best = searcher._search(game.view(p), game.rules, [(keep,), (layoff, last)])
                assert best == 1  # going out (score 0) beats keeping a card
                return
            game.apply(table.decode(bots[p].act(decision_for(game, p, table))))
    pytest.fail("no state with a layoff before going out was found")


def test_the_rollouts_shared_view_is_the_view() -> None:
    """Rollouts read Game.shared_view: the same view, its melds the game's own (not copies)."""
    from test_worlds import view_key

    game = Game(num_players=5, contracts=(2, 7))
    game.reset(4)
    table = ActionTable(game.rules)
    bots = [PlannerBot(seed=q) for q in range(5)]
    shared_melds = 0
    for _ in range(400):
        p = game.to_act
        shared, copied = game.shared_view(p), game.view(p)
        assert view_key(shared) == view_key(copied)
        for q, melds in enumerate(game.table):
            for m, s, c in zip(melds, shared.table[q], copied.table[q]):
                assert s is m and c is not m
                shared_melds += 1
        game.apply(table.decode(bots[p].act(decision_for(game, p, table))))
    assert shared_melds > 0  # the deals played reached a table with melds


def test_developed_worlds_keep_the_view() -> None:
    """Improving the other hands moves hidden cards only: the view and every invariant hold."""
    from test_worlds import play_states, view_key

    searcher = SearchBot(seed=0, develop=6)
    for real in play_states(4, (3, 8), 2, {}, every=0.05):
        p = real.to_act
        if real.phase == Phase.GOING_DOWN:
            continue
        view = real.view(p)
        world = sample_world(view, np.random.default_rng(real.move_count), real.rules)
        before = [list(h) for h in world.hands]
        searcher._develop(world, view)
        world.validate()
        assert view_key(world.view(p)) == view_key(view)
        for q in range(4):
            if world.down[q] and q != p:  # a player down holds nothing it could lay off
                melds = [m for ms in world.table for m in ms if m.places]
                unknown = [c for c in range(53) if world.hands[q][c] > world.picked_up[q][c]]
                assert before[q] == world.hands[q] or len(unknown) <= len(before[q])
                assert all(not any(fits_table(c, [m]) for m in melds) for c in unknown) or not world.stock


def test_the_planners_going_down_plan_is_what_it_plays_until_forgotten() -> None:
    """PlannerBot.going_down_plan (search's going-down candidate) lists the placements the
    planner then plays and its planned discard; forget_plan (search playing something else
    instead) empties it."""
    game = Game(num_players=3, contracts=(1, 2, 3))
    game.reset(5)
    table = ActionTable(game.rules)
    bots = [PlannerBot(seed=q) for q in range(3)]
    checked = 0
    while not game.game_over and checked < 3:
        p = game.to_act
        move = table.decode(bots[p].act(decision_for(game, p, table)))
        going_down = game.phase == Phase.PLAY and move.kind == MoveKind.MELD
        game.apply(move)
        if not going_down:
            continue
        plan = bots[p].going_down_plan()
        assert plan and all(m.kind == MoveKind.MELD for m in plan[:-1])
        if checked == 2:
            bots[p].forget_plan()
            assert bots[p].going_down_plan() == ()
            break
        played = []
        while game.to_act == p and not game.game_over:
            played.append(table.decode(bots[p].act(decision_for(game, p, table))))
            game.apply(played[-1])
        placements = [m for m in plan if m.kind == MoveKind.MELD]
        assert [m for m in played if m.kind == MoveKind.MELD] == placements
        if plan[-1].kind == MoveKind.DISCARD:
            assert played[-1] == plan[-1]
        checked += 1
    assert checked == 2
