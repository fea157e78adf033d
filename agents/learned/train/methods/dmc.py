"""Deep Monte-Carlo (as in DouZero): a value for each legal move, learned from the deal's result
(with ``td_lambda`` below 1, the λ-return over the seat's later decisions), collected
epsilon-greedily; the saved player plays the highest-valued move. See docs/training.md, "dmc".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.nets.policy import padded
from shanghai_env.agents.learned.nets.sampling import greedy_legal
from shanghai_env.agents.learned.train.methods.base import NetMethod, deal_stats, training_games
from shanghai_env.agents.learned.train.opponents import make_games
from shanghai_env.agents.learned.train.options import NetOptions
from shanghai_env.batched import BatchedEnv


@dataclass
class DMCOptions(NetOptions):
    epochs: int = 1
    max_grad_norm: float = 1.0
    epsilon: float = 0.05
    td_lambda: float = 1.0  # 1: the deal's result (Monte Carlo); below 1: the lambda-return
    tables: tuple[int, ...] = ()  # train at these table sizes (any_table); none: at --players


class DMC(NetMethod):
    name = "dmc"
    Options = DMCOptions

    def make_venv(self, config: Any) -> BatchedEnv:
        return make_games(config, tables=self.opt.tables)

    def reset_extra(self) -> None:
        # per row: the decisions of its current deal (observation, action, seat, the highest move
        # value there when acting), until it ends
        self.pending: list[list[tuple[bytes, int, int, float]]] = [[] for _ in range(self.config.num_envs)]

    def extra_state(self) -> dict[str, Any]:
        # as tensors: every waiting decision's bytes one uint8 row (all rows are as long), and
        # how many of them each game holds
        flat = [d for row in self.pending for d in row]
        width = len(flat[0][0]) if flat else 0
        return {
            "pending": {
                "counts": torch.tensor([len(row) for row in self.pending], dtype=torch.int64),
                "seen": torch.from_numpy(
                    np.frombuffer(b"".join(d[0] for d in flat), np.uint8).reshape(len(flat), width).copy()
                ),
                "action": torch.tensor([d[1] for d in flat], dtype=torch.int64),
                "seat": torch.tensor([d[2] for d in flat], dtype=torch.int64),
                "value": torch.tensor([d[3] for d in flat], dtype=torch.float64),
            }
        }

    def load_extra(self, state: dict[str, Any]) -> None:
        saved = state["pending"]
        counts = saved["counts"].tolist()
        if len(counts) != self.config.num_envs or sum(counts) != len(saved["action"]):
            raise ValueError(
                f"its waiting decisions are for {len(counts)} games, this run has {self.config.num_envs}"
            )
        seen = [row.tobytes() for row in saved["seen"].numpy()]
        flat = list(zip(seen, saved["action"].tolist(), saved["seat"].tolist(), saved["value"].tolist()))
        rest = iter(flat)
        self.pending = [[next(rest) for _ in range(count)] for count in counts]

    def targets(self, decisions: list[tuple[bytes, int, int, float]], reward: np.ndarray) -> list[float]:
        """Each decision's target: its seat's ``reward``, or with ``td_lambda`` below 1 the
        λ-return: (1 - λ) × the next decision's highest move value (as the network gave it when
        acting) + λ × that decision's target, backwards through the deal."""
        lam = self.opt.td_lambda
        if lam >= 1.0:
            per_seat = [float(r) for r in reward]  # Python floats once, not a numpy scalar a decision
            return [per_seat[seat] for _, _, seat, _ in decisions]
        out = [0.0] * len(decisions)
        later: dict[int, tuple[float, float]] = {}  # seat: (its next decision's target, value)
        for t in range(len(decisions) - 1, -1, -1):
            seat, value = decisions[t][2], decisions[t][3]
            if seat in later:
                target, v_next = later[seat]
                out[t] = (1.0 - lam) * v_next + lam * target
            else:
                out[t] = float(reward[seat])
            later[seat] = (out[t], value)
        return out

    def collect(self) -> tuple[list[bytes], list[int], list[float], list[float]]:
        """An update's decisions whose deals ended: observation bytes (then the facts'), moves, targets,
        and the learner's score against the table in each game that ended."""
        venv, net = self.venv, self.net
        n = venv.num_envs
        rows = np.arange(n)
        obs_out: list[bytes] = []
        act_out: list[int] = []
        tgt_out: list[float] = []
        finished: list[float] = []
        table = self.acting_table()  # the weights do not change while collecting
        first = net.acting_first_layer()
        for _ in range(self.opt.n_steps):
            idx, valid = padded(venv.legal_actions)
            with torch.no_grad():
                extra = self.extra_inputs(venv.extra)
                obs = torch.from_numpy(venv.obs).to(self.device)
                h = net.features(self.inputs(venv.obs), extra, first)
                legal = torch.from_numpy(idx).to(self.device), torch.from_numpy(valid).to(self.device)
                q = self.acting_logits(h, legal, extra, obs, table, valid.sum(1))
                k_t = greedy_legal(q)
                k = k_t.cpu().numpy()
                best_value = q.gather(1, k_t[:, None]).squeeze(1).cpu().numpy()
            explore = self.np_rng.random(n) < self.opt.epsilon
            uniform = (self.np_rng.random(n) * valid.sum(1)).astype(np.int64)  # a legal move at random
            k = np.where(explore, uniform, k)
            actions = idx[rows, k]
            # each row's observation bytes, then its facts' (none without --facts), side by side
            # once for all rows; the decisions' fields as Python numbers in one conversion each
            seen = np.concatenate([venv.obs.view(np.uint8), venv.extra.view(np.uint8)], 1)
            fields = zip(seen, np.asarray(actions).tolist(), venv.seat.tolist(), best_value.tolist())
            for waiting, (row_seen, action, seat, value) in zip(self.pending, fields):
                waiting.append((row_seen.tobytes(), int(action), int(seat), float(value)))
            _, _, _, rew, done = venv.step(actions)
            # rewards come when a deal ends: every waiting decision of that row gets its seat's
            for i in np.flatnonzero(rew.any(1) | done):
                tgt_out.extend(self.targets(self.pending[i], rew[i]))
                obs_out.extend(d[0] for d in self.pending[i])
                act_out.extend(d[1] for d in self.pending[i])
                self.pending[i] = []
                if done[i]:
                    scores = venv.final_scores[i]
                    finished.extend(
                        float(scores[s] - np.delete(scores, s).mean()) for s in self.learner_seats
                    )
        return obs_out, act_out, tgt_out, finished

    def unpack(self, seen: list[bytes]) -> tuple[np.ndarray, torch.Tensor | None]:
        """Collected decisions' bytes as observations (a view: copied only where dense rows are
        read) and the facts on the device (None without them)."""
        rows = np.frombuffer(b"".join(seen), np.uint8).reshape(len(seen), -1)
        length = self.venv.observation_length
        return rows[:, :length].view(np.int8), self.extra_inputs(rows[:, length:].copy().view(np.float32))

    def step(self) -> dict[str, float]:
        before = dict(self.venv.deal_counts)
        obs, actions, targets, finished = self.collect()
        losses: list[torch.Tensor] = []
        size = len(actions)
        if size:
            # the whole batch goes to the device once; minibatches are indexed there, and their
            # losses stay there until the update ends (one synchronisation, not one a minibatch)
            net, dev = self.net, self.device
            obs_np, extra_all = self.unpack(obs)
            sparse_all = self.batch_inputs(obs_np)
            act_all = torch.tensor(actions, dtype=torch.int64, device=dev)
            tgt_all = torch.tensor(targets, dtype=torch.float32, device=dev)
            valid = torch.ones(1, 1, dtype=torch.bool, device=dev)
            one_move = np.ones(self.opt.batch_size, np.int64)  # each decision's one move: the one played
            # the observations' dense rows, for the trunk when it reads no SparseObs and for a
            # network that reads the upcard on offer from them (facts version 2)
            dense = sparse_all is None or net.upcard is not None
            obs_all = torch.from_numpy(obs_np.copy()).to(dev) if dense else None
            for _ in range(self.opt.epochs):
                order = torch.from_numpy(self.np_rng.permutation(size)).to(dev)
                for start in range(0, size, self.opt.batch_size):
                    mb = order[start : start + self.opt.batch_size]
                    extra = None if extra_all is None else extra_all[mb]
                    obs_mb = None if obs_all is None else torch.index_select(obs_all, 0, mb)  # whole rows
                    inputs = obs_mb if sparse_all is None else sparse_all.take(mb.numpy())
                    assert inputs is not None
                    h = net.features(inputs, extra)
                    chosen = act_all[mb][:, None]
                    ok = valid.expand(len(mb), 1)
                    q = net.logits(h, chosen, ok, extra, obs_mb, lengths=one_move[: len(mb)]).squeeze(1)
                    loss = (q - tgt_all[mb]).pow(2).mean()
                    self.optim.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), self.opt.max_grad_norm)
                    self.optim.step()
                    losses.append(loss.detach())
        self.updates += 1
        mean_loss = float(torch.stack(losses).double().mean()) if losses else 0.0
        out: dict[str, float] = {"value_loss": round(mean_loss, 5)}
        out.update(deal_stats(before, self.venv.deal_counts))
        out["env_steps"] = float(self.opt.n_steps * self.venv.num_envs)
        out["trained_decisions"] = float(size)
        out["games_finished"] = float(len(finished))
        out.update(training_games(self.config, finished))
        return out
