"""Ray RLlib: the multi-agent env (shanghai_env/rllib_env.py), the exported policy, a tiny self-play run.

Skipped where Ray RLlib is not installed (``pip install -e '.[rllib,train]'``).
"""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="Ray RLlib is not installed: pip install -e '.[rllib,train]'")
pytest.importorskip("sb3_contrib", reason="exporting a policy needs sb3-contrib: pip install -e '.[train]'")

import torch
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from shanghai_env.actions import action_table
from shanghai_env.agents.arena.tournament import TournamentConfig, forget_agents, run_tournament
from shanghai_env.agents.learned.train import cli
from shanghai_env.agents.learned.train.methods.rllib import (
    env_opponents,
    export_policy,
    module_spec,
    policy_mapping_fn,
)
from shanghai_env.agents.learned.train.run import Run, RunConfig
from shanghai_env.agents.registry import make_agent
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rllib_env import LEARNER, ShanghaiMultiAgentEnv, role_of
from shanghai_env.rules import Rules


def play(env: ShanghaiMultiAgentEnv, seed: int, policy_seed: int = 0) -> dict:
    """One episode with uniformly random legal actions; checks every step's shape on the way."""
    rng = np.random.default_rng(policy_seed)
    obs, infos = env.reset(seed=seed)
    returns: dict[str, float] = {}
    actors: list[str] = []
    while True:
        assert len(obs) == 1  # one agent acts at a time
        ((name, o),) = obs.items()
        assert env.observation_spaces[name].contains(o)
        assert o["action_mask"].any()
        actors.append(name)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terms, truncs, infos = env.step({name: action})
        assert set(rewards) == set(obs) == set(infos)
        for k, r in rewards.items():
            returns[k] = returns.get(k, 0.0) + r
        if terms["__all__"] or truncs["__all__"]:
            assert set(obs) == set(actors)  # a last observation for every agent that played
            assert all(not o["action_mask"].any() for o in obs.values())
            return {"returns": returns, "actors": actors, "infos": infos, "terms": terms, "truncs": truncs}
        assert not any(v for k, v in terms.items() if k != "__all__")


def test_spaces_are_what_the_masking_module_reads() -> None:
    env = ShanghaiMultiAgentEnv({"num_players": 4, "contracts": (1,)})
    rules = Rules(num_players=4, contracts=(1,))
    size, length = action_table(rules).size, ObservationEncoder(rules).size
    assert env.possible_agents == [LEARNER, "self_1", "self_2", "self_3"]
    space = env.observation_spaces[LEARNER]
    assert set(space.spaces) == {"observations", "action_mask"}
    assert space["observations"].dtype == np.float32 and space["observations"].shape == (length,)
    assert space["action_mask"].dtype == np.float32 and space["action_mask"].shape == (size,)
    assert float(space["action_mask"].low.min()) == 0.0 and float(space["action_mask"].high.max()) == 1.0
    assert env.action_spaces[LEARNER].n == size
    check_multiagent_environments(env)  # RLlib's own checker (it steps a random, usually illegal, action)


def test_self_play_episode_rewards_add_up_to_the_scores() -> None:
    env = ShanghaiMultiAgentEnv({"num_players": 4, "contracts": (1, 2)})
    episode = play(env, seed=5)
    assert episode["terms"]["__all__"] and not episode["truncs"]["__all__"]
    assert set(episode["returns"]) == {LEARNER, "self_1", "self_2", "self_3"}
    for name, info in episode["infos"].items():
        assert episode["returns"][name] == pytest.approx(-info["score"] / 100)
        _, k = role_of(name)
        assert info["seat"] == (env.learner_seat + k) % 4
    again = play(ShanghaiMultiAgentEnv({"num_players": 4, "contracts": (1, 2)}), seed=5)
    assert again["actors"] == episode["actors"] and again["returns"] == episode["returns"]


def test_bots_play_inside_the_env() -> None:
    bots = [lambda: make_agent("greedy"), lambda: make_agent("random")]
    env = ShanghaiMultiAgentEnv({"num_players": 3, "opponents": bots})
    assert env.possible_agents == [LEARNER]
    episode = play(env, seed=1)
    assert set(episode["actors"]) == {LEARNER}
    info = episode["infos"][LEARNER]
    assert episode["returns"][LEARNER] == pytest.approx(-info["score"] / 100)


def test_mixed_table_and_the_mapping_to_modules() -> None:
    opponents = env_opponents(["self", "snapshot", "greedy"])
    env = ShanghaiMultiAgentEnv({"num_players": 4, "opponents": opponents})
    seen: set[str] = set()
    for seed in range(6):
        seen |= set(play(env, seed=seed)["actors"])
    assert LEARNER in seen and any(a.startswith("snapshot_") for a in seen)

    class Episode:
        id_ = "abc"

    assert policy_mapping_fn(LEARNER, Episode(), pool_size=3) == LEARNER
    assert policy_mapping_fn("self_2", Episode(), pool_size=3) == LEARNER
    picked = {policy_mapping_fn(f"snapshot_{k}", Episode(), pool_size=3) for k in (1, 2, 3)}
    assert picked <= {"snapshot_0", "snapshot_1", "snapshot_2"}
    assert policy_mapping_fn("snapshot_1", Episode(), pool_size=3) == policy_mapping_fn(
        "snapshot_1", Episode(), pool_size=3
    )


def test_an_illegal_action_ends_the_episode() -> None:
    env = ShanghaiMultiAgentEnv({"num_players": 3})
    obs, _ = env.reset(seed=0)
    ((name, o),) = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    _, rewards, terms, _, infos = env.step({name: illegal})
    assert terms["__all__"] and rewards[name] == -1.0 and infos[name]["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step({name: 0})


def test_an_illegal_action_pays_every_reward_earned_as_the_aec_env_does() -> None:
    # a deal has just ended: the actor has its reward, every other agent's waits for its next
    # observation; the illegal action ends the game and hands those out (the AEC env's env()
    # does so), rather than dropping them
    env = ShanghaiMultiAgentEnv({"num_players": 4, "contracts": (1, 2)})
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=5)
    returns: dict[str, float] = {}
    while not env.raw.game.deal_results:
        ((name, o),) = obs.items()
        obs, rewards, _, _, _ = env.step({name: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        for k, r in rewards.items():
            returns[k] = returns.get(k, 0.0) + r
    ((name, o),) = obs.items()
    deal = env.raw.game.deal_results[0].scores
    assert any(deal[(env.learner_seat + role_of(k)[1]) % 4] for k in returns if k != name)
    _, rewards, terms, truncs, infos = env.step({name: int(np.flatnonzero(o["action_mask"] == 0)[0])})
    assert terms["__all__"] and not truncs["__all__"] and set(rewards) == set(returns)
    for k, r in rewards.items():
        returns[k] = returns.get(k, 0.0) + r
        seat = (env.learner_seat + role_of(k)[1]) % 4
        assert returns[k] == pytest.approx(-deal[seat] / 100 - (k == name))
        assert infos[k]["illegal_action"] == (k == name) and infos[k]["score"] == deal[seat]
    obs, _ = env.reset(seed=6)  # the next episode plays as usual
    ((name, o),) = obs.items()
    _, _, terms, _, _ = env.step({name: int(np.flatnonzero(o["action_mask"])[0])})
    assert not terms["__all__"]


def test_an_action_outside_the_table_is_refused_and_changes_nothing() -> None:
    env = ShanghaiMultiAgentEnv({"num_players": 3})
    obs, _ = env.reset(seed=0)
    ((name, o),) = obs.items()
    for bad in (o["action_mask"].size, -1):
        with pytest.raises(ValueError, match="out of range"):
            env.step({name: bad})
    assert env.raw.num_steps == 0
    _, _, terms, _, _ = env.step({name: int(np.flatnonzero(o["action_mask"])[0])})
    assert not terms["__all__"] and env.raw.num_steps >= 1


class _Cheat:
    """A bot that answers with a move it may not play (the first action its mask forbids)."""

    name = "cheat"

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, decision) -> int:
        return int(np.flatnonzero(decision.action_mask == 0)[0])


def test_a_bot_answer_is_checked_naming_the_bot() -> None:
    env = ShanghaiMultiAgentEnv({"num_players": 3, "opponents": [_Cheat]})
    for seed in range(10):  # a seed where a bot acts before the learner
        try:
            env.reset(seed=seed)
        except ValueError as err:
            assert "agent 'cheat' in seat" in str(err) and "illegal action" in str(err)
            assert env.raw.num_steps == 0  # refused before anything was played
            break
    else:
        pytest.fail("no seed seated a bot first")


def test_bad_env_config_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown env_config"):
        ShanghaiMultiAgentEnv({"players": 4})
    with pytest.raises(ValueError, match=r"'greedy'.*lambda: make_agent\('greedy'\)"):
        ShanghaiMultiAgentEnv({"opponents": ["greedy"]})  # a bot is a factory, not its name
    with pytest.raises(TypeError, match="factory of a bot"):
        ShanghaiMultiAgentEnv({"opponents": ["self", 3]})
    with pytest.raises(ValueError, match="one or more"):
        ShanghaiMultiAgentEnv({"opponents": "self"})
    with pytest.raises(ValueError, match="unknown player"):
        env_opponents(["self", "nobody"])
    with pytest.raises(TypeError, match="max_moves_per_deal"):
        ShanghaiMultiAgentEnv({"max_moves_per_deal": 2.5})


def test_the_exported_policy_is_the_module(tmp_path) -> None:
    rules = Rules(num_players=3, contracts=(1,))
    module = module_spec(rules, (24, 16)).build()
    with torch.no_grad():  # move off the initialisation, so a wrong copy cannot go unnoticed
        for p in module.parameters():
            p.add_(0.05 * torch.randn_like(p))
    path = export_policy(rules, (24, 16), module.get_state(), str(tmp_path / "policy.zip"))
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, device="cpu")
    env = ShanghaiMultiAgentEnv({"num_players": 3})
    obs, _ = env.reset(seed=2)
    for _ in range(40):
        ((name, o),) = obs.items()

        def batch(o=o):  # the module takes the mask out of the dict it is given: a fresh one each time
            return {"obs": {k: torch.as_tensor(v[None]) for k, v in o.items()}}

        with torch.no_grad():
            logits = module.forward_inference(batch())["action_dist_inputs"][0].numpy()
            values = module.compute_values(batch())
        x = model.policy.obs_to_tensor(o["observations"].astype(np.int8))[0]
        with torch.no_grad():
            sb3_logits = model.policy.get_distribution(x).distribution.logits[0].numpy()
            sb3_value = model.policy.predict_values(x)
        legal = np.flatnonzero(o["action_mask"])
        ours = torch.log_softmax(torch.as_tensor(logits[legal]), 0).numpy()
        theirs = torch.log_softmax(torch.as_tensor(sb3_logits[legal]), 0).numpy()
        np.testing.assert_allclose(ours, theirs, atol=1e-5)
        assert float(values.reshape(-1)[0]) == pytest.approx(float(sb3_value.reshape(-1)[0]), abs=1e-5)
        action, _ = model.predict(
            o["observations"].astype(np.int8), action_masks=o["action_mask"].astype(bool), deterministic=True
        )
        assert int(action) == int(legal[np.argmax(ours)])
        obs, _, terms, truncs, _ = env.step({name: int(action)})
        if terms["__all__"] or truncs["__all__"]:
            obs, _ = env.reset(seed=3)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--timesteps", "0"], "--timesteps"),
        (["--num-env-runners", "-1"], "--num-env-runners"),
        (["--players", "9"], "--players"),
        (["--contracts", "11"], "--contracts"),
        (["--opponents", "self,nobody"], "--opponents"),
        (["--eval-opponents", "snapshot"], "--eval-opponents"),
        (["--eval-opponents", "greedy,nobody"], "--eval-opponents"),  # before anything starts
        (["--seed", "x"], "--seed"),
        (["--train-batch", "100", "--minibatch", "200"], "--minibatch"),
        (["--reward", "relative"], "--reward"),  # the RLlib env pays the deal score
        (["--facts"], "--facts"),
        (["--encoding", "any_table"], "--encoding"),
        (["--address", "no-port-here"], "--address"),
        (["--address", "127.0.0.1:1"], "--address"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["rllib", *argv, "--out", str(tmp_path / "run")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()  # shanghai-train's style: the usage, then one line
    assert message in err.splitlines()[-1] and "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing was written


def test_snapshot_opponents_are_rllibs_only(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["ppo", "--opponents", "snapshot", "--out", str(tmp_path / "run")])
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--opponents" in last and "rllib" in last


def _rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_tiny_self_play_run_checkpoints_resumes_and_plays_in_a_tournament(tmp_path) -> None:
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm

    out = tmp_path / "run"
    argv = [
        "rllib",
        "--players", "3",
        "--contracts", "1",
        "--opponents", "self,snapshot,random",
        "--pool-size", "2",
        "--snapshot-every", "1",
        "--train-batch", "200",
        "--minibatch", "100",
        "--epochs", "1",
        "--net-arch", "32,32",
        "--eval-every", "100000",
        "--eval-games", "3",
        "--eval-opponents", "random",
        "--checkpoint-every", "1",
        "--seed", "3",
        "--out", str(out),
        "--no-progress",
    ]  # fmt: skip
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        assert cli.main([*argv, "--timesteps", "150"]) == 0
        Run(RunConfig(out=str(out))).close()  # the run let go of its folder (ValueError "in use" if not)
        for name in ("model.zip", "model.json", "progress.csv", "eval.csv", "config.json", "checkpoint.pt"):
            assert (out / name).is_file(), name
        assert (out / "curve.png").read_bytes().startswith(b"\x89PNG")  # the learning curve, from eval.csv
        first = _rows(out / "progress.csv")
        steps = int(first[-1]["env_steps"])
        assert steps >= 150 and [r["iteration"] for r in first] == [str(i + 1) for i in range(len(first))]
        rows = _rows(out / "eval.csv")
        assert [r["env_steps"] for r in rows] == ["0", str(steps)]
        assert {"random_diff", "random_low", "random_high", "random_score"} <= set(rows[0])  # as the loop
        recipe = json.loads((out / "model.json").read_text())
        assert recipe["player"] == "model.zip" and recipe["env_steps"] == steps
        assert recipe["evaluation"]["games"] == 6  # one round of seat orders
        assert os.listdir(out / "rllib") == [str(steps)]  # RLlib's checkpoint the run's names
        # RLlib's checkpoint restores in code of one's own too ...
        algo = Algorithm.from_checkpoint(str(out / "rllib" / str(steps)))
        try:
            assert algo.iteration == len(first)
        finally:
            algo.stop()
        # ... and the same command with a larger --timesteps goes on from the run's checkpoint
        assert cli.main([*argv, "--timesteps", str(steps + 1)]) == 0
        rows = _rows(out / "progress.csv")
        assert rows[: len(first)] == first and len(rows) == len(first) + 1
        assert rows[-1]["iteration"] == str(len(first) + 1) and int(rows[-1]["env_steps"]) > steps
        assert [r["env_steps"] for r in _rows(out / "eval.csv")][:2] == ["0", str(steps)]
        assert os.listdir(out / "rllib") == [rows[-1]["env_steps"]]
    finally:
        ray.shutdown()
    # ... and the exported learner is a player like any bot, through the tournament code
    players = (str(out / "model.zip"), "greedy", "random")
    config = TournamentConfig(players=players, games=3, seed=0, contracts=(1,))
    results = run_tournament(config, workers=1)
    forget_agents(players)
    assert len(results) == 6 and all(len(r.scores) == 3 for r in results)  # one round of seat orders
