"""env()'s wrappers behave exactly as PettingZoo's plain classic wrappers do."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.utils import wrappers

import shanghai_env
from shanghai_env.aec import raw_env


def plain_env(**options: object) -> object:
    env = raw_env(**options)  # type: ignore[arg-type]
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def trace(env: object, seed: int, illegal_at: int | None) -> list[tuple[object, ...]]:
    """Every last() of a seeded random game; at step ``illegal_at`` play a masked-out action."""
    rng = random.Random(seed)
    env.reset(seed=seed)  # type: ignore[attr-defined]
    out: list[tuple[object, ...]] = []
    for i, agent in enumerate(env.agent_iter(max_iter=3000)):  # type: ignore[attr-defined]
        obs, reward, term, trunc, info = env.last()  # type: ignore[attr-defined]
        public_info = repr({k: v for k, v in info.items() if k != "action_mask"})
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
        out.append((public_info, info["action_mask"].tobytes()))
        if term or trunc:
            action = None
        elif i == illegal_at:
            action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        else:
            action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        env.step(action)  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize("illegal_at", [None, 40])
def test_same_trace_as_pettingzoos_wrappers(illegal_at: int | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns on the illegal move
        fast = trace(shanghai_env.env(num_players=4, contracts=(1,)), 3, illegal_at)
        plain = trace(plain_env(num_players=4, contracts=(1,)), 3, illegal_at)
    assert fast == plain
    assert len(fast) > 80
    if illegal_at is not None:
        assert fast[2 * illegal_at + 2][4], "the illegal action ended the game"


def test_wrappers_are_pettingzoos() -> None:
    env = shanghai_env.env()
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agent_selection
