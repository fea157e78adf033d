"""The trained players that come with the package, each with a ``*.json`` card: trainer policies
(``*.pt``, :mod:`shanghai_env.agents.learned.players.policy`) and move scorers (``*.scorer``,
:mod:`shanghai_env.agents.bots.scorer`).

Installed as ``shanghai_env.models``; :func:`shipped_models` lists them by name (``scratch_4p``,
``shanghai``, ...), as does :func:`shanghai_env.agents.registry.shipped_models`, and
:func:`shipped_path` turns a name into its file. They live here, below the players and the
registry, so that every loader of a player file can take a shipped player's name too.
"""

from __future__ import annotations

import importlib.resources
import os
from functools import cache

# the files that are players: a trainer policy, one saved as a zip before 0.2.0, a move scorer
PLAYER_EXTENSIONS = (".pt", ".zip", ".scorer")


@cache
def shipped_models() -> dict[str, str]:
    """The models that come with the package (``shanghai_env.models``, ``models/`` in a clone), by
    name: their paths (a trainer policy's ``.pt``, a move scorer's ``.scorer``)."""
    folder = importlib.resources.files(__name__)
    files = [entry for entry in folder.iterdir() if entry.name.endswith(PLAYER_EXTENSIONS)]
    return {os.path.splitext(entry.name)[0]: str(entry) for entry in files}


def shipped_path(path: str | os.PathLike[str]) -> str:
    """The file of a shipped player's name (``"scratch_4p"``: its ``.pt`` in the package, from any
    current folder); any other path as it is. A name wins over a file of that name in the current
    folder, as in :func:`shanghai_env.agents.registry.check_spec`; a ``Path`` is always a path."""
    if isinstance(path, str):
        return shipped_models().get(path, path)
    if isinstance(path, os.PathLike):
        return os.fspath(path)
    raise TypeError(
        f"a player file is a path or a shipped player's name ({', '.join(sorted(shipped_models()))}), "
        f"got {type(path).__name__}"
    )
