"""PolicyNet's fast paths give the same logits, features and gradients as the plain dense, padded
paths: the acting table bit for bit; the legal moves' dot products alone (no padding) and the
observations read by their nonzero entries (SparseObs) up to float32 rounding, since their sums
run in another order; and a short training run on them ends at the same weights, within that
rounding."""

import numpy as np
import pytest
import torch

from shanghai_env.agents.learned.nets.policy import SparseObs, build_net, padded, padded_rows
from shanghai_env.agents.learned.train.methods import method_class
from shanghai_env.agents.learned.train.run import RunConfig
from shanghai_env.rules import Rules


@pytest.mark.parametrize("facts,move_net", [(False, ()), (True, (32,))])
def test_legal_dots_and_acting_table_change_nothing(facts: bool, move_net: tuple[int, ...]) -> None:
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
    table, lengths = net.acting_table(), valid.sum(1)
    for kwargs in ({}, {"lengths": lengths}, {"table": table}, {"table": table, "lengths": lengths}):
        net.zero_grad()
        h = net.features(obs, extra)
        out = net.logits(h, torch.from_numpy(idx), torch.from_numpy(valid), extra, obs, **kwargs)
        torch.log_softmax(out, 1).masked_fill(~torch.from_numpy(valid), 0).sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    # the same function, within float32 rounding: the legal moves' dot products alone sum in
    # another order than the padded product. Gradients are compared at the scale of the largest
    # (a sum of terms that cancel, such as the gradient of a bias every logit of a row shares,
    # is rounding noise around 0 in both)
    close = {"rtol": 1e-5, "atol": 1e-6}
    out, grads = results[1]
    torch.testing.assert_close(out, results[0][0], rtol=1e-5, atol=1e-5)
    assert len(grads) == len(results[0][1])
    scale = max(float(a.abs().max()) for a in results[0][1])
    for a, g in zip(results[0][1], grads):
        torch.testing.assert_close(g, a, rtol=1e-5, atol=1e-6 * scale)
    torch.testing.assert_close(results[2][0], results[0][0], **close)  # the table: no gradient
    # acting: the table's legal rows alone, within rounding (the padded gather with a move MLP)
    torch.testing.assert_close(results[3][0], results[0][0], rtol=1e-5, atol=1e-5)


def test_padded_rows_match_padded() -> None:
    lengths = np.array([1] * 40 + [2] * 3 + [5] * 30 + [45] * 2)
    legal = [list(range(3, 3 + n)) for n in lengths]
    idx, _ = padded(legal)
    rows = np.array([5, 44, 73, 0])
    got, want = padded_rows(idx, lengths, rows), padded([legal[j] for j in rows])
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def _observations(net, rng: np.random.Generator, b: int) -> np.ndarray:
    """int8 observations mostly zero, as the env's are (a few percent of the entries set, some of
    them large), with an all-zero row."""
    obs = rng.integers(1, 60, (b, net.inv_scale.shape[0])).astype(np.int8)
    obs[rng.random(obs.shape) > 0.03] = 0
    obs[3] = 0
    return obs


def test_sparse_obs_takes_the_rows_it_would_find() -> None:
    rng = np.random.default_rng(1)
    obs = rng.integers(-3, 4, (50, 37)).astype(np.int8)
    obs[rng.random(obs.shape) > 0.2] = 0
    whole = SparseObs.of(obs)
    assert whole.counts.sum() == np.count_nonzero(obs) and len(whole) == 50
    rows = np.array([7, 0, 49, 7, 3])
    got, want = whole.take(rows), SparseObs.of(obs[rows])
    for name in ("cols", "values", "counts", "starts"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    dense = np.zeros((len(rows), 37), np.float32)
    dense[np.repeat(np.arange(len(rows)), got.counts), got.cols] = got.values
    assert np.array_equal(dense, obs[rows].astype(np.float32))


@pytest.mark.parametrize("facts,move_net", [(False, ()), (True, (32,))])
def test_sparse_observations_give_the_dense_features_and_gradients(
    facts: bool, move_net: tuple[int, ...]
) -> None:
    torch.manual_seed(0)
    net = build_net(Rules(num_players=4), (32, 16), facts, move_net=move_net)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    rng = np.random.default_rng(0)
    obs = _observations(net, rng, 200)
    extra = torch.rand(200, net.extra_size) if facts else None
    results = []
    for x in (torch.from_numpy(obs), SparseObs.of(obs).take(np.arange(200))):
        net.zero_grad()
        h = net.features(x, extra)
        (h * torch.linspace(-1, 1, h.shape[1])).sum().backward()
        results.append((h.detach(), [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    (dense, dense_grads), (sparse, sparse_grads) = results
    # within float32 rounding, at the scale of the largest value (as above)
    torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-6 * float(dense.abs().max()))
    assert len(sparse_grads) == len(dense_grads)
    scale = max(float(a.abs().max()) for a in dense_grads)
    for a, g in zip(dense_grads, sparse_grads):
        torch.testing.assert_close(g, a, rtol=1e-5, atol=1e-6 * scale)


def test_the_acting_first_layer_gives_the_same_features() -> None:
    torch.manual_seed(0)
    net = build_net(Rules(num_players=4), (16,))
    obs = _observations(net, np.random.default_rng(2), 20)
    sparse = SparseObs.of(obs)
    with torch.no_grad():
        assert torch.equal(net.features(sparse, None, net.acting_first_layer()), net.features(sparse))


@pytest.mark.parametrize("facts", [False, True])
def test_a_small_batchs_rows_with_lengths_score_as_the_einsum(facts: bool) -> None:
    # dmc's update scores the one move played of each decision (a small batch, lengths given):
    # a product per pair instead of the einsum, the same logits and gradients within rounding
    torch.manual_seed(0)
    net = build_net(Rules(num_players=4), (32,), facts)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    rng = np.random.default_rng(3)
    b = 64
    idx = torch.from_numpy(rng.integers(0, net.num_actions, (b, 1)))
    valid = torch.ones(b, 1, dtype=torch.bool)
    obs = torch.from_numpy(_observations(net, rng, b))
    extra = torch.rand(b, net.extra_size) if facts else None
    results = []
    for kwargs in ({}, {"lengths": np.ones(b, np.int64)}):
        net.zero_grad()
        q = net.logits(net.features(obs, extra), idx, valid, extra, obs, **kwargs)
        (q * torch.linspace(-1, 1, b)[:, None]).sum().backward()
        results.append((q.detach(), [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    # at the scale of the largest (the sums cancel: a score near 0 from terms in the hundreds)
    q = results[0][0]
    torch.testing.assert_close(results[1][0], q, rtol=1e-5, atol=1e-6 * float(q.abs().max()))
    scale = max(float(a.abs().max()) for a in results[0][1])
    for a, g in zip(results[0][1], results[1][1]):
        torch.testing.assert_close(g, a, rtol=1e-5, atol=1e-6 * scale)


# dmc: longer rollouts and more exploration, so that deals end (and it learns) within its updates
RUNS = {
    "ppo": ({"n_steps": 64}, 3),
    "dmc": ({"n_steps": 128, "epsilon": 0.3}, 4),
}


@pytest.mark.parametrize("method,facts", [("ppo", False), ("dmc", False), ("dmc", True)])
def test_a_sparse_run_ends_at_the_dense_runs_weights(tmp_path, method: str, facts: bool) -> None:
    # the learner's fast paths (sparse first layer, the legal moves' dot products) change only
    # the order of float32 sums: two updates from the same seed end within that rounding
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ends = []
        for sparse in (False, True):
            config = RunConfig(
                method=method,
                contracts=(1,),
                timesteps=10**6,
                seed=5,
                out=str(tmp_path / f"run{sparse}"),
                num_envs=8,
                eval_every=0,
                eval_games=0,
                progress=False,
                facts=facts,
                method_options={"batch_size": 128, "net_arch": (32, 32), **RUNS[method][0]},
            )
            m = method_class(method)()
            m.setup(config, torch.device("cpu"))
            assert m.sparse_inputs
            m.sparse_inputs = sparse
            trained = 0.0
            for _ in range(RUNS[method][1]):
                trained += m.step().get("trained_decisions", 1.0)
            assert trained > 0  # dmc: some deals ended, so it learned
            ends.append({k: v.clone() for k, v in m.net.state_dict().items()})
        for name, value in ends[0].items():
            torch.testing.assert_close(ends[1][name], value, rtol=1e-4, atol=1e-5, msg=name)
    finally:
        torch.set_num_threads(threads)


def test_the_methods_fused_adam_steps_as_plain_adam(tmp_path) -> None:
    # the trainer's optimiser is fused Adam (one pass a parameter): the same steps as the
    # for-loop Adam it replaced, within float32 rounding
    config = RunConfig(method="ppo", contracts=(1,), out=str(tmp_path), num_envs=2, eval_every=0)
    m = method_class("ppo")()
    m.setup(config, torch.device("cpu"))
    assert m.optim.param_groups[0]["fused"]
    plain_net = build_net(Rules(num_players=4, contracts=(1,)), m.opt.net_arch)
    plain_net.load_state_dict(m.net.state_dict())
    plain = torch.optim.Adam(plain_net.parameters(), lr=m.opt.lr, eps=1e-5)
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        for a, b in zip(m.net.parameters(), plain_net.parameters()):
            a.grad = torch.randn(a.shape, generator=gen)
            b.grad = a.grad.clone()
        m.optim.step()
        plain.step()
    for (name, a), b in zip(m.net.named_parameters(), plain_net.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7, msg=name)
