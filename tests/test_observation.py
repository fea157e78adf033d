"""The observation and state vectors: layout, agreement with the engine's PlayerView, no
hidden information, and the generated docs/observation.md."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from shanghai_env import Game, Rules
from shanghai_env.actions import action_table
from shanghai_env.aec import DOCS_MARKER, generated_docs
from shanghai_env.cards import JOKER, NUM_CARD_KINDS, NUM_PLACES
from shanghai_env.decision import decision_for
from shanghai_env.engine import Phase, PlayerView
from shanghai_env.observation import ObservationEncoder, StateEncoder

ROOT = Path(__file__).resolve().parent.parent


def random_states(players: int, seed: int, steps: int, contracts=(1, 4, 9)) -> Iterator[Game]:
    """States of a seeded random game; going down, layoffs and swaps are preferred."""
    game = Game(Rules(num_players=players, contracts=contracts))
    game.reset(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if game.game_over:
            return
        yield game
        moves = game.legal_moves()
        table_moves = [m for m in moves if m.kind >= 5]
        pool = table_moves if table_moves and rng.random() < 0.9 else moves
        game.apply(pool[rng.randrange(len(pool))])


# --- layout -----------------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(3, 9))
@pytest.mark.parametrize("cls", [ObservationEncoder, StateEncoder])
def test_slices_tile_the_vector(players: int, cls) -> None:
    enc = cls(Rules(num_players=players))
    pos = 0
    for sl in enc.slices.values():
        assert sl.start == pos and sl.stop > sl.start
        pos = sl.stop
    assert pos == enc.size == len(enc.low) == len(enc.high)
    assert (enc.low <= enc.high).all()


def test_sizes() -> None:
    assert ObservationEncoder(Rules(num_players=4)).size == 2293
    assert ObservationEncoder(Rules(num_players=8)).size == 4333
    small = ObservationEncoder(Rules(num_players=4, contracts=(1,)))
    assert small.slices["table"].stop - small.slices["table"].start == 4 * 2 * 2 * NUM_PLACES


def test_docs_observation_md_matches_the_code() -> None:
    text = (ROOT / "docs" / "observation.md").read_text(encoding="utf-8")
    assert DOCS_MARKER in text, "docs/observation.md lost its generated section"
    generated = text.split(DOCS_MARKER, 1)[1].lstrip("\n")
    assert generated == generated_docs()["docs/observation.md"], (
        "docs/observation.md is out of date: run python -c 'import shanghai_env.aec as m; m.write_docs()'"
    )
    for name in ObservationEncoder(Rules()).slices:
        assert f"`{name}`" in generated


# --- agreement with the engine's PlayerView ---------------------------------------------------


def decode_table(
    vec: np.ndarray, enc: ObservationEncoder, seat: int, meld: int
) -> tuple[list[int], list[int]]:
    per = 2 * NUM_PLACES
    start = enc.slices["table"].start + (seat * enc.max_melds + meld) * per
    block = vec[start : start + per]
    return block[:NUM_PLACES].tolist(), block[NUM_PLACES:].tolist()


def check_against_view(game: Game, enc: ObservationEncoder, player: int) -> None:
    vec = enc.encode(game, player)
    view = game.view(player)
    n = game.num_players
    s = enc.slices

    def rel(values) -> list[int]:
        return [int(values[(player + r) % n]) for r in range(n)]

    def one_hot(name: str, index: int | None) -> None:
        expected = np.zeros(s[name].stop - s[name].start, dtype=np.int8)
        if index is not None:
            expected[index] = 1
        assert np.array_equal(vec[s[name]], expected), name

    assert vec[s["hand"]].tolist() == list(view.hand)
    assert vec[s["hand_sizes"]].tolist() == rel(view.hand_sizes)
    assert vec[s["buys_left"]].tolist() == rel(view.buys_left)
    assert vec[s["down"]].tolist() == rel(view.down)
    assert vec[s["scores"]].tolist() == [max(-128, min(127, (x + 5) // 10)) for x in rel(view.scores)]
    assert vec[s["discard_counts"]].tolist() == list(view.discard_counts)
    picked = vec[s["picked_up"]].reshape(n, NUM_CARD_KINDS)
    for r in range(n):
        assert picked[r].tolist() == list(view.picked_up[(player + r) % n])
    one_hot("discard_top", view.upcard if view.upcard >= 0 else None)
    on_offer = view.upcard >= 0 and view.phase in (Phase.DRAW, Phase.BUY)
    one_hot("upcard_offered", view.upcard if on_offer else None)
    one_hot("upcard_from", (view.upcard_from - player) % n if view.upcard_from >= 0 else None)
    one_hot("to_act", (view.to_act - player) % n if view.to_act >= 0 else None)
    one_hot("turn_player", (view.turn_player - player) % n)
    one_hot("dealer", (view.dealer - player) % n)
    one_hot("contract", view.contract - 1)
    one_hot("deal", view.deal)
    one_hot("phase", int(view.phase))
    assert vec[s["stock_size"]][0] == min(view.stock_size, 127)
    assert vec[s["discard_size"]][0] == min(view.discard_size, 127)
    for r in range(n):
        melds = view.table[(player + r) % n]
        for j in range(enc.max_melds):
            naturals, jokers = decode_table(vec, enc, r, j)
            want_n, want_j = [0] * NUM_PLACES, [0] * NUM_PLACES
            if j < len(melds):
                for card, place in zip(melds[j].cards, melds[j].places):
                    (want_j if card == JOKER else want_n)[place] += 1
            assert (naturals, jokers) == (want_n, want_j), f"seat {r} meld {j}"


@pytest.mark.parametrize("players", [3, 4, 6, 8])
def test_observation_agrees_with_player_view(players: int) -> None:
    enc = ObservationEncoder(Rules(num_players=players, contracts=(1, 4, 9)))
    seen_jokers = seen_melds = 0
    for step, game in enumerate(random_states(players, seed=players, steps=1500)):
        if step % 5:
            continue
        for p in range(players):
            check_against_view(game, enc, p)
        seen_melds += sum(len(m) for m in game.table)
        seen_jokers += sum(meld.jokers for melds in game.table for meld in melds)
    assert seen_melds and seen_jokers


@pytest.mark.parametrize("players", [3, 4, 6, 8])
def test_a_decisions_observation_is_the_games_from_what_the_seat_knows(players: int) -> None:
    """decision_for's observation, encoded from a SeatState (the view and two public facts, no
    Game), is the encoder's vector of the game at every decision: buy offers, jokers laid going
    down, melds; with the env's encoder shared (its caches interleaved) or not."""
    rules = Rules(num_players=players, contracts=(1, 4, 9), max_stock_rebuilds=1)
    shared, table = ObservationEncoder(rules), action_table(rules)
    seen = {"offer": 0, "joker_in_down": 0, "picked": 0}
    for step, game in enumerate(random_states(players, seed=players, steps=1500, contracts=rules.contracts)):
        p = game.to_act
        decision = decision_for(game, p, table, shared if step % 2 else ObservationEncoder(rules))
        obs = decision.observation
        expected = shared.encode(game, p)
        assert np.array_equal(obs, expected), f"step {step}"
        assert np.array_equal(decision.observation, expected)  # read once, kept
        seen["offer"] += bool(game.offer)
        seen["joker_in_down"] += game.joker_in_down
        seen["picked"] += any(game.picked_total)
    assert all(seen.values()), seen


def test_encode_out_and_table_shortcut() -> None:
    game = next(g for i, g in enumerate(random_states(4, 1, 400)) if i == 399)
    enc = ObservationEncoder(game.rules)
    fresh = enc.encode(game, 2)
    out = np.full(enc.size, 99, dtype=np.int8)
    assert enc.encode(game, 2, out) is out
    assert np.array_equal(out, fresh)
    assert np.array_equal(enc.encode(game, 2, table=enc.table_bytes(game)), fresh)
    assert fresh.dtype == np.int8 and fresh.flags.writeable


# --- no hidden information --------------------------------------------------------------------


def reshuffle_hidden(game: Game, observer: int, rng: random.Random) -> Game:
    """A copy in which everything ``observer`` cannot see is redealt: other players' unseen cards
    (their hands minus the cards they were seen to pick up) and the stock, order included."""
    other = game.clone()
    n = game.num_players
    pool: list[int] = list(other.stock)
    for q in range(n):
        if q == observer:
            continue
        for c in range(NUM_CARD_KINDS):
            pool += [c] * (other.hands[q][c] - other.picked_up[q][c])
    rng.shuffle(pool)
    for q in range(n):
        if q == observer:
            continue
        hand = list(other.picked_up[q])
        for _ in range(other.hand_sizes[q] - sum(hand)):
            hand[pool.pop()] += 1
        other.hands[q] = hand
    other.stock = pool
    other.forget_caches()

    # cards are conserved (validate() would also demand legal moves, which a redealt hand of a
    # player in the middle of going down need not have: the test only compares observations)
    def hidden_counts(g: Game) -> list[int]:
        return [sum(h[c] for h in g.hands) + g.stock.count(c) for c in range(NUM_CARD_KINDS)]

    assert hidden_counts(other) == hidden_counts(game)
    assert other.hand_sizes == [sum(h) for h in other.hands]
    return other


def same_view(a: PlayerView, b: PlayerView) -> bool:
    """Views are equal (Meld compares by identity, so tables are compared as text)."""
    tables = [[[repr(m) for m in melds] for melds in v.table] for v in (a, b)]
    return replace(a, table=()) == replace(b, table=()) and tables[0] == tables[1]


@pytest.mark.parametrize("players", [3, 4, 8])
def test_hidden_cards_do_not_reach_the_observation(players: int) -> None:
    rules = Rules(num_players=players, contracts=(1, 4, 9))
    enc, state_enc = ObservationEncoder(rules), StateEncoder(rules)
    rng = random.Random(players)
    checked = state_changed = 0
    for step, game in enumerate(random_states(players, seed=10 + players, steps=1200)):
        if step % 7:
            continue
        for observer in range(players):
            other = reshuffle_hidden(game, observer, rng)
            assert np.array_equal(enc.encode(other, observer), enc.encode(game, observer))
            if game.to_act != observer:
                assert same_view(game.view(observer), other.view(observer))
            state_changed += not np.array_equal(state_enc.encode(other), state_enc.encode(game))
            checked += 1
    assert checked > 100
    assert state_changed > checked // 2  # the omniscient state does see the hidden cards


# --- the omniscient state ---------------------------------------------------------------------


def test_state_holds_every_hand_and_the_stock() -> None:
    for step, game in enumerate(random_states(4, seed=3, steps=600)):
        if step % 50:
            continue
        enc = StateEncoder(game.rules)
        vec = enc.encode(game)
        s = enc.slices
        assert vec[s["hands"]].reshape(4, NUM_CARD_KINDS).tolist() == game.hands
        counts = np.bincount(np.asarray(game.stock, dtype=np.int64), minlength=NUM_CARD_KINDS)
        assert vec[s["stock_counts"]].tolist() == counts.tolist()
        top = vec[s["stock_top"]]
        assert top.sum() == (1 if game.stock else 0)
        if game.stock:
            assert top[game.stock[-1]] == 1
        obs0 = ObservationEncoder(game.rules).encode(game, 0)
        # seen from seat 0, the public part of the state is the observation's
        for name in ("table", "discard_counts", "picked_up", "hand_sizes", "scores", "to_act"):
            o = ObservationEncoder(game.rules).slices[name]
            assert np.array_equal(vec[s[name]], obs0[o]), name
