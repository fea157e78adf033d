"""The trained players that come with the package, each with a ``*.json`` card: trainer policies
(``*.pt``, :mod:`shanghai_env.agents.learned.players.policy`) and move scorers (``*.zip``,
:mod:`shanghai_env.agents.learned.players.scorer`).

Installed as ``shanghai_env.models``; :func:`shanghai_env.agents.registry.shipped_models` lists them
by name (``scratch_4p``, ``shanghai``).
"""
