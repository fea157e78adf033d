"""Play a duplicate tournament: ``python evaluate.py`` runs ``shanghai-evaluate``.

The command line lives in :mod:`shanghai_env.agents.arena.evaluate_cli` (so that an installed
wheel has it too); ``python evaluate.py --help`` lists the options and docs/bots.md the results.
"""

from shanghai_env.agents.arena.evaluate_cli import cli

if __name__ == "__main__":
    cli()
