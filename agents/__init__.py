"""Players and the tools around them, installed as ``shanghai_env.agents``.

Three concerns, one folder each, above the environments they use:

- :mod:`shanghai_env.agents.bots`: the heuristic players (``random``, ``greedy``, ``planner``)
  and the hand arithmetic they share; the search player :mod:`~shanghai_env.agents.search`
  (``search``) sits beside them, since it plays the bots in its rollouts over the engine's
  sampled worlds;
- :mod:`shanghai_env.agents.learned`: trained players and their training (features, behaviour
  cloning, MaskablePPO, the RLlib trainer, ``shanghai-train``);
- :mod:`shanghai_env.agents.arena`: playing players against each other (the game runner, the
  duplicate tournament, statistics, reports, the ladder, ``shanghai-evaluate``).

Beside them: :mod:`~shanghai_env.agents.base` (the one :class:`Agent` interface),
:mod:`~shanghai_env.agents.registry` (naming players on the command line) and the terminal game
:mod:`~shanghai_env.agents.play` (``shanghai-play``). Nothing in the rules core or the envs
imports this package.
"""
