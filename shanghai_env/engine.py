"""The game state of Shanghai Rummy: phases, legal moves, apply, scoring, clone, validate.

One :class:`Game` plays a whole game of ``len(rules.contracts)`` deals. Only real decisions
are moves; dealing, the forced stock draw after a declined upcard, the buyer's penalty card,
reshuffles, scoring and the next deal happen inside :meth:`Game.apply`.

Randomness: every deal's deck order comes from ``SeedSequence(seed, spawn_key=(deal, 0))``
and its reshuffles from ``(deal, 1, n)``, so the same seed deals the same ten decks whatever
the players do (duplicate evaluation relies on this).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeGuard

import numpy as np

from . import legal
from .cards import (
    JOKER,
    NUM_CARD_KINDS,
    card_to_str,
    deck_counts,
    full_deck,
    hand_points,
    rank_of,
    str_to_card,
)
from .melds import CONTRACTS, Meld, buys_allowed, meld_is_valid
from .moves import Move, MoveKind, checked_move, parse_move
from .rules import DEFAULT_MAX_MOVES_PER_DEAL as DEFAULT_MAX_MOVES_PER_DEAL  # re-exported: the rule's default
from .rules import Rules

HAND_SIZE = 11
NO_PLAYER = -1
BLIND_BONUS = -25
BLIND_NO_JOKER_BONUS = -50
_NO_CAP = 1 << 62  # the move count a deal "ends at" without max_moves_per_deal (never reached)


class Phase(IntEnum):
    DRAW = 0  # the player in turn: take the upcard, or draw (decline it)
    BUY = 1  # a player out of turn: buy the declined upcard, or pass
    PLAY = 2  # the player in turn after drawing: go down, lay off, swap, discard
    GOING_DOWN = 3  # the player in turn laying down the contract, card by card
    GAME_OVER = 4


class InvariantError(RuntimeError):
    """Raised by :meth:`Game.validate` when the state breaks a rule of the game."""


@dataclass(frozen=True)
class DealResult:
    deal: int  # 0-based deal number
    contract: int
    scores: tuple[int, ...]  # this deal's score of every player
    out_player: int  # who went out, or NO_PLAYER if the stock ran dry or a move cap ended the deal
    blind: bool
    capped: bool = False  # ended by max_moves_per_deal (or Game.abandon_deal): nobody out


@dataclass(frozen=True)
class PlayerView:
    """What one player may know. Built by :meth:`Game.view`; nothing hidden reaches it."""

    player: int
    num_players: int
    deal: int
    contract: int
    phase: Phase
    to_act: int
    turn_player: int
    dealer: int
    hand: tuple[int, ...]  # own hand, count vector of 53
    hand_sizes: tuple[int, ...]
    buys_left: tuple[int, ...]
    down: tuple[bool, ...]
    scores: tuple[int, ...]  # game totals before this deal
    table: tuple[tuple[Meld, ...], ...]  # copies of every player's melds, declared jokers included
    upcard: int  # top of the discard pile, or NO_PLAYER (-1) if empty
    upcard_from: int  # who discarded the upcard (NO_PLAYER at the deal's start)
    discard_counts: tuple[int, ...]  # every card in the discard pile (all were seen face up)
    discard_size: int
    stock_size: int
    stock_rebuilds_left: int | None  # rebuilds of the stock still allowed (None: no limit)
    picked_up: tuple[tuple[int, ...], ...]  # face-up cards each player took and still holds
    went_down_this_turn: bool
    legal_moves: tuple[Move, ...]  # empty unless this player is to act
    # the player in turn went down this turn (public: everyone saw it; went_down_this_turn above
    # is set only in the view of the player in turn)
    turn_player_went_down: bool = False
    # moves played in this deal so far (public; the rules end the deal at max_moves_per_deal)
    deal_moves: int = 0


def _is_int(x: object) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_plain(move: object) -> TypeGuard[Move]:
    """A Move whose fields are exactly a MoveKind and four ints (what the engine itself builds)."""
    return (
        type(move) is Move
        and type(move[0]) is MoveKind
        and type(move[1]) is int
        and type(move[2]) is int
        and type(move[3]) is int
        and type(move[4]) is int
    )


class Game:
    """A game of Shanghai Rummy. ``Game(num_players=4)`` or ``Game(Rules(...))``."""

    _deals_on = True  # a deal's end deals the next one (deal_end_after's copy sets False)

    def __init__(self, rules: Rules | None = None, **options: Any) -> None:
        if rules is not None and not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if rules is not None and options:
            raise ValueError("pass either a Rules object or keyword options, not both")
        self.rules = rules if rules is not None else Rules.from_options(options)
        self.num_players = self.rules.num_players
        self.reset()

    # --- setup ------------------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        *,
        deck: list[str] | None = None,
        dealer: int | None = None,
    ) -> None:
        """Start a new game. ``deck`` (card strings, top first) stacks the first deal."""
        first_deck = self.check_reset_args(seed, deck=deck, dealer=dealer)
        n = self.num_players
        self.seed_entropy: int = int(np.random.SeedSequence(seed).entropy)  # type: ignore[arg-type]
        self.scores = [0] * n
        self.deal_results: list[DealResult] = []
        self.move_count = 0
        if dealer is None:
            dealer = self._cut_for_dealer()
        self._start_deal(0, int(dealer), first_deck)

    def check_reset_args(
        self, seed: int | None = None, *, deck: list[str] | None = None, dealer: int | None = None
    ) -> list[int] | None:
        """Raise as :meth:`reset` would for these arguments, changing nothing; returns the deck's cards."""
        if seed is not None and (
            not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0
        ):
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        n = self.num_players
        if dealer is not None and (
            not isinstance(dealer, (int, np.integer)) or isinstance(dealer, bool) or not 0 <= dealer < n
        ):
            raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
        return self._check_deck(deck) if deck is not None else None

    def _rng(self, *key: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.seed_entropy, spawn_key=key)))

    def _cut_for_dealer(self) -> int:
        """Each player cuts a card; lowest deals (ace low, joker counts high); ties cut again."""
        rng = self._rng(1000)
        contenders = list(range(self.num_players))
        while len(contenders) > 1:
            cut = rng.permutation(full_deck(self.num_players))[: len(contenders)]
            ranks = [13 if c == JOKER else rank_of(int(c)) for c in cut]
            low = min(ranks)
            contenders = [p for p, r in zip(contenders, ranks) if r == low]
        return contenders[0]

    def _check_deck(self, deck: list[str]) -> list[int]:
        if isinstance(deck, str) or not hasattr(deck, "__iter__"):
            raise TypeError("deck must be a list of card strings, top first, e.g. ['7H', 'JK', ...]")
        cards = [str_to_card(c) for c in deck]
        expected = deck_counts(self.num_players)
        got = [0] * NUM_CARD_KINDS
        for c in cards:
            got[c] += 1
        if got != expected:
            diffs = [
                f"{card_to_str(c)}: {got[c]} (expected {expected[c]})"
                for c in range(NUM_CARD_KINDS)
                if got[c] != expected[c]
            ]
            raise ValueError(
                f"deck for {self.num_players} players must hold each card {expected[0]} times and "
                f"{expected[JOKER]} joker(s) ({sum(expected)} cards); got {len(cards)} cards, wrong: "
                + ", ".join(diffs[:10])
                + (" ..." if len(diffs) > 10 else "")
            )
        return cards

    def _start_deal(self, deal: int, dealer: int, deck: list[int] | None = None) -> None:
        n = self.num_players
        self.deal = deal
        self.contract = self.rules.contracts[deal]
        self.specs = CONTRACTS[self.contract]
        self.dealer = dealer
        self.deal_start_move = self.move_count  # the game's move count when this deal began
        cap = self.rules.max_moves_per_deal
        # the move count whose move ends this deal by the cap (docs/rules.md 5.5)
        self._cap_at = _NO_CAP if cap is None else self.move_count + cap
        if deck is None:
            deck = [int(c) for c in self._rng(deal, 0).permutation(full_deck(n))]
        self.hands = [[0] * NUM_CARD_KINDS for _ in range(n)]
        for i in range(HAND_SIZE * n):
            self.hands[(dealer + 1 + i) % n][deck[i]] += 1
        self.hand_sizes = [HAND_SIZE] * n
        self.discard = [deck[HAND_SIZE * n]]
        self.stock = deck[HAND_SIZE * n + 1 :][::-1]  # the top of the stock is the list's end
        self.discard_counts = [0] * NUM_CARD_KINDS
        self.discard_counts[self.discard[0]] = 1
        self.table: list[list[Meld]] = [[] for _ in range(n)]
        self.down = [False] * n
        self.buys_left = [buys_allowed(self.contract)] * n
        self.picked_up = [[0] * NUM_CARD_KINDS for _ in range(n)]
        self.picked_total = [0] * n  # sum of each picked_up row (lets encoders skip empty rows)
        # bytes of each picked_up row, rebuilt on demand by encoders (None once the row changes)
        self.picked_bytes: list[bytes | None] = [None] * n
        self.upcard_from = NO_PLAYER
        self.reshuffles = 0
        self.turn_player = (dealer + 1) % n
        self.to_act = self.turn_player
        self.phase = Phase.DRAW
        self.went_down_this_turn = False
        self.joker_in_down = False
        self.offer: list[int] = []  # players still to be asked in a buy offer, next first
        self.table_version = 0  # bumped whenever a card joins or leaves the table
        self.table_index: tuple[Any, ...] | None = None  # legal.py's cache for this version
        self._legal: tuple[Move, ...] | None = None

    def start_deal(self, deal: int, dealer: int, deck: list[int] | None = None) -> None:
        """Begin deal ``deal`` (0-based), dealt by seat ``dealer`` from ``deck`` (card ids, top
        first; None: this game's seeded deck for that deal), as the game itself does when a deal
        ends: hands dealt, the upcard turned, every count of the deal reset and its move cap
        (``max_moves_per_deal``) counted from the game's move count now; scores and results so far
        are kept. For laying out a position: :class:`~shanghai_env.worlds.WorldSampler` starts the
        view's deal this way, then sets the state the view shows (and calls
        :meth:`forget_caches`). A deal, dealer or deck that is not one of this game's is a
        ValueError (TypeError for a wrong type), the game unchanged."""
        n = self.num_players
        if not _is_int(deal) or not 0 <= deal < len(self.rules.contracts):
            raise ValueError(f"deal must be an int 0..{len(self.rules.contracts) - 1}, got {deal!r}")
        if not _is_int(dealer) or not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
        if deck is not None:
            if isinstance(deck, str) or not hasattr(deck, "__iter__"):
                raise TypeError(f"deck must be a list of card ids 0..{NUM_CARD_KINDS - 1}, top first")
            deck = list(deck)
            if not all(_is_int(c) and 0 <= c < NUM_CARD_KINDS for c in deck):
                raise ValueError(f"deck must hold card ids 0..{NUM_CARD_KINDS - 1} only")
            deck = [int(c) for c in deck]
            got = [0] * NUM_CARD_KINDS
            for c in deck:
                got[c] += 1
            if got != deck_counts(n):
                raise ValueError(f"deck must be a full deck for {n} players ({sum(deck_counts(n))} cards)")
        self._start_deal(int(deal), int(dealer), deck)

    def forget_caches(self) -> None:
        """Drop what the game keeps computed from its state: the legal moves, legal.py's index of
        the table, each player's count and bytes of picked-up cards.

        The engine's own moves keep them up to date; a program that sets the state's attributes
        itself (worlds.py laying out a sampled world, a test re-dealing hidden cards) calls this
        afterwards, or the next query may answer from the state before.
        """
        self._legal = None
        self.table_version += 1
        self.table_index = None
        self.picked_total = [sum(row) for row in self.picked_up]
        self.picked_bytes = [None] * self.num_players

    # --- queries ----------------------------------------------------------------------------

    @property
    def game_over(self) -> bool:
        return self.phase == Phase.GAME_OVER

    @property
    def upcard(self) -> int:
        return self.discard[-1] if self.discard else NO_PLAYER

    def legal_moves(self) -> tuple[Move, ...]:
        """Every move the player to act may make now, in the engine's order (empty once the game
        is over). The tuple is cached until the next move: immutable, so it is safe to keep."""
        if self._legal is None:
            self._legal = legal.legal_moves(self)
        return self._legal

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` may be played now; a malformed Move (float fields...) is a TypeError."""
        if not _is_plain(move):
            move = checked_move(move)
        return move in self.legal_moves()

    def winners(self) -> list[int]:
        """Players with the lowest total (ties share first)."""
        low = min(self.scores)
        return [p for p, s in enumerate(self.scores) if s == low]

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know now (see :class:`PlayerView`); the table's melds are copies, so
        a player may keep or change its view without touching the game."""
        if not isinstance(player, int) or not 0 <= player < self.num_players:
            raise ValueError(f"player must be a seat 0..{self.num_players - 1}, got {player!r}")
        return self._view(player, tuple(tuple(m.copy() for m in melds) for melds in self.table))

    def shared_view(self, player: int) -> PlayerView:
        """:meth:`view`, except that the table's melds are the game's own objects, not copies.

        For a program's own players on its own copies of a game, players that only read the
        view and do not keep it: search rollouts on sampled worlds, where greedy rollouts play
        about 15% more moves a second than on copies. Never give it to a player you do not
        control: changing one of its melds changes the game.
        """
        if not isinstance(player, int) or not 0 <= player < self.num_players:
            raise ValueError(f"player must be a seat 0..{self.num_players - 1}, got {player!r}")
        return self._view(player, tuple(map(tuple, self.table)))

    def _view(self, player: int, table: tuple[tuple[Meld, ...], ...]) -> PlayerView:
        went_down = self.went_down_this_turn
        # the frozen dataclass filled in one dict update: its __init__ sets field by field
        view = object.__new__(PlayerView)
        view.__dict__.update(
            player=player,
            num_players=self.num_players,
            deal=self.deal,
            contract=self.contract,
            phase=self.phase,
            to_act=self.to_act,
            turn_player=self.turn_player,
            dealer=self.dealer,
            hand=tuple(self.hands[player]),
            hand_sizes=tuple(self.hand_sizes),
            buys_left=tuple(self.buys_left),
            down=tuple(self.down),
            scores=tuple(self.scores),
            table=table,
            upcard=self.upcard,
            upcard_from=self.upcard_from,
            discard_counts=tuple(self.discard_counts),
            discard_size=len(self.discard),
            stock_size=len(self.stock),
            stock_rebuilds_left=self.stock_rebuilds_left,
            picked_up=tuple(map(tuple, self.picked_up)),
            went_down_this_turn=went_down and player == self.turn_player,
            legal_moves=self.legal_moves() if player == self.to_act else (),
            turn_player_went_down=went_down,
            deal_moves=self.move_count - self.deal_start_move,
        )
        return view

    # --- applying moves ---------------------------------------------------------------------

    def apply(self, move: Move | str) -> None:
        """Play ``move`` (a Move or its name) for the player to act.

        An illegal move raises ValueError, a malformed one (a field that is not an int, see
        :func:`~shanghai_env.moves.checked_move`) TypeError; either leaves the state unchanged.
        """
        if not _is_plain(move):  # the engine's own moves (legal_moves, an action table) skip this
            move = parse_move(move) if isinstance(move, str) else checked_move(move)
        if self.phase == Phase.GAME_OVER:
            raise ValueError(f"illegal move {move.name!r}: the game is over")
        legal_now = self.legal_moves()
        if move not in legal_now:
            shown = ", ".join(m.name for m in legal_now[:12])
            more = f" and {len(legal_now) - 12} more" if len(legal_now) > 12 else ""
            raise ValueError(
                f"illegal move {move.name!r} for player_{self.to_act} in phase {self.phase.name}; "
                f"legal: {shown}{more}"
            )
        self.play_legal(move)

    def play_legal(self, move: Move) -> None:
        """Play ``move``, one of :meth:`legal_moves` of this very state (the tuple's own object or
        an equal plain Move), checking nothing: :meth:`apply` after its checks. For a caller that
        has already checked the move against the legal moves (the batched env checks every row's
        action id before playing any), which would otherwise pay for the same test twice; an
        unchecked move may leave the game in a state no legal play reaches."""
        self._legal = None
        self.move_count += 1
        kind = move.kind
        if kind == MoveKind.TAKE:
            self._take_upcard(self.to_act)
            self.phase = Phase.PLAY
        elif kind == MoveKind.DRAW:
            self._open_offer()
        elif kind == MoveKind.BUY:
            self._buy()
        elif kind == MoveKind.PASS:
            self._next_offer()
        elif kind == MoveKind.DISCARD:
            self._discard(move.card)
        elif kind == MoveKind.MELD:
            self._place(move)
        elif kind == MoveKind.FINISH:
            self._finish_going_down()
        elif kind == MoveKind.LAYOFF:
            self._layoff(move)
        elif kind == MoveKind.SWAP:
            self._swap(move)
        if self.move_count >= self._cap_at:  # max_moves_per_deal (a deal that ended reset _cap_at)
            self._end_deal(NO_PLAYER, capped=True)

    def _give(self, player: int, card: int) -> None:
        self.hands[player][card] += 1
        self.hand_sizes[player] += 1

    def _lose(self, player: int, card: int) -> None:
        """Remove a card from a hand; it leaves face up, so it is no longer 'known held'."""
        self.hands[player][card] -= 1
        self.hand_sizes[player] -= 1
        if self.picked_up[player][card]:
            self.picked_up[player][card] -= 1
            self.picked_total[player] -= 1
            self.picked_bytes[player] = None

    def _take_upcard(self, player: int) -> None:
        card = self.discard.pop()
        self.discard_counts[card] -= 1
        self._give(player, card)
        self.picked_up[player][card] += 1
        self.picked_total[player] += 1
        self.picked_bytes[player] = None

    @property
    def stock_rebuilds_left(self) -> int | None:
        """Rebuilds of the stock still allowed in this deal (None: no limit)."""
        limit = self.rules.max_stock_rebuilds
        return None if limit is None else limit - self.reshuffles

    def _draw_stock(self, player: int) -> bool:
        """Give the stock's top card, rebuilding an empty stock while rebuilds are left.

        When the stock is empty and no rebuild is left (or a rebuild would leave no stock) the
        deal ends with nobody out (docs/rules.md 5.5) and this returns False.
        """
        if not self.stock:
            left = self.stock_rebuilds_left
            if left is None or left > 0:
                self._reshuffle()
            if not self.stock:
                self._end_deal(NO_PLAYER)
                return False
        self._give(player, self.stock.pop())
        return True

    def _reshuffle(self) -> None:
        """The discard pile but its top card becomes the new stock (docs/rules.md 5.5)."""
        if len(self.discard) <= 1:
            return
        pile = self.discard[:-1]
        self.discard = self.discard[-1:]
        for c in pile:
            self.discard_counts[c] -= 1
        order = self._rng(self.deal, 1, self.reshuffles).permutation(len(pile))
        self.reshuffles += 1
        self.stock = [pile[i] for i in order]

    def _open_offer(self) -> None:
        n, turn = self.num_players, self.turn_player
        may_buy_down = self.rules.down_players_may_buy
        self.offer = [
            q
            for q in ((turn + k) % n for k in range(1, n))
            if q != self.upcard_from and self.buys_left[q] > 0 and (may_buy_down or not self.down[q])
        ]
        self._next_offer(first=True)

    def _next_offer(self, first: bool = False) -> None:
        if not first:
            self.offer.pop(0)
        if self.offer:
            self.phase = Phase.BUY
            self.to_act = self.offer[0]
        else:
            self._turn_player_draws()

    def _turn_player_draws(self) -> None:
        self.offer = []
        self.to_act = self.turn_player
        self.phase = Phase.PLAY
        self._draw_stock(self.turn_player)

    def _buy(self) -> None:
        buyer = self.to_act
        self.buys_left[buyer] -= 1
        self._take_upcard(buyer)
        if self._draw_stock(buyer):  # the penalty card
            self._turn_player_draws()

    def _discard(self, card: int) -> None:
        p = self.turn_player
        self._lose(p, card)
        self.discard.append(card)
        self.discard_counts[card] += 1
        self.upcard_from = p
        if self.hand_sizes[p] == 0:
            self._end_deal(p)
            return
        self.turn_player = (p + 1) % self.num_players
        self.to_act = self.turn_player
        self.phase = Phase.DRAW
        self.went_down_this_turn = False
        self.joker_in_down = False

    def _place(self, move: Move) -> None:
        p = self.turn_player
        if self.phase == Phase.PLAY:  # the first card of going down opens the contract melds
            self.table[p] = [Meld(spec) for spec in self.specs]
            self.phase = Phase.GOING_DOWN
        self._lose(p, move.card)
        self.table[p][move.meld].add(move.card, move.place)
        self.table_version += 1
        if move.card == JOKER:
            self.joker_in_down = True
        if self.rules.exact_contract_melds and all(m.is_complete(True) for m in self.table[p]):
            self._finish_going_down()

    def _finish_going_down(self) -> None:
        self.down[self.turn_player] = True
        self.went_down_this_turn = True
        self.phase = Phase.PLAY

    def _target(self, move: Move) -> Meld:
        owner = (self.turn_player + move.seat) % self.num_players
        return self.table[owner][move.meld]

    def _layoff(self, move: Move) -> None:
        self._lose(self.turn_player, move.card)
        self._target(move).add(move.card, move.place)
        self.table_version += 1

    def _swap(self, move: Move) -> None:
        p = self.turn_player
        meld = self._target(move)
        meld.swap_joker(meld.joker_at(move.place))
        self.table_version += 1
        self._lose(p, move.card)
        self._give(p, JOKER)
        self.picked_up[p][JOKER] += 1  # everyone saw the joker go into this hand
        self.picked_total[p] += 1
        self.picked_bytes[p] = None

    def abandon_deal(self) -> None:
        """End the current deal now with nobody out, as the rule ``max_moves_per_deal`` does
        (docs/rules.md 5.5): every player scores the cards in hand; the result is ``capped``.

        The rule itself needs no call (:meth:`apply` ends the deal at the cap); this is for a
        caller's own, shorter budget (search rollouts) and for records written before the cap
        was a rule.
        """
        if self.phase == Phase.GAME_OVER:
            raise ValueError("the game is over: there is no deal to abandon")
        self._legal = None
        self._end_deal(NO_PLAYER, capped=True)

    def deal_end_after(self, move: Move | str | None) -> Game:
        """A copy of the game as ``move`` (None: :meth:`abandon_deal`) ends the current deal, before
        the next deal is dealt: every hand, the table and the piles as the deal ended, with its
        result. A viewer shows it at a deal's end (the game itself deals on at once). The copy
        is for reading only: it is at no decision. An illegal move, or one that does not end the
        deal, is a ValueError; this game is unchanged either way."""
        end = self.clone()
        end._deals_on = False
        try:
            if move is None:
                end.abandon_deal()
            else:
                end.apply(move)
        finally:
            del end._deals_on  # the instance's flag only: the class's default is back
        if len(end.deal_results) == len(self.deal_results):
            name = move.name if isinstance(move, Move) else move  # abandon_deal always ends it
            raise ValueError(f"move {name!r} does not end deal {self.deal + 1}")
        return end

    def _end_deal(self, out_player: int, capped: bool = False) -> None:
        self._cap_at = _NO_CAP  # _start_deal sets the next deal's; none after the last deal
        blind = out_player != NO_PLAYER and self.went_down_this_turn
        deal_scores = []
        for q in range(self.num_players):
            if q == out_player:
                deal_scores.append(
                    (BLIND_BONUS if self.joker_in_down else BLIND_NO_JOKER_BONUS) if blind else 0
                )
            else:
                deal_scores.append(hand_points(self.hands[q], self.rules.joker_points))
        for q, s in enumerate(deal_scores):
            self.scores[q] += s
        self.deal_results.append(
            DealResult(self.deal, self.contract, tuple(deal_scores), out_player, blind, capped)
        )
        if self.deal + 1 < len(self.rules.contracts):
            if self._deals_on:  # False only in deal_end_after's copy
                self._start_deal(self.deal + 1, (self.dealer + 1) % self.num_players)
        else:
            self.phase = Phase.GAME_OVER
            self.to_act = NO_PLAYER
            self.offer = []
            self._legal = ()

    # --- copies, checks, text -------------------------------------------------------------

    def clone(self) -> Game:
        """An exact, independent copy (cheap: lists of ints and small melds)."""
        g = Game.__new__(Game)
        g.__dict__.update(self.__dict__)
        g.scores = self.scores[:]
        g.deal_results = self.deal_results[:]
        g.hands = [h[:] for h in self.hands]
        g.hand_sizes = self.hand_sizes[:]
        g.discard = self.discard[:]
        g.stock = self.stock[:]
        g.discard_counts = self.discard_counts[:]
        g.table = [[m.copy() for m in melds] for melds in self.table]
        g.down = self.down[:]
        g.buys_left = self.buys_left[:]
        g.picked_up = [p[:] for p in self.picked_up]
        g.picked_total = self.picked_total[:]
        g.picked_bytes = self.picked_bytes[:]
        g.offer = self.offer[:]
        return g

    def validate(self) -> None:
        """Check every invariant; raise InvariantError naming the first one broken."""

        def fail(msg: str) -> None:
            raise InvariantError(f"deal {self.deal} move {self.move_count}: {msg}")

        n = self.num_players
        total = [0] * NUM_CARD_KINDS
        for p in range(n):
            if any(c < 0 for c in self.hands[p]):
                fail(f"player_{p} holds a negative count")
            if sum(self.hands[p]) != self.hand_sizes[p]:
                fail(f"player_{p} hand size {self.hand_sizes[p]} != {sum(self.hands[p])} cards held")
            for c in range(NUM_CARD_KINDS):
                total[c] += self.hands[p][c]
                if not 0 <= self.picked_up[p][c] <= self.hands[p][c]:
                    fail(f"player_{p} is known to hold {card_to_str(c)} it does not hold")
            if self.picked_total[p] != sum(self.picked_up[p]):
                fail(f"player_{p} picked_total does not match picked_up")
            if self.picked_bytes[p] not in (None, bytes(self.picked_up[p])):
                fail(f"player_{p} picked_bytes is stale")
            if not 0 <= self.buys_left[p] <= buys_allowed(self.contract):
                fail(f"player_{p} has {self.buys_left[p]} buys left")
        limit = self.rules.max_stock_rebuilds
        if limit is not None and not 0 <= self.reshuffles <= limit:
            fail(f"the stock was rebuilt {self.reshuffles} times, the rules allow {limit}")
        cap = self.rules.max_moves_per_deal
        if (
            self.phase != Phase.GAME_OVER
            and cap is not None
            and self.move_count - self.deal_start_move >= cap
        ):
            fail(f"{self.move_count - self.deal_start_move} moves in this deal, the rules end it at {cap}")
        for c in self.stock + self.discard:
            total[c] += 1
        counts = [0] * NUM_CARD_KINDS
        for c in self.discard:
            counts[c] += 1
        if counts != self.discard_counts:
            fail("discard_counts does not match the discard pile")
        building = self.phase == Phase.GOING_DOWN
        for p in range(n):
            melds = self.table[p]
            if melds and len(melds) != len(self.specs):
                fail(f"player_{p} has {len(melds)} melds, contract has {len(self.specs)}")
            if self.down[p] != bool(melds) and not (building and p == self.turn_player):
                fail(f"player_{p} down={self.down[p]} but has {len(melds)} melds")
            for m, spec in zip(melds, self.specs):
                if m.spec != spec:
                    fail(f"player_{p} meld {m!r} does not match contract meld {spec}")
                for c in m.cards:
                    total[c] += 1
                if building and p == self.turn_player:
                    continue
                if not meld_is_valid(m, False):
                    fail(f"player_{p} meld {m!r} is not valid")
        expected = deck_counts(n)
        if total != expected:
            diff = [card_to_str(c) for c in range(NUM_CARD_KINDS) if total[c] != expected[c]]
            fail(f"cards not conserved: {', '.join(diff)}")
        if self.phase == Phase.GAME_OVER:
            if self.to_act != NO_PLAYER:
                fail("game over but a player is to act")
            return
        if not 0 <= self.to_act < n or not 0 <= self.turn_player < n:
            fail("no valid player to act")
        if self.phase == Phase.BUY:
            if not self.offer or self.to_act != self.offer[0] or self.to_act == self.turn_player:
                fail("buy offer inconsistent with the player to act")
        elif self.to_act != self.turn_player:
            fail(f"phase {self.phase.name} but player_{self.to_act} acts out of turn")
        if self.phase == Phase.DRAW and not self.discard:
            fail("a turn starts with no upcard")
        if not self.legal_moves():
            fail("the player to act has no legal move")

    def __repr__(self) -> str:
        return f"<Game {self.num_players}p deal {self.deal} {self.phase.name} to_act={self.to_act}>"
