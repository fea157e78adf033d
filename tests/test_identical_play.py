"""Speed work changes no game: fingerprints of seeded play recorded before any optimisation.

Each test plays something seeded (bot games, rollouts from sampled worlds, search decisions,
random play through ``env()``) and hashes everything it produced: the move sequences, the final
states, the searcher's choices and statistics, every observation, mask and reward. The hashes
were recorded from the code before the hot paths were optimised; a faster engine, bot, rollout
or env that plays any move differently, or shows any other bit, fails here.

``python tests/test_identical_play.py`` prints the current fingerprints (to record new ones
after a deliberate change of play).
"""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable

import numpy as np
import pytest

from shanghai_env.actions import action_table
from shanghai_env.agents.arena.runner import play_game
from shanghai_env.agents.base import Agent, Decision, decision_for
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.search import DRAWS_PER_PLAYER, SearchBot, play_out
from shanghai_env.engine import Game
from shanghai_env.worlds import WorldSampler


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _state(game: Game) -> tuple[object, ...]:
    """Everything a game holds that play changes (hidden cards and pile orders included)."""
    return (
        game.deal,
        int(game.phase),
        game.to_act,
        game.turn_player,
        game.move_count,
        game.scores,
        [tuple(r.scores) for r in game.deal_results],
        [(r.out_player, r.blind) for r in game.deal_results],
        game.hands,
        game.stock,
        game.discard,
        [[(m.places, m.cards) for m in melds] for melds in game.table],
        game.picked_up,
        game.buys_left,
        game.down,
    )


def bot_games() -> str:
    """Whole games of greedy and planner bots (move names, scores) at 3, 4, 6 and 8 players."""
    out = []
    for n, seed, kind in (
        (3, 1, "planner"),
        (4, 2, "planner"),
        (4, 3, "greedy"),
        (6, 4, "planner"),
        (8, 5, "greedy"),
    ):
        bot = PlannerBot if kind == "planner" else GreedyBot
        agents: list[Agent] = [bot(seed=seed * 10 + q) for q in range(n)]
        game = Game(num_players=n, contracts=(1, 4, 5, 7, 9, 10))
        record = play_game(game, agents, seed=seed, record=True)
        assert record.record is not None
        out.append((record.scores, record.moves, record.record["deals"], _state(game)))
    return _digest(out)


def rollouts(policy: type[PlannerBot] | type[GreedyBot]) -> str:
    """play_out from sampled worlds (coupled draws and plain), final states and move counts."""
    out = []
    for n, seed in ((3, 11), (4, 12), (6, 13), (8, 14)):
        game = Game(num_players=n, contracts=(2, 6, 8))
        bots = [PlannerBot(seed=q) for q in range(n)]
        table = action_table(game.rules)
        game.reset(seed)
        rng = np.random.default_rng(seed)
        rollout_bots = [policy() for _ in range(n)]
        steps = 0
        while not game.game_over and steps < 400:
            p = game.to_act
            if steps % 37 == 5:
                view = game.view(p)
                world = WorldSampler(view, game.rules).sample(rng)
                deal = len(world.deal_results)
                seeds = [int(s) for s in rng.integers(1 << 62, size=n)]
                draws = rng.random((n, DRAWS_PER_PLAYER)) if steps % 2 else None
                counters = [0] * n
                scores, moves = play_out(world, rollout_bots, seeds, game.rules, table, deal, draws, counters)
                out.append((scores, moves, counters, _state(world)))
            game.apply(table.decode(bots[p].act(decision_for(game, p, table))))
            steps += 1
    return _digest(out)


def search_games() -> str:
    """Games with a searcher in one seat: its moves, choices and statistics."""
    out = []
    for n, seed, policy in ((3, 21, "planner"), (4, 22, "greedy")):
        searcher = SearchBot(seed=seed, worlds=4, round_worlds=2, rollout_policy=policy)
        agents: list[Agent] = [searcher] + [PlannerBot(seed=q) for q in range(1, n)]
        record = play_game(Game(num_players=n, contracts=(1, 3)), agents, seed=seed, record=True)
        assert record.record is not None
        s = searcher.stats
        assert s.searched > 0 and s.rollouts > 0
        out.append(
            (record.record["deals"], record.scores, s.searched, s.changed, s.rollouts, s.rollout_moves)
        )
    return _digest(out)


def search_decisions() -> str:
    """One searcher's decisions (every decision kind searched) along a planner game."""
    from shanghai_env.agents.bots.search import DECISIONS

    game = Game(num_players=4, contracts=(5,))
    table = action_table(game.rules)
    bots = [PlannerBot(seed=q) for q in range(4)]
    searcher = SearchBot(seed=31, worlds=4, round_worlds=4, decisions=DECISIONS)
    game.reset(31)
    out = []
    while not game.game_over and len(out) < 25:
        p = game.to_act
        decision = decision_for(game, p, table)
        if p == 1:
            out.append(
                (searcher.act(Decision(decision.view, table, game.rules)), searcher.stats.rollout_moves)
            )
        game.apply(table.decode(bots[p].act(decision)))
    return _digest(out)


def env_play() -> str:
    """Random legal play through env(): every observation, mask, reward, termination and info."""
    import shanghai_env

    out = []
    for n in (3, 4, 8):
        env = shanghai_env.env(num_players=n, contracts=(1, 7, 9))
        env.reset(seed=n)
        rng = random.Random(n)
        h = hashlib.sha256()
        for step, agent in enumerate(env.agent_iter(3000)):
            obs, reward, term, trunc, info = env.last()
            h.update(obs["observation"].tobytes())
            h.update(obs["action_mask"].tobytes())
            h.update(
                repr(
                    (
                        agent,
                        reward,
                        term,
                        trunc,
                        sorted((k, v) for k, v in info.items() if k != "action_mask"),
                    )
                ).encode()
            )
            if step % 50 == 0:
                h.update(env.unwrapped.state().tobytes())
            action = None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
            env.step(action)
        out.append(h.hexdigest())
    return _digest(out)


def meter_answers() -> str:
    """Distances and outs of the bots' contract meter on random hands of every contract and gap."""
    from shanghai_env.agents.bots.contract import ContractMeter

    rng = random.Random(7)
    out = []
    for contract in range(1, 11):
        for gap in (0, 1, 2):
            meter = ContractMeter(contract, gap)
            for _ in range(150):
                decks = rng.choice([2, 3])
                ranks = rng.sample(range(13), rng.randint(4, 13))
                suits = rng.sample(range(4), rng.randint(1, 4))
                pool = [s * 13 + r for s in suits for r in ranks] * decks + [52] * rng.randint(0, decks)
                hand = [0] * 53
                for c in rng.sample(pool, min(len(pool), rng.randint(6, 16))):
                    hand[c] += 1
                out.append((meter.distance(hand), meter.analyse(hand)))
    return _digest(out)


FINGERPRINTS: dict[str, tuple[Callable[[], str], str]] = {
    "meter": (meter_answers, "898c1d7436fcaffe"),
    "bot_games": (bot_games, "4f37c0c94f4aa587"),
    "planner_rollouts": (lambda: rollouts(PlannerBot), "0c4b107726d7bb9d"),
    "greedy_rollouts": (lambda: rollouts(GreedyBot), "195408cc7ce08be2"),
    "search_games": (search_games, "3d6bf59801bf2aa6"),
    "search_decisions": (search_decisions, "a53bea85bf30144d"),
    "env_play": (env_play, "14f7fa94520648c8"),
}


@pytest.mark.parametrize("name", list(FINGERPRINTS))
def test_play_is_unchanged(name: str) -> None:
    compute, expected = FINGERPRINTS[name]
    assert compute() == expected


if __name__ == "__main__":
    for key in sys.argv[1:] or FINGERPRINTS:
        print(f"{key}: {FINGERPRINTS[key][0]()}")
