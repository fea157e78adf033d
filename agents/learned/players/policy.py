"""A saved trainer policy as a player: a ``.pt`` (:func:`save_policy`) holds the network's weights
with the rules and sizes it was made for; :class:`PolicyAgent` plays it like any bot.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from shanghai_env.agents.learned.nets.facts import FACTS_SIZE, describe_facts, facts_function
from shanghai_env.agents.learned.nets.policy import PolicyNet, build_net, padded
from shanghai_env.agents.learned.nets.sampling import (
    greedy_legal,
    gumbel_argmax,
    legal_index,
    legal_log_probs,
)
from shanghai_env.agents.learned.players.sb3 import SAVED_PLAYER
from shanghai_env.any_table import ENCODINGS, MAX_SEATS, MIN_SEATS, AnyTable, encoding_tables
from shanghai_env.decision import Decision
from shanghai_env.models import shipped_models, shipped_path
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
    """One file: the weights, the rules it plays and ``meta`` (JSON-able); ValueError: weights not finite."""
    # a NaN player would play one fixed move everywhere and look like a player
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
            "encoding": net.encoding,
            "state_dict": net.state_dict(),
            "meta": json.loads(json.dumps(meta or {})),
        },
        path,
    )


def is_policy_file(path: str) -> bool:
    """Whether ``path`` is a :func:`save_policy` player (a ``.pt`` or a shipped ``.zip``); builds nothing."""
    if path.endswith(".zip"):  # a torch file is a zip archive, told from others by its data.pkl
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


def load_policy(path: str | os.PathLike[str]) -> tuple[PolicyNet, Rules, dict[str, Any]]:
    """The network, the rules it was made for and its meta, from a ``.pt`` or a shipped player's
    name (``"scratch_4p"``); ValueError, naming the file, for a file that is none, a damaged one
    or one whose weights are not finite."""
    file = shipped_path(path)
    if not os.path.isfile(file):
        raise ValueError(
            f"{file!r} is not a saved policy: no such file; give the path of a .pt from shanghai-train "
            f"or a shipped player's name ({', '.join(sorted(shipped_models()))})"
        )
    if _damaged(file):
        raise ValueError(
            f"{file!r} is a damaged saved player (its bytes no longer match the checksums saved with "
            "them): use an undamaged copy or train it again"
        )
    try:
        blob = torch.load(file, map_location="cpu", weights_only=True)
    except Exception:  # torch's text (several lines, advice to load unsafely) says nothing useful here
        raise ValueError(
            f"{file!r} is not a saved player, or it is damaged: it cannot be read; {SAVED_PLAYER}"
        ) from None
    if not isinstance(blob, dict) or blob.get("format") != POLICY_FORMAT:
        raise ValueError(f"{file!r} is not a saved player (it holds something else); {SAVED_PLAYER}")
    state = blob.get("state_dict")
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise ValueError(f"{file!r} is a damaged saved player: it holds no weights; train it again")
    bad = not_finite(state)
    if bad:
        raise ValueError(
            f"{file!r} holds weights that are not finite (NaN or inf) in {', '.join(bad)}: the training "
            "diverged or the file is damaged; use another player"
        )
    try:  # no "facts_version": saved before there were versions, with the first facts
        facts, version = bool(blob.get("facts", False)), int(blob.get("facts_version", 1))
        meta = dict(blob.get("meta", {}))
    except (TypeError, ValueError):
        raise ValueError(
            f"{file!r} is a damaged saved player: its header cannot be read; train it again"
        ) from None
    encoding = blob.get("encoding", "table")  # none: saved before there were encodings
    if encoding not in ENCODINGS:
        raise ValueError(f"{file!r} reads the encoding {encoding!r}, which this version does not know")
    try:
        rules = Rules(num_players=blob["rules"]["num_players"], contracts=tuple(blob["rules"]["contracts"]))
        net = build_net(rules, blob["hidden"], facts, version, blob.get("move_net", ()), encoding)
        net.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError):
        what = "a header (table, sizes) that does not match its weights"
        what = "no table (rules)" if "rules" not in blob else what
        raise ValueError(
            f"{file!r} is a saved policy with {what}: its weights fit {made_for(state, facts)}; "
            "save it again with shanghai-train"
        ) from None
    if meta.get("prior"):  # it played through its prior, which no player does since
        raise ValueError(
            f"{file!r} amends the player {meta['prior']!r} (shanghai-train ppo --prior), which this "
            "version no longer plays: shanghai-env 0.2.0 is the last release that does"
        )
    net.eval()
    return net, rules, meta


def _damaged(path: str) -> bool:
    """Whether a record of the torch archive ``path`` fails its CRC-32 (damage ``torch.load`` misses)."""
    import zipfile

    try:
        archive = zipfile.ZipFile(path)
    except Exception:  # zipfile raises many kinds for what is no archive it reads
        return False
    with archive:
        try:
            for info in archive.infolist():
                if info.CRC == 0 and info.file_size:  # saved without checksums
                    continue
                with archive.open(info) as f:  # reading to the end checks the CRC-32
                    while f.read(1 << 20):
                        pass
        except Exception:  # a bad CRC-32, and whatever else a damaged record raises on the way
            return True
    return False


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
        shown = "all contracts" if contracts == ALL_CONTRACTS else f"contract {contracts[0]}"
        for players in range(3, 9):
            rules = Rules(num_players=players, contracts=contracts)
            if action_table(rules).size == actions and ObservationEncoder(rules).size == inputs:
                return f"{players} players, {shown} ({actions} moves, observations of {inputs})"
        table, encoder = encoding_tables(Rules(num_players=8, contracts=contracts), "any_table")
        if (table.size, encoder.size) == (actions, inputs):
            sizes = f"{actions} moves, observations of {inputs}"
            return f"every table size in encoding any_table, {shown} ({sizes})"
    return f"a table of {actions} moves and observations of {inputs} entries"


def check_policy(path: str, rules: Rules | None, where: str = "this table") -> None:
    """ValueError unless ``path`` is a saved policy that plays ``rules``' table (an ``any_table``
    player: any table size of the same contracts' shapes)."""
    net, own, _ = load_policy(path)
    if rules is None:
        return
    if net.encoding == "any_table":  # its lengths depend on the largest contract and the deals only
        if (own.max_melds, len(own.contracts)) != (rules.max_melds, len(rules.contracts)):
            raise ValueError(
                f"player {path!r} was trained for contracts {','.join(map(str, own.contracts))} (any "
                f"table size); {where} has contracts {','.join(map(str, rules.contracts))}"
            )
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
    """A saved policy as a player: the most probable legal action (``greedy=True``) or a sample, for
    the table it was trained for (:func:`check_policy`; an ``any_table`` player: 3 to 8 players).
    """

    needs_observation = True  # the tournament then builds decisions with the observation vector

    def __init__(
        self,
        path: str | os.PathLike[str],
        greedy: bool = True,
        name: str | None = None,
        loaded: tuple[PolicyNet, Rules, dict[str, Any]] | None = None,
    ) -> None:
        # ``loaded``: a network in memory (a trainer's own, as it learns) instead of the file's
        if loaded is not None:
            file = os.fspath(path)
            self.net, self.rules, self.meta = loaded
        else:
            file = shipped_path(path)  # a shipped player's name plays from any folder
            self.net, self.rules, self.meta = load_policy(file)
        self.path = file
        # a network reading the facts of its hand needs each decision's view (not arrays only)
        self.needs_view = bool(self.net.extra_size)
        self.greedy = greedy
        self.name = name or os.path.splitext(os.path.basename(file))[0]  # models/scratch.pt: scratch
        self.encoding = self.net.encoding
        self._any: dict[int, AnyTable] = {}  # the maps from each table size, by its native length
        if self.encoding == "any_table":
            for n in range(MIN_SEATS, MAX_SEATS + 1):
                maps = AnyTable(Rules(num_players=n, contracts=self.rules.contracts))
                self._any[maps.native_obs_size] = maps
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
        # torch wants a writable buffer; the env's read-only arrays are copied (a few KB a row)
        t_obs = torch.from_numpy(obs if obs.flags.writeable else obs.copy())
        return self.net.logits(self.net.features(t_obs, t_extra), t_idx, t_valid, t_extra, t_obs)

    @torch.no_grad()
    def act_arrays(
        self, obs: np.ndarray, legal: Sequence[Sequence[int]], extra: np.ndarray | None = None
    ) -> list[int]:
        maps = self._any.get(obs.shape[1])
        if maps is not None:  # a native table's decisions, in the 8-seat layout
            obs = maps.obs_to_any(obs)
            legal = [maps.to_any[np.asarray(ids, np.int64)].tolist() for ids in legal]
        idx, _ = padded(legal)
        logits = self.logits_of(obs, legal, extra)
        k = greedy_legal(logits) if self.greedy else gumbel_argmax(logits, self._gen)
        chosen = idx[np.arange(len(legal)), k.numpy()]
        return (chosen if maps is None else maps.to_native[chosen]).tolist()

    @torch.no_grad()
    def move_scores(self, decision: Decision) -> tuple[list[int], np.ndarray]:
        """The decision's legal action ids (ascending) and the network's score of each (dmc: the
        move's value; a policy: its logit); it plays the highest."""
        obs, legal, facts = self.inputs(decision)
        extra = None if facts is None else facts[None, :]
        scores = self.logits_of(obs[None, :], [legal], extra)[0]
        return list(decision.legal_actions), scores.numpy().astype(np.float64)

    def inputs(self, decision: Decision) -> tuple[np.ndarray, list[int], np.ndarray | None]:
        """What the network reads at ``decision``: the observation and the legal ids in its own
        encoding (the 8-seat layout for an ``any_table`` network; ids in the decision's order), and
        the facts of the own hand (None if it reads none)."""
        ids = list(decision.legal_actions)
        obs, legal = decision.observation, ids
        maps = self._any.get(obs.shape[0])
        if maps is not None:
            obs = maps.obs_to_any(obs[None, :])[0]
            legal = maps.to_any[np.asarray(ids, np.int64)].tolist()
        facts = None
        if self.needs_view:
            from shanghai_env.agents.learned.nets.facts import view_facts

            facts = view_facts(decision.view, decision.rules.same_suit_run_gap, self.net.facts_version)
        return obs, legal, facts


# --- a saved player as a torch module, for one's own code on a vector batch -----------------------

# what the scores of each method's network are (the ``method`` its file's meta names)
SCORE_KINDS = {
    "ppo": "log-probabilities",
    "dagger": "log-probabilities",
    "dmc": "action values (Q)",
}
UNNAMED_SCORES = "logits (the file names no method)"


@dataclass(frozen=True)
class ScorerInfo:
    """What a module from :func:`load_scorer_module` reads and what its scores are."""

    path: str
    method: str  # the trainer's method that made it ("ppo", "dmc", "dagger"; "" when unnamed)
    scores: str  # "log-probabilities" (ppo, dagger), "action values (Q)" (dmc), or raw logits
    rules: Rules  # the table it plays (players, contracts)
    needs_facts: bool  # whether it reads the facts of the own hand (the env's ``extra``)
    facts_version: int  # which facts (0: none)
    facts: tuple[str, ...]  # the facts in words, in input order (empty: none)
    meta: dict[str, Any]
    encoding: str = "table"  # the layout it reads: the env's own, or "any_table" (8 seats)

    @property
    def env_options(self) -> dict[str, Any]:
        """The keywords of a :func:`shanghai_env.vector_env` whose arrays it reads: its table and,
        for a player that reads facts, the ``features`` that fill ``venv.extra`` with them."""
        options: dict[str, Any] = {
            "num_players": self.rules.num_players,
            "contracts": tuple(self.rules.contracts),
            "encoding": self.encoding,
        }
        if self.needs_facts:
            options["features"] = facts_function(self.facts_version)
            options["features_size"] = FACTS_SIZE
        return options


class ScoredMoves(NamedTuple):
    """A :class:`ScorerModule`'s answer for a batch: one score per legal move of every row."""

    scores: torch.Tensor  # (B, K) float: the legal moves' scores, -inf in the padding
    idx: torch.Tensor  # (B, K) int64: the action id of each column (0 in the padding)
    valid: torch.Tensor  # (B, K) bool: False in the padding


class ScorerModule(nn.Module):
    """A saved trainer player as a module on a vector env's batch (made by :func:`load_scorer_module`)."""

    def __init__(self, net: PolicyNet, kind: str) -> None:
        super().__init__()
        self.net = net
        self.kind = kind  # ScorerInfo.scores

    def forward(self, obs: Any, legal: Any, facts: Any = None) -> ScoredMoves:
        """Scores of each row's legal moves.

        ``obs``: ``(B, L)`` observations (``venv.obs``, numpy or torch); ``legal``: each row's
        legal ids (``venv.legal_actions``), an action mask ``(B, A)`` (``venv.mask``) or an
        ``(idx, valid)`` pair from :func:`~shanghai_env.agents.learned.nets.sampling.legal_index`;
        ``facts``: ``(B, 107)`` (``venv.extra`` of an env made with ``info.env_options``) for a
        player that reads them, else None. Gradients flow. ValueError for inputs that do not fit."""
        device = self.net.inv_scale.device
        t_obs = torch.as_tensor(obs, device=device)
        if t_obs.dim() != 2 or t_obs.shape[1] != self.net.inv_scale.shape[0]:
            raise ValueError(
                f"obs must be (B, {self.net.inv_scale.shape[0]}) observations of this player's table, "
                f"got shape {tuple(t_obs.shape)}"
            )
        if isinstance(legal, tuple) and len(legal) == 2 and all(isinstance(x, torch.Tensor) for x in legal):
            idx, valid = legal[0].to(device), legal[1].to(device)
        else:
            idx, valid = legal_index(legal, device)
        if idx.shape[0] != t_obs.shape[0]:
            raise ValueError(f"legal has {idx.shape[0]} rows for {t_obs.shape[0]} observations")
        if idx.numel() and (int(idx.max()) >= self.net.num_actions or int(idx.min()) < 0):
            raise ValueError(
                f"legal holds action id {int(idx.max())}; this table's ids are 0..{self.net.num_actions - 1}"
            )
        extra = self._facts(facts, t_obs.shape[0], device)
        logits = self.net.logits(self.net.features(t_obs, extra), idx, valid, extra, t_obs)
        scores = legal_log_probs(logits) if self.kind == "log-probabilities" else logits
        return ScoredMoves(scores, idx, valid)

    def _facts(self, facts: Any, rows: int, device: torch.device) -> torch.Tensor | None:
        width = 0 if facts is None else int(np.shape(facts)[-1]) if np.ndim(facts) == 2 else -1
        if not self.net.extra_size:
            if width > 0:
                raise ValueError("this player reads no facts: pass facts=None (or a zero-width venv.extra)")
            return None
        if width != self.net.extra_size or int(np.shape(facts)[0]) != rows:
            raise ValueError(
                f"this player reads the facts of its hand: pass facts, ({rows}, {self.net.extra_size}) "
                "(venv.extra of a vector env made with info.env_options), got "
                + ("None" if facts is None else f"shape {tuple(np.shape(facts))}")
            )
        return torch.as_tensor(facts, device=device)


def load_scorer_module(path: str | os.PathLike[str]) -> tuple[ScorerModule, ScorerInfo]:
    """A saved trainer player (a ``.pt`` of ``shanghai-train ppo``, ``dmc`` or ``dagger``, or a
    shipped player's name) as a torch module in eval mode on the CPU, and what it is (an example:
    docs/bots.md, "A shipped player in your own code").

    The module's scores are of the kind ``info.scores`` names: ``"log-probabilities"`` (ppo,
    dagger) or ``"action values (Q)"`` (dmc: no policy's logits); the player plays the highest.
    ``info.env_options`` makes a vector env whose ``extra`` holds the facts it reads, if any
    (``info.needs_facts``). TypeError for a path of another type; ValueError for any other file,
    a MaskablePPO ``.zip`` (:func:`~shanghai_env.agents.learned.players.sb3.load_maskable`) too."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            "path must be the path of a saved player (.pt) or a shipped player's name, "
            f"got {type(path).__name__}"
        )
    file = shipped_path(path)
    if file.endswith((".zip", ".scorer")) and not is_policy_file(file):
        raise ValueError(
            f"{file!r} is not a saved trainer policy: a MaskablePPO .zip loads with "
            "shanghai_env.agents.learned.players.sb3.load_maskable (sb3-contrib), a .scorer plays "
            "through make_agent; load_scorer_module takes the .pt of shanghai-train ppo, dmc or dagger"
        )
    net, rules, meta = load_policy(file)
    method = str(meta.get("method", ""))
    kind = SCORE_KINDS.get(method, UNNAMED_SCORES)
    version = net.facts_version if net.extra_size else 0
    info = ScorerInfo(
        path=file,
        method=method,
        scores=kind,
        rules=rules,
        needs_facts=bool(net.extra_size),
        facts_version=version,
        facts=tuple(describe_facts(version)) if version else (),
        meta=meta,
        encoding=net.encoding,
    )
    module = ScorerModule(net, kind)
    module.eval()
    return module, info
