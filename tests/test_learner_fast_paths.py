"""PolicyNet's fast paths (the acting table, rows grouped by their number of legal moves) give
the same logits and gradients as the plain padded path, bit for bit."""

import numpy as np
import pytest
import torch

from shanghai_env.agents.learned.nets.policy import build_net, length_groups, padded, padded_rows
from shanghai_env.rules import Rules


@pytest.mark.parametrize("facts,move_net", [(False, ()), (True, (32,))])
def test_grouped_rows_and_acting_table_change_nothing(facts: bool, move_net: tuple[int, ...]) -> None:
    # one thread, as the trainer runs: with more, index_put's accumulation order varies run to run
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _check_same(facts, move_net)
    finally:
        torch.set_num_threads(threads)


def _check_same(facts: bool, move_net: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    net = build_net(Rules(num_players=4), (32,), facts, move_net=move_net)
    for p in net.parameters():  # nonzero everywhere, so every part reaches the logits
        torch.nn.init.normal_(p, std=0.3)
    rng = np.random.default_rng(0)
    b = 300
    legal = [
        list(rng.choice(net.num_actions, rng.choice([1, 2, 3, 7, 12, 40]), replace=False)) for _ in range(b)
    ]
    idx, valid = padded(legal)
    obs = torch.from_numpy(rng.integers(0, 3, (b, net.inv_scale.shape[0])).astype(np.int8))
    extra = torch.rand(b, net.extra_size) if facts else None
    results = []
    for kwargs in ({}, {"lengths": valid.sum(1)}, {"table": net.acting_table()}):
        net.zero_grad()
        h = net.features(obs, extra)
        out = net.logits(h, torch.from_numpy(idx), torch.from_numpy(valid), extra, obs, **kwargs)
        torch.log_softmax(out, 1).masked_fill(~torch.from_numpy(valid), 0).sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    # the same function, within float32 rounding: another machine's kernels may sum in another
    # order (on the machine the paths were written on they agree bit for bit)
    close = {"rtol": 1e-5, "atol": 1e-6}
    out, grads = results[1]
    torch.testing.assert_close(out, results[0][0], **close)
    assert len(grads) == len(results[0][1])
    for a, g in zip(results[0][1], grads):
        torch.testing.assert_close(g, a, **close)
    torch.testing.assert_close(results[2][0], results[0][0], **close)  # the table: no gradient


def test_length_groups_cover_every_row_once_and_padded_rows_match_padded() -> None:
    lengths = np.array([1] * 40 + [2] * 3 + [5] * 30 + [45] * 2)
    groups = length_groups(lengths)
    assert sorted(np.concatenate(groups).tolist()) == list(range(len(lengths)))
    assert all(len(g) >= 16 for g in groups)
    legal = [list(range(3, 3 + n)) for n in lengths]
    idx, _ = padded(legal)
    rows = np.array([5, 44, 73, 0])
    got, want = padded_rows(idx, lengths, rows), padded([legal[j] for j in rows])
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
