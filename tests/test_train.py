"""Training end to end: a tiny MaskablePPO run saves a model that the tournament code plays; one seed,
one result."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from shanghai_env.agents.learned.training import OpponentSampler, TrainConfig, train

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str) -> Any:
    """The module a root script (train.py, evaluate.py) runs."""
    return importlib.import_module(
        {
            "train": "shanghai_env.agents.learned.train_cli",
            "evaluate": "shanghai_env.agents.arena.evaluate_cli",
        }[name]
    )


def _tiny(out: Path, **overrides: Any) -> TrainConfig:
    kwargs: dict[str, Any] = {
        "timesteps": 128,
        "n_envs": 2,
        "vec_env": "dummy",
        "n_steps": 32,
        "batch_size": 32,
        "n_epochs": 2,
        "net_arch": (32,),
        "eval_every": 10**9,
        "eval_games": 4,
        "snapshot_every": 64,
        "checkpoint_every": 10**9,
        "progress": False,
        "seed": 3,
        "out": str(out),
    }
    kwargs.update(overrides)
    return TrainConfig(**kwargs)


def test_tiny_training_run_saves_a_model_that_evaluate_plays(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train_py = _script("train")
    train_py.main(
        [
            "--timesteps", "128", "--n-envs", "2", "--vec-env", "dummy", "--n-steps", "32",
            "--batch-size", "32", "--n-epochs", "1", "--net-arch", "32", "--opponents", "greedy,self",
            "--eval-every", "64", "--eval-games", "4", "--snapshot-every", "64", "--pool-size", "2",
            "--out", str(out), "--no-progress", "--seed", "1",
        ]
    )  # fmt: skip
    meta = json.loads((out / "model.json").read_text())
    assert meta["config"]["opponents"] == ["greedy", "self"] and meta["timesteps"] >= 128
    assert meta["final_eval"]["greedy_win_rate"] >= 0
    assert (out / "eval.csv").read_text().count("\n") >= 3  # header + evaluations at 0, 64, 128
    assert (out / "learning_curve.png").stat().st_size > 0
    assert len(list((out / "pool").glob("*.zip"))) >= 2 and (out / "best_model.zip").exists()

    evaluate = _script("evaluate")
    model = str(out / "model.zip")
    summary = evaluate.main(
        ["--players", f"{model},greedy,greedy,greedy", "--contracts", "1", "--games", "4",
         "--workers", "1", "--out", str(tmp_path / "eval"), "--no-progress", "--quiet"]
    )  # fmt: skip
    # 4 games round up to one round of seat orders (24); illegal actions would raise
    assert summary.players[0].name == "model" and summary.games == 24


def _parameters(path: Path) -> dict[str, np.ndarray]:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(path), device="cpu")
    return {k: v.detach().numpy().copy() for k, v in model.policy.state_dict().items()}


def test_same_seed_same_first_updates(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        train(_tiny(tmp_path / name, opponents=("random", "self"), timesteps=64))
        runs.append(_parameters(tmp_path / name / "model.zip"))
    a, b = runs
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    fresh = _parameters(tmp_path / "a" / "pool" / "step_0.zip")
    assert any(not np.array_equal(fresh[k], a[k]) for k in a)  # the updates changed something


def test_opponent_sampler_draws_from_names_and_pool() -> None:
    rng = np.random.default_rng(0)
    sampler = OpponentSampler(("greedy", "random"), (), 3)
    names = {a.name for _ in range(10) for a in sampler(rng)}
    assert names == {"greedy", "random"}
    with pytest.raises(ValueError, match="snapshot"):
        OpponentSampler(("self",), (), 3)(rng)


def test_dagger_rounds_label_the_clones_own_states(tmp_path: Path) -> None:
    from shanghai_env.agents.learned.imitation import collect
    from shanghai_env.single_agent import SingleAgentEnv

    env = SingleAgentEnv(num_players=4, contracts=(1,))
    # a driver that always plays the first legal action: the teacher still labels every state
    first = collect(env, "greedy", 60, 0.99, seed=0, driver=lambda obs, mask: int(mask.nonzero()[0][0]))
    again = collect(env, "greedy", 60, 0.99, seed=0, driver=lambda obs, mask: int(mask.nonzero()[0][0]))
    assert len(first) >= 60 and (first.actions == again.actions).all()
    assert all(first.masks[i, a] for i, a in enumerate(first.actions))  # labels are legal actions
    both = first + again
    assert len(both) == 2 * len(first)
    config = _tiny(
        tmp_path / "dagger", pretrain="greedy", pretrain_steps=80, pretrain_epochs=3, dagger_rounds=1
    )
    model = train(config)
    assert (tmp_path / "dagger" / "model.zip").exists() and model is not None


def test_teacher_decisions_come_in_seeded_shards_one_per_worker(tmp_path: Path) -> None:
    from shanghai_env.agents.learned.training import _collect_demos

    config = _tiny(tmp_path, pretrain="greedy", opponents=("greedy",))
    demos = _collect_demos(config, 60, seed=5)  # two worker processes, 30 decisions each at least
    again = _collect_demos(config, 60, seed=5)
    other = _collect_demos(config, 60, seed=6)
    assert len(demos) >= 60 and len(demos) == len(again)
    assert (demos.actions == again.actions).all() and (demos.obs == again.obs).all()
    assert len(other) != len(demos) or (other.obs != demos.obs).any()
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))


def test_clone_only_then_fine_tune_from_the_saved_model(tmp_path: Path) -> None:
    config = _tiny(tmp_path / "clone", timesteps=0, pretrain="greedy", pretrain_steps=60, pretrain_epochs=1)
    clone = train(config)
    assert clone.num_timesteps == 0 and (tmp_path / "clone" / "model.zip").exists()
    init = str(tmp_path / "clone" / "model.zip")
    tuned = train(_tiny(tmp_path / "tuned", init=init, learning_rate=1e-5, n_steps=16, batch_size=16))
    assert tuned.num_timesteps >= 128 and tuned.n_steps == 16 and tuned.learning_rate == 1e-5
    before, after = _parameters(Path(init)), _parameters(tmp_path / "tuned" / "model.zip")
    assert before.keys() == after.keys() and any(not np.array_equal(before[k], after[k]) for k in before)
    with pytest.raises(ValueError, match="another table"):
        train(_tiny(tmp_path / "other", init=init, num_players=3))
    with pytest.raises(ValueError, match="not both"):
        _tiny(tmp_path / "both", init=init, pretrain="greedy")


def test_cloning_fits_the_teachers_decisions(tmp_path: Path) -> None:
    from shanghai_env.agents.learned.imitation import collect, pretrain
    from shanghai_env.agents.learned.training import build_model, env_factory

    config = _tiny(tmp_path / "fit", net_arch=(64,))
    env = env_factory(config)()
    demos = collect(env, "greedy", 300, config.gamma, seed=1)
    model = build_model(config, env)
    history = pretrain(model, demos, epochs=25, batch_size=64, seed=0, learning_rate=3e-3)
    assert history[-1]["policy_loss"] < 0.5 * history[0]["policy_loss"]
    assert history[-1]["accuracy"] > 0.9  # it reproduces the teacher on the decisions it saw
    pairs = zip(demos.obs, demos.masks)
    played = [int(model.predict(o, action_masks=m, deterministic=True)[0]) for o, m in pairs]
    assert np.mean(np.asarray(played) == demos.actions) > 0.9


@pytest.mark.parametrize("features", ["rummy", "cards"])
def test_build_model_uses_the_chosen_features(tmp_path: Path, features: str) -> None:
    from shanghai_env.agents.learned.features import CardFeatures, RummyFeatures
    from shanghai_env.agents.learned.training import build_model, env_factory

    config = _tiny(tmp_path / features, features=features)
    env = env_factory(config)()
    model = build_model(config, env)
    expected = RummyFeatures if features == "rummy" else CardFeatures
    assert isinstance(model.policy.features_extractor, expected)
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    assert mask[int(model.predict(obs, action_masks=mask, deterministic=True)[0])]
    with pytest.raises(ValueError, match="features must be one of"):
        _tiny(tmp_path / "bad", features="pixels")
