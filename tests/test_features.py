"""The policy's feature extractors: sizes, and card facts that agree with the game they were read from."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch

from shanghai_env.actions import action_table
from shanghai_env.agents.learned.nets.features import CardFeatures, RummyFeatures
from shanghai_env.agents.registry import make_agent
from shanghai_env.decision import decision_for
from shanghai_env.engine import Game
from shanghai_env.observation import ObservationEncoder
from shanghai_env.rules import Rules


def _space(encoder: ObservationEncoder):  # type: ignore[no-untyped-def]
    from gymnasium import spaces

    return spaces.Box(encoder.low, encoder.high, dtype=np.int8)


def _positions(rules: Rules, seed: int, every: int = 7, limit: int = 600) -> list[tuple[Game, int]]:
    """Snapshots of a greedy-bot game (contracts with sets and runs) every few moves."""
    game = Game(rules)
    game.reset(seed=seed)
    table, encoder = action_table(rules), ObservationEncoder(rules)
    bots = [make_agent("greedy") for _ in range(rules.num_players)]
    for i, bot in enumerate(bots):
        bot.reset(seed + i)
    out = []
    for step in range(limit):
        if game.game_over:
            break
        seat = game.to_act
        if step % every == 0:
            out.append((game.clone(), seat))
        game.apply(table.moves[bots[seat].act(decision_for(game, seat, table, encoder))])
    return out


@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_rummy_features_count_the_cards_the_player_can_see(num_players: int) -> None:
    rules = Rules(num_players=num_players, contracts=(1, 2, 3))
    encoder = ObservationEncoder(rules)
    extractor = RummyFeatures(_space(encoder), num_players=num_players, contracts=(1, 2, 3))
    positions = _positions(rules, seed=num_players)
    assert len(positions) > 20
    with_table = with_picked = 0
    for game, seat in positions:
        view = game.view(seat)
        obs = torch.as_tensor(encoder.encode(game, seat)[None])
        parts = extractor.parts(obs)
        assert extractor(obs).shape == (1, extractor.features_dim)
        hand = np.asarray(view.hand[:52])
        seen = np.asarray(view.discard_counts[:52]).copy()
        for melds in view.table:
            for meld in melds:
                for card in meld.cards:
                    if card < 52:
                        seen[card] += 1
                        with_table += 1
        for other in range(num_players):
            if other != seat:
                seen += np.asarray(view.picked_up[other][:52])
                with_picked += sum(view.picked_up[other][:52])
        per_card = parts["per_card"][0].numpy()  # [9, 4, 13]
        np.testing.assert_allclose(per_card[6].reshape(52) * 2, seen)
        by_rank = hand.reshape(4, 13).sum(0)
        np.testing.assert_allclose(per_card[7][0] * 4, by_rank)
        np.testing.assert_allclose(per_card[0].reshape(52) * 4, (hand > 0) * np.tile(by_rank, 4))
        single = (hand > 0) & (np.tile(by_rank, 4) == 1)
        np.testing.assert_array_equal(per_card[5].reshape(52), single.astype(np.float32))
        up = parts["upcard_facts"][0].numpy()
        if view.upcard >= 0 and view.phase.name in ("DRAW", "BUY") and view.upcard < 52:
            assert up[7] == 1 and up[0] * 4 == by_rank[view.upcard % 13]
            assert up[5] * 2 == hand[view.upcard]
        elif view.phase.name not in ("DRAW", "BUY"):
            assert up[7] == 0
    assert with_table > 0 and with_picked > 0  # the positions exercise the table and the picked-up cards


def test_rummy_features_refuse_a_layout_they_were_not_built_for() -> None:
    encoder = ObservationEncoder(Rules(num_players=4, contracts=(1,)))
    with pytest.raises(ValueError, match="observation length"):
        RummyFeatures(_space(encoder), num_players=5, contracts=(1,))


def test_card_features_size() -> None:
    encoder = ObservationEncoder(Rules(num_players=4))
    extractor = CardFeatures(_space(encoder), upcard_start=encoder.slices["upcard_offered"].start)
    obs = torch.zeros((2, encoder.size), dtype=torch.int8)
    assert extractor(obs).shape == (2, encoder.size + 3 * 13 + 3 * 4 + 1 + 52)
