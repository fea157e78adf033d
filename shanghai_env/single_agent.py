"""
# Shanghai Rummy, single-agent view (Gymnasium)

One *learning seat* plays against opponents that implement :class:`shanghai_env.decision.Agent`
(heuristic bots, frozen trained models, the learner's own past selves). Every other seat's
moves, buy offers included, are played inside :meth:`SingleAgentEnv.step`, so the learner only
ever sees its own decisions: in its own turns and whenever it is offered a declined upcard.

It is a view over the AEC env (:class:`shanghai_env.aec.raw_env`, the attribute ``env.aec``):
every move, the learner's and the opponents', is played by that env's ``step`` (past its checks
of the action, which the view makes itself; the masks and infos of moves the view does not
read are never built), and the game,
its observations, masks, rewards and score infos are that env's, seen from the learner's seat.
The view adds what only it has: the choice of the learner's seat, the opponents' play, the
step cap on the learner's actions, shaping and the refusal of an illegal action. Read
``env.aec``, never step it: the view keeps track of whose turn it is.

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

The AEC env's rewards of the learner's seat (its ``rewards``, :func:`shanghai_env.aec.step_rewards`):
``reward="deal"`` gives ``-deal score / 100`` when a deal ends, ``"win"`` +1/-1 at the game's
end. A step's reward is everything the learner accumulated since its previous action: the
deals that ended on its own move, on the opponents' moves that followed, and the game's end.
Over an episode the rewards add up to the AEC env's cumulative reward of that seat.

Optional shaping (off by default): ``potential(game, seat) -> float`` adds
``gamma * potential(s') - potential(s)`` between consecutive decisions of the learner, with
potential 0 in the terminal state. Potential-based shaping (Ng, Harada and Russell, 1999)
leaves the optimal policies unchanged; the shaping part of a step is in ``info["shaping"]``.

## Episode end

An episode is one game; it *terminates* at the game's end, as in the AEC env (its "Episode
end": a deal ends by the rules or at the per-deal move cap ``max_moves_per_deal``, default 3000,
``None``: no cap, a keyword here too; a capped deal is scored like any other, the learner is
charged for its hand as in evaluation, and the game goes on). ``max_steps`` (default ``None``)
additionally truncates an episode after that many learner actions. The step that terminates
returns an all-zero mask (no move is left); what a finished row holds in Gymnasium's vector
envs, under each ``autoreset_mode``, is in :mod:`shanghai_env.gym_vector`.

## Actions

``step`` takes one action id: a Python or numpy integer, or a 0-d integer array (what SB3
passes). Anything else (``5.9``, ``"5"``, ``True``, ``[a, b]``, None) is a TypeError, an id
outside ``0..N-1`` a ValueError, and neither changes anything. An in-range action the engine
refuses (a policy without masks, or the env checkers' random samples) ends the episode at once
with reward ``illegal_reward`` (-1) and ``info["illegal_action"] = True``, like the AEC env's
``TerminateIllegalWrapper``; legality is the engine's, whatever a caller wrote into a mask.

## Encoding

``encoding="any_table"`` (default ``"table"``) passes the AEC env's option: the observation,
the action space, the masks and ``step``'s ids are then those of the 8-seat layout and table
(:mod:`shanghai_env.any_table`), the same spaces at every table size;
``gymnasium.make("shanghai/ShanghaiSingleAgent-v0", encoding="any_table")`` passes it too.
The opponents' decisions carry the same encoding (their ``table`` and ``observation``), so a
network trained on it can play there; bots, which answer through the decision's table, play
as before.

## Infos

Every info, from ``reset`` on, has the same keys with values of a fixed type and length, so
that replay buffers can stack them: ``action_mask`` (int8[N], read-only), ``learner_seat``,
``game_scores`` (every seat's total so far, absolute seats), ``score`` (the learner's total),
``deals_played``, ``deal_scores`` (the last finished deal's scores; zeros before the first),
``capped_deals`` (deals ended by the move cap), ``win`` (at the game's end 1 / number of
winners if the learner has the lowest total, else 0; 0 before the end), ``shaping`` (the
shaping part of the step's reward, 0 without shaping) and ``illegal_action``.

## Copies

``copy.deepcopy(env)`` and ``pickle`` keep the episode: the copy continues exactly like the
original (observations, masks, rewards, infos, the opponents' play and every random stream).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import ActionTable
from .aec import raw_env
from .checks import (
    action_id,
    frozen,
    optional_choice_arg,
    optional_int_arg,
    real_arg,
    reset_options,
)
from .decision import Agent, Decision, chosen_move, decision_for
from .engine import Game
from .observation import ObservationEncoder
from .render import render_text
from .rules import ALL_CONTRACTS, DEFAULT_MAX_MOVES_PER_DEAL, Rules

# rule options passed through **rule_options (the named arguments are rule options too)
RULE_OPTIONS = tuple(
    f for f in Rules.__dataclass_fields__ if f not in ("num_players", "contracts", "max_moves_per_deal")
)
OpponentFactory = Callable[[np.random.Generator], Sequence[Agent]]
Potential = Callable[[Game, int], float]


def potential_arg(potential: Any) -> Potential | None:
    """``potential`` checked: None (no shaping) or a function ``potential(game, seat) -> float``."""
    if potential is not None and not callable(potential):
        raise TypeError(
            f"potential must be None or a function potential(game, seat) -> float, got {potential!r}"
        )
    return potential


_SEED_LIMIT = 2**63
StepResult = tuple[np.ndarray, float, bool, bool, dict[str, Any]]


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
    """One learning seat against agents, a view over the AEC env; see the module docstring."""

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
        encoding: str = "table",
        **rule_options: Any,
    ) -> None:
        unknown = sorted(set(rule_options) - set(RULE_OPTIONS))
        if unknown:
            raise TypeError(
                f"unknown argument(s) {unknown}; the rule options are num_players, contracts, "
                + ", ".join((*RULE_OPTIONS, "max_moves_per_deal"))
            )
        # The AEC env checks the rules and the reward mode. It gets no max_steps (the view's cap
        # counts the learner's actions, the AEC env's everybody's) and no render mode (the view
        # draws with or without Pillow installed, see render).
        self.aec = raw_env(
            num_players=num_players,
            contracts=contracts,  # type: ignore[arg-type]  # Rules normalises any sequence
            reward=reward,
            max_moves_per_deal=max_moves_per_deal,
            encoding=encoding,
            **rule_options,
        )
        n = self.rules.num_players
        self.fixed_seat = optional_int_arg(
            "learner_seat", learner_seat, low=0, high=n - 1, none="a random seat"
        )
        self.max_steps = optional_int_arg("max_steps", max_steps, low=1, none="no truncation")
        self.potential = potential_arg(potential)
        self.gamma = real_arg("gamma", gamma, low=0.0, high=1.0)
        self.illegal_reward = real_arg("illegal_reward", illegal_reward)
        self.render_mode = optional_choice_arg("render_mode", render_mode, self.metadata["render_modes"])
        self.set_opponents(opponents)

        size = self.table.size
        self.action_space = spaces.Discrete(size)
        self.observation_space = spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.int8)
        self.game_seed: int | None = None  # the seed of the game being played (for the experimenter)
        self.learner = 0
        self._me = self.aec.possible_agents[0]  # the learner's agent name in the AEC env
        self.agents: list[Agent | None] = [None] * n
        self._no_actions = frozen(bytes(size))
        self._mask = self._no_actions
        self._done = True

    # --- what the AEC env holds --------------------------------------------------------------

    @property
    def game(self) -> Game:
        """The engine's game (the AEC env's): omniscient, for tests and tools, not for the learner."""
        return self.aec.game

    @property
    def rules(self) -> Rules:
        return self.aec.rules

    @property
    def table(self) -> ActionTable:
        return self.aec.action_table

    @property
    def encoder(self) -> ObservationEncoder:
        return self.aec.encoder

    @property
    def reward_mode(self) -> str:
        return self.aec.reward_mode

    @property
    def encoding(self) -> str:
        """``"table"`` or ``"any_table"`` (the AEC env's option: see "Encoding")."""
        return self.aec.encoding

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
        deck, dealer = reset_options(options, unknown="error")  # the AEC env only warns
        try:  # everything is checked before anything changes
            self.game.check_reset_args(seed, deck=deck, dealer=dealer)
        except (TypeError, ValueError) as err:
            raise ValueError(f"bad reset arguments: {err}") from err
        super().reset(seed=None if seed is None else int(seed))
        rng = self.np_random
        n = self.rules.num_players
        game_seed = int(seed) if seed is not None else int(rng.integers(_SEED_LIMIT))
        self.learner = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(n))
        self._me = self.aec.possible_agents[self.learner]
        opponents = self._draw_opponents(rng)
        self.agents = [None] * n
        for k, agent in enumerate(opponents):
            agent.reset(int(rng.integers(_SEED_LIMIT)))
            self.agents[(self.learner + 1 + k) % n] = agent
        self._who = [
            f"opponent {a.name!r} in seat {p}" if a is not None else "" for p, a in enumerate(self.agents)
        ]
        self.aec.reset(seed=game_seed, options=None if options is None else {"deck": deck, "dealer": dealer})
        self.game_seed = game_seed
        self._steps = 0
        self._done = False
        self._pending = self._play_others()
        self._phi = self._potential()
        return self._observe(), self._info()

    def step(self, action: Any) -> StepResult:
        """Play the learner's ``action``, then every other seat until the learner acts again.

        A RuntimeError once the episode is over, a TypeError or ValueError for anything but one
        action id, raised before anything changes."""
        if self._done:
            raise RuntimeError("the episode is over: call reset() first")
        action = action_id(action, self.table.size)
        self._steps += 1
        move = self.table.moves[action]
        # the engine's own truth, not a mask a caller could write into; the AEC env would raise,
        # the view ends the episode as TerminateIllegalWrapper does
        if not self.game.is_legal(move):
            self._done = True
            self._mask = self._no_actions
            reward = self.illegal_reward + self._take_pending()
            return self._observe(), reward, True, False, self._info(illegal=True)
        # the AEC env's step past its checks of the action (made above): the same code plays the
        # move, and the mask and infos nobody reads here are not built
        self.aec.play_move(move)
        reward = self._take_pending() + self.aec.rewards[self._me]
        reward += self._play_others()
        terminated = self.game.game_over
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
        """Boolean mask of the learner's legal actions (all False once the game is over)."""
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
        """Play every other seat until the learner must act or the game ends; returns the
        learner's rewards of those moves, added in the order they came."""
        aec = self.aec
        game, table, encoder, rewards, me = aec.game, aec.action_table, aec.encoder, aec.rewards, self._me
        learner = self.learner
        reward = 0.0
        while not game.game_over:
            p = game.to_act
            if p == learner:
                break
            agent = self.agents[p]
            if agent is None:  # pragma: no cover - every other seat is filled at reset
                raise RuntimeError(f"no agent in seat {p}")
            decision = decision_for(game, p, table, encoder)
            action = agent.act(decision)
            # checked here (a ValueError naming the opponent), then played by the AEC env's step
            # past its own checks: no mask or info is built for a move whose decision is made
            aec.play_move(chosen_move(decision, action, self._who[p]))
            reward += rewards[me]
        # the AEC env's mask of the learner (to act unless the game is over), copied: the AEC env
        # shares one mask among all draw decisions, and a caller may keep every info it is given
        self._mask = self._no_actions if game.game_over else frozen(aec.actor_mask())
        return reward

    def _take_pending(self) -> float:
        pending, self._pending = self._pending, 0.0
        return pending

    # --- observations ------------------------------------------------------------------------

    def _observe(self) -> np.ndarray:
        return np.array(self.aec.observe(self._me)["observation"])  # a writable copy, the caller's own

    def _potential(self) -> float:
        return float(self.potential(self.game, self.learner)) if self.potential is not None else 0.0

    def _info(self, *, shaping: float = 0.0, illegal: bool = False) -> dict[str, Any]:
        """The AEC env's info of the learner's seat, in the view's keys (see "Infos")."""
        # every AEC info is this common part plus a mask: read it without building the infos
        aec_info = self.aec.common_info
        scores = aec_info["game_scores"]
        winners = aec_info["winners"]  # all 0 until the game is over
        return {
            "action_mask": self._mask,
            "learner_seat": self.learner,
            "game_scores": scores,
            "score": scores[self.learner],
            "deals_played": aec_info["deals_played"],
            "deal_scores": aec_info["deal_scores"],
            "capped_deals": aec_info["capped_deals"],
            "win": 1.0 / sum(winners) if winners[self.learner] else 0.0,
            "shaping": shaping,
            "illegal_action": illegal,
        }

    # --- copies ------------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """Everything, the AEC env included (it leaves out what it rebuilds itself).

        ``copy.deepcopy`` and ``pickle`` use it: a copy continues the episode exactly where the
        original stands, the opponents' state and every random stream included (opponents
        must be picklable for ``pickle``, e.g. no lambda factory).
        """
        for space in (self.action_space, self.observation_space):
            _ = space.np_random  # a space seeds itself lazily: fix its stream so copies share it
        _ = self.np_random
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._no_actions = frozen(self._no_actions)  # copied arrays come back writable
        self._mask = frozen(self._mask)
