"""The action mask is exact: on thousands of states from seeded random playouts, every
masked-in action is accepted by the engine (on a clone) and masked-out actions are refused.

Every masked-in action is tried. Masked-out actions are sampled: all simple and discard
actions, the near neighbours of every legal action in the table (same meld, other card or
joker, other meld, other seat: the likeliest encoding mistakes) and a few random ids.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

import shanghai_env
from shanghai_env.actions import MELD_BASE, PER_MELD
from shanghai_env.cards import NUM_PLACES, format_cards, full_deck

# (players, contract): single-deal games, so that every contract is reached; several seeds
# per case, since random deals are long and their late states repeat.
CASES = [(4, c) for c in range(1, 11)] + [(3, 2), (3, 7), (6, 5), (6, 9), (8, 3), (8, 10)]
OPTION_CASES = [
    {"exact_contract_melds": False},
    {"joker_swaps": False},
    {"down_players_may_buy": False, "same_suit_run_gap": 0},
]
STATES_PER_PLAYOUT = 200
SEEDS = range(2)
BUY_ID = 2


def playout_states(env, seed: int, steps: int, reset: bool = True) -> Iterator[None]:
    """Seeded play through a raw env, yielding at every state; resets on game end.

    The policy is random but eager: it buys often and prefers going down, laying off and
    swapping whenever it can, so that the states with table moves come early and often.
    """
    rng = random.Random(seed)
    if reset:
        env.reset(seed=seed)
    for _ in range(steps):
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            if not reset:
                return
            seed += 1000
            env.reset(seed=seed)
            continue
        yield
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        table_moves = legal[legal >= MELD_BASE]
        if len(table_moves) and rng.random() < 0.9:
            pool = table_moves
        elif legal[0] == BUY_ID and rng.random() < 0.7:
            pool = legal[:1]
        else:
            pool = legal
        env.step(int(pool[rng.randrange(len(pool))]))


def candidates_out(mask: np.ndarray, rng: random.Random, max_melds: int) -> set[int]:
    size = len(mask)
    legal = np.flatnonzero(mask)
    near = {*range(MELD_BASE), *rng.sample(range(size), 24)}
    for a in legal:
        for d in (1, 13, NUM_PLACES, PER_MELD, max_melds * PER_MELD):
            near.update((int(a) - d, int(a) + d))
    return {a for a in near if 0 <= a < size and not mask[a]}


def check_state(env, rng: random.Random, stats: Counter[str]) -> None:
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    game = env.game
    table = env.action_table
    legal = np.flatnonzero(mask)
    assert len(legal) >= 1, f"{agent} has no legal action"
    assert {table.encode(m) for m in game.legal_moves()} == set(legal.tolist())
    for legal_id in legal:
        move = table.decode(int(legal_id))
        trial = game.clone()
        trial.apply(move)  # must not raise
        stats["in"] += 1
        stats[move.kind.name] += 1
    for a in candidates_out(mask, rng, table.max_melds):
        with pytest.raises(ValueError):
            game.apply(table.decode(a))  # refused before any change
        stats["out"] += 1
    stats["states"] += 1


def run_case(players: int, contract: int, **options) -> Counter[str]:
    stats: Counter[str] = Counter()
    env = shanghai_env.raw_env(num_players=players, contracts=(contract,), max_steps=600, **options)
    for seed in SEEDS:
        rng = random.Random(seed)
        for _ in playout_states(env, seed, STATES_PER_PLAYOUT):
            check_state(env, rng, stats)
        env.game.validate()
    return stats


# Contract cards for the first player of rigged deals: random hands rarely make the long
# runs. Three spare cards keep that player from going out at once, so play goes on.
RIGGED = {
    5: "7C 7D 7H 2S 3S 4S 5S 6S 7S 8S KD 5H 2C",
    7: "AC 2C 3C 4C AD 2D JK 4D 9H TH JH QH KD 5H 2C",
    8: "9C 9D 9H 2S 3S 4S 5S 6S 7S 8S 9S TS JS KD 5H 2C",
    10: "3C 4C JK 6C 7C 3D 4D 5D 6D 7D TH JH QH KH AH KD 5H 2C",
}


def rigged_env(players: int, contract: int, seed: int):
    """A raw env whose first player already holds the contract's cards (as if after buying)."""
    wanted = RIGGED[contract].split()
    rest = Counter(format_cards(full_deck(players)).split())
    rest.subtract(wanted)
    others = sorted(rest.elements())
    random.Random(seed).shuffle(others)
    fill = iter(others)
    dealt, extra = wanted[:11], wanted[11:]
    deck = []
    for i in range(11):  # the dealer is the last seat: player 0 gets cards 0, n, 2n, ...
        deck.append(dealt[i])
        deck += [next(fill) for _ in range(players - 1)]
    deck.append(next(fill))  # the upcard
    deck += extra  # the stock, top first: the extra cards come off first
    deck += list(fill)
    env = shanghai_env.raw_env(num_players=players, contracts=(contract,), max_steps=600)
    env.reset(seed=seed, options={"deck": deck, "dealer": players - 1})
    game = env.game
    for _ in extra:  # as if bought: the cards go from the stock into the hand
        card = game.stock.pop()
        game.hands[0][card] += 1
        game.hand_sizes[0] += 1
    game.validate()
    env._reset_bookkeeping()  # the rigged hand changes the first mask
    return env


def run_rigged(players: int, contract: int) -> Counter[str]:
    stats: Counter[str] = Counter()
    for seed in SEEDS:
        env = rigged_env(players, contract, seed)
        rng = random.Random(seed)
        for _ in playout_states(env, seed, STATES_PER_PLAYOUT, reset=False):
            check_state(env, rng, stats)
        env.game.validate()
    return stats


@pytest.mark.parametrize(("players", "contract"), CASES)
def test_mask_is_exact(players: int, contract: int) -> None:
    stats = run_case(players, contract)
    assert stats["states"] >= 0.95 * len(SEEDS) * STATES_PER_PLAYOUT  # a reset takes a step
    assert stats["out"] > stats["in"]


@pytest.mark.parametrize("options", OPTION_CASES)
@pytest.mark.parametrize("contract", [1, 6, 9])
def test_mask_is_exact_under_rule_options(options, contract: int) -> None:
    stats = run_case(4, contract, **options)
    assert stats["states"] >= 0.95 * len(SEEDS) * STATES_PER_PLAYOUT
    if not options.get("joker_swaps", True):
        assert stats["SWAP"] == 0


@pytest.mark.parametrize("contract", sorted(RIGGED))
@pytest.mark.parametrize("players", [4, 8])
def test_mask_is_exact_in_rigged_long_run_deals(players: int, contract: int) -> None:
    stats = run_rigged(players, contract)
    assert stats["states"] >= 100  # the deal may end early when someone goes out
    assert stats["MELD"] >= 10


def test_every_kind_of_action_was_checked() -> None:
    stats = run_case(4, 1) + run_case(4, 4) + run_rigged(4, 7)
    for kind in ("TAKE", "DRAW", "BUY", "PASS", "DISCARD", "MELD", "LAYOFF", "SWAP"):
        assert stats[kind] > 0, f"no {kind} state reached: {stats}"
    assert run_case(4, 4, exact_contract_melds=False)["FINISH"] > 0


def test_masked_out_action_through_env_changes_nothing() -> None:
    env = shanghai_env.raw_env(num_players=4, contracts=(3,), max_steps=600)
    rng = random.Random(0)
    for _ in playout_states(env, 0, 300):
        agent = env.agent_selection
        obs = env.observe(agent)
        bad = rng.choice(sorted(candidates_out(obs["action_mask"], rng, env.action_table.max_melds)))
        moves_before = env.game.move_count
        with pytest.raises(ValueError):
            env.step(bad)
        assert env.game.move_count == moves_before and env.agent_selection == agent
        assert np.array_equal(env.observe(agent)["observation"], obs["observation"])


if __name__ == "__main__":  # coverage report: which kinds of actions each case checked
    for case in CASES:
        print(case, dict(run_case(*case)))
    for contract in RIGGED:
        print("rigged", contract, dict(run_rigged(4, contract)))
