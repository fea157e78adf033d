"""The terminal game as a person sees it: moves in words with absolute seats, prompts that say
what is possible, a cleared screen when interactive, 80 columns, and the game saved as a record
that replays to the printed scores."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from helpers import deal_deck

from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.ui.cli import main
from shanghai_env.agents.ui.terminal import PlaySession
from shanghai_env.draw.replay import write_replay
from shanghai_env.engine import Game
from shanghai_env.record import load, replay

Console = pytest.importorskip("rich.console", reason="the terminal game needs rich (the play extra)").Console
Text = pytest.importorskip("rich.text").Text
ARGV = ["--opponents", "greedy,planner,greedy", "--contracts", "2", "--seed", "3"]


def play(argv: list[str], width: int = 100, answers: str = "1\n" * 400) -> tuple[int, str]:
    screen = io.StringIO()
    rc = main(argv, console=Console(file=screen, width=width, highlight=False), stdin=io.StringIO(answers))
    return rc, screen.getvalue()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    path = tmp_path_factory.mktemp("play") / "game.json"
    rc, text = play([*ARGV, "--record", str(path)], width=80)
    return rc, text, path


def test_bots_layoffs_name_the_meld_by_its_owner(played) -> None:
    rc, text, _ = played
    assert rc == 0
    said = re.findall(r"^player_[123]: (lays off \S+ on .*)$", text, re.MULTILINE)
    assert said and all(
        re.fullmatch(r"lays off \S+ on (their|your|player_\d's) (set|run) \(\d\.\d\)", s) for s in said
    )
    assert not re.search(r"^player_[123]: (layoff|swap) ", text, re.MULTILINE)


def test_prompts_offer_only_what_is_legal(played) -> None:
    _, text, _ = played
    assert "Discard a card (help, moves) >" in text
    assert "Meld, lay off or swap" not in text
    for block in text.split("Discard a card (help, moves) >")[:-1]:
        menu = block.rsplit("\n\n", 1)[-1]
        assert "meld " not in menu.split("Your hand")[-1] and "layoff" not in menu.split("Your hand")[-1]


def test_the_game_fits_80_columns(played) -> None:
    _, text, path = played
    lines = [line for line in text.splitlines() if str(path) not in line]  # paths are not wrapped
    assert len(lines) > 200 and max(len(line.rstrip()) for line in lines) <= 80


def test_the_saved_record_replays_to_the_printed_scores(played, tmp_path: Path) -> None:
    _, text, path = played
    assert f"Game record saved to {path}" in text
    record = load(path)
    assert record["players"] == ["you", "greedy", "planner", "greedy"] and record["meta"]["seed"] == 3
    game = replay(record)
    line = re.search(r"^Final scores: (.*)$", text, re.MULTILINE)
    assert line and [int(s) for s in re.findall(r"player_\d+ (-?\d+)", line.group(1))] == game.scores
    result = game.deal_results[0]
    row = [int(s) for s in re.findall(r"^player_\d\s+\S+\s+([+-]\d+)", text, re.MULTILINE)]
    assert row == list(result.scores)
    page = write_replay(path, tmp_path / "game.html")
    assert "lays off" in page.read_text(encoding="utf-8")


def test_a_game_left_early_is_saved_too(tmp_path: Path) -> None:
    path = tmp_path / "left.json"
    rc, text = play([*ARGV, "--record", str(path)], answers="1\n1\nq\n")
    assert rc == 1 and "You left the game" in text
    record = load(path)
    assert record["game_over"] is False and replay(record).move_count == len(record["deals"][0]["moves"])


FIRST = deal_deck(3, 2, {0: "7H 7D JK 9S 9H 9D 2C 3C 4D 5S KH"}, "QS")


def session(lines: list[str], interactive: bool = False) -> tuple[PlaySession, str]:
    screen = io.StringIO()
    out = Console(file=screen, width=80, highlight=False, force_terminal=interactive)
    answers = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    game = Game(num_players=3, contracts=(1,))
    s = PlaySession(game, 0, {1: GreedyBot(), 2: GreedyBot()}, out, read, interactive=interactive)
    s.play(0, deck=FIRST, dealer=2)
    return s, screen.getvalue()


def test_after_the_draw_the_pile_is_not_offered() -> None:
    s, text = session(["draw", "table", "q"])
    after = text[text.index("player_0: draw") :]
    assert "Upcard" not in after
    assert s.game.phase.name == "PLAY"
    assert len(re.findall(r"^Discard pile \d+( \(top \w\w\))? · stock \d+", after, re.MULTILINE)) == 2


def test_the_session_record_replays() -> None:
    s, _ = session(["take", "meld 0 7H 7D JK=7C; meld 1 9S 9H 9D", "discard KH", "1", "1", "q"])
    record = s.record()
    assert record["start"]["deck"] == FIRST and record["start"]["dealer"] == 2
    game = replay(record)
    assert game.table[0][0].text() == s.game.table[0][0].text() and game.scores == s.game.scores


def test_an_interactive_screen_is_cleared_before_each_decision() -> None:
    _, text = session(["take", "discard KH", "q"], interactive=True)
    assert text.count("\x1b[2J") == 3  # one fresh screen per decision
    assert "Last moves:" in text


def test_a_long_story_uses_the_free_rows_and_says_where_it_was_cut() -> None:
    screen = io.StringIO()
    out = Console(file=screen, width=80, height=30, highlight=False, force_terminal=True)
    answers = iter(["draw", "discard KH", "q"])
    game = Game(num_players=3, contracts=(1,))
    s = PlaySession(game, 0, {1: GreedyBot(), 2: GreedyBot()}, out, lambda _: next(answers), interactive=True)
    s._recent = [Text(f"story line {i}") for i in range(40)]  # more than any screen holds
    s._show_recent(free_rows=22)
    text = screen.getvalue()
    shown = re.findall(r"story line (\d+)", text)
    cut = re.search(r"… (\d+) earlier moves not shown", text)
    assert cut is not None and int(cut.group(1)) + len(shown) == 40  # nothing dropped silently
    assert shown[-1] == "39" and len(shown) >= 12  # the newest lines, more than the old 12
    assert s._recent == []


def test_a_number_after_a_semicolon_is_refused_with_what_is_allowed() -> None:
    _, text = session(["take", "discard KH; 2", "q"])
    text = " ".join(text.split())  # the console wraps long lines
    assert "a number from 'moves' goes on a line of its own, not after ';'" in text
    assert "or a number from 'moves'." not in text  # the old message said numbers work there


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.mark.parametrize("width", [80, 120])
def test_rows_are_whole_in_colour_at_80_and_120_columns(width: int) -> None:
    """A real terminal's screen (colour codes on): the table's header, every player's row, the
    hand and the title each stay on one line, and no line is wider than the terminal (colour
    codes once counted as width and wrapped every coloured row)."""
    screen = io.StringIO()
    out = Console(file=screen, width=width, height=60, force_terminal=True, color_system="truecolor")
    answers = iter(["1"] * 30)
    game = Game(num_players=4, contracts=(9,))  # the longest contract: its title needs 83 columns
    bots = {p: GreedyBot() for p in (1, 2, 3)}
    s = PlaySession(game, 0, bots, out, lambda _: next(answers), interactive=True)  # type: ignore[arg-type]
    with pytest.raises(StopIteration):
        s.play(7)
    raw = screen.getvalue()
    assert "\x1b[" in raw and "\x1b[2J" in raw  # coloured, and a fresh screen per decision
    lines = ANSI.sub("", raw).splitlines()
    assert max(len(line) for line in lines) <= width
    titles = [line for line in lines if line.startswith("─") and "Deal 1/1" in line]
    assert len(titles) >= 10 and all(
        "set of 3 + set of 3 + set of 3 + run of 5 · dealer player_" in t for t in titles
    )
    headers = [
        line
        for line in lines
        if re.match(r"\s+seat\s+player\s+cards\s+buys\s+down\s+score\s+known in hand$", line)
    ]
    assert len(headers) == len(titles)
    for p, name in enumerate(["you", "greedy", "greedy", "greedy"]):
        rows = [
            line
            for line in lines
            if re.match(rf"[▶ ]\s+player_{p}\s+{name}\s+\d+\s+\d+\s+(down\s+)?-?\d+\b", line)
        ]
        assert len(rows) == len(titles), (p, len(rows))
    hands = [i for i, line in enumerate(lines) if line.startswith("Your hand (")]
    assert len(hands) == len(titles)
    for i in hands:  # the cards follow the label; a long hand goes on under itself, then the suits
        assert re.fullmatch(r"Your hand \(\d+\):\s+(\S\S\s*)+", lines[i])
        j = i + 1
        while not lines[j].startswith("  by suit:"):
            assert re.fullmatch(r" {16,}(\S\S\s*)+", lines[j]), lines[j]  # never from the left edge
            j += 1
