"""Checks of what callers hand the envs: constructor arguments, actions and reset options.

A value of the wrong type is a TypeError and a value out of range a ValueError, each naming
the argument and what it allows. Numpy scalars count as the Python values they hold; bools
are not numbers here (``True`` is no player seat and no action). Every check is an explicit
``raise``: ``python -O`` strips ``assert`` statements, so none is used for input.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

RESET_OPTIONS = ("deck", "dealer")
EPISODE_OVER = "the episode is over (every agent has stepped out of the finished game): call reset()"


def is_int(x: object) -> bool:
    """A Python or numpy integer, but not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def int_arg(name: str, value: Any, *, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``low..high`` (no upper bound when ``high`` is None)."""
    return _int_arg(name, value, low, high, "")


def optional_int_arg(name: str, value: Any, *, low: int, high: int | None = None, none: str) -> int | None:
    """As :func:`int_arg`, or ``None``, whose meaning ``none`` names in the error message."""
    return None if value is None else _int_arg(name, value, low, high, none)


def _int_arg(name: str, value: Any, low: int, high: int | None, none: str) -> int:
    allowed = f"an int >= {low}" if high is None else f"an int {low}..{high}"
    if none:
        allowed += f", or None ({none})"
    if not is_int(value):
        raise TypeError(f"{name} must be {allowed}, got {value!r} ({type(value).__name__})")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return int(value)


def real_arg(name: str, value: Any, *, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a finite float within ``[low, high]`` (ints and numpy reals accepted, bools not)."""
    bounds = (
        f" in [{low}, {high}]"
        if low is not None and high is not None
        else f" >= {low}"
        if low is not None
        else ""
    )
    allowed = f"a finite number{bounds}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be {allowed}, got {value!r} ({type(value).__name__})")
    x = float(value)
    if not math.isfinite(x) or (low is not None and x < low) or (high is not None and x > high):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return x


def choice_arg(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of the strings ``choices``; else ValueError (TypeError if no string)."""
    if isinstance(value, str) and value in choices:
        return str(value)
    error = ValueError if isinstance(value, str) else TypeError
    raise error(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")


def optional_choice_arg(name: str, value: Any, choices: Sequence[str]) -> str | None:
    """As :func:`choice_arg`, or ``None``."""
    if value is None:
        return None
    try:
        return choice_arg(name, value, choices)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{err} (or None)") from None


def action_id(action: Any, size: int) -> int:
    """An action id as a Python int: a Python or numpy integer, or a 0-d integer array, in 0..size-1.

    Anything else is refused: bools, floats (``5.9`` is not action 5), strings, bytes, None,
    and arrays with elements (``[a, b]`` is two actions, not the first one).
    """
    if type(action) is int:
        value = action
    elif is_int(action) or (
        isinstance(action, np.ndarray) and action.ndim == 0 and np.issubdtype(action.dtype, np.integer)
    ):
        value = int(action)
    else:
        raise TypeError(
            f"an action is one int 0..{size - 1} (a Python or numpy integer, or a 0-d integer array), "
            f"got {action!r} ({type(action).__name__})"
        )
    if not 0 <= value < size:
        raise ValueError(f"action {value} is out of range: actions are 0..{size - 1}")
    return value


def reset_options(options: Any, *, unknown: str) -> tuple[Any, int | None]:
    """``(deck, dealer)`` of a reset's options; ``unknown="warn"`` or ``"error"`` for other keys.

    Only the shape is checked here; the game checks the deck's cards and the dealer's seat. A
    deck given as any iterable (a generator, say) comes back as a list: it is read twice, by the
    check and by the deal.
    """
    if options is None:
        return None, None
    if not isinstance(options, Mapping):
        raise ValueError(f"options must be a dict like {{'deck': [...], 'dealer': 0}}: {options!r}")
    extra = sorted(map(str, set(options) - set(RESET_OPTIONS)))
    if extra:
        message = f"reset options {extra} are not used; known options: {list(RESET_OPTIONS)}"
        if unknown == "error":
            raise ValueError(message)
        warnings.warn(message, stacklevel=3)
    dealer: Any = options.get("dealer")
    deck: Any = options.get("deck")
    if deck is not None and not isinstance(deck, (str, bytes)) and hasattr(deck, "__iter__"):
        deck = list(deck)  # anything else: the game's check names what a deck must be
    return deck, int(dealer) if is_int(dealer) else dealer


def frozen(values: bytes | bytearray | np.ndarray) -> np.ndarray:
    """A read-only int8 array over immutable bytes: its writeable flag cannot be turned back on."""
    data = values.tobytes() if isinstance(values, np.ndarray) else bytes(values)
    return np.frombuffer(data, dtype=np.int8)
