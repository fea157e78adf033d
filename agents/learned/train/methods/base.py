"""What every method on the loop shares: the network and its optimiser, the random streams, the
batched games, checkpoints of all of them, and the saved player. A method adds its options
(``Options``), how it collects and learns (``step``) and whatever state of its own a checkpoint
must keep (``extra_state``/``load_extra``)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import torch

from ..opponents import make_games
from ..policy import PolicyNet, build_net, save_policy
from ..run import RunConfig


class NetMethod:
    name = ""
    Options: Any = None

    def setup(self, config: RunConfig, device: torch.device) -> None:
        self.config = config
        self.opt = self.Options(**config.method_options)
        self.device = device
        torch.manual_seed(config.seed)
        self.net: PolicyNet = build_net(config.rules, self.opt.net_arch, config.facts).to(device)
        self.optim = torch.optim.Adam(self.net.parameters(), lr=self.opt.lr, eps=1e-5)
        self.gen = torch.Generator().manual_seed(config.seed)
        self.np_rng = np.random.default_rng(config.seed)
        self.venv = make_games(config)
        self.venv.reset(seed=config.seed)
        self.learner_seats = self.venv.caller_seats
        self.updates = 0
        self.reset_extra()

    def extra_inputs(self, extra: np.ndarray) -> torch.Tensor | None:
        """The facts block as a tensor on the device (None when the network reads none)."""
        return torch.from_numpy(extra).to(self.device) if extra.shape[1] else None

    def reset_extra(self) -> None:
        """The method's own state, fresh (also when a checkpoint's games could not be kept)."""

    def extra_state(self) -> dict[str, Any]:
        return {}

    def load_extra(self, state: dict[str, Any]) -> None:
        """Restore :meth:`extra_state` (called only when the games in progress were restored)."""

    def state_dict(self) -> dict[str, Any]:
        return {
            "net": self.net.state_dict(),
            "optim": self.optim.state_dict(),
            "gen": self.gen.get_state(),
            "np_rng": self.np_rng.bit_generator.state,
            "venv": _pickled(self.venv),
            "updates": self.updates,
            **self.extra_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.optim.load_state_dict(state["optim"])
        self.gen.set_state(state["gen"])
        self.np_rng.bit_generator.state = state["np_rng"]
        self.updates = int(state["updates"])
        if state["venv"] is not None:
            self.venv = pickle.loads(state["venv"])
            self.load_extra(state)
        else:  # games with unpicklable players: new games, seeded by the update count
            self.venv.reset(seed=self.config.seed + 1_000_003 * self.updates)
            self.reset_extra()

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


def _pickled(venv: Any) -> bytes | None:
    """The games in progress, to resume exactly; None when a player cannot be pickled (a network)."""
    try:
        return pickle.dumps(venv)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
