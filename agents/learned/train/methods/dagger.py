"""Imitation on the loop: behaviour cloning and DAgger of any player (a bot or a saved model), for
``ppo --init`` to go on from. See docs/training.md, "dagger".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.nets.policy import padded
from shanghai_env.agents.learned.train.methods.base import NetMethod, deal_stats, training_games
from shanghai_env.agents.learned.train.methods.chains import SeatChains
from shanghai_env.agents.learned.train.methods.teachers import Teachers
from shanghai_env.agents.learned.train.opponents import check_encoding
from shanghai_env.agents.learned.train.options import NetOptions
from shanghai_env.agents.learned.train.run import RunConfig
from shanghai_env.agents.registry import make_agent
from shanghai_env.engine import Game, Phase


@dataclass
class DaggerOptions(NetOptions):
    teacher: str = ""  # the player imitated: a bot, a shipped model or a saved player (required)
    beta: float = 0.5  # the share of games the teacher plays; 1: behaviour cloning alone
    gamma: float = 0.999
    vf_coef: float = 0.5


class Dagger(NetMethod):
    name = "dagger"
    Options = DaggerOptions

    def setup(self, config: RunConfig, device: torch.device) -> None:
        teacher = config.method_options.get("teacher", "")
        if not teacher:
            raise ValueError("dagger imitates a player: name it with --teacher (e.g. planner or shanghai)")
        if config.env_workers > 1:
            raise ValueError("dagger asks its teacher about every game in this process: use --env-workers 1")
        if config.encoding != "table":  # a network reading the native layout would be misled
            check_encoding(make_agent(teacher), teacher, config.encoding)
        super().setup(config, device)

    # --- the teacher (one per game and learner seat, :mod:`.teachers`) and who plays each game --

    def reset_extra(self) -> None:
        self.teachers = Teachers(self.opt.teacher, self.venv, self.learner_seats)
        self.teacher_plays = np.zeros(self.venv.num_envs, bool)
        for i in range(self.venv.num_envs):
            self._draw_player(i)

    def _draw_player(self, i: int) -> None:
        """Row ``i`` dealt a new game: who plays it is drawn."""
        self.teacher_plays[i] = self.np_rng.random() < self.opt.beta

    def extra_state(self) -> dict[str, Any]:
        # the teachers' bots are rebuilt from the games (Teachers.replay)
        return {"teacher_plays": self.teacher_plays.tolist()}

    def load_extra(self, state: dict[str, Any]) -> None:
        plays = state["teacher_plays"]
        if not isinstance(plays, list) or len(plays) != self.venv.num_envs:
            raise ValueError(f"teacher_plays must be a list of {self.venv.num_envs} bools, one per game")
        self.teacher_plays = np.array(plays, bool)
        self.teachers.replay(self._asked)

    def _asked(self, row: int, game: Game) -> bool:
        """Whether the teacher is asked at the decision now of ``game`` (row ``row``'s)."""
        # in a game the network plays, the teacher may have no plan where it goes down: those
        # decisions are not labelled (their value targets still count)
        return bool(self.teacher_plays[row]) or game.phase != Phase.GOING_DOWN

    def _labels(self, rows: np.ndarray) -> np.ndarray:
        """The teacher's action at every row's decision now (-1: not asked, :meth:`_asked`)."""
        games = self.venv.games
        return self.teachers.ask([int(i) for i in rows if self._asked(int(i), games[i])])

    # --- collecting ------------------------------------------------------------------------

    def collect(self) -> dict[str, Any]:
        venv, net, opt = self.venv, self.net, self.opt
        n, steps = venv.num_envs, opt.n_steps
        size = n * steps
        obs_buf = np.empty((size, venv.observation_length), np.int8)
        extra_buf = np.empty((size, venv.extra.shape[1]), np.float32)
        legal: list[list[int]] = []
        target = np.full(size, -1, np.int64)  # the teacher's move, as its place among the legal ones
        values = np.empty(size, np.float32)
        chains = SeatChains(venv, steps, self.learner_seats)
        rows = np.arange(n)
        first = net.acting_first_layer()  # the weights do not change during a rollout
        teacher_moves = 0
        for t in range(steps):
            cur = t * n + rows
            obs_buf[cur] = venv.obs
            extra_buf[cur] = venv.extra
            idx, valid = padded(venv.legal_actions)
            legal.extend(venv.legal_actions)
            labels = self._labels(rows)
            with torch.no_grad():
                extra = self.extra_inputs(venv.extra)
                obs = torch.from_numpy(venv.obs).to(self.device)
                h = net.features(self.inputs(venv.obs), extra, first)
                legal_t = torch.from_numpy(idx).to(self.device), torch.from_numpy(valid).to(self.device)
                logits = net.logits(h, *legal_t, extra, obs).cpu()
                values[cur] = net.value(h).cpu().numpy()
            u = torch.rand(logits.shape, generator=self.gen).clamp_(1e-12, 1.0)
            sampled = idx[rows, (logits - torch.log(-torch.log(u))).argmax(1).numpy()]
            plays = self.teacher_plays & (labels >= 0)
            teacher_moves += int(plays.sum())
            actions = np.where(plays, labels, sampled)
            for i in np.flatnonzero(labels >= 0):
                target[cur[i]] = venv.legal_actions[i].index(int(labels[i]))
            chains.add(cur)
            _, _, _, rew, done = venv.step(actions)
            chains.settle(rew, done)
            for row in self.teachers.dealt_again():
                self._draw_player(row)
        # the discounted return along each seat's chain (GAE with lambda 1, plus the values)
        returns = chains.advantages(values, chains.bootstrap(self.values_of), opt.gamma, 1.0) + values
        finished = chains.finished
        return {
            "obs": obs_buf,
            "extra": extra_buf,
            "legal": legal,
            "target": target,
            "ret": returns,
            "finished": finished,
            "teacher_moves": teacher_moves,
        }

    # --- learning ----------------------------------------------------------------------------

    def step(self) -> dict[str, float]:
        before = dict(self.venv.deal_counts)
        data = self.collect()
        net, opt, dev = self.net, self.opt, self.device
        size = len(data["target"])
        stats: dict[str, list[torch.Tensor]] = {k: [] for k in ("imitation_loss", "agreement", "value_loss")}
        obs_all = torch.from_numpy(data["obs"]).to(dev)
        sparse_all = self.batch_inputs(data["obs"])
        extra_all = self.extra_inputs(data["extra"])
        target_all = torch.from_numpy(data["target"]).to(dev)
        ret_all = torch.from_numpy(data["ret"]).to(dev)
        for _ in range(opt.epochs):
            order = self.np_rng.permutation(size)
            for start in range(0, size, opt.batch_size):
                mb = order[start : start + opt.batch_size]
                mb_t, h, logits = self.minibatch_logits(obs_all, extra_all, data["legal"], mb, sparse_all)
                target = target_all[mb_t]
                labelled = target >= 0
                logp = torch.log_softmax(logits, 1).gather(1, target.clamp(min=0)[:, None]).squeeze(1)
                count = labelled.sum().clamp(min=1)
                imitation = -(logp * labelled).sum() / count
                agree = ((logits.argmax(1) == target) & labelled).sum() / count
                v_loss = 0.5 * (net.value(h) - ret_all[mb_t]).pow(2).mean()
                loss = imitation + opt.vf_coef * v_loss
                self.optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), opt.max_grad_norm)
                self.optim.step()
                stats["imitation_loss"].append(imitation.detach())
                stats["agreement"].append(agree.detach())
                stats["value_loss"].append(v_loss.detach())
        self.updates += 1
        out = {k: round(float(torch.stack(v).double().mean()), 5) for k, v in stats.items()}
        out.update(deal_stats(before, self.venv.deal_counts))
        out["env_steps"] = float(size)
        out["labelled_share"] = round(float((data["target"] >= 0).mean()), 4)
        out["teacher_share"] = round(data["teacher_moves"] / size, 4)
        out["games_finished"] = float(len(data["finished"]))
        out.update(training_games(self.config, data["finished"]))
        return out
