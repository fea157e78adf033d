# Records shanghai_4p's decisions in the learner seat of DerivedSingleAgentEnv (full game) against
# opponents drawn per seat from planner, greedy, shanghai_4p:
#   python collect.py PLAYERS STEPS SEED OUT.npz            # shanghai_4p plays
#   python collect.py PLAYERS STEPS SEED OUT.npz MODEL.zip  # DAgger: MODEL plays, shanghai_4p labels
import sys
import time

import numpy as np
import torch

from shanghai_env.agents.learned.imitation import collect
from shanghai_env.agents.learned.training import TrainConfig, env_factory

torch.set_num_threads(1)
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
drive = None
if len(sys.argv) > 5:
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(sys.argv[5], device="cpu")

    def drive(obs, mask):
        return int(model.predict(obs, action_masks=mask, deterministic=True)[0])


t = time.time()
d = collect(env, "shanghai_4p", steps, 0.995, seed=seed, driver=drive)
np.savez(
    out,
    obs=d.obs,
    masks=np.packbits(d.masks, axis=1),
    actions=d.actions,
    returns=d.returns,
    n_actions=d.masks.shape[1],
)
print(out, len(d), time.time() - t, flush=True)
