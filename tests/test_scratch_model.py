"""The players learned from scratch with no teacher, ``models/scratch_4p.pt`` (dmc self-play, the
full game), ``models/scratch_contract1.pt`` (ppo against greedy bots, contract 1) and
``models/scratch.pt`` (one network for every table size), play legally under their shipped names,
and their cards say how they were made and measured."""

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


def test_scratch_plays_every_table_size_from_one_network() -> None:
    """``scratch``: one network in the 8-seat encoding, accepted at every table size of the full game."""
    path = MODELS / "scratch.pt"
    assert shipped_models()["scratch"] == str(path)
    net, _, _ = load_policy(str(path))
    assert net.encoding == "any_table" and net.extra_size > 0 and net.move_net
    for n in range(3, 9):
        check_player("scratch", Rules(num_players=n, contracts=ALL_CONTRACTS))  # raises if refused
    for n in (3, 8):  # plays legally at the smallest and the largest table
        game = Game(Rules(num_players=n, contracts=ALL_CONTRACTS, max_moves_per_deal=300))
        agents = [make_agent("scratch", seed=1)] + [make_agent("random", seed=s) for s in range(2, n + 1)]
        result = play_game(game, agents, seed=7, encoder=observation_encoder(game.rules))  # illegal: raises
        assert len(result.deal_scores) == len(ALL_CONTRACTS)


def test_the_scratch_card_says_where_it_is_ahead_and_where_not() -> None:
    """Its card: no teacher, made from ``scratch_4p`` by the one trainer (dmc at every table size,
    then expert iteration over its own search), and its claims as measured on 400 games or more:
    every planner seat separated at 4 to 8 players, and at 3 listed as level; against the previous
    ``scratch`` (before its expert iteration), ahead of every seat at 3 to 6 players and behind
    none, separated, at any size."""
    path = MODELS / "scratch.pt"
    card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert card["player"] == "scratch" and card["teacher"] is None and card["method"] == "exit"
    assert card["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    commands = card["commands"]
    assert all(c.startswith(("shanghai-train dmc ", "shanghai-train exit ", "cp ")) for c in commands)
    assert "--init models/scratch_4p.pt" in commands[0] and "--tables 3,4,5,6,7,8" in commands[0]
    (exit_command,) = [c for c in commands if c.startswith("shanghai-train exit ")]
    assert "--init models/scratch.pt" in exit_command  # the first stage's player, copied there
    assert [stage["config"]["method"] for stage in card["stages"]] == ["dmc", "exit"]
    planners: dict[int, list[dict]] = {}
    previous: dict[int, list[dict]] = {}
    for key, ev in card["evaluations"].items():
        assert ev["games"] >= 400, key
        if key.startswith("planner_"):
            planners.setdefault(ev["table"], []).append(ev)
        elif key.startswith("previous_scratch_"):
            previous.setdefault(ev["table"], []).append(ev)
    assert sorted(planners) == sorted(previous) == [3, 4, 5, 6, 7, 8]
    for n in range(4, 9):
        assert any(all(seat["ci95"][1] < 0 for seat in ev["player_minus_each_seat"]) for ev in planners[n]), n
    assert not any(seat["ci95"][1] < 0 for ev in planners[3] for seat in ev["player_minus_each_seat"])
    assert "Against the planners: level with them at 3 players" in card["summary"]
    for n, evs in previous.items():
        seats = [seat for ev in evs for seat in ev["player_minus_each_seat"]]
        assert not any(seat["ci95"][0] > 0 for seat in seats), n  # behind no seat, separated
        if n <= 6:
            assert all(seat["mean"] < 0 for seat in seats) and any(seat["ci95"][1] < 0 for seat in seats), n
    assert len(previous[3]) >= 2  # at 3 players, where its labels came from: two seeds
    assert "level at 7 and 8" in card["summary"]


@pytest.mark.parametrize("name", ["scratch", "scratch_4p", "shanghai"])
def test_a_shipped_player_goes_by_its_name_at_the_table(name: str) -> None:
    # the terminal and web games label each seat with the player's name, not its file's path
    assert make_agent(name).name == name
