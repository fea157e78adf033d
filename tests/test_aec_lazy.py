"""The AEC env builds the next mask and infos when they are read, not on every step: whatever
the pattern of reads, every read gives what building them on every step gave (the same keys in
the same order, equal values, read-only masks, the actor's info and observation sharing one
mask), copies taken with infos still to be built continue alike, and the single-agent view,
which reads neither on its opponents' moves, has no mask built for them."""

from __future__ import annotations

import copy
import pickle
import random
from typing import Any

import numpy as np
import pytest

import shanghai_env
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.single_agent import SingleAgentEnv


def expected_infos(env: Any) -> dict[str, dict[str, Any]]:
    """Every agent's info built from the game alone (the "Infos" section of the env's docs)."""
    game, n = env.game, env.rules.num_players
    results = game.deal_results
    winners = game.winners() if game.game_over else []
    base = {
        "game_scores": tuple(game.scores),
        "deals_played": len(results),
        "deal_scores": results[-1].scores if results else (0,) * n,
        "capped_deals": sum(r.capped for r in results),
        "winners": tuple(int(i in winners) for i in range(n)),
    }
    out = {}
    for agent in env.agents:
        live = not (env.terminations[agent] or env.truncations[agent])
        if agent == env.agent_selection and live:
            mask = env.action_table.mask(game.legal_moves())
        else:
            mask = np.zeros(env.action_table.size, np.int8)
        out[agent] = {**base, "action_mask": mask}
    return out


def assert_infos_exact(env: Any) -> None:
    infos, want = env.infos, expected_infos(env)
    assert list(infos) == list(want) == env.agents
    for agent, info in infos.items():
        assert list(info) == list(want[agent])
        for key, value in want[agent].items():
            if key == "action_mask":
                assert info[key].dtype == np.int8 and not info[key].flags.writeable
                assert np.array_equal(info[key], value), agent
            else:
                assert info[key] == value, (agent, key)
    agent = env.agent_selection
    if agent in infos and not (env.terminations[agent] or env.truncations[agent]):
        assert infos[agent]["action_mask"] is env.observe(agent)["action_mask"]


def random_action(env: Any, rng: random.Random) -> int:
    """A random legal action found from the engine, so that no mask is read."""
    return env.action_table.action_of[rng.choice(env.game.legal_moves())]


@pytest.mark.parametrize(
    ("players", "read_share", "seed"), [(3, 0.3, 0), (4, 0.05, 1), (8, 0.5, 2), (6, 1.0, 3)]
)
def test_infos_and_masks_at_every_read_pattern(players: int, read_share: float, seed: int) -> None:
    # Two-deal games: deals end (every info changes), the game ends (winners), agents step out.
    env = shanghai_env.raw_env(num_players=players, contracts=(1, 2), reward="win")
    rng = random.Random(seed)
    env.reset(seed=seed)
    assert_infos_exact(env)
    reads = 0
    while env.agents:
        agent = env.agent_selection
        if rng.random() < read_share:
            assert_infos_exact(env)
            reads += 1
        if rng.random() < read_share:  # an observation without the infos read first
            mask = env.observe(agent)["action_mask"]
            assert np.array_equal(mask, expected_infos(env)[agent]["action_mask"])
        if env.terminations[agent]:
            assert_infos_exact(env)
            env.step(None)
        else:
            env.step(random_action(env, rng))
    assert env.game.game_over and reads > 0
    assert env.infos == {}


def test_infos_exact_through_the_wrappers_and_truncation() -> None:
    env = shanghai_env.env(num_players=4, max_steps=150)
    rng = random.Random(5)
    env.reset(seed=5)
    for _ in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        assert_infos_exact(env.unwrapped)
        assert info["action_mask"] is obs["action_mask"] or terminated or truncated
        env.step(None if terminated or truncated else random_action(env.unwrapped, rng))
    assert env.unwrapped.num_steps == 150


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))])
def test_copy_with_infos_not_yet_built(copier: Any) -> None:
    env = shanghai_env.raw_env(num_players=4)
    rng = random.Random(7)
    env.reset(seed=7)
    _ = env.infos  # built once, then moves that nobody reads
    for _ in range(40):
        env.step(random_action(env, rng))
    dup = copier(env)
    assert_infos_exact(dup)
    assert_infos_exact(env)
    for _ in range(200):  # both go on alike
        action = random_action(env, rng)
        env.step(action)
        dup.step(action)
    assert_infos_exact(dup)
    assert dup.infos.keys() == env.infos.keys()
    for agent in env.agents:
        assert np.array_equal(dup.observe(agent)["observation"], env.observe(agent)["observation"])


def test_infos_set_from_outside_are_kept_until_the_next_move() -> None:
    env = shanghai_env.raw_env(num_players=3)
    env.reset(seed=2)
    given = {agent: {"mine": agent} for agent in env.agents}
    env.infos = given
    assert env.infos is given
    env.step(random_action(env, random.Random(0)))
    # the move brings the agents whose mask changed up to date, in the dict given
    assert env.infos is given
    assert env.infos[env.agent_selection]["action_mask"] is env.observe(env.agent_selection)["action_mask"]


@pytest.mark.parametrize("opponents", [None, "greedy"])
def test_single_agent_view_builds_masks_for_the_learner_only(opponents: Any) -> None:
    env = SingleAgentEnv(
        None if opponents is None else [GreedyBot() for _ in range(3)], num_players=4, contracts=(1,)
    )
    built = 0
    aec = env.aec
    build = aec._build_mask

    def counting() -> np.ndarray:
        nonlocal built
        built += 1
        return build()

    aec._build_mask = counting  # type: ignore[method-assign]
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=11)
    decisions, done = 1, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        decisions += not done
    assert built == decisions
    assert aec.num_steps > 2 * decisions  # the opponents played most moves
