"""The per-deal move cap, the rule ``max_moves_per_deal`` (docs/rules.md 5.5): the move that
reaches it ends the deal (nobody out, everyone scores the hand) and the game goes on, alike in
the engine, both envs and the tournament; ``None`` means no cap; random games end by
termination."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shanghai_env
from shanghai_env.actions import action_table
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.cards import hand_points
from shanghai_env.decision import Decision
from shanghai_env.engine import DEFAULT_MAX_MOVES_PER_DEAL, NO_PLAYER, Game, Phase
from shanghai_env.record import ABANDON, iter_replay, replay
from shanghai_env.record import Recorder as GameRecorder
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv, UniformRandomAgent

ROOT = Path(__file__).resolve().parent.parent


def test_one_rule_for_every_cap() -> None:
    from shanghai_env.agents.arena import runner

    assert DEFAULT_MAX_MOVES_PER_DEAL == 3000 == Rules().max_moves_per_deal
    assert Game().rules.max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL
    assert shanghai_env.raw_env().max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL
    assert SingleAgentEnv().max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL
    assert runner.DEFAULT_MAX_MOVES_PER_DEAL == DEFAULT_MAX_MOVES_PER_DEAL
    assert TournamentConfig(players=("random",) * 3).rules.max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL
    # the envs' keyword is the rule option
    assert shanghai_env.raw_env(max_moves_per_deal=7).rules == Rules(max_moves_per_deal=7)
    assert SingleAgentEnv(max_moves_per_deal=None).rules == Rules(max_moves_per_deal=None)
    assert TournamentConfig(players=("random",) * 3, max_moves_per_deal=9).rules.max_moves_per_deal == 9


@pytest.mark.parametrize(
    ("value", "error"),
    [(0, ValueError), (-5, ValueError), (1.5, TypeError), (True, TypeError), ("100", TypeError)],
)
def test_the_rule_is_validated(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"max_moves_per_deal must be an int >= 1 or None \(no cap\), got"):
        Rules(max_moves_per_deal=value)
    with pytest.raises(error, match="max_moves_per_deal"):
        Game(num_players=3, max_moves_per_deal=value)
    with pytest.raises(error, match="max_moves_per_deal"):
        shanghai_env.raw_env(max_moves_per_deal=value)
    with pytest.raises(error, match="max_moves_per_deal"):
        SingleAgentEnv(max_moves_per_deal=value)


def test_numpy_and_none_are_accepted() -> None:
    rules = Rules(max_moves_per_deal=np.int16(40))
    assert rules.max_moves_per_deal == 40 and type(rules.max_moves_per_deal) is int
    assert Rules(max_moves_per_deal=None).max_moves_per_deal is None
    assert Rules(max_moves_per_deal=1).max_moves_per_deal == 1


# --- a capped deal ends alike everywhere ---------------------------------------------------------

CAP = 25
CAPPED_RULES = {"num_players": 4, "contracts": (1, 2, 3), "max_moves_per_deal": CAP}


def scripted(deal: int, deal_moves: int, legal: list[int]) -> int:
    """A fixed choice from public facts only, so that every interface plays the same game."""
    return legal[(31 * deal + 7 * deal_moves) % len(legal)]


def legal_ids(mask: np.ndarray) -> list[int]:
    return np.flatnonzero(mask).tolist()


class Scripted:
    """An agent playing :func:`scripted` (for SingleAgentEnv's seats and the tournament's runner)."""

    name = "scripted"

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, decision: Decision) -> int:
        view = decision.view
        return scripted(view.deal, view.deal_moves, sorted(decision.legal_actions))


SEED = 12


def game_results() -> tuple[list[Any], list[int]]:
    """The scripted game played on the engine (recorded), each capped deal checked by replaying it."""
    rec = GameRecorder(Game(**CAPPED_RULES))
    rec.reset(SEED)
    game = rec.game
    table = action_table(game.rules)
    while not game.game_over:
        legal = sorted(table.action_of[m] for m in game.legal_moves())
        deal = game.deal
        rec.apply(table.moves[scripted(deal, game.view(game.to_act).deal_moves, legal)])
        game.validate()
        if len(game.deal_results) > deal and not game.game_over:  # the game goes on: a new deal
            assert game.deal == deal + 1 and game.view(0).deal_moves == 0
            assert game.phase == Phase.DRAW and game.hand_sizes == [11] * 4
    assert game.move_count == 3 * CAP and len(game.deal_results) == 3
    ends = [step for step in iter_replay(rec.record(), copies=True) if step.ended is not None]
    for deal, step in enumerate(ends):
        result = step.ended
        assert step.index == CAP * (deal + 1) and step.name != ABANDON  # the rule, no extra entry
        assert result.capped and result.out_player == NO_PLAYER and not result.blind
        # every hand scored as it stood when the cap ended the deal
        assert result.scores == tuple(hand_points(h, 50) for h in step.deal_end.hands)
        assert all(s > 0 for s in result.scores)
    return game.deal_results, game.scores


def test_a_capped_deal_ends_alike_in_the_game_both_envs_and_the_tournament() -> None:
    results, scores = game_results()

    raw = shanghai_env.raw_env(**CAPPED_RULES)
    raw.reset(seed=SEED)
    total = dict.fromkeys(raw.possible_agents, 0.0)
    while not raw.game.game_over:
        game = raw.game
        raw.step(
            scripted(
                game.deal, game.view(0).deal_moves, legal_ids(raw.observe(raw.agent_selection)["action_mask"])
            )
        )
        for a in raw.possible_agents:
            total[a] += raw.rewards[a]
    assert (raw.game.deal_results, raw.game.scores) == (results, scores)
    assert raw.infos["player_0"]["capped_deals"] == 3 and all(raw.terminations.values())
    assert [total[a] for a in raw.possible_agents] == pytest.approx([-s / 100 for s in scores])

    wrapped = shanghai_env.env(**CAPPED_RULES)
    wrapped.reset(seed=SEED)
    for _agent in wrapped.agent_iter():
        observation, _reward, termination, truncation, _info = wrapped.last()
        game = wrapped.unwrapped.game
        done = termination or truncation
        wrapped.step(
            None
            if done
            else scripted(game.deal, game.view(0).deal_moves, legal_ids(observation["action_mask"]))
        )
    assert (wrapped.unwrapped.game.deal_results, wrapped.unwrapped.game.scores) == (results, scores)

    single = SingleAgentEnv([Scripted() for _ in range(3)], learner_seat=2, **CAPPED_RULES)
    _obs, info = single.reset(seed=SEED)
    learner_total, done = 0.0, False
    while not done:
        game = single.game
        action = scripted(game.deal, game.view(2).deal_moves, legal_ids(info["action_mask"]))
        _obs, reward, terminated, truncated, info = single.step(action)
        learner_total += reward
        done = terminated or truncated
    assert terminated and not truncated and info["capped_deals"] == 3
    assert (single.game.deal_results, single.game.scores) == (results, scores)
    assert learner_total == pytest.approx(-scores[2] / 100)

    played = play_game(Game(**CAPPED_RULES), [Scripted() for _ in range(4)], SEED, record=True)
    assert played.capped == [True] * 3 and played.scores == scores
    assert played.deal_scores == [list(r.scores) for r in results]
    assert replay(played.record).deal_results == results


def test_the_tournament_plays_its_cap_as_the_rule() -> None:
    config = TournamentConfig(
        players=("random",) * 3, games=3, contracts=(1, 2), max_moves_per_deal=15, record_games=1
    )
    result = play_task(config, schedule(config)[0])
    assert result.capped == [True, True] and result.moves == 30
    assert result.record["rules"]["max_moves_per_deal"] == 15
    assert replay(result.record).scores == [result.scores[p] for p in result.seats]


def upcard_cycle(game: Game, moves: int) -> None:
    """Take the upcard and discard it again (the stock never empties), ``moves`` times or until
    the deal ends."""
    deal = game.deal
    for _ in range(moves):
        if game.deal != deal or game.game_over:
            return
        names = [m.name for m in game.legal_moves()]
        game.apply("take" if "take" in names else next(n for n in names if n.startswith("discard")))


def test_the_default_cap_ends_a_stalled_deal_and_none_never_does() -> None:
    capped = Game(num_players=4, contracts=(1, 2))
    capped.reset(3)
    upcard_cycle(capped, 3100)
    assert capped.move_count == 3000 and capped.deal_results[0].capped and capped.deal == 1
    assert capped.deal_results[0].out_player == NO_PLAYER

    endless = Game(num_players=4, contracts=(1, 2), max_moves_per_deal=None)
    endless.reset(3)
    upcard_cycle(endless, 3100)
    assert endless.deal == 0 and not endless.deal_results and endless.move_count == 3100
    assert endless.view(1).deal_moves == 3100
    endless.validate()
    env = shanghai_env.raw_env(num_players=4, contracts=(1,), max_moves_per_deal=None)
    env.reset(seed=3)
    upcard_cycle(env.game, 3100)  # the env's game is its engine: no cap there either
    assert not env.game.deal_results


def test_readme_loop_ends_by_termination_with_scores() -> None:
    code = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.S)[0]
    assert "num_players=4" in code and "env.reset(seed=42)" in code
    code = code.replace("print(", "_ = (")  # quiet
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    raw = namespace["env"].unwrapped
    game = raw.game
    assert raw.max_steps is None and game.game_over
    assert len(game.deal_results) == 10 and all(s > 0 for s in game.scores)


def readme_loop(num_players: int, seed: int) -> tuple[Any, list[tuple[bool, bool]]]:
    """The README's loop with seeded action spaces; every (termination, truncation) it saw."""
    env = shanghai_env.env(num_players=num_players)
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed * 10 + i)
    ends = []
    for agent in env.agent_iter():
        observation, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            ends.append((termination, truncation))
            action = None
        else:
            action = env.action_space(agent).sample(observation["action_mask"])
        env.step(action)
    return env, ends


@pytest.mark.parametrize(("num_players", "seed"), [(4, 42), (3, 1), (5, 2), (6, 3), (7, 4), (8, 5)])
def test_random_games_end_by_termination(num_players: int, seed: int) -> None:
    env, ends = readme_loop(num_players, seed)
    raw = env.unwrapped
    assert ends == [(True, False)] * num_players  # every agent terminated, none truncated
    assert raw.game.game_over and len(raw.game.deal_results) == 10
    assert all(s > 0 for s in raw.game.scores)
    assert raw.game.move_count == raw.num_steps
    # random play never comes near the cap under the default rules
    assert raw.num_steps < 10 * DEFAULT_MAX_MOVES_PER_DEAL / 3


def test_tiny_cap_abandons_deals_and_the_game_goes_on() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(1, 2, 3), max_moves_per_deal=30)
    rng = random.Random(0)
    env.reset(seed=0)
    deals_seen = 0
    game = env.game
    while not game.game_over:
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(rng.choice(np.flatnonzero(mask).tolist()))
        if len(game.deal_results) > deals_seen:
            deals_seen = len(game.deal_results)
            result = game.deal_results[-1]
            assert env.num_steps == 30 * deals_seen  # every deal ended after exactly 30 moves
            assert result.out_player == NO_PLAYER and not result.blind
            assert all(s > 0 for s in result.scores)
            info = env.infos[env.agent_selection]
            assert info["capped_deals"] == deals_seen and info["deal_scores"] == result.scores
            for i, agent in enumerate(env.possible_agents):
                assert env.rewards[agent] == pytest.approx(-result.scores[i] / 100)
    assert len(env.game.deal_results) == 3
    assert all(env.terminations.values()) and not any(env.truncations.values())


def test_upcard_cycles_never_empty_the_stock_so_the_cap_ends_the_deal() -> None:
    """Taking the upcard and discarding keeps the stock full: only the cap ends such a deal."""
    env = shanghai_env.raw_env(num_players=4, contracts=(1,), max_moves_per_deal=200)
    env.reset(seed=3)
    stock = len(env.game.stock)
    while not env.game.game_over:
        names = [env.action_name(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]
        name = "take" if "take" in names else next(n for n in names if n.startswith("discard"))
        env.step(env.action_id(name))
        assert len(env.game.stock) == stock or env.game.game_over
    assert env.num_steps == 200
    assert env.game.deal_results[0].out_player == NO_PLAYER
    assert env.infos["player_0"]["capped_deals"] == 1
    scores = env.game.deal_results[0].scores
    assert all(s > 0 for s in scores)  # each player scored the hand held at the cap


class Recorder:
    def __init__(self, log: list[tuple[int, int]]) -> None:
        self.agent = UniformRandomAgent()
        self.name = "recorder"
        self.log = log

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, decision: Decision) -> int:
        action = self.agent.act(decision)
        self.log.append((decision.view.player, action))
        return action


@pytest.mark.parametrize(("seed", "cap"), [(0, 25), (5, 60)])
def test_tiny_cap_ends_deals_alike_in_both_envs(seed: int, cap: int) -> None:
    log: list[tuple[int, int]] = []
    single = SingleAgentEnv(
        [Recorder(log) for _ in range(3)], contracts=(1, 2, 3), learner_seat=1, max_moves_per_deal=cap
    )
    _obs, info = single.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        log.append((1, action))
        _obs, reward, terminated, truncated, info = single.step(action)
        total += reward
        done = terminated or truncated
    assert terminated and not truncated and info["capped_deals"] >= 1

    aec = shanghai_env.raw_env(num_players=4, contracts=(1, 2, 3), max_moves_per_deal=cap)
    aec.reset(seed=seed)
    aec_total = 0.0
    for seat, action in log:
        assert aec.agent_selection == f"player_{seat}"
        aec.step(action)
        aec_total += aec.rewards["player_1"]
    assert aec.game.deal_results == single.game.deal_results
    assert aec.game.scores == single.game.scores
    assert all(aec.terminations.values()) and not any(aec.truncations.values())
    assert aec.infos["player_1"]["capped_deals"] == info["capped_deals"]
    assert aec.infos["player_1"]["deal_scores"] == info["deal_scores"]
    assert total == pytest.approx(aec_total)
    capped = [r for r in aec.game.deal_results if r.out_player == NO_PLAYER]
    assert len(capped) == info["capped_deals"]


def test_hand_points_of_an_abandoned_deal() -> None:
    env = shanghai_env.raw_env(num_players=3, contracts=(1,), max_moves_per_deal=1)
    env.reset(seed=4)
    hands_before = [h[:] for h in env.game.hands]
    env.step(env.action_id("draw"))  # declining the upcard opens a buy offer: one move
    assert env.game.game_over
    scores = env.game.deal_results[0].scores
    assert scores == tuple(hand_points(h, 50) for h in hands_before)  # nobody drew yet
    assert all(env.terminations.values())
