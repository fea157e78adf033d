# DAgger: the clone MODEL plays the learner seat, shanghai_4p labels the states it reaches:
# python dagger.py PLAYERS STEPS SEED OUT.npz MODEL.zip
import sys
import time

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from shanghai_env.agents.learned.imitation import collect
from shanghai_env.agents.learned.training import TrainConfig, env_factory

torch.set_num_threads(1)
n, steps, seed, out, model_path = (
    int(sys.argv[1]),
    int(sys.argv[2]),
    int(sys.argv[3]),
    sys.argv[4],
    sys.argv[5],
)
cfg = TrainConfig(
    num_players=n,
    contracts=tuple(range(1, 11)),
    opponents=("planner", "greedy", "shanghai_4p"),
    shaping=0.0,
    features="structured",
    derived=True,
)
env = env_factory(cfg)()
model = MaskablePPO.load(model_path, device="cpu")


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
