# Records shanghai_4p's decisions in the learner seat of DerivedSingleAgentEnv (full game) against
# opponents drawn per seat from planner, greedy, shanghai_4p: python collect.py PLAYERS STEPS SEED OUT.npz
import sys
import time

import numpy as np

from shanghai_env.agents.learned.imitation import collect
from shanghai_env.agents.learned.training import TrainConfig, env_factory

n, steps, seed, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cfg = TrainConfig(
    num_players=n,
    contracts=tuple(range(1, 11)),
    opponents=("planner", "greedy", "shanghai_4p"),
    shaping=0.0,
    features="structured",
    derived=True,
)
env = env_factory(cfg)()
t = time.time()
d = collect(env, "shanghai_4p", steps, 0.995, seed=seed)
np.savez(
    out,
    obs=d.obs,
    masks=np.packbits(d.masks, axis=1),
    actions=d.actions,
    returns=d.returns,
    n_actions=d.masks.shape[1],
)
print(out, len(d), time.time() - t, flush=True)
