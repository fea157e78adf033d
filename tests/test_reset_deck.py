"""A stacked first deal given as any iterable of card strings (a generator, say) is read once
and dealt alike by ``Game.reset``, both envs' ``reset(options={"deck": ...})`` and the recorder."""

from __future__ import annotations

import pytest
from helpers import stacked_deck

import shanghai_env
from shanghai_env.engine import Game
from shanghai_env.record import Recorder, replay
from shanghai_env.single_agent import SingleAgentEnv

DECK = stacked_deck(3, "7H 8H 9H 7D 8D 9D 7S 8S 9S JK QC")


def reference() -> Game:
    game = Game(num_players=3, contracts=(1,))
    game.reset(5, deck=iter(DECK), dealer=2)  # Game.reset itself reads a generator once
    return game


def dealt(game: Game) -> tuple[object, ...]:
    return (game.hands, game.stock, game.discard, game.dealer)


@pytest.mark.parametrize("as_given", [iter, tuple, lambda d: (c.lower() for c in d)])
def test_envs_deal_a_deck_given_as_any_iterable(as_given) -> None:
    expected = dealt(reference())
    raw = shanghai_env.raw_env(num_players=3, contracts=(1,))
    raw.reset(seed=5, options={"deck": as_given(DECK), "dealer": 2})
    assert dealt(raw.game) == expected
    wrapped = shanghai_env.env(num_players=3, contracts=(1,))
    wrapped.reset(seed=5, options={"deck": as_given(DECK), "dealer": 2})
    assert dealt(wrapped.unwrapped.game) == expected
    single = SingleAgentEnv(num_players=3, contracts=(1,), learner_seat=0)  # seat 0 plays first
    single.reset(seed=5, options={"deck": as_given(DECK), "dealer": 2})
    assert dealt(single.game) == expected


def test_a_bad_generator_deck_is_refused_and_changes_nothing() -> None:
    raw = shanghai_env.raw_env(num_players=3, contracts=(1,))
    raw.reset(seed=1)
    before = dealt(raw.game)
    short = (c for c in DECK[:-1])
    with pytest.raises(ValueError, match="got 104 cards"):
        raw.reset(seed=5, options={"deck": short})
    assert dealt(raw.game) == before
    single = SingleAgentEnv(num_players=3, contracts=(1,))
    with pytest.raises(ValueError, match="got 104 cards"):
        single.reset(seed=5, options={"deck": (c for c in DECK[:-1])})
    with pytest.raises(ValueError, match="deck must be a list of card strings"):
        raw.reset(seed=5, options={"deck": 7})


def test_the_recorder_keeps_a_generator_deck() -> None:
    rec = Recorder(Game(num_players=3, contracts=(1,)))
    rec.reset(5, deck=iter(DECK), dealer=2)
    assert dealt(rec.game) == dealt(reference())
    record = rec.record()
    assert record["start"]["deck"] == DECK
    assert dealt(replay(record)) == dealt(reference())
