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


def _reference_features(extractor: RummyFeatures, observations: torch.Tensor) -> torch.Tensor:
    """RummyFeatures' features written plainly, part by part from slices and sums of the observation
    (as the shipped model's were first computed): what forward() and nonzero() must give, to the bit."""
    from shanghai_env.agents.learned.nets.features import _count_parts, _ring

    x = observations.flatten(1).float()
    b, n, u = x.shape[0], extractor.n, extractor.upcard
    hand = x[:, :52].reshape(b, 4, 13)
    up = x[:, u : u + 52].reshape(b, 4, 13)
    has_up = x[:, u : u + 53].sum(1)
    melds = x[:, extractor.table[0] : extractor.table[1]].reshape(b, -1, 112)
    on_table = melds[:, :, :52].sum(1)
    on_table[:, 0::13] += melds[:, :, 52:56].sum(1)
    picked = x[:, extractor.picked : extractor.picked + n * 53].reshape(b, n, 53)[:, 1:, :52]
    seen = (x[:, extractor.discards : extractor.discards + 52] + on_table + picked.sum(1)).reshape(b, 4, 13)
    counts = _count_parts(x, u)
    held = (hand > 0).float()
    rank_held = counts["rank_counts"][0].unsqueeze(1).expand(b, 4, 13)
    rank_seen = seen.sum(1).unsqueeze(1).expand(b, 4, 13)
    near1, near2 = held @ _ring(1), held @ _ring(2)
    points = extractor.points
    per_card = [counts["held_rank"][0], held * rank_seen, held * points, held * near1, held * near2]
    per_card += [(held * rank_held == 1).float(), seen, rank_held, rank_seen]
    of_upcard = torch.stack([rank_held, rank_seen, near1, near2, points.expand(b, 4, 13), hand], dim=1)
    up_facts = [(up.unsqueeze(1) * of_upcard).sum((2, 3)), (has_up * x[:, 52]).unsqueeze(1)]
    up_facts.append(has_up.unsqueeze(1))
    parts = [x, *(p.flatten(1) for p, _ in counts.values()), torch.stack(per_card, 1).flatten(1)]
    parts += [torch.cat(up_facts, 1), picked.reshape(b, n - 1, 4, 13).sum(2).flatten(1)]
    return torch.cat(parts, 1) / extractor.divisors


@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_rummy_features_are_the_plain_features_to_the_bit_dense_and_sparse(num_players: int) -> None:
    """forward() (one product for the sums, each fact written in place) and nonzero() (numpy, through
    the observation's nonzero entries) give the plainly written features, every bit."""
    rules = Rules(num_players=num_players, contracts=(1, 2, 3))
    encoder = ObservationEncoder(rules)
    extractor = RummyFeatures(_space(encoder), num_players=num_players, contracts=(1, 2, 3))
    positions = _positions(rules, seed=10 + num_players, every=3)
    obs = np.stack([encoder.encode(game, seat) for game, seat in positions])
    expected = _reference_features(extractor, torch.as_tensor(obs))
    assert torch.equal(extractor(torch.as_tensor(obs)), expected)
    for rows in (obs, obs[:1], obs.astype(np.float32)):  # int8 or float32, any batch
        found = extractor.nonzero(rows)
        dense = expected[: len(rows)].numpy()
        at = np.flatnonzero(dense != 0)
        assert np.array_equal(found.counts, (dense != 0).sum(1))
        assert np.array_equal(found.cols, at % dense.shape[1])
        assert np.array_equal(found.values, dense.reshape(-1)[at])
