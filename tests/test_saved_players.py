"""Saved players that are not what they claim: refused when named, with the file in the message;
and ``module:factory`` players found in the current folder."""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shanghai_env.agents.bots.scorer import INPUT_SIZE, ScorerNet
from shanghai_env.agents.registry import check_player, make_agent

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def maskable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An (untrained) MaskablePPO player of 4 players, contract 1, as shanghai-train sb3 saves one."""
    pytest.importorskip("sb3_contrib")
    from shanghai_env.agents.learned.players.sb3 import save_maskable
    from shanghai_env.agents.learned.train.methods.sb3 import SB3Options, build_model
    from shanghai_env.rules import Rules
    from shanghai_env.single_agent import SingleAgentEnv

    path = tmp_path_factory.mktemp("maskable") / "player.zip"
    env = SingleAgentEnv(None, num_players=4, contracts=(1,))
    model = build_model(Rules(num_players=4, contracts=(1,)), SB3Options(net_arch=(8,)), env)
    save_maskable(model, str(path))
    return path


def rewritten(source: Path, target: Path, change: Any) -> Path:
    """A copy of the saved model ``source`` whose ``data`` (SB3's JSON) ``change`` edits in place."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "data":
                data = json.loads(body)
                change(data)
                body = json.dumps(data).encode()
            dst.writestr(item, body)
    return target


def write_scorer(
    path: Path, weights: list[np.ndarray], biases: list[np.ndarray], meta: dict[str, Any]
) -> Path:
    """A scorer zip written by hand (ScorerNet.save refuses what these tests need to write)."""
    buf = io.BytesIO()
    arrays = {f"w{i}": w for i, w in enumerate(weights)} | {f"b{i}": b for i, b in enumerate(biases)}
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    full = {"format": "shanghai-scorer/1", "layers": len(weights), "input_size": INPUT_SIZE, "config": {}}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("scorer.json", json.dumps(full | meta))
        z.writestr("weights.npz", buf.getvalue())
    return path


def layers(fill: float = 0.1) -> tuple[list[np.ndarray], list[np.ndarray]]:
    return [np.full((INPUT_SIZE, 4), fill, np.float32), np.full((4, 1), fill, np.float32)], [
        np.zeros(4, np.float32),
        np.zeros(1, np.float32),
    ]


def test_a_sound_hand_written_scorer_loads(tmp_path: Path) -> None:
    """The writer of the tests below makes loadable scorers when nothing is wrong."""
    path = write_scorer(tmp_path / "ok.zip", *layers(), {"config": {"pairs": 3, "hidden": [4]}})
    assert ScorerNet.load(path).config == {"pairs": 3, "hidden": [4]}
    assert make_agent(str(path)).name == "ok"


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_scorer_with_non_finite_weights_is_refused(tmp_path: Path, bad: float) -> None:
    path = write_scorer(tmp_path / "nan.zip", *layers(bad), {})
    for load in (ScorerNet.load, lambda p: make_agent(str(p)), lambda p: check_player(str(p))):
        with pytest.raises(ValueError, match=r"nan\.zip.*NaN or infinite"):
            load(path)
    w, b = layers(bad)
    with pytest.raises(ValueError, match="NaN or infinite"):
        ScorerNet(w, b)


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ([1], "config is list"),
        ("x", "config is str"),
        ({"pairs": "many"}, "pairs"),
        ({"hidden": [1.5]}, "hidden"),
    ],
)
def test_a_scorer_config_of_the_wrong_shape_is_refused(tmp_path: Path, config: Any, named: str) -> None:
    path = write_scorer(tmp_path / "cfg.zip", *layers(), {"config": config})
    with pytest.raises(ValueError, match=rf"cfg\.zip.*{named}"):
        ScorerNet.load(path)
    with pytest.raises(ValueError, match=r"cfg\.zip"):
        make_agent(str(path))


@pytest.mark.parametrize(
    ("meta", "weights"),
    [
        ({"layers": "2"}, None),
        ({"layers": 0}, None),
        ({}, [np.zeros((INPUT_SIZE, 4), np.float32), np.zeros((5, 1), np.float32)]),
    ],
)
def test_a_scorer_with_bad_layers_is_refused(tmp_path: Path, meta: dict[str, Any], weights: Any) -> None:
    w, b = layers()
    path = write_scorer(tmp_path / "layers.zip", weights or w, b, meta)
    with pytest.raises(ValueError, match=r"layers\.zip"):
        ScorerNet.load(path)


def foreign_zips(folder: Path) -> list[Path]:
    (folder / "empty.zip").write_bytes(b"")
    zipfile.ZipFile(folder / "no_entries.zip", "w").close()
    with zipfile.ZipFile(folder / "photos.zip", "w") as z:
        z.writestr("holiday.txt", "not a player")
    with zipfile.ZipFile(folder / "sb3_lookalike.zip", "w") as z:
        z.writestr("data", "{}")
        z.writestr("policy.pth", b"not torch")
    return sorted(folder.glob("*.zip"))


def test_make_agent_and_check_player_refuse_a_zip_that_is_no_saved_player(tmp_path: Path) -> None:
    for path in foreign_zips(tmp_path):
        for name in (make_agent, check_player):
            with pytest.raises(ValueError, match=rf"{path.name}.*a saved player is"):
                name(str(path))


def test_a_model_that_fails_to_load_is_a_value_error_naming_the_file(tmp_path: Path, maskable: Path) -> None:
    """Metadata intact, network damaged: refused on its first move with the file named."""
    path = tmp_path / "damaged.zip"
    with zipfile.ZipFile(maskable) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, b"garbage" if item.filename == "policy.pth" else src.read(item))
    agent = make_agent(str(path))  # the metadata reads: the network is loaded on the first move
    with pytest.raises(ValueError, match=r"damaged\.zip.*cannot be loaded.*a saved player is"):
        agent.load()  # type: ignore[attr-defined]


def test_a_model_player_without_the_train_extra_is_refused_up_front(maskable: Path) -> None:
    """check_player (what the commands call before any game) names the extra to install."""
    code = (
        "import sys\n"
        "sys.modules['sb3_contrib'] = None\n"
        "from shanghai_env.agents.registry import check_player\n"
        "try:\n"
        f"    check_player({str(maskable)!r})\n"
        "except ValueError as err:\n"
        "    print(err)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "needs the 'train' extra (sb3_contrib not installed)" in run.stdout
    assert 'pip install "shanghai-env[train]"' in run.stdout


def test_a_model_saved_under_the_old_module_names_still_plays(tmp_path: Path, maskable: Path) -> None:
    """Models of 0.1.0 name their features by the old module path (agents.features.RummyFeatures):
    they load, and the old names are gone again afterwards."""
    import base64

    import cloudpickle

    from shanghai_env.agents.learned.nets import features
    from shanghai_env.agents.learned.players.sb3 import old_module_names

    def old_names(data: dict[str, Any]) -> None:
        kwargs = pickle.loads(base64.b64decode(data["policy_kwargs"][":serialized:"]))
        with old_module_names():
            features.RummyFeatures.__module__ = "agents.features"
            try:
                blob = cloudpickle.dumps(kwargs)
            finally:
                features.RummyFeatures.__module__ = features.__name__
        assert b"agents.features" in blob and b"shanghai_env" not in blob
        data["policy_kwargs"][":serialized:"] = base64.b64encode(blob).decode()

    old = rewritten(maskable, tmp_path / "old.zip", old_names)
    agent = make_agent(str(old))
    assert type(agent.load().policy.features_extractor) is features.RummyFeatures  # type: ignore[attr-defined]
    assert "agents.features" not in sys.modules


def test_a_retired_structured_policy_says_which_release_plays_it(tmp_path: Path, maskable: Path) -> None:
    def structured(data: dict[str, Any]) -> None:
        data["policy_class"]["__module__"] = "shanghai_env.agents.learned.structured"

    path = rewritten(maskable, tmp_path / "ppo_full_4p.zip", structured)
    for name in (make_agent, check_player):
        with pytest.raises(ValueError, match=r"ppo_full_4p\.zip.*structured.*shanghai-env==0\.2\.0"):
            name(str(path))


def test_a_factory_in_the_current_folder_is_found_without_pythonpath(tmp_path: Path) -> None:
    """As ``python -m`` would: ``mybot:make`` run from the folder holding mybot.py."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (work / "mybot.py").write_text(
        "from shanghai_env.agents.bots.greedy import GreedyBot\n\n\ndef make():\n    return GreedyBot()\n"
    )
    # a script outside the folder, like a console command: the folder is not on sys.path by itself
    script = elsewhere / "run.py"
    script.write_text(
        "import os, sys\n"
        "assert os.getcwd() not in [os.path.abspath(p or '.') for p in sys.path]\n"
        "from shanghai_env.agents.registry import check_player, make_agent\n"
        "check_player('mybot:make')\n"
        "print(type(make_agent('mybot:make', seed=1)).__name__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "GreedyBot"
    shutil.rmtree(work)


def test_a_missing_factory_module_is_still_a_value_error() -> None:
    with pytest.raises(ValueError, match="cannot import 'no_such_module_here'"):
        make_agent("no_such_module_here:make")


def test_every_shipped_player_has_the_extension_of_its_kind_and_its_card_names_it() -> None:
    """A trainer policy ships as a ``.pt``, a move scorer as a ``.scorer``; a trainer policy's card
    names its file and that file's SHA-256."""
    import hashlib

    from shanghai_env.agents.bots.scorer import is_scorer_file
    from shanghai_env.agents.registry import shipped_models

    assert shipped_models()
    for name, path in shipped_models().items():
        assert Path(path).suffix == (".scorer" if is_scorer_file(path) else ".pt"), name
        if Path(path).suffix == ".pt":
            card = json.loads(Path(path).with_suffix(".json").read_text(encoding="utf-8"))
            assert card["file"] == Path(path).name, name
            assert card["sha256"] == hashlib.sha256(Path(path).read_bytes()).hexdigest(), name


def test_a_trainer_policy_saved_as_a_zip_before_still_plays(tmp_path: Path) -> None:
    """The shipped trainer policies were .zip files up to 0.2.0: a copy under that name loads."""
    pytest.importorskip("torch")
    from shanghai_env.agents.learned.players.policy import PolicyAgent
    from shanghai_env.agents.registry import shipped_models
    from shanghai_env.rules import Rules

    old = tmp_path / "scratch_contract1.zip"
    shutil.copyfile(shipped_models()["scratch_contract1"], old)
    assert isinstance(make_agent(str(old)), PolicyAgent)
    check_player(str(old), Rules(num_players=4, contracts=(1,)))
