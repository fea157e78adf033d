"""How a player plays, beside the bots at its table: where a learned player falls short.

Plays ``--games`` full games of one player against ``players - 1`` copies of ``--opponent``
(the player's seat rotated game by game, the decks fixed by ``--seed``) and counts, per deal,
for the player and for the opponents' seats together:

- **could go down**: the share of deals in which the seat, on its turn, held a hand that
  makes the contract (a `meld` move was legal), and **goes down on a turn it can**: how often
  such a turn went to a `meld` move (the engine offers `meld` only when the contract can be
  completed from the hand, docs/actions.md);
- **went down**: the share of deals the seat laid its contract down, and how many table moves
  into the deal it did so (moves of every seat);
- **went out**: the share of deals the seat went out of;
- **deal score**: its mean (lower is better);
- **takes an out / takes another card**: in its draw, how often it took the upcard when that
  card would bring its hand closer to the contract (an exact fact of its own hand,
  ``nets/facts.py``), and when it would not; **buys an out / buys another card**: the same
  for buying out of turn;
- **down: takes / buys the upcard when the table takes it, and when it does not**: the same once
  the seat is down, where a card some meld takes can be laid off and any other card is dead weight;
- **lays off when it can**: once down, how often a turn on which a layoff was legal went to one;
- **discards a card the contract needs, holding a spare**: before going down, how often a discard
  let go of a card whose loss takes the hand further from the contract while the hand held one
  whose loss does not (the ``losses`` facts).

    python benchmarks/habits.py --player runs/full4p_dmcf64_s1/model.pt --games 16
    python benchmarks/habits.py --player shanghai --opponent planner --games 8
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ROWS = (
    ("could go down (share of deals)", "could"),
    ("goes down on a turn it can", "go_down"),
    ("went down (share of deals)", "down"),
    ("moves into the deal when it went down", "down_at"),
    ("went out (share of deals)", "out"),
    ("deal score (mean)", "score"),
    ("takes the upcard when it is an out", "take_out"),
    ("takes the upcard when it is not", "take_other"),
    ("buys the upcard when it is an out", "buy_out"),
    ("buys the upcard when it is not", "buy_other"),
    ("down: takes the upcard when the table takes it", "take_fits"),
    ("down: takes the upcard when it does not", "take_dead"),
    ("down: buys the upcard when the table takes it", "buy_fits"),
    ("down: buys the upcard when it does not", "buy_dead"),
    ("lays off when it can", "layoff"),
    ("discards a card the contract needs, holding a spare", "discard_needed"),
)


Seen = dict[str, dict[str, list[float]]]  # per side ("player", "opponents"): observations by statistic


def play(player: str, opponent: str, games: int, players: int, seed: int) -> Seen:
    """Per side (``player``, ``opponents``): every statistic's observations."""
    from shanghai_env.actions import action_table
    from shanghai_env.agents.base import decision_for
    from shanghai_env.agents.learned.nets.facts import game_facts
    from shanghai_env.agents.learned.players.sb3 import observation_encoder
    from shanghai_env.agents.registry import make_agent
    from shanghai_env.decision import apply_action
    from shanghai_env.engine import Game
    from shanghai_env.legal import table_accepts
    from shanghai_env.moves import MoveKind

    seen: Seen = {"player": defaultdict(list), "opponents": defaultdict(list)}
    game = Game(num_players=players)
    table = action_table(game.rules)
    encoder = observation_encoder(game.rules)
    for g in range(games):
        mine = g % players
        agents = [
            make_agent(player if s == mine else opponent, seed=seed + g * players + s) for s in range(players)
        ]
        for s, agent in enumerate(agents):
            agent.reset(seed + g * players + s)
        game.reset(seed + g)
        side = ["player" if s == mine else "opponents" for s in range(players)]
        down_at: list[int | None] = [None] * players
        could = [False] * players
        start, deals = game.move_count, 0
        while not game.game_over:
            p = game.to_act
            decision = decision_for(game, p, table, encoder)
            legal = decision.view.legal_moves
            kinds = {m.kind for m in legal}
            before = game.clone()  # the habits are read in the state the move was chosen in
            move = apply_action(game, decision, agents[p].act(decision), f"{agents[p].name!r} in seat {p}")
            stats = seen[side[p]]
            if (MoveKind.TAKE in kinds or MoveKind.BUY in kinds) and before.discard:
                verb = "take" if MoveKind.TAKE in kinds else "buy"
                took = float(move.kind in (MoveKind.TAKE, MoveKind.BUY))
                upcard = before.discard[-1]
                if not before.down[p]:
                    is_out = bool(game_facts(before, p)[1 + upcard])
                    stats[f"{verb}_{'out' if is_out else 'other'}"].append(took)
                else:  # down: does some meld on the table take it (it could be laid off)?
                    fits = bool(table_accepts(before.table) >> upcard & 1)
                    stats[f"{verb}_{'fits' if fits else 'dead'}"].append(took)
            if not before.down[p] and MoveKind.MELD in kinds and MoveKind.DISCARD in kinds:
                could[p] = True  # a turn's play phase (not a going-down sequence under way)
                stats["go_down"].append(float(move.kind == MoveKind.MELD))
            if move.kind == MoveKind.DISCARD and not before.down[p]:
                losses = game_facts(before, p)[54:107]
                held = [c for c in range(53) if before.hands[p][c]]
                if any(losses[c] == 0 for c in held):
                    stats["discard_needed"].append(float(losses[move.card] > 0))
            if before.down[p] and MoveKind.LAYOFF in kinds:
                stats["layoff"].append(float(move.kind == MoveKind.LAYOFF))
            if len(game.deal_results) > deals:  # the deal ended
                result = game.deal_results[-1]
                for s in range(players):
                    st = seen[side[s]]
                    when = down_at[s]
                    st["could"].append(float(could[s]))
                    st["down"].append(float(when is not None))
                    if when is not None:
                        st["down_at"].append(float(when))
                    st["out"].append(float(result.out_player == s))
                    st["score"].append(float(result.scores[s]))
                deals, start, down_at = deals + 1, game.move_count, [None] * players
                could = [False] * players
            else:
                for s in range(players):
                    if down_at[s] is None and game.down[s]:
                        down_at[s] = game.move_count - start
    return seen


def report(seen: Seen, player: str, opponent: str) -> str:
    lines = [f"| | {player} | {opponent} seats |", "|---|---:|---:|"]
    for label, key in ROWS:
        cells = []
        for side in ("player", "opponents"):
            values = seen[side][key]
            if not values:
                cells.append("–")
                continue
            mean = sum(values) / len(values)
            shown = f"{mean:.1f}" if key in ("down_at", "score") else f"{mean:.1%}"
            cells.append(f"{shown} ({len(values)})")
        lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--player", required=True, help="the player to watch (any player name of evaluate.py)"
    )
    parser.add_argument("--opponent", default="greedy", help="who holds the other seats (default greedy)")
    parser.add_argument("--games", type=int, default=16, help="full games (default 16)")
    parser.add_argument("--players", type=int, default=4, choices=range(3, 9), metavar="3..8")
    parser.add_argument("--seed", type=int, default=1000, help="the decks' seed (default 1000)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    from shanghai_env.agents.registry import check_player
    from shanghai_env.rules import Rules

    try:
        for spec in (args.player, args.opponent):
            check_player(spec, Rules(num_players=args.players))
    except ValueError as err:
        parser.error(str(err).splitlines()[0])
    seen = play(args.player, args.opponent, args.games, args.players, args.seed)
    print(f"{args.games} games, {args.players} players, decks of seed {args.seed}; (n): observations")
    print(report(seen, args.player, args.opponent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
