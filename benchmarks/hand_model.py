"""How much a learned model of the hidden cards knows: held-out cross-entropy of the others'
hidden cards under the model and under the uniform law over the unseen cards (nats a card).

    python benchmarks/hand_model.py --players 3 --games 64 --test-games 16 --out /tmp/hands_3p.pt

Records come from games of ``--player`` (default the shipped ``scratch``) in every seat; the test
games are dealt from another seed than the training games.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from shanghai_env.agents.learned.players.hand_model import (
    cross_entropy,
    fit,
    save_hand_model,
    self_play_records,
)
from shanghai_env.agents.learned.players.net_search import BatchRollouts
from shanghai_env.agents.learned.players.policy import PolicyAgent
from shanghai_env.cli import int_in
from shanghai_env.rules import Rules


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int_in(3, 8), default=3)
    p.add_argument("--player", default="scratch", help="the player of every seat (default scratch)")
    p.add_argument("--games", type=int_in(1), default=64, help="training games (default 64)")
    p.add_argument("--test-games", type=int_in(1), default=16, help="held-out games (default 16)")
    p.add_argument("--epochs", type=int_in(1), default=10)
    p.add_argument("--seed", type=int_in(0), default=0)
    p.add_argument("--out", default="", help="save the model here")
    p.add_argument("--records", default="", help="an .npz of the records: read if it exists, else written")
    p.add_argument("--hidden", type=int_in(1), default=256, help="the model's hidden width (default 256)")
    args = p.parse_args()
    torch.set_num_threads(1)
    rules = Rules(num_players=args.players)
    rollouts = BatchRollouts(PolicyAgent(args.player), rules)
    t0 = time.process_time()
    if args.records and os.path.exists(args.records):
        data = np.load(args.records)
        obs, counts, shares = data["obs"], data["counts"], data["shares"]
        t_obs, t_counts, t_share = data["t_obs"], data["t_counts"], data["t_share"]
    else:
        obs, counts, shares = self_play_records(rollouts, args.games, seed=args.seed)
        t_obs, t_counts, t_share = self_play_records(rollouts, args.test_games, seed=args.seed + 10_000)
        if args.records:
            test = {"t_obs": t_obs, "t_counts": t_counts, "t_share": t_share}
            np.savez(args.records, obs=obs, counts=counts, shares=shares, **test)
    t1 = time.process_time()
    model = fit(rules, obs, counts, shares, seed=args.seed, epochs=args.epochs, hidden=args.hidden)
    t2 = time.process_time()
    with torch.no_grad():
        learned = float(
            cross_entropy(
                model(torch.from_numpy(t_obs.copy()), torch.from_numpy(t_share)), torch.from_numpy(t_counts)
            )
        )
    logu = np.log(np.where(t_share > 0, t_share, 1.0))[:, None, :]
    uniform = float(-(logu * t_counts).sum() / t_counts.sum())
    print(
        f"{args.players} players: {len(obs)} training records, {len(t_obs)} held out; "
        f"nats a hidden card: uniform {uniform:.4f}, model {learned:.4f} "
        f"({uniform - learned:+.4f} a card); records {t1 - t0:.0f} CPU s, fit {t2 - t1:.0f} CPU s"
    )
    if args.out:
        save_hand_model(args.out, model, {"player": args.player, "games": args.games, "seed": args.seed})


if __name__ == "__main__":
    main()
