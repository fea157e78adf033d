"""A saved trainer policy as a player: one ``.pt`` file (:func:`save_policy`) holds the network's
weights (:mod:`shanghai_env.agents.learned.nets.policy`) with the rule options and sizes it was
made for; :class:`PolicyAgent` plays it in tournaments like any bot
(``evaluate.py --players runs/x/model.pt,planner,planner,planner``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from shanghai_env.agents.learned.nets.policy import PolicyNet, build_net, padded
from shanghai_env.decision import Decision
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import Rules

POLICY_FORMAT = "shanghai-env policy"
POLICY_VERSION = 1


def rules_json(rules: Rules) -> dict[str, Any]:
    return {"num_players": rules.num_players, "contracts": list(rules.contracts)}


def not_finite(state: Mapping[str, Any]) -> list[str]:
    """The names of the floating-point tensors of ``state`` that hold NaN or inf."""
    return [
        name
        for name, t in state.items()
        if isinstance(t, torch.Tensor) and t.is_floating_point() and not bool(torch.isfinite(t).all())
    ]


def save_policy(path: str, net: PolicyNet, rules: Rules, meta: dict[str, Any] | None = None) -> None:
    """One file with the weights, the table it plays (rules) and ``meta`` (JSON-able). A network
    whose weights are not all finite is refused (ValueError): a NaN player would play one fixed
    move everywhere and look like a player."""
    bad = not_finite(net.state_dict())
    if bad:
        raise ValueError(
            f"not writing {path!r}: the network's weights are not finite (NaN or inf) in {', '.join(bad)}"
        )
    torch.save(
        {
            "format": POLICY_FORMAT,
            "version": POLICY_VERSION,
            "rules": rules_json(rules),
            "hidden": list(net.hidden),
            "facts": bool(net.extra_size),
            "facts_version": net.facts_version,
            "move_net": list(net.move_net),
            "state_dict": net.state_dict(),
            "meta": json.loads(json.dumps(meta or {})),
        },
        path,
    )


def is_policy_file(path: str) -> bool:
    """Whether ``path`` is a player saved by :func:`save_policy` (read without building it): a
    ``.pt``, or the same file shipped as a ``.zip`` (``models/``: a torch file is a zip archive,
    told from a MaskablePPO or scorer zip by its ``data.pkl``)."""
    if path.endswith(".zip"):
        import zipfile

        try:
            with zipfile.ZipFile(path) as z:
                if not any(name.endswith("/data.pkl") for name in z.namelist()):
                    return False
        except (OSError, zipfile.BadZipFile):
            return False
    elif not path.endswith(".pt"):
        return False
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:
        return False
    return isinstance(blob, dict) and blob.get("format") == POLICY_FORMAT


def load_policy(path: str) -> tuple[PolicyNet, Rules, dict[str, Any]]:
    """The network, the rules it was made for and its meta; ValueError (naming the file and, when
    its header and its weights disagree, the table the weights were made for) for a file that is
    none, a damaged one or one whose weights are not finite."""
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        raise ValueError(f"{path!r} is not a saved policy (.pt from shanghai-train): {err}") from None
    if not isinstance(blob, dict) or blob.get("format") != POLICY_FORMAT:
        raise ValueError(f"{path!r} is not a saved policy (.pt from shanghai-train)")
    state = blob.get("state_dict")
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise ValueError(f"{path!r} is a damaged saved policy: it holds no weights; train it again")
    bad = not_finite(state)
    if bad:
        raise ValueError(
            f"{path!r} holds weights that are not finite (NaN or inf) in {', '.join(bad)}: the training "
            "diverged or the file is damaged; use another player"
        )
    # no "facts_version": saved before there were versions, with the first facts
    facts, version = bool(blob.get("facts", False)), int(blob.get("facts_version", 1))
    try:
        rules = Rules(num_players=blob["rules"]["num_players"], contracts=tuple(blob["rules"]["contracts"]))
        net = build_net(rules, blob["hidden"], facts, version, blob.get("move_net", ()))
        net.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError):
        what = "a header (table, sizes) that does not match its weights"
        what = "no table (rules)" if "rules" not in blob else what
        raise ValueError(
            f"{path!r} is a saved policy with {what}: its weights fit {made_for(state, facts)}; "
            "save it again with shanghai-train"
        ) from None
    net.eval()
    return net, rules, dict(blob.get("meta", {}))


def made_for(state: Mapping[str, torch.Tensor], facts: bool) -> str:
    """The table (players, contracts) whose action table and observation the weights ``state``
    fit, in words; the table sizes when none of the usual tables fits."""
    from shanghai_env.actions import action_table
    from shanghai_env.agents.learned.nets.facts import FACTS_SIZE
    from shanghai_env.rules import ALL_CONTRACTS

    pi = state.get("pi.weight")
    first = state.get("trunk.0.weight", pi)
    if pi is None or first is None or pi.dim() != 2 or first.dim() != 2:
        return "no table this version knows (no action layer)"
    actions, inputs = int(pi.shape[0]), int(first.shape[1]) - (FACTS_SIZE if facts else 0)
    for contracts in (ALL_CONTRACTS, *((c,) for c in ALL_CONTRACTS)):
        for players in range(3, 9):
            rules = Rules(num_players=players, contracts=contracts)
            if action_table(rules).size == actions and ObservationEncoder(rules).size == inputs:
                shown = "all contracts" if contracts == ALL_CONTRACTS else f"contract {contracts[0]}"
                return f"{players} players, {shown} ({actions} moves, observations of {inputs})"
    return f"a table of {actions} moves and observations of {inputs} entries"


def check_policy(path: str, rules: Rules | None, where: str = "this table") -> None:
    """ValueError unless ``path`` is a saved policy that plays ``rules``' table (the same
    observation length and action table: players and the contracts' shapes)."""
    _, own, _ = load_policy(path)
    if rules is None:
        return
    from shanghai_env.actions import action_table

    same = (
        own.num_players == rules.num_players
        and ObservationEncoder(own).size == ObservationEncoder(rules).size
        and action_table(own).size == action_table(rules).size
    )
    if not same:
        raise ValueError(
            f"player {path!r} was trained for {own.num_players} players, contracts "
            f"{','.join(map(str, own.contracts))}; {where} has {rules.num_players} players, contracts "
            f"{','.join(map(str, rules.contracts))}"
        )


class PolicyAgent:
    """A saved policy as a player: the most probable legal action (``greedy=True``) or a sample.

    Decides each decision on its own (no state kept), so ``act_batch`` decides many in one
    forward pass; the observation must come from the same table (players, contracts) it was
    trained for, which the tournament checks through :attr:`rules`.
    """

    needs_observation = True  # the tournament then builds decisions with the observation vector

    def __init__(self, path: str, greedy: bool = True, name: str | None = None) -> None:
        self.net, self.rules, self.meta = load_policy(path)
        self.path = path
        # a network reading the facts of its hand needs each decision's view (not arrays only)
        self.needs_view = bool(self.net.extra_size)
        self.greedy = greedy
        self.name = name or path
        self._gen = torch.Generator().manual_seed(0)

    def reset(self, seed: int | None = None) -> None:
        self._gen.manual_seed(0 if seed is None else int(seed) % 2**63)

    def act(self, decision: Decision) -> int:
        return self.act_batch([decision])[0]

    def act_batch(self, decisions: list[Decision]) -> list[int]:
        obs = np.stack([d.observation for d in decisions])
        legal = [d.legal_actions for d in decisions]
        extra = None
        if self.needs_view:
            from shanghai_env.agents.learned.nets.facts import view_facts

            version = self.net.facts_version
            extra = np.stack([view_facts(d.view, d.rules.same_suit_run_gap, version) for d in decisions])
        return self.act_arrays(obs, legal, extra)

    def logits_of(
        self, obs: np.ndarray, legal: Sequence[Sequence[int]], extra: np.ndarray | None = None
    ) -> torch.Tensor:
        """``(B, K)`` logits of each decision's moves ``legal`` (-inf in the padding)."""
        idx, valid = padded(legal)
        t_idx, t_valid = torch.from_numpy(idx), torch.from_numpy(valid)
        t_extra = torch.from_numpy(extra) if extra is not None else None
        t_obs = torch.from_numpy(obs)
        return self.net.logits(self.net.features(t_obs, t_extra), t_idx, t_valid, t_extra, t_obs)

    @torch.no_grad()
    def act_arrays(
        self, obs: np.ndarray, legal: Sequence[Sequence[int]], extra: np.ndarray | None = None
    ) -> list[int]:
        idx, _ = padded(legal)
        logits = self.logits_of(obs, legal, extra)
        if not self.greedy:
            u = torch.rand(logits.shape, generator=self._gen).clamp_(1e-12, 1.0)
            logits = logits - torch.log(-torch.log(u))
        k = logits.argmax(1).numpy()
        return idx[np.arange(len(legal)), k].tolist()
