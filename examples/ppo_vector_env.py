"""A complete self-play actor-critic on shanghai_env.vector_env, without the trainer (docs/training.md).

Every decision waits in its game until its deal ends; the deal's result (the seat's reward) is
then its Monte-Carlo return, the value head its baseline, and a PPO clipped step learns from a
batch of them. Scores only the legal moves' rows of the policy head and samples among them
(nets/sampling.py). ``python examples/ppo_vector_env.py 200``
"""

import sys
import time

import numpy as np
import torch
from torch import nn

import shanghai_env
from shanghai_env.agents.learned.nets.sampling import legal_index, legal_log_probs, legal_scores, sample_legal

torch.set_num_threads(1)  # one thread per process: on small machines torch's default is much slower
updates = int(sys.argv[1]) if len(sys.argv) > 1 else 200
venv = shanghai_env.vector_env(num_envs=32, num_players=4, contracts=(1,), reward="relative")
obs, mask, seat = venv.reset(seed=0)
trunk = nn.Sequential(nn.Linear(obs.shape[1], 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
pi, v = nn.Linear(128, venv.num_actions), nn.Linear(128, 1)
params = [*trunk.parameters(), *pi.parameters(), *v.parameters()]
opt = torch.optim.Adam(params, lr=3e-4)
pending = [[] for _ in range(venv.num_envs)]  # per game: (obs, legal ids, move's place, log-prob, seat)
batch = []
for update in range(updates):
    acting, decisions = time.perf_counter(), 0
    while len(batch) < 2048:
        legal = venv.legal_actions
        with torch.no_grad():
            idx, valid = legal_index(legal)  # each game's legal ids: only their rows are scored
            scores = legal_scores(trunk(torch.from_numpy(obs).float()), pi, idx, valid)
            actions, k, logp = sample_legal(scores, idx)
        for i in range(venv.num_envs):
            pending[i].append((obs[i].copy(), legal[i], int(k[i]), float(logp[i]), int(seat[i])))
        obs, mask, seat, rewards, done = venv.step(actions.numpy())
        decisions += venv.num_envs
        for i in np.flatnonzero(venv.deal_ended):  # a deal ended: its decisions get their seat's result
            batch += [(o, m, a, lp, rewards[i, s]) for o, m, a, lp, s in pending[i]]
            pending[i] = []
    acting = decisions / (time.perf_counter() - acting)
    o, m, a, lp, ret = zip(*batch)
    o, a, lp, ret = (torch.as_tensor(np.array(x)) for x in (o, a, lp, ret))
    idx, valid = legal_index(list(m))
    batch = []
    for _ in range(2):
        h = trunk(o.float())
        new_lp = legal_log_probs(legal_scores(h, pi, idx, valid)).gather(1, a[:, None]).squeeze(1)
        value = v(h).squeeze(1)
        adv = (ret - value).detach()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = (new_lp - lp).exp()
        loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() + 0.5 * (value - ret).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if update % 10 == 0:
        loss = (value - ret).pow(2).mean().item()
        print(f"update {update}: value loss {loss:.3f}, acting {acting:,.0f} decisions/s", flush=True)
