"""
# Shanghai Rummy, single-agent view (Gymnasium)

One *learning seat* plays against opponents that implement :class:`shanghai_env.decision.Agent`
(heuristic bots, frozen trained models, the learner's own past selves). Every other seat's
moves, buy offers included, are played inside :meth:`SingleAgentEnv.step`, so the learner only
ever sees its own decisions: in its own turns and whenever it is offered a declined upcard.

| | |
|---|---|
| Creation | `SingleAgentEnv(opponents, num_players=4, contracts=(1, ..., 10), ...)` |
| Actions | `Discrete(N)`: the AEC env's action table (`docs/actions.md`) |
| Observation | `Box(int8, (L,))`: `ObservationEncoder`, seen from the learner's seat |
| Mask | `action_masks()` (sb3-contrib's MaskablePPO), also `info["action_mask"]` (read-only) |
| Episode | one game (`contracts` deals); the learner's seat is random or fixed |

Every argument is checked: a wrong type is a TypeError, a value out of range a ValueError,
each naming the argument and what it allows; numpy scalars are accepted. The defaults are the
AEC env's: all ten contracts (so both envs' default observations have the same length L, 2293
for 4 players) and every rule option of docs/rules.md section 7 as a keyword (``joker_points``,
``max_stock_rebuilds``, ...). Training passes its contracts explicitly (``train.py`` defaults
to contract 1).

## Opponents

``opponents`` is either a sequence of ``num_players - 1`` agents, seated clockwise from the
learner (``opponents[0]`` plays the seat to the learner's left), or a factory
``factory(rng) -> sequence of agents`` called at every reset with the episode's
``numpy.random.Generator`` (self-play pools draw their opponents there). ``None`` seats
uniformly random legal players. Every opponent is ``reset(seed)`` at every episode with a seed
drawn from the env's seeded generator, so ``reset(seed=s)`` fixes the game, the learner's
seat and every opponent's play. Opponents see only what :func:`~shanghai_env.decision.decision_for`
shows them.

``reset(options=...)`` takes the AEC env's ``deck`` (card strings, top first, a list or any
iterable: stacks the first deal) and ``dealer``, with the same checks and errors; any other
key is a ValueError naming the allowed ones. The game's seed is in the attribute ``env.game_seed``
(``Game(env.rules).reset(env.game_seed)`` deals the same hands and stock), never in an info or
an observation: it would tell the learner every hidden card.

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

## Episode end: the per-deal move cap

The rule ``max_stock_rebuilds`` (docs/rules.md 5.5) ends a deal whose rebuilt stock runs out, so it
bounds a deal's stock draws, but not its moves: players who keep taking the upcard and
discarding never empty the stock. The rule ``max_moves_per_deal`` (default 3000, ``None``: no
cap; a keyword here as in the AEC env) bounds the moves: the move of any player that makes
that many moves in one deal ends the deal as an exhausted stock does, nobody out and everybody
scoring the cards in hand. The engine applies it, so this env, the AEC env and the tournament
end such a deal alike. That is a real, scored end of the deal: the game goes on, the episode
*terminates* at its end and the learner is charged for its hand as in evaluation. Under the
default rules only stalled deals reach it: random players' deals take about 400 moves
(median; the longest in 1,200 seeded games of 3 to 8 players 820), bots' a few hundred.
``max_steps`` (default ``None``) additionally truncates an episode after that many learner
actions.

## Actions

``step`` takes one action id: a Python or numpy integer, or a 0-d integer array (what SB3
passes). Anything else (``5.9``, ``"5"``, ``True``, ``[a, b]``, None) is a TypeError, an id
outside ``0..N-1`` a ValueError, and neither changes anything. An in-range action the engine
refuses (a policy without masks, or the env checkers' random samples) ends the episode at once
with reward ``illegal_reward`` (-1) and ``info["illegal_action"] = True``, like the AEC env's
``TerminateIllegalWrapper``; legality is the engine's, whatever a caller wrote into a mask.

## Infos

Every info, from ``reset`` on, has the same keys with values of a fixed type and length, so
that replay buffers can stack them: ``action_mask`` (int8[N], read-only), ``learner_seat``,
``game_scores`` (every seat's total so far, absolute seats), ``score`` (the learner's total),
``deals_played``, ``deal_scores`` (the last finished deal's scores; zeros before the first),
``capped_deals`` (deals ended by the move cap), ``win`` (at the game's end 1 / number of
winners if the learner has the lowest total, else 0; 0 before the end), ``shaping`` (the
shaping part of the step's reward, 0 without shaping) and ``illegal_action``.

## Several envs at once

``step_envs(envs, actions)`` steps several envs and returns what ``[env.step(a) ...]`` would,
deciding the opponents that implement :class:`~shanghai_env.decision.BatchAgent` (trained
networks: ``act_batch``, one forward pass for many decisions) for all the envs together. Within
one env the seats act one after another, so across envs is where a network's decisions batch;
``train.py``'s one-process vector env uses it (docs/performance.md, "Training throughput").

## Copies

``copy.deepcopy(env)`` and ``pickle`` keep the episode: the copy continues exactly like the
original (observations, masks, rewards, infos, the opponents' play and every random stream).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import action_table
from .aec import REWARD_MODES, step_rewards
from .checks import (
    action_id,
    choice_arg,
    frozen,
    optional_choice_arg,
    optional_int_arg,
    real_arg,
    reset_options,
)
from .decision import Agent, Decision, chosen_move, decision_for
from .engine import Game
from .moves import Move
from .observation import ObservationEncoder
from .render import render_text
from .rules import ALL_CONTRACTS, DEFAULT_MAX_MOVES_PER_DEAL, Rules

# rule options passed through **rule_options (the named arguments are rule options too)
RULE_OPTIONS = tuple(
    f for f in Rules.__dataclass_fields__ if f not in ("num_players", "contracts", "max_moves_per_deal")
)
OpponentFactory = Callable[[np.random.Generator], Sequence[Agent]]
Potential = Callable[[Game, int], float]
_SEED_LIMIT = 2**63
StepResult = tuple[np.ndarray, float, bool, bool, dict[str, Any]]
# a step in progress: yields the decisions of batching opponents, receives their actions
Stepping = Generator[tuple[Agent, Decision], int, StepResult]


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

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012  # gymnasium's instance attribute

    def __init__(
        self,
        opponents: Sequence[Agent] | OpponentFactory | None = None,
        *,
        num_players: int = 4,
        contracts: Sequence[int] | int = ALL_CONTRACTS,
        reward: str = "deal",
        learner_seat: int | None = None,
        max_moves_per_deal: int | None = DEFAULT_MAX_MOVES_PER_DEAL,
        max_steps: int | None = None,
        potential: Potential | None = None,
        gamma: float = 0.99,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        **rule_options: Any,
    ) -> None:
        unknown = sorted(set(rule_options) - set(RULE_OPTIONS))
        if unknown:
            raise TypeError(
                f"unknown argument(s) {unknown}; the rule options are num_players, contracts, "
                + ", ".join((*RULE_OPTIONS, "max_moves_per_deal"))
            )
        self.rules = Rules(
            num_players=num_players,
            contracts=contracts,  # type: ignore[arg-type]  # Rules normalises any sequence
            max_moves_per_deal=max_moves_per_deal,
            **rule_options,
        )
        n = self.rules.num_players
        self.reward_mode = choice_arg("reward", reward, REWARD_MODES)
        self.fixed_seat = optional_int_arg(
            "learner_seat", learner_seat, low=0, high=n - 1, none="a random seat"
        )
        self.max_steps = optional_int_arg("max_steps", max_steps, low=1, none="no truncation")
        if potential is not None and not callable(potential):
            raise TypeError(
                f"potential must be None or a function potential(game, seat) -> float, got {potential!r}"
            )
        self.potential = potential
        self.gamma = real_arg("gamma", gamma, low=0.0, high=1.0)
        self.illegal_reward = real_arg("illegal_reward", illegal_reward)
        self.render_mode = optional_choice_arg("render_mode", render_mode, self.metadata["render_modes"])
        self.set_opponents(opponents)

        self.table = action_table(self.rules)
        self.encoder = ObservationEncoder(self.rules)
        self.action_space = spaces.Discrete(self.table.size)
        self.observation_space = spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.int8)
        self.game = Game(self.rules)
        self.game_seed: int | None = None  # the seed of the game being played (for the experimenter)
        self.learner = 0
        self.agents: list[Agent | None] = [None] * n
        self._no_actions = frozen(bytes(self.table.size))
        self._mask = self._no_actions
        self._done = True
        self._capped = 0

    @property
    def max_moves_per_deal(self) -> int | None:
        """The rule ``max_moves_per_deal`` of :attr:`rules` (None: no cap)."""
        return self.rules.max_moves_per_deal

    # --- opponents ---------------------------------------------------------------------------

    def set_opponents(self, opponents: Sequence[Agent] | OpponentFactory | None) -> None:
        """Replace the opponents (a sequence or a factory); takes effect at the next reset."""
        n = self.rules.num_players
        allowed = f"None (random players), {n - 1} agents (name, reset, act) or a factory(rng)"
        if opponents is None:
            fixed: list[Agent] = [UniformRandomAgent() for _ in range(n - 1)]
            self._factory: OpponentFactory | None = None
            self._fixed = fixed
        elif callable(opponents) and not isinstance(opponents, Agent):
            self._factory = opponents
            self._fixed = []
        else:
            if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Iterable):
                raise TypeError(f"opponents must be {allowed}, got {opponents!r}")
            fixed = list(opponents)
            if not all(isinstance(a, Agent) for a in fixed):
                raise TypeError(f"opponents must be {allowed}, got {fixed!r}")
            if len(fixed) != n - 1:
                raise ValueError(f"opponents must be {allowed}, got {len(fixed)} agents")
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
        """Deal a new game; ``reset(seed=s)`` deals the AEC env's game for seed ``s``.

        ``options`` may hold the AEC env's ``deck`` (card strings, top first: stacks the first
        deal) and ``dealer``; bad values, and any other key, raise ValueError and leave the env
        as it was. The game's seed is kept in :attr:`game_seed`, not in the info: it would
        reveal every hand.
        """
        deck, dealer = reset_options(options, unknown="error")
        try:  # everything is checked before anything changes
            self.game.check_reset_args(seed, deck=deck, dealer=dealer)
        except (TypeError, ValueError) as err:
            raise ValueError(f"bad reset arguments: {err}") from err
        super().reset(seed=None if seed is None else int(seed))
        rng = self.np_random
        n = self.rules.num_players
        game_seed = int(seed) if seed is not None else int(rng.integers(_SEED_LIMIT))
        self.learner = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(n))
        opponents = self._draw_opponents(rng)
        self.agents = [None] * n
        for k, agent in enumerate(opponents):
            agent.reset(int(rng.integers(_SEED_LIMIT)))
            self.agents[(self.learner + 1 + k) % n] = agent
        self.game.reset(game_seed, deck=deck, dealer=dealer)
        self.game_seed = game_seed
        self._deals_seen = 0
        self._steps = 0
        self._capped = 0
        self._done = False
        self._pending = self._play_others()
        self._phi = self._potential()
        return self._observe(), self._info()

    def step(self, action: Any) -> StepResult:
        """Play the learner's ``action``, then every other seat until the learner acts again."""
        return _finish(self._stepping(self._checked_move(action), batch=False))

    def _checked_move(self, action: Any) -> Move:
        """The learner's move for ``action``; RuntimeError once the episode is over, TypeError or
        ValueError for anything but one action id, before anything changes."""
        if self._done:
            raise RuntimeError("the episode is over: call reset() first")
        return self.table.moves[action_id(action, self.table.size)]

    def _stepping(self, move: Move, batch: bool) -> Stepping:
        """:meth:`step` as a generator: with ``batch``, every decision of an opponent that has
        ``act_batch`` is yielded as ``(agent, decision)`` and its action sent back (so that
        :func:`step_envs` can decide many envs' decisions together); the step's result is the
        generator's return value."""
        game = self.game
        self._steps += 1
        if not game.is_legal(move):  # the engine's own truth, not a mask a caller could write into
            self._done = True
            self._mask = self._no_actions
            reward = self.illegal_reward + self._take_pending()
            return self._observe(), reward, True, False, self._info(illegal=True)
        game.apply(move)
        reward = self._take_pending() + self._collect()
        reward += yield from self._others(batch)
        terminated = game.game_over
        truncated = not terminated and self.max_steps is not None and self._steps >= self.max_steps
        shaping = 0.0
        if self.potential is not None:
            phi = 0.0 if terminated else self._potential()
            shaping = self.gamma * phi - self._phi
            self._phi = phi
            reward += shaping
        if terminated or truncated:
            self._done = True
        return self._observe(), float(reward), terminated, truncated, self._info(shaping=shaping)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (all False once the episode is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override,unused-ignore]  # "ansi" frames are text
        """``"ansi"``: the table as text, every hand shown; ``"rgb_array"``: the table drawn as an
        ``(H, W, 3)`` uint8 array, every hand face up (as the AEC env draws it).

        Pillow (the ``draw`` extra) is needed only here, not when the env is made with
        ``render_mode="rgb_array"``: Stable-Baselines3's ``make_vec_env`` asks every env for that
        mode whether or not anything is ever drawn."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'"
            )
            return None
        if self.render_mode == "rgb_array":
            from .draw.raster import require_pillow, table_array

            require_pillow()  # an error naming the extra, not a bare ModuleNotFoundError
            return table_array(self.game, supersample=1)
        return render_text(self.game)

    # --- the other seats ---------------------------------------------------------------------

    def _play_others(self) -> float:
        """Play every other seat until the learner must act or the game ends."""
        return _finish(self._others(batch=False))

    def _others(self, batch: bool) -> Generator[tuple[Agent, Decision], int, float]:
        """:meth:`_play_others` as a generator (see :meth:`_stepping`); returns the reward."""
        game = self.game
        reward = 0.0
        while True:
            if game.game_over:
                break
            p = game.to_act
            if p == self.learner:
                break
            agent = self.agents[p]
            if agent is None:  # pragma: no cover - every other seat is filled at reset
                raise RuntimeError(f"no agent in seat {p}")
            decision = decision_for(game, p, self.table, self.encoder)
            if batch and hasattr(agent, "act_batch"):  # a BatchAgent (isinstance is slower)
                action = yield agent, decision
            else:
                action = agent.act(decision)
            game.apply(chosen_move(decision, action, f"opponent {agent.name!r} in seat {p}"))
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
        self._capped += sum(r.capped for r in new)
        return step_rewards(game, new, self.reward_mode)[self.learner]

    def _take_pending(self) -> float:
        pending, self._pending = self._pending, 0.0
        return pending

    # --- observations ------------------------------------------------------------------------

    def _build_mask(self) -> np.ndarray:
        """The learner's mask, read-only (it goes out in infos; legality is the engine's own)."""
        game = self.game
        if game.game_over or game.to_act != self.learner:
            return self._no_actions
        buf = bytearray(self.table.size)
        action_of = self.table.action_of
        for move in game.legal_moves():
            buf[action_of[move]] = 1
        return frozen(buf)

    def _observe(self) -> np.ndarray:
        return self.encoder.encode(self.game, self.learner)

    def _potential(self) -> float:
        return float(self.potential(self.game, self.learner)) if self.potential is not None else 0.0

    def _info(self, *, shaping: float = 0.0, illegal: bool = False) -> dict[str, Any]:
        """Every info has these keys, with values of a fixed type and length (see "Infos")."""
        game = self.game
        scores = tuple(game.scores)
        results = game.deal_results
        win = 0.0
        if game.game_over:
            winners = game.winners()
            win = 1.0 / len(winners) if self.learner in winners else 0.0
        return {
            "action_mask": self._mask,
            "learner_seat": self.learner,
            "game_scores": scores,
            "score": scores[self.learner],
            "deals_played": len(results),
            "deal_scores": results[-1].scores if results else (0,) * len(scores),
            "capped_deals": self._capped,
            "win": win,
            "shaping": shaping,
            "illegal_action": illegal,
        }

    # --- copies ------------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the action table and the encoder, which :meth:`__setstate__` rebuilds.

        ``copy.deepcopy`` and ``pickle`` use it: a copy continues the episode exactly where the
        original stands, the opponents' state and every random stream included (opponents
        must be picklable for ``pickle``, e.g. no lambda factory).
        """
        for space in (self.action_space, self.observation_space):
            _ = space.np_random  # a space seeds itself lazily: fix its stream so copies share it
        _ = self.np_random
        state = self.__dict__.copy()
        for name in ("table", "encoder"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.table = action_table(self.rules)
        self.encoder = ObservationEncoder(self.rules)
        self._no_actions = frozen(self._no_actions)  # copied arrays come back writable
        self._mask = frozen(self._mask)


def _finish(run: Generator[Any, int, Any]) -> Any:
    """The return value of a generator run with ``batch=False`` (it never yields)."""
    try:
        next(run)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("an unbatched step asked for a batched decision")  # pragma: no cover


def step_envs(envs: Sequence[SingleAgentEnv], actions: Sequence[Any]) -> list[StepResult]:
    """``[env.step(a) for env, a in zip(envs, actions)]``, the same results, with the decisions
    of opponents that implement :class:`~shanghai_env.decision.BatchAgent` (trained networks)
    taken together: every env is played on to its next such decision, then each agent decides
    all of its pending decisions in one ``act_batch`` call (one forward pass), and so on until
    every env awaits its learner or has ended. Within one env the seats act one after another,
    so it is across envs that a network's decisions can be batched.

    Every action is checked before any env changes (the errors of :meth:`SingleAgentEnv.step`).
    A batching agent must decide each decision on its own (``act_batch(ds)[i] == act(ds[i])``,
    no state kept from one decision to the next); other opponents are called as in ``step``, in
    their own env's order, so the results equal stepping the envs one by one as long as no
    stateful agent object sits in two envs at once.
    """
    if len(envs) != len(actions):
        raise ValueError(f"step_envs needs one action per env: {len(envs)} envs, {len(actions)} actions")
    if len({id(env) for env in envs}) != len(envs):
        raise ValueError("step_envs needs distinct envs: one env appears twice")
    moves = [env._checked_move(a) for env, a in zip(envs, actions)]
    results: list[Any] = [None] * len(envs)
    pending: dict[int, tuple[Stepping, Agent, Decision]] = {}

    def advance(i: int, run: Stepping, action: int | None) -> None:
        try:
            agent, decision = run.send(action)  # type: ignore[arg-type]  # None starts the generator
        except StopIteration as stop:
            results[i] = stop.value
            return
        pending[i] = (run, agent, decision)

    for i, (env, move) in enumerate(zip(envs, moves)):
        advance(i, env._stepping(move, batch=True), None)
    while pending:
        waiting = dict(pending)
        pending.clear()
        groups: dict[int, list[int]] = {}
        for i, (_, agent, _) in waiting.items():
            groups.setdefault(id(agent), []).append(i)
        for indices in groups.values():
            agent = waiting[indices[0]][1]
            chosen = agent.act_batch([waiting[i][2] for i in indices])  # type: ignore[attr-defined]
            if len(chosen) != len(indices):
                raise ValueError(
                    f"opponent {agent.name!r}: act_batch returned {len(chosen)} actions "
                    f"for {len(indices)} decisions"
                )
            for i, action in zip(indices, chosen):
                advance(i, waiting[i][0], action)
    return results
