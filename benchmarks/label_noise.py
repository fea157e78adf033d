"""How much of a rollout label is the hidden cards: the same upcard decisions valued from the true
state (as ``shanghai-train scorer gen`` values them) and from worlds sampled from the player's view.

    python benchmarks/label_noise.py --decisions 718 --rollouts 16 --seed 11   # about 45 minutes
    python benchmarks/label_noise.py --decisions 20 --rollouts 4               # a minute

A scorer (``--model``, default ``models/shanghai.scorer``) plays every seat of seeded full 4-player
games. At each upcard decision of seat 0 where the network is asked (take or draw, buy or pass),
both candidates are played to the end of the deal with the scorer in every seat:

- ``--rollouts`` times from the true state, every pair of rollouts coupled (same seeds and stock
  draws): ``gen``'s label, whose mean depends on the hidden cards of that deal;
- ``--rollouts`` times, each in its own world sampled uniformly from the player's view
  (:class:`shanghai_env.worlds.WorldSampler`, as ``search`` samples them), the pair coupled in
  that world: a label whose mean depends on the view alone.

Each label's squared standard error estimates its noise; what is left of the labels' variance
across decisions is the spread of the moves' values. The true state's includes what the hidden
cards add; the sampled worlds' is what a player's view determines, under a uniform belief about
the hidden cards (which ignores what opponents' picks reveal, so it is a lower bound). The
printout gives both, with bootstrap 95% intervals, and how the scorer's cost difference
correlates with each. Nothing is timed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from shanghai_env.actions import action_table
from shanghai_env.agents.base import decision_for
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.scorer import ScorerBot, ScorerNet
from shanghai_env.agents.learned.train.scorer_data import rollout_values
from shanghai_env.decision import apply_action
from shanghai_env.engine import Game, Phase
from shanghai_env.moves import DRAW
from shanghai_env.rules import Rules
from shanghai_env.worlds import WorldSampler

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def label_pairs(net: ScorerNet, decisions: int, rollouts: int, seed: int) -> np.ndarray:
    """(decisions, 5): the scorer's cost difference (take minus draw, buy minus pass), the true
    state's label and its standard error, the sampled worlds' label and its standard error."""
    rng = np.random.default_rng(seed)
    rules = Rules(num_players=4)
    table = action_table(rules)
    rows: list[list[float]] = []
    while len(rows) < decisions:
        agents = [ScorerBot(net) for _ in range(4)]
        for agent in agents:
            agent.reset(int(rng.integers(1 << 62)))
        bots = [ScorerBot(net) for _ in range(4)]  # the rollouts' players
        game = Game(rules)
        game.reset(int(rng.integers(1 << 62)))
        while not game.game_over and len(rows) < decisions:
            p = game.to_act
            decision = decision_for(game, p, table)
            agent = agents[p]
            view = decision.view
            if p == 0 and view.phase in (Phase.DRAW, Phase.BUY):
                agent.rules = decision.rules
                prior = PlannerBot.buy(agent, view) if view.phase == Phase.BUY else DRAW
                if agent.asks(view, prior):  # where gen labels a decision
                    cands = agent.candidates(view)
                    costs = net.costs(cands.features)
                    true = rollout_values(game, 0, cands.moves, bots, rng, rollouts, table, rules)
                    dt = true[:, 0] - true[:, 1]
                    sampler = WorldSampler(view, rules)
                    dw = []
                    for _ in range(rollouts):
                        world = sampler.sample(rng)
                        one = rollout_values(world, 0, cands.moves, bots, rng, 1, table, rules)
                        dw.append(one[0, 0] - one[0, 1])
                    w = np.array(dw)
                    rows.append(
                        [
                            float(costs[0] - costs[1]),
                            float(dt.mean()),
                            float(dt.std(ddof=1) / np.sqrt(rollouts)),
                            float(w.mean()),
                            float(w.std(ddof=1) / np.sqrt(rollouts)),
                        ]
                    )
            apply_action(game, decision, agent.act(decision), f"seat {p}")
    return np.array(rows)


def summary(rows: np.ndarray, boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The spread of each kind of label once its noise is taken out, with bootstrap intervals."""
    margin = rows[:, 0]
    rng = np.random.default_rng(seed)
    n = len(rows)
    out: dict[str, Any] = {"decisions": n}
    for name, col in (("true_state", 1), ("sampled_worlds", 3)):
        label, se = rows[:, col], rows[:, col + 1]
        signal = float(label.var() - (se**2).mean())
        draws = rng.integers(0, n, size=(boot, n))
        spread = label[draws].var(axis=1) - (se[draws] ** 2).mean(axis=1)
        out[name] = {
            "label_sd": float(label.std()),
            "rms_se": float(np.sqrt((se**2).mean())),
            "signal_var": signal,
            "signal_ci": [float(v) for v in np.percentile(spread, [2.5, 97.5])],
            "corr_with_scorer": float(np.corrcoef(margin, label)[0, 1]),
        }
    out["corr_true_worlds"] = float(np.corrcoef(rows[:, 1], rows[:, 3])[0, 1])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--decisions", type=int, default=200, help="upcard decisions to value")
    parser.add_argument("--rollouts", type=int, default=16, help="rollouts of each kind a decision")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--model", default=os.path.join(ROOT, "models", "shanghai.scorer"))
    parser.add_argument("--save", default=None, help="write the rows to this .npy file")
    args = parser.parse_args(argv)
    if args.decisions < 2:
        parser.error(f"argument --decisions: at least 2, got {args.decisions}")
    if args.rollouts < 2:
        parser.error(f"argument --rollouts: at least 2 (a standard error needs two), got {args.rollouts}")
    try:
        net = ScorerNet.load(args.model)
    except (OSError, ValueError) as err:
        parser.error(f"argument --model: {err}")
    rows = label_pairs(net, args.decisions, args.rollouts, args.seed)
    if args.save:
        np.save(args.save, rows)
    s = summary(rows)
    print(f"{s['decisions']} upcard decisions, {args.rollouts} rollouts of each kind, seed {args.seed}")
    for name in ("true_state", "sampled_worlds"):
        k = s[name]
        lo, hi = k["signal_ci"]
        print(
            f"{name.replace('_', ' ')}: labels' sd {k['label_sd']:.1f}, rms standard error "
            f"{k['rms_se']:.1f}; spread without the noise: variance {k['signal_var']:.0f} "
            f"[{lo:.0f}, {hi:.0f}] (sd {np.sqrt(max(k['signal_var'], 0.0)):.1f}); "
            f"correlation with the scorer's cost difference {k['corr_with_scorer']:.3f}"
        )
    print(f"correlation of the two labels: {s['corr_true_worlds']:.3f}")
    return s


if __name__ == "__main__":
    main()
