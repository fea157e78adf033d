"""Train a player for Shanghai Rummy: ``python train.py`` runs ``shanghai-train``.

The command line lives in :mod:`shanghai_env.agents.learned.train_cli` (so that an installed wheel
has it too); ``python train.py --help`` lists the options and docs/training.md the recipes.
"""

from shanghai_env.agents.learned.train_cli import cli

if __name__ == "__main__":
    cli()
