"""Agents: the shared interface, distance to contract, legality, determinism, hidden information."""

from __future__ import annotations

import ast
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


# --- every private name stays in its module ---------------------------------------------------

# the folders of the installed package, and the package each one is installed as
PACKAGE_FOLDERS = {"shanghai_env": "shanghai_env", "agents": "shanghai_env.agents"}

# Underscored names of other libraries that the package uses as those libraries mean them to be
# used (each entry must still be needed: see the test). Every other underscored name is used only
# in the module that defines it.
ALLOWED_PRIVATE = {
    # the standard library
    "_exit": "os._exit: documented, ends a worker process at once (agents/arena/workers.py)",
    # PettingZoo's AEC API: what its envs and wrappers share by convention (its docs' custom env)
    "_cumulative_rewards": "AECEnv._cumulative_rewards: what last() returns",
    "_was_dead_step": "AECEnv._was_dead_step: the step of an agent already done",
    "_accumulate_rewards": "AECEnv._accumulate_rewards: rewards into _cumulative_rewards",
    "_has_reset": "OrderEnforcingWrapper._has_reset, read by fast_wrappers' copies of its methods",
    "_terminated": "TerminateIllegalWrapper._terminated, read by fast_wrappers' copies of its methods",
    # Stable-Baselines3's VecEnv: the seeds and options that reset() takes up (as its own VecEnvs)
    "_options": "VecEnv._options: the options set_options() gives the next reset()",
    "_reset_options": "VecEnv._reset_options: forgets them once used",
    "_reset_seeds": "VecEnv._reset_seeds: forgets the seeds once used",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__") and name != "_"


class _Module:
    """One module's private definitions, classes and imports, read from its syntax tree."""

    def __init__(self, name: str, path: Path) -> None:
        self.name, self.path = name, path
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        self.package = name if is_package else name.rpartition(".")[0]
        self.defined: set[str] = set()  # every private name it binds, anywhere
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.defined.add(node.id)
            elif isinstance(node, ast.arg):
                self.defined.add(node.arg)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_self(node.value):
                self.defined.add(node.attr)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.defined.update(a.asname for a in node.names if a.asname)
                if isinstance(node, ast.ImportFrom):
                    module = self.absolute(node)
                    self.imports.update({a.asname or a.name: (module, a.name) for a in node.names})
        # its module-level classes
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}

    def absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1])
        return f"{base}.{node.module}" if node.module else base


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _class_privates(cls: ast.ClassDef) -> set[str]:
    """The private names a class defines: its methods and class attributes, and what its methods
    set on self (or cls)."""
    out = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_self(node.value):
            out.add(node.attr)
    return {n for n in out if _private(n)}


def _package_modules(root: Path) -> dict[str, _Module]:
    modules = {}
    for folder, package in PACKAGE_FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            name = ".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))
            modules[name] = _Module(name, path)
    return modules


def private_name_uses(root: Path) -> list[tuple[str, str]]:
    """Every use, in a module of the package under ``root``, of a private name it does not define,
    as ``(where and what, the name)``: ``from m import _x``; ``expr._x`` where the module defines
    no ``_x`` (through ``self`` and ``cls`` too), or where ``expr`` is not ``self`` or ``cls`` and
    a class of a package module it imports from has an ``_x`` too; ``super()._x`` where no base
    class is the module's own; and in a class, a private name of a base class in another module
    of the package (used through ``self``, ``cls`` or ``super()``, or overridden)."""
    modules = _package_modules(root)

    def resolve(module: _Module, base: ast.expr) -> tuple[_Module, ast.ClassDef] | None:
        """The package class a base class expression names (None: another library's)."""
        for _ in range(10):  # through re-exports
            if not isinstance(base, ast.Name):
                return None
            if base.id in module.classes:
                return module, module.classes[base.id]
            source = module.imports.get(base.id)
            if source is None or source[0] not in modules:
                return None
            module, base = modules[source[0]], ast.Name(source[1])
        return None

    def inherited(module: _Module, cls: ast.ClassDef) -> set[str]:
        """The private names of the package classes ``cls`` derives from, in other modules."""
        out: set[str] = set()
        todo = [found for b in cls.bases if (found := resolve(module, b)) is not None]
        while todo:
            owner, base = todo.pop()
            if owner is not module:
                out |= _class_privates(base)
            todo += [found for b in base.bases if (found := resolve(owner, b)) is not None]
        return out

    def imported(module: _Module) -> dict[str, str]:
        """The private names of the classes of the package modules ``module`` imports from."""
        out: dict[str, str] = {}
        for source in sorted({m for m, _ in module.imports.values()} & modules.keys() - {module.name}):
            for cls in modules[source].classes.values():
                out.update(dict.fromkeys(_class_privates(cls), source))
        return out

    found: list[tuple[str, str]] = []

    def visit(module: _Module, node: ast.AST, cls: ast.ClassDef | None, foreign: set[str]) -> None:
        theirs = names_of[module.name]
        where = f"{module.path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name):
                    found.append((f"{where}: from {module.absolute(node)} import {alias.name}", alias.name))
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            name, value = node.attr, node.value
            if _is_super(value):
                own_base = cls is not None and any(
                    isinstance(b, ast.Name) and b.id in module.classes for b in cls.bases
                )
                if name in foreign or not own_base:
                    found.append((f"{where}: super().{name}, a private name of a base class", name))
            elif _is_self(value) and name in foreign:
                found.append((f"{where}: {ast.unparse(node)}, a private name of a base class", name))
            elif name not in module.defined:
                found.append((f"{where}: {ast.unparse(node)}, not defined in this module", name))
            elif not _is_self(value) and name in theirs:
                # the module's own name, but also one of a class it imports: most likely its object's
                text = f"{ast.unparse(node)}, a private name of a class of {theirs[name]}"
                found.append((f"{where}: {text}", name))
        elif isinstance(node, ast.ClassDef):
            cls, foreign = node, inherited(module, node)
            for name in sorted(_class_privates(node) & foreign):
                found.append((f"{where}: class {node.name} overrides its base class's {name}", name))
        for child in ast.iter_child_nodes(node):
            visit(module, child, cls, foreign)

    names_of = {name: imported(module) for name, module in modules.items()}
    for module in modules.values():
        visit(module, module.tree, None, set())
    return found


def test_no_module_uses_another_modules_private_name() -> None:
    """A name that starts with ``_`` is used only in its own module, in shanghai_env/ and agents/:
    what another module needs has a public name (a function, a method, an attribute, a hook for
    subclasses). Other libraries' underscored names meant for their users and subclasses are in
    ALLOWED_PRIVATE, each of them still needed."""
    uses = private_name_uses(ROOT)
    assert [where for where, name in uses if name not in ALLOWED_PRIVATE] == []
    assert sorted(ALLOWED_PRIVATE) == sorted({name for _, name in uses})


def test_the_private_name_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Each kind of use the check above looks for, in a small package of its own."""
    (tmp_path / "agents").mkdir()
    (tmp_path / "shanghai_env").mkdir()
    (tmp_path / "shanghai_env" / "base.py").write_text(
        "class Base:\n"
        "    def __init__(self):\n"
        "        self._state = 0\n"
        "    def _hook(self):\n"
        "        return self._state\n"
        "def _helper():\n"
        "    return 1\n"
    )
    (tmp_path / "shanghai_env" / "user.py").write_text(
        "from .base import Base, _helper\n"
        "class Child(Base):\n"
        "    def _hook(self):\n"
        "        self._state = 2\n"
        "        return super()._hook()\n"
        "class Own:\n"
        "    def __init__(self, other):\n"
        "        self._mine = other._mine\n"
        "def use(obj, base):\n"
        "    return obj._count, base._state\n"
    )
    found = [where for where, _ in private_name_uses(tmp_path)]
    assert found == [
        "shanghai_env/user.py:1: from shanghai_env.base import _helper",
        "shanghai_env/user.py:2: class Child overrides its base class's _hook",
        "shanghai_env/user.py:2: class Child overrides its base class's _state",
        "shanghai_env/user.py:4: self._state, a private name of a base class",
        "shanghai_env/user.py:5: super()._hook, a private name of a base class",
        "shanghai_env/user.py:10: obj._count, not defined in this module",
        "shanghai_env/user.py:10: base._state, a private name of a class of shanghai_env.base",
    ]
