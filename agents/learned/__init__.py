"""Trained players and their training: policy features, cloning, MaskablePPO, RLlib (docs/training.md)."""
