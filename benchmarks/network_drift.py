"""What a round of training changed in a move-value network, outside games: its values and its moves.

    python benchmarks/network_drift.py --reference scratch --networks runs/exit/model.pt --games 60
    python benchmarks/network_drift.py --players 4 --reference scratch --networks PATH,PATH

Values: in each network's own greedy self-play (the same seeds for every network), how well its
best move's score at the start of a seat's turn (where the search's rollouts stop and read it,
docs/bots.md, "Search over a network") predicts that seat's deal result, in points (its own
score minus the others' mean): the mean error, the root mean squared error and R² (1 minus the
squared error over the result's variance; 0 is no better than a constant).

Moves: on the states of ``--reference``'s greedy self-play, how often each network picks another
move than the reference, by the reference's gap between its two best scores (under 0.02, the
search's default gate, is a close call). A fit on close calls should change close calls only.

Only networks whose scores are move values (dmc, exit). Not a strength figure.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.agents.bots.search import relative_points
from shanghai_env.agents.learned.players.net_search import BatchRollouts
from shanghai_env.agents.learned.players.policy import PolicyAgent, check_policy
from shanghai_env.cli import int_in
from shanghai_env.engine import Game
from shanghai_env.moves import MoveKind
from shanghai_env.rules import Rules

GAPS = ((0.0, 0.02, "close (gap < 0.02)"), (0.02, 0.1, "gap 0.02 to 0.1"), (0.1, np.inf, "gap >= 0.1"))


def self_play(
    player: BatchRollouts, rules: Rules, games: int, seed: int, others: list[BatchRollouts] = ()
) -> dict[str, np.ndarray]:
    """Greedy self-play of ``player`` on seeds ``seed``, ``seed + 1``, ...: at every decision its
    best score in points and whether it starts a turn, the seat and deal, the gap between its two
    best scores (inf with one legal move), and whether each of ``others`` picks the same move."""
    rows = [p.net.acting_table() for p in (player, *others)]
    state = [Game(rules) for _ in range(games)]
    for k, game in enumerate(state):
        game.reset(seed + k)
    out: dict[str, list[np.ndarray]] = {
        k: [] for k in ("value", "start", "game", "seat", "deal", "gap", "same")
    }
    active = list(range(games))
    while active:
        batch = [state[i] for i in active]
        scores, idx, _ = player.scores(batch, rows[0])
        best = scores.argmax(1)
        top = scores.topk(2, dim=1).values if scores.shape[1] > 1 else scores.expand(-1, 2)
        gap = torch.where(torch.isfinite(top[:, 1]), top[:, 0] - top[:, 1], torch.tensor(np.inf))
        out["value"].append((top[:, 0] * player.to_points).numpy())
        out["gap"].append(gap.numpy())
        # the moves themselves are compared: another encoding numbers and orders the actions otherwise
        chosen = [player.table.moves[int(idx[j, best[j]])] for j in range(len(batch))]
        same = []
        for o, r in zip(others, rows[1:]):
            o_scores, o_idx, _ = o.scores(batch, r)
            o_best = o_scores.argmax(1)
            same.append([o.table.moves[int(o_idx[j, o_best[j]])] == m for j, m in enumerate(chosen)])
        out["same"].append(np.array(same, bool).T.reshape(len(batch), len(others)))
        out["start"].append(
            np.array(
                [
                    g.to_act == g.turn_player and any(m.kind == MoveKind.DRAW for m in g.legal_moves())
                    for g in batch
                ]
            )
        )
        out["game"].append(np.array(active))
        out["seat"].append(np.array([g.to_act for g in batch]))
        out["deal"].append(np.array([len(g.deal_results) for g in batch]))
        still = []
        for j, i in enumerate(active):
            state[i].apply(chosen[j])
            if not state[i].game_over:
                still.append(i)
        active = still
    got = {k: np.concatenate(v) for k, v in out.items()}
    got["result"] = np.array(
        [
            relative_points(state[g].deal_results[d].scores, s)
            for g, d, s in zip(got["game"], got["deal"], got["seat"])
        ]
    )
    return got


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reference", default="scratch", help="the network whose games the moves are compared on"
    )
    parser.add_argument("--networks", required=True, help="comma-separated networks (names or .pt files)")
    parser.add_argument("--players", type=int_in(3, 8), default=3)
    parser.add_argument("--games", type=int_in(1), default=60)
    parser.add_argument("--seed", type=int_in(0, 2**32 - 1), default=7000)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    rules = Rules(num_players=args.players)
    names = [args.reference, *[n for n in args.networks.split(",") if n]]
    try:
        agents = [PolicyAgent(n) for n in names]
        for agent in agents:
            check_policy(agent.path, rules, where=f"--players {args.players}")
    except (OSError, ValueError) as err:
        parser.error(str(err))
    nets = [BatchRollouts(agent, rules) for agent in agents]
    for name, net in zip(names, nets):
        if not net.q_values:
            parser.error(f"{name}: its scores are not move values (a dmc or exit network is needed)")
    print(
        f"values: each network's best score at its turn starts against the seat's deal result, "
        f"{args.players} players, {args.games} games of its own"
    )
    for name, net in zip(names, nets):
        got = self_play(net, rules, args.games, args.seed)
        m = got["start"]
        err = got["value"][m] - got["result"][m]
        var = got["result"][m].var()
        mse = float((err**2).mean())
        print(
            f"  {name}: {m.sum()} turn starts, mean error {err.mean():+.2f}, rmse {np.sqrt(mse):.2f}, "
            f"R2 {1 - mse / var:.3f}"
        )
    print(f"moves: how often each network picks another move than {args.reference} on its games")
    got = self_play(nets[0], rules, args.games, args.seed, nets[1:])
    for k, name in enumerate(names[1:]):
        parts = []
        for lo, hi, label in GAPS:
            m = (got["gap"] >= lo) & (got["gap"] < hi)
            parts.append(f"{label} {1 - got['same'][m, k].mean():.4f} of {m.sum()}")
        print(f"  {name}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
