"""Growing a trained network wider without changing what it computes (Net2Net's wider step).

:func:`grow_into` copies a :class:`~.policy.PolicyNet` into a network of the same kind whose
hidden layers (trunk and move MLP) are as many and each at least as wide. The new units keep the
wide network's fresh weights into them; every weight that reads a new unit's output starts at zero,
so the grown network scores every move and values every state as the small one did, and training
from there can use the room (``shanghai-train --init SMALL.pt --net-arch 512,512``).
"""

from __future__ import annotations

import torch
from torch import nn

from shanghai_env.agents.learned.nets.policy import PolicyNet


def _linears(seq: nn.Sequential | None) -> list[nn.Linear]:
    return [m for m in seq if isinstance(m, nn.Linear)] if seq is not None else []


def grow_check(small: PolicyNet, wide: PolicyNet) -> list[str]:
    """What keeps ``small`` from growing into ``wide``, in words (empty: it can)."""
    same = [
        ("encoding", small.encoding, wide.encoding),
        ("moves", small.num_actions, wide.num_actions),
        ("observation inputs", small.inv_scale.shape[0], wide.inv_scale.shape[0]),
        ("facts inputs", small.extra_size, wide.extra_size),
        ("facts version", small.facts_version, wide.facts_version),
        ("move fields", small.has_fields, wide.has_fields),
        ("trunk depth", len(small.hidden), len(wide.hidden)),
        ("move MLP depth", len(small.move_net), len(wide.move_net)),
    ]
    out = [f"{name} {a!r} there, {b!r} here" for name, a, b in same if a != b]
    layers = (("--net-arch", small.hidden, wide.hidden), ("--move-net", small.move_net, wide.move_net))
    for name, a, b in layers:
        if len(a) == len(b) and any(x > y for x, y in zip(a, b)):
            out.append(f"{name} {a!r} there is wider than {b!r} here in some layer")
    if not out and small.has_fields and not torch.equal(small.fields, wide.fields):
        out.append("the moves' kind, card and place fields differ")
    if not out and not torch.equal(small.inv_scale, wide.inv_scale):
        out.append("the observation's scale differs")
    return out


@torch.no_grad()
def grow_into(small: PolicyNet, wide: PolicyNet) -> None:
    """Copy ``small`` into ``wide`` (in place) so that both compute the same scores and values;
    TypeError unless both are PolicyNets, ValueError (naming each difference) unless ``wide`` has
    the same inputs, moves and depths, each hidden layer at least as wide (:func:`grow_check`)."""
    for name, net in (("small", small), ("wide", wide)):
        if not isinstance(net, PolicyNet):
            raise TypeError(f"{name} must be a PolicyNet, got {type(net).__name__}")
    if small.pi.weight.device != wide.pi.weight.device:
        raise ValueError(f"small is on {small.pi.weight.device}, wide on {wide.pi.weight.device}: move one")
    problems = grow_check(small, wide)
    if problems:
        raise ValueError(f"cannot grow the network into this one: {'; '.join(problems)}")

    def copy_linear(old: nn.Linear, new: nn.Linear, blocks: list[tuple[int, int, int]]) -> None:
        """``blocks``: (start in old inputs, start in new inputs, width in old) of each input block;
        the new inputs of a block (past the old width) are read with zero weight by the old units."""
        h_old = old.out_features
        for o, n, w in blocks:
            new.weight[:h_old, n : n + w] = old.weight[:, o : o + w]
        new.bias[:h_old] = old.bias
        kept = torch.zeros(new.in_features, dtype=torch.bool, device=new.weight.device)
        for _, n, w in blocks:
            kept[n : n + w] = True
        new.weight[:h_old, ~kept] = 0.0  # the old units do not read new inputs

    trunk_old, trunk_new = _linears(small.trunk), _linears(wide.trunk)
    prev = small.inv_scale.shape[0] + small.extra_size  # the trunk's inputs
    for old, new in zip(trunk_old, trunk_new):
        copy_linear(old, new, [(0, 0, prev)])
        prev = old.out_features
    h_old, h_new = small.pi.in_features, wide.pi.in_features
    # the heads read the old features only
    for name in ("pi", "v"):
        old_head, new_head = getattr(small, name), getattr(wide, name)
        new_head.weight.zero_()
        new_head.weight[:, :h_old] = old_head.weight
        new_head.bias.copy_(old_head.bias)
    if small.has_fields:
        for name in ("kind_rows", "card_rows", "place_rows"):
            rows = getattr(wide, name)
            rows.zero_()
            rows[:, :h_old] = getattr(small, name)
        if small.extra_size:
            wide.move_weights.copy_(small.move_weights)
    mlp_old, mlp_new = _linears(small.move_mlp), _linears(wide.move_mlp)
    if mlp_old:
        # the first layer reads (features, the move's row, its two facts): three blocks
        blocks = [(0, 0, h_old), (h_old, h_new, h_old), (2 * h_old, 2 * h_new, 2)]
        copy_linear(mlp_old[0], mlp_new[0], blocks)
        for old, new in zip(mlp_old[1:], mlp_new[1:]):  # the last one too: the score
            copy_linear(old, new, [(0, 0, old.in_features)])
