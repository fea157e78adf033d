"""The fixed action table as the env uses it: a bijection between ids and move names, its
documented layout, and the generated docs/actions.md."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from shanghai_env import Game, Rules, legal, parse_move
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


@pytest.mark.parametrize("players", [4, 8])
def test_layoffs_and_swaps_from_the_kept_table_index_are_a_fresh_scans(players: int) -> None:
    """legal.py brings its index of the table up to date owner by owner (only the owners whose
    melds changed are scanned again); at every decision of random games, with many layoffs and
    swaps, the legal moves (in order) are those of an index built from nothing, and a copy that
    shares the index before its own moves keeps its own."""
    rng = random.Random(players)
    game = Game(num_players=players, contracts=(1, 2, 7))
    kinds = {MoveKind.LAYOFF: 0, MoveKind.SWAP: 0}
    copies = []
    for seed in range(3):
        game.reset(seed)
        while not game.game_over:
            fresh = game.clone()
            fresh.table_index = None
            assert legal.legal_moves(game) == legal.legal_moves(fresh)
            if rng.random() < 0.01:
                copies.append(game.clone())
            move = rng.choice(game.legal_moves())
            kinds[move.kind] = kinds.get(move.kind, 0) + 1
            game.apply(move)
    for copy in copies:
        while not copy.game_over:
            fresh = copy.clone()
            fresh.table_index = None
            assert legal.legal_moves(copy) == legal.legal_moves(fresh)
            copy.apply(rng.choice(copy.legal_moves()))
    assert kinds[MoveKind.LAYOFF] > 50 and kinds[MoveKind.SWAP] > 0, kinds
