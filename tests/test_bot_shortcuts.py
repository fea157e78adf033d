"""The bots' shortcuts answer exactly as the definitions they replace."""

from __future__ import annotations

import random

from shanghai_env.agents.bots.handtools import fits_table, layable_naturals
from shanghai_env.cards import make_place
from shanghai_env.melds import RUN4, RUN5, RUN7, SET3, Meld


def random_meld(rng: random.Random) -> Meld:
    """A complete table meld: a set, or a run of any length up to 13, aces low or high."""
    spec = rng.choice([SET3, RUN4, RUN5, RUN7])
    meld = Meld(spec)
    if spec is SET3:
        rank = rng.randrange(13)
        for _ in range(rng.randint(3, 6)):
            card = rng.randrange(4) * 13 + rank
            meld.add(card, card)
        return meld
    suit = rng.randrange(4)
    length = rng.randint(spec.size, 13)
    lo = rng.randint(0, 14 - length)
    for pos in range(lo, lo + length):
        place = make_place(suit, pos)
        meld.add(suit * 13 + pos % 13, place)
    return meld


def test_layable_naturals_is_fits_table() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        melds = [random_meld(rng) for _ in range(rng.randint(0, 6))]
        assert layable_naturals(melds) == [c for c in range(52) if fits_table(c, melds)], melds


def test_cheapest_loss_is_the_minimum_over_every_card() -> None:
    from shanghai_env.agents.bots.contract import ContractMeter
    from shanghai_env.agents.bots.handtools import cheapest_loss, minus, points
    from shanghai_env.rules import Rules

    rng = random.Random(5)
    rules = Rules()
    for contract in range(1, 11):
        meter = ContractMeter(contract)
        for _ in range(300):
            hand = [0] * 53
            for c in rng.sample(range(52), rng.randint(6, 14)):
                hand[c] += rng.choice([1, 1, 1, 2])
            hand[52] = rng.choice([0, 0, 1, 2])
            kinds = [c for c in range(52) if hand[c]]
            expected = min(kinds, key=lambda c: (meter.distance(minus(hand, c)), -points(c, rules), c))
            assert cheapest_loss(meter, hand, kinds, rules) == expected, (contract, hand)
            # losing a card never lowers the distance (what the shortcut relies on)
            assert all(meter.distance(minus(hand, c)) >= meter.distance(hand) for c in kinds)


def test_analyse_losses_is_analyse_of_each_loss() -> None:
    from shanghai_env.agents.bots.contract import ContractMeter
    from shanghai_env.agents.bots.handtools import minus

    rng = random.Random(6)
    for contract in range(1, 11):
        for gap in (0, 1, 2):
            fresh, reference = ContractMeter(contract, gap), ContractMeter(contract, gap)
            for _ in range(60):
                hand = [0] * 53
                suits = rng.sample(range(4), rng.randint(1, 4))
                for _ in range(rng.randint(6, 16)):
                    hand[rng.choice(suits) * 13 + rng.randrange(13)] += 1
                hand[52] = rng.choice([0, 0, 1, 2])
                if rng.random() < 0.3:
                    hand[suits[0] * 13] = rng.choice([1, 2])  # aces held once or twice
                cards = [c for c in range(53) if hand[c]]
                expected = [reference.analyse(minus(hand, c)) for c in cards]
                assert fresh.analyse_losses(hand, cards) == expected, (contract, gap, hand)
