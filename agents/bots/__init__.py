"""The built-in players: ``random``, ``greedy``, ``planner`` and ``search`` (docs/bots.md)."""
