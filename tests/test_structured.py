"""The structured MaskablePPO policy: its layout matches every table, it reads only the observation
(so hidden cards never change its output), a saved model loads with plain ``MaskablePPO.load`` and
plays in the tournament, and a training run resumes from its checkpoints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch
from sb3_contrib import MaskablePPO

from shanghai_env.actions import action_table
from shanghai_env.agents.learned.structured import StructuredPolicy
from shanghai_env.agents.learned.training import TrainConfig, latest_checkpoint, train
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv
from shanghai_env.worlds import sample_world


def _model(env: SingleAgentEnv, num_players: int, contracts: tuple[int, ...]) -> MaskablePPO:
    kwargs = {"num_players": num_players, "contracts": contracts, "width": 16}
    return MaskablePPO(StructuredPolicy, env, policy_kwargs=kwargs, n_steps=16, batch_size=16, seed=0)


@pytest.mark.parametrize(("num_players", "contracts"), [(3, (1,)), (4, tuple(range(1, 11))), (6, (4, 9))])
def test_one_logit_per_action_and_legal_choices(num_players: int, contracts: tuple[int, ...]) -> None:
    env = SingleAgentEnv(None, num_players=num_players, contracts=contracts)
    model = _model(env, num_players, contracts)
    obs, _ = env.reset(seed=5)
    logits, value = model.policy.mlp_extractor(torch.as_tensor(obs[None]).float())
    assert logits.shape == (1, action_table(Rules(num_players=num_players, contracts=contracts)).size)
    assert value.shape == (1, 16)
    for _ in range(150):  # every choice under the mask is legal, through every kind of decision
        mask = env.action_masks()
        action = int(model.predict(obs, action_masks=mask)[0])
        assert mask[action]
        obs, _r, term, trunc, _info = env.step(action)
        if term or trunc:
            obs, _ = env.reset()


def test_a_table_of_another_size_is_refused() -> None:
    env = SingleAgentEnv(None, num_players=4, contracts=(1,))
    with pytest.raises(ValueError, match="does not match 3 players"):
        _model(env, 3, (1,))


def test_hidden_cards_never_change_the_policy() -> None:
    """Worlds that differ only in cards the learner cannot see give the same logits and value."""
    env = SingleAgentEnv(None, num_players=4, contracts=(1, 2))
    model = _model(env, 4, (1, 2))
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=11)
    checked = 0
    for step in range(120):
        if step % 10 == 0:
            seat = env.learner
            world = sample_world(env.game.view(seat), rng, env.rules)
            assert world.hands[seat] == env.game.hands[seat]
            other = env.encoder.encode(world, seat)
            assert world.stock != env.game.stock or world.hands != env.game.hands
            with torch.no_grad():
                a = model.policy.mlp_extractor(torch.as_tensor(obs[None]).float())
                b = model.policy.mlp_extractor(torch.as_tensor(other[None]).float())
            assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
            checked += 1
        obs, _r, term, trunc, _info = env.step(int(model.predict(obs, action_masks=env.action_masks())[0]))
        if term or trunc:
            obs, _ = env.reset()
    assert checked == 12


def _tiny(out: Path, **overrides: object) -> TrainConfig:
    kwargs: dict[str, object] = {
        "timesteps": 64,
        "n_envs": 1,
        "vec_env": "dummy",
        "n_steps": 32,
        "batch_size": 32,
        "n_epochs": 1,
        "net_arch": (16,),
        "features": "structured",
        "opponents": ("greedy",),
        "eval_every": 10**9,
        "eval_games": 2,
        "checkpoint_every": 32,
        "progress": False,
        "seed": 2,
        "out": str(out),
    }
    kwargs.update(overrides)
    return TrainConfig(**kwargs)  # type: ignore[arg-type]


def test_saved_model_loads_with_plain_maskableppo_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(_tiny(out, pretrain="greedy", pretrain_steps=64, pretrain_epochs=1))
    loaded = MaskablePPO.load(out / "model.zip", device="cpu")
    assert isinstance(loaded.policy, StructuredPolicy)
    first = latest_checkpoint(str(out))
    assert first is not None and first.endswith("model_64_steps.zip")
    # Asked for more steps, the run continues from its checkpoint without cloning again.
    model = train(
        _tiny(out, timesteps=128, resume=True, pretrain="greedy", pretrain_steps=64, pretrain_epochs=1)
    )
    assert model.num_timesteps == 128
    assert latest_checkpoint(str(out)).endswith("model_128_steps.zip")  # type: ignore[union-attr]


def test_a_structured_model_plays_in_the_tournament(tmp_path: Path) -> None:
    from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament

    env = SingleAgentEnv(None, num_players=4, contracts=(1,))
    path = tmp_path / "m.zip"
    _model(env, 4, (1,)).save(path)
    config = TournamentConfig(
        players=(str(path), "greedy", "greedy", "greedy"), games=4, seed=0, contracts=(1,)
    )
    results = run_tournament(config, workers=1)
    assert len(results) == config.total_games == 24  # one round of the 4-player seat design


def test_derived_inputs_depend_only_on_the_players_view() -> None:
    """The derived block is the same in every world consistent with what the player knows, and it
    changes with the player's own hand (it is not constant)."""
    from shanghai_env.agents.learned.derived import DERIVED_SIZE, DerivedSingleAgentEnv, derived_block
    from shanghai_env.agents.registry import make_agent

    env = DerivedSingleAgentEnv([make_agent("planner") for _ in range(3)], num_players=4, contracts=(1, 2, 5))
    obs, _ = env.reset(seed=4)
    assert obs.shape == (env.encoder.size + DERIVED_SIZE,) and obs.dtype == np.float32
    rng = np.random.default_rng(1)
    blocks = []
    for step in range(90):
        if step % 6 == 0:
            seat = env.learner
            view = env.game.view(seat)
            mine = derived_block(view, env.rules)
            np.testing.assert_array_equal(obs[env.encoder.size :], mine)
            for _ in range(3):
                world = sample_world(view, rng, env.rules)
                np.testing.assert_array_equal(derived_block(world.view(seat), env.rules), mine)
            blocks.append(mine)
        obs, _r, term, trunc, _info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term or trunc:
            obs, _ = env.reset()
    assert len({b.tobytes() for b in blocks}) > 5


def test_a_derived_model_plays_in_the_tournament(tmp_path: Path) -> None:
    from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament
    from shanghai_env.agents.learned.derived import DerivedSingleAgentEnv
    from shanghai_env.agents.learned.model import saved_table

    env = DerivedSingleAgentEnv(None, num_players=3, contracts=(1,))
    kwargs = {"num_players": 3, "contracts": (1,), "width": 16, "derived": True}
    path = tmp_path / "derived.zip"
    MaskablePPO(StructuredPolicy, env, policy_kwargs=kwargs, seed=0).save(path)
    table = saved_table(str(path))
    assert (table.num_players, table.contracts) == (3, (1,))
    config = TournamentConfig(players=(str(path), "greedy", "planner"), games=2, seed=0, contracts=(1,))
    assert len(run_tournament(config, workers=1)) >= 2


def test_the_aec_env_with_derived_inputs_passes_pettingzoos_api_test() -> None:
    """DerivedObservation: every agent's observation is followed by the derived block of its own
    view, in its observation space; PettingZoo's api_test passes through it."""
    from pettingzoo.test import api_test

    import shanghai_env
    from shanghai_env.agents.learned.derived import DERIVED_SIZE, DerivedObservation, derived_block

    env = DerivedObservation(shanghai_env.env(num_players=3, contracts=(1, 4)))
    api_test(env, num_cycles=200)
    env.reset(seed=4)
    base = env.unwrapped
    rng = np.random.default_rng(0)
    for _ in range(150):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            break
        for other in env.possible_agents:
            obs = env.observe(other)
            plain = base.observe(other)["observation"]
            assert obs["observation"].dtype == np.float32 and env.observation_space(other).contains(obs)
            assert obs["observation"].shape == (plain.size + DERIVED_SIZE,)
            np.testing.assert_array_equal(obs["observation"][: plain.size], plain)
            seat = env.possible_agents.index(other)
            np.testing.assert_array_equal(
                obs["observation"][plain.size :], derived_block(base.game.view(seat), base.rules)
            )
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    with pytest.raises(TypeError, match="DerivedObservation"):
        DerivedObservation(object())  # type: ignore[arg-type]
