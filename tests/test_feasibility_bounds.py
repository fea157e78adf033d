"""``can_fulfil``'s counting shortcuts (exact for sets, a lower bound with runs) agree with the
completion search on many random hands of two and three decks, for every contract and gap."""

from __future__ import annotations

import random

import pytest

from shanghai_env.cards import JOKER
from shanghai_env.melds import CONTRACTS, Meld, _set_jokers, can_fulfil, completion_feasible


def searched(hand: list[int], contract: int, gap: int, exact: bool) -> bool:
    """can_fulfil by the completion search alone (what it answered before the shortcuts)."""
    specs = CONTRACTS[contract]
    if sum(hand) - sum(s.size for s in specs) < 1:
        return False
    return completion_feasible(hand, [Meld(s) for s in specs], gap=gap, exact=exact)


@pytest.mark.parametrize("seed", range(4))
def test_can_fulfil_agrees_with_the_search(seed: int) -> None:
    rng = random.Random(seed)
    fits = 0
    for _ in range(2500):
        decks = rng.choice([2, 3])
        # few ranks and suits, so that contracts often (nearly) fit
        ranks = rng.sample(range(13), rng.randint(3, 13))
        suits = rng.sample(range(4), rng.randint(1, 4))
        pool = [s * 13 + r for s in suits for r in ranks] * decks + [JOKER] * rng.randint(0, decks)
        hand = [0] * 53
        for c in rng.sample(pool, min(len(pool), rng.randint(8, 18))):
            hand[c] += 1
        contract = rng.randint(1, 10)
        gap = rng.choice([0, 1, 1, 2])
        exact = rng.random() < 0.8
        expected = searched(hand, contract, gap, exact)
        assert can_fulfil(hand, contract, gap=gap, exact=exact) == expected, (contract, gap, hand)
        fits += expected
    assert 100 < fits < 2400  # both answers were exercised


def test_set_jokers_counts() -> None:
    def counts(**held: int) -> bytes:
        out = bytearray(13)
        for rank, k in held.items():
            out[int(rank[1:])] = k
        return bytes(out)

    assert _set_jokers(counts(r0=3, r5=3), 2) == 0
    assert _set_jokers(counts(r0=3, r5=2), 2) == 1  # 5 5 JK
    assert _set_jokers(counts(r0=3, r5=1), 2) > 2  # a set needs two naturals: no fit
    assert _set_jokers(counts(r0=4), 2) == 2  # two sets of one rank: 0 0 JK, 0 0 JK
    assert _set_jokers(counts(r0=6), 2) == 0
    assert _set_jokers(counts(r0=6), 3) == 3  # 0 0 JK three times
    assert _set_jokers(counts(r0=5, r1=2), 3) == 2  # 0 0 0, 0 0 JK, 1 1 JK
