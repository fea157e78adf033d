"""The ``shanghai-train-rllib`` command, which checks its dependencies before importing them.

:mod:`shanghai_env.agents.learned.rllib_train` imports Ray RLlib as it loads; this module imports
nothing heavy, so that a missing dependency is one line naming the extra instead of a traceback
(or, for the packages that export the policy, a crash after Ray has started).
"""

from __future__ import annotations

import sys

from shanghai_env.cli import extra_hint, require_extra

COMMAND = "shanghai-train-rllib"


def cli() -> None:
    """The ``shanghai-train-rllib`` command."""
    require_extra(COMMAND, "rllib")
    try:
        from shanghai_env.agents.learned.rllib_train import cli as train_cli
    except ModuleNotFoundError as err:  # Ray without RLlib's own dependencies
        print(
            f"{COMMAND} needs the 'rllib' extra (importing RLlib: {err}): {extra_hint('rllib')}",
            file=sys.stderr,
        )
        sys.exit(2)
    train_cli()


if __name__ == "__main__":
    cli()
