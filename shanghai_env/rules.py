"""The rule options of docs/rules.md section 7, validated in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cards import decks_for
from .melds import CONTRACTS

ALL_CONTRACTS: tuple[int, ...] = tuple(range(1, 11))
# max_moves_per_deal's default (docs/rules.md 5.5). The stock limit bounds a deal's stock draws,
# not its moves: players who keep taking the upcard and discarding never empty the stock. Under
# the default rules random players' deals take about 400 moves (the longest of 1,200 seeded
# games of 3-8 players: 820) and bots' a few hundred, so the cap ends only deals that stall.
DEFAULT_MAX_MOVES_PER_DEAL = 3000

# Options by kind; a value of the wrong type is a TypeError, a value out of range a ValueError.
_INT_OPTIONS = ("num_players", "joker_points", "same_suit_run_gap")
_BOOL_OPTIONS = ("down_players_may_buy", "exact_contract_melds", "joker_swaps")


def _is_int(x: object) -> bool:
    """A Python or numpy integer, but not a bool (``True`` is not a player count)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


@dataclass(frozen=True)
class Rules:
    """Every rule option with its default (the defaults are the game)."""

    num_players: int = 4
    contracts: tuple[int, ...] = field(default=ALL_CONTRACTS)
    joker_points: int = 50
    down_players_may_buy: bool = True
    exact_contract_melds: bool = True
    same_suit_run_gap: int = 1
    joker_swaps: bool = True
    # Stock rebuilds per deal; the next empty-stock draw ends the deal (docs/rules.md 5.5). None: no limit.
    max_stock_rebuilds: int | None = 1
    # Moves per deal; the move that reaches it ends the deal as an empty stock does (5.5). None: no cap.
    max_moves_per_deal: int | None = DEFAULT_MAX_MOVES_PER_DEAL

    def __post_init__(self) -> None:
        # Types first (TypeError), then ranges (ValueError); numpy scalars become Python values.
        for name in _INT_OPTIONS:
            value = getattr(self, name)
            if not _is_int(value):
                raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
            object.__setattr__(self, name, int(value))
        for name in _BOOL_OPTIONS:
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
            object.__setattr__(self, name, bool(value))
        self._optional_int("max_stock_rebuilds", 0, "no limit")
        self._optional_int("max_moves_per_deal", 1, "no cap")
        decks_for(self.num_players)  # raises on a bad player count
        contracts = self.contracts
        if _is_int(contracts):
            contracts = (contracts,)  # type: ignore[assignment]
        if isinstance(contracts, np.ndarray) and contracts.ndim == 1:
            contracts = contracts.tolist()
        if not isinstance(contracts, Sequence) or isinstance(contracts, str):
            raise TypeError(
                f"contracts must be a contract number 1..10 or a sequence of them, got {contracts!r}"
            )
        contracts = tuple(contracts)
        if not all(_is_int(c) for c in contracts):
            raise TypeError(f"contracts must hold ints 1..10, got {self.contracts!r}")
        if not contracts or not all(c in CONTRACTS for c in contracts):
            raise ValueError(
                f"contracts must be a non-empty sequence of contract numbers 1..10, got {self.contracts!r}"
            )
        object.__setattr__(self, "contracts", tuple(int(c) for c in contracts))
        if self.joker_points < 0:
            raise ValueError(f"joker_points must be an int >= 0, got {self.joker_points!r}")
        if not 0 <= self.same_suit_run_gap <= 12:
            raise ValueError(f"same_suit_run_gap must be an int 0..12, got {self.same_suit_run_gap!r}")

    def _optional_int(self, name: str, low: int, none: str) -> None:
        """Check an option that is an int >= ``low`` or None (meaning ``none``); store it as an int."""
        value = getattr(self, name)
        if value is None:
            return
        allowed = f"an int >= {low} or None ({none})"
        if not _is_int(value):
            raise TypeError(f"{name} must be {allowed}, got {value!r} ({type(value).__name__})")
        if value < low:
            raise ValueError(f"{name} must be {allowed}, got {value}")
        object.__setattr__(self, name, int(value))

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Rules:
        unknown = set(options) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"unknown rule option(s) {sorted(unknown)}; allowed: {sorted(cls.__dataclass_fields__)}"
            )
        return cls(**options)

    @property
    def max_melds(self) -> int:
        """Most contract melds one player can have on the table under these contracts."""
        return max(len(CONTRACTS[c]) for c in self.contracts)
