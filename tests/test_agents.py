"""Agents: the shared interface, distance to contract, legality, determinism, hidden information."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest

from shanghai_env.actions import ActionTable
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.base import Agent, Decision, decision_for
from shanghai_env.agents.bots.contract import ContractMeter, bits, size_deficit
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.random_agent import RandomAgent
from shanghai_env.agents.registry import BOTS, make_agent
from shanghai_env.cards import counts_of, full_deck, parse_cards
from shanghai_env.engine import Game, Phase
from shanghai_env.melds import can_fulfil

BOT_NAMES = sorted(BOTS)
# the search player runs thousands of rollouts a game: tests/test_search.py checks it on small budgets
FAST_BOTS = [name for name in BOT_NAMES if name != "search"]

ROOT = Path(__file__).resolve().parents[1]


def hand(text: str) -> list[int]:
    return counts_of(parse_cards(text))


# --- distance to contract ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contract", "cards", "distance"),
    [
        (1, "7C 7D 7H 9S 9S 9H 2C", 0),
        (1, "7C 7D 9S 9S 2C 3D", 2),
        (1, "7C 7D JK 9S 9S 2C", 1),  # one joker per set: 7 7 JK, and 9 9 needs a natural
        (2, "4H 5H 6H 7H KC KD KS", 0),
        (2, "4H 5H 7H KC KD 2S", 2),  # 6H and a third K
        (2, "4H 5H JK 7H KC KD 2S", 1),
        (3, "AD 2D 3D 4D JD QD KD", 1),  # one ace of diamonds cannot be low and high at once
        (3, "AD AD 2D 3D 4D JD QD KD", 0),
        (3, "2C 3C 4C 5C 6C 7C 8C", 2),  # same-suit runs need a gap: 2-5 and 7-T
        (7, "2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H 5H", 0),
        (10, "2C 3C 4C 5C 6C 2D 3D 4D 5D 6D 2H 3H 4H 5H", 1),
        (10, "2C 3C 4C 5C 6C 2D 3D 4D 5D 6D 2H 3H 4H JK JK", 0),
    ],
)
def test_distance_examples(contract: int, cards: str, distance: int) -> None:
    assert ContractMeter(contract).distance(hand(cards)) == distance


def test_distance_matches_feasibility_and_outs_are_exact() -> None:
    """d == 0 exactly when the engine says the contract fits; at d == 1 the outs are exact."""
    rng = np.random.default_rng(3)
    deck = full_deck(4)
    for contract in range(1, 11):
        meter = ContractMeter(contract)
        for _ in range(60):
            h = counts_of(int(c) for c in rng.permutation(deck)[: int(rng.integers(9, 19))])
            d, outs = meter.analyse(h)
            assert meter.distance(h) == d
            assert (d == 0) == can_fulfil(h, contract, reserve=0)
            if d == 1:
                helpful = set()
                for c in range(53):
                    h[c] += 1
                    if can_fulfil(h, contract, reserve=0):
                        helpful.add(c)
                    h[c] -= 1
                assert set(bits(outs)) == helpful


def test_a_pickled_meter_leaves_its_caches_and_answers_the_same() -> None:
    """A trainer's checkpoint pickles a bot per game and seat: the meters' caches stay behind."""
    import pickle

    rng = np.random.default_rng(4)
    deck = full_deck(4)
    meter = ContractMeter(7)
    hands = [counts_of(int(c) for c in rng.permutation(deck)[:12]) for _ in range(300)]
    answers = [meter.analyse(h) for h in hands]
    empty = len(pickle.dumps(ContractMeter(7)))
    copy = pickle.loads(pickle.dumps(meter))
    assert len(pickle.dumps(meter)) == empty < 2_000
    assert meter._cache  # the original keeps what it found
    assert [copy.analyse(h) for h in hands] == answers


def test_bots_of_a_process_share_one_meter_per_contract_and_pickle_none() -> None:
    """A trainer holds a bot per game and seat: their meters are the process's, one per contract
    and rule, so their caches do not grow per bot, and a pickled bot carries no meter."""
    import pickle

    from shanghai_env.agents.bots.contract import forget_meters, shared_meter

    forget_meters()
    a, b = PlannerBot(seed=1), GreedyBot(seed=2)
    assert a.meter(5) is b.meter(5) is shared_meter(5, a.rules.same_suit_run_gap)
    assert a.meter(5) is not a.meter(6)
    game = Game(num_players=4, contracts=(1,))
    game.reset(3)
    table = ActionTable(game.rules)
    while not game.game_over:
        game.apply(table.decode(a.act(decision_for(game, game.to_act, table))))
    assert a.meter(1)._cache  # the deal filled the shared cache
    assert b"ContractMeter" not in pickle.dumps(a)
    forget_meters()
    assert not a.meter(1)._cache  # forgotten: a fresh meter


def test_size_deficit() -> None:
    assert size_deficit(11, 1) == 0
    assert size_deficit(11, 7) == 1  # 12 cards in the contract
    assert size_deficit(11, 10) == 4
    assert size_deficit(15, 10) == 0


# --- the interface ----------------------------------------------------------------------------


def test_decision_mask_and_lazy_observation() -> None:
    game = Game(num_players=4, contracts=(1,))
    game.reset(5)
    table = ActionTable(game.rules)
    decision = decision_for(game, game.to_act, table)
    assert decision.action_mask.dtype == np.int8
    assert sorted(np.flatnonzero(decision.action_mask).tolist()) == decision.legal_actions
    with pytest.raises(RuntimeError, match="observation"):
        _ = decision.observation

    class Encoder:
        calls = 0

        def encode(self, g: Game, player: int) -> np.ndarray:
            Encoder.calls += 1
            return np.zeros(3, dtype=np.int8)

    lazy = decision_for(game, game.to_act, table, Encoder())
    assert Encoder.calls == 0
    assert lazy.observation.shape == (3,)
    assert Encoder.calls == 1


@pytest.mark.parametrize("name", BOT_NAMES)
def test_bots_satisfy_the_agent_protocol(name: str) -> None:
    agent = make_agent(name, seed=1)
    assert isinstance(agent, Agent)
    assert agent.name == name


@pytest.mark.parametrize("bad", ["", "alphago", "no/such/model.zip", "greedy2"])
def test_make_agent_rejects_unknown_players(bad: str) -> None:
    with pytest.raises(ValueError, match="planner"):
        make_agent(bad)


def test_model_agent_is_lazy() -> None:
    from shanghai_env.agents.learned.players.sb3 import ModelAgent

    agent = ModelAgent("somewhere/model.zip")
    agent.reset(0)
    assert agent.name == "model" and agent._model is None


# --- legality and determinism -----------------------------------------------------------------


@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7, 8])
def test_bots_play_only_legal_actions(num_players: int) -> None:
    """Every seat mix of the bots, full games: play_game refuses any illegal action."""
    contracts = tuple(range(1, 11)) if num_players <= 5 else (1, 3, 6, 8, 10)
    for game_index in range(3):
        specs = [FAST_BOTS[(s + game_index) % len(FAST_BOTS)] for s in range(num_players)]
        agents = [make_agent(spec, seed=100 * game_index + s) for s, spec in enumerate(specs)]
        game = Game(num_players=num_players, contracts=contracts, max_moves_per_deal=1500)
        record = play_game(game, agents, seed=1000 * num_players + game_index)
        assert len(record.deal_scores) == len(contracts)
        assert game.game_over
        # the bots' own choices were legal: they never fell back to an arbitrary legal move
        assert all(getattr(a, "fallbacks", 0) == 0 for a in agents)


def test_bots_keep_the_engine_valid_and_act_from_every_phase() -> None:
    game = Game(num_players=4)
    table = ActionTable(game.rules)
    agents: list[Agent] = [PlannerBot(seed=1), GreedyBot(seed=2), PlannerBot(seed=3), GreedyBot(seed=4)]
    game.reset(11)
    phases = set()
    while not game.game_over and game.deal < 4:
        p = game.to_act
        decision = decision_for(game, p, table)
        phases.add(game.phase)
        game.apply(table.decode(agents[p].act(decision)))
        game.validate()
    assert {Phase.DRAW, Phase.BUY, Phase.PLAY, Phase.GOING_DOWN} <= phases


@pytest.mark.parametrize("name", FAST_BOTS)
def test_bots_are_deterministic_for_a_seed(name: str) -> None:
    def run(seed: int) -> list[int]:
        agents = [make_agent(name, seed=seed + s) for s in range(4)]
        game = Game(num_players=4, contracts=(1, 2, 6), max_moves_per_deal=800)
        record = play_game(game, agents, seed=21)
        return [*record.scores, record.moves]

    assert run(7) == run(7)


def test_random_agent_depends_on_its_seed() -> None:
    def run(seed: int) -> list[int]:
        agents = [RandomAgent(seed=seed + s) for s in range(3)]
        record = play_game(Game(num_players=3, contracts=(1,), max_moves_per_deal=300), agents, seed=4)
        return [*record.scores, record.moves]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_move_cap_ends_a_deal_and_is_recorded() -> None:
    agents = [RandomAgent(seed=s) for s in range(4)]
    game = Game(num_players=4, contracts=(1, 2), max_moves_per_deal=40)
    record = play_game(game, agents, seed=3)
    assert record.capped == [True, True]
    assert record.moves <= 80
    assert all(s > 0 for row in record.deal_scores for s in row)  # everybody scored a hand


def test_illegal_action_is_refused_with_the_agents_name() -> None:
    class Cheater:
        name = "cheater"

        def reset(self, seed: int | None = None) -> None:
            pass

        def act(self, decision: Decision) -> int:
            return decision.table.size - 1  # a swap that is never legal at the start

    with pytest.raises(ValueError, match="cheater"):
        play_game(Game(num_players=3, contracts=(1,)), [Cheater(), Cheater(), Cheater()], seed=1)


# --- hidden information -----------------------------------------------------------------------


def _shuffle_hidden(game: Game, rng: np.random.Generator, player: int) -> Game:
    """A copy where every card ``player`` cannot see (others' unknown cards, the stock) is dealt anew."""
    g = game.clone()
    pool: list[int] = list(g.stock)
    kept = []
    for q in range(g.num_players):
        if q == player:
            kept.append(None)
            continue
        known = list(g.picked_up[q])
        hidden = [c for c in range(53) for _ in range(g.hands[q][c] - known[c])]
        pool.extend(hidden)
        kept.append((known, len(hidden)))
    order = [pool[i] for i in rng.permutation(len(pool))]
    for q in range(g.num_players):
        entry = kept[q]
        if entry is None:
            continue
        known, k = entry
        g.hands[q] = list(known)
        for c in order[:k]:
            g.hands[q][c] += 1
        order = order[k:]
    g.stock = order
    g.forget_caches()
    return g


@pytest.mark.parametrize("name", ["greedy", "planner"])
def test_bots_ignore_hidden_information(name: str) -> None:
    """Re-dealing everything the acting player cannot see never changes the bot's action."""
    rng = np.random.default_rng(0)
    game = Game(num_players=4, contracts=(2, 5))
    table = ActionTable(game.rules)
    players = [make_agent(name, seed=s) for s in range(4)]
    game.reset(9)
    checked = 0
    while not game.game_over and checked < 150:
        p = game.to_act
        probe = copy.deepcopy(players[p])
        action = players[p].act(decision_for(game, p, table))
        twin = _shuffle_hidden(game, rng, p)
        assert twin.hands[p] == game.hands[p] and twin.legal_moves() == game.legal_moves()
        assert twin.hands != game.hands or twin.stock != game.stock
        assert probe.act(decision_for(twin, p, table)) == action
        game.apply(table.decode(action))
        checked += 1


# --- trained models ---------------------------------------------------------------------------


def test_model_agent_feeds_observation_and_mask_to_predict() -> None:
    """The adapter hands predict() the acting player's observation and the legal-action mask."""
    observation = pytest.importorskip("shanghai_env.observation")
    from shanghai_env.agents.learned.players.sb3 import ModelAgent

    game = Game(num_players=3, contracts=(1,), max_moves_per_deal=300)
    table = ActionTable(game.rules)
    encoder = observation.ObservationEncoder(game.rules)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    class FakeModel:
        observation_space = None

        def predict(self, obs: np.ndarray, action_masks: np.ndarray, deterministic: bool) -> tuple[int, None]:
            assert deterministic
            seen.append((obs, action_masks))
            return int(np.flatnonzero(action_masks)[-1]), None

    agent = ModelAgent("fake.zip")
    agent._model = FakeModel()
    others = [make_agent("greedy", seed=1), make_agent("greedy", seed=2)]
    record = play_game(game, [agent, *others], seed=3, encoder=encoder, table=table)
    assert record.moves > 0 and seen
    obs, mask = seen[0]
    assert obs.shape == (encoder.size,) and mask.shape == (table.size,) and mask.dtype == bool


def test_saved_maskable_ppo_model_plays_through_make_agent(tmp_path: Path) -> None:
    """A real (untrained) MaskablePPO saved to a zip loads lazily and plays legal actions."""
    observation = pytest.importorskip("shanghai_env.observation")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    gym = pytest.importorskip("gymnasium")
    rules = Game(num_players=3, contracts=(1,), max_moves_per_deal=200).rules
    encoder = observation.ObservationEncoder(rules)
    table = ActionTable(rules)

    class Shell(gym.Env):  # only the spaces matter for saving an untrained model
        observation_space = gym.spaces.Box(-128, 127, shape=(encoder.size,), dtype=np.int8)
        action_space = gym.spaces.Discrete(table.size)

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
            return np.zeros(encoder.size, dtype=np.int8), {}

        def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
            return np.zeros(encoder.size, dtype=np.int8), 0.0, True, False, {}

        def action_masks(self) -> np.ndarray:
            return np.ones(table.size, dtype=bool)

    path = tmp_path / "tiny.zip"
    sb3_contrib.MaskablePPO("MlpPolicy", Shell(), n_steps=8, batch_size=8, device="cpu").save(path)
    agent = make_agent(str(path), seed=0)
    assert agent.name == "tiny" and agent._model is None  # type: ignore[attr-defined]
    others = [make_agent("greedy", seed=1), make_agent("planner", seed=2)]
    record = play_game(Game(rules), [agent, *others], seed=5, encoder=encoder)
    assert record.moves > 0


# every module of the project but the engine itself: none may use a private name of the Game
ENGINE_USERS = sorted(
    str(p.relative_to(ROOT))
    for folder in ("shanghai_env", "agents", "benchmarks", "examples", "tests")
    for p in (ROOT / folder).rglob("*.py")
    if p.name != "engine.py" or folder != "shanghai_env"
)


def test_no_private_name_of_the_game_is_used_outside_the_engine() -> None:
    """Game's underscored methods and attributes (the legal-move cache, dealing a deal...) are
    the engine's own: the modules that drive games use its public calls (start_deal,
    forget_caches, deal_end_after, shared_view) instead."""
    game = Game(num_players=4)
    private = {n for n in [*dir(Game), *vars(game)] if n.startswith("_") and not n.startswith("__")}
    assert {"_legal", "_start_deal", "_cap_at"} <= private
    # another object's attribute of the same name is written self.<name> in its own class
    pattern = re.compile(r"(?<!\bself)\.(" + "|".join(sorted(private)) + r")\b")
    found = [
        f"{path}:{i}: {line.strip()}"
        for path in ENGINE_USERS
        for i, line in enumerate((ROOT / path).read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and "private = {" not in line
    ]
    assert found == []
