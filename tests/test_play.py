"""The terminal game (``shanghai-play``, :mod:`shanghai_env.agents.ui.cli`), driven by scripted input, no TTY.

The whole-deal tests play the person's seat with a scripted player that only reads the screen:
it replays every printed ``player_N: move`` line on its own fresh :class:`Game` (same rules,
same seed), asks a greedy policy for the person's move and types it (by name, or by its number
in the printed menu). The final scores printed by the game must equal the replayed game's
``deal_results``, computed independently of the play module.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Iterable

import pytest
from helpers import deal_deck

from shanghai_env.actions import ActionTable
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.ui.cli import main
from shanghai_env.agents.ui.terminal import PlaySession, hand_by_rank, hand_by_suit, parse_moves
from shanghai_env.cards import counts_of, parse_cards
from shanghai_env.decision import decision_for
from shanghai_env.engine import Game
from shanghai_env.rules import Rules

Console = pytest.importorskip("rich.console", reason="the terminal game needs rich (the play extra)").Console
MOVE_LINE = re.compile(r"^(player_\d+): (.+?)(?: · .*)?$", re.MULTILINE)
MENU_LINE = re.compile(r"^\d+ [a-z]")
# a bot's layoff or swap is said in words, its meld named as the person's table shows it
TABLE_WORDS = re.compile(
    r"^(lays off|swaps) (?:a joker as )?(\S+) (?:on|for the joker in) .* \((\d+)\.(\d+)\)$"
)


def engine_name(said: str, mover: int, person: int, num_players: int) -> str:
    """The engine's name of a printed move: names pass through, a bot's layoff or swap in words
    (``lays off a joker as 7H on player_2's run (2.1)``) becomes ``layoff JK=7H 1.1``."""
    m = TABLE_WORDS.match(said)
    if not m:
        return said
    verb, card, rel, meld = m.groups()
    owner = (person + int(rel)) % num_players
    seat = (owner - mover) % num_players
    if verb == "swaps":
        return f"swap {card} {seat}.{meld}"
    joker = "JK=" if said.startswith("lays off a joker as ") else ""
    return f"layoff {joker}{card} {seat}.{meld}"


def console() -> tuple[Console, io.StringIO]:
    screen = io.StringIO()
    return Console(file=screen, width=100, highlight=False), screen


def scripted(lines: Iterable[str]):
    """A read_line that answers with ``lines`` in turn, then reports the end of input."""
    it = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read


class ScreenPlayer:
    """Plays one seat from what is printed: replays the moves shown, types a greedy choice."""

    def __init__(self, screen: io.StringIO, rules: Rules, seed: int, seat: int, by_number: bool) -> None:
        self.screen, self.seat, self.by_number = screen, seat, by_number
        self.game = Game(rules)
        self.game.reset(seed)
        self.table = ActionTable(rules)
        self.policy = GreedyBot()
        self.policy.reset(seed)
        self.typed: list[str] = []
        self.pos = 0

    def catch_up(self) -> str:
        text = self.screen.getvalue()[self.pos :]
        self.pos += len(text)
        for m in MOVE_LINE.finditer(text):
            assert m.group(1) == f"player_{self.game.to_act}", m.group(0)
            self.game.apply(engine_name(m.group(2), self.game.to_act, self.seat, self.game.num_players))
        return text

    def __call__(self, prompt: str) -> str:
        text = self.catch_up()
        assert self.game.to_act == self.seat
        move = self.table.decode(self.policy.act(decision_for(self.game, self.seat, self.table)))
        answer = move.name
        if self.by_number:
            menu = {}
            for line in text.splitlines():
                if MENU_LINE.match(line):
                    for item in re.split(r"\s{2,}", line.strip()):
                        number, name = item.split(" ", 1)
                        menu[name] = number
            answer = menu[move.name]
        self.typed.append(answer)
        return answer


def final_scores(text: str) -> list[int]:
    line = re.search(r"^Final scores: (.*)$", text, re.MULTILINE)
    assert line, "no final scores printed"
    return [int(s) for s in re.findall(r"player_\d+ (-?\d+)", line.group(1))]


def deal_scores(text: str, deal: int, num_players: int) -> tuple[list[int], list[int]]:
    """(this deal's scores, totals) from the table printed at the end of deal ``deal`` (1-based)."""
    after = text[text.index(f"End of deal {deal} (") :].splitlines()[3 : 3 + num_players]
    rows = [re.fullmatch(r"player_(\d+) .* ([+-]\d+)\s+(-?\d+)", row.strip()) for row in after]
    assert all(rows), after
    return [int(r.group(2)) for r in rows if r], [int(r.group(3)) for r in rows if r]


def play_through(argv: list[str], rules: Rules, seed: int, seat: int, by_number: bool):
    out, screen = console()
    player = ScreenPlayer(screen, rules, seed, seat, by_number)
    rc = main([*argv, "--seed", str(seed), "--seat", str(seat)], console=out, read_line=player)
    player.catch_up()
    return rc, screen.getvalue(), player


@pytest.fixture(scope="module")
def whole_deal():
    rules = Rules(num_players=4, contracts=(1,))
    return play_through(["--opponents", "greedy,planner,random", "--contracts", "1"], rules, 7, 0, False)


def test_whole_deal_typed_by_name_ends_with_the_right_scores(whole_deal) -> None:
    rc, text, player = whole_deal
    replay = player.game
    assert rc == 0 and replay.game_over
    assert len(player.typed) > 10
    deal_1 = list(replay.deal_results[0].scores)
    assert deal_scores(text, 1, 4) == (deal_1, deal_1)
    assert final_scores(text) == replay.scores == deal_1
    assert "End of deal 1 (contract 1)" in text


def test_the_same_lines_on_stdin_replay_the_same_game(whole_deal) -> None:
    _, text, player = whole_deal
    out, screen = console()
    stdin = io.StringIO("".join(line + "\n" for line in player.typed))
    argv = ["--opponents", "greedy,planner,random", "--contracts", "1", "--seed", "7"]
    assert main(argv, console=out, stdin=stdin) == 0
    assert screen.getvalue() == text


def test_two_deals_played_by_menu_numbers_end_with_the_right_scores() -> None:
    rules = Rules(num_players=3, contracts=(1, 2))
    argv = ["--players", "3", "--bot", "greedy", "--contracts", "1,2"]
    rc, text, player = play_through(argv, rules, 11, 1, True)
    replay = player.game
    assert rc == 0 and replay.game_over and len(replay.deal_results) == 2
    assert all(t.isdigit() for t in player.typed)
    totals = [0, 0, 0]
    for r in replay.deal_results:
        totals = [t + s for t, s in zip(totals, r.scores)]
        assert deal_scores(text, r.deal + 1, 3) == (list(r.scores), totals)
    assert final_scores(text) == replay.scores == totals


# --- stacked deals through PlaySession ------------------------------------------------------------


def run_session(lines: Iterable[str], deck: list[str], dealer: int, seed: int = 0) -> tuple[bool, str]:
    out, screen = console()
    game = Game(num_players=3, contracts=(1,))
    bots = {p: GreedyBot() for p in (1, 2)}
    finished = PlaySession(game, 0, bots, out, scripted(lines)).play(seed, deck=deck, dealer=dealer)
    return finished, screen.getvalue()


FIRST = deal_deck(3, 2, {0: "7H 7D JK 9S 9H 9D 2C 3C 4D 5S KH"}, "QS")


def test_malformed_and_illegal_input_get_a_message_and_the_game_goes_on() -> None:
    lines = ["help", "frobnicate", "discard ZZ", "discard 7H", "99", "", "moves", "2"]
    lines += ["layoff 7H 1.0", "discard 8C", "q"]
    finished, text = run_session(lines, FIRST, dealer=2)
    assert not finished
    assert "layoff 7H 1.0" in text and "Commands:" in text  # the help
    assert "unknown move 'frobnicate'" in text
    assert "cannot read move 'discard ZZ'" in text
    assert "'discard 7H' is not legal now: it is your turn to draw first" in text
    assert "there is no move 99: the menu runs from 1 to 2" in text
    assert text.count("1 take   2 draw") == 2  # shown at the prompt, then again by 'moves'
    assert "player_0: draw · declined QS" in text  # '2' picked the second menu entry
    assert "'layoff 7H 1.0' is not legal now: you may lay off or swap only after going down" in text
    assert "'discard 8C' is not legal now: you hold no 8C" in text
    assert "You left the game before its end." in text


def test_going_down_with_several_moves_on_one_line() -> None:
    lines = ["take", "meld 0 7H 7D JK=7C; meld 1 9S 9H 9D", "discard KH; discard 2C", "q"]
    finished, text = run_session(lines, FIRST, dealer=2)
    assert not finished
    played = [m.group(2) for m in MOVE_LINE.finditer(text) if m.group(1) == "player_0"]
    melds = [f"meld 0 {c}" for c in ("7H", "7D", "JK=7C")] + [f"meld 1 {c}" for c in ("9S", "9H", "9D")]
    assert played == ["take", *melds, "discard KH"]
    table = re.findall(r"^\s+0\.(\d) set of 3 .*player_0 \(you\)\s+(.*?)\s*$", text, re.MULTILINE)
    assert "'discard 2C' and the rest skipped: player_1 acts first" in text
    assert ("0", "JK=7C 7D 7H") in table and ("1", "9D 9H 9S") in table  # sets shown sorted
    assert re.search(r"^▶?\s+player_0\s+you\s+5\s+3\s+down", text, re.MULTILINE)


@pytest.mark.parametrize(("answer", "move"), [("y", "buy · bought KS + a penalty card"), ("n", "pass")])
def test_a_buy_offer_is_asked_and_answered(answer: str, move: str) -> None:
    singles = {1: "2C 3D 4H 5S 6C 8D 9H TS JC QD AH", 2: "2D 3H 4S 5C 6D 8H 9S TC JD QH AS"}
    deck = deal_deck(3, 0, {**singles, 0: "7H 7D 7C 9S 9D 2S 3S 4C 5D 6H KH"}, "KS", "8C")
    _, text = run_session([answer, "q"], deck, dealer=0)
    assert "player_1: draw · declined KS" in text and "player_2: pass" in text
    assert "player_1 declined KS. Buy it (3 buys left)? buy/pass" in text
    assert f"player_0: {move}" in text
    if answer == "y":
        assert "you receive 8C KS" in text


# --- pieces ---------------------------------------------------------------------------------------


def test_several_placements_in_one_meld_command() -> None:
    assert [m.name for m in parse_moves("meld 1 7H JK=7C")] == ["meld 1 7H", "meld 1 JK=7C"]
    assert [m.name for m in parse_moves("discard th")] == ["discard TH"]
    with pytest.raises(ValueError, match="cannot read move"):
        parse_moves("meld 1 7H ZZ")


def test_the_hand_is_sorted_and_grouped() -> None:
    hand = counts_of(parse_cards("KH AS 2C JK KD AD 9C"))
    assert hand_by_rank(hand).plain == "AD AS   2C   9C   KD KH   JK"
    assert hand_by_suit(hand).plain == "C: 2 9   D: A K   H: K   S: A   JK"


def test_completion_offers_legal_move_names_and_commands() -> None:
    out, _ = console()
    game = Game(num_players=3, contracts=(1,))
    game.reset(0, deck=FIRST, dealer=2)
    session = PlaySession(game, 0, {1: GreedyBot(), 2: GreedyBot()}, out, scripted([]))
    assert session.completions("") == ["take", "draw", "help", "moves", "table", "quit"]
    game.apply("take")
    assert session.completions("discard 7") == ["discard 7D", "discard 7H"]
    assert session.completions("DISCARD 7h") == ["discard 7H"]
    assert session.completions("h") == ["help"]


def test_the_move_limit_ends_a_deal() -> None:
    out, screen = console()
    argv = ["--players", "3", "--contracts", "1", "--seed", "3", "--max-moves", "4"]
    assert main(argv, console=out, stdin=io.StringIO("1\n" * 10)) == 0
    text = screen.getvalue()
    assert "Move limit (4) reached" in text and "Nobody went out" in text and "Final scores:" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["--players", "9"],
        ["--players", "4", "--opponents", "greedy,greedy"],
        ["--seat", "4"],
        ["--opponents", "nobody,greedy"],
        ["--contracts", "1,x"],
        ["--contracts", "11"],
        ["--max-moves", "0"],
    ],
)
def test_bad_options_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv, console=console()[0], stdin=io.StringIO(""))
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def run_python(args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_the_module_runs_with_piped_stdin() -> None:
    argv = ["-m", "shanghai_env.agents.ui.cli", "--players", "3", "--contracts", "1", "--seed", "1"]
    done = run_python(argv, "help\nq\n")
    assert done.returncode == 1, done.stderr
    assert "Your hand (11)" in done.stdout and "Commands:" in done.stdout


def test_without_rich_it_says_what_to_install_and_the_library_does_not_import_agents() -> None:
    code = (
        "import sys; sys.modules['rich'] = None\n"
        "import shanghai_env.agents.ui.cli as play\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'agents']\n"
        "sys.exit(play.main(['--contracts', '1']))"
    )
    done = run_python(["-c", code])
    assert done.returncode == 2, done.stderr
    assert "needs the 'rich' package: pip install 'shanghai-env[play]'" in done.stderr
