"""``shanghai-train --encoding any_table`` and its players: trained at one table size, they play 3 to 8.

A tiny ``shanghai-train ppo --encoding any_table`` run at 4 players records its encoding
(config.json, model.json, the saved player's header); its player is accepted at every table size
of its contracts and refused for others, plays whole tournaments at 3, 5 and 8 players against
greedy bots, answers the argmax of its network over the legal moves mapped into the 8-seat layout
(from a native decision and from an 8-seat one alike), plays inside a native run of another size
and starts an any_table run of another size. dmc trains with it too, evaluated in the run. A
native player stays out of an any_table run; a file without an encoding is a native player; a bad
``--encoding`` is one line and exit 2.
"""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import shanghai_env  # noqa: E402
from shanghai_env.actions import action_table  # noqa: E402
from shanghai_env.agents.arena import tournament  # noqa: E402
from shanghai_env.agents.bots.greedy import GreedyBot  # noqa: E402
from shanghai_env.agents.learned.nets.policy import build_net  # noqa: E402
from shanghai_env.agents.learned.players.policy import (  # noqa: E402
    PolicyAgent,
    load_policy,
    load_scorer_module,
    save_policy,
)
from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import check_player, make_agent  # noqa: E402
from shanghai_env.any_table import AnyTable, AnyTableEncoder  # noqa: E402
from shanghai_env.decision import decision_for  # noqa: E402
from shanghai_env.engine import Game  # noqa: E402
from shanghai_env.observation import ObservationEncoder  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402

TINY = {
    "ppo": {"n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)},
    "dmc": {"batch_size": 16, "epochs": 1, "net_arch": (16,)},
}


def tiny(method: str, out: str, **kw) -> RunConfig:
    base = dict(
        method=method,
        contracts=(1,),
        timesteps=64,
        seed=3,
        out=out,
        num_envs=4,
        eval_every=0,
        eval_games=0,
        progress=False,
        method_options=dict(TINY.get(method, {})),
    )
    return RunConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The folder of a tiny ``shanghai-train ppo --encoding any_table --players 4`` run."""
    out = str(tmp_path_factory.mktemp("any_table") / "run")
    argv = ["ppo", "--encoding", "any_table", "--players", "4", "--contracts", "1", "--timesteps", "64"]
    argv += ["--net-arch", "16", "--num-envs", "4", "--n-steps", "8", "--batch-size", "16", "--epochs", "1"]
    argv += ["--eval-every", "0", "--eval-games", "0", "--seed", "3", "--no-progress", "--out", out]
    assert cli.main(argv) == 0
    return out


def test_the_run_records_its_encoding(run):
    with open(os.path.join(run, "config.json"), encoding="utf-8") as f:
        assert json.load(f)["encoding"] == "any_table"
    with open(os.path.join(run, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["config"]["encoding"] == "any_table" and recipe["inputs"]["encoding"] == "any_table"
    path = os.path.join(run, "model.pt")
    assert torch.load(path, weights_only=True)["encoding"] == "any_table"
    net, rules, _ = load_policy(path)
    maps = AnyTable(rules)
    assert net.encoding == "any_table" and rules.num_players == 4
    assert net.num_actions == maps.num_actions != maps.native_num_actions
    assert net.inv_scale.shape[0] == maps.obs_size


@pytest.mark.parametrize("n", [3, 5, 8])
def test_it_plays_whole_tournaments_at_every_table_size(run, n):
    path = os.path.join(run, "model.pt")
    check_player(path, Rules(num_players=n, contracts=(1,)))
    config = tournament.TournamentConfig(
        players=(path, *["greedy"] * (n - 1)), games=2, seed=n, contracts=(1,), duplicate=False
    )
    try:
        results = tournament.run_tournament(config, workers=1)  # an illegal move would raise
    finally:
        tournament.forget_agents(config.players)
    assert len(results) == 2
    for game in results:
        assert len(game.scores) == n and game.moves > 0 and not any(game.capped)


def test_it_is_refused_for_other_contracts(run):
    path = os.path.join(run, "model.pt")
    for contracts in ((4,), (1, 2)):
        with pytest.raises(ValueError, match=r"trained for contracts 1 \(any table size\)"):
            check_player(path, Rules(num_players=5, contracts=contracts))


@pytest.mark.parametrize("n", [3, 8])
def test_its_answers_are_the_argmax_over_the_mapped_legal_moves(run, n):
    path = os.path.join(run, "model.pt")
    agent = make_agent(path)
    net, _, _ = load_policy(path)
    rules = Rules(num_players=n, contracts=(1,))
    maps, encoder, native = AnyTable(rules), AnyTableEncoder(rules), ObservationEncoder(rules)
    game = Game(rules)
    game.reset(11)
    bots = [GreedyBot() for _ in range(n)]
    for b in bots:
        b.reset(0)
    checked = 0
    while not game.game_over and checked < 40:
        seat = game.to_act
        d = decision_for(game, seat, action_table(rules), native)
        if len(d.legal_actions) > 1:
            legal8 = maps.to_any[np.asarray(d.legal_actions)]
            obs8 = torch.from_numpy(encoder.encode(game, seat)[None].copy())
            with torch.no_grad():
                idx = torch.from_numpy(legal8[None])
                scores = net.logits(net.features(obs8), idx, torch.ones_like(idx, dtype=torch.bool))
            expected = int(maps.to_native[legal8[int(scores.argmax())]])
            assert agent.act(d) == expected and expected in d.legal_actions
            # the same decision in the 8-seat layout (an any_table env's): the same move, its 8-seat id
            d8 = decision_for(game, seat, maps.table_any, encoder)
            assert agent.act(d8) == maps.to_any[expected]
            checked += 1
        game.apply(d.table.moves[bots[seat].act(d)])
    assert checked == 40


def test_it_plays_inside_a_native_run_of_another_size(run, tmp_path):
    path = os.path.join(run, "model.pt")
    out = str(tmp_path / "native")
    train(tiny("ppo", out, players=5, opponents=(path,)))  # its seats answer through act_arrays
    _, rules, _ = load_policy(os.path.join(out, "model.pt"))
    assert rules.num_players == 5


def test_an_any_table_run_of_another_size_starts_from_it(run, tmp_path):
    path = os.path.join(run, "model.pt")
    out = str(tmp_path / "six")
    train(tiny("ppo", out, players=6, encoding="any_table", init=path, timesteps=8))
    with pytest.raises(ValueError, match="encoding"):
        train(tiny("ppo", str(tmp_path / "native"), init=path, timesteps=8))


def test_the_research_module_reads_an_any_table_vector_env(run):
    module, info = load_scorer_module(os.path.join(run, "model.pt"))
    assert info.env_options["encoding"] == "any_table"
    venv = shanghai_env.vector_env(3, **{**info.env_options, "num_players": 7})
    obs, _, _ = venv.reset(seed=1)
    with torch.no_grad():
        scores, _, valid = module(obs, venv.legal_actions)
    assert torch.isfinite(scores[valid]).all() and not torch.isfinite(scores[~valid]).any()


def test_dmc_trains_any_table_and_evaluates_in_the_run(tmp_path):
    out = str(tmp_path / "dmc")
    row = train(tiny("dmc", out, players=3, encoding="any_table", eval_games=1, eval_opponents=("random",)))
    assert row["games"] > 0 and np.isfinite(row["random_diff"])
    path = os.path.join(out, "model.pt")
    assert load_policy(path)[0].encoding == "any_table"
    check_player(path, Rules(num_players=7, contracts=(1,)))


def test_a_native_player_stays_out_of_an_any_table_run(tmp_path):
    rules = Rules(num_players=4, contracts=(1,))
    native = str(tmp_path / "native.pt")
    save_policy(native, build_net(rules, (8,)), rules)
    with pytest.raises(ValueError, match="reads the observation of encoding 'table'"):
        train(tiny("ppo", str(tmp_path / "a"), encoding="any_table", opponents=(native,)))
    dagger = {"teacher": native, "net_arch": (16,)}
    with pytest.raises(ValueError, match="reads the observation of encoding 'table'"):
        train(tiny("dagger", str(tmp_path / "b"), encoding="any_table", method_options=dagger))
    assert not os.path.exists(tmp_path / "a") and not os.path.exists(tmp_path / "b")


def test_a_file_without_an_encoding_is_native_and_an_unknown_one_is_refused(tmp_path):
    rules = Rules(num_players=4, contracts=(1,))
    path = str(tmp_path / "p.pt")
    save_policy(path, build_net(rules, (8,)), rules)
    blob = torch.load(path, weights_only=True)
    assert blob["encoding"] == "table"
    del blob["encoding"]  # a player saved before there were encodings
    torch.save(blob, path)
    net, _, _ = load_policy(path)
    assert net.encoding == "table"
    with pytest.raises(ValueError, match="trained for 4 players"):
        check_player(path, Rules(num_players=5, contracts=(1,)))
    torch.save({**blob, "encoding": "sideways"}, path)
    with pytest.raises(ValueError, match="encoding 'sideways'"):
        load_policy(path)
    with pytest.raises(ValueError, match="encoding"):
        build_net(rules, (8,), encoding="sideways")


def test_an_any_table_file_whose_header_lost_its_encoding_names_the_layout_its_weights_fit(tmp_path):
    rules = Rules(num_players=5, contracts=(1,))
    path = str(tmp_path / "p.pt")
    save_policy(path, build_net(rules, (8,), encoding="any_table"), rules)
    blob = torch.load(path, weights_only=True)
    del blob["encoding"]  # read as a native 5-player file, which its weights do not fit
    torch.save(blob, path)
    with pytest.raises(ValueError, match="weights fit every table size in encoding any_table, contract 1"):
        load_policy(path)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["ppo", "--encoding", "eight_seats"], "argument --encoding: invalid choice"),
        (
            ["sb3", "--encoding", "any_table"],
            "argument --encoding: any_table trains with ppo, dmc, dagger or exit",
        ),
    ],
)
def test_a_bad_encoding_is_one_line_and_exit_2(argv, needle, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(
        "shanghai_env.agents.learned.train.loop.train", lambda *a, **k: pytest.fail("started")
    )
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--out", str(tmp_path / "never")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
    assert not os.path.exists(tmp_path / "never")


def test_the_maps_keep_the_players_choices_legal_at_random_decisions(run):
    """Sampling (greedy=False) also answers a legal native id at every size."""
    agent = PolicyAgent(os.path.join(run, "model.pt"), greedy=False)
    rng = random.Random(0)
    for n in (3, 6, 8):
        rules = Rules(num_players=n, contracts=(1,))
        game = Game(rules)
        game.reset(n)
        for _ in range(60):
            d = decision_for(game, game.to_act, action_table(rules), ObservationEncoder(rules))
            a = agent.act(d)
            assert a in d.legal_actions
            game.apply(d.table.moves[a if rng.random() < 0.5 else rng.choice(d.legal_actions)])
            if game.game_over:
                break


def test_the_facts_read_the_game_at_every_table_size(tmp_path):
    out = str(tmp_path / "facts")
    opts = {**TINY["ppo"], "move_net": (8,)}
    train(tiny("ppo", out, encoding="any_table", facts=True, opponents=("greedy",), method_options=opts))
    path = os.path.join(out, "model.pt")
    net, rules, _ = load_policy(path)
    assert net.extra_size and net.facts_version >= 2
    # the moves without a card read the upcard where the 8-seat observation holds it
    assert net.upcard == AnyTableEncoder(rules).slices["upcard_offered"]
    assert net.upcard != ObservationEncoder(rules).slices["upcard_offered"]
    for n in (3, 7):
        config = tournament.TournamentConfig(
            players=(path, *["greedy"] * (n - 1)), games=1, seed=n, contracts=(1,), duplicate=False
        )
        try:
            (game,) = tournament.run_tournament(config, workers=1)
        finally:
            tournament.forget_agents(config.players)
        assert len(game.scores) == n and game.moves > 0
