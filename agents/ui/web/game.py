"""One browser game: the :class:`~shanghai_env.engine.Game`, the person's seat, the bots, and
what the page may be told.

The server holds the game; the page only ever gets :meth:`WebGame.state`, which is built from
the person's :meth:`Game.view <shanghai_env.engine.Game.view>`: their own hand, every other hand
as its size only (``??`` per card), the table, the upcard, the sizes of the stock and the discard
pile, and the legal moves of their seat. Hands are shown face up only where the game shows them
to everybody: as a deal ends (the cards are counted) and when the game is over.

A request names the seat it plays for and the state counter it saw (:attr:`WebGame.version`);
a request for another seat, for an older state, with a move that is not legal now, or that
cannot be read is refused with :class:`Refused` (an HTTP status and a message) and changes
nothing. Bots move as soon as it is their turn, until the person must decide; every move is
said in words (:mod:`shanghai_env.narrate`). At a deal's end the game waits (``next``) so that
the person sees the table as the deal ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from shanghai_env.actions import action_table
from shanghai_env.agents.ui.text import menu_order, why_illegal
from shanghai_env.cards import JOKER, NUM_CARD_KINDS, card_to_str, cards_of, place_to_str, sort_key_by_rank
from shanghai_env.decision import Agent, Decision, Encoder, apply_action, decision_for
from shanghai_env.draw.state import hand_text, meld_text, table_header, table_state
from shanghai_env.engine import NO_PLAYER, DealResult, Game, Phase
from shanghai_env.melds import describe_contract
from shanghai_env.moves import Move, MoveKind, parse_move
from shanghai_env.narrate import card_words, describe_move, meld_words, symbol_text
from shanghai_env.record import MoveLog, make_record
from shanghai_env.rules import Rules

NEXT = "next"  # the request that deals the next hand after a deal's end
HIDDEN = "??"  # a card the person may not see, in another player's hand
LOG_SENT = 500  # at most this many lines of the game's story with one state
# why a player who just went down may only discard (docs/rules.md 5.3: laying off starts next turn)
WENT_DOWN = "You went down this turn: laying off and swapping wait for your next turn."


class Refused(Exception):
    """A request the game refuses: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _player(p: int) -> str:
    return f"player {p}"


class WebGame:
    """The person in seat ``seat`` and ``bots`` (one :class:`Agent` per other seat) playing one
    game of ``rules``, dealt from ``seed``."""

    def __init__(
        self,
        rules: Rules,
        seat: int,
        bots: Mapping[int, Agent],
        seed: int,
        *,
        encoder: Encoder | None = None,
        on_over: Callable[[WebGame], None] | None = None,
    ) -> None:
        n = rules.num_players
        if not 0 <= seat < n or sorted(bots) != [p for p in range(n) if p != seat]:
            raise ValueError(f"need the person's seat (0..{n - 1}) and one agent for every other seat")
        self.game = Game(rules)
        self.seat, self.bots, self.seed = seat, dict(bots), seed
        self.encoder, self.on_over = encoder, on_over
        self.table = action_table(rules)
        self.names = ["you" if p == seat else self.bots[p].name for p in range(n)]
        # in words: "player 2", and the person's own seat "player 0 (you)"
        self.words = [_player(p) + (" (you)" if p == seat else "") for p in range(n)]
        self.lock = threading.Lock()  # one request at a time changes the game
        self.version = 0  # the state counter: every change of what the page shows bumps it
        self.log: list[dict[str, Any]] = []  # the game's story: {"n", "text", "kind"}
        self.moves = MoveLog()
        self.end: dict[str, Any] | None = None  # the table as the last deal ended, while waiting
        self.left = False  # the person left before the game's end
        self.drawn: list[int] = []  # the cards the person last drew (or bought), until their discard
        self.game.reset(seed)
        self.first_dealer = self.game.dealer
        for p, bot in self.bots.items():
            bot.reset(seed + 1 + p)
        self._say(_deal_start_words(self.game), "deal")
        self._advance()

    # --- what the page is told ----------------------------------------------------------------

    @property
    def over(self) -> bool:
        """The game is over, or the person left it: nothing more is played."""
        return self.game.game_over or self.left

    def state(self, since: object = None) -> dict[str, Any]:
        """Everything the page shows, as the person's seat may see it; ``log``: the lines of the
        game's story after line ``since`` (an int; the page's last line), else the last ones;
        ``drawn``: the cards the person just drew; ``hint``: why a card may only be discarded;
        ``status``: the table's status line where the drawing's own would mislead (else None)."""
        game, seat = self.game, self.seat
        if self.end is not None:
            table, phase = self.end, "END"
        elif game.game_over:
            table, phase = table_state(game), "GAME_OVER"
        else:
            table, phase = self.seat_table(), game.phase.name
        mine = not self.over and self.end is None and game.to_act == seat
        legal = menu_order(game.legal_moves()) if mine else []
        return {
            "seat": seat,
            "state": self.version,
            "phase": phase,
            "left": self.left,
            "header": table_header(game, self.names),
            "table": table,
            "prompt": self._prompt(phase, legal),
            "moves": [self._move_json(m) for m in legal],
            "next": self.end is not None and not self.left,
            "known": self._known(),
            "drawn": self._drawn(),
            "status": self._status(),
            "hint": self._hint(legal),
            "results": [_result_json(r) for r in game.deal_results],
            "scores": list(game.scores),
            "winners": game.winners() if game.game_over else [],
            "log": self.log[since + 1 :][-LOG_SENT:]
            if type(since) is int and since >= -1
            else self.log[-LOG_SENT:],
        }

    def seat_table(self) -> dict[str, Any]:
        """The table as the person's seat sees it, from :meth:`Game.view`, in the form the drawing
        reads (:func:`shanghai_env.draw.state.table_state`): the other hands are their sizes only."""
        game, seat = self.game, self.seat
        view = game.view(seat)
        n = view.num_players
        return {
            "deal": view.deal,
            "contract": view.contract,
            "dealer": view.dealer,
            "phase": view.phase.name,
            "act": view.to_act,
            "turn": view.turn_player,
            # who is still to be asked about the upcard: public, everybody hears the answers
            "offer": list(game.offer) if view.phase == Phase.BUY else [],
            "up": card_to_str(view.upcard) if view.upcard != NO_PLAYER else None,
            "upFrom": None if view.upcard_from == NO_PLAYER else view.upcard_from,
            "pile": view.discard_size,
            "stock": view.stock_size,
            "rebuilds": view.stock_rebuilds_left,
            "hands": [
                hand_text(view.hand) if p == seat else " ".join([HIDDEN] * view.hand_sizes[p])
                for p in range(n)
            ],
            "melds": [[meld_text(m.cards, m.places, m.kind) for m in view.table[p]] for p in range(n)],
            "buys": list(view.buys_left),
            "down": list(view.down),
            "scores": list(view.scores),
            "result": None,
        }

    def _known(self) -> list[list[str]]:
        """The face-up cards each player, the person included, took and still holds (everybody
        saw them taken)."""
        if self.over or self.end is not None:
            return [[] for _ in range(self.game.num_players)]
        view = self.game.view(self.seat)
        return [
            [card_to_str(c) for c in sorted(cards_of(view.picked_up[p]), key=sort_key_by_rank)]
            for p in range(view.num_players)
        ]

    def _drawn(self) -> list[str]:
        """The cards the person just drew, took or bought and still holds (the page marks them in
        the hand)."""
        if self.over or self.end is not None:
            return []
        held = list(self.game.hands[self.seat])
        out = []
        for c in self.drawn:
            if held[c] > 0:  # not melded since
                held[c] -= 1
                out.append(card_to_str(c))
        return out

    def _went_down_now(self) -> bool:
        """The person went down this turn and is still to discard."""
        game = self.game
        return (
            game.phase == Phase.PLAY and game.to_act == self.seat and game.view(self.seat).went_down_this_turn
        )

    def _status(self) -> str | None:
        """The table's status line where the drawing's own words (the turn in general) would
        mislead: after the person left, or went down this turn (laying off waits for their next
        turn). None: the drawing's own."""
        if self.left:
            return f"{self.words[self.seat]} left the game: nothing more is played"
        if self.end is None and not self.over and self._went_down_now():
            return (
                f"{self.words[self.seat]} went down this turn: discard to end it "
                "(laying off and swapping wait for your next turn)"
            )
        return None

    def _hint(self, legal: Sequence[Move]) -> str:
        """Why a card of the person's hand offers no more than a discard now ("" where the moves
        say it themselves)."""
        game = self.game
        if not legal or game.phase != Phase.PLAY:
            return ""
        if self._went_down_now():
            return WENT_DOWN
        if not game.down[self.seat] and not any(m.kind == MoveKind.MELD for m in legal):
            contract = describe_contract(game.contract)
            return f"Your hand cannot make the contract ({contract}) yet: you can only discard."
        return ""

    def _move_json(self, move: Move) -> dict[str, Any]:
        """A legal move of the person: its engine name (what the page sends back), the card it
        moves and the meld it goes to (by owner's seat), and what it does in words."""
        n = self.game.num_players
        owner = None
        if move.kind == MoveKind.MELD:
            owner = self.seat
        elif move.kind in (MoveKind.LAYOFF, MoveKind.SWAP):
            owner = (self.seat + move.seat) % n
        return {
            "name": move.name,
            "kind": move.kind.name.lower(),
            "card": card_to_str(move.card) if move.card >= 0 else None,
            "place": place_to_str(move.place) if move.place >= 0 else None,
            "owner": owner,
            "meld": move.meld if move.meld >= 0 else None,
            "words": self._move_words(move),
        }

    def _move_words(self, move: Move) -> str:
        """The person's move as a button says it: ``put a joker as 7♣ in your first set``."""
        game, k = self.game, move.kind
        up = symbol_text(game.upcard) if game.upcard >= 0 else "upcard"
        simple = {
            MoveKind.TAKE: f"take the {up}",
            MoveKind.DRAW: "draw from the stock",
            MoveKind.BUY: f"buy the {up} (and a penalty card)",
            MoveKind.PASS: f"pass on the {up}",
            MoveKind.FINISH: "finish going down",
        }
        if k in simple:
            return simple[k]
        card = card_words(move.card, move.place if move.card == JOKER else None, "symbols")
        if k == MoveKind.DISCARD:
            return f"discard {card}"
        if k == MoveKind.MELD:
            high = " (high)" if move.card != JOKER and move.place != move.card else ""
            return f"put {card}{high} in your {meld_words(game.contract, move.meld)}"
        owner = (self.seat + move.seat) % game.num_players
        whose = "your" if owner == self.seat else f"{_player(owner)}'s"
        meld = f"{whose} {meld_words(game.contract, move.meld)}"
        if k == MoveKind.LAYOFF:
            high = " (high)" if move.card != JOKER and move.place != move.card else ""
            return f"lay off {card}{high} on {meld}"
        return f"swap {card} for the joker in {meld}"

    def _prompt(self, phase: str, legal: Sequence[Move]) -> str:
        """What the person may do now, in one line."""
        game = self.game
        if self.left:
            return "You left the game."
        if phase == "GAME_OVER":
            winners = game.winners()
            if winners == [self.seat]:
                return "Game over: you win!"
            who = " and ".join(self.words[p] for p in winners)
            return f"Game over: the winner{'s are' if len(winners) > 1 else ' is'} {who}."
        if phase == "END":
            return "The deal is over: see the scores, then deal the next hand."
        if not legal:
            return f"{self.words[game.to_act]} is playing."
        kinds = {m.kind for m in legal}
        up = symbol_text(game.upcard) if game.upcard >= 0 else "upcard"
        if phase == "DRAW":
            return f"Your turn: take the {up} (click it) or draw from the stock (click the stock)."
        if phase == "BUY":
            return f"{self.words[game.turn_player]} declined the {up}: do you buy it?"
        if phase == "GOING_DOWN":
            finish = " or finish going down" if MoveKind.FINISH in kinds else ""
            return f"Going down: pick a card, then the meld it goes in{finish}."
        can = [
            words
            for kind, words in (
                (MoveKind.MELD, "go down"),
                (MoveKind.LAYOFF, "lay off"),
                (MoveKind.SWAP, "swap"),
            )
            if kind in kinds
        ]
        if not can:
            if self._went_down_now():
                return f"{WENT_DOWN} Discard: pick a card, then click it again."
            return "Discard: pick a card, then click it again."
        first = ", ".join(can[:-1]) + (" or " if len(can) > 1 else "") + can[-1]
        return f"Pick a card to {first} (then click a meld), or click it twice to discard it."

    # --- requests -------------------------------------------------------------------------------

    def check(self, seat: object, state: object = None) -> None:
        """Refuse a request for another seat (403), or for an older state (409) when ``state`` is
        given."""
        if type(seat) is not int:
            raise Refused(400, f"'seat' must be your seat number, {self.seat}; got {seat!r}")
        if seat != self.seat:
            raise Refused(403, f"this game's person plays seat {self.seat}, not seat {seat}")
        if state is not None and (type(state) is not int or state != self.version):
            raise Refused(
                409,
                f"stale move: it was sent for state {state!r}, the game is at state {self.version}; "
                "reload the game",
            )

    def play(self, seat: object, state: object, name: object) -> None:
        """The person's move ``name`` (an engine move name, or ``next`` after a deal's end), then
        the bots' moves until the person's next decision. Refused requests change nothing."""
        if state is None:
            raise Refused(400, "'state' is missing: send the state counter of the table you saw")
        self.check(seat, state)
        if not isinstance(name, str):
            raise Refused(400, f"'move' must be a move name such as 'discard 7H', got {name!r}")
        if self.over:
            raise Refused(409, "the game is over" if not self.left else "you left this game")
        if name.strip().lower() == NEXT:
            if self.end is None:
                raise Refused(400, "'next' deals the next hand after a deal's end; the deal is still on")
            self.end = None
            self._say(_deal_start_words(self.game), "deal")
        else:
            if self.end is not None:
                raise Refused(400, "the deal is over: send 'next' to deal the next hand")
            try:
                move = parse_move(name)
            except (TypeError, ValueError) as err:
                raise Refused(400, str(err)) from None
            view = self.game.view(self.seat)
            if self.game.to_act != self.seat:
                raise Refused(409, f"it is {self.words[self.game.to_act]}'s turn, not yours")
            if move not in view.legal_moves:
                raise Refused(400, f"'{move.name}' is not legal now: {why_illegal(view, move)}")
            # the person's move takes the bots' step too (checked above, so it cannot fail here)
            self._apply(self.seat, decision_for(self.game, self.seat, self.table), self.table.encode(move))
        self.version += 1
        self._advance()

    def leave(self, seat: object, state: object = None) -> None:
        """The person leaves: nothing more is played; the record covers the game so far."""
        self.check(seat, state)
        if self.over:
            raise Refused(409, "the game is already over")
        self.left = True
        self.end = None
        self.drawn = []
        self.version += 1
        self._say("You left the game.", "deal")
        if self.on_over is not None:
            self.on_over(self)

    def record(self) -> dict[str, Any]:
        """The game so far as a game record (:mod:`shanghai_env.record`)."""
        meta = {"program": "shanghai_env.agents.ui.web", "seed": self.seed, "seat": self.seat}
        return make_record(
            self.game, self.moves, deck=None, dealer=self.first_dealer, players=self.names, meta=meta
        )

    # --- playing --------------------------------------------------------------------------------

    def _advance(self) -> None:
        """Bots play until the person must decide, a deal ends, or the game does."""
        game = self.game
        while not game.game_over and self.end is None:
            if game.to_act == self.seat:
                return
            else:
                p = game.to_act
                decision = decision_for(game, p, self.table, self.encoder)
                self._apply(p, decision, self.bots[p].act(decision))
        if game.game_over and self.on_over is not None:
            self.on_over(self)

    def _apply(self, p: int, decision: Decision, action: object) -> None:
        """Check and play seat ``p``'s answer (:func:`apply_action`: a ValueError names the
        player), then say it: the move, the stock draw that follows, what the person got."""
        game, seat = self.game, self.seat
        before = game.clone()  # the move is told from the state it was chosen in
        move = apply_action(game, decision, action, f"{self.names[p]} in seat {p}")
        words = describe_move(before, move, self.words, style="symbols")
        self.moves.add(move.name, len(game.deal_results))
        if len(game.deal_results) > len(before.deal_results):
            self._say(words, "move", p)
            self._deal_over(before, move)
            return
        if move.kind in (MoveKind.DRAW, MoveKind.PASS, MoveKind.BUY) and game.phase == Phase.PLAY:
            words += f"; {self.words[game.turn_player]} draws from the stock"
        self._say(words, "move", p)
        had = before.hands[seat]
        got = [c for c in range(NUM_CARD_KINDS) for _ in range(max(0, game.hands[seat][c] - had[c]))]
        if got:
            cards = " ".join(symbol_text(c) for c in sorted(got, key=sort_key_by_rank))
            self._say(f"you receive {cards}", "info")
            if move.kind in (MoveKind.TAKE, MoveKind.DRAW, MoveKind.PASS, MoveKind.BUY):
                self.drawn = sorted(got, key=sort_key_by_rank)
        if p == seat and move.kind == MoveKind.DISCARD:
            self.drawn = []  # the turn is over: what was drawn is just a card of the hand now

    def _deal_over(self, before: Game, move: Move | None) -> None:
        """Say how the deal ended and keep its table until the person deals on (``next``)."""
        game = self.game
        self.drawn = []
        result = game.deal_results[-1]
        if result.capped:  # the rules' max_moves_per_deal (docs/rules.md 5.5) ended it
            self._say(f"Move limit ({game.rules.max_moves_per_deal}) reached: the deal ends.", "info")
        if result.out_player == NO_PLAYER:
            how = "nobody went out"
        else:
            how = f"{self.words[result.out_player]} went out" + (" blind" if result.blind else "")
        scores = ", ".join(f"{self.words[p]} {s:+d}" for p, s in enumerate(result.scores))
        self._say(f"Deal {result.deal + 1} is over: {how}. This deal: {scores}.", "deal")
        if game.game_over:
            totals = ", ".join(f"{self.words[p]} {s}" for p, s in enumerate(game.scores))
            self._say(f"Final scores: {totals}.", "deal")
        else:
            self.end = table_state(before.deal_end_after(move), result)

    def _say(self, text: str, kind: str, who: int = NO_PLAYER) -> None:
        self.log.append({"n": len(self.log), "text": text, "kind": kind, "who": who})


def _deal_start_words(game: Game) -> str:
    return (
        f"Deal {game.deal + 1} begins: contract {game.contract} ({describe_contract(game.contract)}), "
        f"{_player(game.dealer)} deals, {_player(game.turn_player)} plays first"
    )


def _result_json(result: DealResult) -> dict[str, Any]:
    return {
        "deal": result.deal,
        "contract": result.contract,
        "scores": list(result.scores),
        "out": None if result.out_player == NO_PLAYER else result.out_player,
        "blind": result.blind,
    }
