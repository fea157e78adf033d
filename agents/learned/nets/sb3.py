"""A saved MaskablePPO player (a ``.zip`` of ``shanghai-train sb3``) as the loop's network.

To go on from such a player with the loop's ``ppo`` at the batched env's speed, :class:`SB3Net`
gives the policy the interface :class:`~.policy.PolicyNet` has (``features``, ``logits`` at the
legal actions, ``value``). Its "features" are the full logits and the value side by side, so the
method's code is the same for both networks. The trained player is saved back as a MaskablePPO
``.zip`` (:func:`save_sb3`), which every command plays like the one it came from.
"""

from __future__ import annotations

from typing import Any

import torch
from stable_baselines3.common.policies import BaseModel
from torch import nn

from shanghai_env.agents.learned.players.sb3 import check_model, load_maskable
from shanghai_env.rules import Rules


class SB3Net(nn.Module):
    """A MaskablePPO actor-critic behind :class:`~.policy.PolicyNet`'s interface."""

    extra_size = 0  # it reads the observation alone

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.policy = model.policy
        self.policy.set_training_mode(True)
        self.num_actions = int(model.action_space.n)
        self.hidden: tuple[int, ...] = ()

    def features(self, obs: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, A + 1)``: every action's logit, then the value."""
        x = obs.float()
        policy = self.policy
        if policy.share_features_extractor:
            f = BaseModel.extract_features(policy, x, policy.features_extractor)
            latent_pi, latent_vf = policy.mlp_extractor(f)
        else:
            pi_f = BaseModel.extract_features(policy, x, policy.pi_features_extractor)
            vf_f = BaseModel.extract_features(policy, x, policy.vf_features_extractor)
            latent_pi = policy.mlp_extractor.forward_actor(pi_f)
            latent_vf = policy.mlp_extractor.forward_critic(vf_f)
        return torch.cat([policy.action_net(latent_pi), policy.value_net(latent_vf)], 1)

    def logits(
        self,
        h: torch.Tensor,
        idx: torch.Tensor,
        valid: torch.Tensor,
        extra: torch.Tensor | None = None,
        obs: torch.Tensor | None = None,
    ) -> torch.Tensor:
        return h[:, : self.num_actions].gather(1, idx).masked_fill(~valid, float("-inf"))

    def value(self, h: torch.Tensor) -> torch.Tensor:
        return h[:, self.num_actions]


def load_sb3(path: str, rules: Rules, device: torch.device) -> tuple[SB3Net, Any]:
    """The model at ``path`` as an :class:`SB3Net` (and the MaskablePPO object, to save with);
    ValueError if it is no MaskablePPO model or plays another table than ``rules``."""
    try:
        check_model(path, rules, "this run's table")  # its message starts with the file's name
    except ValueError as err:
        raise ValueError(f"--init {err}") from None
    try:
        model = load_maskable(path, device=device)
    except Exception as err:  # SB3 raises many kinds; say which file and why in one line
        first = (str(err).strip().splitlines() or [""])[0][:200]
        raise ValueError(f"--init {path!r} cannot be loaded as a MaskablePPO model ({first})") from None
    return SB3Net(model), model


def save_sb3(path: str, model: Any) -> None:
    """Write the MaskablePPO model (whose policy the loop trained in place) as a ``.zip``."""
    model.policy.set_training_mode(False)
    model.save(path)
    model.policy.set_training_mode(True)
