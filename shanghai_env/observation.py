"""The flat observation vector and the omniscient state vector, their named slices, in one place.

Both are ``int8`` vectors whose layout depends only on the rule options (player count ``n``,
``M`` = the most contract melds among the contracts played, ``D`` = the number of deals).

**Observation** (:class:`ObservationEncoder`): what one player may know (docs/rules.md, and
:meth:`shanghai_env.engine.Game.view`) and nothing more. Seats are *relative*: index 0 is the
observing player, 1 the player to their left, and so on, so one policy can play every seat.
Other players' hands are reduced to their size and to the cards everyone saw them pick up;
the stock's order never appears.

**State** (:class:`StateEncoder`): everything, for centralised critics. Seats are absolute
(index ``i`` is ``player_i``); it adds every hand and the stock's contents and top card.

Scaling into ``int8``: counts are exact (they never exceed 127, except the pile sizes, which
are clipped at 127); a game score is ``round(score / 10)`` clipped to ``-128..127`` (so totals
from -1280 to 1270 are exact to 10 points). ``docs/observation.md`` lists every slice; it is
generated from :func:`layout_markdown`.
"""

from __future__ import annotations

import copy
from itertools import pairwise
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .cards import JOKER, NUM_CARD_KINDS, NUM_PLACES
from .melds import CONTRACTS, SET
from .rules import Rules

if TYPE_CHECKING:
    from .engine import Game

NUM_PHASES = 5  # Phase.DRAW, BUY, PLAY, GOING_DOWN, GAME_OVER
NUM_CONTRACTS = 10
PER_MELD = 2 * NUM_PLACES  # natural cards per place, then jokers per declared place
SCORE_SCALE = 10
INT8_MAX = 127
INT8 = np.dtype(np.int8)  # passing the dtype itself saves numpy a lookup per array

_E = TypeVar("_E", bound="_PublicEncoder")

# (name, length, low, high, description)
_Entry = tuple[str, int, int, int, str]

_TEXT = {
    "table": "table melds, per seat then per contract meld: 56 counts of natural cards lying at each "
    "place (places 0..51 = cards AC..KS, 52..55 = high aces of C D H S), then 56 counts of jokers "
    "declared as each place; all zero for a meld not on the table",
    "discard_top": "one-hot top card of the discard pile (all zero if the pile is empty)",
    "upcard_offered": "one-hot upcard on offer: the discard pile's top in phases DRAW and BUY, else all zero",
    "discard_counts": "count of every card in the discard pile (all were seen face up)",
    "upcard_from": "one-hot seat that discarded the top card (all zero at a deal's start)",
    "picked_up": "per seat: counts of the face-up cards that player took (upcards, bought cards, "
    "swapped jokers) and still holds",
    "hand_sizes": "per seat: number of cards in hand",
    "buys_left": "per seat: buys left this deal",
    "down": "per seat: 1 if that player has laid down the contract this deal",
    "scores": "per seat: game total of the finished deals, round(total / 10) clipped to -128..127",
    "to_be_asked": "per seat: 1 if still to be offered the upcard in the current buy offer",
    "to_act": "one-hot seat that must act now (all zero at game over)",
    "turn_player": "one-hot seat whose turn it is",
    "dealer": "one-hot seat of this deal's dealer",
    "contract": "one-hot contract number 1..10 of this deal",
    "contract_melds": "per contract meld slot: [is a set, is a run, size]; zero past the contract's melds",
    "deal": "one-hot deal index 0..D-1 in the game",
    "phase": "one-hot phase: DRAW, BUY, PLAY, GOING_DOWN, GAME_OVER",
    "stock_size": "cards in the stock",
    "discard_size": "cards in the discard pile, clipped at 127",
    "went_down_this_turn": "1 if the player in turn went down this turn",
    "joker_in_down": "1 if the player in turn placed a joker while going down this turn "
    "(going out blind then scores -25, not -50)",
    "hand": "own hand: count of each card 0..52 (AC..KS, then the joker)",
    "hands": "per seat: count of each card in that player's hand",
    "stock_counts": "count of each card in the stock",
    "stock_top": "one-hot top card of the stock (all zero if the stock is empty)",
}


def _entry(name: str, length: int, low: int, high: int) -> _Entry:
    return (name, length, low, high, _TEXT[name])


def _public_entries(n: int, m: int, d: int) -> list[_Entry]:
    """Slices shared by the observation and the state (n seats, m meld slots, d deals)."""
    k = NUM_CARD_KINDS
    return [
        _entry("table", n * m * PER_MELD, 0, 3),
        _entry("discard_top", k, 0, 1),
        _entry("upcard_offered", k, 0, 1),
        _entry("discard_counts", k, 0, 3),
        _entry("upcard_from", n, 0, 1),
        _entry("picked_up", n * k, 0, 3),
        _entry("hand_sizes", n, 0, INT8_MAX),
        _entry("buys_left", n, 0, 4),
        _entry("down", n, 0, 1),
        _entry("scores", n, -128, INT8_MAX),
        _entry("to_be_asked", n, 0, 1),
        _entry("to_act", n, 0, 1),
        _entry("turn_player", n, 0, 1),
        _entry("dealer", n, 0, 1),
        _entry("contract", NUM_CONTRACTS, 0, 1),
        _entry("contract_melds", m * 3, 0, 10),
        _entry("deal", d, 0, 1),
        _entry("phase", NUM_PHASES, 0, 1),
        _entry("stock_size", 1, 0, INT8_MAX),
        _entry("discard_size", 1, 0, INT8_MAX),
        _entry("went_down_this_turn", 1, 0, 1),
        _entry("joker_in_down", 1, 0, 1),
    ]


class _Layout:
    """A list of named slices with per-element bounds."""

    def __init__(self, entries: list[_Entry]) -> None:
        self.entries = entries
        self.slices: dict[str, slice] = {}
        self.descriptions: dict[str, str] = {}
        lows: list[np.ndarray] = []
        highs: list[np.ndarray] = []
        start = 0
        for name, length, low, high, text in entries:
            self.slices[name] = slice(start, start + length)
            self.descriptions[name] = text
            lows.append(np.full(length, low, dtype=np.int8))
            highs.append(np.full(length, high, dtype=np.int8))
            start += length
        self.size = start
        self.low = np.concatenate(lows)
        self.high = np.concatenate(highs)


class _PublicEncoder:
    """The public slices of a game, seats rotated so that ``base`` is index 0, as bytes.

    A vector is put together as one ``b"".join`` of pieces, most of them shared bytes that are
    looked up rather than built: one-hot rows, the table (two slices of a view of its bytes),
    the rotated scores and the per-deal slices (kept until a deal ends).
    Only the lists that change every step (a hand, the discard counts, the seat counts) are
    converted, each with one ``bytearray(list)``.
    """

    def __init__(self, rules: Rules, layout: _Layout) -> None:
        self.rules = rules
        n = self.n = rules.num_players
        self.max_melds = rules.max_melds
        s = layout.slices
        self.size = layout.size
        self.slices = layout.slices
        self.low = layout.low
        self.high = layout.high
        # The per-step pieces below follow the layout in this order; any change to the layout
        # must keep them adjacent (checked here, and the tests compare with the slices).
        order = [
            "table",
            "discard_top",
            "upcard_offered",
            "discard_counts",
            "upcard_from",
            "picked_up",
            "hand_sizes",
            "buys_left",
            "down",
            "scores",
            "to_be_asked",
            "to_act",
            "turn_player",
            "dealer",
            "contract",
            "contract_melds",
            "deal",
            "phase",
            "stock_size",
            "discard_size",
            "went_down_this_turn",
            "joker_in_down",
        ]
        if any(s[a].stop != s[b].start for a, b in pairwise(order)):
            raise RuntimeError("layout: the public slices must lie side by side in this order")
        self._zero_cards = bytes(NUM_CARD_KINDS)
        self._card = tuple(
            bytes(1 if i == c else 0 for i in range(NUM_CARD_KINDS)) for c in range(NUM_CARD_KINDS)
        )
        self._zero_seats = bytes(n)
        self._seat = tuple(bytes(1 if i == q else 0 for i in range(n)) for q in range(n))
        self._phase = tuple(bytes(1 if i == ph else 0 for i in range(NUM_PHASES)) for ph in range(NUM_PHASES))
        self._zero_picked = bytes(n * NUM_CARD_KINDS)
        cm = s["contract_melds"]
        self._contract_rows: dict[int, bytes] = {}
        for c in set(rules.contracts):
            row = [0] * (cm.stop - cm.start)
            for j, spec in enumerate(CONTRACTS[c]):
                row[3 * j + (0 if spec.kind == SET else 1)] = 1
                row[3 * j + 2] = spec.size
            self._contract_rows[c] = bytes(row)
        self._deals = s["deal"].stop - s["deal"].start
        self._seat_table = self.max_melds * PER_MELD  # one seat's part of the table slice
        self._table_view: tuple[bytes, memoryview] | None = None  # the table seen last, and a view
        # per observing seat: (scores, bytes); (deal key, bytes)
        self._scores: dict[int, tuple[list[int], bytes]] = {}
        self._deal_pieces: dict[int, tuple[tuple[int, int, int], bytes]] = {}
        self._asked: dict[tuple[int, ...], bytes] = {}  # (base, *offer) -> to_be_asked row

    def __getstate__(self) -> dict[str, Any]:
        """A copy (pickle, deepcopy) leaves out the view of the last table (views do not pickle)."""
        state = self.__dict__.copy()
        state["_table_view"] = None
        return state

    def fork(self: _E) -> _E:
        """A copy for one game of its own: the layout and the fixed pieces shared, the per-state
        caches (the table's view, scores and per-deal slices kept per observing seat) empty. One
        encoder serving many games (a batch's rows) would evict one game's pieces with another's
        at every step; one fork per game keeps them, for the same bytes."""
        other = copy.copy(self)
        other._table_view = None
        other._scores = {}
        other._deal_pieces = {}
        return other

    def table_bytes(self, game: Game) -> bytes:
        """The ``table`` slice with absolute seats (seat ``i``'s melds first at ``i``), as bytes.

        The encoders accept it precomputed (``table=``), so a caller that knows the table has
        not changed (the env watches for meld, layoff and swap moves) skips the loop over
        every card on the table.
        """
        per_seat = self.max_melds * PER_MELD
        buf = bytearray(self.n * per_seat)
        for q, melds in enumerate(game.table):
            off = q * per_seat
            for meld in melds:
                if meld.jokers:
                    for c, p in zip(meld.cards, meld.places):
                        buf[off + p + (NUM_PLACES if c == JOKER else 0)] += 1
                else:
                    for p in meld.places:
                        buf[off + p] += 1
                off += PER_MELD
        return bytes(buf)

    def _public(self, game: Game, base: int, table: bytes | None, out: list[Any]) -> None:
        """Append the public slices seen from seat ``base``, in layout order, to ``out`` (bytes
        and bytearrays)."""
        n = self.n
        # table, rotated: two slices of a view of the absolute table's bytes (no copy; the join
        # copies them once). A rotated copy kept per seat would hold n copies of the table (28
        # KiB at 8 players), which a batch of games would drag through the CPU's caches.
        if table is None:
            table = self.table_bytes(game)
        view = self._table_view
        if view is None or view[0] is not table:
            view = self._table_view = (table, memoryview(table))
        if base:
            split = base * self._seat_table
            out += (view[1][split:], view[1][:split])
        else:
            out.append(table)
        # discard_top, upcard_offered, discard_counts
        discard = game.discard
        phase = game.phase
        if discard:
            top = self._card[discard[-1]]
            out += (top, top if phase <= 1 else self._zero_cards, bytearray(game.discard_counts))
        else:
            zero = self._zero_cards
            out += (zero, zero, zero)
        seat = self._seat
        upcard_from = game.upcard_from
        out.append(seat[(upcard_from - base) % n] if upcard_from >= 0 else self._zero_seats)
        # picked_up: rows kept as bytes by the game until they change
        if any(game.picked_total):
            rows = game.picked_bytes
            if None in rows:  # the engine forgets a row's bytes when the row changes
                picked = game.picked_up
                for q in range(n):
                    if rows[q] is None:
                        rows[q] = bytes(bytearray(picked[q]))
            out += rows[base:]
            out += rows[:base]
        else:
            out.append(self._zero_picked)
        # hand_sizes, buys_left, down (bools are 0/1 ints)
        sizes, buys, down = game.hand_sizes, game.buys_left, game.down
        if max(sizes) > INT8_MAX:
            sizes = [min(h, INT8_MAX) for h in sizes]
        if base:
            seats = [*sizes[base:], *sizes[:base], *buys[base:], *buys[:base], *down[base:], *down[:base]]
            out.append(bytearray(seats))
        else:
            out.append(bytearray([*sizes, *buys, *down]))
        # scores (kept per seat until they change)
        scores = game.scores
        cached_scores = self._scores.get(base)
        if cached_scores is None or cached_scores[0] != scores:
            half = SCORE_SCALE // 2
            scaled = [max(-128, min(INT8_MAX, (v + half) // SCORE_SCALE)) & 255 for v in scores]
            cached_scores = self._scores[base] = (scores[:], bytes(scaled[base:] + scaled[:base]))
        out.append(cached_scores[1])
        # to_be_asked
        offer = game.offer
        if offer:
            key = (base, *offer)
            asked = self._asked.get(key)
            if asked is None:
                row = bytearray(n)
                for q in offer:
                    row[(q - base) % n] = 1
                asked = self._asked[key] = bytes(row)
            out.append(asked)
        else:
            out.append(self._zero_seats)
        to_act = game.to_act
        out += (
            seat[(to_act - base) % n] if to_act >= 0 else self._zero_seats,
            seat[(game.turn_player - base) % n],
        )
        # dealer, contract, contract_melds, deal (kept per seat until the deal changes)
        deal_key = (game.deal, game.dealer, game.contract)
        cached_deal = self._deal_pieces.get(base)
        if cached_deal is None or cached_deal[0] != deal_key:
            contract = bytearray(NUM_CONTRACTS)
            contract[game.contract - 1] = 1
            deal = bytearray(self._deals)
            deal[game.deal] = 1
            piece = seat[(game.dealer - base) % n] + contract + self._contract_rows[game.contract] + deal
            cached_deal = self._deal_pieces[base] = (deal_key, bytes(piece))
        out.append(cached_deal[1])
        stock_size = len(game.stock)
        discard_size = len(discard)
        out += (
            self._phase[phase],
            bytes(
                (
                    stock_size if stock_size < INT8_MAX else INT8_MAX,
                    discard_size if discard_size < INT8_MAX else INT8_MAX,
                    game.went_down_this_turn,
                    game.joker_in_down,
                )
            ),
        )


def _finish(data: bytes, out: np.ndarray | None) -> np.ndarray:
    arr = np.frombuffer(bytearray(data), dtype=INT8)  # a fresh, writable array
    if out is None:
        return arr
    out[:] = arr
    return out


class ObservationEncoder(_PublicEncoder):
    """One player's observation: ``int8[size]``, slices named in :attr:`slices`.

    ``encode(game, player)`` reads only what :meth:`Game.view` would give that player.
    """

    def __init__(self, rules: Rules) -> None:
        n, m, d = rules.num_players, rules.max_melds, len(rules.contracts)
        entries: list[_Entry] = [
            _entry("hand", NUM_CARD_KINDS, 0, 3),
            *_public_entries(n, m, d),
        ]
        layout = _Layout(entries)
        if layout.slices["hand"].stop != layout.slices["table"].start:
            raise RuntimeError("layout: the hand comes right before the public slices")
        super().__init__(rules, layout)
        self.descriptions = layout.descriptions

    def encode(
        self, game: Game, player: int, out: np.ndarray | None = None, *, table: bytes | None = None
    ) -> np.ndarray:
        """The observation of seat ``player``: written into ``out`` if given, else a new array.

        ``table``, if given, must be :meth:`table_bytes` of this very state.
        """
        return _finish(self.encode_bytes(game, player, table=table), out)

    def encode_bytes(self, game: Game, player: int, *, table: bytes | None = None) -> bytes:
        """The observation of seat ``player`` as bytes (int8 values; ``np.frombuffer`` of them
        is a read-only array, what the env hands out)."""
        pieces: list[Any] = [bytearray(game.hands[player])]
        self._public(game, player, table, pieces)
        return b"".join(pieces)

    def append_pieces(self, game: Game, player: int, out: list[Any], *, table: bytes | None = None) -> None:
        """Append the observation of seat ``player`` to ``out`` as pieces (bytes-like, never
        changed afterwards) whose ``b"".join`` is :meth:`encode_bytes`: a batch joins every row's
        pieces once, instead of joining each row and copying it again."""
        out.append(bytearray(game.hands[player]))
        self._public(game, player, table, out)


class StateEncoder(_PublicEncoder):
    """The omniscient state: every hand and the stock too, seats absolute (``player_i`` = i)."""

    def __init__(self, rules: Rules) -> None:
        n, m, d = rules.num_players, rules.max_melds, len(rules.contracts)
        k = NUM_CARD_KINDS
        entries: list[_Entry] = [
            _entry("hands", n * k, 0, 3),
            *_public_entries(n, m, d),
            _entry("stock_counts", k, 0, 3),
            _entry("stock_top", k, 0, 1),
        ]
        layout = _Layout(entries)
        sl = layout.slices
        if sl["hands"].stop != sl["table"].start or sl["joker_in_down"].stop != sl["stock_counts"].start:
            raise RuntimeError("layout: the hands, the public slices and the stock lie side by side")
        super().__init__(rules, layout)
        self.descriptions = layout.descriptions

    def encode(self, game: Game, out: np.ndarray | None = None, *, table: bytes | None = None) -> np.ndarray:
        """The full state of ``game``: written into ``out`` if given, else a new array."""
        pieces: list[Any] = [bytearray(hand) for hand in game.hands]
        self._public(game, 0, table, pieces)
        stock = game.stock
        if stock:
            counts = bytearray(NUM_CARD_KINDS)
            for c in stock:
                counts[c] += 1
            pieces += (counts, self._card[stock[-1]])  # the stock's top is the list's end
        else:
            pieces += (self._zero_cards, self._zero_cards)
        return _finish(b"".join(pieces), out)


def _layout_table(title: str, enc: _PublicEncoder, descriptions: dict[str, str]) -> list[str]:
    lines = [f"## {title}", "", "| slice | start | end | length | range | contents |"]
    lines.append("|---|---|---|---|---|---|")
    for name, sl in enc.slices.items():
        lo, hi = int(enc.low[sl.start]), int(enc.high[sl.start])
        span = f"{sl.start} | {sl.stop} | {sl.stop - sl.start}"
        lines.append(f"| `{name}` | {span} | {lo}..{hi} | {descriptions[name]} |")
    lines.append(f"| total | | {enc.size} | {enc.size} | | |")
    return lines


def layout_markdown(rules_list: list[Rules] | None = None) -> str:
    """The observation and state layouts as Markdown (``docs/observation.md`` is built from it)."""
    if rules_list is None:
        rules_list = [Rules(num_players=4), Rules(num_players=8)]
    parts = [
        "## Lengths (all ten contracts)",
        "",
        "| players | observation | state |",
        "|---|---|---|",
    ]
    for n in range(3, 9):
        r = Rules(num_players=n)
        parts.append(f"| {n} | {ObservationEncoder(r).size} | {StateEncoder(r).size} |")
    parts.append("")
    for rules in rules_list:
        label = f"{rules.num_players} players, contracts {list(rules.contracts)}"
        obs = ObservationEncoder(rules)
        state = StateEncoder(rules)
        parts += _layout_table(f"Observation, {label}: length {obs.size}", obs, obs.descriptions)
        parts.append("")
        parts += _layout_table(f"State, {label}: length {state.size}", state, state.descriptions)
        parts.append("")
    return "\n".join(parts).rstrip("\n")
