"""
# Shanghai Rummy, batched for self-play (many games in one object)

``vector_env(num_envs, **options)`` steps ``num_envs`` games together and hands out arrays for
all of them at once, so that a network decides every game's move in one forward pass (the
shape of Pgx's and envpool's batched envs, and of CleanRL's loops over them)::

    venv = shanghai_env.vector_env(num_envs=64, num_players=4)     # any rule option
    obs, mask, seat = venv.reset(seed=0)   # (N, L) int8, (N, A) int8, (N,) int64: the seat to act
    obs, mask, seat, rewards, done = venv.step(actions)   # rewards (N, P) float32, done (N,) bool

Row ``i`` is game ``i``: the observation and the action mask are those of the seat to act in
it, exactly what ``env().observe(f"player_{seat}")`` gives in the same state (the same
:class:`~shanghai_env.observation.ObservationEncoder`, the same action table: docs/actions.md and
docs/observation.md); ``actions[i]`` is that seat's action. ``rewards[i]`` holds every seat's
rewards since the previous step of game ``i``; ``done[i]`` says that the game ended on this
step, and ``deal_ended[i]`` (an attribute, ``(N,)`` bool, in every reward mode) that a deal
ended (the game's last deal included). A finished game restarts on its own: its row then shows
the first decision of the next game, and ``final_scores[i]`` the finished game's totals.

## Options

- ``reward``: ``"deal"`` (default: ``-deal score / 100`` to each seat when a deal ends,
  docs/rules.md section 6), ``"win"`` (+1 to the lowest totals, -1 to the others, at the game's
  end): the AEC env's modes, :func:`shanghai_env.aec.step_rewards`; or ``"relative"``: each
  seat's ``"deal"`` reward minus the table's mean on that step (``rewards - rewards.mean(1,
  keepdims=True)`` in float32, what ``shanghai-train``'s default ``--reward relative`` computes).
- ``mask_dtype``: ``np.int8`` (default, 0/1 as the AEC env's masks) or ``bool``;
  ``venv.bool_mask`` is a bool view of an int8 mask (no copy).
- ``copy``: ``False`` (default) or ``True``; see the buffer contract below.
- ``encoding``: ``"table"`` (default) or ``"any_table"``: the AEC env's option of that name
  (:mod:`shanghai_env.any_table`). With ``"any_table"`` the observations, masks, legal ids and
  actions are those of the 8-seat layout and table, for the caller's seats and for the players
  seated inside alike (their decisions carry the 8-seat table and observation).

## The buffer contract

``reset`` and ``step`` return the env's own arrays ``venv.obs``, ``venv.mask`` and ``venv.seat``
(``venv.extra`` too, for ``features``), and every later ``step`` or ``reset`` rewrites them in
place: an array kept from one step shows the next step's values. Copy what you keep (a replay
buffer's ``buffer[t] = obs`` copies), or make the env with ``copy=True``: ``reset`` and ``step``
then return fresh copies (the env's own arrays still hold the same values), at the price of
those copies (docs/performance.md). ``rewards``, ``done`` and ``deal_ended`` are new arrays at
every step, safe to keep; so are the lists of ``legal_actions``.

## Seats played inside

``players`` (one entry per seat, default all ``None``) says who plays each seat:

- ``None``: the caller (its actions come through ``step``); at least one seat must be the caller's;
- a :class:`~shanghai_env.decision.BatchAgent` (a network): one object plays that seat in every
  game, and its decisions in all games are taken in one ``act_batch`` call (or, if it has one,
  one ``act_arrays(observations, legal_ids)`` call, which needs no view of the game built);
- a callable with no arguments that returns an :class:`~shanghai_env.decision.Agent` (a bot such
  as ``lambda: make_agent("planner")``): one agent per game, ``reset`` with a seed of its own
  before every game.

``step`` plays the caller's actions, then every seat played inside until each game awaits one
of the caller's seats again; the rewards and ends of those moves are in the same step's arrays.

## Seeds

``reset(seed=s)`` fixes every game: game ``k`` (counting from 0) of row ``i`` is dealt by
``Game(rules).reset(game_seed(s, i, k))`` (so ``env().reset(seed=venv.game_seeds[i])`` deals the
same game), and each inside agent of that game is reset with its own seed derived the same way.
The same seed and the same actions give the same games, observations and rewards.

``reset(seed=[s_0, ..., s_{N-1}])`` (Gymnasium's one seed per env) seeds each row on its own:
row ``i`` deals and plays what row 0 of ``reset(seed=s_i)`` would (game ``k`` by
``game_seed(s_i, 0, k)``, its bots seeded alike); an entry ``None`` is drawn at random. A network
seated inside (one object for every game) is then seeded from the whole list.

``state()`` gives the games in progress as plain data (each row's game as its seed and moves,
the rows' counters: JSON values) and ``load_state(state)`` rebuilds them exactly in an env made
with the same arguments, every game's moves played again and its seated bots asked again at
theirs (their plans and generators as they stood).

## Errors

``actions`` must be ``num_envs`` integers, each legal in its game (its mask entry 1); anything
else is a TypeError or ValueError naming the row and what is allowed, raised before any game
changes: the whole batch is checked before any row is played. ``legal_actions`` lists each
row's legal action ids (ascending), for samplers that draw from the legal moves only (built when
first read after a step). ``mask`` and ``legal_actions`` are the caller's, rewritten (the mask)
or replaced (the lists) at every step: legality is checked against the games' own legal moves,
so editing them changes nothing but what the caller reads.
Every argument of every call (``observe``'s row and seat, the seeds, ``players``, ``features``)
is checked the same way, and ``num_envs`` is at most :data:`MAX_ENVS`.

The seats played inside run after the caller's moves have been played, so their errors (an
exception, or an answer that is no legal action id: ``True``, ``3.0``, ``None``, which name the
player, its seat and the game) cannot be checked first. Such an error leaves the games part-way
through the step; the env then refuses every use with a RuntimeError saying so until the next
``reset``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .aec import REWARD_MODES, play
from .any_table import ENCODINGS, encoding_tables
from .checks import action_id, choice_arg, int_arg, is_int
from .decision import Agent, BatchAgent, chosen_move, decision_for
from .engine import Game
from .legal import BUY_PHASE_MOVES, DRAW_PHASE_MOVES
from .observation import INT8
from .rules import Rules

PlayerEntry = BatchAgent | Callable[[], Agent] | None
# the AEC env's reward modes, and "relative": each seat's "deal" reward minus the table's mean
VECTOR_REWARD_MODES = (*REWARD_MODES, "relative")
MASK_DTYPES = ("int8", "bool")
SEED_LIMIT = 2**63
SHARED_ROW = 2**32  # the row number in the seeds of players that play every game
# games in one env: a dealt game holds about 110 to 370 KiB (3 to 8 players), so this many take
# 7 to 24 GiB; the bound turns a slip like num_envs=10**12 into an error instead of a machine
# out of memory
MAX_ENVS = 2**16
STATE_FORMAT = "shanghai-vector-state"  # what VectorEnv.state() returns, and its version
STATE_VERSION = 1
# what a state holds per row (lists of num_envs entries)
_ROW_KEYS = ("games_played", "game_seeds", "moves", "deals_seen", "deal_start", "final_scores", "rewards_due")
_COUNTS = ("deals", "went_out", "moves")


def game_seed(seed: int, row: int, game: int, seat: int = -1) -> int:
    """The seed of game ``game`` of row ``row`` under ``reset(seed=seed)`` (seat >= 0: of the
    agent playing that seat inside that game)."""
    words = [seed, row, game] if seat < 0 else [seed, row, game, seat + 1]
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] % SEED_LIMIT)


def env_count(num_envs: Any) -> int:
    """``num_envs`` checked: an int 1..MAX_ENVS, before anything is built."""
    count = int_arg("num_envs", num_envs, low=1)
    if count > MAX_ENVS:
        raise ValueError(
            f"num_envs must be an int 1..{MAX_ENVS} (a dealt game holds 110 to 370 KiB; "
            f"for more, run several envs), got {num_envs!r}"
        )
    return count


def _entropy() -> int:
    return int(np.random.SeedSequence().entropy % SEED_LIMIT)  # type: ignore[operator]


def reset_seeds(seed: Any, num_envs: int) -> tuple[int, list[int] | None]:
    """A reset's ``seed`` checked: ``(seed, None)`` for one int (``None``: one drawn at random),
    or for one seed per game ``(a seed drawn from the list for the networks, the list)``, its
    ``None`` entries drawn at random. TypeError/ValueError naming what is allowed otherwise."""
    allowed = f"a non-negative int, a list of {num_envs} of them (one seed per game), or None"
    if seed is None:
        return _entropy(), None
    if is_int(seed):
        if seed < 0:
            raise ValueError(f"seed must be {allowed}, got {seed!r}")
        return int(seed), None
    if isinstance(seed, np.ndarray) and seed.ndim == 1:
        seed = seed.tolist()
    if not isinstance(seed, (list, tuple)):
        raise TypeError(f"seed must be {allowed}, got {seed!r} ({type(seed).__name__})")
    if len(seed) != num_envs:
        raise ValueError(f"seed: a list of seeds holds one seed per game ({num_envs}), got {len(seed)}")
    rows = []
    for i, s in enumerate(seed):
        if s is None:
            rows.append(_entropy())
        elif not is_int(s):
            raise TypeError(f"seed[{i}] must be a non-negative int or None, got {s!r} ({type(s).__name__})")
        elif s < 0:
            raise ValueError(f"seed[{i}] must be a non-negative int or None, got {s!r}")
        else:
            rows.append(int(s))
    shared = int(np.random.SeedSequence(rows).generate_state(1, np.uint64)[0] % SEED_LIMIT)
    return shared, rows


def legal_action_list(actions: Any, legal: Sequence[tuple[int, ...]]) -> list[int] | None:
    """``actions`` as a list of ints if it is the usual input, a list of Python ints or a 1-d
    integer array, one per row and each among that row's ``legal`` ids; else None, for
    :func:`checked_actions` to convert it or name what is wrong. The usual input is checked with
    one membership test per row, without the numpy calls that tell every wrong input apart."""
    if isinstance(actions, np.ndarray):
        if actions.ndim != 1 or actions.dtype.kind not in "iu":
            return None
        actions = actions.tolist()
    elif type(actions) is not list:
        return None
    if len(actions) != len(legal):
        return None
    for a, ids in zip(actions, legal):
        if type(a) is not int or a not in ids:  # bools and numpy ints take the long way
            return None
    return actions


def checked_actions(
    actions: Any, legal: Sequence[tuple[int, ...]], size: int, name: Callable[[int], str]
) -> np.ndarray:
    """``actions`` as int64 ids, one per row, each among that row's ``legal`` ids (the env's own,
    read from its games: never a buffer handed to the caller); TypeError/ValueError naming the
    first bad row and what is allowed otherwise. Every row is checked before any is played."""
    rows = len(legal)
    acts = np.asarray(actions)
    if acts.shape != (rows,):
        raise ValueError(f"actions must have shape ({rows},), one per game, got {acts.shape}")
    if acts.dtype == np.bool_ or not np.issubdtype(acts.dtype, np.integer):
        raise TypeError(f"actions must be integers (action ids 0..{size - 1}), got {acts.dtype}")
    bad = np.flatnonzero((acts < 0) | (acts >= size))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"actions[{i}] = {int(acts[i])} is no action id; ids are 0..{size - 1}")
    acts = acts.astype(np.int64)
    for i, (a, ids) in enumerate(zip(acts.tolist(), legal)):
        if a not in ids:
            raise ValueError(
                f"actions[{i}] = {a} ({name(a)}) is not legal in game {i}; legal there: {list(ids[:12])}"
            )
    return acts


class VectorEnv:
    """``num_envs`` games of Shanghai Rummy stepped together; see the module docstring."""

    def __init__(
        self,
        num_envs: int = 64,
        *,
        players: Sequence[PlayerEntry] | None = None,
        reward: str = "deal",
        first_row: int = 0,
        features: Callable[[Game, int], np.ndarray] | None = None,
        features_size: int = 0,
        mask_dtype: Any = np.int8,
        copy: bool = False,
        encoding: str = "table",
        **rule_options: Any,
    ) -> None:
        self.num_envs = env_count(num_envs)
        # rows are numbered from first_row in the seeds: a worker process holding rows 32..63 of a
        # larger batch deals the very games those rows deal in one process
        self.first_row = int_arg("first_row", first_row, low=0)
        self.rules = Rules.from_options(rule_options)
        self.reward_mode = choice_arg("reward", reward, VECTOR_REWARD_MODES)
        self.encoding = choice_arg("encoding", encoding, ENCODINGS)
        mask_type = mask_dtype_arg(mask_dtype)
        if not isinstance(copy, (bool, np.bool_)):
            raise TypeError(f"copy must be True or False, got {copy!r} ({type(copy).__name__})")
        self.copy = bool(copy)
        n = self.num_players = self.rules.num_players
        if players is not None and not isinstance(players, (list, tuple)):
            raise TypeError(
                f"players must be a list or tuple of one entry per seat ({n}): None for a seat played "
                f"through step, a BatchAgent, or a factory of Agents; got {players!r}"
            )
        entries = list(players) if players is not None else [None] * n
        if len(entries) != n:
            raise ValueError(f"players must have one entry per seat ({n}), got {len(entries)}")
        self._shared: list[BatchAgent | None] = [None] * n
        self._factories: list[Callable[[], Agent] | None] = [None] * n
        for s, entry in enumerate(entries):
            if entry is None:
                continue
            if isinstance(entry, type):  # a class is a factory (its instances have the methods)
                self._factories[s] = entry
            elif isinstance(entry, BatchAgent):
                self._shared[s] = entry
            elif isinstance(entry, Agent):
                raise TypeError(
                    f"players[{s}] is an Agent without act_batch, which would be shared by every game: "
                    "pass a factory (a callable returning a fresh Agent) instead"
                )
            elif callable(entry):
                self._factories[s] = entry
            else:
                raise TypeError(
                    f"players[{s}] must be None (the caller's seat), a BatchAgent or a factory of "
                    f"Agents, got {type(entry).__name__}"
                )
        self.caller_seats = tuple(s for s in range(n) if entries[s] is None)
        if not self.caller_seats:
            raise ValueError("players: at least one seat must be None (played through step)")
        if features is not None and not callable(features):
            raise TypeError(
                f"features must be a callable features(game, seat) -> features_size numbers, or None; "
                f"got {features!r}"
            )
        width = int_arg("features_size", features_size, low=0 if features is None else 1)
        if features is None and width:
            raise ValueError(
                f"features_size is the length of what features(game, seat) returns; without features "
                f"it must be 0, got {features_size!r}"
            )
        self._inside = [entries[s] is not None for s in range(n)]
        self._any_inside = any(self._inside)
        self.table, self.encoder = encoding_tables(self.rules, self.encoding)
        self.num_actions = self.table.size
        self.observation_length = int(self.encoder.size)
        num = self.num_envs
        self._games = [Game(self.rules) for _ in range(num)]
        self._agents: list[list[Agent | None]] = [
            [f() if f is not None else None for f in self._factories] for _ in range(num)
        ]
        for row in self._agents:
            for s, agent in enumerate(row):
                if self._factories[s] is not None and not isinstance(agent, Agent):
                    raise TypeError(
                        f"players[{s}]() returned {type(agent).__name__}, not an Agent (name, reset, act)"
                    )
        # extra inputs of the seat to act, computed by ``features(game, seat)`` (which must read
        # only what that seat sees): (N, features_size) float32, zero-width without features
        self.features = features
        self.extra = np.zeros((num, width), np.float32)
        self.obs = np.zeros((num, self.observation_length), INT8)
        self.mask = np.zeros((num, self.num_actions), mask_type)
        self.seat = np.zeros(num, np.int64)
        self.final_scores = np.zeros((num, n), np.int64)
        self.deal_ended = np.zeros(num, bool)  # a deal ended in the row on the last step
        self.game_seeds = [0] * num
        self.games_played = [0] * num  # games started per row since reset
        # each row's legal ids as read from its game: what step checks actions against (the
        # caller's legal_actions and mask may be edited; these are never handed out)
        self._legal: list[tuple[int, ...]] = [() for _ in range(num)]
        self._legal_lists: list[list[int]] | None = None  # legal_actions, built when first read
        self._acc = np.zeros((num, n), np.float32)
        self._deals_seen = [0] * num
        self._deal_start = [0] * num  # the game's move count when its current deal began
        # each row's action ids since its game was dealt: with the game's seed, what state() keeps
        self._moves: list[list[int]] = [[] for _ in range(num)]
        self._unrecorded: set[int] = set()  # rows of a copy made before moves were kept, until dealt again
        self._ended: dict[int, np.ndarray] = {}  # rewards of games that ended in this step
        # deals ended since reset, those someone went out of, and their moves (for training logs)
        self.deal_counts = {"deals": 0, "went_out": 0, "moves": 0}
        self._seed: int | None = None
        self._row_seeds: list[int] | None = None  # one seed per row (reset with a list)
        self._broken: str | None = None  # why the games stand part-way through a step
        self._fast_paths()

    def _fast_paths(self) -> None:
        """What the per-row writes use, rebuilt after unpickling (views and caches do not pickle).

        Each row has an encoder of its own (:meth:`ObservationEncoder.fork`), so that its cached
        pieces (rotated table, scores, the deal's slices) are not evicted by the other rows', and
        its table's bytes are kept until the engine's ``table_version`` moves (or a new deal or
        game brings another table). The batch arrays are written through flat byte views, with
        no numpy call per row; the draw and buy phases' ids are shared tuples."""
        num = self.num_envs
        self._encoders = [self.encoder.fork() for _ in range(num)]
        self._tables: list[tuple[Any, int, bytes]] = [(None, -1, b"")] * num
        self._obs_bytes = self.obs.reshape(-1).data.cast("B")
        self._mask_bytes = self.mask.reshape(-1).data.cast("B")
        action_of = self.table.action_of
        self._draw_ids = tuple(sorted(action_of[m] for m in DRAW_PHASE_MOVES))
        self._buy_ids = tuple(sorted(action_of[m] for m in BUY_PHASE_MOVES))

    # --- public ----------------------------------------------------------------------------

    @property
    def _deal_mode(self) -> str:
        """The AEC env's reward mode the rows' steps take ("relative" is "deal" less the mean)."""
        return "deal" if self.reward_mode == "relative" else self.reward_mode

    @property
    def games(self) -> list[Game]:
        """The engine's games, one per row (omniscient: for tests and tools, not for players)."""
        return self._games

    @property
    def broken(self) -> str | None:
        """Why the env refuses every use until ``reset`` (an error stopped a step part-way), or None."""
        return self._broken

    @property
    def started(self) -> bool:
        """Whether ``reset`` has dealt the games (a copy of a started env is started too)."""
        return self._seed is not None

    def reset(
        self, seed: int | Sequence[int | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal a fresh game in every row; returns ``(obs, mask, seat)`` (see the module docstring).
        ``seed``: one int, one per game (a list), or None (drawn at random).

        The arrays are the env's own buffers (``venv.obs``, ``venv.mask``, ``venv.seat``), rewritten
        in place by every later ``step`` and ``reset``: copy what you keep (or make the env with
        ``copy=True``, which returns copies).
        """
        self.reset_checked(*reset_seeds(seed, self.num_envs))
        if self.copy:
            return self.obs.copy(), self.mask.copy(), self.seat.copy()
        return self.obs, self.mask, self.seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play one action in every game; returns ``(obs, mask, seat, rewards, done)``.

        ``obs``, ``mask`` and ``seat`` are the env's own buffers, rewritten in place by the next
        ``step`` or ``reset`` (an array kept from this step then shows the next one's values):
        copy what you keep, or make the env with ``copy=True`` to get copies. ``rewards`` and
        ``done`` are new arrays at every step, and so is :attr:`deal_ended`.
        """
        self._usable("step()")
        acts = legal_action_list(actions, self._legal)
        if acts is None:
            acts = checked_actions(actions, self._legal, self.num_actions, self.table.name).tolist()
        num = self.num_envs
        done = np.zeros(num, bool)
        self.deal_ended = np.zeros(num, bool)
        moves, games, seen, played = self.table.moves, self._games, self._deals_seen, self._moves
        mode = self._deal_mode
        try:
            for i, a in enumerate(acts):
                # every id is one of the row's legal ids, read from its game: checked once
                ended = play(games[i], moves[a], seen[i], mode, legal=True)
                played[i].append(a)
                if ended is not None:
                    self._settle(i, done, ended)
            if self._any_inside:
                self._advance(range(num), done)
            else:
                self._write_rows()
        except BaseException as err:
            self._break(err, "step")
            raise
        rewards = self._acc
        self._acc = np.zeros(rewards.shape, np.float32)  # zeros_like costs a microsecond more
        # a game that ended returns its own rewards; any after its restart wait for the next step
        for i, r in self._ended.items():
            self._acc[i] = rewards[i]
            rewards[i] = r
        self._ended.clear()
        if self.reward_mode == "relative":
            # the very float32 operation the trainer's --reward relative applies to "deal" rewards
            rewards -= rewards.mean(1, keepdims=True)
        if self.copy:
            return self.obs.copy(), self.mask.copy(), self.seat.copy(), rewards, done
        return self.obs, self.mask, self.seat, rewards, done

    @property
    def legal_ids(self) -> tuple[tuple[int, ...], ...]:
        """Each game's legal action ids now, immutable (what :meth:`step` checks actions against)."""
        return tuple(self._legal)

    @property
    def legal_actions(self) -> list[list[int]]:
        """Each row's legal action ids, ascending: lists of the caller's own, new after every
        ``step`` and ``reset`` (built when first read in a step; editing them changes nothing
        but what the caller reads: legality is checked against the games)."""
        if self._legal_lists is None:
            self._legal_lists = [list(ids) for ids in self._legal]
        return self._legal_lists

    @property
    def bool_mask(self) -> np.ndarray:
        """:attr:`mask` seen as bool (a view of the same buffer, no copy; ``mask_dtype=bool``
        makes the mask itself bool)."""
        return self.mask.view(np.bool_)

    def observe(self, row: int, seat: int) -> np.ndarray:
        """The observation of any seat in game ``row`` now (e.g. to bootstrap a value for a seat
        that is not to act); the same vector ``env().observe`` gives that seat."""
        row, seat = self._row_seat(row, seat, "observe()")
        return np.frombuffer(self.encoder.encode_bytes(self._games[row], seat), INT8)

    def observe_extra(self, row: int, seat: int) -> np.ndarray:
        """The extra inputs (``features``) of any seat in game ``row`` now."""
        row, seat = self._row_seat(row, seat, "observe_extra()")
        if self.features is None:
            return np.zeros(0, np.float32)
        return self._features_of(self._games[row], seat)

    def close(self) -> None:
        """Nothing to let go of: the games are this object's (a worker env's close stops processes)."""

    def game_moves(self, row: int) -> list[int]:
        """The action ids played in game ``row`` since it was dealt (its record with its seed,
        ``game_seeds[row]``)."""
        row = int_arg("row", row, low=0, high=self.num_envs - 1)
        return list(self._moves[row])

    def state(self) -> dict[str, Any]:
        """The games in progress as plain data (ints, floats, lists and dicts, which JSON and
        ``torch.load(weights_only=True)`` read) for :meth:`load_state`: each row's game as its
        seed and its moves (action ids), with the counters of the rows. RuntimeError before
        ``reset`` or while the env is unusable."""
        self._usable("state()")
        if self._unrecorded:
            raise RuntimeError(
                f"games {sorted(self._unrecorded)[:8]} were copied from an env that did not keep their "
                "moves: state() holds them once they are dealt again (or after reset())"
            )
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "num_envs": self.num_envs,
            "num_players": self.num_players,
            "first_row": self.first_row,
            "seed": self._seed,
            "row_seeds": None if self._row_seeds is None else list(self._row_seeds),
            "games_played": list(self.games_played),
            "game_seeds": list(self.game_seeds),
            "moves": [list(m) for m in self._moves],
            "deals_seen": list(self._deals_seen),
            "deal_start": list(self._deal_start),
            "final_scores": self.final_scores.tolist(),
            "rewards_due": self._acc.tolist(),  # float32 values: exact as Python floats
            "deal_ended": self.deal_ended.tolist(),
            "deal_counts": dict(self.deal_counts),
        }

    def load_state(self, state: Mapping[str, Any]) -> list[int]:
        """Rebuild the games of :meth:`state` in this env, which must be made with the same
        arguments (rules, players, ``first_row``): every row's game is dealt from its seed and its
        moves played again, and every bot seated inside is reset with its seed and asked again at
        each of its moves, so that its plans and generator stand as they stood. A network seated
        inside (one object for every game) is reset as ``reset`` resets it: exact for a greedy one.

        Returns the rows where a bot chose another move in this replay than the one it had played
        (a bot that is not deterministic); the recorded move is played there, so the game is exact
        and only that bot's memory may differ. TypeError/ValueError naming what does not fit."""
        checked = _checked_state(state, self)
        differ: list[int] = []
        self._broken = None
        try:
            self._seed, self._row_seeds = checked["seed"], checked["row_seeds"]
            for s, shared in enumerate(self._shared):
                if shared is not None:
                    shared.reset(game_seed(self._seed, SHARED_ROW, 0, s))
            for i in range(self.num_envs):
                self.games_played[i] = checked["games_played"][i] - 1
                self._new_game(i)
                if self.game_seeds[i] != checked["game_seeds"][i]:
                    raise ValueError(
                        f"state: game {i}'s seed is not the one this env deals there (another "
                        "first_row or rules): load a state into an env made with the same arguments"
                    )
                if self._replay(i, checked["moves"][i]):
                    differ.append(i)
                if (
                    self._inside[self._games[i].to_act]
                    or len(self._games[i].deal_results) != (checked["deals_seen"][i])
                ):
                    raise ValueError(
                        f"state: game {i}'s moves do not end where a step leaves a game (a caller's "
                        "seat to act, its deals counted)"
                    )
            self._deals_seen = list(checked["deals_seen"])
            self._deal_start = list(checked["deal_start"])
            self.final_scores[:] = checked["final_scores"]
            self._acc[:] = checked["rewards_due"]
            self.deal_ended = np.array(checked["deal_ended"], bool)
            self.deal_counts = dict(checked["deal_counts"])
            self._ended.clear()
            self._write_rows()
        except BaseException as err:
            self._break(err, "load_state")
            raise
        return differ

    def _replay(self, i: int, actions: list[int]) -> bool:
        """Play ``actions`` in row ``i``'s fresh game, asking each bot seated inside at its own
        moves; whether a bot chose otherwise. ValueError if the moves are not this game's."""
        game, agents, moves = self._games[i], self._agents[i], self.table.moves
        differs = False
        for k, a in enumerate(actions):
            s = game.to_act
            agent = agents[s]
            if agent is not None:
                chosen = agent.act(decision_for(game, s, self.table, self._encoders[i]))
                differs = differs or not (is_int(chosen) and int(chosen) == a)
            try:
                game.apply(moves[a])
            except ValueError as err:
                raise ValueError(f"state: move {k} of game {i} does not replay ({err})") from None
            self._moves[i].append(a)
        return differs

    # --- inside ----------------------------------------------------------------------------

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A copy (a checkpoint) from before the extra inputs existed gets none; one from before
        the env kept its own legal ids gets them from the arrays it saved."""
        old_lists = state.pop("legal_actions", None)  # an attribute before it became a property
        self.__dict__.update(state)
        if "features" not in state:
            self.features = None
            self.extra = np.zeros((self.num_envs, 0), np.float32)
        if "_legal" not in state:
            self._legal = [tuple(ids) for ids in old_lists or [[] for _ in range(self.num_envs)]]
            self._row_seeds = None
            self._broken = None
        if "_inside" in state and "_any_inside" not in state:
            self._any_inside = any(self._inside)
        if "deal_ended" not in state:
            self.deal_ended = np.zeros(self.num_envs, bool)
        if "copy" not in state:
            self.copy = False
        if "encoding" not in state:
            self.encoding = "table"
        if "_moves" not in state:  # a copy made before the env kept each game's moves
            self._moves = [[] for _ in range(self.num_envs)]
            self._unrecorded = set(range(self.num_envs))
        self._legal_lists = None
        self._fast_paths()

    def __getstate__(self) -> dict[str, Any]:
        """Everything but what :meth:`_fast_paths` rebuilds (views, per-row encoders and caches)."""
        state = self.__dict__.copy()
        for key in _REBUILT:
            state.pop(key, None)
        return state

    def _usable(self, call: str) -> None:
        if self._broken is not None:
            raise RuntimeError(f"this env is unusable until reset(): {self._broken}")
        if self._seed is None:
            raise RuntimeError(f"call reset() before {call}")

    def _row_seat(self, row: Any, seat: Any, call: str) -> tuple[int, int]:
        self._usable(call)
        return (
            int_arg("row", row, low=0, high=self.num_envs - 1),
            int_arg("seat", seat, low=0, high=self.num_players - 1),
        )

    def _break(self, err: BaseException, call: str) -> None:
        """Mark the env unusable until reset: ``err`` stopped ``call`` with games part-way through.
        Rolling back would need every seated bot's memory as it was, so the env says so instead."""
        self._broken = (
            f"its last {call}() stopped part-way, its games left as they stood, when "
            f"{type(err).__name__}: {err}"
        )
        if hasattr(err, "add_note"):  # Python 3.11+: the failing call's traceback says so too
            err.add_note("the env is unusable until reset(): this error left its games part-way through")

    def reset_checked(self, seed: int, row_seeds: list[int] | None) -> None:
        """Deal every row from seeds already checked by :func:`reset_seeds` (what :meth:`reset`
        does after checking its argument, without returning the arrays): a worker of
        :class:`~shanghai_env.vector_workers.WorkerVectorEnv` deals its block's share this way."""
        self._broken = None
        self._seed, self._row_seeds = seed, row_seeds
        try:
            for s, shared in enumerate(self._shared):
                if shared is not None:  # a row number no game has
                    shared.reset(game_seed(seed, SHARED_ROW, 0, s))
            self._acc[:] = 0.0
            self.final_scores[:] = 0
            self.deal_ended = np.zeros(self.num_envs, bool)
            for i in range(self.num_envs):
                self.games_played[i] = 0
                self._new_game(i)
            self._advance(range(self.num_envs), np.zeros(self.num_envs, bool))
        except BaseException as err:
            self._break(err, "reset")
            raise
        self._ended.clear()
        self._acc[:] = 0.0

    def _new_game(self, i: int) -> None:
        assert self._seed is not None
        k = self.games_played[i]
        if self._row_seeds is None:
            base, row = self._seed, self.first_row + i
        else:
            base, row = self._row_seeds[i], 0
        self.game_seeds[i] = seed = game_seed(base, row, k)
        self._games[i].reset(seed)
        self._tables[i] = (None, -1, b"")  # a game's first table; a new Game list anyway
        self._deals_seen[i] = 0
        self._deal_start[i] = 0
        self._moves[i] = []
        self._unrecorded.discard(i)
        self.games_played[i] = k + 1
        for s, agent in enumerate(self._agents[i]):
            if agent is not None:
                agent.reset(game_seed(base, row, k, s))

    def game_ended(self, row: int) -> None:
        """Called when the game of ``row`` has ended, before the row deals its next game: the
        row's game still stands at the finished game's end (``observe(row, seat)`` shows it).
        Does nothing here: a hook for subclasses (the SB3 view keeps its learner's terminal
        observation)."""

    def _play(self, i: int, a: int, done: np.ndarray) -> None:
        """Play action ``a`` (checked by the engine) in row ``i``'s game, as :meth:`step` plays a row's."""
        ended = play(self._games[i], self.table.moves[a], self._deals_seen[i], self._deal_mode)
        self._moves[i].append(a)
        if ended is not None:
            self._settle(i, done, ended)

    def _settle(self, i: int, done: np.ndarray, rewards: list[float]) -> None:
        """After a move in game ``i`` that ended a deal: collect its rewards; a finished game
        restarts."""
        game = self._games[i]
        new = game.deal_results[self._deals_seen[i] :]
        self._deals_seen[i] = len(game.deal_results)
        counts = self.deal_counts
        counts["deals"] += len(new)
        counts["went_out"] += sum(r.out_player >= 0 for r in new)
        counts["moves"] += game.move_count - self._deal_start[i]
        self._deal_start[i] = game.move_count
        self.deal_ended[i] = True
        self._acc[i] += rewards
        if game.game_over:
            self.final_scores[i] = game.scores
            done[i] = True
            # a second game ending in one step (inside seats only) adds to the first's
            self._ended[i] = self._ended.get(i, 0.0) + self._acc[i]
            self._acc[i] = 0.0
            self.game_ended(i)
            self._new_game(i)

    def _advance(self, rows: Sequence[int], done: np.ndarray) -> None:
        """Play the inside seats of ``rows`` (every row) until each awaits a caller's seat; then
        write every row's observation, mask and seat."""
        pending = [i for i in rows if self._inside[self._games[i].to_act]]
        table, encoder = self.table, self.encoder
        while pending:
            # a network playing several seats decides all of them, in every game, in one batch
            batched: dict[int, list[tuple[int, int]]] = {}
            for i in pending:
                game = self._games[i]
                s = game.to_act
                agent = self._agents[i][s]
                if agent is None:
                    batched.setdefault(id(self._shared[s]), []).append((i, s))
                else:
                    decision = decision_for(game, s, table, self._encoders[i])
                    move = chosen_move(decision, agent.act(decision), _who(agent, s, i))
                    self._play(i, table.action_of[move], done)
            for group in batched.values():
                shared = self._shared[group[0][1]]
                assert shared is not None
                if hasattr(shared, "act_arrays") and not getattr(shared, "needs_view", False):
                    self._act_arrays(shared, group, done)
                    continue
                decisions = [decision_for(self._games[i], s, table, encoder) for i, s in group]
                chosen = _answers(shared, "act_batch", shared.act_batch(decisions), group)
                for (i, s), d, a in zip(group, decisions, chosen):
                    self._play(i, table.action_of[chosen_move(d, a, _who(shared, s, i))], done)
            pending = [i for i in pending if self._inside[self._games[i].to_act]]
        self._write_rows()

    def _table_of(self, i: int, game: Game) -> bytes:
        """Row ``i``'s table bytes, kept while its game's table (the list and its version) stands."""
        kept = self._tables[i]
        table = game.table
        if kept[0] is table and kept[1] == game.table_version:
            return kept[2]
        data = self.encoder.table_bytes(game)
        self._tables[i] = (table, game.table_version, data)
        return data

    def _ids(self, game: Game) -> tuple[int, ...]:
        """The legal action ids of ``game``, ascending (the draw and buy phases' shared)."""
        legal = game.legal_moves()
        if legal is DRAW_PHASE_MOVES:
            return self._draw_ids
        if legal is BUY_PHASE_MOVES:
            return self._buy_ids
        return tuple(sorted(map(self.table.action_of.__getitem__, legal)))

    def _act_arrays(self, agent: Any, group: list[tuple[int, int]], done: np.ndarray) -> None:
        """A network that reads only the observation and the legal ids (``act_arrays(obs, legal)``,
        e.g. a ``shanghai-train`` player) decides from arrays, without building a view per game."""
        games, encoders = self._games, self._encoders
        legal = [list(self._ids(games[i])) for i, _ in group]
        obs = np.frombuffer(
            b"".join(
                encoders[i].encode_bytes(games[i], s, table=self._table_of(i, games[i])) for i, s in group
            ),
            INT8,
        ).reshape(len(group), self.observation_length)
        chosen = _answers(agent, "act_arrays", agent.act_arrays(obs, legal), group)
        size = self.num_actions
        # every answer of the batch is checked before any is played
        for k, ((i, s), ids, a) in enumerate(zip(group, legal, chosen)):
            if type(a) is not int:  # numpy ints pass; bools, floats, strings, None do not
                try:
                    chosen[k] = a = action_id(a, size)
                except (TypeError, ValueError) as err:
                    raise type(err)(f"{_who(agent, s, i)} answered {a!r}: {err}") from None
            if a not in ids:
                name = self.table.name(a) if 0 <= a < size else "no action id"
                raise ValueError(f"{_who(agent, s, i)} chose illegal action {a} ({name}); legal: {ids[:12]}")
        for (i, _), a in zip(group, chosen):
            self._play(i, a, done)

    def _features_of(self, game: Game, seat: int) -> Any:
        assert self.features is not None
        x = self.features(game, seat)
        width = self.extra.shape[1]
        if np.shape(x) != (width,):
            raise ValueError(
                f"features(game, seat) returned shape {np.shape(x)}; it must return features_size "
                f"{width} numbers"
            )
        return x

    def _write_rows(self) -> None:
        """Write every row's seat, observation, extra inputs, mask and legal ids into the batch
        arrays, in place: the mask zeroed whole first (nothing a caller wrote into it outlives
        the step), then a 1 at each legal id; the observations' bytes joined and copied in once."""
        games, encoders, tables, legal = self._games, self._encoders, self._tables, self._legal
        mask_out, size = self._mask_bytes, self.num_actions
        draw_ids, buy_ids = self._draw_ids, self._buy_ids
        action_of = self.table.action_of.__getitem__
        table_bytes = self.encoder.table_bytes
        features = self.features
        seats = [game.to_act for game in games]
        self.seat[:] = seats
        self.mask.fill(0)
        pieces: list[Any] = []
        for i, game in enumerate(games):
            s = seats[i]
            kept, table = tables[i], game.table
            if kept[0] is table and kept[1] == game.table_version:
                data = kept[2]
            else:
                data = table_bytes(game)
                tables[i] = (table, game.table_version, data)
            encoders[i].append_pieces(game, s, pieces, table=data)
            if features is not None:
                x = self._features_of(game, s)
                try:
                    self.extra[i] = x
                except (TypeError, ValueError):
                    raise TypeError(f"features(game, seat) must return numbers, got {x!r}") from None
            moves = game.legal_moves()
            if moves is DRAW_PHASE_MOVES:
                ids = draw_ids
            elif moves is BUY_PHASE_MOVES:
                ids = buy_ids
            else:
                ids = tuple(sorted(map(action_of, moves)))
            legal[i] = ids
            start = i * size
            for a in ids:
                mask_out[start + a] = 1
        self._obs_bytes[:] = b"".join(pieces)
        self._legal_lists = None


# what __getstate__ leaves out and _fast_paths rebuilds
_REBUILT = (
    "_encoders",
    "_tables",
    "_obs_bytes",
    "_mask_bytes",
    "_draw_ids",
    "_buy_ids",
    "_legal_lists",
)


def state_format(state: Any, name: str, version: int, source: str) -> None:
    """TypeError unless ``state`` is a dict, ValueError unless it is of format ``name`` and
    ``version`` (what ``source`` writes)."""
    if not isinstance(state, Mapping):
        raise TypeError(f"state must be a dict from {source}, got {type(state).__name__}")
    got = (state.get("format"), state.get("version"))
    if got != (name, version):
        raise ValueError(
            f"state must be a {name!r} version {version} dict from {source}, got format {got[0]!r} "
            f"version {got[1]!r}"
        )


def _checked_state(state: Any, env: VectorEnv) -> Mapping[str, Any]:
    """``state`` checked against ``env`` (:meth:`VectorEnv.load_state`): TypeError/ValueError naming
    the first field that is not what :meth:`VectorEnv.state` writes."""
    state_format(state, STATE_FORMAT, STATE_VERSION, "VectorEnv.state()")
    for key in ("num_envs", "num_players", "first_row"):
        if state.get(key) != getattr(env, key):
            raise ValueError(
                f"state holds {key} {state.get(key)!r} and this env {getattr(env, key)!r}: load a state "
                "into an env made with the same arguments"
            )
    n, p = env.num_envs, env.num_players

    def ints(key: str, value: Any, size: int | None, low: int = 0, high: float = float("inf")) -> None:
        ok = isinstance(value, (list, tuple)) and (size is None or len(value) == size)
        if not ok or not all(is_int(x) and low <= x <= high for x in value):
            length = "a list" if size is None else f"a list of {size}"
            raise ValueError(f"state[{key!r}] must be {length} ints in {low}..{high}, got {value!r:.80}")

    if not is_int(state.get("seed")) or state["seed"] < 0:
        raise ValueError(f"state['seed'] must be a non-negative int, got {state.get('seed')!r}")
    if state.get("row_seeds") is not None:
        ints("row_seeds", state["row_seeds"], n)
    for key in _ROW_KEYS:
        if not isinstance(state.get(key), (list, tuple)) or len(state[key]) != n:
            raise ValueError(f"state[{key!r}] must be a list of {n} entries, one per game")
    ints("games_played", state["games_played"], n, low=1)
    ints("game_seeds", state["game_seeds"], n)
    ints("deals_seen", state["deals_seen"], n)
    ints("deal_start", state["deal_start"], n)
    for i in range(n):
        ints(f"moves[{i}]", state["moves"][i], None, high=env.num_actions - 1)
        ints(f"final_scores[{i}]", state["final_scores"][i], p, low=-(2**62))
        due = state["rewards_due"][i]
        if not (isinstance(due, (list, tuple)) and len(due) == p and all(isinstance(x, float) for x in due)):
            raise ValueError(f"state['rewards_due'][{i}] must be a list of {p} floats, got {due!r:.80}")
    ended = state.get("deal_ended")
    if not isinstance(ended, (list, tuple)) or len(ended) != n or not all(isinstance(x, bool) for x in ended):
        raise ValueError(f"state['deal_ended'] must be a list of {n} bools")
    counts = state.get("deal_counts")
    if not isinstance(counts, Mapping) or sorted(counts) != sorted(_COUNTS):
        raise ValueError(f"state['deal_counts'] must be a dict of {', '.join(_COUNTS)}, got {counts!r:.80}")
    ints("deal_counts", [counts[k] for k in _COUNTS], 3)
    return state


def mask_dtype_arg(value: Any) -> np.dtype[Any]:
    """``mask_dtype`` checked: int8 (the default: 0/1 as the AEC env's masks) or bool."""
    allowed = "np.int8 or 'int8' (the default), or bool, np.bool_ or 'bool'"
    try:
        dtype = np.dtype(value)
    except TypeError:  # not a dtype at all ('foo', 3, a list)
        kind = ValueError if isinstance(value, str) else TypeError
        raise kind(f"mask_dtype must be {allowed}, got {value!r}") from None
    if value is None or dtype.name not in MASK_DTYPES:
        raise ValueError(f"mask_dtype must be {allowed}, got {value!r}")
    return dtype


def _who(agent: Agent, seat: int, row: int) -> str:
    return f"agent {getattr(agent, 'name', type(agent).__name__)!r} in seat {seat} of game {row}"


def _answers(agent: Any, method: str, chosen: Any, group: list[tuple[int, int]]) -> list[Any]:
    """A network's answers to ``group``: a list (or tuple, or 1-d array) of one action per game."""
    seats = sorted({s for _, s in group})
    where = f"seat {seats[0]}" if len(seats) == 1 else f"seats {', '.join(map(str, seats))}"
    who = f"agent {getattr(agent, 'name', type(agent).__name__)!r} in {where}"
    if isinstance(chosen, np.ndarray) and chosen.ndim == 1:
        chosen = chosen.tolist()
    if not isinstance(chosen, (list, tuple)):
        raise TypeError(
            f"{who}: {method} must return a list of {len(group)} action ids, one per game, got {chosen!r}"
        )
    if len(chosen) != len(group):
        raise ValueError(f"{who}: {method} returned {len(chosen)} actions for {len(group)} games")
    return list(chosen)


def vector_env(num_envs: int = 64, **options: Any) -> VectorEnv:
    """``num_envs`` games stepped together (:class:`VectorEnv`); every rule option is a keyword."""
    return VectorEnv(num_envs, **options)
