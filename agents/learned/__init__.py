"""Trained players: networks (``nets/``), saved players (``players/``), ``shanghai-train`` (``train/``)."""
