"""The one training loop (shanghai-train ppo/dmc): a tiny run of each method, its files, its
player in a tournament, resume equal to an uninterrupted run, determinism, bad command lines."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from shanghai_env.agents.learned.train import cli  # noqa: E402
from shanghai_env.agents.learned.train.loop import train  # noqa: E402
from shanghai_env.agents.learned.train.run import RunConfig  # noqa: E402
from shanghai_env.agents.registry import check_player  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402

TINY = {
    "ppo": {"n_steps": 8, "batch_size": 16, "epochs": 1, "net_arch": (16,)},
    "dmc": {"batch_size": 16, "epochs": 1, "net_arch": (16,)},
    # two whole games a generation, searched wherever two moves compete (gate 1) in two worlds
    "exit": {
        "batch_size": 32,
        "epochs": 2,
        "net_arch": (16,),
        "generation_games": 2,
        "worlds": 2,
        "gate": 1.0,
    },
}


def tiny(method: str, out: str, timesteps: int = 96, **kw) -> RunConfig:
    base = dict(
        method=method,
        contracts=(1,),
        timesteps=timesteps,
        seed=3,
        out=out,
        num_envs=4,
        eval_every=0,
        eval_games=0,
        checkpoint_every=32,
        progress=False,
        method_options=dict(TINY[method]),
    )
    base.update(kw)
    return RunConfig(**base)


def weights(path: str) -> dict:
    return torch.load(path, weights_only=True)["state_dict"]


@pytest.mark.parametrize("method", ["ppo", "dmc"])
def test_tiny_run_writes_its_files_and_a_player(tmp_path, method):
    out = str(tmp_path / "run")
    train(tiny(method, out))
    for name in ("config.json", "checkpoint.pt", "progress.csv", "model.pt", "model.json"):
        assert os.path.isfile(os.path.join(out, name)), name
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["method"] == method and recipe["teacher"] is None and recipe["env_steps"] >= 96
    player = os.path.join(out, "model.pt")
    check_player(player, Rules(num_players=4, contracts=(1,)))
    with pytest.raises(ValueError, match="trained for 4 players"):
        check_player(player, Rules(num_players=5, contracts=(1,)))
    from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament

    results = run_tournament(
        TournamentConfig(players=(player, "greedy", "greedy", "random"), games=4, contracts=(1,)), workers=1
    )
    assert len(results) >= 4 and all(len(r.scores) == 4 for r in results)


@pytest.mark.parametrize("method", ["ppo", "dmc"])  # exit: test_exit_generations_resume_...
def test_resume_equals_an_uninterrupted_run(tmp_path, method):
    options = {"method_options": {"n_steps": 8, **TINY[method]}}  # two updates or more: one resumed
    whole = str(tmp_path / "whole")
    train(tiny(method, whole, timesteps=128, **options))
    parts = str(tmp_path / "parts")
    train(tiny(method, parts, timesteps=64, **options))
    train(tiny(method, parts, timesteps=128, **options))  # the same command with more steps resumes
    a, b = weights(os.path.join(whole, "model.pt")), weights(os.path.join(parts, "model.pt"))
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


@pytest.mark.parametrize(("method", "env_workers"), [("ppo", 1), ("dmc", 2)])
def test_resume_with_seated_bots_equals_an_uninterrupted_run(tmp_path, method, env_workers):
    """Bots keep plans and generators between their moves: a checkpoint keeps their games as
    seeds and moves, and resuming replays them (in worker processes too), plans and all."""
    whole, parts = str(tmp_path / "whole"), str(tmp_path / "parts")
    seated = {"opponents": ("planner", "random", "planner"), "method_options": {**TINY[method], "n_steps": 8}}
    train(tiny(method, whole, timesteps=128, **seated))
    train(tiny(method, parts, timesteps=64, env_workers=env_workers, **seated))
    train(tiny(method, parts, timesteps=128, env_workers=env_workers, **seated))
    a, b = weights(os.path.join(whole, "model.pt")), weights(os.path.join(parts, "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_exit_searches_the_kinds_of_decision_it_is_told(tmp_path, monkeypatch):
    """--decisions play: a generation searches the turn's plays (melds, layoffs, discards) and no
    draw or buy; the default searches all four kinds."""
    from shanghai_env.agents.learned.players.net_search import NetSearchBot, _kind

    seen: dict[str, set[str]] = {}
    real = NetSearchBot.scored_candidates

    def spy(self, decision):
        found = real(self, decision)
        if len(found[0]) > 1:
            seen.setdefault(",".join(sorted(self.params.decisions)), set()).add(_kind(decision))
        return found

    monkeypatch.setattr(NetSearchBot, "scored_candidates", spy)
    plays = generations(str(tmp_path / "plays"))
    plays.method_options["decisions"] = "play"
    train(plays)
    train(generations(str(tmp_path / "default")))
    assert seen["play"] == {"play"}
    assert {"draw", "buy", "play"} <= seen["buy,down_play,draw,play"]


def test_exit_searches_as_many_alternatives_and_as_wide_a_gate_as_it_is_told(tmp_path, monkeypatch):
    """--gate: a wider gate searches more of the same games' calls; --alternatives 2: a call holds up
    to three candidates (the network's best first, in its order) and a label for each alternative."""
    from shanghai_env.agents.learned.train.methods import exit as exit_method

    fitted: list[list[exit_method.Call]] = []
    real = exit_method.ExIt.fit

    def spy(self, train, valid):
        fitted.append(train + valid)
        return real(self, train, valid)

    monkeypatch.setattr(exit_method.ExIt, "fit", spy)
    narrow = generations(str(tmp_path / "narrow"))
    narrow.method_options["gate"] = 0.001  # an untrained network scores most moves alike
    train(narrow)
    wide = generations(str(tmp_path / "wide"))
    wide.method_options["alternatives"] = 2
    train(wide)
    default, wide = fitted
    assert max(len(c.positions) for c in default) == 2 and max(len(c.positions) for c in wide) == 3
    assert all(len(c.points) == len(c.positions) - 1 == len(c.targets) for c in wide)
    assert all(len(set(c.positions)) == len(c.positions) for c in wide)
    assert len(wide) > len(default)  # the same games (greedy, same seed), more of their calls searched


def test_exit_label_se_leaves_the_labels_it_cannot_tell_from_zero_out_of_the_fit(tmp_path, monkeypatch):
    """--label-se K: an alternative's target is NaN (left out of the fit) unless its measured
    difference is K standard errors or more from the prior; the points that measure the held-out
    choices stay whole. K 0 keeps every label."""
    import math

    from shanghai_env.agents.learned.train.methods import exit as exit_method

    fitted: dict[float, list[exit_method.Call]] = {}
    real = exit_method.ExIt.fit

    def spy(self, train, valid):
        fitted[self.opt.label_se] = train + valid
        return real(self, train, valid)

    monkeypatch.setattr(exit_method.ExIt, "fit", spy)
    for k in (0.0, 1.0, 1e9):
        config = generations(str(tmp_path / f"se{k}"))
        config.method_options["label_se"] = k
        train(config)
    kept = {k: sum(not math.isnan(t) for c in calls for t in c.targets) for k, calls in fitted.items()}
    total = sum(len(c.targets) for c in fitted[0.0])
    # K 1e9 keeps only the exact labels: no spread over the worlds (the same result in each)
    assert kept[0.0] == total and kept[1e9] < kept[1.0] < total
    assert all(math.isfinite(p) for c in fitted[1e9] for p in c.points)
    assert [c.points for c in fitted[1e9]] == [c.points for c in fitted[0.0]]  # the same searches


def test_generation_loss_on_padded_calls_equals_the_loss_call_by_call():
    """exit's generation loss on a padded minibatch: per call, the alternatives' differences to
    the prior against their targets, plus the anchor on every legal move; padding counts nowhere."""
    import torch

    from shanghai_env.agents.learned.train.methods.exit import fit_loss

    gen = torch.Generator().manual_seed(5)
    # three calls: 4 legal moves with 3 candidates, 2 with 2, 5 with 2 (the prior at place 3)
    legal_sizes, places = [4, 2, 5], [[2, 0, 3], [1, 0], [3, 4]]
    targets = [[0.1, -0.2], [0.3], [-0.05]]
    scores = torch.randn(3, 5, generator=gen).requires_grad_(True)
    held = torch.randn(3, 5, generator=gen)
    pos = torch.zeros(3, 3, dtype=torch.int64)
    tgt, lab = torch.zeros(3, 2), torch.zeros(3, 2, dtype=torch.bool)
    legal = torch.zeros(3, 5, dtype=torch.bool)
    for k in range(3):
        pos[k, : len(places[k])] = torch.tensor(places[k])
        tgt[k, : len(targets[k])] = torch.tensor(targets[k])
        lab[k, : len(targets[k])] = True
        legal[k, : legal_sizes[k]] = True
    padded = torch.where(legal, scores, float("-inf"))  # as the network's scores come
    got = fit_loss(padded, pos, tgt, lab, held, legal, 0.1)
    label = []
    for k in range(3):
        p = places[k]
        label.append(sum((scores[k, a] - scores[k, p[0]] - t) ** 2 for a, t in zip(p[1:], targets[k])))
    equals_call_by_call(got, label, scores, held, legal_sizes)


def equals_call_by_call(got, label, scores, held, legal_sizes) -> None:
    """A generation loss ``got`` (anchor 0.1) against its calls' ``label`` terms, each call's anchor
    term over its legal moves, averaged; its gradient finite and none in the padding (call 1's)."""
    moved = [((scores[k, :n] - held[k, :n]) ** 2).mean() for k, n in enumerate(legal_sizes)]
    want = torch.stack(label).mean() + 0.1 * torch.stack(moved).mean()
    assert float(got.detach()) == pytest.approx(float(want.detach()), rel=1e-6)
    got.backward()
    assert torch.isfinite(scores.grad).all() and scores.grad[1, 2:].abs().sum() == 0


def test_resuming_with_evaluations_starts_evaluating(tmp_path):
    """--eval-every may change on resuming: a run started without evaluations gets them."""
    out = str(tmp_path / "run")
    train(tiny("dmc", out, timesteps=64, eval_games=1))  # one update of 256 steps; evaluated at its end only
    os.remove(os.path.join(out, "eval.csv"))
    train(tiny("dmc", out, timesteps=1024, eval_games=1, eval_every=256))
    with open(os.path.join(out, "eval.csv"), encoding="utf-8") as f:
        steps = [int(line.split(",")[0]) for line in f.read().splitlines()[1:]]
    assert steps == [512, 768, 1024], steps


def test_keep_players_keeps_every_evaluated_player(tmp_path):
    """--keep-players: each evaluation's player stays as players/model_STEPS.pt with its recipe;
    the option may be turned on when a run resumes (it changes no result)."""
    out = str(tmp_path / "run")
    train(tiny("dmc", out, timesteps=256, eval_games=1, eval_every=256))  # evaluated at 0 and 256
    assert not os.path.exists(os.path.join(out, "players"))
    train(tiny("dmc", out, timesteps=1024, eval_games=1, eval_every=512, keep_players=True))
    kept = sorted(os.listdir(os.path.join(out, "players")))
    assert kept == ["model_1024.json", "model_1024.pt", "model_512.json", "model_512.pt"], kept
    for steps in (512, 1024):
        with open(os.path.join(out, "players", f"model_{steps}.json"), encoding="utf-8") as f:
            recipe = json.load(f)
        assert recipe["env_steps"] == steps and recipe["evaluation"]["env_steps"] == steps
    first, last = (weights(os.path.join(out, "players", f"model_{s}.pt")) for s in (512, 1024))
    assert not all(torch.equal(first[k], last[k]) for k in first)  # two players, not one copied twice
    assert all(torch.equal(last[k], v) for k, v in weights(os.path.join(out, "model.pt")).items())


def test_same_seed_same_training_other_seed_other(tmp_path):
    train(tiny("ppo", str(tmp_path / "a")))
    train(tiny("ppo", str(tmp_path / "b")))
    train(tiny("ppo", str(tmp_path / "c"), seed=4))
    a, b, c = (weights(str(tmp_path / x / "model.pt")) for x in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_a_run_folder_with_other_options_is_refused(tmp_path):
    out = str(tmp_path / "run")
    train(tiny("ppo", out, timesteps=32))
    with pytest.raises(ValueError, match="other options"):
        train(tiny("ppo", out, timesteps=64, seed=9))


def test_against_bots_the_learner_holds_seat_zero(tmp_path):
    out = str(tmp_path / "run")
    train(tiny("ppo", out, opponents=("greedy",)))
    assert os.path.isfile(os.path.join(out, "model.pt"))


@pytest.mark.parametrize("method", ["ppo", "dmc"])
def test_every_progress_row_lines_up_with_the_header(tmp_path, method):
    """Against bots an update reports the games that ended in it, and the first updates end none:
    the column is there (empty of a figure) from the first row, not added under a shorter header."""
    import csv

    out = str(tmp_path / "run")
    options = {**TINY[method], "n_steps": 8}
    train(tiny(method, out, timesteps=1536, opponents=("greedy",), method_options=options))
    with open(os.path.join(out, "progress.csv"), newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    assert "train_game_diff" in header and all(len(r) == len(header) for r in rows)
    diffs = [r[header.index("train_game_diff")] for r in rows]
    assert diffs[0] == "nan" and any(d != "nan" for d in diffs), diffs


def test_a_new_column_widens_the_header_and_a_resume_keeps_the_rows(tmp_path):
    import csv

    from shanghai_env.agents.learned.train.run import Run

    run = Run(RunConfig(out=str(tmp_path / "run")))
    run.log("progress.csv", {"env_steps": 10, "loss": 1.0})
    run.log("progress.csv", {"env_steps": 20, "loss": 0.5, "train_game_diff": -3.0})
    run.log("progress.csv", {"env_steps": 30, "loss": 0.25, "train_game_diff": -4.0})
    run.truncate_logs(20)
    with open(run.path("progress.csv"), newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [
            ["env_steps", "loss", "train_game_diff"],
            ["10", "1.0", ""],
            ["20", "0.5", "-3.0"],
        ]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["ppo", "--players", "9"], "--players"),
        (["ppo", "--opponents", "self,greedy"], "--opponents"),
        (["ppo", "--opponents", "greedy,greedy"], "--opponents"),
        (["ppo", "--opponents", "nobody"], "--opponents"),
        (["exit", "--opponents", "greedy"], "every seat"),
        (["exit", "--generation-games", "0"], "--generation-games"),
        (["exit", "--calls", "no_such_calls.npz"], "--calls"),
        (["exit", "--fit", "values"], "--fit"),
        (["exit", "--margin", "0"], "--margin"),
        (["ppo", "--eval-opponents", "self"], "--eval-opponents"),
        (["ppo", "--lr", "-1"], "--lr"),
        (["ppo", "--lr", "0"], "--lr"),
        (["ppo", "--gamma", "1.5"], "--gamma"),
        (["dmc", "--epsilon", "2"], "--epsilon"),
        (["ppo", "--clip", "0"], "--clip"),
        (["ppo", "--net-arch", "a,b"], "--net-arch"),
        (["ppo", "--timesteps", "0"], "--timesteps"),
        (["dmc", "--device", "tpu"], "--device"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(argv, needle, capsys, monkeypatch):
    monkeypatch.setattr(
        "shanghai_env.agents.learned.train.loop.train", lambda *a, **k: pytest.fail("started")
    )
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and "Traceback" not in "\n".join(err)


def test_unknown_method_is_one_line(capsys):
    assert cli.main(["alphazero"]) == 2
    assert "unknown method 'alphazero'" in capsys.readouterr().err


def test_the_other_methods_are_reached_through_the_one_command(monkeypatch):
    seen: list[tuple[str, list[str]]] = []
    from shanghai_env.agents.learned.train.methods import scorer as scorer_train

    monkeypatch.setattr(scorer_train, "tool_main", lambda a: seen.append(("stage", list(a))) or 0)
    monkeypatch.setattr(cli, "main_loop", lambda m, a: seen.append((m, list(a))) or 0)
    assert cli.main(["scorer", "fit", "x.npz"]) == 0  # a stage of expert iteration, by hand
    assert cli.main(["scorer", "--timesteps", "5"]) == 0  # the method on the one loop
    assert seen == [("stage", ["fit", "x.npz"]), ("scorer", ["--timesteps", "5"])]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--timesteps", "5"], "name a method before the options"),  # once the MaskablePPO trainer's
        (["clone", "--pretrain", "greedy"], "unknown method 'clone'"),  # cloning is dagger's
    ],
)
def test_options_without_a_method_and_the_retired_clone_are_one_line(argv, needle, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "sb3" in err[0] and "dagger" in err[0]


def test_the_example_loop_runs(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "ppo_vector_env.py"), "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "update 0: value loss" in done.stdout


def test_games_in_worker_processes_train_the_same_network(tmp_path):
    train(tiny("ppo", str(tmp_path / "one")))
    train(tiny("ppo", str(tmp_path / "two"), env_workers=2))
    a, b = weights(str(tmp_path / "one" / "model.pt")), weights(str(tmp_path / "two" / "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_saved_players_as_opponents_decide_in_one_batch(tmp_path, monkeypatch):
    first = str(tmp_path / "first")
    train(tiny("ppo", first))
    from shanghai_env.agents.learned.players.policy import PolicyAgent

    calls: list[int] = []
    act_arrays = PolicyAgent.act_arrays

    def counted(self, obs, legal):
        calls.append(len(legal))
        return act_arrays(self, obs, legal)

    monkeypatch.setattr(PolicyAgent, "act_arrays", counted)
    second = str(tmp_path / "second")
    train(tiny("ppo", second, opponents=(os.path.join(first, "model.pt"),)))
    assert os.path.isfile(os.path.join(second, "model.pt"))
    assert calls and max(calls) > 1  # the three seats of the four games, together


def test_plot_draws_several_runs(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    runs = []
    for seed in (3, 4):
        out = str(tmp_path / f"s{seed}")
        train(tiny("dmc", out, seed=seed, eval_games=4, eval_opponents=("random",)))
        runs.append(out)
    png = str(tmp_path / "curves.png")
    assert cli.main(["plot", *runs, "--out", png]) == 0
    assert os.path.getsize(png) > 1000
    with pytest.raises(SystemExit):
        cli.main(["plot", str(tmp_path / "none"), "--out", png])


@pytest.mark.parametrize("method", ["ppo", "dmc"])
def test_facts_runs_resume_and_play(tmp_path, method):
    whole, parts = str(tmp_path / "whole"), str(tmp_path / "parts")
    train(tiny(method, whole, timesteps=128, facts=True))
    train(tiny(method, parts, timesteps=64, facts=True))
    train(tiny(method, parts, timesteps=128, facts=True))
    a, b = weights(os.path.join(whole, "model.pt")), weights(os.path.join(parts, "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    from shanghai_env.agents.arena.tournament import TournamentConfig, run_tournament

    player = os.path.join(whole, "model.pt")
    config = TournamentConfig(players=(player, "greedy", "greedy", "random"), games=4, contracts=(1,))
    assert len(run_tournament(config, workers=1)) >= 4
    # as an opponent inside the batched games it decides from views (it needs its hand's facts)
    train(tiny("ppo", str(tmp_path / "against"), opponents=(player,)))


def test_the_facts_are_exact_facts_of_the_own_hand():
    from shanghai_env.agents.learned.nets.facts import FACTS_SIZE, hand_facts
    from shanghai_env.cards import str_to_card

    # contract 1 (two sets of three): 7C 7D 7H and 9C 9D, plus KS: one card short (a third 9)
    counts = [0] * 53
    for card in ["7C", "7D", "7H", "9C", "9D", "KS"]:
        counts[str_to_card(card)] += 1
    f = hand_facts(counts, 1, 1)
    assert f.shape == (FACTS_SIZE,) and f[0] == pytest.approx(1 / 8)
    outs = {c for c in range(53) if f[1 + c]}
    assert {str_to_card("9H"), str_to_card("9S")} <= outs and str_to_card("KS") not in outs
    assert f[54 + str_to_card("KS")] == 0  # the king is spare
    assert f[54 + str_to_card("7C")] == 1  # letting a 7 go costs a card
    again = hand_facts(counts, 1, 1)  # remembered: the same facts, in an array of its own
    assert np.array_equal(again, f) and again is not f
    again[:] = 9.0
    assert np.array_equal(hand_facts(counts, 1, 1), f)
    assert not hand_facts(counts, 1, 1, down=True).any()  # version 1: nothing once down
    once_down = hand_facts(counts, 1, 1, down=True, accepted=(1 << str_to_card("KS")) | (1 << 52))
    assert {c for c in range(53) if once_down[1 + c]} == {str_to_card("KS"), 52}
    assert once_down[0] == 0 and not once_down[54:].any()


def test_once_down_the_outs_are_the_cards_the_table_takes_as_layoffs():
    """Checked against the engine's own legal layoffs: every held card is laid off legally
    exactly when the facts (version 2) mark it, on every later turn of a down player."""
    import random

    from shanghai_env.agents.learned.nets.facts import game_facts, game_facts_v2
    from shanghai_env.engine import Game
    from shanghai_env.moves import MoveKind

    checked = 0
    for seed in range(6):
        game = Game(num_players=4)
        game.reset(seed)
        rng = random.Random(seed)
        while not game.game_over and checked < 400:
            p = game.to_act
            moves = game.legal_moves()
            kinds = {m.kind for m in moves}
            if game.down[p] and MoveKind.DISCARD in kinds and not game.went_down_this_turn:
                f = game_facts_v2(game, p)
                laid = {m.card for m in moves if m.kind == MoveKind.LAYOFF}
                held = {c for c in range(53) if game.hands[p][c]}
                assert {c for c in held if f[1 + c]} == laid
                assert not game_facts(game, p).any()  # version 1 saw nothing here
                checked += 1
            # prefer melding and laying off, so that players go down and tables fill
            best = [m for m in moves if m.kind in (MoveKind.MELD, MoveKind.LAYOFF)]
            game.apply(rng.choice(best or moves))
    assert checked > 50


def test_facts_with_games_in_worker_processes_train_the_same_network(tmp_path):
    train(tiny("dmc", str(tmp_path / "one"), facts=True))
    train(tiny("dmc", str(tmp_path / "two"), facts=True, env_workers=2))
    a, b = weights(str(tmp_path / "one" / "model.pt")), weights(str(tmp_path / "two" / "model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_example_in_the_docs_is_the_file():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    docs = (root / "docs" / "training.md").read_text(encoding="utf-8")
    example = (root / "examples" / "ppo_vector_env.py").read_text(encoding="utf-8")
    assert f"```python\n{example}```" in docs


def test_a_move_reads_its_own_cards_facts():
    import numpy as np

    from shanghai_env.actions import action_table
    from shanghai_env.agents.learned.nets.facts import FACTS_SIZE
    from shanghai_env.agents.learned.nets.policy import build_net
    from shanghai_env.cards import str_to_card
    from shanghai_env.moves import discard
    from shanghai_env.rules import Rules

    rules = Rules(num_players=4, contracts=(1,))
    net = build_net(rules, (8,), facts=True)
    table = action_table(rules)
    a7, ak = table.encode(discard(str_to_card("7C"))), table.encode(discard(str_to_card("KS")))
    extra = np.zeros((1, FACTS_SIZE), np.float32)
    extra[0, 54 + str_to_card("7C")] = 1.0  # letting the 7 go costs the hand a card
    obs = torch.zeros(1, net.inv_scale.shape[0], dtype=torch.int8)
    idx, valid = torch.tensor([[a7, ak]]), torch.ones(1, 2, dtype=torch.bool)
    with torch.no_grad():
        h = net.features(obs, torch.from_numpy(extra))
        before = net.logits(h, idx, valid, torch.from_numpy(extra), obs)
        kind = int(net.fields[a7, 0])
        net.move_weights[kind, 1] = -5.0  # discards: weight of the card's loss
        after = net.logits(h, idx, valid, torch.from_numpy(extra), obs)
    assert after[0, 0] == pytest.approx(before[0, 0] - 5.0) and after[0, 1] == pytest.approx(before[0, 1])


def test_take_and_buy_read_whether_the_upcard_is_an_out(tmp_path):

    from shanghai_env.actions import action_table
    from shanghai_env.agents.learned.nets.facts import FACTS_SIZE
    from shanghai_env.agents.learned.nets.policy import build_net
    from shanghai_env.agents.learned.players.policy import load_policy, save_policy
    from shanghai_env.cards import str_to_card
    from shanghai_env.observation import ObservationEncoder
    from shanghai_env.rules import Rules

    rules = Rules(num_players=4, contracts=(1,))
    net = build_net(rules, (8,), facts=True)
    table = action_table(rules)
    take, draw = table.action_id("take"), table.action_id("draw")
    seven = str_to_card("7C")
    extra = torch.zeros(2, FACTS_SIZE)
    extra[:, 1 + seven] = 1.0  # the 7 of clubs would bring the hand closer to the contract
    obs = torch.zeros(2, net.inv_scale.shape[0], dtype=torch.int8)
    at = ObservationEncoder(rules).slices["upcard_offered"]
    obs[0, at.start + seven] = 1  # row 0: the 7 is offered; row 1: the king of spades
    obs[1, at.start + str_to_card("KS")] = 1
    idx, valid = torch.tensor([[take, draw]] * 2), torch.ones(2, 2, dtype=torch.bool)
    with torch.no_grad():
        net.move_weights[int(net.fields[take, 0]), 0] = 3.0  # take: the weight of the upcard being an out
        h = net.features(obs, extra)
        out = net.logits(h, idx, valid, extra, obs)
        # the same network with the first facts: take reads nothing, so the 3.0 is unused
        old = build_net(rules, (8,), facts=True, version=1)
        old.load_state_dict(net.state_dict())
        plain = old.logits(h, idx, valid, extra, obs)
    assert out[0, 0] == pytest.approx(plain[0, 0] + 3.0)  # the out on offer
    assert out[1, 0] == pytest.approx(plain[1, 0])  # not an out
    assert torch.equal(out[:, 1], plain[:, 1])  # draw's weight is still zero
    with pytest.raises(ValueError, match="pass obs"):
        net.logits(h, idx, valid, extra)
    # a saved player keeps its facts version; one saved before versions loads with the first
    path = str(tmp_path / "p.pt")
    save_policy(path, net, rules)
    assert load_policy(path)[0].upcard == at
    blob = torch.load(path, weights_only=True)
    del blob["facts_version"]
    torch.save(blob, path)
    assert load_policy(path)[0].upcard is None and load_policy(path)[0].facts_version == 1


def test_a_stopped_run_keeps_the_recipe_of_its_last_evaluated_player(tmp_path, monkeypatch):
    from shanghai_env.agents.learned.train.methods.dmc import DMC

    calls = {"n": 0}
    step = DMC.step

    def failing_step(self):
        calls["n"] += 1
        if calls["n"] > 3:
            raise RuntimeError("stopped")
        return step(self)

    monkeypatch.setattr(DMC, "step", failing_step)
    out = str(tmp_path / "run")
    # an evaluation after every update (256 decisions), then a stop in the fourth
    with pytest.raises(RuntimeError, match="stopped"):
        train(tiny("dmc", out, timesteps=1000, facts=True, eval_every=32, eval_games=4))
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["evaluation"]["env_steps"] == recipe["env_steps"] > 0
    facts = recipe["inputs"]["facts"]
    assert any("layoff" in line for line in facts) and any("upcard" in line for line in facts)


def test_a_run_from_before_facts_versions_goes_on_with_the_first_facts(tmp_path):
    from shanghai_env.agents.learned.nets.facts import game_facts
    from shanghai_env.agents.learned.players.policy import load_policy

    out = str(tmp_path / "run")
    train(tiny("dmc", out, timesteps=32, facts=True))
    path = os.path.join(out, "config.json")
    with open(path, encoding="utf-8") as f:
        stored = json.load(f)
    assert stored["facts_version"] == 2
    del stored["facts_version"]  # a folder from before versions: it read version 1
    with open(path, "w", encoding="utf-8") as f:
        json.dump(stored, f)
    config = tiny("dmc", out, timesteps=64, facts=True)
    train(config)
    assert config.facts_version == 1
    net = load_policy(os.path.join(out, "model.pt"))[0]
    assert net.facts_version == 1 and net.upcard is None
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        facts = json.load(f)["inputs"]["facts"]
    assert not any("upcard" in line for line in facts) and any("nothing" in line for line in facts)
    # new games (when a checkpoint's could not be kept) compute the first facts too
    from shanghai_env.agents.learned.train.opponents import make_games

    assert make_games(config).features is game_facts


def test_a_run_from_before_an_option_existed_resumes(tmp_path):
    out = str(tmp_path / "run")
    train(tiny("ppo", out, timesteps=32))
    path = os.path.join(out, "config.json")
    with open(path, encoding="utf-8") as f:
        stored = json.load(f)
    del stored["facts"]  # written before the option existed: it ran at the default
    with open(path, "w", encoding="utf-8") as f:
        json.dump(stored, f)
    train(tiny("ppo", out, timesteps=64))
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        assert json.load(f)["env_steps"] >= 64


def test_the_demonstration_says_what_it_trains_and_what_came_of_it(tmp_path, monkeypatch, capsys):
    tiny_demo = [
        "ppo", "--contracts", "1", "--opponents", "greedy", "--timesteps", "64", "--num-envs", "4",
        "--n-steps", "8", "--batch-size", "16", "--net-arch", "16", "--eval-every", "32",
        "--eval-games", "4", "--eval-opponents", "greedy", "--no-progress", "--out", "runs/demo",
    ]  # fmt: skip
    monkeypatch.setattr(cli, "DEMO", tiny_demo)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "lower is" in out and "below zero it is ahead of the bots" in out  # how to read it, first
    verdict = [line for line in out.splitlines() if line.startswith("After training:")]
    assert len(verdict) == 1 and "greedy bots" in verdict[0]
    assert any(w in verdict[0] for w in ("ahead of", "still behind", "not separated"))
    assert "runs/demo/curve.png" in out and "greedy,greedy,greedy" in out
    # its closing check is an evaluation on enough games to say more than the training's, then a game
    assert "Play it:" not in out and "Evaluate it on 1,000 duplicate games" in out
    assert f"  {cli.DEMO_EVALUATION}\n" in out and "--games 1000" in out
    assert f"  {cli.DEMO_PLAY}\n" in out and out.index(cli.DEMO_EVALUATION) < out.index(cli.DEMO_PLAY)
    assert (tmp_path / "runs" / "demo" / "model.pt").is_file()


def test_dmc_lambda_returns_run_backwards_over_each_seats_own_decisions():
    from types import SimpleNamespace

    from shanghai_env.agents.learned.train.methods.dmc import DMC, DMCOptions

    # seats 0 and 1 alternate; the value kept at each decision is its highest move value then
    decisions = [(b"", 0, 0, 0.1), (b"", 0, 1, 0.2), (b"", 0, 0, 0.3), (b"", 0, 1, 0.4), (b"", 0, 0, 0.5)]
    reward = np.array([1.0, -1.0])
    mc = SimpleNamespace(opt=DMCOptions())
    assert DMC.targets(mc, decisions, reward) == [1.0, -1.0, 1.0, -1.0, 1.0]
    lam = SimpleNamespace(opt=DMCOptions(td_lambda=0.5))
    got = DMC.targets(lam, decisions, reward)
    seat0_last = 1.0
    seat0_mid = 0.5 * 0.5 + 0.5 * seat0_last  # (1 - λ) × next value + λ × next target
    seat0_first = 0.5 * 0.3 + 0.5 * seat0_mid
    seat1_last = -1.0
    seat1_first = 0.5 * 0.4 + 0.5 * seat1_last
    assert got == pytest.approx([seat0_first, seat1_first, seat0_mid, seat1_last, seat0_last])
    assert DMC.targets(SimpleNamespace(opt=DMCOptions(td_lambda=0.0)), decisions, reward)[0] == 0.3


def test_dmc_with_lambda_trains_and_an_older_folder_resumes_at_the_default(tmp_path):
    out = str(tmp_path / "run")
    train(tiny("dmc", out, timesteps=32, method_options={**TINY["dmc"], "td_lambda": 0.9}))
    with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
        assert len(f.read().splitlines()) >= 2
    from dataclasses import asdict

    from shanghai_env.agents.learned.train.methods.dmc import DMCOptions

    every = {**asdict(DMCOptions()), **TINY["dmc"]}  # as the command line records them
    old = str(tmp_path / "old")
    train(tiny("dmc", old, timesteps=32, method_options=every))
    path = os.path.join(old, "config.json")
    with open(path, encoding="utf-8") as f:
        stored = json.load(f)
    del stored["method_options"]["td_lambda"]  # written before the option existed
    with open(path, "w", encoding="utf-8") as f:
        json.dump(stored, f)
    train(tiny("dmc", old, timesteps=64, method_options=every))
    with open(os.path.join(old, "model.json"), encoding="utf-8") as f:
        assert json.load(f)["env_steps"] >= 64
    with pytest.raises(ValueError, match="other options"):
        train(tiny("dmc", old, timesteps=96, method_options={**every, "td_lambda": 0.5}))


def test_the_move_net_learns_and_its_player_saves_and_loads(tmp_path):
    from shanghai_env.agents.learned.players.policy import load_policy

    out = str(tmp_path / "run")
    train(tiny("dmc", out, timesteps=64, facts=True, method_options={**TINY["dmc"], "move_net": (8,)}))
    net = load_policy(os.path.join(out, "model.pt"))[0]
    assert net.move_net == (8,) and net.move_mlp is not None
    obs = torch.zeros(2, net.inv_scale.numel(), dtype=torch.int8)
    extra = torch.zeros(2, net.extra_size)
    extra[:, 5] = 1.0
    idx = torch.tensor([[0, 60, 61], [1, 2, 70]])
    valid = torch.ones(2, 3, dtype=torch.bool)
    # its last layer starts at zero (a move's score is the rows' alone); a fit moves it
    assert net.move_mlp[-1].weight.abs().sum() == 0
    optim = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(20):
        q = net.logits(net.features(obs, extra), idx, valid, extra, obs)
        loss = (q - torch.tensor([[1.0, -1.0, 0.5], [0.0, 2.0, -2.0]])).pow(2).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
    assert net.move_mlp[-1].weight.abs().sum() > 0
    h = net.features(obs, extra)
    with_mlp = net.logits(h, idx, valid, extra, obs)
    net.move_mlp = None
    assert not torch.allclose(with_mlp, net.logits(h, idx, valid, extra, obs))
    # the command line takes it, and --init refuses a player of another shape
    args = cli.build_parser("dmc").parse_args(["--move-net", "32,16", "--out", "x"])
    assert args.move_net == (32, 16)
    with pytest.raises(ValueError, match="move_net"):
        train(tiny("dmc", str(tmp_path / "other"), facts=True, init=os.path.join(out, "model.pt")))


def test_the_move_nets_blockwise_first_layer_is_the_mlp_on_the_joined_input():
    """The move MLP's first layer is applied to the features, the row and the own facts apart;
    it must give what the MLP gives on their concatenation, in a small batch (rows gathered per
    move) and in a large one (every action's row made once)."""
    from shanghai_env.agents.learned.nets.policy import build_net

    torch.manual_seed(3)
    net = build_net(Rules(num_players=4), (16,), facts=True, move_net=(8, 4))
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.3)  # off the zero start, so that every block counts
    assert net.move_mlp is not None
    rng = np.random.default_rng(3)
    for batch in (2, 400):  # 400 x 12 ids exceed the table: the large-batch path
        obs = torch.from_numpy(rng.integers(0, 3, (batch, net.inv_scale.numel())).astype(np.int8))
        extra = torch.from_numpy(rng.random((batch, net.extra_size)).astype(np.float32))
        idx = torch.from_numpy(rng.integers(0, net.num_actions, (batch, 12)))
        valid = torch.ones(batch, 12, dtype=torch.bool)
        valid[0, 5:] = False
        h = net.features(obs, extra)
        got = net.logits(h, idx, valid, extra, obs)
        mlp, net.move_mlp = net.move_mlp, None
        base = net.logits(h, idx, valid, extra, obs)
        net.move_mlp = mlp
        # the reference: the rows and own facts as logits() makes them, joined to the features
        f = net.fields[idx]
        w = net.pi.weight[idx] + net.kind_rows[f[..., 0]] + net.card_rows[f[..., 1]]
        w = w + net.place_rows[f[..., 2]]
        per_card = torch.stack([extra[:, 1:54], extra[:, 54:107]], -1)
        per_card = torch.cat([torch.zeros_like(per_card[:, :1]), per_card], 1)
        card = f[..., 1].clamp(max=53)
        own = per_card.gather(1, card[..., None].expand(-1, -1, 2))
        offered = obs[:, net.upcard].float()
        up_out = (offered * per_card[:, 1:, 0]).sum(1)
        up = torch.stack([up_out, torch.zeros_like(up_out)], -1)
        own = torch.where((card == 0)[..., None], up[:, None, :], own)
        joined = torch.cat([h[:, None, :].expand(-1, 12, -1), w, own], -1)
        want = (base + mlp(joined).squeeze(-1)).masked_fill(~valid, float("-inf"))
        assert torch.equal(torch.isinf(got), ~valid)
        assert torch.allclose(got[valid], want[valid], atol=1e-4, rtol=1e-4)
        assert (mlp(joined).squeeze(-1)[valid].abs() > 1e-3).any()  # the move MLP is not idle here


def test_a_trained_player_ships_as_a_zip_and_plays_by_its_path(tmp_path):
    from shanghai_env.agents.learned.nets.policy import build_net
    from shanghai_env.agents.learned.players.policy import PolicyAgent, is_policy_file, save_policy
    from shanghai_env.agents.registry import make_agent, shipped_models

    rules = Rules(num_players=4)
    path = str(tmp_path / "scratch.zip")
    save_policy(path, build_net(rules, (16,), facts=True), rules)
    assert is_policy_file(path)
    check_player(path, rules)
    assert isinstance(make_agent(path, seed=1), PolicyAgent)
    with pytest.raises(ValueError, match="trained for 4 players"):
        check_player(path, Rules(num_players=5))
    # the other kind of shipped zip is not taken for one
    assert not is_policy_file(shipped_models()["shanghai"])


def test_the_demo_prints_the_command_that_goes_on_with_its_run(monkeypatch, tmp_path) -> None:
    """The demo's last line is a command, not advice: the same run folder and options as the demo,
    with only --timesteps larger, so that the run resumes instead of being refused."""
    import shlex
    from dataclasses import asdict

    from shanghai_env.agents.learned.train import cli

    configs = []
    monkeypatch.setattr("shanghai_env.agents.learned.train.loop.train", lambda c, **k: configs.append(c))
    out = str(tmp_path / "demo")
    demo = [out if a == "runs/demo" else a for a in cli.DEMO]
    longer = [out if a == "runs/demo" else a for a in shlex.split(cli.longer_demo_command())]
    assert longer[:2] == ["python", "train.py"]
    cli.main_loop(demo[0], demo[1:])
    cli.main_loop(longer[2], longer[3:])
    first, second = (asdict(c) for c in configs)
    changed = {k for k in first if first[k] != second[k]}
    assert changed == {"timesteps"} and second["timesteps"] > first["timesteps"]


def test_a_player_of_the_retired_ppo_prior_is_refused_in_one_line(tmp_path):
    """ppo --prior (a network amending another player) is gone: its players name the release."""
    from shanghai_env.agents.learned.players.policy import load_policy
    from shanghai_env.agents.registry import make_agent, shipped_models

    blob = torch.load(shipped_models()["scratch_contract1"], map_location="cpu", weights_only=True)
    blob["meta"] = {**blob.get("meta", {}), "prior": "shanghai"}
    path = str(tmp_path / "amends.pt")
    torch.save(blob, path)
    for load in (load_policy, make_agent):
        with pytest.raises(ValueError, match=r"--prior.*0\.2\.0 is the last release"):
            load(path)


def test_a_dmc_run_that_trained_on_no_decision_says_so(tmp_path, capsys):
    # dmc learns from deals that ended; 96 steps of 4 games end none of contract 1's deals
    train(tiny("dmc", str(tmp_path / "short"), timesteps=96))
    assert "trained on no decision" in capsys.readouterr().err
    train(tiny("dmc", str(tmp_path / "long"), timesteps=4096))
    assert "trained on no decision" not in capsys.readouterr().err


def test_shanghai_train_alone_names_the_methods_and_the_demo(capsys):
    assert cli.main([]) == 2  # no run starts: the demonstration is asked for by name
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "'demo'" in err and "dmc" in err


def test_the_commands_help_reads_as_plain_text(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":mod:" not in out and "shanghai-train demo" in out


def test_choice_loss_on_padded_calls_equals_the_loss_call_by_call():
    """--fit choices: per labelled call, the squared shortfall of the search's choice from leading
    every other candidate by the margin, plus the anchor; unlabelled calls and padding count
    nowhere but in the anchor, and a choice that leads by the margin costs nothing."""
    import torch

    from shanghai_env.agents.learned.train.methods.exit import choice_loss

    gen = torch.Generator().manual_seed(6)
    # three calls: 4 legal moves with 3 candidates (the second chosen), 2 with 2 (the prior kept),
    # 5 with 2 (a switch, but the call is not labelled)
    legal_sizes, places, chosen = [4, 2, 5], [[2, 0, 3], [1, 0], [3, 4]], [1, 0, 1]
    labelled_calls = [True, True, False]
    scores = torch.randn(3, 5, generator=gen).requires_grad_(True)
    held = torch.randn(3, 5, generator=gen)
    pos = torch.zeros(3, 3, dtype=torch.int64)
    lab = torch.zeros(3, 2, dtype=torch.bool)
    legal = torch.zeros(3, 5, dtype=torch.bool)
    for k in range(3):
        pos[k, : len(places[k])] = torch.tensor(places[k])
        lab[k, : len(places[k]) - 1] = labelled_calls[k]
        legal[k, : legal_sizes[k]] = True
    padded = torch.where(legal, scores, float("-inf"))
    margin = 0.3
    got = choice_loss(padded, pos, torch.tensor(chosen), lab, held, legal, 0.1, margin)
    label = []
    for k in range(3):
        p, c = places[k], places[k][chosen[k]]
        short = [torch.relu(margin - (scores[k, c] - scores[k, a])) ** 2 for a in p if a != c]
        label.append(sum(short) if labelled_calls[k] else torch.tensor(0.0))
    equals_call_by_call(got, label, scores, held, legal_sizes)
    # a chosen move ahead of the others by the margin, and no anchor: nothing to fit; the other
    # chosen, its shortfall (0.5 + 0.5) squared
    ahead = torch.tensor([[1.0, 0.0, 0.5, 0.0, 0.0]])
    one = (
        torch.tensor([[2, 0]]),
        torch.tensor([0]),
        torch.tensor([[True]]),
        ahead,
        torch.ones(1, 5, dtype=torch.bool),
    )
    # (the prior, move 2, scores 0.5; the alternative, move 0, 1.0: it leads by 0.5)
    assert float(choice_loss(ahead, one[0], torch.tensor([1]), *one[2:], 0.0, 0.5)) == 0.0
    assert float(choice_loss(ahead, one[0], one[1], *one[2:], 0.0, 0.5)) == pytest.approx(1.0)


def generations(out: str, timesteps: int = 1, **kw) -> RunConfig:
    """exit by generations: each update two whole games searched at every close call, then a fit."""
    return tiny("exit", out, timesteps=timesteps, **kw)


def test_exit_generations_fit_the_labels_of_whole_games(tmp_path):
    """--generation-games: a generation searches every close call of its games, fits on the first
    game's calls and chooses the epoch on the held-out game's; the row says which epoch it kept."""
    import csv

    out = str(tmp_path / "run")
    train(generations(out))
    with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    searched, trained = float(row["searched"]), float(row["trained_decisions"])
    assert 0 < trained < searched  # the held-out game's calls are searched, not trained on
    assert float(row["fit_epoch"]) in (0.0, 1.0, 2.0)
    assert float(row["held_out_gain"]) <= 0.0  # epoch 0, the network as it was, gains 0
    # no choice gains more than the best-measured candidate of every call, and some call had room
    assert float(row["held_out_room"]) <= float(row["held_out_gain"]) and float(row["held_out_room"]) < 0
    check_player(os.path.join(out, "model.pt"), Rules(num_players=4, contracts=(1,)))
    with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["method"] == "exit" and recipe["teacher"] is None  # no bot in the loop


def test_exit_generations_resume_and_spread_over_processes_as_one_run(tmp_path):
    """Three generations in one go, in three sessions, and with the searches in two processes:
    the same weights (and a fit kept at least once, so that the weights did move)."""
    import csv

    def rows(out: str) -> list[dict[str, str]]:
        with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
            return list(csv.DictReader(f))

    whole, parts, spread = (str(tmp_path / x) for x in ("whole", "parts", "spread"))
    train(generations(parts))  # each generation's moves tell how many steps make the next
    train(generations(parts, int(rows(parts)[-1]["env_steps"]) + 1))
    three = int(rows(parts)[-1]["env_steps"]) + 1
    train(generations(parts, three))
    train(generations(whole, three))
    train(generations(spread, three, env_workers=2))
    assert len(rows(whole)) == 3 and any(float(r["fit_epoch"]) > 0 for r in rows(whole))
    a = weights(os.path.join(whole, "model.pt"))
    for other in (parts, spread):
        b = weights(os.path.join(other, "model.pt"))
        for k in a:
            assert torch.equal(a[k], b[k]), (other, k)


def test_exit_check_games_keep_a_fit_only_when_it_is_ahead_in_games(tmp_path, monkeypatch):
    """--check-games: after a fit, the fitted network plays the network before it; a fit that is
    not ahead (mean difference over the seats at or above zero) is undone, weights and all, and the
    row says what the games found."""
    import csv

    from shanghai_env.agents.learned.train.methods import exit as exit_method

    def row(out: str) -> dict[str, str]:
        with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
            return list(csv.DictReader(f))[-1]

    found: list[float] = []
    real = exit_method.evaluate

    def spy(*args, **kw):
        r = real(*args, **kw)
        found.append(sum(s["diff"] for s in r["seats"]) / len(r["seats"]))
        return r

    # the real games: the row reports them and keeps the fit by their sign
    monkeypatch.setattr(exit_method, "evaluate", spy)
    start = str(tmp_path / "start")
    config = generations(start)
    config.method_options["check_games"] = 6
    train(config)
    assert float(row(start)["fit_epoch"]) > 0 and len(found) == 1  # a fit to check, checked once
    assert float(row(start)["check_diff"]) == pytest.approx(found[0], abs=0.01)
    assert float(row(start)["kept"]) == float(found[0] < 0)

    # from a saved start, games said behind then ahead: undone to the start's weights, then kept
    for diff, out in ((+5.0, "behind"), (-5.0, "ahead")):
        seats = [{"diff": diff}] * 3
        monkeypatch.setattr(exit_method, "evaluate", lambda *a, seats=seats, **k: {"seats": seats})
        config = generations(str(tmp_path / out), init=os.path.join(start, "model.pt"))
        config.method_options["check_games"] = 6
        train(config)
        assert float(row(str(tmp_path / out))["kept"]) == float(diff < 0)
    a = weights(os.path.join(start, "model.pt"))
    behind, ahead = (weights(str(tmp_path / x / "model.pt")) for x in ("behind", "ahead"))
    assert all(torch.equal(a[k], behind[k]) for k in a)
    assert not all(torch.equal(a[k], ahead[k]) for k in a)


def test_exit_kept_calls_fitted_again_give_the_network_of_the_searching_run(tmp_path):
    """--keep-calls writes a generation's searched calls (arrays only); --calls fits them again
    without playing or searching: the same weights as the run that searched them, its games counted
    as the run's; --fit choices fits the same calls to another network; two files fit together. A
    file of another network's input, or no calls file at all, is refused by name before anything is
    fitted."""
    import csv

    def row(out: str) -> dict[str, str]:
        with open(os.path.join(out, "progress.csv"), encoding="utf-8") as f:
            return list(csv.DictReader(f))[-1]

    searched = str(tmp_path / "searched")
    config = generations(searched)
    config.method_options["keep_calls"] = True
    train(config)
    path = os.path.join(searched, "calls_1.npz")
    with np.load(path, allow_pickle=False) as f:
        assert len(f["obs"]) == float(row(searched)["searched"]) > 0
    again, choices = str(tmp_path / "again"), str(tmp_path / "choices")
    for out, fit in ((again, "differences"), (choices, "choices")):
        config = generations(out)
        config.method_options |= {"calls": path, "fit": fit}
        train(config)
    assert float(row(again)["searched"]) == 0 and row(again)["env_steps"] == row(searched)["env_steps"]
    a, b, c = (weights(os.path.join(x, "model.pt")) for x in (searched, again, choices))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert float(row(choices)["fit_epoch"]) > 0 and not all(torch.equal(a[k], c[k]) for k in a)
    # two files: their calls together, each file's own games held out, their moves counted
    twice = generations(str(tmp_path / "twice"))
    twice.method_options["calls"] = f"{path},{path}"
    train(twice)
    assert float(row(str(tmp_path / "twice"))["trained_decisions"]) == 2 * float(
        row(again)["trained_decisions"]
    )
    assert int(row(str(tmp_path / "twice"))["env_steps"]) == 2 * int(row(again)["env_steps"])

    wider = generations(str(tmp_path / "wider"), facts=True)  # the facts block: another input
    wider.method_options["calls"] = path
    with pytest.raises(ValueError, match="made for another network's input"):
        train(wider)
    notes = tmp_path / "notes.npz"
    notes.write_text("not arrays")
    bad = generations(str(tmp_path / "bad"))
    bad.method_options["calls"] = str(notes)
    with pytest.raises(ValueError, match="not a generation's calls"):
        train(bad)
