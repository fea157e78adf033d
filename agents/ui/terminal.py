"""The terminal game: ``shanghai-play`` seats one person against bots or a saved model.

The person types moves by their engine names (``take``, ``draw``, ``buy``, ``pass``,
``discard 7H``, ``meld 0 7H``, ``meld 0 JK=7H``, ``layoff 7H 1.0``, ``swap 7H 1.0``, ``finish``)
or by their number in the menu of legal moves; ``help`` explains the rest. Table melds are named
``S.M`` as seen from the person's seat (S seats clockwise from them, meld M). Every move made by
anyone is printed as one line, ``player_2: discard 7H``. The table is drawn with ``rich`` (the
``play`` extra); input is plain lines, with tab completion when the terminal is interactive.

``--web`` plays the same table in a browser instead (:mod:`shanghai_env.agents.ui.web`, docs/play.md).

I/O is injectable for scripted play: ``main(argv, console=Console(file=...), read_line=...)``
or ``main(argv, stdin=stream)``. :class:`PlaySession` plays a :class:`~shanghai_env.engine.Game`
with any :class:`~shanghai_env.decision.Agent` objects in the other seats.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from shanghai_env.actions import action_table
from shanghai_env.agents.ui.text import card_text, hand_by_rank, hand_by_suit, menu_order, why_illegal
from shanghai_env.cards import JOKER, NUM_CARD_KINDS, card_to_str, cards_of, place_to_str, sort_key_by_rank
from shanghai_env.decision import Agent, Decision, Encoder, apply_action, decision_for
from shanghai_env.engine import NO_PLAYER, Game, Phase, PlayerView
from shanghai_env.melds import RUN, describe_contract
from shanghai_env.moves import Move, MoveKind, parse_move
from shanghai_env.narrate import card_words, meld_words
from shanghai_env.record import MoveLog, make_record

try:
    from rich import box
    from rich.columns import Columns
    from rich.console import Console, Group, RenderableType
    from rich.markup import escape
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    HAVE_RICH = True
except ImportError:  # the `play` extra is not installed; main() says so
    HAVE_RICH = False

ReadLine = Callable[[str], str]  # like input(): returns a line, raises EOFError at the end
COMMANDS = ("help", "moves", "table", "quit")
_ALIASES = {"?": "help", "h": "help", "m": "moves", "t": "table", "q": "quit", "exit": "quit"}
HELP = """\
Type a move's name, or its number in the menu. The rule book: {rules}
  [bold]take[/bold]            take the upcard as your draw
  [bold]draw[/bold]            decline it; after any buy you draw from the stock
  [bold]buy[/bold], [bold]pass[/bold]       answer a buy offer (y, n): upcard + a penalty card
  [bold]meld 0 7H[/bold]       going down: 7H into contract meld 0 (meld 0 7H 7D 7C)
  [bold]meld 1 JK=7H[/bold]    going down: a joker declared as 7H (AH^: high ace)
  [bold]layoff 7H 1.0[/bold]   lay 7H off on table meld 1.0
  [bold]swap 7H 1.0[/bold]     give 7H for meld 1.0's joker declared 7H, take it
  [bold]discard 7H[/bold]      end your turn; your last card goes out
  a;b             several moves on one line
Melds are named S.M: meld M of the player S seats to your left (0 = you).
Cards: rank A 2-9 T J Q K + suit C D H S (7H, TS); JK is a joker.
Commands: [bold]moves[/bold] (m) legal moves · [bold]table[/bold] (t) · [bold]help[/bold] (?) · \
[bold]quit[/bold] (q)"""


def rule_book() -> str:
    """Where the rule book (docs/rules.md) is on this machine: installed with the package (a
    wheel carries it as ``shanghai_env/docs/rules.md``), or in the clone."""
    import importlib.resources

    try:
        book = importlib.resources.files("shanghai_env.docs") / "rules.md"
        if book.is_file():
            return str(book)
    except ModuleNotFoundError:
        pass
    return "docs/rules.md of shanghai-env's source"


class PlaySession:
    """One person (seat ``human``) and agents in the other seats, playing ``game`` to its end.

    ``read_line`` works like ``input`` (EOFError ends the session). ``interactive``: the prompt is
    passed to ``read_line`` (a terminal shows it), else it is printed and the line echoed. Set
    ``show_menu`` and ``delay`` (seconds after each bot move) as needed. A deal ends by the
    game's rules, its move cap (``game.rules.max_moves_per_deal``) included.
    """

    show_menu = True
    delay = 0.0

    def __init__(
        self,
        game: Game,
        human: int,
        bots: dict[int, Agent],
        console: Console,
        read_line: ReadLine,
        *,
        interactive: bool = False,
        encoder: Encoder | None = None,
    ) -> None:
        n = game.num_players
        if not 0 <= human < n or sorted(bots) != [p for p in range(n) if p != human]:
            raise ValueError(f"need the person's seat (0..{n - 1}) and one agent for every other seat")
        self.game, self.human, self.bots, self.console = game, human, bots, console
        self.read_line, self.interactive, self.encoder = read_line, interactive, encoder
        self.table = action_table(game.rules)
        self.names = [("you" if p == human else bots[p].name) for p in range(n)]
        self._others_moved = True
        self.log = MoveLog()  # every move by name, for the game record
        self._start: tuple[list[str] | None, int] = (None, 0)  # the first deal's stacked deck and dealer
        self._recent: list[Text] = []  # the story since the last clear, shown again after it

    # --- the loop -----------------------------------------------------------------------------

    def play(
        self, seed: int | None = None, *, deck: list[str] | None = None, dealer: int | None = None
    ) -> bool:
        """Deal and play to the end; False if the person quit.

        ``seed`` decides every deck and the bots' seeds; ``deck`` (card strings, top first) and
        ``dealer`` stack the first deal, as :meth:`Game.reset` does.
        """
        game = self.game
        if deck is not None and not isinstance(deck, str) and hasattr(deck, "__iter__"):
            deck = list(deck)  # read twice: by the game and for the record (a generator, say)
        game.reset(seed, deck=deck, dealer=dealer)
        self.log = MoveLog()
        self._start = (None if deck is None else [str(c).upper() for c in deck], game.dealer)
        for p, bot in self.bots.items():
            bot.reset(None if seed is None else seed + 1 + p)
        seeded = f" · seed {seed}" if seed is not None else ""
        self.console.print(
            f"Shanghai Rummy · {game.num_players} players{seeded} · you are player_{self.human}"
        )
        while not game.game_over:
            if game.to_act == self.human:
                if not self._human_decision():
                    self.console.print("[yellow]You left the game before its end.[/]")
                    return False
            else:
                self._bot_move(game.to_act)
        self._show_final()
        return True

    def _bot_move(self, p: int) -> None:
        decision = decision_for(self.game, p, self.table, self.encoder)
        move = self._apply(p, decision, self.bots[p].act(decision))
        self._others_moved = self._others_moved or move.kind != MoveKind.PASS
        if self.delay > 0:
            time.sleep(self.delay)

    def _play(self, move: Move) -> None:
        """The person's move (the caller checked it legal), played by the same step as a bot's."""
        self._apply(self.human, decision_for(self.game, self.human, self.table), self.table.encode(move))

    def _apply(self, p: int, decision: Decision, action: object) -> Move:
        """Check and play seat ``p``'s answer (:func:`apply_action`), then print its line, what the
        person received, and a deal's end."""
        game, me = self.game, self.human
        # the line tells the move in the state it was chosen in
        up = card_to_str(game.upcard) if game.upcard != NO_PLAYER else "--"
        contract, deals_before, had = game.contract, len(game.deal_results), list(game.hands[me])
        move = apply_action(game, decision, action, f"{self.names[p]} in seat {p}")
        notes = {MoveKind.TAKE: f"took {up}", MoveKind.DRAW: f"declined {up}", MoveKind.BUY: f"bought {up}"}
        note = notes.get(move.kind, "") + (" + a penalty card" if move.kind == MoveKind.BUY else "")
        said = move.name
        if move.kind in (MoveKind.LAYOFF, MoveKind.SWAP) and p != me:
            said = self._table_move_words(p, move, contract)  # a bot's move names melds from its seat
        line = Text(f"player_{p}: {said}", style="bold" if p == me else "")
        if note:
            line.append(f" · {note}", style="dim")
        self._say(line)
        self.log.add(move.name, len(game.deal_results))
        if len(game.deal_results) > deals_before:
            self._show_deal_end()
            return move
        got = [c for c in range(NUM_CARD_KINDS) for _ in range(max(0, game.hands[me][c] - had[c]))]
        got.sort(key=sort_key_by_rank)
        if got:
            self._say(Text("  you receive ", style="dim").append_text(Text(" ").join(map(card_text, got))))
        return move

    def _table_move_words(self, p: int, move: Move, contract: int) -> str:
        """A layoff or swap in words, the meld named by owner and as the table shows it to you:
        ``lays off 7D on player_2's run (1.1)``; ``contract``: the deal's contract."""
        n = self.game.num_players
        owner = (p + move.seat) % n
        whose = "your" if owner == self.human else ("their" if owner == p else f"player_{owner}'s")
        seen_as = f"{(owner - self.human) % n}.{move.meld}"  # the name on your table
        meld = f"{whose} {meld_words(contract, move.meld)} ({seen_as})"
        if move.kind == MoveKind.LAYOFF:
            return f"lays off {card_words(move.card, move.place)} on {meld}"
        return f"swaps {card_words(move.card)} for the joker in {meld}"

    def _say(self, line: Text) -> None:
        """Print a line of the game's story (kept to be shown again when the screen is cleared)."""
        self._recent.append(line)
        self.console.print(line)

    def _show_recent(self, free_rows: int) -> None:
        """The story since the last screen, in the rows left under the table (at least 6; the
        menu and the prompt keep theirs); what does not fit is said to be cut, never dropped
        silently."""
        if not self._recent:
            return
        room = max(6, free_rows - 4 - (len(self.game.legal_moves()) + 1 if self.show_menu else 0))
        said, self._recent = self._recent, []
        self.console.print(Text("Last moves:", style="dim"))
        if len(said) > room:
            cut = len(said) - room + 1
            self.console.print(Text(f"… {cut} earlier move{'s' * (cut != 1)} not shown", style="dim"))
            said = said[cut:]
        for line in said:
            self.console.print(line)

    # --- the person's decisions ---------------------------------------------------------------

    def _human_decision(self) -> bool:
        """Show the table, read one line, play what it says; False if the person quits."""
        if self.interactive:  # a fresh screen: the table, then as many of the last moves as fit
            self.console.clear()
            # rendered by rich to the console itself: text captured with its colour codes and
            # printed again would count the codes as width and wrap every coloured row
            table = self.table_view()
            rows = len(self.console.render_lines(table, pad=False))
            self.console.print(table)
            self._show_recent(self.console.height - rows)
        else:
            self.draw_table(full=self._others_moved)
        self._others_moved = False
        if self.show_menu:
            self._print_menu()
        while True:
            try:
                line = self._ask()
            except (EOFError, KeyboardInterrupt):
                self.console.print()
                return False
            outcome = self._handle(line)
            if outcome == "quit":
                return False
            if outcome == "played":
                return True

    def _ask(self) -> str:
        view = self.game.view(self.human)
        up = card_to_str(view.upcard) if view.upcard != NO_PLAYER else "--"
        prompt = {
            Phase.DRAW: f"Your turn: take {up} or draw",
            Phase.BUY: f"player_{view.turn_player} declined {up}. Buy it ({view.buys_left[self.human]} "
            "buys left)? buy/pass",
            Phase.PLAY: _play_prompt(view),
            Phase.GOING_DOWN: "Going down: meld N CARD"
            + (", or finish" if any(m.kind == MoveKind.FINISH for m in view.legal_moves) else ""),
        }.get(view.phase, "")
        prompt += " (help, moves) > "
        if self.interactive:
            return self.read_line(prompt)
        self.console.print(Text(prompt, style="cyan"), end="")
        line = self.read_line("")
        self.console.print(Text(line), highlight=False)
        return line

    def _handle(self, line: str) -> str:
        """Act on one input line: 'played', 'quit', or 'again' (a command, or a message shown)."""
        text = line.strip()
        word = _ALIASES.get(text.lower(), text.lower())
        view = self.game.view(self.human)
        if not text:
            return "again"
        if word == "help":
            self.console.print(HELP.format(rules=escape(rule_book())))
        elif word == "moves":
            self._print_menu()
        elif word == "table":
            self.draw_table()
        elif word == "quit":
            return "quit"
        elif text.isdigit():
            menu = menu_order(view.legal_moves)
            if not 1 <= int(text) <= len(menu):
                self._error(f"there is no move {text}: the menu runs from 1 to {len(menu)} ('moves')")
                return "again"
            self._play(menu[int(text) - 1])
            return "played"
        else:
            if view.phase == Phase.BUY and word in ("y", "yes", "n", "no"):
                text = "buy" if word.startswith("y") else "pass"
            return self._play_text(text)
        return "again"

    def _play_text(self, text: str) -> str:
        """Parse and play the moves of one line in order; stop at the first bad one."""
        try:
            moves = [m for part in text.split(";") if part.strip() for m in parse_moves(part)]
        except ValueError as err:
            alone = any(part.strip().isdigit() for part in text.split(";")) and ";" in text
            hint = (
                "a number from 'moves' goes on a line of its own, not after ';'"
                if alone
                else "type 'help' for move names, or a number from 'moves' on a line of its own"
            )
            self._error(f"{err}; {hint}.")
            return "again"
        played = False
        for move in moves:
            if self.game.to_act != self.human:
                self._error(f"'{move.name}' and the rest skipped: player_{self.game.to_act} acts first")
                break
            view = self.game.view(self.human)
            if move not in view.legal_moves:
                self._error(f"'{move.name}' is not legal now: {why_illegal(view, move)}.")
                break
            self._play(move)
            played = True
        return "played" if played else "again"

    def _error(self, message: str) -> None:
        self.console.print(Text(message, style="bold red"))

    def record(self, meta: dict[str, object] | None = None) -> dict[str, object]:
        """The game so far (finished or not) as a game record (:mod:`shanghai_env.record`)."""
        deck, dealer = self._start
        return make_record(self.game, self.log, deck=deck, dealer=dealer, players=self.names, meta=meta)

    def completions(self, text: str) -> list[str]:
        """Move names and commands starting with ``text`` (for tab completion)."""
        mine = self.game.to_act == self.human
        names = [m.name for m in menu_order(self.game.legal_moves())] if mine else []
        return [w for w in [*names, *COMMANDS] if w.lower().startswith(text.lower())]

    # --- drawing --------------------------------------------------------------------------------

    def draw_table(self, full: bool = True) -> None:
        """Print the table as the person may see it; ``full=False``: only the melds and the hand."""
        self.console.print(self.table_view(full))

    def table_view(self, full: bool = True) -> Group:
        """The table of :meth:`draw_table` as one renderable, for rich to lay out at the console's width."""
        view = self.game.view(self.human)
        parts: list[RenderableType] = []
        if full:
            deal = f"Deal {view.deal + 1}/{len(self.game.rules.contracts)}"
            rest = f"{describe_contract(view.contract)} · dealer player_{view.dealer}"
            title = f"{deal} · contract {view.contract}: {rest}"
            if len(title) + 4 > self.console.width:  # the rule's ends take 4: keep the dealer, not the number
                title = f"{deal} · {rest}"
            parts.append(Rule(title))
            parts.append(self._players(view))
        melds = _grid(3, padding=2)
        for rel in range(view.num_players):  # your own melds first, then clockwise
            self._draw_melds(view, rel, melds)
        if melds.row_count:
            parts.append(melds)
        if full and view.phase in (Phase.DRAW, Phase.BUY):
            up = Text("Upcard ").append_text(card_text(view.upcard) if view.upcard >= 0 else Text("--"))
            if view.upcard_from != NO_PLAYER:
                up.append(f" (from player_{view.upcard_from})")
            parts.append(up.append(f" · stock {view.stock_size} · discard pile {view.discard_size}"))
        elif full:  # the top of the pile is not on offer once the turn's draw is made
            pile = Text(f"Discard pile {view.discard_size}")
            if view.upcard >= 0:
                pile.append(" (top ").append_text(card_text(view.upcard)).append(")")
            parts.append(pile.append(f" · stock {view.stock_size}"))
        hand = _grid()
        hand.add_row(Text(f"Your hand ({sum(view.hand)}):", style="bold"), hand_by_rank(view.hand))
        hand.add_row(Text("  by suit:", style="dim"), hand_by_suit(view.hand))
        parts.append(hand)
        return Group(*parts)

    def _players(self, view: PlayerView) -> Table:
        grid = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for col in ("", "seat", "player", "cards", "buys", "down", "score", "known in hand"):
            grid.add_column(col, justify="right" if col in ("cards", "buys", "score") else "left")
        for p in range(view.num_players):
            mine = p == self.human
            known = Text(" ").join(map(card_text, cards_of(view.picked_up[p]))) if not mine else Text()
            cells = [f"player_{p}", self.names[p], str(view.hand_sizes[p]), str(view.buys_left[p])]
            cells += ["down" if view.down[p] else "", str(view.scores[p])]
            grid.add_row("▶" if p == view.to_act else "", *cells, known, style="bold" if mine else None)
        return grid

    def _draw_melds(self, view: PlayerView, rel: int, grid: Table) -> None:
        """The melds of the player ``rel`` seats to the person's left, named ``rel.M``: rows of ``grid``
        (a long meld wraps in its own column)."""
        p = (self.human + rel) % view.num_players
        for j, meld in enumerate(view.table[p]):
            laid = list(zip(meld.places, meld.cards))  # runs are in order; sets are shown sorted
            laid = laid if meld.kind == RUN else sorted(laid)
            texts = [(card, ("JK=" if card == JOKER else "") + place_to_str(place)) for place, card in laid]
            cards = [card_text(c, t) for c, t in texts] or [Text("(empty)", style="dim")]
            grid.add_row(
                Text(f"  {rel}.{j} ", style="bold cyan").append(str(meld.spec), style="default"),
                Text(f"player_{p} ({self.names[p]})", style="dim"),
                Text(" ").join(cards),
            )

    def _print_menu(self) -> None:
        menu = menu_order(self.game.legal_moves())
        items = [Text(f"{i}", style="cyan").append(f" {m.name}", style="") for i, m in enumerate(menu, 1)]
        self.console.print(Columns(items, padding=(0, 3), column_first=False))

    def _show_deal_end(self) -> None:
        game = self.game
        result = game.deal_results[-1]
        if result.capped:
            self.console.print(
                f"[yellow]Move limit ({game.rules.max_moves_per_deal}) reached: the deal ends.[/]"
            )
        if result.out_player == NO_PLAYER:
            how = "Nobody went out"
        else:
            how = f"player_{result.out_player} ({self.names[result.out_player]}) went out"
            how += " blind" if result.blind else ""
        self.console.rule(f"End of deal {result.deal + 1} (contract {result.contract}): {how}")
        grid = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for col in ("seat", "player", "this deal", "total"):
            grid.add_column(col, justify="right" if col in ("this deal", "total") else "left")
        for p, s in enumerate(result.scores):
            grid.add_row(f"player_{p}", self.names[p], f"{s:+d}", str(game.scores[p]))
        self.console.print(grid)
        if not game.game_over:
            self.console.print(
                f"Next: deal {game.deal + 1}/{len(game.rules.contracts)}, contract {game.contract} "
                f"({describe_contract(game.contract)})"
            )
            if self.interactive:
                with contextlib.suppress(EOFError):
                    self.read_line("Press Enter to deal the next hand ")
            self._others_moved = True

    def _show_final(self) -> None:
        scores, winners = self.game.scores, self.game.winners()
        totals = ", ".join(f"player_{p} {s}" for p, s in enumerate(scores))
        self.console.print(Text(f"Final scores: {totals}", style="bold"))
        who = " and ".join(f"player_{p} ({self.names[p]})" for p in winners)
        won = winners == [self.human]
        self.console.print("[bold green]You win![/]" if won else f"Winner{'s' * (len(winners) > 1)}: {who}")


def _grid(columns: int = 2, padding: int = 1) -> Table:
    """Label columns that never wrap, then one column that wraps under itself."""
    grid = Table.grid(padding=(0, padding))
    for _ in range(columns - 1):
        grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def _play_prompt(view: PlayerView) -> str:
    """What the person may do after drawing, as the legal moves allow."""
    kinds = {m.kind for m in view.legal_moves}
    can = [
        words
        for kind, words in ((MoveKind.MELD, "go down"), (MoveKind.LAYOFF, "lay off"), (MoveKind.SWAP, "swap"))
        if kind in kinds
    ]
    if not can:
        return "Discard a card"
    first = ", ".join(can[:-1]) + (" or " if len(can) > 1 else "") + can[-1]
    return first[0].upper() + first[1:] + ", then discard"


def parse_moves(text: str) -> list[Move]:
    """The moves of one typed part: a move name, or ``meld N C1 C2 ...`` for several placements."""
    words = text.split()
    if len(words) > 3 and words[0].lower() == "meld":
        return [parse_move(f"meld {words[1]} {card}") for card in words[2:]]
    return [parse_move(text)]


# --- command line -------------------------------------------------------------------------------
