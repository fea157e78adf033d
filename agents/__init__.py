"""Players and the tools around them, installed as ``shanghai_env.agents``.

One folder per concern, above the environments they use:

- :mod:`shanghai_env.agents.bots`: the heuristic players (``random``, ``greedy``, ``planner``),
  the hand arithmetic and contract meters they share, and ``search`` (Monte-Carlo search over
  the engine's sampled worlds, with the bots in its rollouts);
- :mod:`shanghai_env.agents.learned`: trained players: ``nets/`` (the networks), ``players/`` (a
  saved file as a player, one loader per kind) and ``train/`` (the one trainer, ``shanghai-train``,
  its run folder and loop, and its methods in ``train/methods/``);
- :mod:`shanghai_env.agents.arena`: playing players against each other (the game runner, the
  duplicate tournament, statistics, reports, the ladder, ``shanghai-evaluate``);
- :mod:`shanghai_env.agents.ui`: the terminal and the browser game (``shanghai-play``).

Beside them: :mod:`~shanghai_env.agents.base` (the one :class:`Agent` interface) and
:mod:`~shanghai_env.agents.registry` (naming players on the command line). Nothing in the rules
core or the envs imports this package.
"""
