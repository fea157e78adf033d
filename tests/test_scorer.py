"""The move scorer: its features, its file, its data, its fitting, its command line, and the
shipped full-game model."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from shanghai_env.actions import action_table
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.base import Agent, decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.handtools import hand_kinds
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.scorer import (
    CONTEXT_SIZE,
    INPUT_SIZE,
    ScorerBot,
    ScorerNet,
    is_scorer_file,
    load_scorer,
)
from shanghai_env.agents.learned.train import cli as train_cli
from shanghai_env.agents.learned.train.methods import scorer as scorer_train
from shanghai_env.agents.learned.train.run import RunConfig
from shanghai_env.agents.learned.train.scorer_data import generate, rollout_values
from shanghai_env.agents.registry import check_player, make_agent, shipped_models
from shanghai_env.cards import JOKER
from shanghai_env.engine import Game, Phase
from shanghai_env.moves import DRAW, MoveKind
from shanghai_env.rules import Rules
from shanghai_env.worlds import sample_world

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "models" / "shanghai_4p.scorer"


def random_net(seed: int = 0, hidden: int = 16) -> ScorerNet:
    rng = np.random.default_rng(seed)
    w = [rng.normal(size=(INPUT_SIZE, hidden)), rng.normal(size=(hidden, 1))]
    b = [rng.normal(size=hidden), rng.normal(size=1)]
    return ScorerNet(w, b, {"note": "random"})


def states(seed: int, count: int) -> list[tuple[Game, int]]:
    """Positions from a game of planners: (game copy, player to act)."""
    game = Game(num_players=4)
    game.reset(seed)
    table = action_table(game.rules)
    bots = [PlannerBot(seed=seed + s) for s in range(4)]
    out = []
    while not game.game_over and len(out) < count:
        p = game.to_act
        out.append((game.clone(), p))
        game.apply(table.decode(bots[p].act(decision_for(game, p, table))))
    return out


def test_without_a_network_it_plays_as_the_planner() -> None:
    for seed in (1, 2):
        results = []
        for first in (PlannerBot(seed=5), ScorerBot(seed=5)):
            agents: list[Agent] = [first, PlannerBot(seed=6), GreedyBot(seed=7), PlannerBot(seed=8)]
            results.append(play_game(Game(num_players=4), agents, seed=seed))
        assert results[0].scores == results[1].scores and results[0].moves == results[1].moves


def test_candidates_describe_legal_moves_from_the_view_alone() -> None:
    bot = ScorerBot(random_net())
    table = None
    seen = set()
    for game, p in states(3, 900)[::7]:
        table = table or action_table(game.rules)
        view = game.view(p)
        if view.phase not in (Phase.DRAW, Phase.BUY, Phase.PLAY):
            continue
        if view.phase == Phase.PLAY and not any(m.kind == MoveKind.DISCARD for m in view.legal_moves):
            continue
        bot.rules = game.rules
        cands = bot.candidates(view)
        seen.add(cands.kind)
        assert cands.features.shape == (len(cands.moves), INPUT_SIZE)
        assert np.isfinite(cands.features).all()
        # one context for every candidate of a decision
        assert (cands.features[:, :CONTEXT_SIZE] == cands.features[0, :CONTEXT_SIZE]).all()
        if view.phase == Phase.PLAY:
            kinds = hand_kinds(view.hand)
            if not view.down[p]:
                kinds = [c for c in kinds if c != JOKER] or [JOKER]
            assert [m.card for m in cands.moves] == kinds
            assert all(m in view.legal_moves for m in cands.moves)
        # a world with other hidden cards but the same view gives the same features
        world = sample_world(view, np.random.default_rng(len(seen)), game.rules)
        again = bot.candidates(world.view(p))
        assert np.array_equal(again.features, cands.features)
    assert seen == {0, 1, 2, 3}


def test_a_scorer_plays_legal_full_games_and_is_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "net.scorer"
    random_net(1).save(path)
    assert is_scorer_file(path)
    spec = check_player(str(path))
    runs = []
    for _ in range(2):
        agents = [make_agent(spec, seed=4), PlannerBot(seed=1), GreedyBot(seed=2), PlannerBot(seed=3)]
        runs.append(play_game(Game(num_players=4), agents, seed=9))
        assert agents[0].fallbacks == 0  # type: ignore[attr-defined]
    assert runs[0].scores == runs[1].scores and len(runs[0].deal_scores) == 10


def test_saved_scorer_round_trip_and_refusals(tmp_path: Path) -> None:
    net = random_net(2)
    path = tmp_path / "a.scorer"
    net.save(path)
    back = ScorerNet.load(path)
    x = np.random.default_rng(0).normal(size=(5, INPUT_SIZE)).astype(np.float32)
    assert np.allclose(back.costs(x), net.costs(x)) and back.config == {"note": "random"}
    assert load_scorer(path).name == "a"
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("scorer.json", json.dumps({"format": "other", "layers": 1, "input_size": 3}))
        z.writestr("weights.npz", b"")
    with pytest.raises(ValueError, match=r"not a saved scorer|format"):
        ScorerNet.load(bad)
    (tmp_path / "junk.zip").write_bytes(b"junk")
    assert not is_scorer_file(tmp_path / "junk.zip")
    with pytest.raises(ValueError, match="not a saved scorer"):
        ScorerNet.load(tmp_path / "junk.zip")
    with pytest.raises(ValueError, match="maps"):
        ScorerNet([np.zeros((3, 1))], [np.zeros(1)])


def test_a_scorer_saved_as_a_zip_before_loads_wherever_a_player_path_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scorer is saved as .scorer now (the same zip container inside); one saved as .zip before
    is told from a MaskablePPO model by its content, as a player and as a stage's scorer."""
    old = tmp_path / "old.zip"
    old.write_bytes(SHIPPED.read_bytes())
    assert is_scorer_file(old) and ScorerNet.load(old).config == ScorerNet.load(SHIPPED).config
    assert check_player(str(old), Rules(num_players=3)) == str(old)
    agent = make_agent(str(old), seed=0)
    assert isinstance(agent, ScorerBot) and agent.name == "old"
    shard = tmp_path / "s.npz"
    assert train_cli.main(["scorer", "gen", "--out", str(shard), "--games", "1", "--workers", "1",
                           "--rollouts", "1", "--model", str(old)]) == 0  # fmt: skip
    out = tmp_path / "fine.scorer"
    assert train_cli.main(["scorer", "fit", str(shard), "--init", str(old), "--epochs", "1",
                           "--out", str(out)]) == 0  # fmt: skip
    assert ScorerNet.load(out).config["init"] == str(old)
    capsys.readouterr()


def test_a_dot_scorer_file_is_read_as_a_scorer_and_the_shipped_ones_are_scorers(tmp_path: Path) -> None:
    """A .scorer that holds no scorer says so (not that it is no MaskablePPO model); the shipped
    scorers are .scorer files found by their names."""
    junk = tmp_path / "junk.scorer"
    junk.write_bytes(b"junk")
    for name in (make_agent, check_player):
        with pytest.raises(ValueError, match=r"junk\.scorer: not a saved scorer"):
            name(str(junk))
    for name in ("shanghai", "shanghai_4p"):
        assert Path(shipped_models()[name]).name == f"{name}.scorer"
        assert is_scorer_file(shipped_models()[name])


def test_coupled_rollouts_value_a_move_against_itself_at_zero() -> None:
    game = next(g for g, _ in states(11, 400) if g.phase == Phase.DRAW and g.upcard >= 0)
    p = game.to_act
    rules = game.rules
    bots = [PlannerBot() for _ in range(4)]
    rng = np.random.default_rng(0)
    values = rollout_values(game, p, [DRAW, DRAW], bots, rng, 3, action_table(rules), rules)
    assert values.shape == (3, 2) and (values[:, 0] == values[:, 1]).all()


def test_generated_data_is_seeded_and_labelled() -> None:
    a = generate(5, games=1, rollouts=1, contracts=(1, 2)).arrays()
    b = generate(5, games=1, rollouts=1, contracts=(1, 2)).arrays()
    for key in a:
        assert np.array_equal(a[key], b[key], equal_nan=key == "pair_se"), key
    assert a["pair_x"].shape[1:] == (2, INPUT_SIZE) and len(a["pair_a"]) == len(a["pair_x"]) > 0
    assert np.isfinite(a["pair_a"]).all()
    offsets, labels, x = a["disc_offsets"], a["disc_y"], a["disc_x"].astype(np.float32)
    assert len(offsets) == len(labels) + 1 and offsets[-1] == len(x)
    for i, y in enumerate(labels):
        group = x[offsets[i] : offsets[i + 1]]
        assert 0 <= y < len(group) and y == int(np.argmin(group[:, -1]))  # the planner's choice
    with pytest.raises(ValueError, match="games or seconds"):
        generate(1)


def test_fit_writes_a_scorer_that_plays(tmp_path: Path) -> None:
    shard = scorer_train.gen(tmp_path / "s.npz", 3, 1, games=1, rollouts=1)
    logs: list[str] = []
    metrics = scorer_train.fit([shard], tmp_path / "m.scorer", hidden=(8,), epochs=2, log=logs.append)
    assert {"pair_huber", "discard_agree"} <= set(metrics) and logs[-1].startswith("saved")
    again = scorer_train.fit([shard], tmp_path / "m2.scorer", hidden=(8,), epochs=2, log=logs.append)
    assert again == metrics  # seeded
    bot = load_scorer(tmp_path / "m.scorer", seed=1)
    agents: list[Agent] = [bot, GreedyBot(), GreedyBot(), PlannerBot()]
    result = play_game(Game(num_players=4, contracts=(1,)), agents, seed=2)
    assert len(result.deal_scores) == 1 and bot.fallbacks == 0


def test_the_network_as_teacher_plays_the_rollouts_and_sits_as_opponent(tmp_path: Path) -> None:
    """--rollout-model and --opponent-model: the network plays on in the rollouts (other labels
    than the planner's continuation gives) and sits at some tables; data stay seeded."""
    net = random_net(3)
    kw = {"games": 3, "rollouts": 2, "contracts": (1,)}
    plain = generate(5, **kw).arrays()  # type: ignore[arg-type]
    taught = generate(5, rollout_net=net, **kw).arrays()  # type: ignore[arg-type]
    assert np.array_equal(plain["pair_x"], taught["pair_x"])  # the same games and decisions...
    assert not np.array_equal(plain["pair_a"], taught["pair_a"])  # ...valued by other rollouts
    again = generate(5, rollout_net=net, **kw).arrays()  # type: ignore[arg-type]
    assert np.array_equal(taught["pair_a"], again["pair_a"])
    seats = generate(8, opponent_net=net, games=6, rollouts=1, contracts=(1,))
    assert seats.games == 6 and len(seats.disc_y) > 0


def test_valued_discards_are_the_behaviour_players_best_against_its_first_choice() -> None:
    """value_discards=3: the same game and labels as without, plus per discard decision a pair
    (first choice, runner-up) for each of its next two best discards, valued by rollouts."""
    net = random_net(6)
    kw = {"games": 1, "rollouts": 2, "contracts": (1, 2)}
    plain = generate(9, net, **kw).arrays()  # type: ignore[arg-type]
    valued = generate(9, net, value_discards=3, **kw).arrays()  # type: ignore[arg-type]
    is_discard = scorer_train.discard_pairs(valued["pair_x"])
    assert not scorer_train.discard_pairs(plain["pair_x"]).any()
    # the same game: the same upcard decisions and the same discard decisions
    assert np.array_equal(valued["pair_x"][~is_discard], plain["pair_x"])
    for key in ("disc_x", "disc_offsets", "disc_y"):
        assert np.array_equal(valued[key], plain[key]), key
    sizes = np.diff(plain["disc_offsets"])
    assert is_discard.sum() == sum(min(3, int(k)) - 1 for k in sizes) > 0
    pairs = valued["pair_x"][is_discard]
    costs = net.costs(pairs.reshape(-1, INPUT_SIZE)).reshape(-1, 2)
    assert (costs[:, 0] <= costs[:, 1]).all()  # the first of a pair is the network's choice
    assert np.isfinite(valued["pair_a"]).all() and valued["stats"][2] > plain["stats"][2]
    for bad in (1, -1):
        with pytest.raises(ValueError, match="value_discards"):
            generate(9, net, value_discards=bad, **kw)  # type: ignore[arg-type]


def test_fit_can_leave_the_valued_discards_out(tmp_path: Path) -> None:
    shard = scorer_train.gen(tmp_path / "v.npz", 3, 1, games=1, rollouts=1, value_discards=2)
    with np.load(shard) as z:
        valued = int(scorer_train.discard_pairs(z["pair_x"]).sum())
        pairs = len(z["pair_a"])
    assert 0 < valued < pairs
    quiet = {"hidden": (8,), "epochs": 1, "log": lambda s: None}
    scorer_train.fit([shard], tmp_path / "all.scorer", **quiet)  # type: ignore[arg-type]
    scorer_train.fit([shard], tmp_path / "up.scorer", valued_discards=False, **quiet)  # type: ignore[arg-type]
    assert ScorerNet.load(tmp_path / "all.scorer").config["pairs"] == pairs
    assert ScorerNet.load(tmp_path / "up.scorer").config["pairs"] == pairs - valued
    assert (
        train_cli.main(
            [
                "scorer",
                "fit",
                str(shard),
                "--out",
                str(tmp_path / "cli.scorer"),
                "--epochs",
                "1",
                "--hidden",
                "8",
                "--no-valued-discards",
            ]
        )
        == 0
    )
    assert ScorerNet.load(tmp_path / "cli.scorer").config["valued_discards"] is False


def test_fit_can_start_from_a_saved_scorer(tmp_path: Path) -> None:
    shard = scorer_train.gen(tmp_path / "s.npz", 3, 1, games=1, rollouts=1)
    start = random_net(4, hidden=8)
    start.save(tmp_path / "start.scorer")
    scorer_train.fit(
        [shard], tmp_path / "m.scorer", epochs=1, lr=1e-12, init=tmp_path / "start.scorer", log=lambda s: None
    )
    fitted = ScorerNet.load(tmp_path / "m.scorer")
    assert [w.shape for w in fitted.weights] == [
        w.shape for w in start.weights
    ]  # its widths, not the default
    x = np.random.default_rng(0).normal(size=(20, INPUT_SIZE)).astype(np.float32)
    assert np.allclose(fitted.costs(x), start.costs(x), rtol=1e-4, atol=1e-3)  # nothing learned: the start
    assert fitted.config["init"] == str(tmp_path / "start.scorer")


def test_own_discards_teach_the_start_nothing_new(tmp_path: Path) -> None:
    """--own-discards: the discards' targets are the --init scorer's own choice probabilities, so
    at the start the discards' loss has no gradient (the fit has nothing to learn from them),
    while the planner's choices as targets do pull the start; and the upcard pairs still move it.

    The gradient is the network's softmin minus the targets, and the two differ only by float32
    rounding of the same costs (the numpy scorer's against torch's): relative errors of a few
    times 2**-24 in probabilities of order 1 over a few hundred decisions. 1e-4 of the planner's
    gradient is a thousand times that, and the planner's is far from zero: its choices are not a
    random network's."""
    shard = scorer_train.gen(tmp_path / "d.npz", 3, 1, games=1, rollouts=1, label_upcards=False)
    start = random_net(4, hidden=8)
    data = scorer_train.fit_data([shard])
    assert len(data.pair_a) == 0 and len(data.disc_y) > 0
    everything = np.arange(len(data.disc_y))

    def gradient(targets: torch.Tensor) -> float:
        model = scorer_train.scorer_model((), start)
        scorer_train.discard_loss(model, data, everything, targets).backward()
        return max(float(p.grad.abs().max()) for p in model.parameters() if p.grad is not None)

    own = scorer_train.own_discard_targets(start, data)
    assert torch.allclose(own.sum(1), torch.ones(len(own)))
    assert gradient(own) < 1e-4 * gradient(data.disc_y)
    assert gradient(data.disc_y) > 1e-2

    start.save(tmp_path / "start.scorer")
    quiet = {"epochs": 2, "lr": 1e-2, "init": tmp_path / "start.scorer", "log": lambda s: None}
    scorer_train.fit([shard], tmp_path / "own.scorer", own_discards=True, **quiet)  # type: ignore[arg-type]
    assert ScorerNet.load(tmp_path / "own.scorer").config["own_discards"] is True
    pairs = scorer_train.fit_data([scorer_train.gen(tmp_path / "p.npz", 3, 1, games=1, rollouts=1)])
    model = scorer_train.scorer_model((), start)
    huber = torch.nn.HuberLoss(delta=3.0)
    scorer_train.pair_loss(model, pairs, np.arange(len(pairs.pair_a)), huber).backward()
    assert max(float(p.grad.abs().max()) for p in model.parameters() if p.grad is not None) > 1e-2
    with pytest.raises(ValueError, match="give init"):
        scorer_train.fit([shard], tmp_path / "x.scorer", own_discards=True, log=lambda s: None)


TINY = ["--players", "3", "--contracts", "1", "--games", "1", "--discard-games", "1", "--rollouts", "1"]
TINY += ["--epochs", "1", "--hidden", "8", "--env-workers", "1", "--no-progress"]


def test_expert_iteration_runs_on_the_loop_and_resumes_to_the_same_scorer(tmp_path: Path) -> None:
    """A step is a round; the run folder is every method's (config, checkpoint, logs, model.scorer); the
    curve starts at the planner (a scorer with no layers); a run stopped after a round and resumed
    fits the same scorers as one run straight through."""
    once, twice = tmp_path / "once", tmp_path / "twice"
    argv = [*TINY, "--eval-games", "2", "--eval-opponents", "greedy", "--eval-every", "1000000"]
    assert train_cli.main(["scorer", *argv, "--timesteps", "1", "--out", str(twice)]) == 0
    kept = twice / "rounds"
    assert (kept / "scorer1.scorer").exists() and not (kept / "scorer2.scorer").exists()
    steps = int(json.loads((twice / "model.json").read_text())["env_steps"])
    assert train_cli.main(["scorer", *argv, "--timesteps", str(steps + 1), "--out", str(twice)]) == 0
    steps = int(json.loads((twice / "model.json").read_text())["env_steps"])
    assert train_cli.main(["scorer", *argv, "--timesteps", str(steps), "--out", str(once)]) == 0
    assert sorted(p.name for p in (once / "rounds").iterdir()) == sorted(
        p.name for p in (twice / "rounds").iterdir()
    )
    rounds = sorted(p.name for p in (once / "rounds").iterdir() if p.suffix == ".scorer")
    assert rounds == ["scorer0.scorer", "scorer1.scorer", "scorer2.scorer"]
    for name in rounds[1:]:
        a, b = ScorerNet.load(once / "rounds" / name), ScorerNet.load(twice / "rounds" / name)
        assert all(np.array_equal(x, y) for x, y in zip(a.weights + a.biases, b.weights + b.biases))
    with open(once / "eval.csv", encoding="utf-8") as f:
        first = f.read().splitlines()[1]
    assert first.startswith("0,") and (once / "curve.png").exists()
    planner = make_agent(str(once / "rounds" / "scorer0.scorer"))
    assert isinstance(planner, ScorerBot) and planner.net is None  # the start: the planner's play
    last = make_agent(str(once / "model.scorer"))
    assert isinstance(last, ScorerBot) and last.net is not None
    assert last.net.config["env_steps"] == json.loads((once / "model.json").read_text())["env_steps"]


def test_own_play_rounds_take_no_planner_label(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --init (own play): no planner shard; each round is played by the latest scorer in every
    role and fitted from it with its own discards as targets."""
    gens: list[tuple[str, dict]] = []  # type: ignore[type-arg]
    fits: list[tuple[str, list[str], dict]] = []  # type: ignore[type-arg]
    real_gen, real_fit = scorer_train.gen, scorer_train.fit

    def gen(out, seed, workers, **kw):  # type: ignore[no-untyped-def]
        gens.append((Path(out).name, kw))
        return real_gen(out, seed, workers, **{**kw, "games": 1, "rollouts": 1})

    def fit(shards, out, *args, **kw):  # type: ignore[no-untyped-def]
        fits.append((Path(out).name, [Path(s).name for s in shards], kw))
        return real_fit(shards, out, (8,), 1, *args[2:], **kw)

    monkeypatch.setattr(scorer_train, "gen", gen)
    monkeypatch.setattr(scorer_train, "fit", fit)
    start = str(ROOT / "models" / "shanghai.scorer")
    config = RunConfig(method="scorer", players=3, contracts=(1,), init=start, out=str(tmp_path))
    method = scorer_train.Scorer()
    method.setup(config, torch.device("cpu"))
    method.step()
    method.step()
    folder = tmp_path / "rounds"
    first = folder / "scorer1.scorer"
    assert not (folder / "discards.npz").exists()
    # behaviour, rollout and opponent player: the latest scorer (the start saved as round 0's)
    assert [(n, kw["model"], kw["rollout_model"], kw["opponent_model"]) for n, kw in gens] == [
        ("round0.npz", *[str(folder / "scorer0.scorer")] * 3),
        ("round1.npz", *[str(first)] * 3),
    ]
    assert [(n, shards, kw["init"], kw["own_discards"]) for n, shards, kw in fits] == [
        ("scorer1.scorer", ["round0.npz"], folder / "scorer0.scorer", True),
        ("scorer2.scorer", ["round0.npz", "round1.npz"], first, True),
    ]
    assert (
        ScorerNet.load(folder / "scorer0.scorer").weights[0].tobytes()
        == ScorerNet.load(start).weights[0].tobytes()
    )
    assert method.scorer.config["own_discards"] is True and method.scorer.config["init"] == str(first)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--facts"], "--facts"),
        (["--opponents", "greedy"], "--opponents"),
        (["--init", "{junk}"], "--init"),
        (["--init", "{other}"], "not a saved scorer"),
        (["--hidden", "0,3"], "--hidden"),
        (["--lr", "0"], "--lr"),
        (["--games", "0"], "--games"),
        (["--epochs", "2", "--epochs", "3"], "--epochs"),
    ],
)
def test_bad_run_command_lines_exit_2_with_one_line(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"junk")
    other = tmp_path / "other.zip"  # a zip, not a scorer's
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("policy.pth", b"")
    argv = [a.format(junk=junk, other=other) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        train_cli.main(["scorer", *argv, "--out", str(tmp_path / "run")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err) and says in err[-1]
    assert not (tmp_path / "run" / "rounds").exists()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["gen", "--out", "x.npz"], "--seconds and --games"),
        (["gen", "--out", "x.npz", "--games", "0"], "--games"),
        (["gen", "--out", "x.npz", "--games", "1", "--seconds", "3"], "--seconds and --games"),
        (["gen", "--out", "x.npz", "--games", "1", "--discard-keep", "2"], "--discard-keep"),
        (["gen", "--out", "x.npz", "--games", "1", "--model", "{junk}"], "--model"),
        (["gen", "--out", "x.npz", "--games", "1", "--rollout-model", "{junk}"], "--rollout-model"),
        (["gen", "--out", "x.npz", "--games", "1", "--opponent-model", "nowhere.zip"], "--opponent-model"),
        (["fit", "{junk}", "--out", "m.scorer", "--init", "{junk}"], "--init"),
        (["gen", "--out", "x.npz", "--games", "1", "--seed", "-1"], "--seed"),
        (["gen", "--out", "x.npz", "--games", "1", "--value-discards", "1"], "--value-discards"),
        (["gen", "--out", "x.npz", "--games", "1", "--value-discards", "-2"], "--value-discards"),
        (["gen", "--out", "{tmp}", "--games", "1"], "--out"),
        (["gen", "--out", "{junk}/x.npz", "--games", "1"], "--out"),
        (["fit", "missing.npz", "--out", "m.scorer"], "no shard"),
        (["fit", "{junk}", "--out", "m.scorer"], "not a shard"),
        (["fit", "{junk}", "--out", "m.scorer", "--hidden", "0,3"], "--hidden"),
        (["fit", "{junk}", "--out", "m.scorer", "--lr", "0"], "--lr"),
        (["fit", "{junk}", "--out", "m.scorer", "--own-discards"], "--own-discards"),
        (["fit", "{junk}", "--out", "m.scorer", "--epochs", "2", "--epochs", "3"], "--epochs"),
        (["fit", "{junk}", "--out", "m.zip"], "a scorer is saved as .scorer"),
        (["fit", "{junk}", "--out", "m"], "a scorer is saved as .scorer"),
        (["gen", "--out", "x", "--games", "1"], "a shard is saved as .npz"),
    ],
)
def test_bad_stage_command_lines_exit_2_with_one_line(
    argv: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("work started on a bad command line")

    monkeypatch.setattr(scorer_train, "gen", never)
    monkeypatch.setattr(scorer_train, "fit", never)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"junk")
    argv = [a.format(junk=junk, tmp=tmp_path) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        train_cli.main(["scorer", *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err) and says in err[-1]


@pytest.mark.parametrize("name", ["shanghai_4p", "shanghai"])
def test_the_shipped_full_game_models(name: str) -> None:
    assert name in shipped_models()
    meta = json.loads((ROOT / "models" / f"{name}.json").read_text())
    assert meta["player"] == name and meta["commands"] and meta["evaluation"]
    agent = make_agent(name, seed=0)
    assert isinstance(agent, ScorerBot) and agent.net is not None
    result = play_game(Game(Rules(num_players=4)), [agent, GreedyBot(), PlannerBot(), GreedyBot()], seed=1)
    assert len(result.deal_scores) == 10 and agent.fallbacks == 0


def test_shanghai_is_shanghai_4p_fine_tuned() -> None:
    """The successor starts from shanghai_4p's weights (fit --init) and moved away from them."""
    old, new = ScorerNet.load(SHIPPED), ScorerNet.load(ROOT / "models" / "shanghai.scorer")
    assert [w.shape for w in old.weights] == [w.shape for w in new.weights]
    assert new.config["init"] == "models/shanghai_4p.zip"
    x = np.random.default_rng(0).normal(size=(50, INPUT_SIZE)).astype(np.float32)
    assert not np.allclose(old.costs(x), new.costs(x))
