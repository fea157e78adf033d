"""Cards as small ints, their text notation, decks and points.

A natural card is ``suit * 13 + rank`` with ranks ``A 2 3 4 5 6 7 8 9 T J Q K`` as 0..12 and
suits ``C D H S`` as 0..3, so ``AC`` is 0 and ``KS`` is 51. The joker is 52. Hands are count
vectors of length 53 (several decks hold several copies of a card).

Inside a run an ace may stand low (before the 2) or high (after the king). Where that matters
(placing or laying off a card in a run, declaring a joker) the engine speaks of *places*:
places 0..51 are the cards themselves (an ace's place is its low place) and places 52..55 are
the high aces of suits C, D, H, S. Text writes a high ace with a caret: ``AH^``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANKS = "A23456789TJQK"
SUITS = "CDHS"
NUM_NATURALS = 52
JOKER = 52
NUM_CARD_KINDS = 53
ACE_HIGH_BASE = 52
NUM_PLACES = 56  # 52 card places + 4 high-ace places
JOKER_TEXT = "JK"


def suit_of(card: int) -> int:
    """Suit index 0..3 of a natural card."""
    return card // 13


def rank_of(card: int) -> int:
    """Rank index 0..12 (ace = 0) of a natural card."""
    return card % 13


def card_to_str(card: int) -> str:
    """``7H``-style text of a card id (``JK`` for the joker)."""
    if card == JOKER:
        return JOKER_TEXT
    if not 0 <= card < NUM_NATURALS:
        raise ValueError(f"card id {card!r} is not a card: ids are 0..52")
    return RANKS[card % 13] + SUITS[card // 13]


def str_to_card(text: str) -> int:
    """Card id of ``7H``-style text; ``JK`` is the joker. Case-insensitive."""
    if not isinstance(text, str):
        raise TypeError(f"a card is written as text like '7H' or 'JK', got {type(text).__name__}")
    t = text.strip().upper()
    if t == JOKER_TEXT:
        return JOKER
    if t.startswith("10") and len(t) == 3:
        t = "T" + t[2]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(
            f"unknown card {text!r}: write rank ({' '.join(RANKS)}) then suit ({' '.join(SUITS)}),"
            f" e.g. '7H', 'TS', 'AC', or 'JK' for a joker"
        )
    return SUITS.index(t[1]) * 13 + RANKS.index(t[0])


# --- places (where a card sits in a meld) ---------------------------------------------------


def place_to_str(place: int) -> str:
    """Text of a place: the card's text, with ``^`` for a high ace."""
    if ACE_HIGH_BASE <= place < NUM_PLACES:
        return "A" + SUITS[place - ACE_HIGH_BASE] + "^"
    return card_to_str(place)


def str_to_place(text: str) -> int:
    """Place of text like ``7H`` or ``AH^`` (high ace)."""
    t = text.strip()
    if t.endswith("^"):
        card = str_to_card(t[:-1])
        if card == JOKER or rank_of(card) != 0:
            raise ValueError(f"{text!r}: only an ace can be marked high with '^'")
        return ACE_HIGH_BASE + suit_of(card)
    card = str_to_card(t)
    if card == JOKER:
        raise ValueError(f"{text!r}: a place names a card, not the joker")
    return card


def place_card(place: int) -> int:
    """The natural card that fits a place."""
    return (place - ACE_HIGH_BASE) * 13 if place >= ACE_HIGH_BASE else place


def make_place(suit: int, pos: int) -> int:
    """Place of a run position (0..13) in a suit."""
    return ACE_HIGH_BASE + suit if pos == 13 else suit * 13 + pos


# Precomputed (place -> natural card) for speed on hot paths.
PLACE_CARD: tuple[int, ...] = tuple(place_card(p) for p in range(NUM_PLACES))


# --- decks ----------------------------------------------------------------------------------


def decks_for(num_players: int) -> tuple[int, int]:
    """(number of 52-card decks, number of jokers) for a player count (docs/rules.md section 1)."""
    if not isinstance(num_players, int) or isinstance(num_players, bool):
        raise TypeError(f"num_players must be an int 3..8, got {num_players!r}")
    if not 3 <= num_players <= 8:
        raise ValueError(f"num_players must be 3..8, got {num_players}")
    return (2, 1) if num_players <= 4 else (3, 2)


def full_deck(num_players: int) -> list[int]:
    """The unshuffled deck for a player count: 105 cards for 3-4 players, 158 for 5-8."""
    decks, jokers = decks_for(num_players)
    return [c for _ in range(decks) for c in range(NUM_NATURALS)] + [JOKER] * jokers


def deck_counts(num_players: int) -> list[int]:
    decks, jokers = decks_for(num_players)
    return [decks] * NUM_NATURALS + [jokers]


# --- points (docs/rules.md section 6) ------------------------------------------------------------


def card_points(card: int, joker_points: int = 50) -> int:
    if card == JOKER:
        return joker_points
    r = card % 13
    if r in (0, 1):  # ace and two
        return 20
    if r >= 9:  # ten, jack, queen, king
        return 10
    return 5


POINTS_WITHOUT_JOKER: tuple[int, ...] = tuple(card_points(c) for c in range(NUM_NATURALS))


def hand_points(counts: Sequence[int], joker_points: int = 50) -> int:
    """Points of a hand given as a count vector."""
    total = counts[JOKER] * joker_points
    for c in range(NUM_NATURALS):
        if counts[c]:
            total += counts[c] * POINTS_WITHOUT_JOKER[c]
    return total


# --- conversions ----------------------------------------------------------------------------


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Card ids of ``"7H 8H JK"`` or of an iterable of card strings."""
    items = text.split() if isinstance(text, str) else list(text)
    return [str_to_card(t) for t in items]


def counts_of(cards: Iterable[int]) -> list[int]:
    counts = [0] * NUM_CARD_KINDS
    for c in cards:
        counts[c] += 1
    return counts


def cards_of(counts: Sequence[int]) -> list[int]:
    """Sorted card ids of a count vector."""
    return [c for c in range(NUM_CARD_KINDS) for _ in range(counts[c])]


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(card_to_str(c) for c in cards)


def sort_key_by_rank(card: int) -> tuple[int, int]:
    """Sort for display: by rank (ace first), then suit; jokers last."""
    if card == JOKER:
        return (99, 0)
    return (card % 13, card // 13)
