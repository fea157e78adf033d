"""``to_any_table``: a native network as an ``any_table`` one that plays the same moves.

The shipped ``scratch_4p`` (dmc, the facts, a move network) and tiny native networks without facts
(trained briefly, then every weight stirred so that each block of the network weighs in) are
converted; on 200 decisions of seeded full games played by planner bots the converted network's
scores over the legal moves are the native ones and the players answer the same moves. Weights
that have no native counterpart start at zero, the native network is left as it was, and bad
arguments are refused. The converted player plays whole games at 3, 6 and 8 players against
greedy bots; ``shanghai-train --encoding any_table --init`` a native player of the run's contracts
starts a run at 5 players from the converted weights; a native player of other contracts is still
refused in one line.
"""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from shanghai_env.actions import action_table  # noqa: E402
from shanghai_env.agents.bots.greedy import GreedyBot  # noqa: E402
from shanghai_env.agents.learned.nets.facts import view_facts  # noqa: E402
from shanghai_env.agents.learned.nets.policy import build_net, padded, to_any_table  # noqa: E402
from shanghai_env.agents.learned.players.policy import PolicyAgent, load_policy, save_policy  # noqa: E402
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.methods import method_class  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import make_agent, shipped_models  # noqa: E402
from shanghai_env.any_table import AnyTable  # noqa: E402
from shanghai_env.decision import Decision, decision_for, play_turn  # noqa: E402
from shanghai_env.engine import Game  # noqa: E402
from shanghai_env.observation import ObservationEncoder  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402

CPU = torch.device("cpu")
SCRATCH = shipped_models()["scratch_4p"]
FULL = tuple(range(1, 11))


def planner_decisions(rules: Rules, count: int, seed: int) -> list[Decision]:
    """``count`` decisions with a choice (two legal moves or more) of seeded full games of
    ``rules`` played by planner bots, with their observations in the native layout."""
    table, encoder = action_table(rules), ObservationEncoder(rules)
    out: list[Decision] = []
    game_seed = seed
    while len(out) < count:
        game = Game(rules)
        game.reset(game_seed)
        bots = [make_agent("planner", seed=game_seed + s) for s in range(rules.num_players)]
        while not game.game_over and len(out) < count:
            seat = game.to_act
            d = decision_for(game, seat, table, encoder)
            if len(d.legal_actions) > 1:
                out.append(d)
            game.apply(d.table.moves[bots[seat].act(d)])
        game_seed += 1
    return out


def scores(net, decisions: list[Decision], maps: AnyTable | None = None) -> torch.Tensor:
    """The network's ``(B, K)`` scores of the decisions' legal moves (in the native order), read
    in the 8-seat layout through ``maps`` when given."""
    obs = np.stack([d.observation for d in decisions])
    idx, valid = padded([d.legal_actions for d in decisions])
    if maps is not None:
        obs, idx = maps.obs_to_any(obs), maps.to_any[idx]
    extra = None
    if net.extra_size:
        facts = [view_facts(d.view, d.rules.same_suit_run_gap, net.facts_version) for d in decisions]
        extra = torch.from_numpy(np.stack(facts))
    t_obs, t_idx, t_valid = torch.from_numpy(obs.copy()), torch.from_numpy(idx), torch.from_numpy(valid)
    with torch.no_grad():
        return net.logits(net.features(t_obs, extra), t_idx, t_valid, extra, t_obs)


def assert_same_player(native_path: str, converted_path: str, decisions: list[Decision]) -> None:
    native, _, _ = load_policy(native_path)
    converted, rules, _ = load_policy(converted_path)
    assert converted.encoding == "any_table"
    a, b = scores(native, decisions), scores(converted, decisions, AnyTable(rules))
    legal = torch.isfinite(a)
    assert torch.equal(legal, torch.isfinite(b))
    assert torch.allclose(a[legal], b[legal], rtol=0, atol=1e-5)
    assert torch.equal(a.argmax(1), b.argmax(1))
    moves = PolicyAgent(native_path).act_batch(decisions)
    assert PolicyAgent(converted_path).act_batch(decisions) == moves
    assert all(m in d.legal_actions for m, d in zip(moves, decisions))


@pytest.fixture(scope="module")
def scratch_any(tmp_path_factory: pytest.TempPathFactory) -> str:
    net, rules, meta = load_policy(SCRATCH)
    path = str(tmp_path_factory.mktemp("convert") / "scratch_any.pt")
    save_policy(path, to_any_table(net, rules), rules, meta)
    return path


def test_the_converted_scratch_player_scores_and_plays_as_the_native_one(scratch_any):
    rules = load_policy(SCRATCH)[1]
    assert rules.num_players == 4 and len(rules.contracts) == 10
    assert_same_player(SCRATCH, scratch_any, planner_decisions(rules, 200, seed=7))


def stirred_native(tmp_path, players: int, contracts: tuple[int, ...], move_net: tuple[int, ...]) -> str:
    """A tiny native ppo network without facts, trained 64 decisions, its weights then stirred
    (the field rows start near zero and the move MLP's output at zero: a conversion that put
    them in the wrong place would change no score)."""
    out = str(tmp_path / f"native{players}")
    options = {"n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,), "move_net": move_net}
    config = RunConfig(
        method="ppo", players=players, contracts=contracts, timesteps=64, seed=3, out=out, num_envs=4,
        eval_every=0, eval_games=0, progress=False, method_options=options,
    )  # fmt: skip
    train(config)
    net, rules, meta = load_policy(os.path.join(out, "model.pt"))
    gen = torch.Generator().manual_seed(players)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=gen))
    path = str(tmp_path / f"stirred{players}.pt")
    save_policy(path, net, rules, meta)
    return path


@pytest.mark.parametrize(("players", "contracts", "move_net"), [(4, FULL, (8,)), (6, (1, 2), ())])
def test_a_tiny_native_network_without_facts_converts_exactly(tmp_path, players, contracts, move_net):
    native_path = stirred_native(tmp_path, players, contracts, move_net)
    net, rules, _ = load_policy(native_path)
    assert not net.extra_size
    before = {k: v.clone() for k, v in net.state_dict().items()}
    converted = to_any_table(net, rules)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())  # left as it was
    path = str(tmp_path / "converted.pt")
    save_policy(path, converted, rules)
    assert_same_player(native_path, path, planner_decisions(rules, 200, seed=3))


def test_what_has_no_native_counterpart_starts_at_zero(tmp_path):
    rules = Rules(num_players=5, contracts=(1, 2))
    net = build_net(rules, (16,), move_net=(8,))
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)  # no weight of the native network is zero
    converted = to_any_table(net, rules)
    maps = AnyTable(rules)
    absent_ids = torch.from_numpy(np.flatnonzero(maps.to_native < 0))
    assert len(absent_ids) and not converted.pi.weight[absent_ids].any()
    assert not converted.pi.bias[absent_ids].any()
    assert converted.pi.weight[torch.tensor(maps.to_any)].all()
    absent_inputs = torch.from_numpy(np.flatnonzero(maps.obs_index >= maps.native_obs_size))
    assert len(absent_inputs) == len(maps.obs_index) - maps.native_obs_size  # seats 5..7, the count
    assert not converted.trunk[0].weight[:, absent_inputs].any()
    present = torch.from_numpy(np.flatnonzero(maps.obs_index < maps.native_obs_size))
    assert converted.trunk[0].weight[:, present].all()
    for name in ("kind_rows", "card_rows", "place_rows"):  # every field value occurs in both layouts
        assert torch.equal(getattr(converted, name), getattr(net, name))


def test_the_first_layer_keeps_what_multiplies_each_raw_entry_where_the_scales_differ(tmp_path):
    """Both layouts divide an entry by the same largest value today; a native network whose
    scales differ (its ``inv_scale`` changed) still scores the same once converted."""
    native_path = stirred_native(tmp_path, 4, (1,), (8,))
    net, rules, _ = load_policy(native_path)
    gen = torch.Generator().manual_seed(1)
    net.inv_scale.mul_(0.5 + 1.5 * torch.rand(net.inv_scale.shape, generator=gen))
    converted = to_any_table(net, rules)
    decisions = planner_decisions(rules, 60, seed=4)
    a, b = scores(net, decisions), scores(converted, decisions, AnyTable(rules))
    legal = torch.isfinite(a)
    assert torch.allclose(a[legal], b[legal], rtol=0, atol=1e-5)


def test_bad_arguments_are_refused(tmp_path):
    rules = Rules(num_players=4, contracts=(1,))
    net = build_net(rules, (8,))
    with pytest.raises(TypeError, match="PolicyNet"):
        to_any_table("model.pt", rules)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Rules"):
        to_any_table(net, {"num_players": 4})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="5 players"):
        to_any_table(net, Rules(num_players=5, contracts=(1,)))  # another table's weights
    with pytest.raises(ValueError, match="encoding 'any_table'"):
        to_any_table(build_net(rules, (8,), encoding="any_table"), rules)


@pytest.mark.parametrize("n", [3, 6, 8])
def test_the_converted_player_plays_whole_games_at_other_sizes(scratch_any, n):
    rules = Rules(num_players=n)
    table, encoder = action_table(rules), ObservationEncoder(rules)
    agents = [PolicyAgent(scratch_any), *(GreedyBot() for _ in range(n - 1))]
    for seat, agent in enumerate(agents):
        agent.reset(seat)
    game = Game(rules)
    game.reset(20 + n)
    mine = 0
    while not game.game_over:
        mine += game.to_act == 0
        play_turn(game, agents[game.to_act], table, encoder)  # an illegal answer raises
    assert mine > 50 and game.deal == len(rules.contracts) - 1


def dmc_argv(out: str, contracts: str) -> list[str]:
    argv = ["dmc", "--encoding", "any_table", "--init", SCRATCH, "--players", "5", "--contracts", contracts]
    argv += ["--facts", "--net-arch", "128,128", "--move-net", "128", "--num-envs", "2", "--n-steps", "4"]
    argv += ["--batch-size", "8", "--timesteps", "8", "--eval-every", "0", "--eval-games", "0"]
    return [*argv, "--seed", "1", "--no-progress", "--out", out]


def test_an_any_table_run_starts_from_the_converted_native_player(tmp_path):
    net, rules, _ = load_policy(SCRATCH)
    expected = to_any_table(net, rules).state_dict()
    config = RunConfig(
        method="dmc", players=5, encoding="any_table", init=SCRATCH, facts=True, num_envs=2,
        out=str(tmp_path / "setup"), progress=False,
        method_options={"net_arch": (128, 128), "move_net": (128,)},
    )  # fmt: skip
    method = method_class("dmc")()
    method.setup(config, CPU)
    assert all(torch.equal(expected[k], v) for k, v in method.net.state_dict().items())
    out = str(tmp_path / "run")
    assert cli.main(dmc_argv(out, ",".join(map(str, FULL)))) == 0
    with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["env_steps"]) for r in rows] == [8]  # its one step, no evaluation
    saved, own, _ = load_policy(os.path.join(out, "model.pt"))
    assert saved.encoding == "any_table" and own.num_players == 5


def test_a_native_player_of_other_contracts_is_refused_in_one_line(tmp_path, capsys):
    out = str(tmp_path / "other")
    with pytest.raises(SystemExit) as exc:
        cli.main(dmc_argv(out, "1"))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--init" in err[-1] and "native player of its own contracts" in err[-1]
    assert "Traceback" not in "\n".join(err)
    assert not os.path.exists(out)
