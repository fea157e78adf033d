"""Deciding network opponents in batches across envs changes nothing but the speed.

``step_envs`` (shanghai_env/single_agent.py) must give every env exactly what ``env.step`` gives
it; ``ModelAgent.act_batch`` must choose what ``act`` chooses; ``BatchedVecEnv`` must give what
Stable-Baselines3's ``DummyVecEnv`` gives; bad input must leave every env as it was.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from shanghai_env.actions import action_table
from shanghai_env.agents.base import decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.learned.model import ModelAgent, observation_encoder
from shanghai_env.engine import Game
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv, step_envs

MODELS = Path(__file__).resolve().parents[1] / "models"


class CountingModel(ModelAgent):
    """A ModelAgent that records the size of every batch it is asked to decide."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.batches: list[int] = []

    def act_batch(self, decisions: list[Any]) -> list[int]:
        self.batches.append(len(decisions))
        return super().act_batch(decisions)


def _tables(model: ModelAgent, count: int) -> list[SingleAgentEnv]:
    """``count`` contract-1 envs: the network in two seats (one object shared by every env, as
    train.py shares it), a bot of each env's own in the third."""
    envs = []
    for k in range(count):
        bot = GreedyBot() if k % 2 else PlannerBot()
        envs.append(SingleAgentEnv([model, bot, model], num_players=4, contracts=(1,)))
    return envs


def _learner_action(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def _same(a: Any, b: Any) -> None:
    obs_a, reward_a, term_a, trunc_a, info_a = a
    obs_b, reward_b, term_b, trunc_b, info_b = b
    assert np.array_equal(obs_a, obs_b)
    assert (reward_a, term_a, trunc_a) == (reward_b, term_b, trunc_b)
    assert info_a.keys() == info_b.keys()
    for key in info_a:
        assert np.array_equal(np.asarray(info_a[key]), np.asarray(info_b[key])), key


def test_step_envs_gives_each_env_what_step_gives_it() -> None:
    path = str(MODELS / "ppo_contract1.zip")
    batched_model, plain_model = CountingModel(path), ModelAgent(path)
    batched, plain = _tables(batched_model, 3), _tables(plain_model, 3)
    rngs = [np.random.default_rng(k) for k in range(3)]
    for k, (a, b) in enumerate(zip(batched, plain)):
        (obs_a, info_a), (obs_b, info_b) = a.reset(seed=k), b.reset(seed=k)
        _same((obs_a, 0.0, False, False, info_a), (obs_b, 0.0, False, False, info_b))
    steps = ends = 0
    while steps < 300:
        actions = [_learner_action(env.action_masks(), rng) for env, rng in zip(plain, rngs)]
        got = step_envs(batched, actions)
        for k, (env, action) in enumerate(zip(plain, actions)):
            expected = env.step(action)
            _same(got[k], expected)
            if expected[2] or expected[3]:
                ends += 1
                batched[k].reset(seed=100 + steps)
                env.reset(seed=100 + steps)
        steps += 1
    assert ends >= 1  # episodes ended and restarted along the way
    assert max(batched_model.batches) > 1  # decisions of several envs were taken together
    assert sum(batched_model.batches) > len(batched_model.batches)


def test_act_batch_chooses_what_act_chooses() -> None:
    agent = ModelAgent(str(MODELS / "ppo_full_4p.zip"))
    rules = Rules(num_players=4, contracts=tuple(range(1, 11)))
    table, encoder = action_table(rules), observation_encoder(rules)
    decisions = []
    for seed in range(2):
        game = Game(rules)
        game.reset(seed)
        bots = [PlannerBot(seed=seed * 4 + q) for q in range(4)]
        while not game.game_over and len(decisions) < 150 * (seed + 1):
            p = game.to_act
            decision = decision_for(game, p, table, encoder)
            if len(decision.view.legal_moves) > 1:
                decision.observation  # noqa: B018  # computed now, while the game is in this state
                decisions.append(decision)
            game.apply(table.decode(bots[p].act(decision)))
    single = [agent.act(d) for d in decisions]
    for size in (2, 7, 64):
        batched = [
            a for i in range(0, len(decisions), size) for a in agent.act_batch(decisions[i : i + size])
        ]
        assert batched == single


def test_bad_input_to_step_envs_changes_no_env() -> None:
    model = ModelAgent(str(MODELS / "ppo_contract1.zip"))
    envs = _tables(model, 3)
    for k, env in enumerate(envs):
        env.reset(seed=k)
    before = [pickle.dumps(env.game) for env in envs]
    good = [int(np.flatnonzero(env.action_masks())[0]) for env in envs]
    for actions, error in (
        ([good[0], good[1], 10**9], ValueError),  # out of range, in the last env
        ([good[0], "5", good[2]], TypeError),
        ([good[0], good[1]], ValueError),  # one action short
    ):
        with pytest.raises(error):
            step_envs(envs, actions)
        assert [pickle.dumps(env.game) for env in envs] == before
    with pytest.raises(ValueError, match="distinct"):
        step_envs([envs[0], envs[0]], [good[0], good[0]])
    assert [pickle.dumps(env.game) for env in envs] == before


def test_batched_vec_env_equals_dummy_vec_env() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from shanghai_env.agents.learned.vec_env import BatchedVecEnv

    path = str(MODELS / "ppo_contract1.zip")
    shared = [ModelAgent(path), ModelAgent(path)]

    def maker(model: ModelAgent, k: int) -> Any:
        return lambda: SingleAgentEnv([model, GreedyBot(), model], num_players=4, contracts=(1,))

    vecs = [
        cls([maker(model, k) for k in range(4)]) for cls, model in zip((BatchedVecEnv, DummyVecEnv), shared)
    ]
    for vec in vecs:
        vec.seed(7)
    obs = [vec.reset() for vec in vecs]
    assert np.array_equal(obs[0], obs[1])
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(250):
        masks = np.stack(vecs[1].env_method("action_masks"))
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in masks])
        out = [vec.step(actions) for vec in vecs]
        for part in range(3):
            assert np.array_equal(out[0][part], out[1][part])
        for a, b in zip(out[0][3], out[1][3]):
            assert a.keys() == b.keys()
            for key in a:
                assert np.array_equal(np.asarray(a[key]), np.asarray(b[key])), key
        dones += int(out[1][2].sum())
    assert dones >= 1  # automatic resets were compared too


def test_training_envs_share_networks_and_never_bots() -> None:
    from shanghai_env.agents.learned.training import OpponentSampler

    path = str(MODELS / "ppo_contract1.zip")
    kinds = set()
    for seed in range(6):
        again, slot0, slot1 = (
            OpponentSampler(("planner", path), (), 3, slot=slot)(np.random.default_rng(seed))
            for slot in (0, 0, 1)
        )
        for a, b, c in zip(again, slot0, slot1):
            assert a is b  # the same slot and seat: the same object, episode after episode
            assert type(a) is type(c)
            if isinstance(a, ModelAgent):
                assert c is a  # one network object for every env: their decisions batch
            else:
                assert c is not a  # a bot keeps per-game state: one per env
            kinds.add(type(a).__name__)
    assert kinds == {"ModelAgent", "PlannerBot"}
