"""The single-agent view of many games as one Gymnasium ``VectorEnv``, on :mod:`shanghai_env.vector`.

``SingleAgentVectorEnv(num_envs, opponents=[...], **rule_options)``: in every game the learner
holds seat 0 and ``opponents`` the other seats (the vector env's ``players`` entries: a network
with ``act_batch`` decides that seat in all games at once, a factory gives each game its own
bot; by default, as in the single env, uniformly random legal players); ``step`` plays the
learner's actions and every opponent move after them until the learner must act again.
Observations ``(N, L)`` int8 are the learner's own (``ObservationEncoder``), actions
``MultiDiscrete([A] * N)``, rewards the learner's (the AEC env's ``reward`` mode),
``infos["action_mask"]`` (``(N, A)`` int8) the legal moves, also ``action_masks()`` as
sb3-contrib calls it. Episodes are games; they end by termination and restart in the same step
(Gymnasium's ``SAME_STEP`` autoreset): the row then shows the next game's first decision, and
``infos["final_scores"]`` keeps the totals of the game that ended (rows where ``terminations``).
So every row of every mask this view returns has at least one legal action: sampling from each
row's mask never meets an empty one.

It is the Gymnasium registry's vector entry point of ``shanghai/ShanghaiSingleAgent-v0``:
``gymnasium.make_vec(id, num_envs, vectorization_mode="vector_entry_point", **kwargs)`` builds
it (so does ``make_vec`` with no mode: Gymnasium then prefers a vector entry point). The single
env's own options (``learner_seat``, ``max_steps``, ``potential``, ...) are not this view's: it
refuses them, naming them. ``vectorization_mode="sync"`` (or ``"async"``) instead steps N single
envs (:class:`~shanghai_env.single_agent.SingleAgentEnv`) in Gymnasium's ``SyncVectorEnv``, whose
finished rows hold, by its ``autoreset_mode``:

- ``NEXT_STEP`` (its default): the step a game ends returns that game's final observation and an
  **all-zero mask** (a finished game has no legal move; a truncated one, ``max_steps``, keeps its
  mask); the next step ignores that row's action (any id, e.g. 0) and returns the new game's first
  decision. A loop that samples from every row's mask must skip rows where
  ``terminations | truncations`` were set on the previous step;
- ``SAME_STEP``: the row holds the new game's first observation and mask at once (the final
  ones in ``infos["final_obs"]`` and ``infos["final_info"]``), as in this view;
- ``DISABLED``: the row keeps the final observation and the all-zero mask until the caller
  resets it (``reset(options={"reset_mask": ...})``).
``encoding="any_table"`` (default ``"table"``) gives every array and id in the 8-seat layout
and table (:mod:`shanghai_env.any_table`), the opponents' decisions included.

``reset(seed=s)`` with one int seeds every game from it (:mod:`shanghai_env.vector`'s seeds);
``reset(seed=[s_0, ..., s_{N-1}])``, Gymnasium's one seed per env, seeds game ``i`` with ``s_i``
alone: it deals and plays what ``SingleAgentVectorEnv(1, ...).reset(seed=s_i)`` does (``None``
entries are drawn at random). Every game is dealt from its seed, so ``reset`` takes no
``options`` (a fixed ``deck`` or ``dealer`` is the AEC env's): any is refused, not ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from .rules import Rules
from .single_agent import UniformRandomAgent
from .vector import PlayerEntry
from .vector import VectorEnv as GameBatch

# the single env's options that this view has not (the learner's seat is 0, episodes are games,
# nothing is drawn): given, each is refused with a TypeError rather than taken for a rule option
SINGLE_ENV_ONLY = (
    "learner_seat",
    "max_steps",
    "potential",
    "gamma",
    "illegal_reward",
    "render_mode",
    "max_episode_steps",
)


class SingleAgentVectorEnv(VectorEnv):
    """One learner seat per game, N games, Gymnasium's vector API; see the module docstring."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 8,
        *,
        opponents: Sequence[PlayerEntry] | None = None,
        reward: str = "deal",
        encoding: str = "table",
        **rule_options: Any,
    ) -> None:
        given = sorted(k for k in SINGLE_ENV_ONLY if rule_options.get(k) is not None)
        if given:
            raise TypeError(
                f"{', '.join(given)}: options of the single env (SingleAgentEnv), not of its batched "
                "view, whose learner holds seat 0 in every game and whose episodes are whole games; "
                'gymnasium.make_vec(..., vectorization_mode="sync") steps single envs that take them'
            )
        rule_options = {k: v for k, v in rule_options.items() if k not in SINGLE_ENV_ONLY}
        if opponents is None:  # as the single env: uniformly random legal players, one per game
            seats = Rules.from_options(dict(rule_options)).num_players
            opponents = [UniformRandomAgent] * (seats - 1)
        if not isinstance(opponents, (list, tuple)):
            raise TypeError(
                "opponents must be a list or tuple of the other seats' players (a network or a "
                f"factory of bots each), or None for random players; got {opponents!r}"
            )
        entries = [None, *opponents]
        if any(o is None for o in opponents):
            raise ValueError("opponents: every other seat needs a player (a network or a factory of bots)")
        self.games = GameBatch(num_envs, players=entries, reward=reward, encoding=encoding, **rule_options)
        n, length, size = self.games.num_envs, self.games.observation_length, self.games.num_actions
        encoder = self.games.encoder
        self.num_envs = n
        self.single_observation_space = spaces.Box(encoder.low, encoder.high, dtype=np.int8)
        self.single_action_space = spaces.Discrete(size)
        self.observation_space = spaces.Box(
            np.broadcast_to(encoder.low, (n, length)),
            np.broadcast_to(encoder.high, (n, length)),
            dtype=np.int8,
        )
        self.action_space = spaces.MultiDiscrete(np.full(n, size))

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a fresh game in every row (see the module docstring for ``seed``); ``options``
        must be None or empty."""
        if options is not None:
            if not isinstance(options, Mapping):
                raise TypeError(f"options must be None (or an empty dict), got {options!r}")
            if options:
                raise ValueError(
                    f"reset options {sorted(map(str, options))} are not supported here: every game is "
                    "dealt from its seed (a fixed 'deck' or 'dealer' is the AEC env's reset option)"
                )
        obs, mask, _ = self.games.reset(seed=seed)
        return obs.copy(), {"action_mask": mask.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, mask, _, rewards, done = self.games.step(actions)
        infos: dict[str, Any] = {"action_mask": mask.copy()}
        if done.any():
            infos["final_scores"] = self.games.final_scores.copy()
            infos["_final_scores"] = done.copy()
        return obs.copy(), rewards[:, 0].copy(), done, np.zeros(self.num_envs, bool), infos

    def action_masks(self) -> np.ndarray:
        """The legal moves of every game, ``(N, A)`` bool (sb3-contrib's name)."""
        return self.games.mask.astype(bool)
