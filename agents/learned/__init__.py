"""Trained players: their networks (``nets/``), saved files as players (``players/``) and the one
trainer (``train/``, ``shanghai-train``; docs/training.md)."""
