"""The research API on the batched env: sampling among the legal moves only (nets/sampling.py)
and a saved trainer player as a torch module (players/policy.py: load_scorer_module)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import shanghai_env  # noqa: E402
from shanghai_env.agents.learned.nets.sampling import (  # noqa: E402
    greedy_legal,
    gumbel_argmax,
    legal_index,
    legal_log_probs,
    legal_scores,
    sample_legal,
)
from shanghai_env.agents.learned.players.policy import (  # noqa: E402
    PolicyAgent,
    load_scorer_module,
    save_policy,
)
from shanghai_env.agents.registry import shipped_models  # noqa: E402

# --- sampling among the legal moves ------------------------------------------------------------


def test_legal_scores_are_the_dense_heads_scores_at_the_legal_rows():
    torch.manual_seed(0)
    head = torch.nn.Linear(8, 50)
    h = torch.randn(3, 8)
    legal = [[1, 7, 49], [0], [5, 6]]
    idx, valid = legal_index(legal)
    scores = legal_scores(h, head, idx, valid)
    dense = head(h)
    for row, ids in enumerate(legal):
        assert torch.allclose(scores[row, : len(ids)], dense[row, ids], atol=1e-6)
        assert torch.isneginf(scores[row, len(ids) :]).all()


def test_a_mask_and_the_lists_give_the_same_index():
    venv = shanghai_env.vector_env(4, num_players=3, contracts=(1,))
    venv.reset(seed=1)
    from_lists = legal_index(venv.legal_actions)
    for mask in (venv.mask, venv.bool_mask, torch.from_numpy(venv.mask)):
        from_mask = legal_index(mask)
        assert all(torch.equal(a, b) for a, b in zip(from_lists, from_mask))


def test_draws_follow_the_softmax_over_the_legal_moves_and_never_the_padding():
    logits = torch.tensor([[2.0, 0.0, -1.0, float("-inf")]]).repeat(40_000, 1)
    idx = torch.tensor([[10, 20, 30, 0]]).repeat(40_000, 1)
    gen = torch.Generator().manual_seed(3)
    actions, k, logp = sample_legal(logits, idx, gen)
    share = torch.bincount(k, minlength=4).double() / len(k)
    expected = torch.softmax(logits[0], 0).double()
    assert share[3] == 0 and set(actions.tolist()) <= {10, 20, 30}
    assert torch.allclose(share, expected, atol=0.01)  # 40,000 draws: the error is about 0.0025
    assert torch.allclose(logp, torch.log_softmax(logits, 1).gather(1, k[:, None]).squeeze(1))


def test_greedy_plays_the_best_scored_legal_move():
    scores = torch.tensor([[0.5, 3.0, float("-inf")], [-2.0, -5.0, -1.0]])
    idx = torch.tensor([[4, 9, 0], [1, 2, 3]])
    actions, k, _ = sample_legal(scores, idx, greedy=True)
    assert actions.tolist() == [9, 3] and k.tolist() == [1, 2]
    assert greedy_legal(scores).tolist() == [1, 2]
    assert torch.isneginf(legal_log_probs(scores)[0, 2])


def test_the_trainers_draw_is_the_gumbel_max_it_always_made():
    """ppo and the saved players draw through gumbel_argmax: the same noise from the same
    generator as their former inline draw, so a seed trains and plays as before."""
    scores = torch.randn(64, 9).masked_fill(torch.rand(64, 9) < 0.3, float("-inf"))
    scores[:, 0] = 0.0  # every row keeps a legal move
    a, b = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    u = torch.rand(scores.shape, generator=a).clamp_(1e-12, 1.0)
    before = (scores - torch.log(-torch.log(u))).argmax(1)
    assert torch.equal(gumbel_argmax(scores, b), before)


@pytest.mark.parametrize(
    "bad, match",
    [
        (torch.tensor([[0.0, float("nan")]]), "NaN"),
        (torch.tensor([[float("inf"), 0.0]]), r"\+inf"),
        (torch.tensor([[0.0, 1.0], [float("-inf"), float("-inf")]]), "row 1"),
        (torch.zeros(3), r"\(B, K\)"),
    ],
)
def test_bad_scores_are_refused_before_any_noise_is_drawn(bad, match):
    gen = torch.Generator().manual_seed(5)
    state = gen.get_state()
    with pytest.raises(ValueError, match=match):
        gumbel_argmax(bad, gen)
    assert torch.equal(gen.get_state(), state)


def test_bad_legal_input_is_refused():
    with pytest.raises(ValueError, match="row 1 has no legal move"):
        legal_index([[1, 2], []])
    with pytest.raises(ValueError, match="2-d"):
        legal_index(np.ones(5, np.int8))
    with pytest.raises(TypeError, match=r"venv\.legal_actions"):
        legal_index("1,2")
    with pytest.raises(ValueError, match="same shape"):
        sample_legal(torch.zeros(2, 3), torch.zeros(2, 2, dtype=torch.int64))


# --- a saved player as a torch module -------------------------------------------------------------


def test_a_dmc_player_gives_action_values_and_plays_as_its_agent():
    path = shipped_models()["scratch_4p"]  # dmc, reads the facts of its hand
    module, info = load_scorer_module(path)
    assert (info.method, info.scores, info.needs_facts) == ("dmc", "action values (Q)", True)
    assert info.facts and info.rules.num_players == 4
    venv = shanghai_env.vector_env(6, **info.env_options)
    obs, _, _ = venv.reset(seed=2)
    agent = PolicyAgent(path, greedy=True)
    for _ in range(5):
        with torch.no_grad():
            scores, idx, valid = module(obs, venv.legal_actions, venv.extra)
        actions, _, _ = sample_legal(scores, idx, greedy=True)
        assert actions.tolist() == agent.act_arrays(obs, venv.legal_actions, venv.extra)
        assert torch.equal(valid, torch.isfinite(scores))
        obs, *_ = venv.step(actions.numpy())


def test_a_ppo_player_gives_log_probabilities_over_the_legal_moves():
    module, info = load_scorer_module(shipped_models()["scratch_contract1"])
    assert (info.method, info.scores) == ("ppo", "log-probabilities")
    venv = shanghai_env.vector_env(5, **info.env_options)
    obs, mask, _ = venv.reset(seed=4)
    extra = venv.extra if info.needs_facts else None
    with torch.no_grad():
        scores, idx, _ = module(obs, mask, extra)  # a mask works as well as the lists
    assert torch.allclose(scores.exp().sum(1), torch.ones(5), atol=1e-5)
    assert torch.equal(idx, legal_index(venv.legal_actions)[0])


def test_a_player_without_facts_and_a_trainer_file(tmp_path):
    from shanghai_env.agents.learned.nets.policy import build_net
    from shanghai_env.rules import Rules

    rules = Rules(num_players=3, contracts=(1,))
    path = str(tmp_path / "p.pt")
    save_policy(path, build_net(rules, (16,)), rules, {"method": "dagger"})
    module, info = load_scorer_module(path)
    assert (info.scores, info.needs_facts, info.facts) == ("log-probabilities", False, ())
    assert "features" not in info.env_options
    venv = shanghai_env.vector_env(3, **info.env_options)
    obs, _, _ = venv.reset(seed=0)
    scores, _, _ = module(obs, venv.legal_actions, venv.extra)  # a zero-width extra is no facts
    assert scores.requires_grad  # one's own code may fine-tune it
    with pytest.raises(ValueError, match="reads no facts"):
        module(obs, venv.legal_actions, np.zeros((3, 107), np.float32))


def test_the_module_says_what_it_needs():
    module, _ = load_scorer_module(shipped_models()["scratch_4p"])
    venv = shanghai_env.vector_env(2, num_players=4)  # without the facts
    obs, _, _ = venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"info\.env_options"):
        module(obs, venv.legal_actions, None)
    with pytest.raises(ValueError, match="observations of this player's table"):
        module(obs[:, :10], venv.legal_actions, None)
    with pytest.raises(ValueError, match="2 observations"):
        module(obs, venv.legal_actions[:1], None)


@pytest.mark.parametrize("name", ["shanghai", "shanghai_4p"])
def test_a_scorer_is_sent_to_its_own_loader(name):
    with pytest.raises(ValueError, match=r"a \.scorer plays through make_agent"):
        load_scorer_module(shipped_models()[name])


def test_a_shipped_player_loads_by_name_from_any_folder(tmp_path, monkeypatch):
    from shanghai_env.agents.bots.scorer import ScorerNet, load_scorer
    from shanghai_env.agents.learned.players.policy import load_policy
    from shanghai_env.agents.learned.players.sb3 import load_maskable
    from shanghai_env.models import shipped_models as low_shipped_models

    monkeypatch.chdir(tmp_path)  # no models/ here: the names resolve in the installed package
    assert shipped_models() == low_shipped_models()  # the registry's list is the low module's
    module, info = load_scorer_module("scratch_4p")
    assert info.path == shipped_models()["scratch_4p"] and info.method == "dmc"
    venv = shanghai_env.vector_env(2, **info.env_options)
    obs, _, _ = venv.reset(seed=0)
    with torch.no_grad():
        scores, _, _ = module(obs, venv.legal_actions, venv.extra)
    assert torch.isfinite(scores).any(1).all()
    _, rules, _ = load_policy("scratch")
    assert rules.contracts == tuple(range(1, 11))
    agent = PolicyAgent("scratch_contract1")
    assert (agent.name, agent.path) == ("scratch_contract1", shipped_models()["scratch_contract1"])
    assert ScorerNet.load("shanghai").weights
    assert load_scorer("shanghai_4p").name == "shanghai_4p"
    with pytest.raises(ValueError, match=r"a \.scorer plays through make_agent"):
        load_scorer_module("shanghai")  # a shipped scorer is still sent to its own loader
    with pytest.raises(ValueError, match=r"no such file.*scratch_4p"):
        load_scorer_module("scratch_5p")  # a wrong name lists the shipped ones
    with pytest.raises(ValueError, match=r"not a MaskablePPO model.*load_scorer_module"):
        load_maskable("scratch_4p")
    with pytest.raises(TypeError, match="shipped player's name"):
        load_policy(4)  # type: ignore[arg-type]


def test_the_shipped_network_example_runs(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "shipped_network.py"
    done = subprocess.run(
        [sys.executable, str(example), "8"], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "decisions of the network" in done.stdout
    assert "points a deal (lower is better): scratch" in done.stdout


# --- an SB3 VecEnv over the batched games -----------------------------------------------------------

sb3_contrib = pytest.importorskip("sb3_contrib")

from shanghai_env.agents.registry import make_agent  # noqa: E402
from shanghai_env.gym_vector import SingleAgentVectorEnv  # noqa: E402
from shanghai_env.observation import ObservationEncoder  # noqa: E402
from shanghai_env.sb3_vec_env import SB3VectorEnv  # noqa: E402


def random_bots(n: int) -> list:
    return [lambda: make_agent("random")] * n


def test_the_sb3_view_is_the_gymnasium_views_games_with_sb3s_auto_reset():
    sb3 = SB3VectorEnv(4, opponents=random_bots(2), num_players=3, contracts=(1,))
    gym = SingleAgentVectorEnv(4, opponents=random_bots(2), num_players=3, contracts=(1,))
    assert sb3.seed(7) == [7, 8, 9, 10]  # SB3's seeding: env i gets seed + i
    obs, (gym_obs, _) = sb3.reset(), gym.reset(seed=[7, 8, 9, 10])
    assert np.array_equal(obs, gym_obs)
    scores = ObservationEncoder(sb3.games.rules).slices["scores"]
    rng, ends = np.random.default_rng(0), 0
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in sb3.action_masks()])
        sb3.step_async(actions)
        obs, rewards, dones, infos = sb3.step_wait()
        gym_obs, gym_rewards, terminated, truncated, _ = gym.step(actions)
        assert np.array_equal(obs, gym_obs) and np.array_equal(rewards, gym_rewards)
        assert np.array_equal(dones, terminated) and not truncated.any()
        assert rewards.dtype == np.float32 and dones.dtype == bool
        for i in range(4):
            if not dones[i]:
                assert infos[i] == {}
                continue
            ends += 1
            info = infos[i]
            assert info["TimeLimit.truncated"] is False and info["episode"]["l"] > 0
            final = info["final_scores"]
            # the finished game's last state, seen by the learner: its totals, not the new game's
            assert info["terminal_observation"][scores].tolist() == [(v + 5) // 10 for v in final]
            assert not obs[i][scores].any()
    assert ends >= 8


def test_maskable_ppo_learns_on_the_batched_games():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = SB3VectorEnv(8, opponents=random_bots(2), num_players=3, contracts=(1,), reward="relative")
    env.seed(0)
    env.reset()
    assert get_action_masks(env).shape == (8, env.games.num_actions)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256, n_epochs=1, seed=0)
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.learn(2048)
    assert model.num_timesteps == 2048
    assert len(model.ep_info_buffer) > 0  # the games' "episode" infos reached SB3's logger
    changed = [k for k, v in model.policy.state_dict().items() if not torch.equal(v, before[k])]
    assert changed
    # what players/sb3.py's docstring says one's own code reads: log-probabilities, legal only
    obs_t = model.policy.obs_to_tensor(env.games.obs)[0]
    dist = model.policy.get_distribution(obs_t, action_masks=env.action_masks())
    probs = dist.distribution.logits.exp()
    illegal = ~torch.from_numpy(env.action_masks())
    assert torch.allclose(probs.sum(1), torch.ones(8)) and not probs[illegal].any()


def test_the_sb3_view_refuses_bad_arguments():
    env = SB3VectorEnv(3, opponents=random_bots(2), num_players=3, contracts=(1,))
    assert env.seed([1, None, 3])[::2] == [1, 3]
    with pytest.raises(ValueError, match="one seed per env"):
        env.seed([1, 2])
    with pytest.raises(ValueError, match=r"seed\[1\]"):
        env.seed([1, -2, 3])
    with pytest.raises(ValueError, match="indices"):
        env.get_attr("num_envs", indices=[5])
    with pytest.raises(ValueError, match="one object"):
        env.set_attr("render_mode", None, indices=[0])
    with pytest.raises(AttributeError):
        env.get_attr("no_such_attribute")
    env.set_options({"deck": ["2C"]})
    with pytest.raises(ValueError, match="not supported"):
        env.reset()
    with pytest.raises(RuntimeError, match="step_async"):
        env.step_wait()
    with pytest.raises(ValueError, match="every other seat"):
        SB3VectorEnv(2, opponents=[None, None], num_players=3)
    with pytest.raises(TypeError, match=r"potential must be None or a function potential\(game, seat\)"):
        SB3VectorEnv(2, opponents=random_bots(2), num_players=3, potential=0.5)
    with pytest.raises(ValueError, match="gamma"):
        SB3VectorEnv(2, opponents=random_bots(2), num_players=3, potential=lambda game, seat: 0.0, gamma=2.0)
    assert env.get_attr("num_envs", indices=1) == [3] and env.env_is_wrapped(object) == [False] * 3
