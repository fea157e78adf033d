"""``shanghai-train ppo --init``: the loop going on from a saved player.

A ``.pt`` of the loop starts a run from its weights; a MaskablePPO player (a ``.zip`` of
``shanghai-train sb3``) is refused with a pointer to ``sb3``, the method that goes on from one;
what cannot start from a given file says so in one line."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from test_trainer import tiny as trainer_tiny  # noqa: E402

from shanghai_env.agents.learned.players.sb3 import save_maskable  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.learned.train.methods.sb3 import SB3Options, build_model  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402
from shanghai_env.single_agent import SingleAgentEnv  # noqa: E402

CPU = torch.device("cpu")
FULL = tuple(range(1, 11))


@pytest.fixture(scope="module")
def contract1(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An untrained MaskablePPO player of 4 players, contract 1, as sb3 saves it."""
    env = SingleAgentEnv(None, num_players=4, contracts=(1,))
    model = build_model(Rules(num_players=4, contracts=(1,)), SB3Options(net_arch=(32,)), env, seed=1)
    path = str(tmp_path_factory.mktemp("sb3") / "player.zip")
    save_maskable(model, path)
    return path


def tiny(out: str, timesteps: int = 64, method: str = "ppo", **kw) -> RunConfig:
    """test_trainer's tiny run, from ``kw["init"]`` (whose own widths replace net_arch)."""
    options = {"n_steps": 8, "batch_size": 16, "epochs": 1, "lr": 1e-3}
    return trainer_tiny(method, out, timesteps, **{"seed": 5, "method_options": options, **kw})


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
    with pytest.raises(ValueError, match=r"--net-arch \(16,\) there is wider than \(8,\) here"):
        method_class("ppo")().setup(other, torch.device("cpu"))


@pytest.mark.parametrize("method", ["ppo", "dmc", "dagger"])
def test_a_maskableppo_player_points_to_sb3(tmp_path, contract1, method):
    options = {"teacher": "greedy"} if method == "dagger" else {}
    config = replace(tiny(str(tmp_path / "a"), init=contract1), method=method, method_options=options)
    with pytest.raises(ValueError, match="go on from it with shanghai-train sb3"):
        method_class(method)().setup(config, CPU)


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
