"""Naming players: a bot's name, a saved model's path, or a researcher's ``module:factory``.

``make_agent(spec, seed)`` resolves one name:

- ``random``, ``greedy``, ``planner``, ``search``: the built-in bots (:data:`BOTS`); other
  search budgets are factories of :mod:`shanghai_env.agents.bots.search`, e.g.
  ``shanghai_env.agents.bots.search:search_w16``;
- the name of a model shipped with the package (``scratch_4p``, ``shanghai_4p``, ``shanghai``, ...:
  :func:`shipped_models`), which works from a wheel install as from a clone;
- a path to a player saved by ``shanghai-train ppo``, ``dmc`` or ``dagger`` (``.pt``:
  :class:`shanghai_env.agents.learned.players.policy.PolicyAgent`, the most probable legal move;
  such a file saved as a ``.zip``, as the shipped ones were before, loads the same);
- a path to a saved MaskablePPO model of ``shanghai-train sb3`` (``.zip``:
  :class:`shanghai_env.agents.learned.players.sb3.ModelAgent`, loaded lazily on its first decision) or
  a move scorer (``.scorer``: :func:`shanghai_env.agents.bots.scorer.load_scorer`; one saved
  as a ``.zip`` before is told by its content and loads the same); any other file is refused
  with a ValueError naming it;
- ``search_NAME`` for a shipped trainer network ``NAME`` (``search_scratch``), or ``search@PATH`` for
  a saved ``.pt``: the network searching where it is unsure, with rollouts by itself
  (:class:`shanghai_env.agents.learned.players.net_search.NetSearchBot`);
- ``package.module:factory``: any importable callable returning an :class:`~shanghai_env.agents.base.Agent`
  (called with no arguments; the agent is then ``reset(seed)``); a module in the current folder
  is found as ``python -m`` finds it, with no ``PYTHONPATH``.

``check_spec`` checks a name's form (and that a model file exists); ``check_player`` goes further
before any game is played: a model must be a saved model trained for the table, and a
``module:factory`` must import and build an agent.

Reports name players by :func:`player_labels` (a ``module:factory`` by its agent's ``name``) and
record what each one was by :func:`player_pin` (the package version, a saved model's file hash,
a bot's source hash), so that a result says which players produced it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from shanghai_env import __version__
from shanghai_env.agents.base import Agent
from shanghai_env.agents.bots.greedy import GreedyBot
from shanghai_env.agents.bots.planner import PlannerBot
from shanghai_env.agents.bots.random_agent import RandomAgent
from shanghai_env.agents.bots.scorer import EXTENSION as SCORER_EXTENSION
from shanghai_env.agents.bots.scorer import ScorerNet, is_scorer_file, load_scorer
from shanghai_env.agents.bots.search import SearchBot
from shanghai_env.agents.learned.players.sb3 import (
    MISSING_PREFIX,
    PLAY_MODULES,
    SAVED_PLAYER,
    ModelAgent,
    check_model,
    saved_table,
)
from shanghai_env.cli import extra_hint, missing_modules
from shanghai_env.melds import CONTRACTS
from shanghai_env.models import shipped_models  # listed there, below the players, which read names too
from shanghai_env.rules import Rules

SAVED_EXTENSIONS = (".pt", ".zip", SCORER_EXTENSION)  # a trainer policy; a MaskablePPO model; a scorer
BOTS: dict[str, Callable[[], Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyBot,
    "planner": PlannerBot,
    "search": SearchBot,  # Monte-Carlo search over sampled worlds (agents/bots/search.py)
}


SEARCH_PREFIX, SEARCH_AT = "search_", "search@"  # search_scratch; search@runs/x/model.pt


def searched_models() -> list[str]:
    """The names of the searches over the shipped trainer networks (``search_scratch``, ...)."""
    return sorted(SEARCH_PREFIX + name for name, path in shipped_models().items() if path.endswith(".pt"))


def describe_allowed() -> str:
    """What a player name may be, for error messages."""
    shipped = f", a shipped model ({', '.join(sorted(shipped_models()))})" if shipped_models() else ""
    searched = ", ".join(searched_models())
    return (
        f"a bot name ({', '.join(sorted(BOTS))}){shipped}, the search over a shipped network "
        f"({searched}) or a saved one (search@PATH.pt), the path of a saved player (.pt of "
        "shanghai-train ppo/dmc/dagger, .zip of shanghai-train sb3, .scorer of shanghai-train scorer), "
        "or module:factory for your own agent"
    )


def searched_file(spec: str) -> str | None:
    """The saved network a search name (``search_scratch``, ``search@PATH``) searches over; None
    for any other name. ValueError for a search over something that is no trainer network file."""
    if spec in searched_models():
        return shipped_models()[spec.removeprefix(SEARCH_PREFIX)]
    if not spec.startswith(SEARCH_AT):
        return None
    path = spec.removeprefix(SEARCH_AT)
    if not path.endswith(".pt") or not os.path.isfile(path):
        raise ValueError(
            f"player {spec!r}: search@ takes the path of a saved trainer network (.pt of shanghai-train "
            f"ppo/dmc/dagger); the shipped ones are searched as {', '.join(searched_models())}"
        )
    return path


def check_spec(spec: str) -> str:
    """Return ``spec`` stripped if it names a player; raise ValueError saying what is allowed."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty player name; a player is {describe_allowed()}")
    s = spec.strip()
    if s in BOTS:
        return s
    if s in shipped_models():
        return shipped_models()[s]
    if searched_file(s) is not None:
        return s
    if s.endswith(SAVED_EXTENSIONS) or os.sep in s or "/" in s:
        if os.path.isdir(s):
            raise ValueError(f"player {spec!r} is a folder, not a saved player (.pt, .zip or .scorer)")
        if not os.path.isfile(s):
            raise ValueError(f"player {spec!r}: no saved model there; a player is {describe_allowed()}")
        return s
    if ":" in s:
        module, _, attr = s.partition(":")
        if module and attr:
            return s
    raise ValueError(f"unknown player {spec!r}; a player is {describe_allowed()}")


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build (and seed) the agent a spec names; see the module docstring."""
    s = check_spec(spec)
    agent: Agent
    searched = searched_file(s)
    if s in BOTS:
        agent = BOTS[s]()
    elif searched is not None:
        from shanghai_env.agents.learned.players.net_search import NetSearchBot

        agent = NetSearchBot(searched, name=display_name(s))
    elif ":" in s and not os.path.isfile(s):
        agent = _from_factory(s)
    elif s.endswith(".pt") or _is_policy(s):
        # (a trainer policy needs torch, which the package does not: imported when one is named)
        from shanghai_env.agents.learned.players.policy import PolicyAgent

        agent = PolicyAgent(s)
    else:
        if is_scorer_file(s) or s.endswith(SCORER_EXTENSION):  # a .scorer that is none: says so
            agent = load_scorer(s)
        else:
            _check_saved_model(s)  # a file that is no model fails here, not at its first move
            agent = ModelAgent(s)
    agent.reset(seed)
    return agent


def spec_stem(spec: str) -> str:
    """A name without its folder: a saved player's file name without its extension, anything
    else as it is."""
    return os.path.splitext(os.path.basename(spec))[0] if spec.endswith(SAVED_EXTENSIONS) else spec


@cache
def display_name(spec: str) -> str:
    """What reports call the player ``spec``: a bot by its name, a saved model by its file name
    (:func:`spec_stem`), a ``module:factory`` by the ``name`` of the agent it returns (built once
    per process; the spec itself if the agent has no name)."""
    s = check_spec(spec)
    if s.startswith(SEARCH_AT):
        return SEARCH_PREFIX + spec_stem(s.removeprefix(SEARCH_AT))
    if ":" in s and not os.path.isfile(s) and s not in BOTS:
        name = getattr(_from_factory(s), "name", None)
        return name.strip() if isinstance(name, str) and name.strip() else s
    return spec_stem(s)


def player_labels(specs: Sequence[str]) -> list[str]:
    """Unique display names of ``specs``, in their order: :func:`display_name`, and where several
    players share one, ``name``, ``name#2``, ... A player whose spec *is* the name (a bot) keeps
    it plain; the others follow by spec, copies of one spec in the order listed, so that the
    labels do not depend on the order the players are listed in."""
    bases = [display_name(s) for s in specs]
    labels = list(bases)
    for base in set(bases):
        members = sorted(
            (i for i, b in enumerate(bases) if b == base),
            key=lambda i: (specs[i].strip() != base, specs[i].strip(), i),
        )
        for k, i in enumerate(members):
            labels[i] = base if k == 0 else f"{base}#{k + 1}"
    return labels


def _sha256_of_files(paths: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(os.path.basename(path).encode() + b"\0")
        with open(path, "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


@cache
def player_pin(spec: str) -> dict[str, Any]:
    """What the player ``spec`` was, for ``summary.json``: its kind, the package version, and

    - a bot: ``source_sha256``, the SHA-256 of its code (its module and the bots' package:
      greedy, planner and the contract distance they share), which any change to a bot changes;
    - a saved model or scorer: ``file`` and ``sha256``, the hash of the file;
    - a ``module:factory``: ``source_sha256`` of the module's file (None if it has none).
    """
    s = check_spec(spec)
    pin: dict[str, Any] = {"spec": s, "package_version": __version__}
    if s in BOTS:
        bots = importlib.import_module("shanghai_env.agents.bots")
        folder = os.path.dirname(os.path.abspath(bots.__file__ or ""))
        files = {os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py")}
        files.add(os.path.abspath(inspect.getfile(BOTS[s])))
        cls = BOTS[s]
        return pin | {
            "kind": "bot",
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "source_sha256": _sha256_of_files(sorted(files)),
        }
    searched = searched_file(s)
    if searched is not None:
        with open(searched, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        code = importlib.util.find_spec("shanghai_env.agents.learned.players.net_search")
        where = code.origin if code is not None else None
        return pin | {
            "kind": "search over a saved player",
            "file": os.path.basename(searched),
            "sha256": sha,
            "source_sha256": _sha256_of_files([where]) if where else None,
        }
    if ":" in s and not os.path.isfile(s):
        module = s.partition(":")[0]
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        origin = found.origin if found is not None else None
        source = _sha256_of_files([origin]) if origin and os.path.isfile(origin) else None
        return pin | {"kind": "factory", "source_sha256": source}
    with open(s, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    return pin | {"kind": "saved player", "file": os.path.basename(s), "sha256": sha}


def _from_factory(spec: str) -> Agent:
    """The agent ``module:factory()`` returns; ValueError saying what went wrong otherwise."""
    attr = spec.partition(":")[2]
    factory = load_attribute(spec, "player", "a factory to call")
    try:
        agent = factory()
    except Exception as err:
        raise ValueError(f"player {spec!r}: {attr}() raised {type(err).__name__}: {err}") from None
    if not isinstance(agent, Agent):
        raise ValueError(f"player {spec!r}: {attr}() returned {type(agent).__name__}, not an Agent")
    return agent


def load_attribute(spec: str, what: str, kind: str) -> Any:
    """The callable ``module:attribute`` names (:func:`import_user_module`); ValueError naming
    ``what`` it was for (``player``, ``method``) and what went wrong: the import, a missing
    attribute, or one that is not callable (``kind`` says what it should be)."""
    module, _, attr = spec.partition(":")
    try:
        found = getattr(import_user_module(module), attr)
    except ImportError as err:
        raise ValueError(f"{what} {spec!r}: cannot import {module!r} ({err})") from None
    except AttributeError:
        raise ValueError(f"{what} {spec!r}: module {module!r} has no attribute {attr!r}") from None
    if not callable(found):
        raise ValueError(f"{what} {spec!r}: {attr} is a {type(found).__name__}, not {kind}")
    return found


def import_user_module(name: str) -> object:
    """The module of a researcher's ``module:factory`` (or of a training protocol method's
    ``module:function``, benchmarks/training.py): ``importlib.import_module(name)``; a module of the
    current folder (``mybot`` for ``mybot:make``) is found as ``python -m`` finds it: the folder
    goes first on ``sys.path`` (it stays there, so that the module's own later imports of its
    neighbours work too)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        top = name.partition(".")[0]
        here = os.getcwd()
        on_path = {os.path.abspath(p or os.curdir) for p in sys.path}
        if err.name != top or here in on_path:
            raise
        if not (os.path.isfile(os.path.join(here, top + ".py")) or os.path.isdir(os.path.join(here, top))):
            raise
        sys.path.insert(0, here)
        importlib.invalidate_caches()
        return importlib.import_module(name)


def check_player(spec: str, rules: Rules | None = None, where: str = "this table") -> str:
    """``check_spec``, then what only trying tells: a model file must be a saved model (trained for
    ``rules``' table when given; ``where`` names that table in the message), a ``module:factory``
    must build an agent. Returns ``spec`` stripped; raises ValueError with one sentence."""
    s = check_spec(spec)
    if s in BOTS:
        return s
    searched = searched_file(s)
    if searched is not None:
        from shanghai_env.agents.learned.players.policy import check_policy

        check_policy(searched, rules, where)
        return s
    if ":" in s and not os.path.isfile(s):
        _from_factory(s)
        return s
    if s.endswith(".pt") or _is_policy(s):
        from shanghai_env.agents.learned.players.policy import check_policy

        check_policy(s, rules, where)
        return s
    if is_scorer_file(s) or s.endswith(SCORER_EXTENSION):
        ScorerNet.load(s)  # a scorer reads the player's view: it plays at any table
        return s
    _check_saved_model(s)
    if rules is not None:
        check_model(s, rules, where)
    missing = missing_modules(PLAY_MODULES)
    if missing:
        raise ValueError(
            f"player {s!r}: {MISSING_PREFIX} ({', '.join(missing)} not installed): {extra_hint('train')}"
        )
    return s


def _is_policy(path: str) -> bool:
    """A player of ``shanghai-train ppo``/``dmc`` saved as a ``.zip`` (the shipped ones were, up to
    0.2.0: ``scratch_4p.zip``); False without torch, which such a player needs (the check that
    follows then says so)."""
    if not path.endswith(".zip"):
        return False
    try:
        from shanghai_env.agents.learned.players.policy import is_policy_file
    except ImportError:
        return False
    return is_policy_file(path)


def _check_saved_model(path: str) -> None:
    """ValueError naming the file and saying what a saved player is, unless ``path`` is a saved
    MaskablePPO model (read from its metadata, without loading the network)."""
    if not path.endswith(SAVED_EXTENSIONS):
        raise ValueError(f"{path!r} is no saved player; {SAVED_PLAYER}")
    try:
        saved_table(path)
    except ValueError as err:
        raise ValueError(f"{err}; {SAVED_PLAYER}") from None


def contracts_arg(text: str) -> tuple[int, ...]:
    """argparse type for ``--contracts``: comma-separated contract numbers, e.g. ``1`` or ``1,2,3``."""
    try:
        out = tuple(int(s) for s in text.split(","))
    except ValueError:
        out = ()
    if not out or any(c not in CONTRACTS for c in out):
        raise argparse.ArgumentTypeError(
            f"contracts are a comma-separated list of numbers 1..10 (e.g. 1 or 1,2,3), got {text!r}"
        )
    return out
