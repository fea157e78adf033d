"""A complete self-play actor-critic on shanghai_env.vector_env, without the trainer (docs/training.md).

Every decision waits in its game until its deal ends; the deal's result (the seat's reward) is
then its Monte-Carlo return, the value head its baseline, and a PPO clipped step learns from a
batch of them. Samples only among the legal moves. ``python examples/ppo_vector_env.py 200``
"""

import sys

import numpy as np
import torch
from torch import nn

import shanghai_env

torch.set_num_threads(1)  # one thread per process: on small machines torch's default is much slower
updates = int(sys.argv[1]) if len(sys.argv) > 1 else 200
venv = shanghai_env.vector_env(num_envs=32, num_players=4, contracts=(1,))
obs, mask, seat = venv.reset(seed=0)
trunk = nn.Sequential(nn.Linear(obs.shape[1], 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
pi, v = nn.Linear(128, venv.num_actions), nn.Linear(128, 1)
params = [*trunk.parameters(), *pi.parameters(), *v.parameters()]
opt = torch.optim.Adam(params, lr=3e-4)
pending = [[] for _ in range(venv.num_envs)]  # per game: (obs, mask, action, log-prob, seat)
batch = []
for update in range(updates):
    while len(batch) < 2048:
        with torch.no_grad():
            logits = pi(trunk(torch.from_numpy(obs).float()))
            logits[torch.from_numpy(mask) == 0] = -torch.inf  # legal moves only
            dist = torch.distributions.Categorical(logits=logits)
            actions = dist.sample()
            logp = dist.log_prob(actions)
        for i in range(venv.num_envs):
            pending[i].append((obs[i].copy(), mask[i].copy(), int(actions[i]), float(logp[i]), int(seat[i])))
        obs, mask, seat, rewards, done = venv.step(actions.numpy())
        for i in np.flatnonzero(rewards.any(1) | done):  # a deal ended: its decisions get their seat's result
            relative = rewards[i] - rewards[i].mean()
            batch += [(o, m, a, lp, relative[s]) for o, m, a, lp, s in pending[i]]
            pending[i] = []
    o, m, a, lp, ret = (torch.as_tensor(np.array(x)) for x in zip(*batch))
    batch = []
    for _ in range(2):
        h = trunk(o.float())
        logits = pi(h).masked_fill(m == 0, -torch.inf)
        new_lp = torch.distributions.Categorical(logits=logits).log_prob(a)
        value = v(h).squeeze(1)
        adv = (ret - value).detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = (new_lp - lp).exp()
        loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() + 0.5 * (value - ret).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if update % 10 == 0:
        print(f"update {update}: value loss {(value - ret).pow(2).mean().item():.3f}", flush=True)
