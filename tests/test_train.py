"""``shanghai-train sb3``: MaskablePPO on the batched games, through the loop's shared parts (run
folder, checkpoints and resume, the evaluation shanghai-evaluate's statistic, the curve); its
player is a MaskablePPO .zip that every command plays; one seed, one result; self-play opponents
deciding all games in one forward pass; shaping."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shanghai_env

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from shanghai_env.agents.learned.players.sb3 import ModelAgent, legal_modes, policy_modes  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.learned.train.methods.sb3 import DistancePotential  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import check_player, make_agent  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402
from shanghai_env.sb3_vec_env import SB3VectorEnv  # noqa: E402

TINY = {"n_steps": 32, "batch_size": 64, "epochs": 1, "net_arch": (16,)}


def tiny(out: Path, timesteps: int = 256, **kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        method="sb3",
        contracts=(1,),
        timesteps=timesteps,
        seed=3,
        out=str(out),
        num_envs=4,
        opponents=("greedy",),
        eval_every=0,
        eval_games=0,
        checkpoint_every=128,
        progress=False,
        method_options=dict(TINY),
    )
    base.update(kw)
    return RunConfig(**base)


def weights(path: str | Path) -> dict[str, Any]:
    return {k: v.clone() for k, v in ModelAgent(str(path)).load().policy.state_dict().items()}


def test_a_few_thousand_steps_on_contract_1_through_the_command(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["sb3", "--contracts", "1", "--opponents", "greedy", "--timesteps", "2048", "--num-envs", "4",
            "--n-steps", "128", "--batch-size", "128", "--epochs", "2", "--net-arch", "32",
            "--eval-every", "1024", "--eval-games", "4", "--eval-opponents", "greedy",
            "--out", str(out), "--no-progress"]  # fmt: skip
    assert cli.main(argv) == 0
    for name in ("config.json", "checkpoint.pt", "progress.csv", "eval.csv", "curve.png", "model.json"):
        assert (out / name).is_file(), name
    player = out / "model.zip"
    assert not (out / "model.pt").exists()
    with open(out / "progress.csv", newline="", encoding="utf-8") as f:
        progress = list(csv.DictReader(f))
    assert [int(r["env_steps"]) for r in progress] == [512, 1024, 1536, 2048]
    assert all(r["value_loss"] and r["entropy_loss"] for r in progress)
    with open(out / "eval.csv", newline="", encoding="utf-8") as f:
        evals = list(csv.DictReader(f))
    # the loop's figures: the learner's game score minus each bot seat's, with its interval
    # (shanghai-evaluate's pairs: greedy, greedy#2, greedy#3), and the rounds they are over
    assert [int(r["env_steps"]) for r in evals] == [0, 1024, 2048]
    assert {"greedy_diff", "greedy_low", "greedy_high", "greedy_score", "rounds"} <= set(evals[0])
    assert {"greedy#2_diff", "greedy#3_high"} <= set(evals[0])
    recipe = json.loads((out / "model.json").read_text(encoding="utf-8"))
    assert recipe["player"] == "model.zip" and recipe["method"] == "sb3"
    assert recipe["evaluation"]["env_steps"] == 2048
    rules = Rules(num_players=4, contracts=(1,))
    assert check_player(str(player), rules) == str(player)
    assert isinstance(make_agent(str(player)), ModelAgent)


def test_one_seed_one_result_and_the_updates_change_the_network(tmp_path: Path) -> None:
    train(tiny(tmp_path / "a"))
    train(tiny(tmp_path / "b"))
    train(tiny(tmp_path / "c", timesteps=128))  # one update
    a, b, c = (weights(tmp_path / n / "model.zip") for n in "abc")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a)


def test_the_rummy_rollout_buffer_trains_as_sb3_contrib_s_buffer(tmp_path: Path) -> None:
    """RummyRolloutBuffer (bool masks, a rollout's legal actions and features found once) gives
    the weights sb3-contrib's MaskableRolloutBuffer gives, to the bit; a loaded player keeps it."""
    from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

    from shanghai_env.agents.learned.nets.sb3_policy import RummyRolloutBuffer
    from shanghai_env.agents.learned.players.sb3 import load_maskable
    from shanghai_env.agents.learned.train.methods.sb3 import SB3Options, build_model

    rules = Rules(num_players=4, contracts=(1,))
    options = SB3Options(n_steps=32, batch_size=64, epochs=2, net_arch=(16,))
    trained = []
    for buffer in (RummyRolloutBuffer, MaskableRolloutBuffer):
        env = SB3VectorEnv(4, opponents=[lambda: make_agent("greedy")] * 3, num_players=4, contracts=(1,))
        env.seed(5)
        model = build_model(rules, options, env, seed=5)
        assert isinstance(model.rollout_buffer, RummyRolloutBuffer)
        if buffer is MaskableRolloutBuffer:  # the same model, sb3-contrib's buffer
            model.rollout_buffer = buffer(32, env.observation_space, env.action_space, model.device, n_envs=4,
                                          gamma=model.gamma, gae_lambda=model.gae_lambda)  # fmt: skip
        model.learn(256)
        trained.append(model)
    ours, theirs = (m.policy.state_dict() for m in trained)
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    trained[0].save(tmp_path / "player.zip")  # the buffer's class and arguments are saved with it
    assert isinstance(load_maskable(str(tmp_path / "player.zip")).rollout_buffer, RummyRolloutBuffer)


def test_the_buffer_keeps_the_features_its_policy_found_acting(tmp_path: Path) -> None:
    """shanghai-train sb3 gives the rollout buffer the policy that acts, whose features and legal
    actions of each step it keeps for the update: the weights of finding them again, to the bit."""
    trained = []
    for keep in (True, False):
        method = method_class("sb3")()
        method.setup(tiny(tmp_path / str(keep), opponents=("self",)), torch.device("cpu"))
        buffer = method.model.rollout_buffer
        assert buffer.acting is method.model.policy
        if not keep:
            buffer.acting = None
        for _ in range(2):
            method.step()
            assert all(f is not None for f in buffer.acted + buffer.acted_legal) == keep
        trained.append({k: v.clone() for k, v in method.model.policy.state_dict().items()})
    assert all(torch.equal(trained[0][k], trained[1][k]) for k in trained[0])


def test_a_stopped_run_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(tiny(out, timesteps=128))
    first = weights(out / "model.zip")
    method = method_class("sb3")()
    method.setup(tiny(out, timesteps=256), torch.device("cpu"))
    method.load_state_dict(torch.load(out / "checkpoint.pt", weights_only=True)["method"])  # plain values
    loaded = {k: v.clone() for k, v in method.model.policy.state_dict().items()}
    assert all(torch.equal(first[k], loaded[k]) for k in first)  # the checkpoint's network
    train(tiny(out, timesteps=256))
    with open(out / "progress.csv", newline="", encoding="utf-8") as f:
        assert [int(r["env_steps"]) for r in csv.DictReader(f)] == [128, 256]
    assert any(not torch.equal(first[k], v) for k, v in weights(out / "model.zip").items())


def test_self_play_and_init_from_a_saved_player(tmp_path: Path) -> None:
    train(tiny(tmp_path / "self", timesteps=128, opponents=("self",)))
    start = str(tmp_path / "self" / "model.zip")
    options = {**TINY, "lr": 1e-5, "net_arch": (8,)}  # the file's widths win over net_arch
    method = method_class("sb3")()
    method.setup(tiny(tmp_path / "on", init=start, method_options=options), torch.device("cpu"))
    assert method.model.learning_rate == 1e-5 and method.model.n_steps == 32
    before = weights(start)
    assert all(torch.equal(before[k], v) for k, v in method.model.policy.state_dict().items())
    with pytest.raises(ValueError, match="it plays 4 players, contracts 1"):
        method_class("sb3")().setup(tiny(tmp_path / "3p", init=start, players=3), torch.device("cpu"))


def random_bots(count: int) -> list[Any]:
    return [lambda: make_agent("random")] * count


def test_shaping_adds_the_potential_s_differences_and_telescopes() -> None:
    """``potential``: with gamma 1 the shaping a game pays adds up to minus its start's potential
    (potential-based shaping, as the single-agent env's); the rest is the unshaped reward."""
    coef = 0.25
    plain = SB3VectorEnv(3, opponents=random_bots(2), num_players=3, contracts=(1,), reward="relative")
    shaped = SB3VectorEnv(
        3, opponents=random_bots(2), num_players=3, contracts=(1,), reward="relative",
        potential=DistancePotential(coef), gamma=1.0,
    )  # fmt: skip
    plain.seed(5)
    shaped.seed(5)
    plain.reset()
    shaped.reset()
    starts = [DistancePotential(coef)(game, 0) for game in shaped.games.games]
    assert all(s < 0 for s in starts)
    paid = np.zeros(3)
    rng = np.random.default_rng(0)
    first_game = np.ones(3, bool)
    for _ in range(20_000):  # random players: a deal may take a few thousand moves
        if not first_game.any():
            break
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in plain.action_masks()])
        assert np.array_equal(plain.action_masks(), shaped.action_masks())  # the same games
        plain.step_async(actions)
        shaped.step_async(actions)
        _, r_plain, done, _ = plain.step_wait()
        _, r_shaped, _, _ = shaped.step_wait()
        paid += np.where(first_game, r_shaped.astype(float) - r_plain, 0.0)
        first_game &= ~done
    assert not first_game.any()  # every first game ended
    assert paid == pytest.approx(-np.array(starts), abs=1e-3)


def test_the_self_play_seats_take_the_policy_s_most_probable_legal_move(tmp_path: Path) -> None:
    """The other seats' choice from the legal actions' logits alone is the masked mode of the
    whole action head (what ``predict(deterministic=True)`` gives)."""
    method = method_class("sb3")()
    method.setup(tiny(tmp_path / "run", opponents=("self",)), torch.device("cpu"))
    venv = shanghai_env.vector_env(32, num_players=4, contracts=(1,))
    venv.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(5):  # past the first draws: discards and melds too
        venv.step([ids[rng.integers(len(ids))] for ids in venv.legal_actions])
    policy = method.model.policy
    chosen = legal_modes(policy, venv.obs, venv.legal_actions)
    assert chosen == policy_modes(policy, venv.obs, venv.mask.astype(bool))
    assert all(a in ids for a, ids in zip(chosen, venv.legal_actions))


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--facts"], "--facts"),
        (["--env-workers", "2"], "--env-workers"),
        (["--init", "scratch_contract1"], "--init"),  # a network of the loop, not MaskablePPO
        (["--init", "shanghai_4p"], "goes on from a MaskablePPO player"),
        (["--batch-size", "0"], "--batch-size"),
        (["--shaping", "-1"], "--shaping"),
        (["--vector-env"], "unrecognized arguments: --vector-env"),  # one route: the batched games
    ],
)
def test_what_sb3_cannot_do_is_one_line_and_exit_2(tmp_path, argv, needle, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["sb3", "--contracts", "1", "--out", str(tmp_path / "run"), "--no-progress", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and "Traceback" not in "\n".join(err)
    assert not os.path.exists(tmp_path / "run" / "checkpoint.pt")


@pytest.mark.parametrize(
    ("opponents", "options"), [(("self",), {}), (("greedy",), {}), (("self",), {"shaping": 0.5})]
)
def test_the_batched_games_train_through_the_loop(
    tmp_path: Path, opponents: tuple[str, ...], options: dict[str, Any]
) -> None:
    """MaskablePPO on SB3VectorEnv (the games stepped together), the loop's files and statistics,
    in self-play, against bots and with shaping; the same seed, the same network."""
    runs = []
    for name in "ab":
        out = tmp_path / name
        train(tiny(out, timesteps=256, opponents=opponents, method_options={**TINY, **options}))
        runs.append(weights(out / "model.zip"))
    with open(out / "progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert int(rows[-1]["env_steps"]) == 256
    if opponents != ("self",):
        assert any(r["train_game_diff"] not in ("", "nan") for r in rows)
    a, b = runs
    assert all(torch.equal(a[k], b[k]) for k in a)
