"""Cloning shanghai_4p into a StructuredPolicy MaskablePPO (derived inputs) from demo shards."""

import sys
import time

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from shanghai_env.agents.learned.derived import DerivedSingleAgentEnv
from shanghai_env.agents.learned.imitation import _logits_and_values
from shanghai_env.agents.learned.structured import StructuredPolicy

out, epochs, lr, width, nplayers = (
    sys.argv[1],
    int(sys.argv[2]),
    float(sys.argv[3]),
    int(sys.argv[4]),
    int(sys.argv[5]),
)
shards = sorted(sys.argv[6:])
torch.set_num_threads(1)
torch.manual_seed(0)
obs, masks, acts, rets = [], [], [], []
for f in shards:
    z = np.load(f)
    A = int(z["n_actions"])
    obs.append(z["obs"])
    masks.append(z["masks"])
    acts.append(z["actions"])
    rets.append(z["returns"])
obs, masks, acts, rets = (
    np.concatenate(obs),
    np.concatenate(masks),
    np.concatenate(acts),
    np.concatenate(rets),
)
n = len(acts)
rng = np.random.default_rng(0)
idx = rng.permutation(n)
k = n // 20
val, tr = np.sort(idx[:k]), idx[k:]
print("decisions", n, "shards", len(shards), flush=True)
env = DerivedSingleAgentEnv(None, num_players=nplayers)
model = MaskablePPO(
    StructuredPolicy,
    env,
    policy_kwargs={
        "num_players": nplayers,
        "contracts": tuple(range(1, 11)),
        "width": width,
        "derived": True,
    },
    seed=0,
    device="cpu",
)
pol = model.policy
pol.set_training_mode(True)
opt = torch.optim.Adam(pol.parameters(), lr=lr)
bs = 512
steps = epochs * ((len(tr) + bs - 1) // bs)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps)


def batch(ix):
    ix = np.sort(ix)
    return (
        torch.as_tensor(obs[ix]),
        torch.as_tensor(np.unpackbits(masks[ix], axis=1, count=A).astype(bool)),
        torch.as_tensor(acts[ix]),
        torch.as_tensor(rets[ix]),
    )


lay = 58 + 112 * 4
swp = lay + 112 * 4 * nplayers


def kinds(a):
    return np.select(
        [a < 2, a < 4, a < 5, a < 58, a < lay, a < swp],
        ["draw", "buy", "finish", "discard", "meld", "layoff"],
        "swap",
    )


t0 = time.time()
for ep in range(epochs):
    order = rng.permutation(tr)
    tot = 0.0
    for s in range(0, len(order), bs):
        o, m, a, r = batch(order[s : s + bs])
        logits, values = _logits_and_values(pol, o, m)
        loss = torch.nn.functional.cross_entropy(logits, a) + 0.5 * torch.nn.functional.mse_loss(values, r)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(pol.parameters(), 1.0)
        opt.step()
        sched.step()
        tot += float(loss) * len(a)
    with torch.no_grad():
        preds = []
        for s in range(0, len(val), 1024):
            o, m, a, r = batch(val[s : s + 1024])
            logits, _ = _logits_and_values(pol, o, m)
            preds.append(logits.argmax(1).numpy())
    p = np.concatenate(preds)
    y = acts[val]
    kk = kinds(y)
    per = {str(c): round(float(np.mean(p[kk == c] == y[kk == c])), 3) for c in np.unique(kk)}
    print(
        f"epoch {ep + 1} loss {tot / len(tr):.3f} val acc {np.mean(p == y):.3f} {per}",
        f"t {time.time() - t0:.0f}s",
        flush=True,
    )
    pol.set_training_mode(False)
    model.save(out)
    pol.set_training_mode(True)
