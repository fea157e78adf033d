"""The fast going-down move generator agrees with one feasibility search per candidate."""

from __future__ import annotations

import random

import pytest

from shanghai_env import Game
from shanghai_env.engine import Phase
from shanghai_env.legal import _placements, placements_by_search
from shanghai_env.melds import Meld
from shanghai_env.moves import MoveKind
from shanghai_env.render import render_text


# Contracts 8 and 10 need buys and long runs that random play seldom gathers; the walk test
# below covers them from constructed hands.
@pytest.mark.parametrize("contract", [1, 2, 3, 4, 5, 6, 7, 9])
def test_union_of_completions_equals_per_candidate_search(contract: int) -> None:
    checked = 0
    for seed in range(16):
        n = 3 + seed % 6
        game = Game(num_players=n, contracts=(contract,), same_suit_run_gap=seed % 3)
        game.reset(seed=seed)
        rng = random.Random(seed)
        for _ in range(1200):
            if game.game_over:
                break
            p = game.turn_player
            moves = game.legal_moves()
            melds = None
            if game.phase == Phase.GOING_DOWN:
                melds = game.table[p]
            elif game.phase == Phase.PLAY and not game.down[p] and moves[-1].kind == MoveKind.MELD:
                melds = [Meld(spec) for spec in game.specs]
            if melds is not None:
                fast = _placements(game, game.hands[p], melds)
                assert fast == placements_by_search(game, game.hands[p], melds), render_text(game)
                assert fast, "a player who may go down always has a placement"
                checked += 1
            # lean towards buying and going down so that partly laid contracts come often
            eager = [m for m in moves if m.kind in (MoveKind.MELD, MoveKind.BUY)]
            pick = eager if eager and rng.random() < 0.9 else moves
            game.apply(rng.choice(pick))
    assert checked > 0


def _hand_that_fulfils(contract: int, rng: random.Random) -> list[int]:
    """A hand holding some arrangement of ``contract`` (jokers now and then) plus extra cards."""
    from shanghai_env.cards import JOKER
    from shanghai_env.melds import CONTRACTS, RUN

    hand = [0] * 53
    used_suits: list[int] = []
    for spec in CONTRACTS[contract]:
        if spec.kind == RUN:
            suit = rng.choice([s for s in range(4) if s not in used_suits] or [0])
            used_suits.append(suit)
            lo = rng.randrange(0, 14 - spec.size)
            for pos in range(lo, lo + spec.size):
                hand[suit * 13 + pos % 13] += 1
        else:
            rank = rng.randrange(13)
            for _ in range(3):
                hand[rng.randrange(4) * 13 + rank] += 1
    for _ in range(rng.randrange(1, 5)):
        hand[rng.randrange(52)] += 1
    if rng.random() < 0.5:
        # a joker in place of a natural card
        naturals = [c for c in range(52) if hand[c]]
        hand[rng.choice(naturals)] -= 1
        hand[JOKER] += 1
    return hand


class _Rules:
    exact_contract_melds = True

    def __init__(self, gap: int) -> None:
        self.same_suit_run_gap = gap


class _GameStub:
    """The move generators read only the rule options from the game."""

    def __init__(self, gap: int) -> None:
        self.rules = _Rules(gap)


@pytest.mark.parametrize("contract", range(1, 11))
def test_fast_and_reference_agree_while_laying_down(contract: int) -> None:
    from shanghai_env.melds import CONTRACTS, can_fulfil

    rng = random.Random(contract)
    walks = 0
    for trial in range(60):
        gap = trial % 3
        hand = _hand_that_fulfils(contract, rng)
        if not can_fulfil(hand, contract, gap=gap):
            continue
        game = _GameStub(gap)
        melds = [Meld(spec) for spec in CONTRACTS[contract]]
        while not all(m.is_complete(True) for m in melds):
            fast = _placements(game, hand, melds)  # type: ignore[arg-type]
            assert fast == placements_by_search(game, hand, melds)  # type: ignore[arg-type]
            assert fast, "going down never dead-ends"
            move = rng.choice(fast)
            hand[move.card] -= 1
            melds[move.meld].add(move.card, move.place)
        assert sum(hand) >= 1
        walks += 1
    assert walks >= 10
