"""Search over a scorer network: :class:`~shanghai_env.agents.bots.search.SearchBot` with a scorer
(by default the shipped ``shanghai_4p``) as prior and rollout policy (docs/bots.md). Named players:
``shanghai_env.agents.bots.scorer_search:shanghai_w<N>``, N worlds a searched decision.
"""

from __future__ import annotations

import importlib.resources
from functools import cache
from pathlib import Path
from typing import Any

from shanghai_env.agents.bots.scorer import EXTENSION, ScorerBot, ScorerNet
from shanghai_env.agents.bots.search import SearchBot


def shipped_scorer(name: str = "shanghai_4p") -> Path:
    """The path of a scorer shipped with the package."""
    return Path(str(importlib.resources.files("shanghai_env.models").joinpath(name + EXTENSION)))


@cache
def _net(path: str) -> ScorerNet:
    """One network per file and process: the searcher's prior and its rollout seats share it."""
    return ScorerNet.load(path)


def scorer_search(path: str | Path | None = None, name: str | None = None, **options: Any) -> SearchBot:
    """A searcher whose prior and rollout policy are the scorer saved at ``path`` (a file or a
    shipped scorer's name; by default ``shanghai_4p``); ``options`` are
    :class:`~shanghai_env.agents.bots.search.SearchParams` fields."""
    net = _net(str(path if path is not None else shipped_scorer()))
    return SearchBot(
        name=name or f"search-{Path(str(path or 'shanghai_4p')).stem}",
        prior=ScorerBot(net),
        rollout=lambda: ScorerBot(net),
        **options,
    )


def __getattr__(name: str) -> Any:
    """``shanghai_w<N>``: a factory of searchers over ``shanghai_4p`` with N worlds a decision."""
    stem = name.removeprefix("shanghai_w")
    if name.startswith("shanghai_w") and stem.isdigit() and int(stem) > 0:
        worlds = int(stem)

        def factory() -> SearchBot:
            return scorer_search(name=name.replace("_", "-"), worlds=worlds)

        return factory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
