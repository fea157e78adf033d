"""The rule options of RULES.md section 7, validated in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .cards import decks_for
from .melds import CONTRACTS

ALL_CONTRACTS: tuple[int, ...] = tuple(range(1, 11))


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


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

    def __post_init__(self) -> None:
        decks_for(self.num_players)  # raises on a bad player count
        contracts = self.contracts
        if _is_int(contracts):
            contracts = (contracts,)  # type: ignore[assignment]
        if not isinstance(contracts, Sequence) or isinstance(contracts, str):
            raise TypeError(f"contracts must be a sequence of contract numbers 1..10, got {contracts!r}")
        contracts = tuple(contracts)
        if not contracts or not all(_is_int(c) and c in CONTRACTS for c in contracts):
            raise ValueError(
                f"contracts must be a non-empty sequence of contract numbers 1..10, got {self.contracts!r}"
            )
        object.__setattr__(self, "contracts", contracts)
        if not _is_int(self.joker_points) or self.joker_points < 0:
            raise ValueError(f"joker_points must be an int >= 0, got {self.joker_points!r}")
        if not _is_int(self.same_suit_run_gap) or not 0 <= self.same_suit_run_gap <= 12:
            raise ValueError(f"same_suit_run_gap must be an int 0..12, got {self.same_suit_run_gap!r}")
        for name in ("down_players_may_buy", "exact_contract_melds", "joker_swaps"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")

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
