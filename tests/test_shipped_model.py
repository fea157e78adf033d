"""The model shipped in models/ plays contract 1 legally through the tournament code, and well
enough to be told apart from random play; its configuration file says how it was trained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from shanghai_env.agents.arena import tournament
from shanghai_env.agents.arena.stats import summarize

MODEL = Path(__file__).resolve().parents[1] / "models" / "ppo_contract1.zip"


def test_shipped_model_plays_legally_and_beats_random_players() -> None:
    config = tournament.TournamentConfig(
        players=(str(MODEL), "random", "random", "random"), games=8, seed=5, contracts=(1,)
    )
    results = tournament.run_tournament(config, workers=1)  # an illegal choice would raise
    tournament.forget_agents(config.players)
    summary = summarize(results, config.labels, config.players, duplicate=True, seed=config.seed)
    model, *randoms = summary.players
    assert model.mean_deal_score < min(p.mean_deal_score for p in randoms)
    assert model.win_rate >= 0.5


def test_shipped_model_has_its_configuration_beside_it() -> None:
    meta = json.loads(MODEL.with_suffix(".json").read_text(encoding="utf-8"))
    assert all(c.startswith(("python train.py", "cp ")) for c in meta["commands"])
    assert meta["cloning"]["config"]["pretrain"] == "planner"
    assert meta["ppo"]["config"]["contracts"] == [1]
