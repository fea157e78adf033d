"""Choosing among the legal moves only, from scores of the legal moves only: an example in
docs/training.md, section "A loop of your own".

Scores are finite at the legal moves and ``-inf`` in the padding, with a legal move in every row;
anything else is a ValueError, raised before any random number is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from shanghai_env.agents.learned.nets.policy import padded


class LegalSample(NamedTuple):
    """What :func:`sample_legal` chose, one entry per row."""

    actions: torch.Tensor  # (B,) int64: the action ids to play (``venv.step(actions.numpy())``)
    positions: torch.Tensor  # (B,) int64: where each is among its row's legal moves (``idx``)
    log_prob: torch.Tensor  # (B,): the log-probability of each under ``softmax(scores)``


def legal_index(legal: Any, device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(idx, valid)``: ``(B, K)`` int64 action ids (0 in the padding) and ``(B, K)`` bool, K the
    most legal moves of any row. ``legal`` is a list of each row's legal ids
    (``venv.legal_actions``) or an action mask ``(B, A)`` (numpy or torch, 0/1 or bool;
    ``venv.mask``). ValueError for a row without a legal move; TypeError for another ``legal``."""
    if isinstance(legal, (np.ndarray, torch.Tensor)):
        mask = legal.detach().cpu().numpy() if isinstance(legal, torch.Tensor) else legal
        if mask.ndim != 2:
            raise ValueError(f"an action mask must be 2-d (rows, actions), got shape {tuple(mask.shape)}")
        ids: Sequence[Sequence[int]] = [np.flatnonzero(row).tolist() for row in mask]
    elif isinstance(legal, (list, tuple)):
        ids = legal
    else:
        raise TypeError(
            "legal must be a list of each row's legal action ids (venv.legal_actions) or an action "
            f"mask (B, A), got {type(legal).__name__}"
        )
    if not len(ids):
        raise ValueError("legal holds no rows")
    empty = [i for i, row in enumerate(ids) if not len(row)]
    if empty:
        raise ValueError(f"row {empty[0]} has no legal move: there is nothing to choose from")
    idx, valid = padded(ids)
    return torch.from_numpy(idx).to(device), torch.from_numpy(valid).to(device)


def legal_scores(
    features: torch.Tensor, head: nn.Linear, idx: torch.Tensor, valid: torch.Tensor
) -> torch.Tensor:
    """``head(features)`` (``head``: ``nn.Linear(H, num_actions)``) at each row's legal actions
    only, multiplying only those rows of its weight: ``(B, K)``, ``-inf`` where not ``valid``."""
    if features.dim() != 2 or idx.shape != valid.shape or idx.dim() != 2 or idx.shape[0] != features.shape[0]:
        raise ValueError(
            f"features must be (B, H) and idx, valid (B, K) for the same B; got features "
            f"{tuple(features.shape)}, idx {tuple(idx.shape)}, valid {tuple(valid.shape)}"
        )
    w = head.weight[idx]  # (B, K, H): the legal rows only
    out = torch.einsum("bkh,bh->bk", w, features)
    if head.bias is not None:
        out = out + head.bias[idx]
    return out.masked_fill(~valid, float("-inf"))


def check_scores(scores: torch.Tensor) -> None:
    """ValueError unless ``scores`` is ``(B, K)`` floats, finite at the legal moves and ``-inf``
    in the padding, with a legal move in every row."""
    if not isinstance(scores, torch.Tensor) or scores.dim() != 2 or not scores.is_floating_point():
        shape = tuple(scores.shape) if isinstance(scores, torch.Tensor) else type(scores).__name__
        raise ValueError(f"scores must be a (B, K) float tensor (K the most legal moves), got {shape}")
    if bool(torch.isnan(scores).any()) or bool((scores == float("inf")).any()):
        raise ValueError(
            "scores hold NaN or +inf: they must be finite at the legal moves, -inf in the padding"
        )
    if not bool(torch.isfinite(scores).any(1).all()):
        row = int((~torch.isfinite(scores).any(1)).nonzero()[0, 0])
        raise ValueError(f"scores row {row} is -inf everywhere: it has no legal move to choose")


def gumbel_argmax(scores: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """``(B,)`` positions drawn from ``softmax(scores)`` per row (Gumbel-max), the noise drawn on
    ``generator``'s device (the default generator: the scores')."""
    check_scores(scores)
    device = generator.device if generator is not None else scores.device
    u = torch.rand(scores.shape, generator=generator, device=device).clamp_(1e-12, 1.0)
    return (scores - torch.log(-torch.log(u)).to(scores.device)).argmax(1)


def greedy_legal(scores: torch.Tensor) -> torch.Tensor:
    """``(B,)`` positions of each row's highest score (the first, on a tie)."""
    check_scores(scores)
    return scores.argmax(1)


def legal_log_probs(scores: torch.Tensor) -> torch.Tensor:
    """``(B, K)`` log-softmax of ``scores`` over each row's legal moves, ``-inf`` in the padding."""
    return torch.log_softmax(scores, 1)


def sample_legal(
    scores: torch.Tensor,
    idx: torch.Tensor,
    generator: torch.Generator | None = None,
    greedy: bool = False,
) -> LegalSample:
    """One legal move per row: drawn from ``softmax(scores)`` over the legal moves
    (:func:`gumbel_argmax`), or the best-scored with ``greedy``. Returns the action ids
    (``idx`` at the positions drawn), the positions and their log-probabilities."""
    if idx.shape != scores.shape:
        raise ValueError(f"idx {tuple(idx.shape)} and scores {tuple(scores.shape)} must have the same shape")
    k = greedy_legal(scores) if greedy else gumbel_argmax(scores, generator)
    k = k.to(idx.device)
    actions = idx.gather(1, k[:, None]).squeeze(1)
    log_prob = legal_log_probs(scores).gather(1, k.to(scores.device)[:, None]).squeeze(1)
    return LegalSample(actions, k, log_prob)
