"""The players learned from scratch with no teacher, ``models/scratch_4p.pt`` (dmc self-play, the
full game) and ``models/scratch_contract1.pt`` (ppo against greedy bots, contract 1), play
legally under their shipped names, and their cards say how they were made and measured."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.learned.players.policy import is_policy_file, load_policy
from shanghai_env.agents.learned.players.sb3 import observation_encoder
from shanghai_env.agents.registry import check_player, make_agent, shipped_models
from shanghai_env.engine import Game
from shanghai_env.rules import ALL_CONTRACTS, Rules

MODELS = Path(__file__).resolve().parents[1] / "models"
# player: (its contracts, the method, who sat at the other seats while it trained, the bots of its claim)
SCRATCH = {
    "scratch_4p": (ALL_CONTRACTS, "dmc", ["self"], ("planner", "greedy")),
    "scratch_contract1": ((1,), "ppo", ["greedy"], ("greedy",)),
}


@pytest.mark.parametrize("name", sorted(SCRATCH))
def test_a_scratch_player_is_a_trainer_player_of_its_4_player_game(name: str) -> None:
    contracts = SCRATCH[name][0]
    path = MODELS / f"{name}.pt"
    assert shipped_models()[name] == str(path)
    assert is_policy_file(str(path))
    net, rules, _ = load_policy(str(path))
    assert (rules.num_players, rules.contracts) == (4, contracts)
    assert net.extra_size > 0 and net.move_net  # the facts of its hand and the move network
    with pytest.raises(ValueError, match="trained for 4 players"):
        check_player(name, Rules(num_players=5, contracts=contracts))


@pytest.mark.parametrize("name", sorted(SCRATCH))
def test_a_scratch_player_plays_legally_and_beats_random_players(name: str) -> None:
    contracts = SCRATCH[name][0]
    # random players let a deal run long: the move cap (docs/rules.md 5.5) keeps the test short
    game = Game(Rules(num_players=4, contracts=contracts, max_moves_per_deal=300))
    agents = [make_agent(name, seed=1)] + [make_agent("random", seed=s) for s in (2, 3, 4)]
    encoder = observation_encoder(game.rules)  # a network player reads the env's observation
    result = play_game(game, agents, seed=7, encoder=encoder)  # an illegal choice would raise
    assert len(result.deal_scores) == len(contracts)
    assert result.scores[0] < min(result.scores[1:])


@pytest.mark.parametrize("name", sorted(SCRATCH))
def test_a_scratch_card_has_no_teacher_and_the_commands_that_made_it(name: str) -> None:
    _, method, opponents, bots = SCRATCH[name]
    path = MODELS / f"{name}.pt"
    card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert card["player"] == name and card["teacher"] is None and card["method"] == method
    assert card["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert all(c.startswith((f"shanghai-train {method} ", "cp ")) for c in card["commands"])
    assert all(stage["config"]["opponents"] == opponents for stage in card["stages"])
    assert card["stages"][0]["config"]["init"] == ""  # the first stage starts from nothing
    # the card's claim: ahead of every bot seat on two fresh deck seeds, each paired interval below zero
    for bot in bots:
        seeds = {ev["seed"] for key, ev in card["evaluations"].items() if key.startswith(bot)}
        assert len(seeds) >= 2, bot
    for key, ev in card["evaluations"].items():
        assert ev["games"] >= 400, key
        assert all(seat["ci95"][1] < 0 for seat in ev["player_minus_each_seat"]), key
