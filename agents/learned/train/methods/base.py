"""What every method on the loop shares: the network and its optimiser, the random streams, the
batched games, checkpoints of all of them, and the saved player. A method adds its options
(``Options``), how it collects and learns (``step``) and whatever state of its own a checkpoint
must keep (``extra_state``/``load_extra``: tensors and plain values, as the rest)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.nets.grow import grow_check, grow_into
from shanghai_env.agents.learned.nets.policy import SparseObs, build_net, padded, padded_rows, to_any_table
from shanghai_env.agents.learned.players.policy import load_policy, save_policy
from shanghai_env.agents.learned.train.opponents import make_games
from shanghai_env.agents.learned.train.run import RunConfig
from shanghai_env.batched import BatchedEnv


class NetMethod:
    name = ""
    Options: Any = None

    def setup(self, config: RunConfig, device: torch.device) -> None:
        self.config = config
        self.opt = self.Options(**config.method_options)
        self.device = device
        torch.manual_seed(config.seed)
        if config.init.endswith(".zip"):  # the sb3 method goes on from a MaskablePPO player
            raise ValueError(
                f"--init {config.init!r} is a MaskablePPO player: go on from it with shanghai-train sb3; "
                f"{self.name} starts fresh or from a .pt of shanghai-train"
            )
        net_arch, facts, version = self.opt.net_arch, config.facts, config.facts_version
        move_net = getattr(self.opt, "move_net", ())
        self.net = build_net(config.rules, net_arch, facts, version, move_net, config.encoding).to(device)
        if config.init:
            self._start_from(config.init)
        # the trunk reads observations by their nonzero entries on the CPU (PolicyNet.features:
        # several times faster there, the same features up to float32 rounding); on a GPU the
        # dense product is fast and is kept
        self.sparse_inputs = device.type == "cpu" and bool(self.net.hidden)
        # fused: each parameter's update in one pass rather than a dozen elementwise operations
        # (3-4 times faster on the CPU, where it was a fifth of a dmc minibatch); the same update
        # up to float32 rounding
        fused = True if device.type in ("cpu", "cuda") else None
        self.optim = torch.optim.Adam(self.net.parameters(), lr=self.opt.lr, eps=1e-5, fused=fused)
        self.gen = torch.Generator().manual_seed(config.seed)
        self.np_rng = np.random.default_rng(config.seed)
        self.venv: BatchedEnv = self.make_venv(config)
        self.venv.reset(seed=config.seed)
        self.learner_seats = self.venv.caller_seats
        self.updates = 0
        self.reset_extra()

    def make_venv(self, config: RunConfig) -> BatchedEnv:
        """The run's batched games (:func:`.make_games`)."""
        return make_games(config)

    def _start_from(self, path: str) -> None:
        """Copy the weights of a saved player of the same shape (``--init`` a .pt), or grow it into
        this run's wider layers (:func:`.grow_into`); an any_table run starts from a native player
        of its contracts converted (:func:`to_any_table`, any size)."""
        net, rules, _ = load_policy(path)
        native = net.encoding == "table" and rules.contracts == tuple(self.config.contracts)
        if native and self.net.encoding == "any_table":  # the same moves at its own size, any size now
            net = to_any_table(net, rules)
        net = net.to(self.device)
        # an any_table network's weights fit every table size: the players may differ
        players = rules.num_players if net.encoding == "table" else self.config.players
        c, mine = self.config, self.net
        shapes = [  # (the option, the saved player's, this run's)
            ("--players", players, c.players),
            ("--contracts", tuple(rules.contracts), tuple(c.contracts)),
            ("facts version (--facts)", net.facts_version, mine.facts_version),
            ("--encoding", net.encoding, mine.encoding),
        ]
        differ = [f"{name} {a!r} there, {b!r} here" for name, a, b in shapes if a != b]
        grow = (net.hidden, net.move_net) != (mine.hidden, mine.move_net)
        if grow and not differ:  # a wider --net-arch or --move-net grows the saved network
            differ = [
                f"{why} (a network grows into wider layers, never fewer or narrower)"
                for why in grow_check(net, mine)
            ]
        if differ:
            hint = ""
            if net.encoding == "table" and mine.encoding == "any_table":
                hint = (
                    " (an any_table run starts from a native player of its own contracts, at any --players)"
                )
            raise ValueError(f"--init {path!r} was made with other options: {'; '.join(differ)}{hint}")
        if grow:
            grow_into(net, self.net)
        else:
            self.net.load_state_dict(net.state_dict())

    def extra_inputs(self, extra: np.ndarray) -> torch.Tensor | None:
        """The facts block as a tensor on the device (None when the network reads none)."""
        return torch.from_numpy(extra).to(self.device) if extra.shape[1] else None

    def inputs(self, obs: np.ndarray) -> torch.Tensor | SparseObs:
        """Observations as the trunk reads them: by nonzero entries (:attr:`sparse_inputs`) or a tensor."""
        return SparseObs.of(obs) if self.sparse_inputs else torch.from_numpy(obs).to(self.device)

    def batch_inputs(self, obs: np.ndarray) -> SparseObs | None:
        """An update's batch by its nonzero entries, found once for all minibatches; None for tensors."""
        return SparseObs.of(obs) if self.sparse_inputs else None

    def minibatch_logits(
        self,
        obs_all: torch.Tensor,
        extra_all: torch.Tensor | None,
        legal: list[list[int]] | tuple[np.ndarray, np.ndarray],
        mb: np.ndarray,
        sparse_all: SparseObs | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For the minibatch ``mb`` (rows of an update's batch, already on the device): its rows
        as a tensor, the trunk's features and the logits of each decision's legal moves.
        ``legal``: each decision's legal ids, as lists or padded once (ids, lengths);
        ``sparse_all``: the batch's observations by their nonzero entries (:meth:`batch_inputs`),
        which the trunk then reads instead of ``obs_all``."""
        dev = self.device
        if isinstance(legal, tuple):
            idx, valid = padded_rows(*legal, mb)
        else:
            idx, valid = padded([legal[j] for j in mb])
        mb_t = torch.from_numpy(mb).to(dev)
        extra = None if extra_all is None else torch.index_select(extra_all, 0, mb_t)
        obs = torch.index_select(obs_all, 0, mb_t)  # whole rows copied, not element by element
        h = self.net.features(obs if sparse_all is None else sparse_all.take(mb), extra)
        idx_t, ok_t = torch.from_numpy(idx).to(dev), torch.from_numpy(valid).to(dev)
        return mb_t, h, self.net.logits(h, idx_t, ok_t, extra, obs, lengths=valid.sum(1))

    def acting_logits(
        self,
        h: torch.Tensor,
        legal: tuple[torch.Tensor, torch.Tensor],
        extra: torch.Tensor | None,
        obs: torch.Tensor,
        table: torch.Tensor | None,
        lengths: np.ndarray | None = None,
    ) -> torch.Tensor:
        """The network's logits while collecting, with the rollout's ``table`` (:meth:`acting_table`);
        ``lengths``: each row's number of legal moves (``legal`` padded by :func:`padded`), so that
        only the legal moves' rows are read (:meth:`.PolicyNet.logits`)."""
        if table is None:
            return self.net.logits(h, *legal, extra, obs)
        return self.net.logits(h, *legal, extra, obs, table, lengths)

    def acting_table(self) -> torch.Tensor | None:
        """Every action's row for a rollout (:meth:`.PolicyNet.acting_table`)."""
        return self.net.acting_table()

    def values_of(self, obs: np.ndarray, extra: np.ndarray) -> np.ndarray:
        """The value head on a batch of observations and their facts (no gradient)."""
        with torch.no_grad():
            h = self.net.features(self.inputs(obs), self.extra_inputs(extra))
            return self.net.value(h).cpu().numpy()

    def reset_extra(self) -> None:
        """The method's own state, fresh."""

    def extra_state(self) -> dict[str, Any]:
        return {}

    def load_extra(self, state: dict[str, Any]) -> None:
        """Restore :meth:`extra_state` (after the games in progress were restored)."""

    def state_dict(self) -> dict[str, Any]:
        return {
            "net": self.net.state_dict(),
            "optim": self.optim.state_dict(),
            "gen": self.gen.get_state(),
            "np_rng": self.np_rng.bit_generator.state,
            # each game as its seed and moves, replayed on resume (BatchedEnv.state)
            "games": self.venv.state(),
            "updates": self.updates,
            **self.extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.optim.load_state_dict(state["optim"])
        self.gen.set_state(state["gen"])
        self.np_rng.bit_generator.state = state["np_rng"]
        self.updates = int(state["updates"])
        differ = self.venv.load_state(state["games"])
        if differ:  # a bot that plays otherwise from the same seed: its memory may differ, not the games
            print(
                f"note: in games {differ[:8]} a seated bot chose other moves when its game was replayed; "
                "the games go on exactly, the run may differ from one never stopped",
                file=sys.stderr,
            )
        self.load_extra(state)

    def close(self) -> None:
        """Let the games go (their worker processes stop): the loop's last call."""
        venv = getattr(self, "venv", None)
        if venv is not None:
            venv.close()

    def export(self, path: str, meta: dict[str, Any]) -> None:
        save_policy(path, self.net.cpu() if self.device.type != "cpu" else self.net, self.config.rules, meta)
        self.net.to(self.device)


def deal_stats(before: dict[str, int], after: dict[str, int]) -> dict[str, float]:
    """Deals that ended during an update, the share someone went out of, and their mean length."""
    deals = after["deals"] - before["deals"]
    if not deals:
        return {"deals_ended": 0.0, "went_out_share": float("nan"), "moves_per_deal": float("nan")}
    return {
        "deals_ended": float(deals),
        "went_out_share": round((after["went_out"] - before["went_out"]) / deals, 3),
        "moves_per_deal": round((after["moves"] - before["moves"]) / deals, 1),
    }


def training_games(config: RunConfig, finished: list[float]) -> dict[str, float]:
    """Against named players: the learner's mean game score minus the others' in the games that
    ended during an update (NaN when none did, so every row of progress.csv has the column)."""
    if tuple(config.opponents) == ("self",):
        return {}
    return {"train_game_diff": round(float(np.mean(finished)), 2) if finished else float("nan")}
