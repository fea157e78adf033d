"""Growing a network wider (``nets/grow.py``, ``shanghai-train --init SMALL.pt --net-arch WIDER``).

The shipped ``scratch`` (any_table, the facts, a move MLP) grown into wider trunks and move MLPs
scores the legal moves of 120 decisions of seeded 3- and 5-player planner games as it did, and
values their states as it did, on both of the trunk's input paths; the small network is left as it
was; the grown one's new weights train (a gradient reaches them). Narrower or shallower layers and
other inputs are refused, naming what differs; a dmc run started from a small run's player with a
wider ``--net-arch`` and ``--move-net`` starts from the same scores and trains on.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_trainer import TINY, tiny  # noqa: E402

from shanghai_env.agents.learned.nets.facts import view_facts  # noqa: E402
from shanghai_env.agents.learned.nets.grow import grow_check, grow_into  # noqa: E402
from shanghai_env.agents.learned.nets.policy import SparseObs, build_net, padded  # noqa: E402
from shanghai_env.agents.learned.players.policy import load_policy  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.registry import make_agent, shipped_models  # noqa: E402
from shanghai_env.any_table import encoding_tables  # noqa: E402
from shanghai_env.decision import Decision, decision_for  # noqa: E402
from shanghai_env.engine import Game  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402

SCRATCH = shipped_models()["scratch"]


def decisions(rules: Rules, count: int, seed: int) -> list[Decision]:
    """``count`` decisions with two legal moves or more of seeded planner games, any_table layout."""
    players = rules.num_players
    table, encoder = encoding_tables(rules, "any_table")
    out: list[Decision] = []
    game_seed = seed
    while len(out) < count:
        game = Game(rules)
        game.reset(game_seed)
        bots = [make_agent("planner", seed=game_seed + s) for s in range(players)]
        while not game.game_over and len(out) < count:
            d = decision_for(game, game.to_act, table, encoder)
            if len(d.legal_actions) > 1:
                out.append(d)
            game.apply(d.table.moves[bots[game.to_act].act(d)])
        game_seed += 1
    return out


def outputs(net, ds: list[Decision], sparse: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """The legal moves' scores ``(B, K)`` (``-inf`` elsewhere) and the values ``(B,)`` of the
    decisions, with a gradient."""
    obs = np.stack([d.observation for d in ds])
    idx, valid = padded([d.legal_actions for d in ds])
    facts = [view_facts(d.view, d.rules.same_suit_run_gap, net.facts_version) for d in ds]
    extra = torch.from_numpy(np.stack(facts))
    t_obs = torch.from_numpy(obs.copy())
    h = net.features(SparseObs.of(obs) if sparse else t_obs, extra)
    logits = net.logits(h, torch.from_numpy(idx), torch.from_numpy(valid), extra, t_obs)
    return logits, net.value(h)


@pytest.fixture(scope="module")
def sample() -> list[Decision]:
    return decisions(Rules(num_players=3), 80, 11) + decisions(Rules(num_players=5), 40, 12)


def grown(small, hidden, move_net, seed: int = 0):
    torch.manual_seed(seed)
    wide = build_net(Rules(num_players=3), hidden, True, small.facts_version, move_net, "any_table")
    grow_into(small, wide)
    return wide


@pytest.mark.parametrize(
    "hidden, move_net",
    [((128, 128), (128,)), ((256, 192), (128,)), ((128, 128), (200,)), ((512, 512), (256,))],
)
def test_a_grown_network_scores_and_values_as_the_small_one(sample, hidden, move_net):
    small = load_policy(SCRATCH)[0]
    before = {k: v.clone() for k, v in small.state_dict().items()}
    wide = grown(small, hidden, move_net)
    assert wide.hidden == hidden and wide.move_net == move_net
    for sparse in (False, True):
        with torch.no_grad():
            small_scores, small_values = outputs(small, sample, sparse)
            wide_scores, wide_values = outputs(wide, sample, sparse)
        legal = torch.isfinite(small_scores)
        assert torch.equal(legal, torch.isfinite(wide_scores))
        assert torch.allclose(small_scores[legal], wide_scores[legal], atol=1e-4, rtol=1e-5)
        assert torch.allclose(small_values, wide_values, atol=1e-4, rtol=1e-5)
        # the same move chosen at every decision
        assert torch.equal(small_scores.argmax(1), wide_scores.argmax(1))
    assert all(torch.equal(before[k], v) for k, v in small.state_dict().items())


def test_the_new_units_are_trained(sample):
    small = load_policy(SCRATCH)[0]
    wide = grown(small, (256, 256), (192,))
    logits, values = outputs(wide, sample)
    loss = logits.masked_fill(~torch.isfinite(logits), 0).pow(2).sum() + values.pow(2).sum()
    loss.backward()
    last = [m for m in wide.trunk if isinstance(m, torch.nn.Linear)][-1]
    mlp_last = [m for m in wide.move_mlp if isinstance(m, torch.nn.Linear)][-1]
    # what reads the new units gets a gradient at once, so the room is used from the first update
    assert last.weight.grad[128:].abs().sum() == 0  # nothing reads them yet: no gradient into them
    assert wide.card_rows.grad[:, 128:].abs().sum() > 0
    assert wide.v.weight.grad[:, 128:].abs().sum() > 0
    assert mlp_last.weight.grad[:, 128:].abs().sum() > 0


@pytest.mark.parametrize(
    "hidden, move_net, facts, why",
    [
        ((64, 128), (128,), True, r"--net-arch \(128, 128\) there is wider than \(64, 128\)"),
        ((128, 128, 128), (128,), True, "trunk depth 2 there, 3 here"),
        ((128, 128), (64,), True, r"--move-net \(128,\) there is wider than \(64,\)"),
        ((128, 128), (), True, "move MLP depth 1 there, 0 here"),
        ((256, 256), (128,), False, "facts inputs 107 there, 0 here"),
    ],
)
def test_what_cannot_grow_is_refused_naming_it(hidden, move_net, facts, why):
    small = load_policy(SCRATCH)[0]
    wide = build_net(Rules(num_players=3), hidden, facts, None, move_net, "any_table")
    before = {k: v.clone() for k, v in wide.state_dict().items()}
    assert grow_check(small, wide)
    with pytest.raises(ValueError, match=why):
        grow_into(small, wide)
    assert all(torch.equal(before[k], v) for k, v in wide.state_dict().items())
    with pytest.raises(TypeError, match="small must be a PolicyNet"):
        grow_into("scratch", wide)  # type: ignore[arg-type]


def test_networks_on_two_devices_are_refused():
    small = load_policy(SCRATCH)[0]
    elsewhere = build_net(Rules(num_players=3), (256, 256), True, None, (128,), "any_table").to("meta")
    with pytest.raises(ValueError, match="small is on cpu, wide on meta: move one"):
        grow_into(small, elsewhere)


def test_a_dmc_run_grows_a_saved_player_and_trains_on(tmp_path):
    options = {**TINY["dmc"], "net_arch": (16,), "move_net": (8,)}
    first = str(tmp_path / "first")
    train(tiny("dmc", first, 64, facts=True, encoding="any_table", players=3, method_options=options))
    path = os.path.join(first, "model.pt")
    small = load_policy(path)[0]
    wider = {**options, "net_arch": (32,), "move_net": (12,)}
    second = tiny("dmc", str(tmp_path / "second"), 64, facts=True, encoding="any_table", players=3,
                  init=path, method_options=wider)  # fmt: skip
    method = method_class("dmc")()
    method.setup(second, torch.device("cpu"))
    assert method.net.hidden == (32,) and method.net.move_net == (12,)
    contract1 = decisions(Rules(num_players=3, contracts=(1,)), 40, 13)
    with torch.no_grad():
        a, b = outputs(small, contract1)[0], outputs(method.net, contract1)[0]
    legal = torch.isfinite(a)
    assert torch.allclose(a[legal], b[legal], atol=1e-5)
    train(second)
    assert load_policy(os.path.join(str(tmp_path / "second"), "model.pt"))[0].hidden == (32,)
    narrower = tiny("dmc", str(tmp_path / "third"), 64, facts=True, encoding="any_table", players=3,
                    init=path, method_options={**options, "net_arch": (8,)})  # fmt: skip
    with pytest.raises(ValueError, match="never fewer or narrower"):
        method_class("dmc")().setup(narrower, torch.device("cpu"))
