"""``shanghai-train METHOD``: one training loop, with methods as small modules over it.

:mod:`.loop` runs any method (setup or resume, steps, checkpoints, evaluations, the learning
curve); :mod:`.run` holds the configuration and the run folder; :mod:`.evaluation` plays the
learner against bots through the tournament; :mod:`.policy` is the network and the saved player;
``methods/`` holds ``ppo`` and ``dmc``. The command line is :mod:`.cli`.
"""
