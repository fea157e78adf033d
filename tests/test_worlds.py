"""Worlds sampled from a player's view: valid, indistinguishable from the real game, playable,
and with every unseen card free to lie in every hidden place.

States come from seeded games of bots mixed with random moves, for 3 to 8 players, several
contracts and rule options; hypothesis draws the game and the moment.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from helpers import new_game, play, table_text
from hypothesis import given, settings
from hypothesis import strategies as st

from shanghai_env import worlds
from shanghai_env.actions import action_table
from shanghai_env.agents.base import decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.cards import JOKER, NUM_CARD_KINDS, deck_counts, str_to_card
from shanghai_env.engine import Game, Phase, PlayerView
from shanghai_env.moves import MoveKind
from shanghai_env.rules import Rules
from shanghai_env.worlds import WorldSampler, sample_world, unseen_counts

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"max_stock_rebuilds": 0},
    {"max_stock_rebuilds": None},
    {"down_players_may_buy": False},
    {"exact_contract_melds": False},
    {"same_suit_run_gap": 0, "joker_swaps": False},
]


def play_states(
    n: int,
    contracts: tuple[int, ...],
    seed: int,
    options: dict[str, Any],
    every: float = 0.1,
    cap: int = 3000,
) -> list[Game]:
    """Copies of the game at random moments of a seeded game of bots and random moves."""
    game = Game(num_players=n, contracts=contracts, **options)
    game.reset(seed)
    table = action_table(game.rules)
    bots = [PlannerBot(seed=seed + i) if i % 2 else GreedyBot(seed=seed + i) for i in range(n)]
    rng = random.Random(seed)
    out = []
    while not game.game_over and game.move_count < cap:
        if rng.random() < every:
            out.append(game.clone())
        p = game.to_act
        if rng.random() < 0.1:
            move = rng.choice(game.legal_moves())
        else:
            move = table.decode(bots[p].act(decision_for(game, p, table)))
        game.apply(move)
    return out


def view_key(view: PlayerView) -> dict[str, Any]:
    """Every field of a view, melds as plain tuples (a Meld compares by identity)."""
    key = dict(view.__dict__)
    key["table"] = tuple(
        tuple((m.spec, m.rank, m.suit, tuple(m.places), tuple(m.cards), m.jokers) for m in melds)
        for melds in view.table
    )
    return key


def public_state(game: Game) -> tuple[Any, ...]:
    """The engine state every player knows (the hidden part: other hands' cards, stock order)."""
    return (
        game.deal,
        game.contract,
        game.dealer,
        int(game.phase),
        game.to_act,
        game.turn_player,
        tuple(game.offer),
        tuple(game.scores),
        tuple(game.down),
        tuple(game.buys_left),
        tuple(game.hand_sizes),
        tuple(map(tuple, game.picked_up)),
        tuple(game.picked_total),
        game.upcard,
        game.upcard_from,
        tuple(game.discard_counts),
        len(game.stock),
        game.went_down_this_turn,
        game.joker_in_down,
        game.stock_rebuilds_left,
        view_key(game.view(0))["table"],
    )


def check_world(real: Game, world: Game, player: int) -> None:
    world.validate()
    assert view_key(world.view(player)) == view_key(real.view(player))
    assert world.hands[player] == real.hands[player]
    assert world.rules == real.rules
    assert len(world.deal_results) == real.deal
    public = public_state(real)
    if real.rules.max_stock_rebuilds is None:  # the rebuild count is not public then
        assert public_state(world)[:-2] == public[:-2] and world.stock_rebuilds_left is None
    else:
        assert public_state(world) == public
        assert world.reshuffles == real.reshuffles


def random_move_to_end(game: Game, rng: random.Random, validate_every: int = 1) -> int:
    """Random moves (preferring to meld and lay off, so deals end) until the game ends."""
    moves = 0
    while not game.game_over:
        legal = game.legal_moves()
        if game.phase in (Phase.PLAY, Phase.GOING_DOWN):
            active = [m for m in legal if m.kind != MoveKind.DISCARD]
            move = rng.choice(active) if active and rng.random() < 0.9 else rng.choice(legal)
        else:
            move = rng.choice(legal)
        game.apply(move)
        moves += 1
        if moves % validate_every == 0:
            game.validate()
    return moves


game_params = st.tuples(
    st.integers(3, 8),
    st.tuples(st.integers(1, 10), st.integers(1, 10)),
    st.integers(0, len(OPTION_SETS) - 1),
    st.integers(0, 10**6),
    st.floats(0.0, 1.0),
)


@settings(max_examples=40, deadline=None)
@given(game_params)
def test_worlds_are_valid_and_look_the_same(params: tuple[int, tuple[int, int], int, int, float]) -> None:
    n, contracts, option, seed, when = params
    states = play_states(n, contracts, seed, OPTION_SETS[option], every=0.05)
    if not states:
        return
    real = states[int(when * (len(states) - 1))]
    rng = np.random.default_rng(seed)
    for p in range(n):
        sampler = WorldSampler(real.view(p), real.rules)
        for _ in range(3):
            check_world(real, sampler.sample(rng), p)


def test_every_phase_and_seat_is_sampled() -> None:
    """Seeded games reach every phase, seen by the player to act and by the others."""
    seen: Counter[tuple[str, bool]] = Counter()
    for n, contracts, option in [
        (3, (1, 6), 0),
        (4, (2, 8), 1),
        (5, (9, 3), 3),
        (8, (10, 4), 4),
        (6, (5, 7), 5),
    ]:
        for real in play_states(n, contracts, n, OPTION_SETS[option], every=0.08):
            rng = np.random.default_rng(real.move_count)
            for p in range(n):
                check_world(real, sample_world(real.view(p), rng, real.rules), p)
                seen[real.phase.name, p == real.to_act] += 1
    for phase in ("DRAW", "BUY", "PLAY", "GOING_DOWN"):
        assert seen[phase, True] and seen[phase, False], seen


@settings(max_examples=12, deadline=None)
@given(game_params)
def test_worlds_play_to_the_end(params: tuple[int, tuple[int, int], int, int, float]) -> None:
    n, contracts, option, seed, when = params
    options = OPTION_SETS[option]
    if options.get("max_stock_rebuilds", 1) is None:
        options = {}  # random play may never end a deal without a limit on rebuilds
    states = play_states(n, contracts, seed, options, every=0.05)
    if not states:
        return
    real = states[int(when * (len(states) - 1))]
    rng = np.random.default_rng(seed)
    p = int(rng.integers(n))
    world = sample_world(real.view(p), rng, real.rules)
    random_move_to_end(world, random.Random(seed))
    assert world.game_over and len(world.deal_results) == len(contracts)
    assert world.to_act == -1


def test_going_down_seen_by_others_completes() -> None:
    """A player going down keeps, in every world, a hand that completes its contract; the hand's
    unknown cards still vary from world to world."""
    checked = 0
    for n, contracts in [(4, (3, 7)), (4, (10, 5)), (6, (9, 2)), (3, (8, 6))]:
        for real in play_states(n, contracts, 11 * n, {}, every=0.2):
            if real.phase != Phase.GOING_DOWN:
                continue
            turn = real.turn_player
            p = (turn + 1) % n
            sampler = WorldSampler(real.view(p), real.rules)
            rng = np.random.default_rng(checked)
            hands = set()
            for _ in range(8):
                world = sampler.sample(rng)
                check_world(real, world, p)
                world.apply(world.legal_moves()[0])  # going down goes on
                hands.add(tuple(sampler.sample(rng).hands[turn]))
            free = real.hand_sizes[turn] - sum(real.picked_up[turn])
            if free > 1 and sum(unseen_counts(real.view(p))) > free:
                checked += 1
                assert len(hands) > 1
    assert checked >= 3


def finish_going_down(world: Game) -> None:
    """Play the going down of the player in turn to its end (every legal placement keeps it completable)."""
    while world.phase == Phase.GOING_DOWN:
        world.apply(next(m for m in world.legal_moves() if m.kind in (MoveKind.MELD, MoveKind.FINISH)))
    assert world.down[world.turn_player]


def test_going_down_with_cards_others_saw_picked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Player 0 took 9S twice and is laying down a set of 9s and a run; its hand is mostly cards
    seen picked up. Only worlds where the set takes the seen 9S 9S leave room for the run's
    missing cards: the completion search once offered only unseen 9C 9C and gave up."""
    game = new_game(
        {0: "9H 5D 6D 4D 7D KC QH JS TC 3H 2S", 1: "8H 8S 7H 7S 6H AH AS 2H 4H KH QC", 2: "9S KS QS 2C 3C"},
        "9S",
        num_players=3,
        contracts=(2,),
    )
    script = []
    for own, other, passed in zip(
        ["KC", "QH", "JS", "TC", "3H"], ["8H", "8S", "7H", "7S", "6H"], ["9S", "KS", "QS", "2C", "3C"]
    ):
        # player 0 takes the upcard; players 1 and 2 decline theirs and discard, 2 what 0 takes next
        script += ["take", f"discard {own}", "draw", "pass", f"discard {other}", "draw", "pass"]
        script.append(f"discard {passed}")
    play(game, [*script, "take", "meld 0 9H", "meld 1 5D", "meld 1 6D"])
    assert game.phase == Phase.GOING_DOWN and table_text(game, 0) == ["9H", "5D 6D"]
    view = game.view(1)
    assert view.picked_up[0][str_to_card("9S")] == 2
    assert view.hand_sizes[0] - sum(view.picked_up[0]) == 3  # three unknown cards: 4D 7D 2S
    for rejection in (worlds.REJECTION_TRIES, 0):  # 0: straight to the completion search
        monkeypatch.setattr(worlds, "REJECTION_TRIES", rejection)
        sampler = WorldSampler(view, game.rules)
        rng = np.random.default_rng(0)
        for _ in range(30):
            world = sampler.sample(rng)
            check_world(game, world, 1)
            assert world.hands[0][str_to_card("9S")] == 2
            finish_going_down(world)


def take_and_buy_states(n: int, contracts: tuple[int, ...], seed: int) -> Iterator[Game]:
    """The going-down states of a seeded game whose players take and buy upcards whenever they may
    (so hands are mostly cards seen picked up) and lay down as soon as they can."""
    game = Game(num_players=n, contracts=contracts)
    game.reset(seed)
    rng = random.Random(seed)
    while not game.game_over:
        legal = game.legal_moves()
        kinds = {m.kind for m in legal}
        if game.phase == Phase.GOING_DOWN:
            yield game
        if MoveKind.TAKE in kinds and rng.random() < 0.8:
            move = next(m for m in legal if m.kind == MoveKind.TAKE)
        elif MoveKind.BUY in kinds and rng.random() < 0.8:
            move = next(m for m in legal if m.kind == MoveKind.BUY)
        elif game.phase in (Phase.PLAY, Phase.GOING_DOWN):
            active = [m for m in legal if m.kind in (MoveKind.MELD, MoveKind.FINISH, MoveKind.LAYOFF)]
            move = rng.choice(active) if active and rng.random() < 0.95 else rng.choice(legal)
        else:
            move = rng.choice(legal)
        game.apply(move)


def test_going_down_is_sampled_at_every_state_of_take_and_buy_play() -> None:
    """Every going-down state of 20 seeded games (3 to 6 players, many contracts) seen by every
    other player: a world is found and plays the going down to its end (about 1 in 120 of
    these samples failed when the search filled sets with unseen copies first)."""
    samples = 0
    for seed in range(20):
        n = 3 + seed % 4
        for real in take_and_buy_states(n, (1 + seed % 10, 1 + seed * 7 % 10), seed):
            for p in range(n):
                if p == real.turn_player:
                    continue
                world = WorldSampler(real.view(p), real.rules).sample(np.random.default_rng(samples))
                check_world(real, world, p)
                finish_going_down(world)
                samples += 1
    assert samples > 1500


def hidden_places(view: PlayerView) -> list[int]:
    """The places an unseen card may lie in: other players with unknown cards, and the stock (-1)."""
    places = [
        q for q in range(view.num_players) if q != view.player and view.hand_sizes[q] > sum(view.picked_up[q])
    ]
    return places + ([-1] if view.stock_size else [])


@pytest.mark.parametrize(
    ("n", "contracts", "seed"), [(3, (2, 9), 1), (4, (1, 7), 2), (5, (4, 10), 3), (8, (6,), 4)]
)
def test_every_unseen_card_can_lie_everywhere(n: int, contracts: tuple[int, ...], seed: int) -> None:
    """Over many worlds each unseen card lies in each hidden place, as often as uniform dealing
    would put it there; known cards never move."""
    states = [s for s in play_states(n, contracts, seed, {}, every=0.05) if s.phase != Phase.GOING_DOWN]
    for real in states[:: max(1, len(states) // 4)]:
        p = real.to_act if real.phase == Phase.BUY else (real.turn_player + 1) % n
        view = real.view(p)
        unseen = unseen_counts(view)
        places = hidden_places(view)
        slots = {q: view.hand_sizes[q] - sum(view.picked_up[q]) for q in places if q >= 0}
        slots[-1] = view.stock_size
        hidden = sum(unseen)
        assert sum(slots[q] for q in places) == hidden
        sampler = WorldSampler(view, real.rules)
        rng = np.random.default_rng(seed)
        worlds = 2000
        totals = {q: [0] * NUM_CARD_KINDS for q in places}
        for _ in range(worlds):
            world = sampler.sample(rng)
            for q in places:
                if q < 0:
                    for c in world.stock:
                        totals[q][c] += 1
                    continue
                hand = world.hands[q]
                for c in range(NUM_CARD_KINDS):
                    k = hand[c] - view.picked_up[q][c]
                    assert k >= 0  # known pickups always stay
                    totals[q][c] += k
        for c in range(NUM_CARD_KINDS):
            for q in places:
                if unseen[c] == 0:
                    assert totals[q][c] == 0
                    continue
                assert totals[q][c] > 0, f"card {c} never lies in place {q}"
                expected = worlds * unseen[c] * slots[q] / hidden
                assert abs(totals[q][c] - expected) < 6 * expected**0.5 + 2


def test_unseen_counts_add_up() -> None:
    real = play_states(4, (2,), 5, {}, every=0.2)[3]
    view = real.view(1)
    unseen = unseen_counts(view)
    assert sum(unseen) == len(real.stock) + sum(
        real.hand_sizes[q] - sum(real.picked_up[q]) for q in range(4) if q != 1
    )
    total = [a + b for a, b in zip(unseen, view.hand)]
    assert all(t <= d for t, d in zip(total, deck_counts(4)))


def test_sampling_is_seeded_and_worlds_are_independent() -> None:
    real = play_states(4, (3,), 9, {}, every=0.2)[5]
    view = real.view(real.to_act)
    sampler = WorldSampler(view, real.rules)
    a = sampler.sample(np.random.default_rng(7))
    b = sampler.sample(np.random.default_rng(7))
    c = sampler.sample(np.random.default_rng(8))
    assert (a.hands, a.stock, a.seed_entropy) == (b.hands, b.stock, b.seed_entropy)
    assert (a.hands, a.stock) != (c.hands, c.stock) and a.seed_entropy != c.seed_entropy
    random_move_to_end(a, random.Random(0), validate_every=50)  # playing one world changes no other
    d = sampler.sample(np.random.default_rng(7))
    assert (d.hands, d.stock, d.phase) == (b.hands, b.stock, b.phase)


def test_later_deals_come_from_the_generator() -> None:
    """A world's next deal is dealt from its own entropy, not the real game's seed."""
    real = play_states(4, (1, 2), 3, {}, every=0.3)[1]
    assert real.deal == 0
    decks = set()
    for seed in range(3):
        world = sample_world(real.view(0), np.random.default_rng(seed), real.rules)
        random_move_to_end_of_deal(world, random.Random(seed))
        decks.add(tuple(map(tuple, world.hands)))
    assert len(decks) == 3


def random_move_to_end_of_deal(game: Game, rng: random.Random) -> None:
    deal = game.deal
    while game.deal == deal and not game.game_over:
        legal = game.legal_moves()
        active = [m for m in legal if m.kind not in (MoveKind.DISCARD, MoveKind.DRAW)]
        game.apply(rng.choice(active) if active and rng.random() < 0.9 else rng.choice(legal))


def test_bad_input_is_refused() -> None:
    real = play_states(4, (1,), 0, {}, every=0.3)[0]
    view = real.view(0)
    with pytest.raises(ValueError, match="4-player game, the rules are for 5"):
        WorldSampler(view, Rules(num_players=5))
    with pytest.raises(ValueError, match="contract"):
        WorldSampler(view, Rules(contracts=(2,)))
    with pytest.raises(TypeError):
        WorldSampler("not a view", real.rules)  # type: ignore[arg-type]
    over = Game(num_players=4, contracts=(1,))
    over.reset(0)
    over.abandon_deal()
    with pytest.raises(ValueError, match="over"):
        WorldSampler(over.view(0), over.rules)


@pytest.mark.parametrize("rng", [3, None, np.random.RandomState(0), random.Random(0)])
def test_a_generator_that_is_no_numpy_generator_is_refused(rng: Any) -> None:
    view = play_states(4, (1,), 0, {}, every=0.3)[0].view(0)
    with pytest.raises(TypeError, match=r"rng must be a numpy.random.Generator .*got "):
        WorldSampler(view).sample(rng)
    with pytest.raises(TypeError, match=r"rng must be a numpy.random.Generator"):
        sample_world(view, rng)


def test_a_view_of_another_table_size_is_refused() -> None:
    view = play_states(3, (1,), 0, {}, every=0.3)[0].view(0)
    with pytest.raises(ValueError, match=r"view.hand_sizes must hold 4 entries \(one per seat\), got 3"):
        sample_world(dataclasses.replace(view, num_players=4), np.random.default_rng(0))
    with pytest.raises(ValueError, match="3-player game, the rules are for 4"):
        sample_world(view, np.random.default_rng(0), Rules(num_players=4))
    with pytest.raises(ValueError, match=r"view.discard_counts must hold 53 entries"):
        sample_world(
            dataclasses.replace(view, discard_counts=view.discard_counts[:52]), np.random.default_rng(0)
        )


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"phase": 9}, ValueError, r"view.phase must be a Phase \(DRAW, BUY, PLAY, GOING_DOWN\), got 9"),
        ({"phase": "PLAY"}, TypeError, "view.phase must be a Phase"),
        ({"player": 4}, ValueError, "view.player must be a seat 0..3 in a 4-player game, got 4"),
        ({"player": -1}, ValueError, "view.player must be a seat 0..3 in a 4-player game, got -1"),
        ({"player": 1.0}, TypeError, "view.player must be a seat 0..3, got 1.0"),
        ({"to_act": 7}, ValueError, "view.to_act must be a seat 0..3"),
        ({"turn_player": 4}, ValueError, "view.turn_player must be a seat 0..3"),
        ({"dealer": 9}, ValueError, "view.dealer must be a seat 0..3 in a 4-player game, got 9"),
        ({"dealer": -1}, ValueError, "view.dealer must be a seat 0..3"),
        ({"upcard_from": 4}, ValueError, r"view.upcard_from must be a seat 0..3 or -1 \(nobody\)"),
        ({"deal_moves": -1}, ValueError, "view.deal_moves must be >= 0"),
        ({"deal_moves": 3000}, ValueError, "view.deal_moves must be >= 0 and below 3000"),
    ],
)
def test_an_impossible_view_is_refused(change: dict[str, Any], error: type[Exception], message: str) -> None:
    """A view no game shows is refused with a message naming the field (it was sampled silently,
    or failed with an unrelated message)."""
    real = next(s for s in play_states(4, (1,), 0, {}, every=0.3) if s.phase == Phase.PLAY)
    view = real.view(real.turn_player)
    with pytest.raises(error, match=message):
        sample_world(dataclasses.replace(view, **change), np.random.default_rng(0), real.rules)


def test_phase_and_player_to_act_must_agree() -> None:
    real = next(s for s in play_states(4, (1,), 0, {}, every=0.3) if s.phase == Phase.PLAY)
    view = real.view(real.turn_player)
    other = (real.turn_player + 1) % 4
    with pytest.raises(ValueError, match=r"in phase PLAY the player to act .* must be the player in turn"):
        sample_world(dataclasses.replace(view, to_act=other), np.random.default_rng(0), real.rules)
    with pytest.raises(ValueError, match=r"in phase BUY the player to act .* is never the player in turn"):
        sample_world(dataclasses.replace(view, phase=Phase.BUY), np.random.default_rng(0), real.rules)
    sizes = list(view.hand_sizes)
    sizes[view.player] += 1
    with pytest.raises(ValueError, match=r"view.hand holds \d+ cards, but player_\d's hand size is \d+"):
        sample_world(dataclasses.replace(view, hand_sizes=tuple(sizes)), np.random.default_rng(0), real.rules)


def test_a_world_ends_its_deal_at_the_real_deals_move_cap() -> None:
    """The moves of the deal so far are public: a world's deal reaches the rule's cap when the
    real deal does."""
    game = Game(num_players=4, contracts=(1, 2), max_moves_per_deal=60)
    game.reset(5)
    rng = random.Random(5)
    for _ in range(45):
        game.apply(rng.choice(game.legal_moves()))
    assert game.view(2).deal_moves == 45 and not game.deal_results
    world = sample_world(game.view(2), np.random.default_rng(1), game.rules)
    check_world(game, world, 2)
    for k in range(15):
        assert not world.deal_results, k
        world.apply(world.legal_moves()[0])
    assert world.deal_results[0].capped and world.deal == 1 and world.view(0).deal_moves == 0


def test_joker_in_down_is_rebuilt() -> None:
    """Going down with a joker, seen from another seat: the blind bonus of the world is right."""
    found = 0
    for seed in range(40):
        for real in play_states(4, (6,), seed, {}, every=0.5):
            if not real.went_down_this_turn or real.phase != Phase.PLAY:
                continue
            world = sample_world(
                real.view((real.turn_player + 2) % 4), np.random.default_rng(seed), real.rules
            )
            assert world.joker_in_down == real.joker_in_down
            found += real.joker_in_down
            if any(JOKER in m.cards for m in real.table[real.turn_player]):
                assert world.joker_in_down
        if found >= 2:
            break
    assert found >= 1
