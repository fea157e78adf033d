"""A network that amends a player: the *prior* (``ppo --prior shanghai``) decides, and the
network may put another move of the same decision in its place.

At each decision the prior names its move. Where that move is one of the decisions a move
scorer makes (take the upcard or draw, buy it or pass, which card to discard), the policy
chooses among the legal moves of those kinds, with the network's logits plus ``bonus`` on the
prior's move; anywhere else (going down card by card, laying off, swapping a joker, finishing)
the prior's move is played. So the prior's plans stay whole: a bot that plans a contract
before its first card goes down is never led into going down where it had no plan, and RL
learns only what the move scorer decides. With a bonus that outweighs the network, the player
is its prior; RL from there moves the network where its own play says the prior's choice is
worse (residual policy learning over a fixed player).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from shanghai_env.actions import action_table
from shanghai_env.agents.learned.nets.facts import view_facts
from shanghai_env.decision import Decision
from shanghai_env.moves import MoveKind
from shanghai_env.rules import Rules

# the moves a move scorer chooses among (docs/bots.md): the upcard, the buy, the discard
FREE_KINDS = frozenset({MoveKind.TAKE, MoveKind.DRAW, MoveKind.BUY, MoveKind.PASS, MoveKind.DISCARD})
FREE = np.zeros(max(MoveKind) + 1, bool)  # the same, indexed by kind
FREE[list(FREE_KINDS)] = True


def move_kinds(rules: Rules) -> np.ndarray:
    """The kind of every action of ``rules``' table."""
    return np.array([int(m.kind) for m in action_table(rules).moves], np.int64)


def choices(legal: Sequence[int], prior_move: int, kinds: np.ndarray) -> tuple[list[int], int]:
    """The moves the policy chooses among at a decision whose prior plays ``prior_move``, and
    the prior's place among them: the legal moves of the scorer's kinds when the prior's move is
    one of them, otherwise the prior's move alone."""
    if not FREE[kinds[prior_move]]:
        return [prior_move], 0
    free = [a for a in legal if FREE[kinds[a]]]
    return free, free.index(prior_move)


def lean(logits: torch.Tensor, place: torch.Tensor, bonus: float) -> torch.Tensor:
    """``logits`` (B, K) with ``bonus`` added at each row's prior move (its column ``place``)."""
    return logits + bonus * torch.nn.functional.one_hot(place, logits.shape[1]).to(logits.dtype)


class PriorPolicyAgent:
    """A saved network trained with a prior (its meta names it) as a player: the prior is asked
    at every decision (it keeps its plans), and the most probable of :func:`choices` is played.

    One copy of the prior per player, so this player decides one game's decisions at a time
    (no ``act_batch``)."""

    needs_observation = True

    def __init__(self, policy: Any, prior: Any) -> None:
        """``policy``: the PolicyAgent (policy.py) of the saved network; ``prior``: the player its
        meta names (``meta["prior"]``), made by the registry that names players."""
        self.policy = policy
        self.rules = policy.rules
        self.name = policy.name
        self.prior_spec = str(policy.meta["prior"])
        self.bonus = float(policy.meta.get("prior_bonus", 0.0))
        self.prior = prior
        self.kinds = move_kinds(policy.rules)
        self.needs_view = True

    def reset(self, seed: int | None = None) -> None:
        self.prior.reset(seed)
        self.policy.reset(seed)

    def act(self, decision: Decision) -> int:
        prior_move = int(self.prior.act(decision))
        moves, place = choices(decision.legal_actions, prior_move, self.kinds)
        if len(moves) == 1:
            return prior_move
        obs = decision.observation[None, :]
        extra = None
        if self.policy.needs_view:
            version = self.policy.net.facts_version
            extra = view_facts(decision.view, decision.rules.same_suit_run_gap, version)[None, :]
        with torch.no_grad():
            logits = self.policy.logits_of(obs, [moves], extra)
        scores = lean(logits, torch.tensor([place]), self.bonus)
        return moves[int(scores.argmax(1)[0])]
