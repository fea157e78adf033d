"""
# Shanghai Rummy, single-agent view (Gymnasium)

One *learning seat* plays against opponents that implement :class:`shanghai_env.decision.Agent`
(heuristic bots, frozen trained models, the learner's own past selves). Every other seat's
moves, buy offers included, are played inside :meth:`SingleAgentEnv.step`, so the learner only
ever sees its own decisions: in its own turns and whenever it is offered a declined upcard.

| | |
|---|---|
| Creation | `SingleAgentEnv(opponents, contracts=(1,), num_players=4, ...)` |
| Actions | `Discrete(N)`: the AEC env's action table (`docs/actions.md`) |
| Observation | `Box(int8, (L,))`: `ObservationEncoder`, seen from the learner's seat |
| Mask | `action_masks()` (sb3-contrib's MaskablePPO), also `info["action_mask"]` |
| Episode | one game (`contracts` deals); the learner's seat is random or fixed |

## Opponents

``opponents`` is either a sequence of ``num_players - 1`` agents, seated clockwise from the
learner (``opponents[0]`` plays the seat to the learner's left), or a factory
``factory(rng) -> sequence of agents`` called at every reset with the episode's
``numpy.random.Generator`` (self-play pools draw their opponents there). ``None`` seats
uniformly random legal players. Every opponent is ``reset(seed)`` at every episode with a seed
drawn from the env's seeded generator, so ``reset(seed=s)`` fixes the game, the learner's
seat and every opponent's play. Opponents see only what :func:`~shanghai_env.decision.decision_for`
shows them.

## Rewards

The AEC env's rewards (:func:`shanghai_env.aec.step_rewards`, one definition for both):
``reward="deal"`` gives ``-deal score / 100`` when a deal ends, ``"win"`` +1/-1 at the game's
end. A step's reward is everything the learner accumulated since its previous action: the
deals that ended on its own move, on the opponents' moves that followed, and the game's end.
Over an episode the rewards add up to the AEC env's cumulative reward of that seat.

Optional shaping (off by default): ``potential(game, seat) -> float`` adds
``gamma * potential(s') - potential(s)`` between consecutive decisions of the learner, with
potential 0 in the terminal state. Potential-based shaping (Ng, Harada and Russell, 1999)
leaves the optimal policies unchanged; the shaping part of a step is in ``info["shaping"]``.

## Episode end: a per-deal move cap

A deal between random players can last for ever (the discard pile is reshuffled into the stock
again and again). After ``max_moves_per_deal`` moves of all players in one deal (default 3000,
as in :mod:`agents.runner`, so training and evaluation end deals alike) the deal is ended with
:meth:`~shanghai_env.engine.Game.abandon_deal`, as an empty stock ends it: nobody is out and
everybody scores the cards in hand. That is a real, scored end of the deal, so the episode
*terminates* and the learner is charged for its hand as in evaluation. ``max_steps`` (default
``None``) additionally truncates an episode after that many learner actions.

An action the mask forbids (a policy without masks, or the env checkers' random samples) ends
the episode at once with reward ``illegal_reward`` (-1) and ``info["illegal_action"] = True``,
like the AEC env's ``TerminateIllegalWrapper``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import action_table
from .aec import REWARD_MODES, step_rewards
from .decision import Agent, Decision, decision_for
from .engine import Game
from .moves import Move
from .observation import ObservationEncoder
from .rules import Rules

DEFAULT_MAX_MOVES_PER_DEAL = 3000  # the tournament's cap (agents/runner.py)
OpponentFactory = Callable[[np.random.Generator], Sequence[Agent]]
Potential = Callable[[Game, int], float]
_SEED_LIMIT = 2**63


class UniformRandomAgent:
    """The default opponent: a uniformly random legal action from a seeded generator."""

    name = "uniform"

    def __init__(self) -> None:
        self.rng = np.random.default_rng()

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        return legal[int(self.rng.integers(len(legal)))]


class SingleAgentEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learning seat against agents; see the module docstring for the full description."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012  # gymnasium's instance attribute

    def __init__(
        self,
        opponents: Sequence[Agent] | OpponentFactory | None = None,
        *,
        num_players: int = 4,
        contracts: Sequence[int] = (1,),
        reward: str = "deal",
        learner_seat: int | None = None,
        max_moves_per_deal: int = DEFAULT_MAX_MOVES_PER_DEAL,
        max_steps: int | None = None,
        potential: Potential | None = None,
        gamma: float = 0.99,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        **rule_options: Any,
    ) -> None:
        self.rules = Rules(num_players=num_players, contracts=tuple(contracts), **rule_options)
        n = self.rules.num_players
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if learner_seat is not None and not (isinstance(learner_seat, int) and 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None (random) or a seat 0..{n - 1}, got {learner_seat!r}")
        if max_moves_per_deal < 1:
            raise ValueError(f"max_moves_per_deal must be >= 1, got {max_moves_per_deal}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be None or >= 1, got {max_steps}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.reward_mode = reward
        self.fixed_seat = learner_seat
        self.max_moves_per_deal = int(max_moves_per_deal)
        self.max_steps = max_steps
        self.potential = potential
        self.gamma = float(gamma)
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.set_opponents(opponents)

        self.table = action_table(self.rules)
        self.encoder = ObservationEncoder(self.rules)
        self._action_of: dict[Move, int] = {self.table.decode(a): a for a in range(self.table.size)}
        self.action_space = spaces.Discrete(self.table.size)
        self.observation_space = spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.int8)
        self.game = Game(self.rules)
        self.learner = 0
        self.agents: list[Agent | None] = [None] * n
        self._mask = np.zeros(self.table.size, dtype=np.int8)
        self._done = True

    # --- opponents ---------------------------------------------------------------------------

    def set_opponents(self, opponents: Sequence[Agent] | OpponentFactory | None) -> None:
        """Replace the opponents (a sequence or a factory); takes effect at the next reset."""
        n = self.rules.num_players
        if opponents is None:
            fixed: list[Agent] = [UniformRandomAgent() for _ in range(n - 1)]
            self._factory: OpponentFactory | None = None
            self._fixed = fixed
        elif callable(opponents) and not isinstance(opponents, Agent):
            self._factory = opponents
            self._fixed = []
        else:
            fixed = list(opponents)
            if len(fixed) != n - 1 or not all(isinstance(a, Agent) for a in fixed):
                raise ValueError(f"opponents must be {n - 1} agents (name, reset, act) or a factory(rng)")
            self._factory = None
            self._fixed = fixed

    def _draw_opponents(self, rng: np.random.Generator) -> list[Agent]:
        if self._factory is None:
            return self._fixed
        drawn = list(self._factory(rng))
        if len(drawn) != self.rules.num_players - 1:
            raise ValueError(
                f"the opponent factory returned {len(drawn)} agents, need {self.rules.num_players - 1}"
            )
        return drawn

    # --- gymnasium API -----------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new game; ``reset(seed=s)`` deals the AEC env's game for seed ``s``."""
        super().reset(seed=seed)
        rng = self.np_random
        n = self.rules.num_players
        game_seed = seed if seed is not None else int(rng.integers(_SEED_LIMIT))
        self.learner = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(n))
        opponents = self._draw_opponents(rng)
        self.agents = [None] * n
        for k, agent in enumerate(opponents):
            agent.reset(int(rng.integers(_SEED_LIMIT)))
            self.agents[(self.learner + 1 + k) % n] = agent
        self.game.reset(game_seed)
        self.game_seed = game_seed
        self._deals_seen = 0
        self._deal_start = 0
        self._steps = 0
        self._capped = 0
        self._done = False
        self._pending = self._play_others()
        self._phi = self._potential()
        info = {"learner_seat": self.learner, "game_seed": game_seed}
        return self._observe(), self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then every other seat until the learner acts again."""
        if self._done:
            raise RuntimeError("the episode is over: call reset() first")
        a = (
            int(np.asarray(action).reshape(-1)[0])
            if not isinstance(action, (int, np.integer))
            else int(action)
        )
        self._steps += 1
        info: dict[str, Any] = {}
        if not 0 <= a < self.table.size or not self._mask[a]:
            self._done = True
            self._mask = np.zeros(self.table.size, dtype=np.int8)
            info["illegal_action"] = True
            return self._observe(), self.illegal_reward + self._take_pending(), True, False, self._info(info)
        game = self.game
        game.apply(self.table.decode(a))
        reward = self._take_pending() + self._collect()
        reward += self._play_others()
        terminated = game.game_over
        truncated = not terminated and self.max_steps is not None and self._steps >= self.max_steps
        if self.potential is not None:
            phi = 0.0 if terminated else self._potential()
            shaping = self.gamma * phi - self._phi
            self._phi = phi
            info["shaping"] = shaping
            reward += shaping
        if terminated or truncated:
            self._done = True
            info.update(self._final_info())
        return self._observe(), float(reward), terminated, truncated, self._info(info)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (all False once the episode is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        """``"ansi"``: the table as text, every hand shown."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        return self.game.render()

    # --- the other seats ---------------------------------------------------------------------

    def _play_others(self) -> float:
        """Play every other seat (and cap long deals) until the learner must act or the game ends."""
        game = self.game
        reward = 0.0
        while True:
            if game.game_over:
                break
            if game.move_count - self._deal_start >= self.max_moves_per_deal:
                game.abandon_deal()
                self._capped += 1
                reward += self._collect()
                continue
            p = game.to_act
            if p == self.learner:
                break
            agent = self.agents[p]
            if agent is None:  # pragma: no cover - every other seat is filled at reset
                raise RuntimeError(f"no agent in seat {p}")
            decision = decision_for(game, p, self.table, self.encoder)
            action = agent.act(decision)
            try:
                game.apply(self.table.decode(action))
            except (TypeError, ValueError) as err:
                raise ValueError(f"opponent {agent.name!r} in seat {p} played {action!r}: {err}") from None
            reward += self._collect()
        self._mask = self._build_mask()
        return reward

    def _collect(self) -> float:
        """The learner's reward for deals (and the game) that ended since the last call."""
        game = self.game
        if len(game.deal_results) == self._deals_seen:
            return 0.0
        new = game.deal_results[self._deals_seen :]
        self._deals_seen = len(game.deal_results)
        self._deal_start = game.move_count
        return step_rewards(game, new, self.reward_mode)[self.learner]

    def _take_pending(self) -> float:
        pending, self._pending = self._pending, 0.0
        return pending

    # --- observations ------------------------------------------------------------------------

    def _build_mask(self) -> np.ndarray:
        mask = np.zeros(self.table.size, dtype=np.int8)
        game = self.game
        if not game.game_over and game.to_act == self.learner:
            action_of = self._action_of
            mask[[action_of[m] for m in game.legal_moves()]] = 1
        return mask

    def _observe(self) -> np.ndarray:
        return self.encoder.encode(self.game, self.learner)

    def _potential(self) -> float:
        return float(self.potential(self.game, self.learner)) if self.potential is not None else 0.0

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        info["action_mask"] = self._mask
        return info

    def _final_info(self) -> dict[str, Any]:
        game = self.game
        scores = list(game.scores)
        low = min(scores)
        winners = [p for p, s in enumerate(scores) if s == low]
        return {
            "game_scores": scores,
            "score": scores[self.learner],
            "win": 1.0 / len(winners) if self.learner in winners else 0.0,
            "capped_deals": self._capped,
        }
