"""``shanghai-train ppo --init``: the loop going on from a saved player.

A MaskablePPO player (a ``.zip`` of ``shanghai-train sb3``) becomes the loop's network with its own
choices unchanged; the trained player is saved back as a zip that every command plays; a
checkpointed run resumes exactly; a ``.pt`` of the loop starts a run from its weights; what
cannot start from a given file says so in one line."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from test_trainer import tiny as trainer_tiny  # noqa: E402

from shanghai_env.agents.learned.nets.sb3 import load_sb3  # noqa: E402
from shanghai_env.agents.learned.players.policy import padded  # noqa: E402
from shanghai_env.agents.learned.players.sb3 import ModelAgent, save_maskable  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.learned.train.methods.sb3 import SB3Options, build_model  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import make_agent  # noqa: E402
from shanghai_env.decision import decision_for  # noqa: E402
from shanghai_env.observation import ObservationEncoder  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402
from shanghai_env.single_agent import SingleAgentEnv  # noqa: E402
from shanghai_env.vector import VectorEnv  # noqa: E402

CPU = torch.device("cpu")
FULL = tuple(range(1, 11))


@pytest.fixture(scope="module")
def players(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, ...], str]:
    """Untrained MaskablePPO players of 4 players (contract 1; the full game), as sb3 saves them."""
    folder = tmp_path_factory.mktemp("sb3")
    out = {}
    for contracts in ((1,), FULL):
        env = SingleAgentEnv(None, num_players=4, contracts=contracts)
        rules = Rules(num_players=4, contracts=contracts)
        model = build_model(rules, SB3Options(net_arch=(32,)), env, seed=1)
        with torch.no_grad():  # an untrained policy is near uniform: its float32 ties would decide
            model.policy.action_net.weight.mul_(100.0)
        out[contracts] = str(folder / f"player_{len(contracts)}.zip")
        save_maskable(model, out[contracts])
    return out


@pytest.fixture
def contract1(players: dict[tuple[int, ...], str]) -> str:
    return players[(1,)]


def tiny(out: str, timesteps: int = 64, method: str = "ppo", **kw) -> RunConfig:
    """test_trainer's tiny run, from ``kw["init"]`` (whose own widths replace net_arch)."""
    options = {"n_steps": 8, "batch_size": 16, "epochs": 1, "lr": 1e-3}
    return trainer_tiny(method, out, timesteps, **{"seed": 5, "method_options": options, **kw})


def zip_weights(path: str) -> dict:
    return {k: v.clone() for k, v in ModelAgent(path).load().policy.state_dict().items()}


@pytest.mark.parametrize("contracts", [(1,), FULL])
def test_the_network_chooses_what_the_saved_player_chooses(players, contracts):
    path = players[contracts]
    rules = Rules(num_players=4, contracts=contracts)
    net, _ = load_sb3(path, rules, torch.device("cpu"))
    venv = VectorEnv(3, num_players=4, contracts=contracts)
    venv.reset(seed=11)
    agent = ModelAgent(path)
    rng = np.random.default_rng(0)
    for _ in range(12):
        idx, valid = padded(venv.legal_actions)
        with torch.no_grad():
            h = net.features(torch.from_numpy(venv.obs))
            logits = net.logits(h, torch.from_numpy(idx), torch.from_numpy(valid))
        mine = idx[np.arange(3), logits.argmax(1).numpy()].tolist()
        encoder = ObservationEncoder(rules)
        decisions = [decision_for(venv._games[r], int(venv.seat[r]), venv.table, encoder) for r in range(3)]
        assert mine == agent.act_batch(decisions)
        venv.step([int(rng.choice(x)) for x in venv.legal_actions])  # move on to other decisions


def test_a_run_from_a_maskableppo_player_saves_one_that_plays(tmp_path, contract1):
    out = str(tmp_path / "run")
    train(tiny(out, init=contract1))
    player = os.path.join(out, "model.zip")
    assert os.path.isfile(player) and not os.path.exists(os.path.join(out, "model.pt"))
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["init"] == contract1 and recipe["player"] == "model.zip"
    before, after = zip_weights(contract1), zip_weights(player)
    assert before.keys() == after.keys()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # it learned something
    from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament

    config = TournamentConfig(players=(player, "greedy", "greedy", "random"), games=4, contracts=(1,))
    assert len(run_tournament(config, workers=1)) >= 4
    assert make_agent(player) is not None


def test_a_run_from_a_maskableppo_player_resumes_exactly(tmp_path, contract1):
    whole, parts = str(tmp_path / "whole"), str(tmp_path / "parts")
    train(tiny(whole, timesteps=64, init=contract1))
    train(tiny(parts, timesteps=32, init=contract1))
    train(tiny(parts, timesteps=64, init=contract1))
    a, b = zip_weights(os.path.join(whole, "model.zip")), zip_weights(os.path.join(parts, "model.zip"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_run_starts_from_a_saved_pt(tmp_path):
    first = str(tmp_path / "first")
    options = {"n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)}
    train(tiny(first, method_options=options))
    saved = torch.load(os.path.join(first, "model.pt"), weights_only=True)["state_dict"]
    method = method_class("ppo")()
    method.setup(tiny(str(tmp_path / "second"), init=os.path.join(first, "model.pt"), method_options=options),
                 torch.device("cpu"))  # fmt: skip
    assert all(torch.equal(saved[k], v) for k, v in method.net.state_dict().items())
    other = tiny(
        str(tmp_path / "third"), init=os.path.join(first, "model.pt"), method_options={"net_arch": (8,)}
    )
    with pytest.raises(ValueError, match="net_arch"):
        method_class("ppo")().setup(other, torch.device("cpu"))


def test_what_cannot_start_from_a_file_says_why(tmp_path, contract1):
    a = tiny(str(tmp_path / "a"), method="dmc", method_options={}, init=contract1)
    with pytest.raises(ValueError, match="value per move"):
        method_class("dmc")().setup(a, CPU)
    with pytest.raises(ValueError, match="contracts 1,2"):
        method_class("ppo")().setup(tiny(str(tmp_path / "b"), contracts=(1, 2), init=contract1), CPU)


@pytest.mark.parametrize("value", ["no/such/file.pt", "greedy", "README.md"])
def test_a_bad_init_is_one_line_and_exit_2(value, capsys, monkeypatch):
    monkeypatch.setattr("shanghai_env.agents.learned.train.loop.train", lambda *a, **k: pytest.fail("run"))
    with pytest.raises(SystemExit) as exc:
        cli.main(["ppo", "--init", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--init" in err[-1] and "Traceback" not in "\n".join(err)


def test_a_shipped_scorer_is_a_network_to_start_from():
    """`--init shanghai` names the shipped move scorer, a .scorer file (the trainer's methods say
    whether they can start from it)."""
    from shanghai_env.agents.learned.train.options import init_arg as _init_arg
    from shanghai_env.agents.registry import shipped_models

    assert _init_arg("shanghai") == shipped_models()["shanghai"]
    assert _init_arg("shanghai").endswith(".scorer")
