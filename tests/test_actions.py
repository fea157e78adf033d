"""The fixed action table as the env uses it: a bijection between ids and move names, its
documented layout, and the generated docs/actions.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from shanghai_env import Rules, parse_move
from shanghai_env.actions import DISCARD_BASE, MELD_BASE, ActionTable
from shanghai_env.aec import DOCS_MARKER, generated_docs
from shanghai_env.moves import MoveKind

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("players", range(3, 9))
@pytest.mark.parametrize("contracts", [(1,), (4,), tuple(range(1, 11))])
def test_ids_and_names_are_a_bijection(players: int, contracts: tuple[int, ...]) -> None:
    table = ActionTable(Rules(num_players=players, contracts=contracts))
    names = [table.name(a) for a in range(table.size)]
    assert len(set(names)) == table.size
    for a, name in enumerate(names):
        assert table.action_id(name) == a
        move = parse_move(name)
        assert table.encode(move) == a and table.decode(a) == move


@pytest.mark.parametrize("players", range(3, 9))
def test_size_formula(players: int) -> None:
    for contracts, melds in (((1, 2, 3), 2), ((4,), 3), ((9,), 4)):
        table = ActionTable(Rules(num_players=players, contracts=contracts))
        assert table.size == 58 + 112 * melds + 168 * players * melds


def test_blocks() -> None:
    table = ActionTable(Rules(num_players=4))
    assert [table.name(a) for a in range(DISCARD_BASE)] == ["take", "draw", "buy", "pass", "finish"]
    assert table.decode(MELD_BASE - 1).kind == MoveKind.DISCARD
    assert table.decode(MELD_BASE).kind == MoveKind.MELD
    assert table.decode(table.layoff_base).kind == MoveKind.LAYOFF
    assert table.decode(table.swap_base).kind == MoveKind.SWAP
    assert table.name(table.size - 1) == "swap AS^ 3.3"
    assert (table.size, ActionTable(Rules(num_players=8)).size) == (3194, 5882)


@pytest.mark.parametrize("bad", [-1, 3194, 10**9])
def test_out_of_range_ids_raise(bad: int) -> None:
    with pytest.raises(ValueError):
        ActionTable(Rules()).decode(bad)


@pytest.mark.parametrize("bad", ["layoff 7H 4.0", "meld 4 7H", "swap 7H 0.4", "discard 7Z", "jump"])
def test_bad_names_raise(bad: str) -> None:
    with pytest.raises(ValueError):
        ActionTable(Rules()).action_id(bad)


def test_docs_actions_md_matches_the_code() -> None:
    text = (ROOT / "docs" / "actions.md").read_text(encoding="utf-8")
    assert DOCS_MARKER in text, "docs/actions.md lost its generated section"
    generated = text.split(DOCS_MARKER, 1)[1].lstrip("\n")
    assert generated == generated_docs()["docs/actions.md"], (
        "docs/actions.md is out of date: run python -c 'import shanghai_env.aec as m; m.write_docs()'"
    )
