"""Derived inputs: the hand analysis a rummy player does, appended to the observation.

A network can read which card to keep off the observation only by rediscovering, from raw
counts, how far the hand is from the contract and which cards would bring it closer; for the
full game's runs that is where cloning fails (docs/training.md). This module computes those
facts once, with the planner's hand analysis (:mod:`shanghai_env.agents.bots.contract`,
:class:`~shanghai_env.agents.bots.planner.PlannerBot`), from the player's own view only
(:meth:`shanghai_env.engine.Game.view`: their hand and what everybody saw), so they never
depend on a hidden card.

The block (``DERIVED_SIZE`` = 53 x 6 + 7 floats, about -1..1; all zero while going down and at
the game's end) follows the observation:

- per card kind 0..52 (the joker last): copies held / 2; before going down, for each kind it
  may discard, the distance to the contract after discarding it / 8, the live outs after / 20
  and the planner's discard score / 20 (lower: better to discard); once down, the planner's
  value of throwing it away / 50 (higher: better); the danger of discarding it (what it would
  give the players after this one) / 10;
- then: down, the distance now / 8, the live outs now / 20, the change of distance if the upcard
  on offer were taken / 8, whether taking and whether buying it could help (the planner's
  ``upcard_matters``), and the risk that an opponent goes out soon.

:class:`DerivedSingleAgentEnv` is the single-agent env with this block after its observation
(a ``float32`` Box); :class:`DerivedObservation` wraps the PettingZoo AEC env the same way, for
any library that trains on it (RLlib, Tianshou, ...); :func:`derived_input` builds the same
vector for a tournament decision, so a model trained on it plays anywhere
(:class:`~shanghai_env.agents.learned.model.ModelAgent`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from shanghai_env.agents.bots.handtools import plus, unseen_counts
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.cards import card_points
from shanghai_env.engine import Phase, PlayerView
from shanghai_env.rules import Rules
from shanghai_env.single_agent import SingleAgentEnv

PER_CARD = 6
GLOBAL = 7
DERIVED_SIZE = 53 * PER_CARD + GLOBAL
_POINTS = np.array([card_points(c) for c in range(53)], dtype=np.float32) / 50


class _Analyst(PlannerBot):
    """The planner's estimates, without its moves."""

    def block(self, view: PlayerView, rules: Rules) -> np.ndarray:
        out = np.zeros(DERIVED_SIZE, dtype=np.float32)
        if view.phase in (Phase.GAME_OVER, Phase.GOING_DOWN) or not any(view.hand):
            return out  # (going down, the placements left follow from the contract: nothing to weigh)
        self.rules = rules
        per = out[: 53 * PER_CARD].reshape(53, PER_CARD)
        per[:, 0] = np.asarray(view.hand, dtype=np.float32) / 2
        danger = self._danger(view)
        per[:, 5] = np.asarray(danger, dtype=np.float32) / 10
        me = view.player
        g = out[53 * PER_CARD :]
        meter = self.meter(view.contract)
        if view.down[me]:
            g[0] = 1.0
            for c, v in self.down_discard_values(view, danger=danger).items():
                per[c, 4] = v / 50
        else:
            for c, (score, d, live) in self.discard_terms(view, danger=danger).items():
                per[c, 1:4] = (d / 8, live / 20, score / 20)
            d_now, outs = meter.analyse(view.hand)
            g[1] = d_now / 8
            g[2] = self._live(outs, unseen_counts(view)) / 20
            if view.upcard >= 0:
                g[3] = (meter.distance(plus(view.hand, view.upcard)) - d_now) / 8
        if view.upcard >= 0:
            g[4] = float(self.upcard_matters(view, buying=False))
            g[5] = float(self.upcard_matters(view, buying=True))
        g[6] = self._risk(view)
        return out


_ANALYST = _Analyst()


def derived_block(view: PlayerView, rules: Rules) -> np.ndarray:
    """The derived inputs of one player's view (module docstring), ``float32[DERIVED_SIZE]``."""
    return _ANALYST.block(view, rules)


def derived_input(observation: np.ndarray, view: PlayerView, rules: Rules) -> np.ndarray:
    """The observation followed by the derived block: a derived model's input."""
    return np.concatenate([observation.astype(np.float32), derived_block(view, rules)])


def _extended_box(base: spaces.Space[Any]) -> spaces.Box:
    if not isinstance(base, spaces.Box):
        raise TypeError(f"the observation space to extend is a Box, got {type(base).__name__}")
    low = np.concatenate([base.low.astype(np.float32), np.full(DERIVED_SIZE, -np.inf, np.float32)])
    high = np.concatenate([base.high.astype(np.float32), np.full(DERIVED_SIZE, np.inf, np.float32)])
    return spaces.Box(low, high, dtype=np.float32)


class DerivedObservation(BaseWrapper):
    """A PettingZoo AEC env of this package (``shanghai_env.env()`` or ``raw_env()``, wrapped or
    not) whose every ``observe(agent)["observation"]`` is followed by the derived block of that
    agent's own view: ``float32[L + DERIVED_SIZE]``. The action mask, rewards, steps and everything
    else are the env's::

        from shanghai_env.agents.learned.derived import DerivedObservation
        env = DerivedObservation(shanghai_env.env(num_players=4))
    """

    def __init__(self, env: Any) -> None:
        base: Any = getattr(env, "unwrapped", None)
        if not hasattr(base, "game") or not hasattr(base, "_seat_of"):
            raise TypeError(f"DerivedObservation wraps this package's AEC env, got {type(env).__name__}")
        super().__init__(env)
        self._base: Any = base
        self._last: dict[Any, tuple[np.ndarray, np.ndarray]] = {}  # agent: (env's array, extended)
        self._spaces: dict[str, spaces.Dict] = {}
        for agent in base.possible_agents:
            space = base.observation_space(agent)
            self._spaces[agent] = spaces.Dict(
                {"observation": _extended_box(space["observation"]), "action_mask": space["action_mask"]}
            )

    def observation_space(self, agent: Any) -> spaces.Space[Any]:
        space = self._spaces.get(agent)
        return space if space is not None else self.env.observation_space(agent)

    def observe(self, agent: Any) -> Any:
        obs = self.env.observe(agent)
        seat = self._base._seat_of.get(agent)
        if not isinstance(obs, dict) or seat is None:
            return obs
        # The env hands out the same observation array for repeated calls in one state (its
        # wrappers observe twice a step): the planner's analysis is done once per agent and state.
        plain = obs["observation"]
        last = self._last.get(agent)
        if last is None or last[0] is not plain:
            extended = derived_input(plain, self._base.game.view(seat), self._base.rules)
            extended.flags.writeable = False  # shared by repeated calls, as the env's arrays are
            last = self._last[agent] = (plain, extended)
        return {**obs, "observation": last[1]}


class DerivedSingleAgentEnv(SingleAgentEnv):
    """:class:`~shanghai_env.single_agent.SingleAgentEnv` whose observation is followed by the
    derived block (module docstring): a ``float32`` Box of ``L + DERIVED_SIZE`` values. Everything
    else (actions, masks, rewards, infos, copies) is the single-agent env's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.observation_space = _extended_box(self.observation_space)

    def _extend(self, obs: np.ndarray) -> np.ndarray:
        return derived_input(obs, self.game.view(self.learner), self.rules)

    def _observe(self) -> np.ndarray:  # what reset, step and step_envs return
        return self._extend(super()._observe())
