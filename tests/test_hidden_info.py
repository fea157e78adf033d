"""Nothing an agent sees reveals a hidden card: no seed or entropy in any info, and changing the
hidden cards under the same public state leaves every observation and info unchanged."""

from __future__ import annotations

import copy
import gc
import random
import types
from typing import Any

import numpy as np
from helpers import deal_deck

import shanghai_env
from shanghai_env.actions import ActionTable
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.bots.random_agent import RandomAgent
from shanghai_env.decision import Decision, decision_for
from shanghai_env.engine import Game
from shanghai_env.melds import Meld
from shanghai_env.observation import ObservationEncoder
from shanghai_env.single_agent import SingleAgentEnv

AEC_KEYS = {"action_mask", "game_scores", "deals_played", "deal_scores", "capped_deals", "winners"}
SINGLE_KEYS = AEC_KEYS - {"winners"} | {"learner_seat", "score", "win", "shaping", "illegal_action"}


def leaves(value: Any) -> list[Any]:
    """Every scalar inside an info value (tuples and arrays opened)."""
    if isinstance(value, np.ndarray):
        return value.ravel().tolist()
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in leaves(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    return [value]


def check_public(info: dict[str, Any], keys: set[str], secrets: set[int]) -> None:
    for key, value in info.items():
        assert key in keys, f"unexpected info key {key!r}"
        for leaf in leaves(value):
            assert isinstance(leaf, (bool, int, float)), f"{key}: {leaf!r}"
            assert abs(leaf) < 100_000, f"{key} holds {leaf!r}, as large as a seed"
            assert leaf not in secrets or abs(leaf) < 100, f"{key} holds a seed"


def test_no_seed_in_any_aec_info_over_a_game() -> None:
    env = shanghai_env.env(num_players=4, contracts=(1, 2, 3))
    env.reset(seed=123_456_789)
    game = env.unwrapped.game
    secrets = {123_456_789, game.seed_entropy}
    rng = random.Random(0)
    steps = 0
    for _agent in env.agent_iter():
        obs, _reward, term, trunc, info = env.last()
        assert set(info) == AEC_KEYS
        check_public(info, AEC_KEYS, secrets)
        for other in env.infos.values():
            check_public(other, AEC_KEYS, secrets)
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        steps += 1
    assert game.game_over and steps > 300


def test_no_seed_in_any_single_agent_info_over_a_game() -> None:
    env = SingleAgentEnv(contracts=(1, 2, 3))
    _obs, info = env.reset(seed=987_654_321)
    secrets = {987_654_321, env.game.seed_entropy}
    assert env.game_seed == 987_654_321  # for the experimenter, on the env only
    rng = np.random.default_rng(0)
    infos = [info]
    done = False
    while not done:
        _obs, _r, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        infos.append(info)
        done = terminated or truncated
    for info in infos:
        assert set(info) == SINGLE_KEYS
        check_public(info, SINGLE_KEYS, secrets)
    # an unseeded reset draws the game's seed from the env's generator: not in the info either
    _obs, info = env.reset()
    check_public(info, SINGLE_KEYS, {env.game_seed, env.game.seed_entropy})


def two_decks() -> tuple[list[str], list[str]]:
    """Two decks for 4 players, dealer 3, differing only in cards hidden from seats 0 and 3: one
    card of player_1's hand traded with one of player_2's, and two cards deep in the stock."""
    a = deal_deck(4, 3, {0: "7C 7D 7H 9C 9D 9H 2S 3S 4S 5S 6S", 1: "AH", 2: "KD"}, "QS")
    b = a[:]
    # dealer 3: deck card i goes to seat i % 4, so 1 and 2 are the first cards of seats 1 and 2
    b[1], b[2] = a[2], a[1]
    b[60], b[70] = a[70], a[60]  # deep in the stock (the upcard is card 44)
    assert a[1] != a[2] and a[60] != a[70]
    return a, b


def test_hidden_cards_do_not_reach_the_aec_views() -> None:
    envs = [shanghai_env.raw_env(num_players=4, contracts=(1,)) for _ in range(2)]
    for env, deck in zip(envs, two_decks()):
        env.reset(seed=0, options={"deck": deck, "dealer": 3})
    a, b = envs
    assert a.game.hands != b.game.hands and a.game.stock != b.game.stock
    assert not np.array_equal(a.state(), b.state())  # the omniscient state does differ
    script = ["draw", "pass", "pass", "pass", "discard 6S", "take", "discard 5C", "draw", "pass"]
    for name in script:
        for agent in ("player_0", "player_3"):  # seats that hold none of the traded cards
            for key in ("observation", "action_mask"):
                assert np.array_equal(a.observe(agent)[key], b.observe(agent)[key])
            ia, ib = a.infos[agent], b.infos[agent]
            assert ia.keys() == ib.keys() and all(np.array_equal(ia[k], ib[k]) for k in ia)
        for env in envs:
            env.step(env.action_id(name))


def test_hidden_cards_do_not_reach_the_single_agent_view() -> None:
    out = []
    for deck in two_decks():
        env = SingleAgentEnv(contracts=(1,), learner_seat=0)
        obs, info = env.reset(seed=0, options={"deck": deck, "dealer": 3})
        out.append((env, obs, info))
    (a, obs_a, info_a), (b, obs_b, info_b) = out
    assert a.game.hands != b.game.hands
    assert np.array_equal(obs_a, obs_b)
    assert info_a.keys() == info_b.keys() and all(np.array_equal(info_a[k], info_b[k]) for k in info_a)


def test_trading_hidden_cards_mid_game_changes_no_view() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(1, 2))
    env.reset(seed=8)
    rng = random.Random(8)
    for _ in range(120):
        env.step(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))
    twin = copy.deepcopy(env)
    game = twin.game
    # trade a card player_1 holds unseen for one player_2 holds unseen, and reorder the stock
    unseen = [
        [c for c in range(53) if game.hands[p][c] > game.picked_up[p][c] and game.hands[3 - p][c] == 0]
        for p in (1, 2)
    ]
    c1, c2 = unseen[0][0], unseen[1][0]
    game.hands[1][c1] -= 1
    game.hands[1][c2] += 1
    game.hands[2][c2] -= 1
    game.hands[2][c1] += 1
    game.stock.reverse()
    game.forget_caches()
    game.validate()
    twin._obs_cache.clear()
    twin._table = None
    assert not np.array_equal(env.state(), twin.state())
    for agent in ("player_0", "player_3"):
        for key in ("observation", "action_mask"):
            assert np.array_equal(env.observe(agent)[key], twin.observe(agent)[key])
        assert repr(env.infos[agent]) == repr(twin.infos[agent])


# --- what a seated player's Decision can reach ----------------------------------------------------


def reachable(root: object, limit: int = 200_000) -> list[object]:
    """Every object reachable from ``root`` through attributes, slots, containers, closures and
    bound methods (gc.get_referents), not through classes, modules or a function's globals
    (shared by everything: they lead to the whole program, not to this game)."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.CodeType)):
            continue
        seen[id(obj)] = obj
        assert len(seen) < limit, f"more than {limit} objects reachable from a decision"
        if isinstance(obj, types.FunctionType):
            cells = [c.cell_contents for c in obj.__closure__ or () if c.cell_contents is not None]
            stack += [*cells, obj.__defaults__, obj.__kwdefaults__, obj.__dict__]
        elif isinstance(obj, types.CellType):
            stack.append(obj.cell_contents)
        else:
            stack += gc.get_referents(obj)
    return list(seen.values())


def game_parts(game: Game) -> dict[int, str]:
    """The game and every mutable thing it holds (hands, stock, piles, melds...), by id."""
    parts = {id(game): "the Game", id(game.__dict__): "the Game's attributes"}
    for name, value in vars(game).items():
        if not isinstance(value, (list, dict)):
            continue
        parts[id(value)] = f"game.{name}"
        for i, item in enumerate(value if isinstance(value, list) else value.values()):
            if isinstance(item, (list, Meld)):  # a hand, a row of picked-up cards, a seat's melds
                parts[id(item)] = f"game.{name}[{i}]"
            if isinstance(item, list):
                for j, meld in enumerate(item):
                    if isinstance(meld, Meld):
                        parts[id(meld)] = f"game.{name}[{i}][{j}]"
    return parts


def assert_nothing_of_the_game(decision: Decision, game: Game) -> int:
    parts = game_parts(game)
    objects = reachable(decision)
    found = [parts[id(o)] for o in objects if id(o) in parts]
    assert not [o for o in objects if isinstance(o, Game)], "a decision reaches a Game"
    assert found == [], f"a decision reaches {found}"
    return len(objects)


class Keeper:
    """A seated player that keeps every decision it is shown (as a curious player could)."""

    name = "keeper"

    def __init__(self) -> None:
        self.seen: list[Decision] = []
        self.rng = random.Random(0)

    def reset(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, decision: Decision) -> int:
        self.seen.append(decision)
        return self.rng.choice(decision.legal_actions)


def test_a_decision_reaches_nothing_of_the_game() -> None:
    """A Decision (with or without an observation encoder) holds the seat's view and public
    facts only: no path through its attributes, closures or referents leads to the Game, its
    hands, its stock or anything else it holds, before or after the observation is read."""
    for n in (3, 4, 8):
        game = Game(num_players=n, contracts=(1, 5))
        game.reset(n)
        table = ActionTable(game.rules)
        encoder = ObservationEncoder(game.rules)
        rng = random.Random(n)
        for step in range(400):
            if game.game_over:
                break
            p = game.to_act
            if step % 37 == 0:
                for enc in (None, encoder):
                    decision = decision_for(game, p, table, enc)
                    assert assert_nothing_of_the_game(decision, game) > 10
                    if enc is not None:
                        assert np.array_equal(decision.observation, encoder.encode(game, p))
                        assert_nothing_of_the_game(decision, game)
            game.apply(rng.choice(game.legal_moves()))


def test_a_seated_player_keeps_nothing_of_the_game() -> None:
    """The decisions a tournament game shows a player, kept to the game's end."""
    game = Game(num_players=4, contracts=(1,))
    keeper = Keeper()
    agents: list[Any] = [keeper, RandomAgent(), RandomAgent(), RandomAgent()]
    play_game(game, agents, seed=2, encoder=ObservationEncoder(game.rules))
    assert len(keeper.seen) > 20
    parts = game_parts(game)
    for decision in keeper.seen[::10]:
        assert not [o for o in reachable(decision) if isinstance(o, Game) or id(o) in parts]


def test_an_opponent_in_the_single_agent_view_keeps_nothing_of_the_game() -> None:
    keepers = [Keeper() for _ in range(3)]
    env = SingleAgentEnv(keepers, num_players=4, contracts=(1,))
    _, info = env.reset(seed=3)
    rng = random.Random(3)
    for _ in range(60):
        action = rng.choice(np.flatnonzero(info["action_mask"]).tolist())
        _, _, done, _, info = env.step(action)
        if done:
            break
    kept = [d for k in keepers for d in k.seen]
    assert len(kept) > 20
    for decision in kept[::7]:
        assert decision.observation.ndim == 1  # the view gives opponents an encoder
        assert not [o for o in reachable(decision) if isinstance(o, Game)]
