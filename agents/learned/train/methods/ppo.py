"""PPO with a shared policy for every learner seat (clipped objective, GAE), CleanRL-style.

Every learner decision of the batched games is one transition. A seat's transitions form its
own chain through the game (:mod:`.chains`: seats do not alternate, buys interleave), so the
advantage of a decision looks at that seat's next decision; a chain still open when a rollout
ends is bootstrapped with the value of that seat's own observation at that moment. Sampling and the
loss look only at the legal actions (:class:`..policy.PolicyNet`).

With ``prior`` (a player's name), the policy amends that player (:mod:`..prior`): the prior is
asked at every learner decision, its move gets ``prior_bonus`` added to its logit, and the
policy chooses only among the moves of the prior's decision that a move scorer makes (the
upcard, the buy, the discard); elsewhere the prior's move is played. The saved player names its
prior and plays the same way (:class:`..prior.PriorPolicyAgent`).

Options (``shanghai-train ppo --help``): ``lr``, ``epochs``, ``batch_size``, ``net_arch``, ``move_net``,
``n_steps`` (steps of every game per rollout), ``gamma``, ``gae_lambda``, ``clip``,
``ent_coef``, ``vf_coef``, ``max_grad_norm``, ``norm_adv``, ``prior``, ``prior_bonus``.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.nets.policy import padded
from shanghai_env.agents.learned.nets.sampling import gumbel_argmax, legal_log_probs
from shanghai_env.agents.learned.players.prior import choices, lean, move_kinds
from shanghai_env.agents.learned.train.methods.base import NetMethod, deal_stats, training_games
from shanghai_env.agents.learned.train.methods.chains import SeatChains
from shanghai_env.agents.learned.train.methods.teachers import Teachers
from shanghai_env.agents.learned.train.run import RunConfig, safe_loads


@dataclass
class PPOOptions:
    lr: float = 3e-4
    epochs: int = 2
    batch_size: int = 1024
    net_arch: tuple[int, ...] = (128, 128)
    move_net: tuple[int, ...] = ()  # hidden sizes of the move MLP (policy.py); none: the rows alone
    n_steps: int = 64
    gamma: float = 0.999
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    # Normalising advantages per minibatch (CleanRL's and SB3's default) blows the noise of a
    # sparse, deal-end reward up to unit size: in full-game self-play the entropy fell from 1.4 to
    # 0.1 within 250,000 steps and nobody went out any more; raw advantages kept it near 1.3 and
    # deals 40% shorter over 600,000 steps (docs/training.md).
    norm_adv: bool = False
    prior: str = ""  # a player the policy amends (prior.py); none: the network plays every move
    prior_bonus: float = 3.0  # added to the prior's move's logit


class PPO(NetMethod):
    name = "ppo"
    Options = PPOOptions
    takes_sb3 = True

    def setup(self, config: RunConfig, device: torch.device) -> None:
        if config.method_options.get("prior") and config.env_workers > 1:
            raise ValueError("ppo asks its prior about every game in this process: use --env-workers 1")
        super().setup(config, device)
        if self.opt.prior and self.sb3_model is not None:
            raise ValueError("--prior amends a network of shanghai-train (.pt), not a MaskablePPO policy")
        self.kinds = move_kinds(config.rules)

    # --- the prior (--prior): one per game and learner seat, as dagger's teacher ----------------

    def reset_extra(self) -> None:
        self.priors = Teachers(self.opt.prior, self.venv, self.learner_seats) if self.opt.prior else None

    def extra_state(self) -> dict[str, Any]:
        return {"priors": pickle.dumps(self.priors.state())} if self.priors is not None else {}

    def load_extra(self, state: dict[str, Any]) -> None:
        if self.priors is not None:
            self.priors.load(self.venv, *safe_loads(state["priors"], {self.opt.prior}))

    def export(self, path: str, meta: dict[str, Any]) -> None:
        if self.opt.prior:
            meta = {**meta, "prior": self.opt.prior, "prior_bonus": self.opt.prior_bonus}
        super().export(path, meta)

    def _moves(self, rows: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
        """Each row's moves to choose among and the prior's place among them (-1: no prior)."""
        legal = self.venv.legal_actions
        if self.priors is None:
            return legal, np.full(len(rows), -1, np.int64)
        asked = self.priors.ask([int(i) for i in rows])
        pairs = [choices(legal[i], int(asked[i]), self.kinds) for i in rows]
        return [m for m, _ in pairs], np.array([k for _, k in pairs], np.int64)

    # --- collecting ------------------------------------------------------------------------

    def _collect(self) -> dict[str, Any]:
        venv, net, opt = self.venv, self.net, self.opt
        n, steps = venv.num_envs, opt.n_steps
        size = n * steps
        obs_buf = np.empty((size, venv.observation_length), np.int8)
        extra_buf = np.empty((size, venv.extra.shape[1]), np.float32)
        step_idx: list[np.ndarray] = []  # each step's padded legal ids (n, that step's most moves)
        lengths = np.empty(size, np.int64)  # each decision's number of moves to choose among
        chosen = np.empty(size, np.int64)
        place = np.full(size, -1, np.int64)  # the prior's move among each row's moves (-1: none)
        top = np.empty(size, np.int64)  # with a prior, the most probable move (the saved player's)
        logp = np.empty(size, np.float32)
        values = np.empty(size, np.float32)
        chains = SeatChains(venv, steps, self.learner_seats, self.config.reward == "relative")
        rows = np.arange(n)
        table = self.acting_table()  # the weights do not change during a rollout
        for t in range(steps):
            cur = t * n + rows
            obs_buf[cur] = venv.obs
            extra_buf[cur] = venv.extra
            moves, place[cur] = self._moves(rows)
            idx, valid = padded(moves)
            step_idx.append(idx)
            lengths[cur] = valid.sum(1)
            with torch.no_grad():
                extra = self.extra_inputs(venv.extra)
                obs = torch.from_numpy(venv.obs).to(self.device)
                h = net.features(obs, extra)
                legal_t = torch.from_numpy(idx).to(self.device), torch.from_numpy(valid).to(self.device)
                logits = self.acting_logits(h, legal_t, extra, obs, table)
                v = net.value(h).cpu()
                logits = logits.cpu()
            if self.priors is not None:
                logits = lean(logits, torch.from_numpy(place[cur]), self.opt.prior_bonus)
            k = gumbel_argmax(logits, self.gen)  # a draw among the legal moves only
            lp = legal_log_probs(logits).gather(1, k[:, None]).squeeze(1)
            k_np = k.numpy()
            if self.priors is not None:
                top[cur] = logits.argmax(1).numpy()
            chosen[cur], logp[cur], values[cur] = k_np, lp.numpy(), v.numpy()
            chains.add(cur)
            _, _, _, rew, done = venv.step(idx[rows, k_np])
            chains.settle(rew, done)
            if self.priors is not None:
                self.priors.dealt_again()
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
            "place": place,
            "top": top,
            "logp": logp,
            "adv": adv,
            "ret": adv + values,
            "finished": chains.finished,
        }

    # --- learning ----------------------------------------------------------------------------

    def step(self) -> dict[str, float]:
        before = dict(self.venv.deal_counts)
        data = self._collect()
        net, opt, dev = self.net, self.opt, self.device
        size = len(data["chosen"])
        # the whole batch goes to the device once; minibatches are indexed there, and their
        # statistics stay there until the update ends (one synchronisation, not four a minibatch)
        names = ("policy_loss", "value_loss", "entropy", "clip_frac")
        stats: dict[str, list[torch.Tensor]] = {k: [] for k in names}
        obs_all = torch.from_numpy(data["obs"]).to(dev)
        extra_all = self.extra_inputs(data["extra"])
        chosen_all = torch.from_numpy(data["chosen"]).to(dev)
        logp_all = torch.from_numpy(data["logp"]).to(dev)
        adv_all = torch.from_numpy(data["adv"]).to(dev)
        ret_all = torch.from_numpy(data["ret"]).to(dev)
        place_all = torch.from_numpy(data["place"]).to(dev) if self.priors is not None else None
        for _ in range(opt.epochs):
            order = self.np_rng.permutation(size)
            for start in range(0, size, opt.batch_size):
                mb = order[start : start + opt.batch_size]
                mb_t, h, logits = self.minibatch_logits(obs_all, extra_all, data["legal"], mb)
                if place_all is not None:
                    logits = lean(logits, place_all[mb_t], opt.prior_bonus)
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
        if self.priors is not None:
            out.update(prior_stats(data))
        return out


def prior_stats(data: dict[str, Any]) -> dict[str, float]:
    """Of the decisions where the policy had a choice: their share, how often the move sampled
    was the prior's (``prior_kept``) and how often the most probable one was (``prior_top``: the
    saved player, which plays the most probable move, plays its prior's there)."""
    free = data["legal"][1] > 1
    if not free.any():
        return {"free_share": 0.0, "prior_kept": float("nan"), "prior_top": float("nan")}
    place = data["place"][free]
    return {
        "free_share": round(float(free.mean()), 4),
        "prior_kept": round(float((data["chosen"][free] == place).mean()), 4),
        "prior_top": round(float((data["top"][free] == place).mean()), 4),
    }
