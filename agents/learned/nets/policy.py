"""The trainer's network: the env's observation in, a score for each legal action and a value out.

A legal action's score is the trunk's features against the action's row (its own plus rows shared
by its kind, card and place), plus, with ``move_net``, a small MLP's output; docs/training.md, "ppo".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from shanghai_env.any_table import ENCODINGS, AnyTable, encoding_tables
from shanghai_env.checks import choice_arg
from shanghai_env.rules import Rules


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


def padded_rows(idx: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`padded` of the rows ``rows`` of a batch padded once (``idx``, ``lengths``), cut to fit."""
    mine = lengths[rows]
    width = int(mine.max()) if len(rows) else 1
    return idx[rows, :width], np.arange(width) < mine[:, None]


class SparseObs:
    """A batch of the env's int8 observations held by their nonzero entries, row after row (CSR),
    as :meth:`PolicyNet.features` reads them. Built once for a batch (:meth:`of`); a minibatch
    takes its rows (:meth:`take`)."""

    def __init__(self, cols: np.ndarray, values: np.ndarray, counts: np.ndarray, width: int) -> None:
        self.cols = cols  # (N,) int64: each nonzero entry's column, row by row, ascending in a row
        self.values = values  # (N,) float32: its value, unscaled
        self.counts = counts  # (B,) int64: each row's number of nonzero entries
        self.starts = np.cumsum(counts) - counts  # (B,) where each row's entries begin
        self.width = int(width)  # the observation's length

    @classmethod
    def of(cls, obs: np.ndarray) -> SparseObs:
        """The nonzero entries of ``obs`` (B, L); a view of rows of a wider buffer is read in place."""
        batch, width = obs.shape
        # the comparison first: numpy finds the nonzero entries of a bool array several times
        # faster than those of an int8 one (and the comparison makes a contiguous array of any view)
        at = np.flatnonzero(obs != 0)
        rows, cols = np.divmod(at, width)
        counts = np.bincount(rows, minlength=batch).astype(np.int64)
        # a contiguous array's entries by their flat positions: several times faster than by pairs
        values = obs.reshape(-1)[at] if obs.flags.c_contiguous else obs[rows, cols]
        return cls(cols, values.astype(np.float32), counts, width)

    def __len__(self) -> int:
        return len(self.counts)

    def take(self, rows: np.ndarray) -> SparseObs:
        """The rows ``rows`` of this batch, in that order."""
        counts = self.counts[rows]
        begins = np.cumsum(counts) - counts
        at = np.repeat(self.starts[rows] - begins, counts) + np.arange(int(counts.sum()))
        return SparseObs(self.cols[at], self.values[at], counts, self.width)

    def hstack(self, other: SparseObs) -> SparseObs:
        """Each row's entries, then the same row's of ``other`` (columns after this batch's)."""
        # an entry's place: its own in its batch, shifted by the other batch's entries before its row
        mine = np.arange(len(self.cols)) + np.repeat(other.starts, self.counts)
        theirs = np.arange(len(other.cols)) + np.repeat(self.starts + self.counts, other.counts)
        cols = np.empty(len(mine) + len(theirs), np.int64)
        values = np.empty(len(cols), np.float32)
        cols[mine], cols[theirs] = self.cols, other.cols + self.width
        values[mine], values[theirs] = self.values, other.values
        return SparseObs(cols, values, self.counts + other.counts, self.width + other.width)


class SparseFirstLayer(torch.autograd.Function):
    """``x @ weight.T`` for the observations ``x`` given by their nonzero entries, as a sum of the
    weight's columns at them (``embedding_bag``); ``by_input``: the weight transposed, (L, H)."""

    @staticmethod
    def forward(
        ctx: Any,
        weight: torch.Tensor,
        by_input: torch.Tensor,
        cols: torch.Tensor,
        values: torch.Tensor,
        counts: torch.Tensor,
    ) -> torch.Tensor:
        ctx.save_for_backward(cols, values, counts)
        ctx.width = weight.shape[1]
        return SparseFirstLayer.sums(by_input, cols, values, torch.cumsum(counts, 0) - counts)

    @staticmethod
    def sums(
        by_input: torch.Tensor, cols: torch.Tensor, values: torch.Tensor, offsets: torch.Tensor
    ) -> torch.Tensor:
        """The forward pass's output alone, each row's entries from ``offsets`` on (no gradient:
        without the autograd function's bookkeeping, a fair share of a small batch's time)."""
        return F.embedding_bag(cols, by_input, offsets, mode="sum", per_sample_weights=values)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        cols, values, counts = ctx.saved_tensors
        width = ctx.width
        # the weight's gradient as the same kind of sum the other way round (embedding_bag's own
        # backward scatters entry by entry); a stable sort by column fixes the order of every sum
        rows = torch.repeat_interleave(torch.arange(len(counts), device=cols.device), counts)
        # a narrow integer type sorts several times faster (a radix sort)
        key = cols.to(torch.int16 if width < 2**15 else torch.int32)
        order = torch.argsort(key, stable=True)
        per_col = torch.bincount(cols, minlength=width)
        col_offsets = torch.cumsum(per_col, 0) - per_col
        by_col = F.embedding_bag(
            rows.index_select(0, order),
            grad.contiguous(),
            col_offsets,
            mode="sum",
            per_sample_weights=values.index_select(0, order),
        )  # (L, H)
        return by_col.t(), None, None, None, None


class LegalDots(torch.autograd.Function):
    """The dot products ``source[actions[n]] · h[rows[n]]`` of a batch's legal (decision, move)
    pairs, ``rows`` ascending (each decision's moves together, ``counts`` of them)."""

    @staticmethod
    def forward(
        ctx: Any,
        source: torch.Tensor,
        h: torch.Tensor,
        actions: torch.Tensor,
        rows: torch.Tensor,
        counts: torch.Tensor,
    ) -> torch.Tensor:
        ctx.save_for_backward(source, h, actions, rows, counts)
        return LegalDots.dots(source, h, actions, rows)

    @staticmethod
    def dots(
        source: torch.Tensor, h: torch.Tensor, actions: torch.Tensor, rows: torch.Tensor
    ) -> torch.Tensor:
        """The forward pass's output alone (no gradient)."""
        return source.index_select(0, actions).mul_(h.index_select(0, rows)).sum(1)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        source, h, actions, rows, counts = ctx.saved_tensors
        # sums of whole rows (embedding_bag), not autograd's (pairs, H) temporaries; the pairs
        # sorted stably by action, so the order of every sum is fixed
        grad = grad.contiguous()
        grad_source = grad_h = None
        if ctx.needs_input_grad[1]:
            offsets = torch.cumsum(counts, 0) - counts
            grad_h = F.embedding_bag(actions, source, offsets, mode="sum", per_sample_weights=grad)
        if ctx.needs_input_grad[0]:
            size = source.shape[0]
            order = torch.argsort(actions.to(torch.int16 if size < 2**15 else torch.int32), stable=True)
            per_action = torch.bincount(actions, minlength=size)
            grad_source = F.embedding_bag(
                rows.index_select(0, order),
                h.detach(),
                torch.cumsum(per_action, 0) - per_action,
                mode="sum",
                per_sample_weights=grad.index_select(0, order),
            )
        return grad_source, grad_h, None, None, None


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
            # rows shared by the moves of a kind, card or place: what is learned of one carries to the others
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
        self.facts_version = 0  # which facts the extra inputs are (nets/facts.py; set by build_net)
        self.encoding = "table"  # the layout of its inputs and action ids (set by build_net)
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

    def features(
        self,
        obs: torch.Tensor | SparseObs,
        extra: torch.Tensor | None = None,
        by_input: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The trunk's features of ``obs``: a tensor (B, L), or a :class:`SparseObs` (a network
        with a hidden layer; the same up to float32 rounding). ``by_input``: for a ``SparseObs``,
        :meth:`acting_first_layer` made with the current weights. Raises ValueError when ``extra``
        is missing or the ``SparseObs`` does not fit."""
        if isinstance(obs, SparseObs):
            return self._sparse_features(obs, extra, by_input)
        # the env's int8 observation is scaled in the copy .float() makes (one large buffer, not two)
        x = obs * self.inv_scale if obs.dtype == torch.float32 else obs.float().mul_(self.inv_scale)
        if self.extra_size:
            if extra is None:
                raise ValueError(f"this network reads {self.extra_size} inputs (facts) after the observation")
            x = torch.cat([x, extra.float()], 1)
        return self.trunk(x)

    def _sparse_features(
        self, obs: SparseObs, extra: torch.Tensor | None, by_input: torch.Tensor | None
    ) -> torch.Tensor:
        first = self.trunk[0] if self.hidden else None
        if not isinstance(first, nn.Linear):
            raise ValueError("a SparseObs is read by the first hidden layer: this network has none")
        width = self.inv_scale.shape[0]
        if obs.width != width:
            raise ValueError(f"this network reads observations of {width} entries, got {obs.width}")
        dev = first.weight.device
        cols = torch.from_numpy(obs.cols).to(dev)
        # each entry scaled as the dense path scales it (the same float32 products)
        values = torch.from_numpy(obs.values).to(dev) * self.inv_scale.index_select(0, cols)
        weight = first.weight[:, :width] if self.extra_size else first.weight
        counts = torch.from_numpy(obs.counts).to(dev)
        if by_input is None:
            by_input = weight.detach().t().contiguous()
        z = SparseFirstLayer.apply(weight, by_input, cols, values, counts)
        if self.extra_size:
            if extra is None:
                raise ValueError(f"this network reads {self.extra_size} inputs (facts) after the observation")
            z = z + F.linear(extra.float(), first.weight[:, width:])
        return self.trunk[1:](z + first.bias)

    def logits(
        self,
        h: torch.Tensor,
        idx: torch.Tensor,
        valid: torch.Tensor,
        extra: torch.Tensor | None = None,
        obs: torch.Tensor | None = None,
        table: torch.Tensor | None = None,
        lengths: np.ndarray | None = None,
    ) -> torch.Tensor:
        """Logits of the actions ``idx`` (B, K); ``-inf`` where ``valid`` is False. ``extra``: the
        facts block (a move reads its card's facts, a move without a card the upcard's, from
        ``obs``: ValueError without it in a network made with the upcard input). ``table``:
        :meth:`action_rows` made beforehand (the same logits, bit for bit). ``lengths``: each row's
        number of legal moves when ``valid`` is their prefix (as :func:`padded` makes it): only the
        legal rows are multiplied, the same up to float32 rounding."""
        large = idx.numel() > self.num_actions
        # every action's row: made beforehand (table) or, for a large batch, made once here; a
        # small batch with its table and lengths (acting) reads the legal rows alone from the table
        # too (with a move MLP it gathers its moves' rows, which that network reads as well)
        rows: torch.Tensor | None = None
        if self.has_fields and large:
            rows = table if table is not None else self.action_rows()
        elif self.has_fields and table is not None and lengths is not None and self.move_mlp is None:
            rows = table
        w: torch.Tensor | None = None  # (B, K, H): the moves' rows, unless the large batch's are grouped
        if rows is not None and lengths is not None:
            dots = self._legal_dots(rows, idx, valid, h, lengths)  # no padded (B, K, H) gather at all
        else:
            if not self.has_fields:
                w = rows_at(self.pi.weight, idx)  # (B, K, H)
            elif table is not None:  # the same sums in the same order as below, made once a rollout
                w = rows_at(table, idx)
            elif rows is not None:
                w = rows_at(rows, idx)
            else:
                f = self.fields[idx]  # (B, K, 3): kind, card, place
                w = rows_at(self.pi.weight, idx) + rows_at(self.kind_rows, f[..., 0])
                w = w + rows_at(self.card_rows, f[..., 1]) + rows_at(self.place_rows, f[..., 2])
            # with lengths (training: dmc's move played) a product per pair, cheaper than a batched
            # matmul of one-move rows; without, the einsum the players' recorded moves came from
            dots = (w * h[:, None, :]).sum(-1) if lengths is not None else torch.einsum("bkh,bh->bk", w, h)
        out = dots + self.pi.bias[idx]
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

    def _legal_dots(
        self,
        source: torch.Tensor,
        idx: torch.Tensor,
        valid: torch.Tensor,
        h: torch.Tensor,
        lengths: np.ndarray,
    ) -> torch.Tensor:
        """``einsum("bkh,bh->bk", source[idx], h)`` at the legal moves only (0 in the padding)."""
        batch, width = idx.shape
        counts = torch.from_numpy(np.asarray(lengths, np.int64)).to(h.device)
        rows = torch.repeat_interleave(torch.arange(batch, device=h.device), counts)
        dots = LegalDots.apply(source, h, idx[valid], rows, counts)  # row by row, as valid orders them
        return h.new_zeros(batch, width).masked_scatter(valid, dots)

    def _move_scores(
        self,
        h: torch.Tensor,
        w: torch.Tensor | None,
        own: torch.Tensor,
        idx: torch.Tensor,
        rows: torch.Tensor | None,
    ) -> torch.Tensor:
        """The move MLP on (features, the move's row, its own facts), ``(B, K)``."""
        # the first layer applied to each block apart (a linear map of a concatenation is the sum
        # of its blocks' maps): the features' once per decision, the rows' once per action
        assert self.move_mlp is not None
        first = self.move_mlp[0]
        assert isinstance(first, nn.Linear)
        width = h.shape[1]
        weight = first.weight  # (M, 2H + 2): the features' block, the row's, the own facts'
        from_h = h @ weight[:, :width].T + first.bias  # (B, M)
        w_block = weight[:, width : 2 * width]
        if rows is not None:
            from_row = rows_at(rows @ w_block.T, idx)
        else:
            assert w is not None  # a batch small enough to gather its moves' rows
            from_row = w.to(h.dtype) @ w_block.T
        z = torch.relu(from_h[:, None, :] + from_row + own @ weight[:, 2 * width :].T)  # (B, K, M)
        return self.move_mlp[2:](z).squeeze(-1)

    def acting_table(self) -> torch.Tensor | None:
        """:meth:`action_rows` without a gradient, for :meth:`logits`' ``table``; None without them."""
        if not self.has_fields:
            return None
        with torch.no_grad():
            return self.action_rows()

    def acting_first_layer(self) -> torch.Tensor | None:
        """The first layer's observation weights transposed, (L, H), for :meth:`features`'
        ``by_input`` while the weights stay fixed, without a gradient; None without a hidden layer.
        Make it again after the weights change (the fused optimiser bumps no version counter)."""
        first = self.trunk[0] if self.hidden else None
        if not isinstance(first, nn.Linear):
            return None
        with torch.no_grad():
            return first.weight[:, : self.inv_scale.shape[0]].t().contiguous()

    def action_rows(self) -> torch.Tensor:
        """``(A, H)``: every action's row, its own plus its kind's, card's and place's."""
        f = self.fields
        kind, card, place = (
            rows_at(self.kind_rows, f[:, 0]),
            rows_at(self.card_rows, f[:, 1]),
            rows_at(self.place_rows, f[:, 2]),
        )
        return self.pi.weight + kind + card + place

    def value(self, h: torch.Tensor) -> torch.Tensor:
        return self.v(h).squeeze(-1)


def rows_at(source: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``source[idx]`` for a 2-d ``source``: the same values and gradients, bit for bit."""
    # index_select copies whole rows, where advanced indexing is several times slower on the CPU
    return torch.index_select(source, 0, idx.reshape(-1)).view(*idx.shape, source.shape[1])


def move_fields(num_actions: int, table_fields: np.ndarray) -> np.ndarray:
    """``(A, 3)`` kind, card and place of every action, each shifted to start at 0."""
    out = np.asarray(table_fields, np.int64).reshape(num_actions, 3)
    return out - out.min(0)


def action_fields(rules: Rules, encoding: str = "table") -> np.ndarray:
    """The kind, card and place of every action of ``rules``' table in ``encoding`` (-1: none)."""
    table, _ = encoding_tables(rules, encoding)
    return np.array([(int(m.kind), m.card, m.place) for m in table.moves], np.int64)


def build_net(
    rules: Rules,
    hidden: Sequence[int],
    facts: bool = False,
    version: int | None = None,
    move_net: Sequence[int] = (),
    encoding: str = "table",
) -> PolicyNet:
    """A fresh network for ``rules``' table; with ``facts``, the facts block of ``version``
    (nets/facts.py, the newest by default); ``move_net``: the move MLP's hidden sizes;
    ``encoding``: ``"table"`` (the env's own layout) or ``"any_table"`` (the 8-seat layout of
    :mod:`shanghai_env.any_table`, for every table size); ValueError for another."""
    from shanghai_env.agents.learned.nets.facts import FACTS_SIZE, FACTS_VERSION

    choice_arg("encoding", encoding, ENCODINGS)
    version = FACTS_VERSION if version is None else int(version)
    table, encoder = encoding_tables(rules, encoding)
    extra = FACTS_SIZE if facts else 0
    at = encoder.slices["upcard_offered"] if facts and version >= 2 else None
    high = np.asarray(encoder.high, np.float32)
    net = PolicyNet(high, table.size, hidden, action_fields(rules, encoding), extra, at, move_net)
    net.facts_version = version if facts else 0
    net.encoding = encoding
    return net


def to_any_table(net: PolicyNet, rules: Rules) -> PolicyNet:
    """The native network ``net`` of ``rules``' table as an ``any_table`` network that scores every
    decision of that table as ``net`` does; what the native layout lacks (empty seats, the player
    count, absent seats' targets) starts at zero weight. TypeError unless ``net`` is a
    ``PolicyNet`` and ``rules`` a ``Rules``; ValueError unless ``net`` is native with hidden layers."""
    if not isinstance(net, PolicyNet):
        raise TypeError(f"net must be a PolicyNet, got {type(net).__name__}")
    maps = AnyTable(rules)  # TypeError unless rules is a Rules
    first = net.trunk[0] if net.hidden else None
    inputs = first.in_features if isinstance(first, nn.Linear) else -1
    native = ("table", True, maps.native_num_actions, maps.native_obs_size + net.extra_size)
    if (net.encoding, net.has_fields, net.num_actions, inputs) != native:
        raise ValueError(
            f"to_any_table converts a native network (encoding 'table', hidden layers) of rules' table "
            f"({rules.num_players} players: {maps.native_num_actions} moves, observations of "
            f"{maps.native_obs_size}); got encoding {net.encoding!r}, hidden {net.hidden}, "
            f"{net.num_actions} moves, {inputs - net.extra_size} observation inputs"
        )
    facts = bool(net.extra_size)
    out = build_net(rules, net.hidden, facts, net.facts_version or None, net.move_net, "any_table")
    src = {name: t.detach().cpu() for name, t in net.state_dict().items()}
    mapped = ("trunk.0.weight", "pi.weight", "pi.bias", "kind_rows", "card_rows", "place_rows")
    state = {name: t for name, t in out.state_dict().items() if name in ("inv_scale", "fields")}
    for name, t in out.state_dict().items():  # the rest as they are: trunk, value head, move MLP
        if name not in state:
            state[name] = torch.zeros_like(t) if name in (*mapped, "move_weights") else src[name].clone()
    # the first layer: each observation entry where the 8-seat layout holds it, weighted so that
    # weight * inv_scale (what multiplies the raw entry) is unchanged; the facts after them as they are
    at = np.flatnonzero(maps.obs_index < maps.native_obs_size)
    entry, at_t = torch.from_numpy(maps.obs_index[at]), torch.from_numpy(at)
    ratio = src["inv_scale"][entry] / out.inv_scale[at_t]
    state["trunk.0.weight"][:, at_t] = src["trunk.0.weight"][:, entry] * ratio
    state["trunk.0.weight"][:, maps.obs_size :] = src["trunk.0.weight"][:, maps.native_obs_size :]
    to_any = torch.tensor(maps.to_any)  # a copy: the maps are read-only
    state["pi.weight"][to_any] = src["pi.weight"]
    state["pi.bias"][to_any] = src["pi.bias"]
    # the kind, card and place rows by the value each field has for the same move in both layouts
    # (place: where a card goes in a meld, 0..55, in both; matched through the moves, not assumed)
    for col, name in enumerate(("kind_rows", "card_rows", "place_rows")):
        same_move = np.stack([src["fields"][:, col].numpy(), out.fields[to_any, col].numpy()], 1)
        pairs = np.unique(same_move, axis=0)
        if len(np.unique(pairs[:, 0])) != len(pairs) or len(np.unique(pairs[:, 1])) != len(pairs):
            raise RuntimeError(f"to_any_table: the {name} fields of the two layouts do not match one to one")
        theirs, mine = torch.from_numpy(pairs[:, 0]), torch.from_numpy(pairs[:, 1])
        state[name][mine] = src[name][theirs]
        if name == "kind_rows" and facts:  # a weight per move kind
            state["move_weights"][mine] = src["move_weights"][theirs]
    out.load_state_dict(state)
    out.train(net.training)
    return out.to(net.pi.weight.device)
