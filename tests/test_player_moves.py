"""Every shipped player, and the bots, still choose the same moves on a fixed set of decisions.

What this guards: a change anywhere (engine, observation encoder, bots, the learned players'
code) that makes any player choose differently on any of these decisions fails here, in the
test named after that player. Every model in ``models/`` must have a record, so a new or remade
player fails until its moves are recorded; a retired player's entry is deleted from the record.

The decisions do not depend on the player under test: each table a player plays (4 players on
contract 1, and 3 to 7 players on the full game) has games of planner bots on fixed seeds, and
from them a fixed selection of the decisions with more than one legal move, spread over six
kinds (``draw``: take or draw; ``buy``: buy or pass; ``go_down``: a turn where going down is
legal; ``meld``: placing the contract's cards; ``layoff``: once down, lay off, swap or discard;
``discard``: nothing else to do). A player plays the tables it can (a saved model the one it
was trained for; the bots and the move scorers several) and is asked on each decision on its
own, reset with the decision's number first, so that no answer depends on an earlier one. The
SHA-256 of its action ids, in all and by kind, is compared with ``tests/data/player_moves.json``.

The decisions are hashed too (each view, its legal actions and its observation vector): when
that hash differs, the decisions changed (the engine, the planner, the encoder or this file),
not necessarily a player, and the players' hashes say nothing until re-recorded.

Re-recording, only when a player is remade on purpose (or the decisions change on purpose):
``python tests/test_player_moves.py NAME ...`` records those players (no names: every player and
the decisions), from a copy of the code known to play as it should: run it from outside the
clone with the interpreter of a pinned (not editable) install that can import pytest, so that the
installed package, not the working tree, is what gets recorded (it prints the package's path).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shanghai_env
from shanghai_env.actions import ActionTable, action_table
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.scorer import is_scorer_file
from shanghai_env.agents.registry import BOTS, check_player, make_agent, shipped_models
from shanghai_env.decision import Agent, Decision, chosen_move, decision_for
from shanghai_env.engine import Game, Phase, PlayerView
from shanghai_env.melds import Meld
from shanghai_env.moves import MoveKind
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import ALL_CONTRACTS, Rules

# torch when installed, to decide on one thread (see one_torch_thread)
torch: Any = importlib.import_module("torch") if importlib.util.find_spec("torch") else None

RECORD = Path(__file__).resolve().parent / "data" / "player_moves.json"
KINDS = ("draw", "buy", "go_down", "meld", "layoff", "discard")
# decisions kept per kind and table: a few hundred a player in all, in a few seconds
QUOTA = {"draw": 50, "buy": 50, "go_down": 40, "meld": 50, "layoff": 50, "discard": 50}
# table: (rules, seeds of the planner games the decisions come from); one game of the full game
# (ten deals) is enough, contract 1 needs several deals for its rarer decisions
TABLES: dict[str, tuple[Rules, tuple[int, ...]]] = {
    "contract1_4p": (Rules(num_players=4, contracts=(1,)), (1, 2, 3, 4, 5, 6, 7, 8)),
} | {f"full_{n}p": (Rules(num_players=n, contracts=ALL_CONTRACTS), (n,)) for n in range(3, 8)}
PLAYERS_BOTS = ("random", "greedy", "planner", "search")
# the search bot plays out every deal from dozens of sampled worlds per searched decision: a
# second of rollouts at contract 1, ten at the full game, so it is asked at contract 1 only
SEARCH_TABLES = {"search": ("contract1_4p",)}


def players() -> list[str]:
    """Who is checked: the bots and every model shipped in models/."""
    return sorted(set(PLAYERS_BOTS) | set(shipped_models()))


def kind_of(view: PlayerView) -> str:
    """Which of KINDS a decision is (by its phase and legal moves, never by anyone's choice)."""
    if view.phase == Phase.DRAW:
        return "draw"
    if view.phase == Phase.BUY:
        return "buy"
    if view.phase == Phase.GOING_DOWN:
        return "meld"
    legal = {m.kind for m in view.legal_moves}
    if MoveKind.MELD in legal:
        return "go_down"
    if legal & {MoveKind.LAYOFF, MoveKind.SWAP}:
        return "layoff"
    return "discard"


@dataclass(frozen=True)
class Point:
    """One decision, frozen: the acting player's view and its observation vector."""

    game: int  # the game's seed
    kind: str
    view: PlayerView
    observation: np.ndarray


@dataclass(frozen=True)
class Decisions:
    """A table's decisions: its rules, action table and the points, in game order."""

    rules: Rules
    table: ActionTable
    points: tuple[Point, ...]

    def decision(self, i: int) -> Decision:
        """A fresh Decision of point ``i`` (a copy of the observation, so no player sees another's edits)."""
        obs = self.points[i].observation
        return Decision(self.points[i].view, self.table, self.rules, lambda: obs.copy())


def _canonical(value: object) -> object:
    """A view's field as plain ints and tuples (a Meld has no stable repr)."""
    if isinstance(value, Meld):
        spec = value.spec
        return (spec.kind, spec.size, spec.max_jokers, value.rank, value.suit, value.places, value.cards)
    if isinstance(value, (tuple, list)):
        return tuple(_canonical(v) for v in value)
    return int(value) if isinstance(value, (bool, int)) else value


@cache
def decisions(name: str) -> Decisions:
    """The decisions of table ``name``: every decision with a choice in planner games on the
    table's seeds, then per kind QUOTA of them spread evenly over the games (all if fewer)."""
    rules, seeds = TABLES[name]
    table = action_table(rules)
    encoder = ObservationEncoder(rules)
    found: dict[str, list[Point]] = {k: [] for k in KINDS}
    order: dict[int, int] = {}  # id of a point -> its place in play, to keep the points in game order
    for seed in seeds:
        game = Game(rules)
        game.reset(seed)
        bots = [PlannerBot(seed=seed * 100 + s) for s in range(rules.num_players)]
        while not game.game_over:
            p = game.to_act
            decision = decision_for(game, p, table, encoder)
            if len(decision.view.legal_moves) > 1:
                point = Point(seed, kind_of(decision.view), decision.view, encoder.encode(game, p))
                order[id(point)] = len(order)
                found[point.kind].append(point)
            game.apply(chosen_move(decision, bots[p].act(decision), f"planner in seat {p}"))
    kept: list[Point] = []
    for kind, points in found.items():
        q = QUOTA[kind]
        if len(points) <= q:
            kept += points
        else:  # evenly spaced, first and last included
            kept += [points[round(i * (len(points) - 1) / (q - 1))] for i in range(q)]
    kept.sort(key=lambda pt: order[id(pt)])
    return Decisions(rules, table, tuple(kept))


def decisions_digest(d: Decisions) -> dict[str, Any]:
    """The hash of a table's decisions (views, legal actions, observations) and their count by kind."""
    digest = hashlib.sha256()
    for point in d.points:
        shown = [f.name for f in fields(point.view) if f.name != "legal_moves"]
        view = tuple((name, _canonical(getattr(point.view, name))) for name in shown)
        legal = sorted(d.table.encode(m) for m in point.view.legal_moves)
        digest.update(repr((point.game, point.kind, view, legal)).encode())
        digest.update(str(point.observation.dtype).encode() + point.observation.tobytes())
    counts = {k: sum(p.kind == k for p in d.points) for k in KINDS}
    return {"sha256": digest.hexdigest(), "decisions": len(d.points), "by_kind": counts}


def tables_of(name: str) -> list[str]:
    """The tables ``name`` plays: a bot or a move scorer every one (the search bot only contract 1),
    a saved network those :func:`check_player` accepts."""
    if name in SEARCH_TABLES:
        return list(SEARCH_TABLES[name])
    if name in BOTS or is_scorer_file(shipped_models()[name]):
        return list(TABLES)
    out = []
    for table, (rules, _) in TABLES.items():
        try:
            check_player(name, rules)
        except ValueError:
            continue
        out.append(table)
    return out


def answers(agent: Agent, table: str) -> list[int]:
    """``agent``'s action ids on the table's decisions, each asked on its own (reset with its number)."""
    d = decisions(table)
    out = []
    for i in range(len(d.points)):
        decision = d.decision(i)
        agent.reset(i)
        action = agent.act(decision)
        chosen_move(decision, action, f"{agent.name} on decision {i} of {table}")  # legal, or a ValueError
        out.append(int(action))
    return out


def hashes(actions: list[int], table: str) -> dict[str, str]:
    """The SHA-256 of action ids, in all and by kind of decision."""
    kinds = [p.kind for p in decisions(table).points]

    def sha(ids: list[int]) -> str:
        return hashlib.sha256(" ".join(map(str, ids)).encode()).hexdigest()

    by_kind = {k: sha([a for a, q in zip(actions, kinds, strict=True) if q == k]) for k in KINDS}
    return {"all": sha(actions)} | by_kind


def play(name: str, table: str) -> dict[str, str]:
    """The hashes of the player ``name``'s choices at ``table``."""
    return hashes(answers(make_agent(name), table), table)


def skip_unless_playable(name: str) -> None:
    """Skip when the optional modules ``name`` needs are missing (a saved network: torch; an SB3
    model: sb3_contrib too). Nothing is skipped when they are installed."""
    if name in BOTS or is_scorer_file(shipped_models()[name]):
        return
    pytest.importorskip("torch")
    from shanghai_env.agents.learned.players.policy import is_policy_file  # needs torch

    if not is_policy_file(shipped_models()[name]):
        pytest.importorskip("sb3_contrib")


@cache
def recorded() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread() -> Iterator[None]:
    """The networks decide on one thread, as when the record was made: a batch of one runs no
    faster on more, and a shared core then keeps its pace."""
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("table", list(TABLES))
def test_the_decisions_are_the_recorded_ones(table: str) -> None:
    """The decisions themselves are unchanged; otherwise the players' hashes below mean nothing."""
    assert decisions_digest(decisions(table)) == recorded()["decisions"][table], (
        f"the decisions of table {table} changed (engine, planner, observation encoder or this test's "
        "selection), so every player's record is void: re-record from a trusted copy (module docstring)"
    )


def test_every_kind_of_decision_is_asked_often_at_every_table() -> None:
    for table in TABLES:
        counts = decisions_digest(decisions(table))["by_kind"]
        assert min(counts.values()) >= 10, (table, counts)
        assert 250 <= sum(counts.values()) <= 300, (table, counts)


def test_the_record_names_no_retired_player() -> None:
    """A player no longer shipped has its entry deleted, so the record lists exactly who is checked."""
    retired = sorted(set(recorded()["players"]) - set(players()))
    assert not retired, f"not shipped any more: delete the entries of {retired} from {RECORD.name}"


@pytest.mark.parametrize("name", players())
def test_a_player_chooses_the_recorded_moves(name: str) -> None:
    skip_unless_playable(name)
    entry = recorded()["players"].get(name)
    assert entry is not None, (
        f"{name} has no recorded moves in {RECORD.name}: record them with "
        f"'python tests/test_player_moves.py {name}' from a trusted copy (module docstring)"
    )
    for table, expected in entry.items():
        if decisions_digest(decisions(table)) != recorded()["decisions"][table]:
            pytest.fail(f"the decisions of {table} changed, not necessarily {name}: see the decisions test")
        got = play(name, table)
        changed = [k for k in ("all", *KINDS) if got[k] != expected[k]]
        assert not changed, f"{name} chooses differently at {table}, on decisions of kind {changed[1:]}"


def test_one_changed_choice_changes_the_hashes() -> None:
    """The comparison can fail: one buy answered differently changes the hash in all and of buys alone."""
    table = "contract1_4p"
    planner = answers(make_agent("planner"), table)
    d = decisions(table)
    k = next(i for i, p in enumerate(d.points) if p.kind == "buy")
    other = next(a for a in d.decision(k).legal_actions if a != planner[k])
    before, after = hashes(planner, table), hashes([*planner[:k], other, *planner[k + 1 :]], table)
    assert [kind for kind in before if before[kind] != after[kind]] == ["all", "buy"]


def test_a_player_without_a_record_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A player with no record (here greedy, its entry taken out) fails, saying how to record it."""
    full = recorded()
    bare = {**full, "players": {n: e for n, e in full["players"].items() if n != "greedy"}}
    monkeypatch.setattr(sys.modules[__name__], "recorded", lambda: bare)
    with pytest.raises(AssertionError, match="greedy has no recorded moves"):
        test_a_player_chooses_the_recorded_moves("greedy")


def record(names: list[str]) -> None:
    """Write the decisions and the players ``names`` (all when empty) into the record."""
    print(f"recording with {shanghai_env.__file__}")
    if torch is not None:
        torch.set_num_threads(1)  # as the tests decide
    old = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {"players": {}}
    digests = {table: decisions_digest(decisions(table)) for table in TABLES}
    if names and old.get("decisions") != digests:
        raise SystemExit("the decisions changed: record every player (no names)")
    unknown = set(names) - set(players())
    if unknown:
        raise SystemExit(f"not players here: {sorted(unknown)}; players: {players()}")
    entries = {n: e for n, e in old["players"].items() if n in players()} if names else {}
    for name in names or players():
        entries[name] = {table: play(name, table) for table in tables_of(name)}
        print(name, list(entries[name]))
    out = {"decisions": digests, "players": dict(sorted(entries.items()))}
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record(sys.argv[1:])
