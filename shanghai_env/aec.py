"""
# Shanghai Rummy (PettingZoo AEC)

| Creation           | `shanghai_env.env(**options)` or `pettingzoo.make("aec", "shanghai/Shanghai-v0")` |
|--------------------|------------------------------------------------------------------|
| Actions            | Discrete, one fixed table for every agent and phase             |
| Parallel API       | No (`is_parallelizable: False`)                                  |
| Agents             | `agents = ["player_0", ..., "player_{n-1}"]`, n = 3..8          |
| Action shape       | `()`, values `0 .. N-1` (N = 3194 for 4 players, 5882 for 8)     |
| Observation        | `Dict(observation=Box(int8, (L,)), action_mask=Box(int8, (N,)))` |
| Observation length | L = 2293 for 4 players, 4333 for 8 (all ten contracts)           |
| Render modes       | `"ansi"` (text), `"human"` (prints it), `"rgb_array"` (pixels) |

Shanghai Rummy as in `docs/rules.md`: ten deals under ten contracts, buying out of turn, jokers
declared as cards, layoffs, joker swaps, going out blind. The agent to act is
`player_{game.to_act}`: usually the player in turn, but during a buy offer it is the player
being offered the upcard, so agents do not simply take turns.

## Options

Every rule option of docs/rules.md section 7 (`num_players=4`, `contracts=(1, ..., 10)`,
`joker_points=50`, `down_players_may_buy=True`, `exact_contract_melds=True`,
`same_suit_run_gap=1`, `joker_swaps=True`, `max_stock_rebuilds=1`, `max_moves_per_deal=3000`),
plus

- `reward`: `"deal"` (default) or `"win"`, see Rewards;
- `max_steps`: truncate the episode after this many actions (default None: never);
- `render_mode`: `None`, `"ansi"`, `"human"` or `"rgb_array"` (an `(H, W, 3)` uint8 picture of
  the table, every hand face up; needs Pillow, the `draw` extra: `docs/replay.md`);
- `encoding`: `"table"` (default: the observation and action table of this player count) or
  `"any_table"` (the layouts of an 8-player table, the same at every table size:
  `shanghai_env.any_table`). With `"any_table"` the spaces, masks, infos' masks, `step`,
  `action_name` and `action_id` all speak the 8-seat encoding; `state()` is unchanged.

A wrong type is a TypeError, a value out of range a ValueError, each naming the option and
what it allows; numpy scalars are accepted.

`reset(seed=s)` deals the same game for the same seed (the game `Game(rules).reset(s)` deals)
and seeds the env's generator `np_random`; `reset()` draws the game's seed from it.
`reset(seed=s, options={"deck": [...], "dealer": k})` stacks the first deal (card strings top
first, docs/rules.md section 3; a list or any iterable, read once) and/or picks its dealer; a
bad deck or dealer raises `ValueError` and leaves the env as it was. Unknown option keys are
ignored with a warning (PettingZoo's `api_test` passes one).

## Actions

`Discrete(N)`, the same table for every agent and every phase (`shanghai_env.actions`,
listed in `docs/actions.md`): `take`, `draw` (decline the upcard), `buy`, `pass`, `finish`,
`discard <card>`, `meld <i> <card>` (going down, card by card), `layoff <card> <seat>.<meld>`
and `swap <card> <seat>.<meld>`; seats in action names are counted clockwise from the actor.
`env.unwrapped.action_name(a)` and `env.unwrapped.action_id(name)` convert both ways.

`step` takes a Python or numpy integer (or a 0-d integer array); anything else (`True`,
`5.9`, `"5"`, `[a, b]`) is a TypeError and an id outside `0..N-1` a ValueError, in `raw_env`
and `env()` alike, checked explicitly (also under `python -O`), changing nothing. `None` is
for terminated or truncated agents only. Once every agent has stepped out of a finished
game, `last()` and `step()` raise a RuntimeError saying to call `reset()`; an unknown agent
name in `observe`, `action_space` or `observation_space` is a ValueError listing the agents.

## Legal action mask

`observation["action_mask"]` (int8, length N) is exact: 1 iff the engine accepts that action
now. The agent to act always has at least one legal action; every other agent's mask is all
zero. Masks and observations are read-only arrays (`observe` returns the same arrays for
the same state, so a caller writing into one would change what the others see); the same
mask is in `infos[agent]["action_mask"]`. Legality is decided by the engine, never by a mask
a caller holds. `env()` turns an illegal action into the actor's loss (`TerminateIllegalWrapper`, reward -1,
game over); `raw_env` raises `ValueError` and stays playable, state unchanged.

## Observations

`observation["observation"]` is one flat int8 vector, the same layout for every seat, seen
from the observing seat (relative seats: 0 = me, 1 = the player to my left, ...): own hand,
the melds on the table with declared jokers, the discard pile (top and counts), the upcard
on offer, the cards each player was seen to pick up, every player's hand size, buys left,
down flag and score, contract, deal, phase, who acts and whose turn it is, stock size and
going-down progress. Nothing hidden reaches it (other hands, the stock's order). The layout
is `shanghai_env.observation.ObservationEncoder` and `docs/observation.md`. `state()` is the
omniscient vector for centralised critics (`StateEncoder`, absolute seats, every hand and the
stock added).

## Rewards

- `reward="deal"` (default, dense): when a deal ends, every player gets `-deal_score / 100`
  (going out: 0; blind: +0.25 or +0.5; 85 points left in hand: -0.85). Over a game the
  rewards add up to `-total_score / 100`.
- `reward="win"` (terminal): at the game's end each player with the lowest total (ties share
  first) gets +1, every other player -1; 0 on every other step.

Rewards reach every agent through PettingZoo's cumulative rewards (`last()`), also when the
deal ends on another player's move (the agent sees it at its next turn, or at the end).
Truncation gives no reward of its own.

## Episode end

An episode is one game, and it ends by termination: at the game's end every agent is
terminated. Deals end by the rules (docs/rules.md 5.5): somebody goes out, a draw meets an
empty stock with no rebuild left (`max_stock_rebuilds`), or the deal's move cap is reached:
the move that makes `max_moves_per_deal` moves in one deal (default 3000; None: no cap) ends
it with nobody out, everyone scoring the cards in hand. The engine applies that rule, so
`Game`, `SingleAgentEnv`, the tournament and records end such a deal alike; rewards are paid
as for any deal, and the game goes on with the next deal. The stock rule bounds a deal's stock
draws, not its moves (players who keep taking the upcard and discarding never empty the
stock), so the cap is what bounds a deal. Under the default rules random or bot play never
reaches it: random players' deals take about 400 moves (median; 90% end within 620), the
longest in 1,200 seeded games of 3 to 8 players 820, a whole game at most about 6,400; bots
finish a deal in a few hundred. `max_steps` (default None)
optionally truncates every agent after that many actions since `reset`; truncation gives no
reward of its own.

## Infos

Every `infos[agent]`, from `reset` on, has the same keys, with values of a fixed type and
length, so that replay buffers can stack them: `action_mask` (as in the observation),
`game_scores` (totals so far, one per seat, absolute order), `deals_played`, `deal_scores`
(the last finished deal's scores; zeros before the first deal ends), `capped_deals` (deals
ended by the move cap, `DealResult.capped`) and `winners` (one 0/1 per seat: 1 for the players with the lowest
total once the game is over, all 0 before). Nothing in an info or an observation reveals a
hidden card (no seed, no entropy).

Masks, infos and observations are built when first read, not on every step: a step whose
results nobody reads (an opponent's move in the single-agent view) builds none of them, and
every read gives what building them on every step would give.

## Attributes

`raw_env` exposes `game` (the engine's `Game`, for bots and tests: `game.view(p)`,
`game.clone()`), `rules`, `encoding`, `action_table`, `encoder` (`ObservationEncoder`; with
`encoding="any_table"` the 8-seat table and `AnyTableEncoder`), `state_encoder`,
`state_space`, `reward_mode`, `max_moves_per_deal` (the rule's value), `max_steps`, `num_steps` (actions taken
since `reset`) and `np_random`. `copy.deepcopy` and `pickle` of `raw_env` or `env()` keep the
game: the copy continues exactly like the original (observations, masks, rewards, infos and,
under the same actions, the same future, the env's and the action spaces' random streams
included).

## Version history

* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .actions import ActionTable, table_markdown
from .any_table import ENCODINGS, encoding_tables
from .checks import (
    EPISODE_OVER,
    action_id,
    choice_arg,
    frozen,
    optional_choice_arg,
    optional_int_arg,
    reset_options,
)
from .engine import DealResult, Game, Phase
from .fast_wrappers import wrap_classic
from .legal import BUY_PHASE_MOVES, DRAW_PHASE_MOVES
from .melds import CONTRACTS
from .moves import Move, MoveKind
from .observation import INT8, StateEncoder, layout_markdown
from .render import render_text
from .rules import ALL_CONTRACTS, DEFAULT_MAX_MOVES_PER_DEAL, Rules

ENV_ID = "shanghai/Shanghai-v0"
REWARD_MODES = ("deal", "win")
RENDER_MODES = ("ansi", "human", "rgb_array")
DEAL_REWARD_SCALE = 100  # reward = -deal_score / DEAL_REWARD_SCALE
SEED_LIMIT = 2**63  # game seeds drawn from an env's generator are below this
_TABLE_MOVES = (MoveKind.MELD, MoveKind.LAYOFF, MoveKind.SWAP)
_GAME_OVER = Phase.GAME_OVER  # game.phase == _GAME_OVER: Game.game_over without the call


def step_rewards(game: Game, new_results: Sequence[DealResult], mode: str) -> list[float]:
    """Every seat's reward for one step on which the deals ``new_results`` ended (see Rewards).

    ``"deal"``: ``-score / DEAL_REWARD_SCALE`` per ended deal; ``"win"``: +1 for each player with
    the lowest total, -1 for the others, once the game is over. The single-agent wrapper
    (:mod:`shanghai_env.single_agent`) uses this same function.
    """
    out = [0.0] * game.num_players
    if mode == "deal":
        for result in new_results:
            for i, score in enumerate(result.scores):
                out[i] += -score / DEAL_REWARD_SCALE
    elif mode == "win":
        if game.game_over and new_results:
            winners = game.winners()
            out = [1.0 if i in winners else -1.0 for i in range(game.num_players)]
    else:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {mode!r}")
    return out


def play(game: Game, move: Move, deals_seen: int, mode: str, legal: bool = False) -> list[float] | None:
    """The one step of every env and view: play ``move`` in ``game`` and return every seat's
    reward (:func:`step_rewards`) if the move ended a deal past the first ``deals_seen``, else None.

    The engine checks the move (ValueError if illegal, the game unchanged) unless ``legal`` says it
    was read from the game's own legal moves. The AEC env plays every move through it, and so does
    the batched env (:mod:`shanghai_env.vector`) in each of its rows."""
    if legal:
        game.play_legal(move)
    else:
        game.apply(move)  # it also ends a deal at the rule max_moves_per_deal
    results = game.deal_results
    if len(results) == deals_seen:
        return None
    return step_rewards(game, results[deals_seen:], mode)


def env(**options: Any) -> AECEnv:
    """The env with PettingZoo's classic wrappers: an illegal action loses (-1) and ends the game."""
    # PettingZoo's three wrappers, subclassed only to read hot attributes directly (fast_wrappers).
    return wrap_classic(raw_env(**options), illegal_reward=-1)


class ActionSpace(spaces.Discrete):
    """``Discrete(N)`` whose ``contains`` answers a plain int without numpy's dtype machinery.

    AssertOutOfBoundsWrapper calls ``contains`` on every step; gymnasium's version builds an
    ``np.iinfo`` each time. Other values (numpy ints, arrays) take gymnasium's own path.
    """

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < int(self.n)
        if isinstance(x, (bool, np.bool_)):  # gymnasium counts True as 1; it is no action
            return False
        return super().contains(x)


class raw_env(AECEnv):
    """Shanghai Rummy as a PettingZoo AEC env; see the module docstring for the full description."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "shanghai_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 4,
        contracts: Sequence[int] = ALL_CONTRACTS,
        joker_points: int = 50,
        down_players_may_buy: bool = True,
        exact_contract_melds: bool = True,
        same_suit_run_gap: int = 1,
        joker_swaps: bool = True,
        reward: str = "deal",
        max_steps: int | None = None,
        render_mode: str | None = None,
        max_moves_per_deal: int | None = DEFAULT_MAX_MOVES_PER_DEAL,
        max_stock_rebuilds: int | None = 1,
        encoding: str = "table",
    ) -> None:
        super().__init__()
        self.rules = Rules(
            num_players=num_players,
            contracts=contracts,  # type: ignore[arg-type]  # Rules normalises any sequence
            joker_points=joker_points,
            down_players_may_buy=down_players_may_buy,
            exact_contract_melds=exact_contract_melds,
            same_suit_run_gap=same_suit_run_gap,
            joker_swaps=joker_swaps,
            max_stock_rebuilds=max_stock_rebuilds,
            max_moves_per_deal=max_moves_per_deal,
        )
        self.reward_mode = choice_arg("reward", reward, REWARD_MODES)
        self.max_steps = optional_int_arg("max_steps", max_steps, low=1, none="no truncation")
        self.render_mode = optional_choice_arg("render_mode", render_mode, RENDER_MODES)
        self.encoding = choice_arg("encoding", encoding, ENCODINGS)
        if self.render_mode == "rgb_array":
            from .draw.raster import require_pillow

            require_pillow()  # fail now, naming the extra, rather than at the first render()
        self._np_random: np.random.Generator | None = None

        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        self.agents = self.possible_agents[:]
        # "any_table": the 8-seat table and layout; every id and mask below follows them
        self.action_table, self.encoder = encoding_tables(self.rules, self.encoding)
        self.state_encoder = StateEncoder(self.rules)
        self._draw_mask = self._mask_of(DRAW_PHASE_MOVES)
        self._buy_mask = self._mask_of(BUY_PHASE_MOVES)
        size = self.action_table.size
        self._no_actions = frozen(bytes(size))
        self.action_spaces = {a: ActionSpace(size) for a in self.possible_agents}
        obs_box = spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.int8)
        self.observation_spaces = {
            a: spaces.Dict(
                {"observation": obs_box, "action_mask": spaces.Box(0, 1, shape=(size,), dtype=np.int8)}
            )
            for a in self.possible_agents
        }
        self.state_space = spaces.Box(low=self.state_encoder.low, high=self.state_encoder.high, dtype=np.int8)
        self.game = Game(self.rules)
        self._reset_bookkeeping()

    # --- spaces and names -------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        """The (cached) observation space of ``agent``."""
        space = self.observation_spaces.get(agent)
        return space if space is not None else self._unknown_agent(agent)

    def action_space(self, agent: str) -> spaces.Discrete:
        """The (cached) ``Discrete(N)`` action space of ``agent``."""
        space = self.action_spaces.get(agent)
        return space if space is not None else self._unknown_agent(agent)

    def _unknown_agent(self, agent: Any) -> Any:
        raise ValueError(f"unknown agent {agent!r}: the agents are {', '.join(self.possible_agents)}")

    @property
    def max_moves_per_deal(self) -> int | None:
        """The rule ``max_moves_per_deal`` of :attr:`rules` (None: no cap)."""
        return self.rules.max_moves_per_deal

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator: ``reset(seed=s)`` seeds it, ``reset()`` draws the game's seed from it."""
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    def action_name(self, action: int) -> str:
        """The engine's move name of an action id, e.g. ``'discard 7H'``."""
        return self.action_table.name(action)

    def action_id(self, name: str) -> int:
        """The action id of a move name, e.g. ``'layoff JK=7H 1.0'``."""
        return self.action_table.action_id(name)

    # --- reset ------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``options`` may hold ``deck`` (card strings, top first) and ``dealer``.

        ``reset(seed=s)`` deals the game ``Game(rules).reset(s)`` deals and seeds
        :attr:`np_random`; ``reset()`` deals a game whose seed comes from :attr:`np_random`.
        Bad arguments raise ValueError and leave the env as it was.
        """
        # PettingZoo's api_test passes an unknown option: warn rather than refuse
        deck, dealer = reset_options(options, unknown="warn")
        try:  # the engine checks everything before changing state
            self.game.check_reset_args(seed, deck=deck, dealer=dealer)
        except (TypeError, ValueError) as err:
            raise ValueError(f"bad reset arguments: {err}") from err
        if seed is not None:
            game_seed = int(seed)
            self._np_random = np.random.default_rng(game_seed)
        else:
            game_seed = int(self.np_random.integers(SEED_LIMIT))
        self.game.reset(game_seed, deck=deck, dealer=dealer)
        self._reset_bookkeeping()

    def _reset_bookkeeping(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewarded = False  # whether self.rewards holds a non-zero entry
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.num_steps = 0
        self._deals_seen = 0
        self._capped = 0  # deals ended by max_moves_per_deal
        self._table: bytes | None = None
        self._obs_cache: dict[str, np.ndarray] = {}
        n = self.rules.num_players
        # every info has the same keys, with values of a fixed type and length (see "Infos")
        self._info_base: dict[str, Any] = {
            "game_scores": tuple(self.game.scores),
            "deals_played": 0,
            "deal_scores": (0,) * n,
            "capped_deals": 0,
            "winners": (0,) * n,
        }
        # Masks and infos are built when first read (see "infos"): a step whose mask and infos
        # nobody reads (the single-agent view's opponents' moves) costs neither.
        self._mask: np.ndarray | None = None  # the mask of _mask_holder, None until first read
        self._mask_holder: str | None = self.possible_agents[self.game.to_act]
        self._infos: dict[str, dict[str, Any]] = {}
        self._shown_holder: str | None = None  # whose info in _infos holds a mask
        self._infos_renew = True  # every info to be rebuilt, into a new dict
        self._infos_due = True  # _infos lags behind the state
        self.agent_selection = self._mask_holder

    # --- infos and masks, built on first read ------------------------------------------------

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        """Every agent's info (see "Infos"), brought up to date when read.

        At every read, ``infos[a]`` is :attr:`common_info` plus ``action_mask``: the mask of the agent
        to act (the agent selected by the last step, alive then) for that agent, the all-zero
        mask for every other one; exactly what building them on every step would give.
        """
        if not self._infos_due:
            return self._infos
        # Brought up to date here rather than in a method of its own: env() loops read the
        # infos at every step. Each info is a copy of the common part (dict.copy: the cheapest).
        base, none, holder = self._info_base, self._no_actions, self._mask_holder
        if self._infos_renew:
            infos = self._infos = {}
            for agent in self.agents:
                info = infos[agent] = base.copy()
                info["action_mask"] = none
            self._infos_renew = False
        else:  # only the mask moved: from the agent shown holding it to the agent to act
            infos = self._infos
            shown = self._shown_holder
            if shown != holder and shown in infos:
                info = infos[shown] = base.copy()
                info["action_mask"] = none
        if holder is not None:
            mask = self._mask
            info = infos[holder] = base.copy()
            info["action_mask"] = mask if mask is not None else self.actor_mask()
        self._shown_holder = holder
        self._infos_due = False
        return infos

    @infos.setter
    def infos(self, value: dict[str, dict[str, Any]]) -> None:
        self._infos = value
        self._infos_due = self._infos_renew = False
        self._shown_holder = self._mask_holder  # the dict given stands for the present state

    @property
    def common_info(self) -> dict[str, Any]:
        """The part every agent's info shares (``game_scores``, ``deals_played``, ``deal_scores``,
        ``capped_deals``, ``winners``): each info is this plus its ``action_mask``. The env's own
        dict, not a copy: read it without building the infos (the single-agent view does),
        never write it."""
        return self._info_base

    def actor_mask(self) -> np.ndarray:
        """The action mask of the agent to act (read-only, shared), built on first read; what
        ``observe`` and the infos give that agent, without building either."""
        mask = self._mask
        if mask is None:
            mask = self._mask = self._build_mask()
        return mask

    def _all_infos_change(self, holder: str | None) -> None:
        """The infos' common part changed (a deal or the game ended, or truncation)."""
        self._mask_holder = holder
        self._infos_renew = self._infos_due = True

    def _build_mask(self) -> np.ndarray:
        legal = self.game.legal_moves()
        # the draw and buy phases always offer the same two moves: one shared mask each
        if legal is DRAW_PHASE_MOVES:
            return self._draw_mask
        if legal is BUY_PHASE_MOVES:
            return self._buy_mask
        buf = bytearray(self.action_table.size)  # _mask_of, inlined on this hot path
        action_of = self.action_table.action_of
        for move in legal:
            buf[action_of[move]] = 1
        return np.frombuffer(bytes(buf), INT8)

    def _mask_of(self, moves: Sequence[Move]) -> np.ndarray:
        # Built in a bytearray (item writes there are cheaper than numpy's fancy indexing for
        # the dozen or so legal actions), handed out read-only: a caller writing into a mask
        # would otherwise change infos and later observations of this state.
        buf = bytearray(self.action_table.size)
        action_of = self.action_table.action_of
        for move in moves:
            buf[action_of[move]] = 1
        return np.frombuffer(bytes(buf), INT8)  # frozen(buf), inlined on this hot path

    # --- observing --------------------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": int8[L], "action_mask": int8[N]}`` for ``agent``, seen from its seat.

        Repeated calls in one state return the same arrays; treat them as read-only.
        """
        obs = self._obs_cache.get(agent)
        if obs is None:
            seat = self._seat_of.get(agent)
            if seat is None:
                return self._unknown_agent(agent)
            if self._table is None:
                self._table = self.encoder.table_bytes(self.game)
            # read-only (an array over bytes): cached for this state, callers share it
            obs = np.frombuffer(self.encoder.encode_bytes(self.game, seat, table=self._table), INT8)
            self._obs_cache[agent] = obs
        acting = (
            agent == self.agent_selection
            and not self.terminations.get(agent, True)
            and not self.truncations.get(agent, True)
        )
        if not acting:
            return {"observation": obs, "action_mask": self._no_actions}
        mask = self._mask
        return {"observation": obs, "action_mask": mask if mask is not None else self.actor_mask()}

    def state(self) -> np.ndarray:
        """The omniscient state vector (``StateEncoder``: absolute seats, every hand, the stock)."""
        if self._table is None:
            self._table = self.encoder.table_bytes(self.game)
        return self.state_encoder.encode(self.game, table=self._table)

    # --- stepping ---------------------------------------------------------------------------

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Observation, cumulative reward, termination, truncation and info of ``agent_selection``."""
        agent = self.agent_selection
        try:
            return (
                self.observe(agent) if observe else None,
                self._cumulative_rewards[agent],
                self.terminations[agent],
                self.truncations[agent],
                self.infos[agent],
            )
        except KeyError:  # every agent has stepped out of the finished game
            if self.agents:
                raise
            raise RuntimeError(EPISODE_OVER) from None

    def step(self, action: int | None) -> None:
        """Play ``action`` for ``agent_selection``; an illegal one raises ValueError, state unchanged.

        A malformed action (not one int 0..N-1: a bool, a float, an array with elements) is a
        TypeError, one out of range a ValueError; both leave the state unchanged too.
        """
        agent = self.agent_selection
        try:
            done = self.terminations[agent] or self.truncations[agent]
        except KeyError:  # every agent has stepped out of the finished game
            raise RuntimeError(EPISODE_OVER) from None
        if done:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act: None is only for terminated or truncated agents")
        table = self.action_table
        if type(action) is int and 0 <= action < table.size:
            move = table.moves[action]
        else:  # numpy ints, 0-d arrays; anything else raises naming what is allowed
            move = table.moves[action_id(action, table.size)]
        self.play_move(move)
        if self.render_mode == "human":
            self.render()

    def play_move(self, move: Move) -> None:
        """Play ``move`` (one of the action table's) for ``agent_selection``, which must be alive.

        The one implementation of a move, past :meth:`step`'s checks of the action (and its
        ``"human"`` rendering): ``step`` calls it after checking the action, the single-agent view
        for every seat's move (it checks its seats' answers itself). The engine refuses an illegal
        move with a ValueError, nothing changed."""
        agent = self.agent_selection
        game = self.game
        ended = play(game, move, self._deals_seen, self.reward_mode)  # ValueError: nothing changed
        self.num_steps += 1
        self._obs_cache.clear()
        if move.kind in _TABLE_MOVES:
            self._table = None
        rewards = self.rewards
        if self._rewarded:  # rewards are non-zero only on steps that end a deal
            for a in rewards:
                rewards[a] = 0.0
            self._rewarded = False
        self._cumulative_rewards[agent] = 0.0
        if ended is not None:
            for a, r in zip(self.possible_agents, ended):
                rewards[a] += r
            self._rewarded = True
            self._deals_ended()
        if game.phase == _GAME_OVER:
            self._game_ended()
        elif self.max_steps is not None and self.num_steps >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
            self._all_infos_change(None)
        else:  # the next mask and infos are built when read (see infos)
            self._mask = None
            self.agent_selection = self._mask_holder = self.possible_agents[game.to_act]
            self._infos_due = True
        if self._rewarded:  # adding all-zero rewards would change nothing
            self._accumulate_rewards()

    def _deals_ended(self) -> None:
        """A deal ended on this step: fresh table, scores in every info."""
        game = self.game
        new = game.deal_results[self._deals_seen :]
        self._deals_seen = len(game.deal_results)
        self._capped += sum(r.capped for r in new)
        self._table = None
        self._info_base = {
            "game_scores": tuple(game.scores),
            "deals_played": self._deals_seen,
            "deal_scores": new[-1].scores,
            "capped_deals": self._capped,
            "winners": self._info_base["winners"],
        }
        self._all_infos_change(self._mask_holder)  # the agent to act is set after this

    def _game_ended(self) -> None:
        winners = self.game.winners()
        self._info_base["winners"] = tuple(int(i in winners) for i in range(self.rules.num_players))
        self._all_infos_change(None)
        self.terminations = dict.fromkeys(self.agents, True)

    # --- rendering --------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the table as text (every hand shown); ``"human"``: print it;
        ``"rgb_array"``: the table drawn as an ``(H, W, 3)`` uint8 array (every hand face up)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.render_mode == "rgb_array":
            from .draw.raster import table_array  # Pillow, the `draw` extra

            return table_array(self.game, supersample=1)
        text = render_text(self.game)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        """Nothing to release (no window is opened)."""

    # --- copies -----------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """Everything but what :meth:`__setstate__` rebuilds from the rules (tables, encoders, caches).

        ``copy.deepcopy`` and ``pickle`` use it: a copy continues the game exactly where the
        original stands, random streams included.
        """
        _fix_streams([*self.action_spaces.values(), *self.observation_spaces.values()])
        _ = self.np_random
        state = self.__dict__.copy()
        for name in _REBUILT:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.encoding = state.get("encoding", "table")  # a copy from before the option
        self.action_table, self.encoder = encoding_tables(self.rules, self.encoding)
        self.state_encoder = StateEncoder(self.rules)
        self._draw_mask = self._mask_of(DRAW_PHASE_MOVES)
        self._buy_mask = self._mask_of(BUY_PHASE_MOVES)
        self._table = None
        self._obs_cache = {}
        # copied masks come back writable: make them read-only again, shared as before
        refrozen: dict[int, np.ndarray] = {}

        def refreeze(mask: np.ndarray) -> np.ndarray:
            if id(mask) not in refrozen:
                refrozen[id(mask)] = frozen(mask)
            return refrozen[id(mask)]

        self._no_actions = refreeze(self._no_actions)
        if self._mask is not None:
            self._mask = refreeze(self._mask)
        # the infos as they were (one still to be brought up to date stays so: see infos)
        self._infos = {
            a: {**info, "action_mask": refreeze(info["action_mask"])} for a, info in self._infos.items()
        }


_REBUILT = ("action_table", "encoder", "state_encoder", "_draw_mask", "_buy_mask", "_table", "_obs_cache")


def _fix_streams(space_list: Sequence[spaces.Space[Any]]) -> None:
    """Seed every lazily seeded space (and subspace) now, so that a copy shares its stream."""
    for space in space_list:
        _ = space.np_random
        if isinstance(space, spaces.Dict):
            _fix_streams(list(space.spaces.values()))


# --- generated documentation ---------------------------------------------------------------

DOCS_MARKER = (
    "<!-- Everything below this line is generated from the code: "
    "python -c 'import shanghai_env.aec as m; m.write_docs()' -->"
)
_ACTION_EXAMPLES = "take|draw|buy|pass|finish|discard 7H|discard JK|meld 0 7H|meld 1 JK=7H|meld 1 AH^"
_ACTION_EXAMPLES += "|layoff 7H 0.1|layoff JK=QS 2.0|swap 7H 3.1"


def actions_markdown() -> str:
    """The generated part of ``docs/actions.md``: sizes, block ranges and examples."""
    by_melds: dict[int, list[int]] = {}
    for c, specs in CONTRACTS.items():
        by_melds.setdefault(len(specs), []).append(c)
    counts = "; ".join(f"{m} melds: contracts {', '.join(map(str, c))}" for m, c in sorted(by_melds.items()))
    lines = [
        "## Table sizes",
        "",
        "N = 58 + 112·M + 168·n·M for n players, where M is the most melds among the contracts "
        f"played ({counts}).",
        "",
        "| players | N, M = 2 | N, M = 3 | N, M = 4 (all ten contracts) |",
        "|---|---|---|---|",
    ]
    for n in range(3, 9):
        sizes = [ActionTable(Rules(num_players=n, contracts=c)).size for c in ((1,), (4,), ALL_CONTRACTS)]
        lines.append(f"| {n} | {sizes[0]} | {sizes[1]} | {sizes[2]} |")
    lines += ["", "## Block ranges", ""]
    for rules in (Rules(num_players=4), Rules(num_players=8), Rules(num_players=4, contracts=(1,))):
        lines += [table_markdown(rules), ""]
    table = ActionTable(Rules(num_players=4))
    lines += ["## Examples (4 players, all contracts)", "", "| name | id |", "|---|---|"]
    lines += [f"| `{name}` | {table.action_id(name)} |" for name in _ACTION_EXAMPLES.split("|")]
    return "\n".join(lines) + "\n"


def generated_docs() -> dict[str, str]:
    """Generated part of each document, by path relative to the repository root."""
    return {"docs/actions.md": actions_markdown(), "docs/observation.md": layout_markdown() + "\n"}


def write_docs(root: str | Path = ".") -> None:
    """Rewrite the generated part (after :data:`DOCS_MARKER`) of each generated document."""
    for rel, generated in generated_docs().items():
        path = Path(root) / rel
        prose = path.read_text(encoding="utf-8").split(DOCS_MARKER)[0] if path.exists() else ""
        path.write_text(prose.rstrip("\n") + "\n\n" + DOCS_MARKER + "\n\n" + generated, encoding="utf-8")


def register() -> None:
    """Register ``shanghai/Shanghai-v0`` with PettingZoo (done on ``import shanghai_env``).

    PettingZoo has a registry (``pettingzoo.make``) from version 1.27 on; with older versions
    this does nothing and the env is made with ``shanghai_env.env()``.
    """
    import pettingzoo

    if not hasattr(pettingzoo, "register"):
        return
    if ENV_ID not in pettingzoo.aec_registry:
        pettingzoo.register("aec", ENV_ID, entry_point="shanghai_env.aec:env")
