"""``shanghai-train METHOD``: one training loop (:mod:`.loop`), with methods as small modules over
it (``methods/``); the run folder is :mod:`.run`, the command line :mod:`.cli`.
"""
