"""The trainer's network: the env's observation in, a score for each legal action and a value out.

One MLP trunk reads the observation vector (``ObservationEncoder``, docs/observation.md, each
entry divided by its largest value); an action's score is the trunk's features against the
action's row, and only the rows of the legal actions are ever multiplied, so a decision costs a
dozen dot products rather than the whole table, and sampling draws among the legal actions only.
An action's row is its own learned row plus rows shared by every action of the same kind
(``discard``, ``meld``, ``layoff``, ...), the same card and the same place (the move's fields,
docs/actions.md): what is learned of one meld placement carries to the others, which a row per
action alone would learn only from each action's own rare uses. The value head reads the same
trunk (the return of the seat that observes). With ``move_net`` (hidden sizes), a small MLP reads
the trunk's features, the move's row and the move's own facts together and adds its output to
the move's score: DouZero's value of a state and a move through one network, where the row
alone can only weigh the trunk's features the same way in every state.

A saved player is one ``.pt`` file (:func:`save_policy`): the network's weights with the rule
options and sizes it was made for; :class:`PolicyAgent` plays it in tournaments like any bot
(``evaluate.py --players runs/x/model.pt,planner,planner,planner``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from shanghai_env.decision import Decision
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import Rules

POLICY_FORMAT = "shanghai-env policy"
POLICY_VERSION = 1


def padded(legal: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of legal action ids as a ``(B, K)`` index array (K the longest list) and its validity."""
    lengths = np.fromiter((len(x) for x in legal), np.int64, len(legal))
    width = int(lengths.max()) if len(legal) else 1
    flat = np.fromiter((a for x in legal for a in x), np.int64, int(lengths.sum()))
    rows = np.repeat(np.arange(len(legal)), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    cols = np.arange(flat.size) - starts
    idx = np.zeros((len(legal), width), np.int64)
    valid = np.zeros((len(legal), width), bool)
    idx[rows, cols] = flat
    valid[rows, cols] = True
    return idx, valid


class PolicyNet(nn.Module):
    """MLP trunk, a per-action policy head used only at legal actions, and a value head."""

    inv_scale: torch.Tensor  # a buffer: 1 / each observation entry's largest value
    fields: torch.Tensor  # a buffer (A, 3): every action's kind, card and place, from 0

    def __init__(
        self,
        obs_scale: np.ndarray,
        num_actions: int,
        hidden: Sequence[int] = (128, 128),
        action_fields: np.ndarray | None = None,
        extra_size: int = 0,
        upcard: slice | None = None,
        move_net: Sequence[int] = (),
    ) -> None:
        super().__init__()
        self.hidden = tuple(int(h) for h in hidden)
        self.num_actions = int(num_actions)
        self.extra_size = int(extra_size)  # inputs after the observation (the facts block)
        self.register_buffer(
            "inv_scale", torch.as_tensor(1.0 / np.maximum(obs_scale, 1), dtype=torch.float32)
        )
        layers: list[nn.Module] = []
        width = len(obs_scale) + self.extra_size
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.pi = nn.Linear(width, num_actions)
        self.v = nn.Linear(width, 1)
        fields = move_fields(num_actions, action_fields) if action_fields is not None else None
        self.has_fields = fields is not None
        if fields is not None:
            self.register_buffer("fields", torch.as_tensor(fields, dtype=torch.int64))
            self.kind_rows = nn.Parameter(torch.zeros(int(fields[:, 0].max()) + 1, width))
            self.card_rows = nn.Parameter(torch.zeros(int(fields[:, 1].max()) + 1, width))
            self.place_rows = nn.Parameter(torch.zeros(int(fields[:, 2].max()) + 1, width))
            for rows in (self.kind_rows, self.card_rows, self.place_rows):
                nn.init.orthogonal_(rows, 0.01)
            if self.extra_size:  # per move kind: the weight of its card's two facts (outs, losses)
                self.move_weights = nn.Parameter(torch.zeros(int(fields[:, 0].max()) + 1, 2))
        # where the observation holds the upcard on offer (one-hot): a move without a card of its
        # own (take, draw, buy, pass) reads the upcard's facts instead, since taking or buying it
        # is what those moves decide; None: they read none (facts version 1, or no facts)
        self.upcard = upcard if self.extra_size and self.has_fields else None
        self.facts_version = 0  # which facts the extra inputs are (train/facts.py; set by build_net)
        self.move_net = tuple(int(h) for h in move_net) if self.has_fields else ()
        self.move_mlp: nn.Sequential | None = None
        if self.move_net:  # reads (features, the move's row, its two facts); starts at zero output
            mlp: list[nn.Module] = []
            size = 2 * width + 2
            for h in self.move_net:
                mlp += [nn.Linear(size, h), nn.ReLU()]
                size = h
            last = nn.Linear(size, 1)
            nn.init.zeros_(last.weight)
            nn.init.zeros_(last.bias)
            self.move_mlp = nn.Sequential(*mlp, last)
        # small initial logits: a uniform policy over the legal moves to start with (CleanRL's 0.01)
        nn.init.orthogonal_(self.pi.weight, 0.01)
        nn.init.zeros_(self.pi.bias)
        nn.init.orthogonal_(self.v.weight, 1.0)
        nn.init.zeros_(self.v.bias)

    def features(self, obs: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        x = obs.float() * self.inv_scale
        if self.extra_size:
            if extra is None:
                raise ValueError(f"this network reads {self.extra_size} inputs (facts) after the observation")
            x = torch.cat([x, extra.float()], 1)
        return self.trunk(x)

    def logits(
        self,
        h: torch.Tensor,
        idx: torch.Tensor,
        valid: torch.Tensor,
        extra: torch.Tensor | None = None,
        obs: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits of the actions ``idx`` (B, K); ``-inf`` where ``valid`` is False. With the facts
        block (``extra``), a move that names a card also reads that card's own facts (is it an
        out, what letting it go costs) through a weight per move kind: a move's own features,
        as DouZero's action encoding gives each move. A move without a card reads whether the
        upcard on offer is an out (read from ``obs``, the observation the features came from;
        needed by networks made with the upcard input)."""
        rows: torch.Tensor | None = None  # every action's row, when a large batch makes them once
        if not self.has_fields:
            w = self.pi.weight[idx]  # (B, K, H)
        elif idx.numel() > self.num_actions:
            rows = self.action_rows()  # a large batch: every row once, then gather
            w = rows[idx]
        else:
            f = self.fields[idx]  # (B, K, 3): kind, card, place
            w = self.pi.weight[idx] + self.kind_rows[f[..., 0]] + self.card_rows[f[..., 1]]
            w = w + self.place_rows[f[..., 2]]
        out = torch.einsum("bkh,bh->bk", w, h) + self.pi.bias[idx]
        own: torch.Tensor | None = None  # (B, K, 2): each move's own facts
        if self.extra_size and extra is not None and self.has_fields:
            f = self.fields[idx]
            per_card = torch.stack([extra[:, 1:54], extra[:, 54:107]], -1).float()  # (B, 53, 2)
            per_card = torch.cat([torch.zeros_like(per_card[:, :1]), per_card], 1)  # row 0: no card
            card = f[..., 1].clamp(max=53)  # fields start at 0: 0 = a move without a card, c + 1 = card c
            own = per_card.gather(1, card[..., None].expand(-1, -1, 2))  # (B, K, 2)
            if self.upcard is not None:
                if obs is None:
                    raise ValueError("this network reads the upcard from the observation: pass obs")
                offered = obs[:, self.upcard].float()  # (B, 53), all zero when nothing is offered
                up_out = (offered * per_card[:, 1:, 0]).sum(1)  # 1 when the upcard is an out
                up = torch.stack([up_out, torch.zeros_like(up_out)], -1)  # (B, 2), as (outs, losses)
                own = torch.where((card == 0)[..., None], up[:, None, :], own)
            out = out + (own * self.move_weights[f[..., 0]]).sum(-1)
        if self.move_mlp is not None:
            if own is None:
                own = torch.zeros(*idx.shape, 2, dtype=h.dtype, device=h.device)
            out = out + self._move_scores(h, w, own.to(h.dtype), idx, rows)
        return out.masked_fill(~valid, float("-inf"))

    def _move_scores(
        self,
        h: torch.Tensor,
        w: torch.Tensor,
        own: torch.Tensor,
        idx: torch.Tensor,
        rows: torch.Tensor | None,
    ) -> torch.Tensor:
        """The move MLP on (features, the move's row, its own facts), ``(B, K)``. Its first layer
        is applied to each part apart, since a linear map of a concatenation is the sum of its
        blocks' maps: the features' block once per decision and, in a large batch, the rows'
        block once per action, rather than all of it on every (decision, move) pair (the pairs'
        (B, K, 2H + 2) input made the move MLP most of an update's time)."""
        assert self.move_mlp is not None
        first = self.move_mlp[0]
        assert isinstance(first, nn.Linear)
        width = h.shape[1]
        weight = first.weight  # (M, 2H + 2): the features' block, the row's, the own facts'
        from_h = h @ weight[:, :width].T + first.bias  # (B, M)
        w_block = weight[:, width : 2 * width]
        from_row = (rows @ w_block.T)[idx] if rows is not None else w.to(h.dtype) @ w_block.T
        z = torch.relu(from_h[:, None, :] + from_row + own @ weight[:, 2 * width :].T)  # (B, K, M)
        return self.move_mlp[2:](z).squeeze(-1)

    def action_rows(self) -> torch.Tensor:
        """``(A, H)``: every action's row, its own plus its kind's, card's and place's."""
        f = self.fields
        return self.pi.weight + self.kind_rows[f[:, 0]] + self.card_rows[f[:, 1]] + self.place_rows[f[:, 2]]

    def value(self, h: torch.Tensor) -> torch.Tensor:
        return self.v(h).squeeze(-1)


def move_fields(num_actions: int, table_fields: np.ndarray) -> np.ndarray:
    """``(A, 3)`` kind, card and place of every action, each shifted to start at 0."""
    out = np.asarray(table_fields, np.int64).reshape(num_actions, 3)
    return out - out.min(0)


def action_fields(rules: Rules) -> np.ndarray:
    """The kind, card and place of every action of ``rules``' table (-1 where a move has none)."""
    from shanghai_env.actions import action_table

    return np.array([(int(m.kind), m.card, m.place) for m in action_table(rules).moves], np.int64)


def build_net(
    rules: Rules,
    hidden: Sequence[int],
    facts: bool = False,
    version: int | None = None,
    move_net: Sequence[int] = (),
) -> PolicyNet:
    """A fresh network for ``rules``' table; with ``facts``, the facts block of ``version``
    (train/facts.py, the newest by default: from version 2 the moves without a card read the
    upcard's facts); ``move_net``: the hidden sizes of the move MLP (none by default)."""
    from shanghai_env.actions import action_table

    from .facts import FACTS_SIZE, FACTS_VERSION

    version = FACTS_VERSION if version is None else int(version)
    encoder = ObservationEncoder(rules)
    table = action_table(rules)
    extra = FACTS_SIZE if facts else 0
    at = encoder.slices["upcard_offered"] if facts and version >= 2 else None
    high = np.asarray(encoder.high, np.float32)
    net = PolicyNet(high, table.size, hidden, action_fields(rules), extra, at, move_net)
    net.facts_version = version if facts else 0
    return net


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
    from shanghai_env.rules import ALL_CONTRACTS

    from .facts import FACTS_SIZE

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
            from .facts import view_facts

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
