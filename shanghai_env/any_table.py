"""One encoding for every table size: observations and actions "padded to eight seats".

The env's own encoding (``encoding="table"``, :mod:`shanghai_env.observation` and
:mod:`shanghai_env.actions`) has per-seat sections of length ``n`` (the number of players) and
an action table whose layoff and swap targets name one of ``n`` seats, so its lengths change
with ``n``. ``encoding="any_table"`` maps a table of 3 to 8 players into the layout of an
8-player table, so that one network can play every table size:

- **Observation**: the 8-player observation layout (:class:`ObservationEncoder` of the same
  rules with ``num_players=8``), seats relative to the observer as always (0 = me, 1 = the
  player to my left, ...). Seats ``n..7`` do not exist: every per-seat section holds zeros
  there. One slice is added at the end, ``num_players``: a one-hot of the player count
  (index ``n - 3``), so that a network can tell an empty seat from a player with nothing to
  show (the right-hand neighbour is seat ``n - 1``).
- **Actions**: the 8-player action table of the same contracts. A layoff or swap names its
  target seat relative to the actor, so ``layoff 7H 1.0`` (the first meld of the player to my
  left) is the same id at every table size. Ids whose target is an absent seat exist but are
  never legal. The map keeps the order of ids (the legal ids, sorted, list the same moves in
  the same order in both encodings); the ids of ``take`` .. layoffs are even the same numbers,
  only the swap block moves.

The 8-seat lengths depend only on the contracts played (``M``, the most melds a contract asks
for, sizes the table slice and the action table; ``D``, the number of deals, the ``deal``
one-hot), never on the player count or any other rule option.

:class:`AnyTable` holds numpy index maps between the two encodings of one rule set, so that a
conversion is one gather that works on batches: ``obs_index`` (observation n -> 8),
``mask_index`` (mask n -> 8), ``to_native`` (action id 8 -> n, ``-1`` for an absent seat) and
``to_any`` (action id n -> 8). Action ids are relative to the actor, so the action maps are the
same for every acting seat. :class:`AnyTableEncoder` is the observation encoder the envs use
with ``encoding="any_table"``: the native vector, mapped.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .actions import ActionTable, action_table
from .melds import CONTRACTS
from .moves import MoveKind
from .observation import ObservationEncoder
from .rules import Rules

ENCODINGS = ("table", "any_table")
MAX_SEATS = 8
MIN_SEATS = 3
NUM_SIZES = MAX_SEATS - MIN_SEATS + 1  # the num_players one-hot: 3..8 players
PLAYERS_TEXT = "one-hot player count 3..8 (index n - 3): seats n..7 are empty"
_TARGETED = (MoveKind.LAYOFF, MoveKind.SWAP)


def eight_seat_rules(rules: Rules) -> Rules:
    """``rules`` for eight players: the rule set whose layouts the any-table encoding uses."""
    return Rules(num_players=MAX_SEATS, contracts=rules.contracts)


class AnyTable:
    """Index maps between the native encoding of ``rules`` (n players) and its 8-seat encoding.

    Attributes (all read-only numpy arrays):

    - ``obs_index``: int64[L8]; ``obs_8 = ext[..., obs_index]`` where ``ext`` is ``obs_n`` with
      two constants appended, 0 (index ``L_n``) and 1 (index ``L_n + 1``): zeros for absent
      seats, the 1 of the ``num_players`` one-hot (:meth:`obs_to_any` does this);
    - ``mask_index``: int64[N8]; ``mask_8 = ext[..., mask_index]`` with ``ext`` the mask with
      one 0 appended (index ``N_n``) for the ids of absent seats (:meth:`mask_to_any`);
    - ``to_native``: int64[N8], the native id of every 8-seat id, ``-1`` for an absent seat;
    - ``to_any``: int64[N_n], the 8-seat id of every native id (``to_native[to_any] == arange``).
    """

    def __init__(self, rules: Rules) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        self.rules = rules
        self.num_players = rules.num_players
        self.table = action_table(rules)
        self.table_any = action_table(eight_seat_rules(rules))
        maps = _maps(rules.num_players, rules.max_melds, len(rules.contracts))
        self.obs_index, self.mask_index, self.to_native, self.to_any = maps
        self.native_obs_size = int(ObservationEncoder(rules).size)
        self.obs_size = len(self.obs_index)
        self.native_num_actions = self.table.size
        self.num_actions = self.table_any.size

    def obs_to_any(self, obs: np.ndarray) -> np.ndarray:
        """Native observations (``(..., L_n)``, one or a batch) in the 8-seat layout ``(..., L8)``."""
        obs = np.asarray(obs)
        _check_last("obs", obs, self.native_obs_size)
        ext = np.zeros((*obs.shape[:-1], self.native_obs_size + 2), obs.dtype)
        ext[..., :-2] = obs
        ext[..., -1] = 1
        return ext[..., self.obs_index]

    def mask_to_any(self, mask: np.ndarray) -> np.ndarray:
        """Native masks (``(..., N_n)``) over the 8-seat action table ``(..., N8)``."""
        mask = np.asarray(mask)
        _check_last("mask", mask, self.native_num_actions)
        ext = np.zeros((*mask.shape[:-1], self.native_num_actions + 1), mask.dtype)
        ext[..., :-1] = mask
        return ext[..., self.mask_index]

    def actions_to_native(self, actions: Any) -> np.ndarray:
        """8-seat action ids (any shape) as native ids; ``-1`` where the target seat is absent."""
        return self.to_native[_ids("actions", actions, self.num_actions)]

    def actions_to_any(self, actions: Any) -> np.ndarray:
        """Native action ids (any shape) as 8-seat ids."""
        return self.to_any[_ids("actions", actions, self.native_num_actions)]


def _check_last(name: str, values: np.ndarray, length: int) -> None:
    if values.ndim < 1 or values.shape[-1] != length:
        raise ValueError(f"{name} must end in the native length {length}, got shape {values.shape}")


def _ids(name: str, values: Any, size: int) -> np.ndarray:
    ids = np.asarray(values)
    if ids.dtype == np.bool_ or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name} must be integer action ids 0..{size - 1}, got {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= size):
        raise ValueError(f"{name} must be action ids 0..{size - 1}")
    return ids


def _frozen(values: np.ndarray) -> np.ndarray:
    values.flags.writeable = False
    return values


@cache
def _maps(n: int, max_melds: int, deals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``obs_index, mask_index, to_native, to_any`` for n players, M meld slots and D deals (the
    layouts depend on nothing else)."""
    contracts = _contracts(max_melds, deals)
    native = ObservationEncoder(Rules(num_players=n, contracts=contracts))
    eight = ObservationEncoder(Rules(num_players=MAX_SEATS, contracts=contracts))
    zero, one = native.size, native.size + 1
    obs_index = np.full(eight.size + NUM_SIZES, zero, np.int64)
    for name, sn in native.slices.items():
        s8 = eight.slices[name]
        ln, l8 = sn.stop - sn.start, s8.stop - s8.start
        if ln == l8:  # not per seat (or eight players): the same values
            obs_index[s8] = np.arange(sn.start, sn.stop)
            continue
        per_seat = ln // n
        if ln != n * per_seat or l8 != MAX_SEATS * per_seat:
            raise RuntimeError(f"layout: slice {name!r} is neither per seat nor the same at 8 seats")
        for seat in range(n):  # seat k of n is seat k of 8 (relative to the observer)
            lo = seat * per_seat
            obs_index[s8.start + lo : s8.start + lo + per_seat] = np.arange(
                sn.start + lo, sn.start + lo + per_seat
            )
    obs_index[eight.size + n - MIN_SEATS] = one
    table_n = action_table(Rules(num_players=n, contracts=contracts))
    table_8 = action_table(Rules(num_players=MAX_SEATS, contracts=contracts))
    to_native = np.array(
        [-1 if m.kind in _TARGETED and m.seat >= n else table_n.action_of[m] for m in table_8.moves],
        np.int64,
    )
    to_any = np.array([table_8.action_of[m] for m in table_n.moves], np.int64)
    if np.any(np.diff(to_any) <= 0) or np.any(to_native[to_any] != np.arange(table_n.size)):
        raise RuntimeError("any-table: the action maps must be inverse and keep the order of ids")
    mask_index = np.where(to_native >= 0, to_native, table_n.size)
    return _frozen(obs_index), _frozen(mask_index), _frozen(to_native), _frozen(to_any)


def _contracts(max_melds: int, deals: int) -> tuple[int, ...]:
    """A contract list of ``deals`` deals whose largest contract has ``max_melds`` melds."""
    largest = next(c for c in sorted(CONTRACTS) if len(CONTRACTS[c]) == max_melds)
    return (largest,) + (1,) * (deals - 1)


class AnyTableEncoder(ObservationEncoder):
    """The observation in the 8-seat layout (see the module docstring): a drop-in
    :class:`ObservationEncoder` (``size``, ``slices``, ``low``, ``high``, ``encode``,
    ``encode_bytes``, ``append_pieces``, ``fork``, ``table_bytes``) whose vectors are the native
    ones mapped by :attr:`AnyTable.obs_index`.

    The native encoder is this object's base class: its pieces (and their caches) are computed
    as for the native layout, then laid out by a fixed list of byte runs. ``native_size`` and
    ``native_slices`` keep the native layout.
    """

    def __init__(self, rules: Rules) -> None:
        super().__init__(rules)
        self.maps = AnyTable(rules)
        eight = ObservationEncoder(eight_seat_rules(rules))
        self.native_size, self.native_slices = self.size, self.slices
        # the attributes of the layout seen from outside; the base class's pieces read none of them
        self.size = eight.size + NUM_SIZES
        self.slices = {**eight.slices, "num_players": slice(eight.size, self.size)}
        self.descriptions = {**eight.descriptions, "num_players": PLAYERS_TEXT}
        self.low = np.concatenate([eight.low, np.zeros(NUM_SIZES, np.int8)])
        self.high = np.concatenate([eight.high, np.ones(NUM_SIZES, np.int8)])
        self._runs = _runs(self.maps.obs_index, self.native_size)

    def encode_bytes(self, game: Any, player: int, *, table: bytes | None = None) -> bytes:
        """The 8-seat observation of seat ``player`` as bytes (int8 values)."""
        data = memoryview(super().encode_bytes(game, player, table=table))
        return b"".join([data[a:b] if const is None else const for a, b, const in self._runs])

    def append_pieces(self, game: Any, player: int, out: list[Any], *, table: bytes | None = None) -> None:
        """Append the 8-seat observation of seat ``player`` to ``out`` (one bytes piece)."""
        out.append(self.encode_bytes(game, player, table=table))


def _runs(index: np.ndarray, native_size: int) -> tuple[tuple[int, int, bytes | None], ...]:
    """``index`` as runs: ``(a, b, None)`` copies native bytes ``a:b``, ``(0, 0, c)`` is constant."""
    runs: list[tuple[int, int, bytes | None]] = []
    i, size = 0, len(index)
    while i < size:
        j = i + 1
        if index[i] < native_size:
            while j < size and index[j] == index[j - 1] + 1 and index[j] < native_size:
                j += 1
            runs.append((int(index[i]), int(index[j - 1]) + 1, None))
        else:
            while j < size and index[j] >= native_size:
                j += 1
            runs.append((0, 0, bytes(int(v - native_size) for v in index[i:j])))
        i = j
    return tuple(runs)


def encoding_tables(rules: Rules, encoding: str) -> tuple[ActionTable, ObservationEncoder]:
    """The action table and the observation encoder of ``encoding`` (a checked name)."""
    if encoding == "any_table":
        return action_table(eight_seat_rules(rules)), AnyTableEncoder(rules)
    return action_table(rules), ObservationEncoder(rules)
