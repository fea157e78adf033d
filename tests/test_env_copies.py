"""Copies keep the game: ``copy.deepcopy`` and a pickle round trip of a mid-game env continue
exactly like the original, random streams included (action-space sampling, the env's generator
for the next reset, the game's reshuffles, the opponents' play)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

import shanghai_env
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.single_agent import SingleAgentEnv


def deep(env: Any) -> Any:
    return copy.deepcopy(env)


def pickled(env: Any) -> Any:
    return pickle.loads(pickle.dumps(env))


COPIES = [pytest.param(deep, id="deepcopy"), pytest.param(pickled, id="pickle")]


def info_key(info: dict[str, Any]) -> tuple[str, bytes]:
    return repr({k: v for k, v in info.items() if k != "action_mask"}), info["action_mask"].tobytes()


def aec_trace(env: Any, steps: int) -> list[tuple[Any, ...]]:
    """``steps`` steps of play by each agent's own action space (its random stream), to the end."""
    raw = env.unwrapped
    out: list[tuple[Any, ...]] = []
    for _ in range(steps):
        if not raw.agents:
            break
        agent = env.agent_selection
        obs, reward, term, trunc, info = env.last()
        mask = obs["action_mask"]
        action = None if term or trunc else int(env.action_space(agent).sample(mask))
        out.append(
            (agent, obs["observation"].tobytes(), mask.tobytes(), reward, term, trunc, info_key(info), action)
        )
        out.append((raw.game.reshuffles, raw.game.move_count, env.state().tobytes()))
        env.step(action)
    return out


@pytest.mark.parametrize("make", [shanghai_env.raw_env, shanghai_env.env])
@pytest.mark.parametrize("copier", COPIES)
def test_aec_copy_continues_exactly(make: Any, copier: Any) -> None:
    env = make(num_players=4, contracts=(1, 2))
    env.reset(seed=11)
    aec_trace(env, 50)
    raw = env.unwrapped
    assert raw.num_steps == 50
    dup = copier(env)
    assert dup.unwrapped.num_steps == 50 and dup.unwrapped is not raw
    assert dup.unwrapped.game.hands == raw.game.hands and dup.unwrapped.game.stock == raw.game.stock
    first = aec_trace(env, 10_000)
    second = aec_trace(dup, 10_000)
    assert len(first) > 600  # several hundred steps, to the game's end
    assert first == second
    assert raw.game.game_over
    assert any(t[0] > 0 for t in first[1::2]), "no stock rebuild after the copy: pick another seed"
    assert raw.agents == dup.unwrapped.agents == []
    # the env's generator was copied too: the next unseeded game is the same in both
    env.reset()
    dup.reset()
    assert dup.unwrapped.game.hands == raw.game.hands
    assert aec_trace(env, 200) == aec_trace(dup, 200)


@pytest.mark.parametrize("copier", COPIES)
def test_aec_copies_are_independent_and_read_only(copier: Any) -> None:
    env = shanghai_env.raw_env(num_players=3, contracts=(1,))
    env.reset(seed=2)
    aec_trace(env, 20)
    dup = copier(env)
    before = env.observe(env.agent_selection)["observation"].tobytes()
    aec_trace(dup, 30)
    assert env.num_steps == 20 and env.observe(env.agent_selection)["observation"].tobytes() == before
    for e in (env, dup):
        obs = e.observe(e.agent_selection)
        assert obs["action_mask"] is e.infos[e.agent_selection]["action_mask"]
        for array in (obs["action_mask"], obs["observation"], e.infos[e.possible_agents[0]]["action_mask"]):
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 1


def test_aec_copy_mid_buy_offer_and_after_illegal_termination() -> None:
    env = shanghai_env.env(num_players=4, contracts=(1,))
    env.reset(seed=5)
    env.last()
    env.step(env.unwrapped.action_id("draw"))  # a buy offer is open
    assert env.unwrapped.game.phase.name == "BUY"
    dup = pickled(env)
    assert aec_trace(env, 300) == aec_trace(dup, 300)
    # an illegal action ended the original game: the copy is over the same way
    env = shanghai_env.env(num_players=4, contracts=(1,))
    env.reset(seed=6)
    obs = env.last()[0]
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # PettingZoo logs a warning
    assert all(env.terminations.values())
    dup = deep(env)
    assert aec_trace(env, 10) == aec_trace(dup, 10)
    assert env.agents == dup.agents == []


def single_trace(env: SingleAgentEnv, steps: int) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for _ in range(steps):
        action = int(env.action_space.sample(env.action_masks().astype(np.int8)))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((action, obs.tobytes(), reward, terminated, truncated, info_key(info)))
        out.append((env.game.reshuffles, env.game.move_count, env.game.hands))
        if terminated or truncated:
            break
    return out


def opponents_random() -> None:
    return None


def opponents_greedy() -> list[GreedyBot]:
    return [GreedyBot() for _ in range(3)]


@pytest.mark.parametrize("opponents", [opponents_random, opponents_greedy])
@pytest.mark.parametrize("copier", COPIES)
def test_single_agent_copy_continues_exactly(opponents: Any, copier: Any) -> None:
    env = SingleAgentEnv(opponents(), max_moves_per_deal=400)  # all ten contracts
    env.reset(seed=9)
    env.action_space.seed(9)
    single_trace(env, 30)
    dup = copier(env)
    assert dup.game.move_count == env.game.move_count > 30
    first = single_trace(env, 10_000)
    second = single_trace(dup, 10_000)
    assert len(first) > 2 * 300 and first == second  # several hundred steps, to the end
    assert first[-2][3] or first[-2][4]  # played to the episode's end
    # the next unseeded episode (learner seat, opponents' seeds, game) is the same too
    obs1, info1 = env.reset()
    obs2, info2 = dup.reset()
    assert obs1.tobytes() == obs2.tobytes() and info_key(info1) == info_key(info2)
    assert env.game_seed == dup.game_seed
    assert single_trace(env, 100) == single_trace(dup, 100)
    with pytest.raises(ValueError, match="read-only"):
        info2["action_mask"][0] = 1
