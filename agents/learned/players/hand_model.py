"""A learned model of the hidden cards: what the others' hands hold, from one seat's observation;
the search draws worlds in proportion to it (:func:`tilted`). See docs/bots.md, "Learned worlds".
"""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np
import torch
from torch import nn

from shanghai_env.agents.learned.players.policy import rules_json
from shanghai_env.cards import NUM_CARD_KINDS
from shanghai_env.engine import Game
from shanghai_env.observation import INT8, ObservationEncoder
from shanghai_env.rules import Rules

HAND_MODEL_FORMAT = "shanghai-hand-model"


class HandModel(nn.Module):
    """Observation of a seat and its unseen shares (:func:`unseen_share`) -> log-probabilities
    ``(B, n - 1, 53)`` of each other seat's hidden cards' kinds (seats in turn order after the
    observer). It learns a correction to the uniform law, which it gives when the correction is 0."""

    def __init__(self, rules: Rules, hidden: int = 256) -> None:
        super().__init__()
        self.rules = rules
        self.hidden = hidden
        self.others = rules.num_players - 1
        self.encoder = ObservationEncoder(rules)  # what it reads (made once: the search asks often)
        size = self.encoder.size
        self.trunk = nn.Sequential(nn.Linear(size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, self.others * NUM_CARD_KINDS)

    def forward(self, obs: torch.Tensor, share: torch.Tensor) -> torch.Tensor:
        correction = self.head(self.trunk(obs.float())).view(-1, self.others, NUM_CARD_KINDS)
        prior = torch.log(share.float().clamp(min=1e-6))[:, None, :]  # no card of a kind: ~0
        return torch.log_softmax(prior + correction, dim=-1)


def hidden_counts(game: Game, me: int) -> np.ndarray:
    """``(n - 1, 53)``: each other seat's cards (turn order after ``me``) that ``me`` cannot see."""
    n = game.rules.num_players
    return np.array(
        [np.subtract(game.hands[(me + d) % n], game.picked_up[(me + d) % n]) for d in range(1, n)],
        dtype=np.float32,
    )


def unseen_share(game: Game, me: int) -> np.ndarray:
    """``(53,)``: each kind's share of the cards ``me`` cannot see (the uniform model's law)."""
    # the unseen cards are the others' hidden ones and the stock (the discards and pickups are seen)
    counts = hidden_counts(game, me).sum(0) + np.bincount(game.stock, minlength=NUM_CARD_KINDS)
    return counts / max(1.0, counts.sum())


def self_play_records(
    rollouts: Any, games: int, seed: int, keep: float = 0.2, deals: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations, hidden counts and unseen shares (:func:`unseen_share`) of about ``keep`` of
    the decisions of ``games`` games of a network in every seat (``rollouts``, a
    :class:`.BatchRollouts`), all games stepped together (one forward pass a step)."""
    rules: Rules = rollouts.rules
    encoder = ObservationEncoder(rules)
    rng = np.random.default_rng(seed)
    live = [Game(rules) for _ in range(games)]
    for game, s in zip(live, rng.integers(2**62, size=games)):
        game.reset(int(s))
    rows = rollouts.net.acting_table()
    obs: list[bytes] = []
    targets: list[np.ndarray] = []
    shares: list[np.ndarray] = []
    with torch.no_grad():
        while live:
            logits, idx, _ = rollouts.scores(live, rows)
            best = logits.argmax(1).numpy()
            for j, game in enumerate(live):
                if rng.random() < keep:
                    obs.append(encoder.encode_bytes(game, game.to_act))
                    targets.append(hidden_counts(game, game.to_act))
                    shares.append(unseen_share(game, game.to_act))
                game.apply(rollouts.table.moves[int(idx[j, best[j]])])
            live = [
                g for g in live if not g.game_over and len(g.deal_results) < (deals or len(rules.contracts))
            ]
    seen = np.frombuffer(b"".join(obs), INT8).reshape(len(obs), -1)
    return seen, np.stack(targets), np.stack(shares)


def cross_entropy(logp: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """Mean over the hidden cards of -log p(card's kind) (nats a card)."""
    return -(logp * counts).sum() / counts.sum().clamp(min=1.0)


def fit(
    rules: Rules,
    obs: np.ndarray,
    counts: np.ndarray,
    shares: np.ndarray,
    seed: int,
    epochs: int = 10,
    batch_size: int = 512,
    lr: float = 1e-3,
    hidden: int = 256,
    valid: float = 0.1,
) -> HandModel:
    """A :class:`HandModel` fitted to the records (cross-entropy of each hidden card's kind), the
    epoch that does best on the last ``valid`` of them (the last games) kept."""
    # held out by games, as the records of one game are alike: it overfits soon
    torch.manual_seed(seed)
    model = HandModel(rules, hidden)
    optim = torch.optim.Adam(model.parameters(), lr=lr)
    t_obs, t_counts = torch.from_numpy(obs.copy()), torch.from_numpy(counts)
    t_share = torch.from_numpy(shares)
    cut = len(t_obs) - int(valid * len(t_obs))
    gen = torch.Generator().manual_seed(seed)
    best, kept = float("inf"), copy.deepcopy(model.state_dict())
    for _ in range(epochs):
        order = torch.randperm(cut, generator=gen)
        for start in range(0, len(order), batch_size):
            mb = order[start : start + batch_size]
            loss = cross_entropy(model(t_obs[mb], t_share[mb]), t_counts[mb])
            optim.zero_grad()
            loss.backward()
            optim.step()
        if cut < len(t_obs):
            with torch.no_grad():
                held = float(cross_entropy(model(t_obs[cut:], t_share[cut:]), t_counts[cut:]))
            if held < best:
                best, kept = held, copy.deepcopy(model.state_dict())
    if cut < len(t_obs):
        model.load_state_dict(kept)
    return model.eval()


def save_hand_model(path: str, model: HandModel, meta: dict[str, Any] | None = None) -> None:
    torch.save(
        {
            "format": HAND_MODEL_FORMAT,
            "rules": rules_json(model.rules),
            "hidden": model.hidden,
            "state_dict": model.state_dict(),
            "meta": meta or {},
        },
        path,
    )


def load_hand_model(path: str | os.PathLike[str]) -> HandModel:
    """A saved :class:`HandModel`; ValueError for a file that is not one."""
    try:
        data = torch.load(path, weights_only=True)
    except Exception as err:  # torch raises many kinds for a file that is not its own
        raise ValueError(
            f"{os.fspath(path)!r} is not a hand model: {str(err).splitlines()[0][:200]}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != HAND_MODEL_FORMAT:
        raise ValueError(f"{os.fspath(path)!r} is not a hand model (no {HAND_MODEL_FORMAT!r} format)")
    saved = data["rules"]
    rules = Rules(num_players=int(saved["num_players"]), contracts=tuple(saved["contracts"]))
    model = HandModel(rules, int(data["hidden"]))
    model.load_state_dict(data["state_dict"])
    return model.eval()


def tilted(
    model: HandModel,
    me: int,
    worlds: list[Game],
    k: int,
    rng: np.random.Generator,
    tilt: float = 1.0,
) -> list[Game]:
    """``k`` of ``worlds`` (uniform draws consistent with ``me``'s view), drawn without replacement with
    probability proportional to the model's likelihood ratio of their hidden cards to the uniform
    one, raised to ``tilt``."""
    # every world shows ``me`` the same observation and leaves the same cards unseen
    obs = np.frombuffer(model.encoder.encode_bytes(worlds[0], me), INT8)
    share = unseen_share(worlds[0], me)
    with torch.no_grad():
        t_share = torch.from_numpy(share)[None]
        logp = model(torch.from_numpy(obs.copy())[None], t_share)[0].double().numpy()  # (n - 1, 53)
    ratio = np.where(share > 0, logp - np.log(np.where(share > 0, share, 1.0)), 0.0)
    logw = np.array([float((hidden_counts(w, me) * ratio).sum()) for w in worlds])
    keys = tilt * logw + rng.gumbel(size=len(worlds))
    return [worlds[i] for i in np.argsort(-keys, kind="stable")[:k]]
