"""Declaring an option of ``shanghai-train`` once: a dataclass field whose metadata is its argparse
specification (:func:`option`), turned into a flag by :func:`add_options`. The run's options
(:class:`.run.RunConfig`) and each method's (its ``Options``) are declared this way; a method
option without metadata gets a flag from its default's type."""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any

from shanghai_env.agents.registry import check_spec
from shanghai_env.cli import int_in, number_in, positive_ints

# the largest seed: torch's generators take a signed 64-bit one (numpy's any size), and a larger
# one failed only once the run had started
SEED_MAX = 2**63 - 1
seed_arg = int_in(0, SEED_MAX, what="a seed")  # the argparse type of every seed of a run

# (low, high, low excluded) of the methods' real-valued options; others are >= 0
FLOAT_BOUNDS: dict[str, tuple[float, float | None, bool]] = {
    "lr": (0.0, None, True),
    "gamma": (0.0, 1.0, False),
    "gae_lambda": (0.0, 1.0, False),
    "td_lambda": (0.0, 1.0, False),
    "epsilon": (0.0, 1.0, False),
    "beta": (0.0, 1.0, False),
    "clip": (0.0, None, True),
    "max_grad_norm": (0.0, None, True),
}


def option(default: Any, help: str | None = None, **argparse_kwargs: Any) -> Any:
    """A dataclass field that is a command-line option: ``help`` and ``argparse_kwargs`` (``type``,
    ``choices``, ``action``; ``flag`` for a flag other than ``--field-name``) go to argparse."""
    return dataclasses.field(default=default, metadata={"help": help, **argparse_kwargs})


def add_options(group: Any, options: Any, declared_only: bool = False) -> None:
    """A flag for every field of the dataclass ``options`` (``declared_only``: only the fields
    made by :func:`option`), in field order."""
    for f in dataclasses.fields(options):
        if declared_only and "help" not in f.metadata:
            continue
        kwargs = dict(f.metadata)
        flag = kwargs.pop("flag", "--" + f.name.replace("_", "-"))
        if not {"type", "choices", "action", "nargs"} & set(kwargs):
            kwargs |= _by_default(f.name, f.default)
        if flag.startswith("-"):  # a positional argument's name is its dest
            kwargs["dest"] = f.name
        group.add_argument(flag, default=f.default, **kwargs)


def _by_default(name: str, default: Any) -> dict[str, Any]:
    """The argparse specification of an option declared by its default alone."""
    if isinstance(default, tuple):
        return {
            "type": positive_ints,
            "help": f"comma-separated (default {','.join(map(str, default)) or 'none'})",
        }
    if isinstance(default, str):  # a player's name (dagger's teacher)
        return {"type": player_name, "help": "a bot, a shipped model or a saved player"}
    if isinstance(default, bool):
        return {"action": argparse.BooleanOptionalAction}
    if isinstance(default, int):
        return {"type": int_in(1), "help": f"(default {default})"}
    low, high, low_open = FLOAT_BOUNDS.get(name, (0.0, None, False))
    return {"type": number_in(low, high, low_open=low_open), "help": f"(default {default})"}


@dataclasses.dataclass
class LearnerOptions:
    """The options every gradient method shares; a method's ``Options`` derives from it and may
    set other defaults (a field declared again keeps its place)."""

    lr: float = 3e-4
    epochs: int = 2
    batch_size: int = 1024
    net_arch: tuple[int, ...] = (128, 128)
    n_steps: int = 64  # decisions of every game per update
    max_grad_norm: float = 0.5


@dataclasses.dataclass
class NetOptions(LearnerOptions):
    """The options of the methods on the project's own network (``policy.py``)."""

    move_net: tuple[int, ...] = ()  # hidden sizes of the move MLP; none: the rows alone


@dataclasses.dataclass
class AdvantageOptions:
    """The returns and losses of the policy-gradient methods (ppo, sb3)."""

    gamma: float = 0.999
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5


# --- argparse types of players and saved networks ----------------------------------------------


def players_list(text: str) -> tuple[str, ...]:
    """Comma-separated players (``self`` and rllib's ``snapshot`` too, checked by the command)."""
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one player")
    for n in names:
        if n not in ("self", "snapshot"):
            player_name(n)
    return names


def player_name(text: str) -> str:
    """A bot, a shipped model or a saved player; "" (an option's default): none named."""
    if text == "":  # argparse converts string defaults too
        return text
    try:
        check_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def init_arg(text: str) -> str:
    """A saved network to start from: a shipped model's name or a file (.pt, MaskablePPO .zip, .scorer)."""
    if text == "":  # the default (argparse passes a string default through the type too): fresh
        return ""
    try:
        path = check_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if not path.endswith((".pt", ".zip", ".scorer")) or not os.path.isfile(path):
        raise argparse.ArgumentTypeError(
            f"{text!r} is no saved network (.pt of shanghai-train, .zip of sb3, or .scorer)"
        )
    return path
