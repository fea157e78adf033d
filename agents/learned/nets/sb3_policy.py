"""MaskablePPO's policy for ``shanghai-train sb3`` and its rollout buffer (docs/performance.md).

:class:`RummyPolicy` is a ``MaskableActorCriticPolicy`` (``learn``, ``load``, ``predict`` and
``get_distribution`` work as with ``MlpPolicy``): one trunk for the policy and the value, a sparse
first layer, and the masked distribution over the legal actions alone, the same up to rounding.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer, MaskableRolloutBufferSamples
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.buffers import RolloutBuffer
from torch import nn

from shanghai_env.agents.learned.nets.features import RummyFeatures
from shanghai_env.agents.learned.nets.policy import LegalDots, SparseFirstLayer, SparseObs

# the logit of the padding beyond a decision's legal actions: sb3-contrib's for a masked action
# (finite, so that a padded entry's probability times its log-probability is 0, not nan)
MASKED_LOGIT = -1e8


class SparseInputLinear(nn.Module):
    """A linear layer whose weight is kept by input, ``(in_features, out_features)``, read through
    the input's nonzero entries on the CPU (or a ``SparseObs``), densely elsewhere or where the
    input carries a gradient. Initialised as MaskablePPO's hidden layers (orthogonal, gain sqrt 2)."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        # by input: the rows embedding_bag sums, so that no forward pass makes a transposed copy
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        by_output = torch.empty(out_features, in_features)
        nn.init.orthogonal_(by_output, gain=float(np.sqrt(2)))
        with torch.no_grad():
            self.weight.copy_(by_output.t())

    def forward(self, x: torch.Tensor | SparseObs) -> torch.Tensor:
        if isinstance(x, torch.Tensor) and (x.device.type != "cpu" or x.requires_grad):
            return x @ self.weight + self.bias
        found = x if isinstance(x, SparseObs) else SparseObs.of(x.detach().numpy())
        cols, values = torch.from_numpy(found.cols), torch.from_numpy(found.values)
        if torch.is_grad_enabled():
            counts = torch.from_numpy(found.counts)
            z = SparseFirstLayer.apply(self.weight.t(), self.weight.detach(), cols, values, counts)
        else:  # acting: the same sums, without the autograd function
            z = SparseFirstLayer.sums(self.weight, cols, values, torch.from_numpy(found.starts))
        return z + self.bias


class SharedTrunk(nn.Module):
    """The hidden layers of ``hidden`` (each followed by ``activation_fn``) that the policy and the
    value both read (SB3's ``mlp_extractor`` interface), the first a :class:`SparseInputLinear`."""

    def __init__(self, features_dim: int, hidden: Sequence[int], activation_fn: type[nn.Module]) -> None:
        super().__init__()
        if not hidden:
            raise ValueError("net_arch: the shared trunk needs at least one hidden layer")
        sizes = [int(h) for h in hidden]
        layers: list[nn.Module] = [SparseInputLinear(features_dim, sizes[0]), activation_fn()]
        for width, size in itertools.pairwise(sizes):
            layers += [nn.Linear(width, size), activation_fn()]
        self.layers = nn.Sequential(*layers)
        self.latent_dim_pi = self.latent_dim_vf = sizes[-1]

    def forward(self, features: torch.Tensor | SparseObs) -> tuple[torch.Tensor, torch.Tensor]:
        latent = self.layers(features)
        return latent, latent

    def forward_actor(self, features: torch.Tensor | SparseObs) -> torch.Tensor:
        if torch.is_grad_enabled():
            return self.layers(features)
        # acting: each layer's forward alone, without a module call's hooks and checks (a tenth of
        # a small batch's time in the trunk)
        out = features
        for layer in self.layers:
            out = layer.forward(out)
        return out  # type: ignore[return-value]

    def forward_critic(self, features: torch.Tensor | SparseObs) -> torch.Tensor:
        return self.layers(features)


class LegalActions:
    """A batch's legal actions from its ``(B, A)`` mask, or from the mask's nonzero entries already
    found (a :class:`~.policy.SparseObs`, as :class:`RummyRolloutBuffer` gives them): the
    (decision, action) pairs row by row and the same padded to ``(B, K)``, K the most legal actions
    of a row."""

    def __init__(self, masks: Any, device: torch.device) -> None:
        if not isinstance(masks, SparseObs):
            mask = torch.as_tensor(masks)
            masks = SparseObs.of(mask.cpu().reshape(len(mask), -1).numpy())
        self.found = masks  # the mask's nonzero entries
        self.actions, counts = torch.from_numpy(masks.cols), torch.from_numpy(masks.counts)
        if bool((counts == 0).any()):
            raise ValueError("every decision needs a legal action in its mask")
        width = int(counts.max())
        self.valid = torch.arange(width) < counts[:, None]  # (B, K): the padding False
        self.ids = torch.zeros(len(counts), width, dtype=torch.int64).masked_scatter(self.valid, self.actions)
        self.rows = torch.repeat_interleave(torch.arange(len(counts)), counts)
        self.counts = counts
        if device.type != "cpu":
            for name in ("actions", "valid", "ids", "rows", "counts"):
                setattr(self, name, getattr(self, name).to(device))

    def log_probs(self, head: nn.Linear, latent: torch.Tensor) -> torch.Tensor:
        """``(B, K)`` log-probabilities of the legal actions under ``head``'s logits of ``latent``
        (``MASKED_LOGIT`` minus the log-normaliser in the padding, a probability of 0)."""
        dots = LegalDots.apply(head.weight, latent, self.actions, self.rows, self.counts)
        legal = dots + head.bias.index_select(0, self.actions)
        logits = latent.new_full(self.valid.shape, MASKED_LOGIT).masked_scatter(self.valid, legal)
        return torch.log_softmax(logits, dim=1)

    def position(self, actions: torch.Tensor) -> torch.Tensor:
        """``(B, 1)``: where each row's action stands among its legal actions."""
        return ((self.ids == actions.reshape(-1, 1)) & self.valid).to(torch.int8).argmax(1, keepdim=True)


class RummyPolicy(MaskableActorCriticPolicy):
    """The module docstring's ``MaskableActorCriticPolicy``; ``net_arch``: the trunk's sizes (a list)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", RummyFeatures)
        # MaskablePPO's Adam (its eps), fused: one kernel a step for every tensor, not a few each
        kwargs.setdefault("optimizer_kwargs", {"eps": 1e-5, "fused": True})
        super().__init__(*args, **kwargs)
        # the observations and masks a rollout step last acted on, their features' and the masks'
        # nonzero entries, which a RummyRolloutBuffer acting with this policy keeps rather than
        # finding them again
        self.last_acted: tuple[np.ndarray, SparseObs, Any, SparseObs] | None = None

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch
        if not isinstance(arch, (list, tuple)):
            raise ValueError(f"net_arch: the shared trunk's hidden sizes (a list), got {arch!r}")
        # typed as SB3's MlpExtractor; any module with its interface serves (SB3's custom policies)
        self.mlp_extractor = SharedTrunk(self.features_dim, arch, self.activation_fn)  # type: ignore[assignment]

    def forward(
        self, obs: torch.Tensor, deterministic: bool = False, action_masks: np.ndarray | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The rollout's actions (drawn among the legal ones, or their mode), values, log-probabilities."""
        if action_masks is None:
            return super().forward(obs, deterministic)
        latent, legal, log_probs = self._legal_log_probs(obs, action_masks, keep=True)
        at = log_probs.argmax(1, keepdim=True) if deterministic else torch.multinomial(log_probs.exp(), 1)
        actions = legal.ids.gather(1, at).reshape(-1)
        return actions, self.value_net(latent), log_probs.gather(1, at).reshape(-1)

    def evaluate_actions(
        self, obs: torch.Tensor | SparseObs, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The update's values, log-probabilities of ``actions`` and entropies; ``obs`` the
        observations, or their features' nonzero entries (:class:`RummyRolloutBuffer` gives those)."""
        if action_masks is None:
            assert isinstance(obs, torch.Tensor)  # the observations: features need a mask's legal actions
            return super().evaluate_actions(obs, actions)
        latent, legal, log_probs = self._legal_log_probs(obs, action_masks)
        entropy = -(log_probs.exp() * log_probs).sum(1)  # the padding's probability is 0
        log_prob = log_probs.gather(1, legal.position(actions)).reshape(-1)
        return self.value_net(latent), log_prob, entropy

    def actor_latent(self, obs: torch.Tensor | np.ndarray) -> torch.Tensor:
        """The trunk's output for ``obs`` (a tensor, or an array of any numeric type: on the CPU
        without a gradient, read through the nonzero features as they are)."""
        found = self._nonzero_features(obs)
        if found is not None:
            return self._trunk(found)
        if isinstance(obs, np.ndarray):
            obs = torch.from_numpy(np.asarray(obs, np.float32)).to(self.device)  # a copy: it may be read-only
        features = self.extract_features(obs)
        assert isinstance(features, torch.Tensor)  # one features extractor, shared
        return self._trunk(features)

    def _nonzero_features(self, obs: torch.Tensor | np.ndarray) -> SparseObs | None:
        """The nonzero entries of the features of ``obs`` where the trunk reads them so (on the CPU,
        without a gradient); None elsewhere."""
        extractor = self.features_extractor
        grad = isinstance(obs, torch.Tensor) and obs.requires_grad
        if isinstance(extractor, RummyFeatures) and self.device.type == "cpu" and not grad:
            return extractor.nonzero(obs)
        return None

    def _trunk(self, features: torch.Tensor | SparseObs) -> torch.Tensor:
        trunk = self.mlp_extractor
        assert isinstance(trunk, SharedTrunk)  # what _build_mlp_extractor builds; it reads a SparseObs
        return trunk.forward_actor(features)

    def _legal_log_probs(
        self, obs: torch.Tensor | SparseObs, action_masks: Any, keep: bool = False
    ) -> tuple[torch.Tensor, LegalActions, torch.Tensor]:
        """The trunk's output, the legal actions of ``action_masks`` and their log-probabilities;
        ``keep``: a rollout step's, its features and legal actions kept in ``last_acted``."""
        found: SparseObs | None = None
        if isinstance(obs, SparseObs):
            if obs.width != self.features_dim:
                raise ValueError(f"features of width {obs.width}: this policy's are {self.features_dim}")
            latent = self._trunk(obs)
        elif (found := self._nonzero_features(obs)) is not None:
            latent = self._trunk(found)
        else:
            latent = self.actor_latent(obs)
        legal = LegalActions(action_masks, latent.device)
        if keep and found is not None:
            seen: Any = obs.numpy() if isinstance(obs, torch.Tensor) else obs
            self.last_acted = (seen, found, action_masks, legal.found)
        head = self.action_net
        assert isinstance(head, nn.Linear)
        return latent, legal, legal.log_probs(head, latent)


class RummyRolloutBuffer(MaskableRolloutBuffer):
    """sb3-contrib's ``MaskableRolloutBuffer`` for a :class:`RummyPolicy`: bool masks, and each
    minibatch given its rows' legal actions (a :class:`~.policy.SparseObs`) in place of the masks.
    With ``features_extractor_kwargs`` (the policy's :class:`RummyFeatures` arguments) on the CPU,
    the features too, found once a rollout, in place of the observations; with ``acting`` (the
    policy that acts in the rollout) those it found while acting, for the same observations.
    """

    CHUNK = 1024  # rows whose features are computed together (a float32 array of ~12 MB at 4 players)

    def __init__(
        self, *args: Any, features_extractor_kwargs: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.features: RummyFeatures | None = None
        if features_extractor_kwargs is not None and self.device.type == "cpu":
            self.features = RummyFeatures(self.observation_space, **features_extractor_kwargs)  # type: ignore[arg-type]
        self.acting: RummyPolicy | None = None

    def reset(self) -> None:
        if not isinstance(self.action_space, spaces.Discrete):
            raise ValueError(f"RummyRolloutBuffer: a Discrete action space, got {self.action_space}")
        self.mask_dims = int(self.action_space.n)
        # every action legal where add() is given no masks, as in sb3-contrib's buffer; the array
        # is kept from one rollout to the next (add() writes each step's), not filled again
        shape = (self.buffer_size, self.n_envs, self.mask_dims)
        if getattr(self, "action_masks", None) is None or self.action_masks.shape != shape:
            self.action_masks = np.ones(shape, dtype=bool)
        self.legal: SparseObs | None = None
        self.sparse_features: SparseObs | None = None
        # each step's features and legal actions, from `acting`
        self.acted: list[SparseObs | None] = [None] * self.buffer_size
        self.acted_legal: list[SparseObs | None] = [None] * self.buffer_size
        RolloutBuffer.reset(self)  # not MaskableRolloutBuffer's: it would allocate float32 masks

    def get(self, batch_size: int | None = None) -> Generator[MaskableRolloutBufferSamples, None, None]:  # type: ignore[override]
        if self.legal is None:  # the rollout's first minibatch: rows in get()'s order
            self.legal = self._by_env(self.acted_legal)
            if self.legal is None:
                self.legal = SparseObs.of(self.action_masks.swapaxes(0, 1).reshape(-1, self.mask_dims))
            if self.features is not None:
                self.sparse_features = self._by_env(self.acted)
                if self.sparse_features is None:
                    self.sparse_features = self._features_of(self.observations.swapaxes(0, 1))
        return super().get(batch_size)

    def add(self, *args: Any, action_masks: np.ndarray | None = None, **kwargs: Any) -> None:
        step = self.pos
        super().add(*args, action_masks=action_masks, **kwargs)
        if action_masks is None:
            self.action_masks[step] = True
        obs = args[0] if args else kwargs["obs"]
        last = self.acting.last_acted if self.acting is not None else None
        extractor = self.acting.features_extractor if self.acting is not None else None
        if last is not None and self.features is not None and self.features.same_layout(extractor):
            seen, found, masks, legal = last
            # those of these very observations and masks (compared, not assumed: a step may not have acted)
            if seen.shape == np.shape(obs) and np.array_equal(seen, obs):
                self.acted[step] = found
            same = action_masks is not None and np.shape(masks) == np.shape(action_masks)
            if same and np.array_equal(masks, np.asarray(action_masks)):
                self.acted_legal[step] = legal

    def _by_env(self, found: list[SparseObs | None]) -> SparseObs | None:
        """The steps' rows ``acting`` found, in get()'s order (env by env); None unless it found
        every step's."""
        if any(f is None for f in found):
            return None
        steps: list[SparseObs] = found  # type: ignore[assignment]
        width = steps[0].width
        by_step = SparseObs(
            np.concatenate([f.cols for f in steps]),
            np.concatenate([f.values for f in steps]),
            np.concatenate([f.counts for f in steps]),
            width,
        )
        order = np.arange(self.buffer_size * self.n_envs).reshape(self.buffer_size, self.n_envs).T
        return by_step.take(order.reshape(-1))

    def _features_of(self, observations: np.ndarray) -> SparseObs:
        """The nonzero entries of the features of ``observations`` (all rows, a chunk at a time)."""
        assert self.features is not None
        rows = observations.reshape(-1, *self.obs_shape)
        cols, values, counts = [], [], []
        for start in range(0, len(rows), self.CHUNK):
            found = self.features.nonzero(torch.from_numpy(rows[start : start + self.CHUNK]))
            cols.append(found.cols)
            values.append(found.values)
            counts.append(found.counts)
        width = self.features.features_dim
        return SparseObs(np.concatenate(cols), np.concatenate(values), np.concatenate(counts), width)

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> MaskableRolloutBufferSamples:  # type: ignore[override]
        assert self.legal is not None
        if self.sparse_features is not None:
            observations: Any = self.sparse_features.take(batch_inds)
        else:
            observations = self.to_torch(self.observations[batch_inds])
        # the samples' fields are typed as tensors; RummyPolicy.evaluate_actions reads these
        legal: Any = self.legal.take(batch_inds)
        return MaskableRolloutBufferSamples(
            observations=observations,
            actions=self.to_torch(self.actions[batch_inds]),
            old_values=self.to_torch(self.values[batch_inds].flatten()),
            old_log_prob=self.to_torch(self.log_probs[batch_inds].flatten()),
            advantages=self.to_torch(self.advantages[batch_inds].flatten()),
            returns=self.to_torch(self.returns[batch_inds].flatten()),
            action_masks=legal,
        )
