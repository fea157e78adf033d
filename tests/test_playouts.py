"""Seeded random playouts: invariants after every move, every legal move accepted, others refused.

Each game is a single deal (``contracts=(k,)``) so that every contract 1..10 is played often, under
several option sets. Some seats play at random (preferring to meld, lay off and swap when they can)
and some play the greedy player of ``helpers``, so that deals end, players go out (blind too),
buy, lay off and swap. Games are capped in moves; random deals can be very long.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from helpers import greedy_move

from shanghai_env import Game, Phase
from shanghai_env.actions import ActionTable
from shanghai_env.cards import JOKER, NUM_PLACES, PLACE_CARD, place_to_str
from shanghai_env.engine import NO_PLAYER
from shanghai_env.melds import SET
from shanghai_env.moves import Move, MoveKind

OPTION_SETS = [
    {},
    {"exact_contract_melds": False},
    {"same_suit_run_gap": 0},
    {"joker_swaps": False},
    {"down_players_may_buy": False},
    {"same_suit_run_gap": 2, "joker_points": 0},
]


def random_move(g: Game, rng: random.Random) -> Move:
    moves = g.legal_moves()
    if g.phase == Phase.BUY:
        return moves[0] if rng.random() < 0.35 else moves[1]
    if g.phase == Phase.DRAW:
        return rng.choice(moves)
    active = [m for m in moves if m.kind != MoveKind.DISCARD]
    if active and rng.random() < 0.9:
        return rng.choice(active)
    return rng.choice([m for m in moves if m.kind == MoveKind.DISCARD] or moves)


def fingerprint(g: Game) -> tuple:
    return (
        int(g.phase),
        g.to_act,
        g.turn_player,
        g.deal,
        g.move_count,
        tuple(map(tuple, g.hands)),
        tuple(g.stock),
        tuple(g.discard),
        tuple(tuple((tuple(m.cards), tuple(m.places)) for m in t) for t in g.table),
        tuple(g.down),
        tuple(g.buys_left),
        tuple(g.scores),
        tuple(g.offer),
        len(g.deal_results),
    )


def near_misses(move: Move, rng: random.Random, num_players: int, max_melds: int) -> list[Move]:
    """Moves like a legal one with one field changed: a card, a place, a seat or a meld."""
    out = []
    if move.kind == MoveKind.DISCARD:
        out.append(move._replace(card=rng.randrange(53)))
    elif move.kind in (MoveKind.MELD, MoveKind.LAYOFF, MoveKind.SWAP):
        place = rng.randrange(NUM_PLACES)
        card = move.card if move.card == 52 and move.kind != MoveKind.SWAP else PLACE_CARD[place]
        out.append(move._replace(card=card, place=place))
        out.append(move._replace(meld=rng.randrange(max_melds)))
        if move.kind != MoveKind.MELD:
            out.append(move._replace(seat=rng.randrange(num_players)))
    return out


def expected_table_moves(g: Game) -> set[str]:
    """Layoffs and swaps open to the player in turn, worked out from docs/rules.md 5.3."""
    p, n = g.turn_player, g.num_players
    if g.phase != Phase.PLAY or not g.down[p] or g.went_down_this_turn:
        return set()
    hand = g.hands[p]
    out = set()
    for seat in range(n):
        for j, meld in enumerate(g.table[(p + seat) % n]):
            naturals = [c for c in meld.cards if c != JOKER]
            if meld.spec.kind == SET:
                fits = [s * 13 + naturals[0] % 13 for s in range(4)]
            else:
                positions = [13 if q >= 52 else q % 13 for q in meld.places]
                lo, hi, suit = min(positions), max(positions), naturals[0] // 13
                ends = [pos for pos in (lo - 1, hi + 1) if 0 <= pos <= 13 and hi - lo + 1 < 13]
                fits = [52 + suit if pos == 13 else suit * 13 + pos for pos in ends]
            for place in fits:
                text = place_to_str(place)
                if g.hand_sizes[p] >= 2 and hand[PLACE_CARD[place]]:
                    out.add(f"layoff {text} {seat}.{j}")
                if g.hand_sizes[p] >= 2 and hand[JOKER] and meld.jokers < meld.spec.max_jokers:
                    out.add(f"layoff JK={text} {seat}.{j}")
            if g.rules.joker_swaps:
                for card, place in zip(meld.cards, meld.places):
                    if card == JOKER and hand[PLACE_CARD[place]]:
                        out.add(f"swap {place_to_str(place)} {seat}.{j}")
    return out


def expected_askers(g: Game, discarder: int) -> list[int]:
    """Who is offered a declined upcard, in order (docs/rules.md 5.1)."""
    n, turn = g.num_players, g.turn_player
    return [
        q
        for q in ((turn + k) % n for k in range(1, n))
        if q != discarder and g.buys_left[q] > 0 and (g.rules.down_players_may_buy or not g.down[q])
    ]


def check_hand_sizes(before: list[int], g: Game, move: Move, actor: int, turn: int) -> None:
    """How each kind of move changes the hands (the deal may have ended instead)."""
    if g.game_over:
        return
    change = [a - b for a, b in zip(g.hand_sizes, before)]
    expected = [0] * g.num_players
    if move.kind == MoveKind.TAKE:
        expected[actor] = 1
    elif move.kind in (MoveKind.DISCARD, MoveKind.MELD, MoveKind.LAYOFF):
        expected[actor] = -1
    elif move.kind == MoveKind.BUY:
        expected[actor] = 2  # the upcard and the penalty card
        expected[turn] = 1  # then the player in turn draws
    elif move.kind in (MoveKind.DRAW, MoveKind.PASS) and g.phase == Phase.PLAY:
        expected[turn] = 1  # nobody (else) to ask: the player in turn draws
    assert change == expected, (move, change, expected)


def check_refusals(g: Game, legal: list[Move], table: ActionTable, rng: random.Random) -> int:
    """Random action ids and near misses that are not legal raise ValueError and change nothing."""
    legal_set = set(legal)
    others = [table.decode(rng.randrange(len(table))) for _ in range(3)]
    others += near_misses(rng.choice(legal), rng, g.num_players, table.max_melds)
    before = fingerprint(g)
    refused = 0
    for move in others:
        if move in legal_set:
            continue
        with pytest.raises(ValueError):
            g.apply(move)
        refused += 1
    assert fingerprint(g) == before
    return refused


def play_games(num_players: int, seed: int, cap: int, rounds: int, greedy_share: float = 0.5) -> Counter:
    """``rounds`` single-deal games for each contract 1..10; returns what happened.

    Each seat plays greedily with probability ``greedy_share``, otherwise at random."""
    stats: Counter = Counter()
    rng = random.Random(seed)
    for round_ in range(rounds):
        for contract in range(1, 11):
            options = OPTION_SETS[(round_ * 10 + contract + num_players) % len(OPTION_SETS)]
            g = Game(num_players=num_players, contracts=(contract,), **options)
            g.reset(seed=seed * 1000 + round_ * 10 + contract)
            table = ActionTable(g.rules)
            greedy = [rng.random() < greedy_share for _ in range(num_players)]
            discarder = NO_PLAYER
            askers: list[int] = []
            stats["games"] += 1
            moves = 0
            while not g.game_over and moves < cap:
                legal = g.legal_moves()
                assert legal
                sample_discard = rng.choice(legal)
                for move in legal:
                    trial = g.clone()
                    trial.apply(move)
                    if move.kind != MoveKind.DISCARD or move is sample_discard:
                        trial.validate()  # discards are alike: check one in full
                stats["checked"] += len(legal)
                stats["refused"] += check_refusals(g, legal, table, rng)
                table_moves = {str(m) for m in legal if m.kind in (MoveKind.LAYOFF, MoveKind.SWAP)}
                assert table_moves == expected_table_moves(g)
                if g.phase == Phase.BUY:
                    assert g.to_act == askers.pop(0)
                actor, turn = g.to_act, g.turn_player
                move = greedy_move(g, rng) if greedy[actor] else random_move(g, rng)
                if move.kind == MoveKind.DRAW:
                    askers = expected_askers(g, discarder)
                elif move.kind == MoveKind.DISCARD:
                    discarder = actor
                was_down, sizes = g.down[actor], g.hand_sizes[:]
                g.apply(move)
                g.validate()
                check_hand_sizes(sizes, g, move, actor, turn)
                if g.phase == Phase.PLAY and move.kind in (MoveKind.DRAW, MoveKind.PASS):
                    assert askers == [], "a player with the right to buy was not asked"
                moves += 1
                stats[move.kind.name] += 1
                if not was_down and not g.game_over and g.down[actor]:
                    stats["went down"] += 1
            stats["moves"] += moves
            stats["reshuffles"] += g.reshuffles  # a single deal: the count stays after it ends
            if g.game_over:
                result = g.deal_results[0]
                stats["deals ended"] += 1
                stats["went out"] += result.out_player != NO_PLAYER
                stats["blind"] += result.blind
                assert g.scores == list(result.scores)
                if result.out_player != NO_PLAYER:
                    assert result.scores[result.out_player] in ((-25, -50) if result.blind else (0,))
    return stats


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
def test_random_playouts(num_players):
    stats = play_games(num_players, seed=num_players, cap=700, rounds=2)
    assert stats["moves"] >= 4000
    for kind in ("TAKE", "DRAW", "BUY", "PASS", "DISCARD", "MELD", "LAYOFF", "SWAP"):
        assert stats[kind] > 0, (kind, stats)
    assert stats["went down"] >= 10
    assert stats["went out"] >= 3
    assert stats["refused"] >= stats["moves"]


def test_playouts_cover_the_rare_events():
    """Going out blind, ``finish`` (longer melds) and rebuilding an empty stock."""
    stats = Counter()
    for num_players in (3, 5):
        stats += play_games(num_players, seed=100 + num_players, cap=700, rounds=1)
    assert stats["FINISH"] > 0, stats
    assert stats["blind"] > 0, stats
    assert stats["reshuffles"] > 0, stats


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("seed", [11, 12])
def test_long_random_playouts(num_players, seed):
    """More seeds and longer games (up to 2000 moves, so that stocks run dry and are rebuilt)."""
    stats = play_games(num_players, seed=seed * 10 + num_players, cap=2000, rounds=3, greedy_share=0.3)
    assert stats["moves"] >= 8000
    assert stats["went out"] >= 5
    assert stats["reshuffles"] > 0
