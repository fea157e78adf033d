"""PPO with a shared policy for every learner seat (clipped objective, GAE), CleanRL-style, each
seat's decisions a chain through its game (:mod:`.chains`). See docs/training.md, "ppo".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.nets.policy import padded
from shanghai_env.agents.learned.nets.sampling import gumbel_argmax, legal_log_probs
from shanghai_env.agents.learned.train.methods.base import NetMethod, deal_stats, training_games
from shanghai_env.agents.learned.train.methods.chains import SeatChains
from shanghai_env.agents.learned.train.options import AdvantageOptions, NetOptions


@dataclass
class PPOOptions(AdvantageOptions, NetOptions):
    # Normalising advantages per minibatch (CleanRL's and SB3's default) blows the noise of a
    # sparse, deal-end reward up to unit size: in full-game self-play the entropy fell from 1.4 to
    # 0.1 within 250,000 steps and nobody went out any more; raw advantages kept it near 1.3 and
    # deals 40% shorter over 600,000 steps (docs/training.md).
    norm_adv: bool = False


class PPO(NetMethod):
    name = "ppo"
    Options = PPOOptions

    # --- collecting ------------------------------------------------------------------------

    def collect(self) -> dict[str, Any]:
        venv, net, opt = self.venv, self.net, self.opt
        n, steps = venv.num_envs, opt.n_steps
        size = n * steps
        obs_buf = np.empty((size, venv.observation_length), np.int8)
        extra_buf = np.empty((size, venv.extra.shape[1]), np.float32)
        step_idx: list[np.ndarray] = []  # each step's padded legal ids (n, that step's most moves)
        lengths = np.empty(size, np.int64)  # each decision's number of moves to choose among
        chosen = np.empty(size, np.int64)
        logp = np.empty(size, np.float32)
        values = np.empty(size, np.float32)
        chains = SeatChains(venv, steps, self.learner_seats)
        rows = np.arange(n)
        table = self.acting_table()  # the weights do not change during a rollout
        first = net.acting_first_layer()
        for t in range(steps):
            cur = t * n + rows
            obs_buf[cur] = venv.obs
            extra_buf[cur] = venv.extra
            idx, valid = padded(venv.legal_actions)
            step_idx.append(idx)
            lengths[cur] = valid.sum(1)
            with torch.no_grad():
                extra = self.extra_inputs(venv.extra)
                obs = torch.from_numpy(venv.obs).to(self.device)
                h = net.features(self.inputs(venv.obs), extra, first)
                legal_t = torch.from_numpy(idx).to(self.device), torch.from_numpy(valid).to(self.device)
                logits = self.acting_logits(h, legal_t, extra, obs, table, lengths[cur])
                v = net.value(h).cpu()
                logits = logits.cpu()
            k = gumbel_argmax(logits, self.gen)  # a draw among the legal moves only
            lp = legal_log_probs(logits).gather(1, k[:, None]).squeeze(1)
            k_np = k.numpy()
            chosen[cur], logp[cur], values[cur] = k_np, lp.numpy(), v.numpy()
            chains.add(cur)
            _, _, _, rew, done = venv.step(idx[rows, k_np])
            chains.settle(rew, done)
        adv = chains.advantages(values, chains.bootstrap(self.values_of), opt.gamma, opt.gae_lambda)
        # the rollout's moves padded once, as padded() pads them: a minibatch takes its rows and
        # trims them to its own longest (padded_rows), rather than padding Python lists again
        legal_idx = np.zeros((size, max(a.shape[1] for a in step_idx)), np.int64)
        for t, a in enumerate(step_idx):
            legal_idx[t * n : (t + 1) * n, : a.shape[1]] = a
        return {
            "obs": obs_buf,
            "extra": extra_buf,
            "legal": (legal_idx, lengths),
            "chosen": chosen,
            "logp": logp,
            "adv": adv,
            "ret": adv + values,
            "finished": chains.finished,
        }

    # --- learning ----------------------------------------------------------------------------

    def step(self) -> dict[str, float]:
        before = dict(self.venv.deal_counts)
        data = self.collect()
        net, opt, dev = self.net, self.opt, self.device
        size = len(data["chosen"])
        # the whole batch goes to the device once; minibatches are indexed there, and their
        # statistics stay there until the update ends (one synchronisation, not four a minibatch)
        names = ("policy_loss", "value_loss", "entropy", "clip_frac")
        stats: dict[str, list[torch.Tensor]] = {k: [] for k in names}
        obs_all = torch.from_numpy(data["obs"]).to(dev)
        sparse_all = self.batch_inputs(data["obs"])
        extra_all = self.extra_inputs(data["extra"])
        chosen_all = torch.from_numpy(data["chosen"]).to(dev)
        logp_all = torch.from_numpy(data["logp"]).to(dev)
        adv_all = torch.from_numpy(data["adv"]).to(dev)
        ret_all = torch.from_numpy(data["ret"]).to(dev)
        for _ in range(opt.epochs):
            order = self.np_rng.permutation(size)
            for start in range(0, size, opt.batch_size):
                mb = order[start : start + opt.batch_size]
                mb_t, h, logits = self.minibatch_logits(obs_all, extra_all, data["legal"], mb, sparse_all)
                logp_legal = legal_log_probs(logits)
                new_logp = logp_legal.gather(1, chosen_all[mb_t][:, None]).squeeze(1)
                # padding holds -inf: zero it before multiplying (0 * -inf would make NaN gradients)
                valid_t = torch.isfinite(logits)
                logp_safe = logp_legal.masked_fill(~valid_t, 0.0)
                entropy = -(logp_safe.exp() * logp_safe).masked_fill(~valid_t, 0.0).sum(1).mean()
                adv = adv_all[mb_t]
                if opt.norm_adv:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                ratio = (new_logp - logp_all[mb_t]).exp()
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - opt.clip, 1 + opt.clip)).mean()
                v_loss = 0.5 * (net.value(h) - ret_all[mb_t]).pow(2).mean()
                loss = pg - opt.ent_coef * entropy + opt.vf_coef * v_loss
                self.optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), opt.max_grad_norm)
                self.optim.step()
                stats["policy_loss"].append(pg.detach())
                stats["value_loss"].append(v_loss.detach())
                stats["entropy"].append(entropy.detach())
                stats["clip_frac"].append(((ratio.detach() - 1).abs() > opt.clip).float().mean())
        self.updates += 1
        out = {k: round(float(torch.stack(v).double().mean()), 5) for k, v in stats.items()}
        out.update(deal_stats(before, self.venv.deal_counts))
        out["env_steps"] = float(size)
        out["games_finished"] = float(len(data["finished"]))
        out.update(training_games(self.config, data["finished"]))
        return out
