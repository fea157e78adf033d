"""The heuristic players ``random``, ``greedy`` and ``planner``, the searches over sampled worlds,
and the move scorer (a planner whose choices a small numpy network makes; docs/bots.md)."""
