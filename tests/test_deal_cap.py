"""The per-deal move cap: a capped deal is abandoned (nobody out, everyone scores the hand) and
the game goes on, in the AEC env as in SingleAgentEnv; random games end by termination."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shanghai_env
from shanghai_env.cards import hand_points
from shanghai_env.decision import Decision
from shanghai_env.engine import DEFAULT_MAX_MOVES_PER_DEAL, NO_PLAYER
from shanghai_env.single_agent import SingleAgentEnv, UniformRandomAgent

ROOT = Path(__file__).resolve().parent.parent


def test_one_constant_for_every_cap() -> None:
    from shanghai_env.agents.arena import runner

    assert DEFAULT_MAX_MOVES_PER_DEAL == 3000
    assert shanghai_env.raw_env().max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL
    assert SingleAgentEnv().max_moves_per_deal == DEFAULT_MAX_MOVES_PER_DEAL
    assert runner.DEFAULT_MAX_MOVES_PER_DEAL == DEFAULT_MAX_MOVES_PER_DEAL


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
