"""Game records: written where games are played (tournament, Recorder), replayed exactly,
tampered records refused with a message naming what is wrong."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import deal_deck

from shanghai_env.agents.arena import evaluate_cli as evaluate  # what evaluate.py runs
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.arena.tournament import TournamentConfig, play_task, schedule
from shanghai_env.agents.registry import make_agent
from shanghai_env.engine import NO_PLAYER, Game
from shanghai_env.moves import Move, MoveKind
from shanghai_env.record import (
    ABANDON,
    FORMAT,
    VERSION,
    Recorder,
    iter_replay,
    load,
    play_and_record,
    record_rules,
    replay,
    rules_dict,
    save,
)
from shanghai_env.rules import Rules


def assert_replays(record: dict[str, Any]) -> Game:
    """Replay ``record`` and compare every deal's scores, out player and the totals with it."""
    game = replay(record)
    finished = [d for d in record["deals"] if "scores" in d]
    assert len(game.deal_results) == len(finished)
    for entry, result in zip(finished, game.deal_results):
        assert entry["scores"] == list(result.scores)
        assert entry["out_player"] == (None if result.out_player == NO_PLAYER else result.out_player)
        assert entry["blind"] == result.blind
    assert record["scores"] == game.scores
    return game


@pytest.fixture(scope="module")
def tournament_record() -> tuple[TournamentConfig, Any]:
    config = TournamentConfig(
        players=("greedy", "planner", "random"), games=3, seed=5, contracts=(1, 2), record_games=2
    )
    task = schedule(config)[1]
    return config, play_task(config, task)


def test_a_tournament_game_is_recorded_and_replays_to_its_scores(tournament_record) -> None:
    config, result = tournament_record
    record = result.record
    assert record["format"] == FORMAT and record["version"] == VERSION
    assert record["rules"] == rules_dict(config.rules)
    assert record["players"] == [config.labels[i] for i in result.seats]
    assert record["meta"]["game"] == 1 and record["game_over"] is True
    game = assert_replays(record)
    # the tournament's result is by player, the record by seat
    assert [game.scores[result.seats.index(i)] for i in range(3)] == result.scores
    for deal, row in enumerate(result.deal_scores):
        assert [game.deal_results[deal].scores[result.seats.index(i)] for i in range(3)] == row
    assert sum(len(d["moves"]) for d in record["deals"]) == result.moves


def test_only_the_games_asked_for_are_recorded() -> None:
    config = TournamentConfig(players=("greedy", "greedy", "random"), games=3, contracts=(1,), record_games=1)
    tasks = schedule(config)
    assert play_task(config, tasks[0]).record is not None
    assert play_task(config, tasks[1]).record is None
    assert (
        play_game(
            Game(num_players=3, contracts=(1,)), [make_agent("random", seed=s) for s in range(3)], 1
        ).record
        is None
    )


def test_deals_ended_by_the_move_cap_are_recorded_and_replayed() -> None:
    agents = [make_agent("random", seed=s) for s in range(3)]
    game = Game(num_players=3, contracts=(1, 2, 3), max_moves_per_deal=20)
    out = play_game(game, agents, seed=4, record=True)
    assert out.capped == [True, True, True]
    record = out.record
    assert record["rules"]["max_moves_per_deal"] == 20  # the rule is recorded ...
    # ... and ends each deal at its 20th move when replayed: no entry of its own
    assert all(len(d["moves"]) == 20 and ABANDON not in d["moves"] for d in record["deals"])
    assert all(d["out_player"] is None for d in record["deals"])
    assert assert_replays(record).scores == out.scores
    assert [r.capped for r in replay(record).deal_results] == [True] * 3


def test_records_written_before_the_cap_was_a_rule_still_replay() -> None:
    """Older records lack ``max_moves_per_deal`` (read as its default) and end every capped deal
    with an explicit "abandon"."""
    agents = [make_agent("random", seed=s) for s in range(3)]
    out = play_game(
        Game(num_players=3, contracts=(1, 2, 3), max_moves_per_deal=20), agents, seed=4, record=True
    )
    old = copy.deepcopy(out.record)
    del old["rules"]["max_moves_per_deal"]  # a cap of 20 was the tournament's, not a rule
    for deal in old["deals"]:
        deal["moves"].append(ABANDON)
    assert record_rules(old) == Rules(num_players=3, contracts=(1, 2, 3))
    assert record_rules(old).max_moves_per_deal == 3000
    assert replay(old).scores == out.scores


def stalled_deal_record() -> dict[str, Any]:
    """A deal of upcard cycles (the stock never empties) that the default cap ends at move 3000."""
    rec = Recorder(Game(num_players=3, contracts=(1, 2)))
    rec.reset(3)
    for _ in range(3100):  # the cap ends the deal at 3000
        if rec.game.deal_results:
            break
        names = [m.name for m in rec.game.legal_moves()]
        rec.apply("take" if "take" in names else next(n for n in names if n.startswith("discard")))
    return rec.record()


def test_an_old_abandon_after_the_default_cap_is_the_same_end() -> None:
    record = stalled_deal_record()
    assert len(record["deals"][0]["moves"]) == 3000 and record["deals"][0]["out_player"] is None
    assert assert_replays(record).deal_results[0].capped
    # written before the rule: the 3000th move was followed by "abandon"
    old = copy.deepcopy(record)
    del old["rules"]["max_moves_per_deal"]
    old["deals"][0]["moves"].append(ABANDON)
    assert replay(old).scores == record["scores"]
    # a record that gives the rule ends that deal at its 3000th move: an "abandon" after it is refused
    extra = copy.deepcopy(record)
    extra["deals"][0]["moves"].append(ABANDON)
    with pytest.raises(ValueError, match="the deal ended here, but the record goes on with 1 moves"):
        replay(extra)


def test_a_stacked_deal_and_an_unfinished_game_replay() -> None:
    deck = deal_deck(3, 2, {0: "7H 7D JK 9S 9H 9D 2C 3C 4D 5S KH"}, "QS")
    rec = Recorder(Game(num_players=3, contracts=(1, 2)), players=["me", "bot", "bot"])
    rec.reset(None, deck=deck, dealer=2)
    for name in ["take", "meld 0 7H", "meld 0 7D", "meld 0 JK=7C", "meld 1 9S"]:
        rec.apply(name)
    record = rec.record({"note": "unfinished"})
    assert record["start"]["deck"] == deck and record["start"]["dealer"] == 2
    assert record["game_over"] is False and record["deals"][0]["moves"][-1] == "meld 1 9S"
    game = assert_replays(record)
    assert game.table[0][0].text() == "7H 7D JK=7C" and game.to_act == 0
    # the same game from a flat list of names
    again = play_and_record(
        Game(num_players=3, contracts=(1, 2)), record["deals"][0]["moves"], deck=deck, dealer=2
    )
    assert again["deals"] == record["deals"]


def test_records_save_and_load_as_json(tmp_path: Path, tournament_record) -> None:
    _, result = tournament_record
    path = save(result.record, tmp_path / "sub" / "game.json")
    loaded = load(path)
    assert loaded == json.loads(json.dumps(result.record))
    assert_replays(loaded)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a game record: not JSON"):
        load(tmp_path / "bad.json")


def test_replay_steps_carry_the_table_at_each_deal_end(tournament_record) -> None:
    _, result = tournament_record
    ends = [s for s in iter_replay(result.record, copies=True) if s.ended is not None]
    assert len(ends) == 2
    for step in ends:
        assert step.deal_end is not None and step.deal_end.deal == step.deal
        assert step.deal_end.deal_results[-1] == step.ended
        if step.ended.out_player != NO_PLAYER:
            assert step.deal_end.hand_sizes[step.ended.out_player] == 0


def test_deal_end_after_is_the_deal_as_it_ended_and_changes_nothing(tournament_record) -> None:
    """Game.deal_end_after (what the replay and the web game show at a deal's end): a copy where
    the move ended the deal and no next deal was dealt; the game itself is untouched."""
    _, result = tournament_record
    steps = list(iter_replay(result.record, copies=True))
    end = next(s for s in steps if s.ended is not None and s.game.deal == s.deal + 1)
    before, move = end.before, end.move
    assert move is not None
    moves_before, hands_before = before.move_count, [h[:] for h in before.hands]
    copy_ = before.deal_end_after(move)
    assert copy_.deal == before.deal and copy_.deal_results[-1] == end.ended
    assert copy_.hands != end.game.hands  # the live game dealt the next hand, the copy did not
    assert [sum(h) for h in copy_.hands] == copy_.hand_sizes
    assert (before.move_count, before.hands) == (moves_before, hands_before)
    abandoned = before.deal_end_after(None)
    assert abandoned.deal == before.deal and abandoned.deal_results[-1].capped
    going_on = next(s for s in steps if s.ended is None and s.move is not None)
    with pytest.raises(ValueError, match=f"move '{going_on.move.name}' does not end deal 1"):
        going_on.before.deal_end_after(going_on.move)
    missing = next(c for c in range(52) if before.hands[before.to_act][c] == 0)
    with pytest.raises(ValueError, match="illegal move"):
        before.deal_end_after(Move(MoveKind.DISCARD, missing))  # a card the player does not hold
    assert before.move_count == moves_before


# --- refused records ------------------------------------------------------------------------------


def tampered(record: dict[str, Any], change) -> dict[str, Any]:
    out = copy.deepcopy(record)
    change(out)
    return out


def _set_move(r: dict[str, Any]) -> None:
    moves = r["deals"][0]["moves"]
    i = next(i for i, m in enumerate(moves) if m.startswith("discard "))
    moves[i] = "discard JK" if moves[i] != "discard JK" else "discard 2C"


REFUSED = {
    "another version": (lambda r: r.update(version=2), r"game record version 2 .* reads version 1"),
    "another format": (lambda r: r.update(format="chess"), r"not a game record: format is 'chess'"),
    "a changed move": (_set_move, r"record deal 1 move \d+ \('discard .*'\): illegal move"),
    "a changed deal score": (
        lambda r: r["deals"][1]["scores"].__setitem__(0, r["deals"][1]["scores"][0] + 5),
        r"record deal 2 scores: the record says",
    ),
    "a changed total": (lambda r: r["scores"].__setitem__(2, -1), r"record final scores"),
    "inexact contract melds": (
        lambda r: r["rules"].update(exact_contract_melds=False),
        r"record deal 1 move \d+ \('(meld|discard) .*'\): illegal move",
    ),
    "other contracts": (
        lambda r: r["rules"].update(contracts=[2, 1]),
        r"record deal 1 says contract 1, the rules play 2",
    ),
    "an unknown rule": (lambda r: r["rules"].update(wild_twos=True), r"record rules .*unknown wild_twos"),
    "a missing rule": (lambda r: r["rules"].pop("max_stock_rebuilds"), r"missing max_stock_rebuilds"),
    "a bad rule value": (
        lambda r: r["rules"].update(num_players=9),
        r"record rules are not valid: num_players",
    ),
    "another seed": (lambda r: r["start"].update(seed=r["start"]["seed"] + 1), r"record deal 1 move"),
    "a dropped move": (
        lambda r: r["deals"][0]["moves"].pop(),
        r"record deal 1: the record gives its scores, but its moves do not end it",
    ),
    "an added move": (
        lambda r: r["deals"][0]["moves"].append("pass"),
        r"record deal 1 move \d+ \('discard ..'\): the deal ended here, but the record goes on with 1 moves",
    ),
    "a wrong out player": (lambda r: r["deals"][0].update(out_player=None), r"record deal 1 out_player"),
    "a flipped blind flag": (
        lambda r: r["deals"][0].update(blind=not r["deals"][0]["blind"]),
        r"record deal 1 blind: the record says",
    ),
    "a wrong contract": (lambda r: r["deals"][1].update(contract=3), r"record deal 2 says contract 3"),
    "a missing field": (lambda r: r.pop("players"), r"game record lacks players"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_tampered_record_is_refused(case: str, tournament_record) -> None:
    _, result = tournament_record
    change, message = REFUSED[case]
    with pytest.raises(ValueError, match=message):
        replay(tampered(result.record, change))


def test_evaluate_writes_the_records_asked_for(tmp_path: Path) -> None:
    argv = ["--players", "greedy,random,random", "--games", "6", "--contracts", "1", "--workers", "1"]
    evaluate.main([*argv, "--record", "all", "--out", str(tmp_path), "--no-progress", "--quiet"])
    files = sorted((tmp_path / "records").glob("game-*.json"))
    assert [f.name for f in files] == [f"game-{i:05d}.json" for i in range(6)]
    for f in files:
        assert_replays(load(f))
    evaluate.main([*argv, "--record", "1", "--out", str(tmp_path / "one"), "--no-progress", "--quiet"])
    assert len(list((tmp_path / "one" / "records").glob("*.json"))) == 1
    with pytest.raises(SystemExit):
        evaluate.main([*argv, "--record", "some", "--out", str(tmp_path)])


def test_rules_dict_names_every_option() -> None:
    assert set(rules_dict(Rules())) == set(Rules.__dataclass_fields__)
    assert rules_dict(Rules(max_stock_rebuilds=None))["max_stock_rebuilds"] is None
