"""A shipped player's network in one's own loop: ``scratch`` by its name, as a torch module.

``load_scorer_module("scratch")`` finds the file in the installed package from any folder (the
names: ``shanghai_env.agents.registry.shipped_models()``); ``info.env_options`` makes a batched
env whose arrays the network reads. Seat 0 of every game is the network, choosing the
highest-scored legal move of all games in one forward pass a step; the other seats are greedy
bots played inside the env. ``python examples/shipped_network.py 200`` plays 200 deals.
"""

import sys
import time

import numpy as np
import torch

import shanghai_env
from shanghai_env.agents.learned.players.policy import load_scorer_module
from shanghai_env.agents.registry import make_agent

torch.set_num_threads(1)  # one thread per process: on small machines torch's default is much slower
deals = int(sys.argv[1]) if len(sys.argv) > 1 else 200
module, info = load_scorer_module("scratch")  # the 8-seat network: it plays 3 to 8 players
options = {**info.env_options, "num_players": 4}  # its table, its encoding and the facts it reads
bots = [lambda: make_agent("greedy")] * 3
venv = shanghai_env.vector_env(num_envs=16, players=[None, *bots], **options)
obs, mask, seat = venv.reset(seed=0)
points, played, decisions, start = np.zeros(4), 0, 0, time.perf_counter()
while played < deals:
    with torch.no_grad():  # one forward pass scores every game's legal moves
        scores, idx, valid = module(obs, venv.legal_actions, venv.extra if info.needs_facts else None)
    best = idx.gather(1, scores.argmax(1, keepdim=True)).squeeze(1)  # the padding scores -inf
    obs, mask, seat, rewards, done = venv.step(best.numpy())
    decisions += venv.num_envs
    ended = venv.deal_ended  # the "deal" reward is -deal score / 100 to every seat
    points += -100 * rewards[ended].sum(0)
    played += int(ended.sum())
seconds = time.perf_counter() - start
print(f"scratch ({info.method}, scores: {info.scores}) at seat 0 of 4, greedy bots at seats 1-3")
print(f"{played} deals, {decisions:,} decisions of the network in {seconds:.1f} s")
mean = points / played
greedy = ", ".join(f"{p:.1f}" for p in mean[1:])
print(f"points a deal (lower is better): scratch {mean[0]:.1f}; the greedy bots {greedy}")
