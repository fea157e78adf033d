"""Saved files as players: a trainer policy ``.pt``, an SB3 ``.zip``, and search over a network."""
