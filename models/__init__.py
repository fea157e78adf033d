"""The trained players that come with the package (``*.zip``, each with a ``*.json`` card).

Installed as ``shanghai_env.models``; :func:`shanghai_env.agents.registry.shipped_models` lists them
by name (``shanghai_4p``, ``ppo_contract1``).
"""
