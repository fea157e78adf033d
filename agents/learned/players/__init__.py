"""Saved files as players: one loader per kind (a trainer policy ``.pt``, an SB3 ``.zip``, a move
scorer), and the players that wrap them (search over the scorer)."""
