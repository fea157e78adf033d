"""The heuristic players ``random``, ``greedy`` and ``planner`` (docs/bots.md)."""
