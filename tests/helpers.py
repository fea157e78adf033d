"""Shared builders for the rules tests: stacked decks, hands as text, state snapshots.

Card strings follow docs/rules.md (``7H``, ``TS``, ``AC``, ``JK``). A stacked deck is a list of
card strings, top first, dealt as docs/rules.md section 3 says: card 0 to the dealer's left, one
card at a time clockwise, 11 rounds; then the upcard; the rest is the stock, top first.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping

from shanghai_env.cards import card_to_str, cards_of, str_to_card
from shanghai_env.engine import Game, Phase
from shanghai_env.moves import Move, MoveKind
from shanghai_env.render import render_text

HAND_SIZE = 11
RANKS = "A23456789TJQK"
SUITS = "CDHS"


def split(cards: str | Iterable[str]) -> list[str]:
    """``"7H 8H JK"`` -> ``["7H", "8H", "JK"]`` (a list passes through, upper-cased)."""
    items = cards.split() if isinstance(cards, str) else list(cards)
    return [c.upper() for c in items]


def full_multiset(num_players: int) -> Counter[str]:
    """Every card of the deck for a player count: 2 decks + 1 joker, or 3 decks + 2 jokers."""
    decks, jokers = (2, 1) if num_players <= 4 else (3, 2)
    deck: Counter[str] = Counter()
    for suit in SUITS:
        for rank in RANKS:
            deck[rank + suit] = decks
    deck["JK"] = jokers
    return deck


def remaining_cards(num_players: int, used: Iterable[str]) -> list[str]:
    """The cards of the deck not in ``used``, naturals by suit then rank, jokers last."""
    left = full_multiset(num_players)
    for card in used:
        if left[card] <= 0:
            raise ValueError(f"the deck for {num_players} players has no more copies of {card}")
        left[card] -= 1
    order = [r + s for s in SUITS for r in RANKS] + ["JK"]
    return [card for card in order for _ in range(left[card])]


def stacked_deck(num_players: int, top: str | Iterable[str]) -> list[str]:
    """A full deck whose first cards are ``top``; the rest is the remaining multiset."""
    first = split(top)
    return first + remaining_cards(num_players, first)


def deal_deck(
    num_players: int,
    dealer: int,
    hands: Mapping[int, str | Iterable[str]],
    upcard: str,
    stock: str | Iterable[str] = (),
) -> list[str]:
    """The stacked deck that deals ``hands[seat]`` to each seat, then ``upcard``, then ``stock``.

    Seats missing from ``hands`` (and hands shorter than 11) are filled from the remaining
    cards; ``stock`` lists the stock's top cards, the rest of the deck follows them.
    """
    given = {seat: split(cards) for seat, cards in hands.items()}
    for seat, cards in given.items():
        if not 0 <= seat < num_players:
            raise ValueError(f"there is no seat {seat} in a {num_players}-player game")
        if len(cards) > HAND_SIZE:
            raise ValueError(f"seat {seat} is given {len(cards)} cards")
    stock_top = split(stock)
    used = [c for cards in given.values() for c in cards] + [upcard.upper(), *stock_top]
    filler = remaining_cards(num_players, used)
    full_hands = {}
    for seat in range(num_players):
        cards = list(given.get(seat, []))
        while len(cards) < HAND_SIZE:
            cards.append(filler.pop(0))
        full_hands[seat] = cards
    deck: list[str] = []
    for round_ in range(HAND_SIZE):
        for k in range(num_players):
            seat = (dealer + 1 + k) % num_players
            deck.append(full_hands[seat][round_])
    return [*deck, upcard.upper(), *stock_top, *filler]


def new_game(
    hands: Mapping[int, str | Iterable[str]],
    upcard: str,
    stock: str | Iterable[str] = (),
    *,
    dealer: int | None = None,
    seed: int = 0,
    **options: object,
) -> Game:
    """A game whose first deal is stacked; by default the last seat deals, so seat 0 starts."""
    num_players = int(options.get("num_players", 4))  # type: ignore[call-overload]
    if dealer is None:
        dealer = num_players - 1
    game = Game(**options)  # type: ignore[arg-type]
    game.reset(seed=seed, deck=deal_deck(num_players, dealer, hands, upcard, stock), dealer=dealer)
    return game


def hand(game: Game, player: int) -> list[str]:
    """A player's hand as sorted card strings (by card id: suit, then rank; jokers last)."""
    return [card_to_str(c) for c in cards_of(game.hands[player])]


def cards(text: str | Iterable[str]) -> list[str]:
    """Card strings sorted like :func:`hand`, to compare a hand with an expected one."""
    return [card_to_str(c) for c in sorted(str_to_card(t) for t in split(text))]


def top_of_stock(game: Game, k: int = 1) -> list[str]:
    """The stock's top ``k`` cards, top first."""
    return [card_to_str(c) for c in reversed(game.stock[-k:])] if k else []


def upcard(game: Game) -> str:
    return card_to_str(game.discard[-1])


def table_text(game: Game, player: int) -> list[str]:
    return [m.text() for m in game.table[player]]


def names(moves: Iterable[object]) -> set[str]:
    return {str(m) for m in moves}


def play(game: Game, script: str | Iterable[str]) -> None:
    """Apply moves by name: a list, or text with one move per line or separated by ``;``."""
    if isinstance(script, str):
        steps = [s.strip() for line in script.splitlines() for s in line.split(";")]
    else:
        steps = list(script)
    for step in steps:
        if step and not step.startswith("#"):
            game.apply(step)


def snapshot(game: Game) -> tuple[object, ...]:
    """Everything that defines the state of a game, for before/after comparisons."""
    return (
        render_text(game),
        int(game.phase),
        game.to_act,
        game.turn_player,
        game.deal,
        game.dealer,
        tuple(tuple(h) for h in game.hands),
        tuple(game.hand_sizes),
        tuple(game.stock),
        tuple(game.discard),
        tuple(tuple((m.spec, tuple(m.cards), tuple(m.places), m.jokers) for m in t) for t in game.table),
        tuple(game.down),
        tuple(game.buys_left),
        tuple(game.scores),
        tuple(game.deal_results),
        tuple(game.offer),
        game.went_down_this_turn,
        game.upcard_from,
        game.move_count,
        tuple(str(m) for m in game.legal_moves()),
    )


POINTS = {
    "A": 20,
    "2": 20,
    "3": 5,
    "4": 5,
    "5": 5,
    "6": 5,
    "7": 5,
    "8": 5,
    "9": 5,
    "T": 10,
    "J": 10,
    "Q": 10,
    "K": 10,
}


def points(text: str | Iterable[str], joker_points: int = 50) -> int:
    """docs/rules.md section 6 points of a list of cards (written out, not the engine's table)."""
    return sum(joker_points if c == "JK" else POINTS[c[0]] for c in split(text))


# --- a simple greedy player, to finish deals without scripting them ---------------------------


def _progress(game: Game, counts: list[int]) -> int:
    """A rough count of the hand's cards that already serve the contract: the best ranks for
    its sets, the best separate windows for its runs, and two for each joker."""
    specs = game.specs
    sets = sorted((min(sum(counts[s * 13 + r] for s in range(4)), 3) for r in range(13)), reverse=True)[
        : sum(1 for sp in specs if sp.kind == 0)
    ]
    runs = [sp.size for sp in specs if sp.kind != 0]
    taken = [[False] * 14 for _ in range(4)]  # run places already counted, with a gap around
    run_total = 0
    for length in runs:
        best, where = -1, (0, 0)
        for suit in range(4):
            for lo in range(15 - length):
                if any(taken[suit][lo : lo + length]):
                    continue
                have = sum(counts[suit * 13 + pos % 13] > 0 for pos in range(lo, lo + length))
                if have > best:
                    best, where = have, (suit, lo)
        if best < 0:
            break
        run_total += best
        suit, lo = where
        for pos in range(max(0, lo - 1), min(14, lo + length + 1)):
            taken[suit][pos] = True
    return sum(sets) + run_total + 2 * counts[52]


def greedy_move(game: Game, rng: random.Random) -> Move:
    """Go down as soon as possible, lay off and swap whenever possible, keep useful cards."""
    moves = game.legal_moves()
    phase = game.phase
    p = game.to_act
    counts = game.hands[p]
    if phase == Phase.DRAW or phase == Phase.BUY:
        top = game.discard[-1]
        if game.down[p]:
            trial = game.clone()
            trial.apply(moves[0])  # take / buy
            wanted = phase == Phase.DRAW and any(
                m.kind == MoveKind.LAYOFF and m.card == top for m in trial.legal_moves()
            )
        else:
            with_top = counts[:]
            with_top[top] += 1
            wanted = _progress(game, with_top) > _progress(game, counts)
        return moves[0] if wanted else moves[1]
    placing = [m for m in moves if m.kind in (MoveKind.MELD, MoveKind.FINISH)]
    if placing:
        return rng.choice(placing)
    for kind in (MoveKind.SWAP, MoveKind.LAYOFF):
        chosen = [m for m in moves if m.kind == kind]
        if chosen:
            naturals = [m for m in chosen if m.card != 52]
            return rng.choice(naturals or chosen)
    discards = [m for m in moves if m.kind == MoveKind.DISCARD]
    if game.down[p]:
        return max(discards, key=lambda m: (m.card != 52, points(card_to_str(m.card))))

    def loss(move: Move) -> tuple:
        without = counts[:]
        without[move.card] -= 1
        return (
            base - _progress(game, without),
            move.card == 52,
            -points(card_to_str(move.card)),
            rng.random(),
        )

    base = _progress(game, counts)
    return min(discards, key=loss)


# --- a short scripted deal (contract 1, four players, player_3 deals) ------------------------
# player_0 goes down on the first turn and out on the second by laying off onto their own sets.

QUICK_HANDS = {
    0: "7C 7C 7D 7D 7H 7S 9C 9C 9D 9H 9S",
    1: "AC 2C 3C 4C 5C 6C 8C TC JC QC KC",  # 20+20+5*5+10*4 = 105
    2: "AD 3D 4D 5D 6D 8D TD JD QD KD KH",  # 20+5*5+10*5 = 95
    3: "AH 2H 2S 3H 4H 5H 6H 8H TH JH QH",  # 20*3+5*5+10*3 = 115
}
QUICK_UPCARD = "KS"
QUICK_STOCK = "QS JS"
QUICK_SCRIPT = """
draw; pass; pass; pass
meld 0 7C; meld 0 7D; meld 0 7H; meld 1 9C; meld 1 9D; meld 1 9H; discard QS
take; discard QS
take; discard QS
take; discard QS
draw; pass; pass
layoff 7C 0.0; layoff 7D 0.0; layoff 7S 0.0; layoff 9C 0.1; layoff 9S 0.1; discard JS
"""
QUICK_SCORES = (0, 105, 95, 115)


def quick_game(hands: Mapping[int, str] | None = None, **options: object) -> Game:
    """The quick deal set up (not played); ``hands`` replaces some of the other players' hands."""
    return new_game({**QUICK_HANDS, **(hands or {})}, QUICK_UPCARD, QUICK_STOCK, dealer=3, **options)
