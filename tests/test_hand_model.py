"""The model of the hidden cards: its records hold exactly what the observer cannot see, it learns
something about them, it draws worlds consistent with the view, and a search drawing its worlds
with it is deterministic."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from shanghai_env.agents.base import decision_for  # noqa: E402
from shanghai_env.agents.learned.players.hand_model import (  # noqa: E402
    HandModel,
    cross_entropy,
    fit,
    hidden_counts,
    load_hand_model,
    save_hand_model,
    self_play_records,
    tilted,
    unseen_share,
)
from shanghai_env.agents.learned.players.net_search import DECISIONS, BatchRollouts, NetSearchBot  # noqa: E402
from shanghai_env.agents.learned.players.policy import PolicyAgent  # noqa: E402
from shanghai_env.any_table import encoding_tables  # noqa: E402
from shanghai_env.engine import Game  # noqa: E402
from shanghai_env.models import shipped_path  # noqa: E402
from shanghai_env.rules import Rules  # noqa: E402
from shanghai_env.worlds import WorldSampler  # noqa: E402

RULES = Rules(num_players=3)


@pytest.fixture(scope="module")
def records() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rollouts = BatchRollouts(PolicyAgent(shipped_path("scratch")), RULES)
    return self_play_records(rollouts, games=3, seed=4, keep=0.5, deals=1)


def test_records_hold_what_the_observer_cannot_see(records) -> None:
    obs, counts, shares = records
    assert len(obs) == len(counts) == len(shares) > 50
    assert counts.shape[1:] == (2, 53) and (counts >= 0).all()
    assert np.allclose(shares.sum(1), 1.0)
    # a kind no unseen card has is in no other hand's hidden part
    assert not (counts.sum(1) * (shares == 0)).any()
    game = Game(RULES)
    game.reset(9)
    me = game.to_act
    hidden = hidden_counts(game, me)
    for d in (1, 2):  # the deal: the others' whole hands are hidden
        assert hidden[d - 1].sum() == game.hand_sizes[(me + d) % 3]


def test_the_model_starts_uniform_and_learns(records, tmp_path) -> None:
    obs, counts, shares = records
    untrained = HandModel(RULES)
    torch.nn.init.zeros_(untrained.head.weight)
    torch.nn.init.zeros_(untrained.head.bias)
    t_obs, t_counts, t_share = (
        torch.from_numpy(obs.copy()),
        torch.from_numpy(counts),
        torch.from_numpy(shares),
    )
    with torch.no_grad():
        uniform = float(cross_entropy(untrained(t_obs, t_share), t_counts))
        expected = float(
            -(np.log(np.where(shares > 0, shares, 1.0))[:, None, :] * counts).sum() / counts.sum()
        )
    assert uniform == pytest.approx(expected, rel=1e-4)
    model = fit(RULES, obs, counts, shares, seed=0, epochs=10, batch_size=128)
    with torch.no_grad():
        assert float(cross_entropy(model(t_obs, t_share), t_counts)) < uniform  # on its own records
    path = str(tmp_path / "hands.pt")
    save_hand_model(path, model)
    again = load_hand_model(path)
    with torch.no_grad():
        assert torch.equal(again(t_obs[:4], t_share[:4]), model(t_obs[:4], t_share[:4]))
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="is not a hand model"):
        load_hand_model(str(tmp_path / "bad.pt"))


def test_tilted_worlds_are_worlds_of_the_view(records) -> None:
    obs, counts, shares = records
    model = fit(RULES, obs, counts, shares, seed=0, epochs=2)
    game = Game(RULES)
    game.reset(3)
    for _ in range(7):
        game.apply(game.legal_moves()[0])
    me = game.to_act
    view = game.view(me)
    sampler = WorldSampler(view, RULES)
    assert np.allclose(
        np.bincount(sampler.unseen, minlength=53) / len(sampler.unseen), unseen_share(game, me)
    )
    uniform = [sampler.sample(np.random.default_rng(i)) for i in range(12)]
    chosen = tilted(model, me, uniform, 5, np.random.default_rng(0))
    assert len({id(w) for w in chosen}) == 5 and all(w.view(me) == view for w in chosen)
    again = tilted(model, me, uniform, 5, np.random.default_rng(0))
    assert [id(w) for w in again] == [id(w) for w in chosen]


def test_a_search_with_the_hand_model_is_deterministic(records, tmp_path) -> None:
    obs, counts, shares = records
    path = str(tmp_path / "hands.pt")
    save_hand_model(path, fit(RULES, obs, counts, shares, seed=0, epochs=2))
    table, encoder = encoding_tables(RULES, "table")
    game = Game(RULES)
    game.reset(5)
    agent = PolicyAgent(shipped_path("scratch"))
    decisions = []
    while len(decisions) < 8:
        decision = decision_for(game, game.to_act, table, encoder)
        decisions.append(decision)
        game.apply(table.moves[agent.act(decision)])
    options = {"worlds": 2, "round_worlds": 2, "gate": 1.0, "decisions": DECISIONS, "horizon": 1}
    first = NetSearchBot(agent, seed=7, hand_model=path, **options)  # type: ignore[arg-type]
    second = NetSearchBot(agent, seed=7, hand_model=path, **options)  # type: ignore[arg-type]
    assert [first.act(d) for d in decisions] == [second.act(d) for d in decisions]
    assert first.stats.searched > 0
    four = NetSearchBot(agent, seed=7, hand_model=path, **options)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is for 3 players, not 4"):
        four.hand_model(4)
