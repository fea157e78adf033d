"""ModelAgent's one-pass choice is the choice ``MaskablePPO.predict(..., deterministic=True)``
makes, at every decision of games played to their end, for a MaskablePPO player as
``shanghai-train sb3`` makes them (agents/learned/players/sb3.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch

from shanghai_env.actions import action_table
from shanghai_env.agents.base import decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.learned.players.sb3 import ModelAgent, observation_encoder
from shanghai_env.agents.learned.train.methods.sb3 import SB3Options, build_model
from shanghai_env.engine import Game
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv


@pytest.mark.parametrize("contracts", [(1,), tuple(range(1, 11))])
def test_one_pass_choice_is_predicts_choice(tmp_path: Path, contracts: tuple[int, ...]) -> None:
    rules = Rules(num_players=4, contracts=contracts)
    env = SingleAgentEnv(None, num_players=4, contracts=contracts)
    path = str(tmp_path / "player.zip")
    fresh = build_model(rules, SB3Options(net_arch=(32,)), env, seed=len(contracts))
    with torch.no_grad():  # an untrained policy is near uniform: its float32 ties would decide
        fresh.policy.action_net.weight.mul_(100.0)
    fresh.save(path)
    agent = ModelAgent(path)
    model = agent.load()
    table, encoder = action_table(rules), observation_encoder(rules)
    game = Game(rules)
    others = [GreedyBot() for _ in range(3)]
    checked = 0
    seed = 3
    while checked < 400:
        game.reset(seed)
        for i, other in enumerate(others):
            other.reset(seed + i)
        seed += 1
        while not game.game_over and checked < 400:
            p = game.to_act
            decision = decision_for(game, p, table, encoder)
            if p == 0:
                action = agent.act(decision)  # first: the agent puts the policy in eval mode itself
                mask = decision.action_mask.astype(bool)
                expected, _ = model.predict(decision.observation, action_masks=mask, deterministic=True)
                assert action == int(np.asarray(expected).reshape(-1)[0])
                checked += 1
            else:
                action = others[p - 1].act(decision)
            game.apply(table.decode(action))


def test_workers_use_one_thread_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tournament and ladder workers (and the commands' own process) decide one observation at a
    time: one linear-algebra thread each, unless the user set a number."""
    import torch

    from shanghai_env.agents.arena.tournament import one_thread_per_worker

    before = torch.get_num_threads()
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    for name in names:  # set, then deleted: monkeypatch puts back whatever was there
        monkeypatch.setenv(name, "0")
        monkeypatch.delenv(name)
    try:
        torch.set_num_threads(2)
        one_thread_per_worker()
        assert os.environ["OMP_NUM_THREADS"] == "1" and torch.get_num_threads() == 1
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        one_thread_per_worker()
        assert os.environ["OMP_NUM_THREADS"] == "2" and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


class _Mkdir:
    """Unpickled, it creates a folder: what a crafted file could run instead."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_reading_a_models_table_runs_nothing_in_the_file(tmp_path: Path) -> None:
    """check_model reads a file's sizes from SB3's JSON; a space recorded only as a pickle (no
    ``_shape``) is refused unread, not unpickled (which could run any code)."""
    import base64
    import json
    import pickle
    import zipfile

    from shanghai_env.agents.learned.players.sb3 import saved_table

    rules = Rules(num_players=3, contracts=(1,))
    source, crafted = tmp_path / "player.zip", tmp_path / "crafted.zip"
    build_model(rules, SB3Options(net_arch=(8,)), SingleAgentEnv(None, num_players=3, contracts=(1,))).save(
        str(source)
    )
    marker = tmp_path / "ran"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(crafted, "w") as dst:
        for item in src.infolist():
            body = src.read(item)
            if item.filename == "data":
                data = json.loads(body)
                blob = base64.b64encode(pickle.dumps(_Mkdir(str(marker)))).decode()
                data["observation_space"] = {":serialized:": blob}
                body = json.dumps(data).encode()
            dst.writestr(item, body)
    assert saved_table(str(source)).observation == observation_encoder(rules).size
    with pytest.raises(ValueError, match="not a model of this game"):
        saved_table(str(crafted))
    assert not marker.exists()
