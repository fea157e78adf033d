"""models/scratch_4p.zip: the player learned from scratch (dmc self-play, no teacher) plays the
full game legally under its shipped name, and its card says how it was made and measured."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.learned.model import observation_encoder
from shanghai_env.agents.learned.train.policy import is_policy_file, load_policy
from shanghai_env.agents.registry import check_player, make_agent, shipped_models
from shanghai_env.engine import Game
from shanghai_env.rules import ALL_CONTRACTS, Rules

MODEL = Path(__file__).resolve().parents[1] / "models" / "scratch_4p.zip"


def test_scratch_4p_is_a_trainer_player_of_the_full_4_player_game() -> None:
    assert shipped_models()["scratch_4p"] == str(MODEL)
    assert is_policy_file(str(MODEL))
    net, rules, _ = load_policy(str(MODEL))
    assert (rules.num_players, rules.contracts) == (4, ALL_CONTRACTS)
    assert net.extra_size > 0 and net.move_net  # the facts of its hand and the move network
    with pytest.raises(ValueError, match="trained for 4 players"):
        check_player("scratch_4p", Rules(num_players=5))


def test_scratch_4p_plays_a_game_legally_and_beats_random_players() -> None:
    # random players let a deal run long: the move cap (docs/rules.md 5.5) keeps the test short
    game = Game(Rules(num_players=4, max_moves_per_deal=300))
    agents = [make_agent("scratch_4p", seed=1)] + [make_agent("random", seed=s) for s in (2, 3, 4)]
    encoder = observation_encoder(game.rules)  # a network player reads the env's observation
    result = play_game(game, agents, seed=7, encoder=encoder)  # an illegal choice would raise
    assert len(result.deal_scores) == 10
    assert result.scores[0] < min(result.scores[1:])


def test_scratch_4p_card_has_no_teacher_and_the_commands_that_made_it() -> None:
    card = json.loads(MODEL.with_suffix(".json").read_text(encoding="utf-8"))
    assert card["player"] == "scratch_4p" and card["teacher"] is None
    assert card["sha256"] == hashlib.sha256(MODEL.read_bytes()).hexdigest()
    assert all(c.startswith(("shanghai-train dmc ", "cp ")) for c in card["commands"])
    assert all(stage["config"]["opponents"] == ["self"] for stage in card["stages"])  # self-play only
    assert card["stages"][0]["config"]["init"] == ""  # the first stage starts from nothing
    # the card's claim: ahead of every bot seat, each paired interval below zero
    assert {"planner_s42001", "planner_s42002", "greedy_s42001", "greedy_s42002"} <= set(card["evaluations"])
    for name, ev in card["evaluations"].items():
        assert ev["games"] >= 400, name
        assert all(seat["ci95"][1] < 0 for seat in ev["player_minus_each_seat"]), name
