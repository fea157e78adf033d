"""Melds, contracts, joker limits and the same-suit gap (docs/rules.md sections 2, 4 and 5.2)."""

from __future__ import annotations

import pytest

from shanghai_env.cards import JOKER, counts_of, parse_cards, str_to_card, str_to_place
from shanghai_env.melds import (
    CONTRACTS,
    RUN,
    RUN4,
    RUN5,
    RUN7,
    RUN10,
    SET,
    SET3,
    Meld,
    buys_allowed,
    can_fulfil,
    contract_size,
    meld_is_valid,
)


def fulfil(text: str, contract: int, **options: object) -> bool:
    return can_fulfil(counts_of(parse_cards(text)), contract, **options)  # type: ignore[arg-type]


def build(spec, text: str) -> Meld:
    """A meld from text like ``"7C 7D JK=7H"`` or ``"JH QH KH AH^"`` (no checks)."""
    meld = Meld(spec)
    for item in text.split():
        if item.upper().startswith("JK="):
            meld.add(JOKER, str_to_place(item[3:]))
        else:
            place = str_to_place(item)
            meld.add(str_to_card(item.rstrip("^")), place)
    return meld


def can_build(spec, text: str, exact: bool = True) -> bool:
    """Can the cards be laid down one by one, in this order, as this contract meld?"""
    meld = Meld(spec)
    for item in text.split():
        if item.upper().startswith("JK="):
            card, place = JOKER, str_to_place(item[3:])
        else:
            card, place = str_to_card(item.rstrip("^")), str_to_place(item)
        if not meld.fits_building(card, place, exact):
            return False
        meld.add(card, place)
    return meld.is_complete(exact)


def can_lay_off(meld: Meld, item: str) -> bool:
    if item.upper().startswith("JK="):
        return meld.fits_layoff(JOKER, str_to_place(item[3:]))
    return meld.fits_layoff(str_to_card(item.rstrip("^")), str_to_place(item))


# --- the contracts table (docs/rules.md section 2) --------------------------------------------------


def test_contract_table():
    described = {
        c: [("set" if s.kind == SET else "run", s.size) for s in specs] for c, specs in CONTRACTS.items()
    }
    assert described == {
        1: [("set", 3), ("set", 3)],
        2: [("set", 3), ("run", 4)],
        3: [("run", 4), ("run", 4)],
        4: [("set", 3), ("set", 3), ("set", 3)],
        5: [("set", 3), ("run", 7)],
        6: [("set", 3), ("set", 3), ("run", 5)],
        7: [("run", 4), ("run", 4), ("run", 4)],
        8: [("set", 3), ("run", 10)],
        9: [("set", 3), ("set", 3), ("set", 3), ("run", 5)],
        10: [("run", 5), ("run", 5), ("run", 5)],
    }
    assert [contract_size(c) for c in range(1, 11)] == [6, 7, 8, 9, 10, 11, 12, 13, 14, 15]


def test_joker_limits_table():
    assert [(s.kind, s.size, s.max_jokers) for s in (SET3, RUN4, RUN5, RUN7, RUN10)] == [
        (SET, 3, 1),
        (RUN, 4, 1),
        (RUN, 5, 2),
        (RUN, 7, 3),
        (RUN, 10, 4),
    ]


def test_buys_per_deal():
    assert [buys_allowed(c) for c in range(1, 11)] == [3, 3, 3, 3, 3, 3, 3, 3, 4, 4]


# --- sets ---------------------------------------------------------------------------------


def test_two_sets_of_three():
    assert fulfil("7C 7D 7H 9C 9D 9S KS", 1)
    assert not fulfil("7C 7D 8H 9C 9D 9S KS", 1)
    assert not fulfil("7C 7D 9C 9D 9S KS 2C", 1)


def test_set_suits_may_repeat():
    assert fulfil("7C 7C 7D 9S 9S 9S 2C", 1)
    assert can_build(SET3, "7C 7C 7C")


def test_set_needs_the_same_rank():
    assert not can_build(SET3, "7C 7D 8H")
    assert not meld_is_valid(build(SET3, "7C 7D 8H"), exact=True)
    assert meld_is_valid(build(SET3, "7C 7D 7H"), exact=True)


def test_two_sets_may_share_a_rank():
    assert fulfil("7C 7D 7H 7S 7C 7D KS", 1)


def test_contract_needs_one_card_more_than_its_size():
    assert not fulfil("7C 7D 7H 9C 9D 9S", 1)
    assert fulfil("7C 7D 7H 9C 9D 9S", 1, reserve=0)
    assert not fulfil("7C 7D 7H 9C 9D", 1, reserve=0)


def test_set_holds_at_most_one_joker():
    assert fulfil("7C 7D JK 9C 9D 9S KS", 1)
    assert fulfil("7C 7D JK 9C 9D JK KS", 1)  # one joker in each set
    assert not fulfil("7C JK JK 9C 9D 9S KS", 1)
    assert can_build(SET3, "7C 7D JK=7H")
    assert not can_build(SET3, "7C JK=7D JK=7H")


def test_joker_in_a_set_declares_a_card_of_the_set_rank():
    assert can_build(SET3, "QC QD JK=QS")
    assert can_build(SET3, "QC QD JK=QC")  # suits may repeat
    assert not can_build(SET3, "QC QD JK=KS")
    assert not can_build(SET3, "AC AD JK=AH^")  # a high ace is a run place only


def test_a_meld_starts_with_a_natural_card():
    assert not can_build(SET3, "JK=7H 7C 7D")
    assert not can_build(RUN4, "JK=5H 6H 7H 8H")
    assert can_build(RUN4, "6H 7H 8H JK=5H")


# --- runs ---------------------------------------------------------------------------------


def test_set_and_run_of_four():
    assert fulfil("5H 6H 7H 8H KC KD KS 2C", 2)
    assert fulfil("8H 5H 7H 6H KC KD KS 2C", 2)  # order in hand does not matter
    assert not fulfil("5H 6H 7D 8H KC KD KS 2C", 2)  # a run is one suit
    assert not fulfil("5H 6H 7H 9H KC KD KS 2C", 2)  # consecutive ranks
    assert not fulfil("5H 5H 6H 7H KC KD KS 2C", 2)  # a repeated card is not a run card


def test_run_of_three_is_not_a_run():
    assert not can_build(RUN4, "5H 6H 7H")
    assert can_build(RUN4, "5H 6H 7H 8H")


def test_ace_low_and_ace_high():
    assert fulfil("AH 2H 3H 4H KC KD KS 9C", 2)
    assert fulfil("JH QH KH AH KC KD KS 9C", 2)
    assert can_build(RUN4, "AH 2H 3H 4H")
    assert can_build(RUN4, "JH QH KH AH^")
    assert not can_build(RUN4, "JH QH KH AH")  # the low ace does not follow the king


@pytest.mark.parametrize("run", ["QH KH AH 2H", "KH AH 2H 3H", "KH AH^ 2H 3H"])
def test_runs_never_turn_the_corner(run):
    hand = run.replace("^", "") + " 5C 5D 5S 9C"
    assert not fulfil(hand, 2)
    assert not can_build(RUN4, run)


def test_run_never_holds_both_aces():
    assert can_build(RUN10, "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", exact=False)
    assert not can_build(RUN10, "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH^", exact=False)
    assert not can_build(RUN10, "AH^ 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", exact=False)


def test_run_holds_at_most_13_cards():
    full = build(RUN10, "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    assert meld_is_valid(full, exact=False)
    assert not can_lay_off(full, "AH^")
    assert not can_lay_off(full, "JK=AH^")
    high = build(RUN10, "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH^")
    assert meld_is_valid(high, exact=False)
    assert not can_lay_off(high, "AH")
    twelve = build(RUN10, "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    assert can_lay_off(twelve, "AH")
    assert can_lay_off(twelve, "AH^")


def test_run_layoffs_only_at_the_ends():
    run = build(RUN4, "5H 6H 7H 8H")
    assert can_lay_off(run, "4H")
    assert can_lay_off(run, "9H")
    assert can_lay_off(run, "JK=9H")
    assert not can_lay_off(run, "3H")
    assert not can_lay_off(run, "6H")
    assert not can_lay_off(run, "9S")
    assert not can_lay_off(run, "JK=TH")
    low = build(RUN4, "AS 2S 3S 4S")
    assert can_lay_off(low, "5S")
    assert not can_lay_off(low, "KS")
    assert not can_lay_off(low, "AS^")
    high = build(RUN4, "JD QD KD AD^")
    assert can_lay_off(high, "TD")
    assert not can_lay_off(high, "2D")
    assert not can_lay_off(high, "AD")


def test_set_layoffs():
    sevens = build(SET3, "7C 7D 7H")
    assert can_lay_off(sevens, "7S")
    assert can_lay_off(sevens, "7C")
    assert can_lay_off(sevens, "JK=7S")
    assert not can_lay_off(sevens, "8S")
    assert not can_lay_off(sevens, "JK=8S")


@pytest.mark.parametrize(
    ("spec", "melded", "fits"),
    [
        (SET3, "7C 7D JK=7H", "JK=7S"),
        (RUN4, "5H 6H JK=7H 8H", "JK=9H"),
        (RUN5, "5H JK=6H JK=7H 8H 9H", "JK=TH"),
        (RUN7, "5H JK=6H JK=7H JK=8H 9H TH JH", "JK=QH"),
        (RUN10, "2H JK=3H 4H JK=5H 6H JK=7H 8H JK=9H TH JH", "JK=QH"),
    ],
)
def test_joker_limit_holds_on_layoffs(spec, melded, fits):
    full = build(spec, melded)
    assert full.jokers == spec.max_jokers
    assert meld_is_valid(full, exact=True)
    assert not can_lay_off(full, fits)
    natural = fits[3:]
    assert can_lay_off(full, natural)
    # one joker fewer: the same joker may be laid off
    one_less = build(spec, melded.replace("JK=", "", 1))
    assert can_lay_off(one_less, fits)


@pytest.mark.parametrize(
    ("contract", "ok", "too_many"),
    [
        (2, "5H JK 7H 8H KC KD KS 2C", "5H JK JK 8H KC KD KS 2C"),
        (5, "3H JK 5H JK 7H JK 9H KC KD KS 2C", "3H JK JK JK JK 8H 9H KC KD KS 2C"),
        (6, "4C 4D 4S KC KD KS 3H JK JK 6H 7H 2S", "4C 4D 4S KC KD KS 3H JK JK JK 7H 2S"),
        (
            8,
            "2H JK 4H JK 6H JK 8H JK TH JH KC KD KS 5C",
            "7H 8H 9H TH JH JK JK JK JK JK KC KD KS 5C 2C",
        ),
        (
            10,
            "2H JK JK 5H 6H 2S 3S 4S 5S 6S 2D 3D 4D 5D 6D QC",
            "2H JK JK JK 6H 2S 3S 4S 5S 6S 2D 3D 4D 5D 6D QC",
        ),
    ],
)
def test_joker_limit_per_contract_meld(contract, ok, too_many):
    assert fulfil(ok, contract)
    assert not fulfil(too_many, contract)
    assert not fulfil(too_many, contract, exact=False)


# --- the same-suit gap between runs (docs/rules.md 5.2) -------------------------------------------


def test_same_suit_runs_need_a_rank_between():
    apart = "3H 4H 5H 6H 8H 9H TH JH 2C"
    touching = "3H 4H 5H 6H 7H 8H 9H TH 2C"
    overlapping = "3H 3H 4H 4H 5H 5H 6H 6H 2C"
    assert fulfil(apart, 3)
    assert not fulfil(touching, 3)
    assert not fulfil(overlapping, 3)
    assert fulfil(apart, 3, gap=0)
    assert fulfil(touching, 3, gap=0)
    assert not fulfil(overlapping, 3, gap=0)
    assert not fulfil(apart, 3, gap=2)
    assert fulfil("3H 4H 5H 6H 9H TH JH QH 2C", 3, gap=2)


def test_runs_in_different_suits_never_clash():
    hand = "3H 4H 5H 6H 3S 4S 5S 6S 2C"
    for gap in (0, 1, 2, 12):
        assert fulfil(hand, 3, gap=gap)


def test_gap_counts_ace_low_and_high():
    # A-4 low and J-A high in one suit leave six ranks between them
    assert fulfil("AH 2H 3H 4H JH QH KH AH 5C", 3)
    assert fulfil("AH 2H 3H 4H JH QH KH AH 5C", 3, gap=6)
    assert not fulfil("AH 2H 3H 4H JH QH KH AH 5C", 3, gap=7)


def test_gap_with_jokers_is_read_from_declared_places():
    # the joker may stand below the run (2H) so that it does not touch 7H-TH
    assert fulfil("3H 4H 5H JK 7H 8H 9H TH 2C", 3)
    # here it can only be 4H, next to 5H-8H
    assert not fulfil("AH 2H 3H JK 5H 6H 7H 8H 2C", 3)
    assert fulfil("AH 2H 3H JK 5H 6H 7H 8H 2C", 3, gap=0)


def test_three_runs_in_one_suit():
    assert fulfil("AH 2H 3H 4H 6H 7H 8H 9H JH QH KH AH 5C", 7)
    assert not fulfil("AH 2H 3H 4H 6H 7H 8H 9H TH JH QH KH 5C", 7)  # 6-9 and T-K touch


# --- exact sizes (docs/rules.md 5.2, option exact_contract_melds) -----------------------------------


def test_exact_sizes_while_going_down():
    assert can_build(SET3, "7C 7D 7H")
    assert not can_build(SET3, "7C 7D 7H 7S")
    assert can_build(SET3, "7C 7D 7H 7S", exact=False)
    assert not can_build(RUN4, "5H 6H 7H 8H 9H")
    assert can_build(RUN4, "5H 6H 7H 8H 9H", exact=False)
    assert not can_build(RUN4, "5H 6H 7H", exact=False)


def test_longer_melds_do_not_help_a_short_hand():
    assert not fulfil("7C 7D 7H 7S 9C 9D KS", 1, exact=False)
    assert fulfil("7C 7D 7H 7S 9C 9D 9S KS", 1, exact=False)


def test_building_keeps_run_cards_distinct_and_in_one_suit():
    assert not can_build(RUN4, "5H 6H 6H 7H 8H", exact=False)
    assert not can_build(RUN4, "5H 6H 7H 8D")
    assert not can_build(RUN4, "5H 6H 7H JK=8D")
    assert can_build(RUN4, "8H 5H 6H 7H")  # order of placing does not matter
    assert can_build(RUN4, "5H 8H JK=6H 7H")
    assert not can_build(RUN4, "5H 9H JK=6H JK=7H 8H")  # wider than four, and two jokers


def test_meld_is_valid_rejects_broken_melds():
    assert not meld_is_valid(build(RUN4, "5H 6H 8H 9H"), exact=True)
    assert not meld_is_valid(build(RUN4, "5H 6H 7H"), exact=True)
    assert meld_is_valid(build(RUN4, "5H 6H JK=7H 8H"), exact=True)
    assert not meld_is_valid(build(RUN4, "5H JK=6H JK=7H 8H"), exact=True)
    assert meld_is_valid(build(RUN5, "5H JK=6H JK=7H 8H 9H"), exact=True)
    assert not meld_is_valid(build(SET3, "7C 7D"), exact=True)
