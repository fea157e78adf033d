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

from typing import TYPE_CHECKING, Any

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
    """Writes the public slices of a game, seats rotated so that ``base`` is index 0."""

    def __init__(self, rules: Rules, layout: _Layout) -> None:
        self.rules = rules
        self.n = rules.num_players
        self.max_melds = rules.max_melds
        s = layout.slices
        self.size = layout.size
        self.slices = layout.slices
        self.low = layout.low
        self.high = layout.high
        self._table = s["table"].start
        self._table_end = s["table"].stop
        self._discard_top = s["discard_top"].start
        self._offered = s["upcard_offered"].start
        self._discard_counts = s["discard_counts"]
        self._upcard_from = s["upcard_from"].start
        self._picked = s["picked_up"]
        # hand_sizes, buys_left and down lie side by side: written in one assignment
        self._seat_counts = slice(s["hand_sizes"].start, s["down"].stop)
        if self._seat_counts.stop - self._seat_counts.start != 3 * self.n:
            raise RuntimeError("layout: hand_sizes, buys_left, down must be adjacent")
        self._scores = s["scores"].start
        # per observing seat: (key, table bytes, template) of the latest template
        self._templates: dict[int, tuple[tuple[Any, ...], bytes, bytes]] = {}
        self._to_be_asked = s["to_be_asked"].start
        self._to_act = s["to_act"].start
        self._turn = s["turn_player"].start
        self._dealer = s["dealer"].start
        self._contract = s["contract"].start
        self._deal = s["deal"].start
        self._phase = s["phase"].start
        # stock_size, discard_size, went_down_this_turn, joker_in_down: side by side, one write
        self._sizes = slice(s["stock_size"].start, s["joker_in_down"].stop)
        if self._sizes.stop - self._sizes.start != 4:
            raise RuntimeError("layout: stock_size .. joker_in_down must be adjacent")
        # Contract meld descriptions never change: one row per contract, written as a block.
        cm = s["contract_melds"]
        self._contract_melds = cm
        self._contract_rows: dict[int, bytes] = {}
        for c in set(rules.contracts):
            row = [0] * (cm.stop - cm.start)
            for j, spec in enumerate(CONTRACTS[c]):
                row[3 * j + (0 if spec.kind == SET else 1)] = 1
                row[3 * j + 2] = spec.size
            self._contract_rows[c] = bytes(row)

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

    def _template(self, game: Game, base: int, table: bytes | None) -> bytearray:
        """A fresh buffer holding the slices that change at most once a deal or per table state.

        The table, the dealer, the contract, the deal and the scores change far less often
        than every step; they are written once into a template per (seat, deal, scores, table)
        and each observation starts as a copy of it.
        """
        if table is None:
            table = self.table_bytes(game)
        key = (base, game.deal, game.dealer, game.contract, tuple(game.scores))
        cached = self._templates.get(base)
        if cached is not None and cached[0] == key and cached[1] == table:
            return bytearray(cached[2])
        n = self.n
        buf = bytearray(self.size)
        if base:
            split = base * self.max_melds * PER_MELD
            buf[self._table : self._table_end] = table[split:] + table[:split]
        else:
            buf[self._table : self._table_end] = table
        half = SCORE_SCALE // 2
        scores = [max(-128, min(INT8_MAX, (v + half) // SCORE_SCALE)) & 255 for v in game.scores]
        buf[self._scores : self._scores + n] = bytes(scores[base:] + scores[:base])
        buf[self._dealer + (game.dealer - base) % n] = 1
        buf[self._contract + game.contract - 1] = 1
        buf[self._contract_melds] = self._contract_rows[game.contract]
        buf[self._deal + game.deal] = 1
        self._templates[base] = (key, table, bytes(buf))
        return buf

    def _write_public(self, game: Game, base: int, buf: bytearray) -> None:
        """Fill the per-step public slices of ``buf`` (a copy of the template) from seat ``base``.

        The vector is built in a bytearray (int8 values stored as bytes, negatives as
        ``v & 255``): slice and item writes there cost a fraction of numpy's. Lists of counts
        go in through ``bytearray(list)``, which converts them faster than ``bytes(list)``.
        """
        n = self.n
        discard = game.discard
        phase = int(game.phase)
        if discard:
            top = discard[-1]
            buf[self._discard_top + top] = 1
            if phase <= 1:  # DRAW or BUY: the top card is on offer
                buf[self._offered + top] = 1
            buf[self._discard_counts] = bytearray(game.discard_counts)
        if any(game.picked_total):
            rows = game.picked_bytes  # rows change far less often than every step
            if None in rows:  # the engine forgets a row's bytes when the row changes
                picked = game.picked_up
                for q in range(n):
                    if rows[q] is None:
                        rows[q] = bytes(bytearray(picked[q]))
            buf[self._picked] = b"".join(rows[base:] + rows[:base]) if base else b"".join(rows)
        # hand sizes, buys left and down flags, rotated so that ``base`` comes first
        sizes, buys, down = game.hand_sizes, game.buys_left, game.down
        if max(sizes) > INT8_MAX:
            sizes = [min(h, INT8_MAX) for h in sizes]
        if base:
            seat_counts = sizes[base:] + sizes[:base] + buys[base:] + buys[:base] + down[base:] + down[:base]
        else:
            seat_counts = sizes + buys + down  # bools are 0/1 ints
        buf[self._seat_counts] = bytearray(seat_counts)
        upcard_from = game.upcard_from
        if upcard_from >= 0:
            buf[self._upcard_from + (upcard_from - base) % n] = 1
        offer = game.offer
        if offer:
            asked = self._to_be_asked
            for q in offer:
                buf[asked + (q - base) % n] = 1
        to_act = game.to_act
        if to_act >= 0:
            buf[self._to_act + (to_act - base) % n] = 1
        buf[self._turn + (game.turn_player - base) % n] = 1
        buf[self._phase + phase] = 1
        stock_size = len(game.stock)
        discard_size = len(discard)
        buf[self._sizes] = bytes(
            (
                stock_size if stock_size < INT8_MAX else INT8_MAX,
                discard_size if discard_size < INT8_MAX else INT8_MAX,
                game.went_down_this_turn,
                game.joker_in_down,
            )
        )


def _finish(buf: bytearray, out: np.ndarray | None) -> np.ndarray:
    arr = np.frombuffer(buf, dtype=np.int8)
    if out is None:
        return arr  # owns its bytearray: a fresh, writable array
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
        super().__init__(rules, layout)
        self.descriptions = layout.descriptions
        self._hand = layout.slices["hand"]

    def encode(
        self, game: Game, player: int, out: np.ndarray | None = None, *, table: bytes | None = None
    ) -> np.ndarray:
        """The observation of seat ``player``: written into ``out`` if given, else a new array.

        ``table``, if given, must be :meth:`table_bytes` of this very state.
        """
        buf = self._template(game, player, table)
        buf[self._hand] = bytearray(game.hands[player])
        self._write_public(game, player, buf)
        return _finish(buf, out)


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
        super().__init__(rules, layout)
        self.descriptions = layout.descriptions
        self._hands = layout.slices["hands"].start
        self._stock_counts = layout.slices["stock_counts"].start
        self._stock_top = layout.slices["stock_top"].start

    def encode(self, game: Game, out: np.ndarray | None = None, *, table: bytes | None = None) -> np.ndarray:
        """The full state of ``game``: written into ``out`` if given, else a new array."""
        buf = self._template(game, 0, table)
        k = NUM_CARD_KINDS
        h = self._hands
        for p in range(self.n):
            buf[h + p * k : h + (p + 1) * k] = bytearray(game.hands[p])
        self._write_public(game, 0, buf)
        stock = game.stock
        if stock:
            counts = [0] * k
            for c in stock:
                counts[c] += 1
            buf[self._stock_counts : self._stock_counts + k] = bytearray(counts)
            buf[self._stock_top + stock[-1]] = 1  # the stock's top is the list's end
        return _finish(buf, out)


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
