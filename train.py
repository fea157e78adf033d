"""Train a player for Shanghai Rummy: ``python train.py`` runs ``shanghai-train``.

``python train.py`` alone is a demonstration (``shanghai-train demo``: PPO from scratch against
greedy bots, 15-20 minutes);
``python train.py METHOD --help`` lists a method's options (ppo, dmc, dagger, sb3, scorer, rllib).
The command line lives in :mod:`shanghai_env.agents.learned.train.cli`, so that an installed wheel
has it too; docs/training.md has the recipes.
"""

from shanghai_env.agents.learned.train.cli import cli

if __name__ == "__main__":
    cli(bare=["demo"])
