"""The AEC env as an RLlib ``MultiAgentEnv`` (new API stack), ready for RLlib's action masking.

Every agent observes ``{"observations": Box(float32, (L,)), "action_mask": Box(float32 0/1, (N,))}``
(the int8 values unscaled, what ``ModelAgent`` feeds an SB3 model), the keys and dtype
``ActionMaskingTorchRLModule`` reads. Agents are roles counted from the learning seat: ``learner``,
``self_k`` (the learner's policy) and ``snapshot_k`` (a frozen copy); other opponents are bots
played inside the env (each made by a factory, as the vector env's ``players``: ``lambda:
make_agent("greedy")``). Every move is the AEC env's step through ``env()``'s wrappers (rewards,
the step cap, an illegal action ending the game as there). ``shanghai_env`` does not import this
module: Ray RLlib is an optional extra. docs/rllib.md describes it all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from shanghai_env.aec import raw_env
from shanghai_env.checks import int_arg
from shanghai_env.decision import Agent, chosen_move, decision_for
from shanghai_env.fast_wrappers import wrap_classic
from shanghai_env.render import render_text

LEARNER = "learner"
SELF = "self"
SNAPSHOT = "snapshot"
POLICY_ROLES = (SELF, SNAPSHOT)  # opponents RLlib plays; everything else is played in the env
DEFAULT_MAX_MOVES_PER_DEAL = 1000  # the step cap per deal, as train.py's environments use
_SEED_LIMIT = 2**63
_RULE_KEYS = (
    "joker_points",
    "down_players_may_buy",
    "exact_contract_melds",
    "same_suit_run_gap",
    "joker_swaps",
)
_KEYS = {
    "num_players",
    "contracts",
    "reward",
    "opponents",
    "max_moves_per_deal",
    "illegal_reward",
    *_RULE_KEYS,
}
# RLlib's five multi-agent dicts: observations, rewards, terminateds, truncateds, infos
StepResult = tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]
Opponent = str | Callable[[], Agent]  # a role RLlib plays, or a factory of a bot the env plays


def check_opponents(opponents: Sequence[Opponent]) -> tuple[Opponent, ...]:
    """``opponents`` checked: each one of :data:`POLICY_ROLES` or a factory of a bot (a callable
    that returns an :class:`~shanghai_env.decision.Agent`); ValueError or TypeError if not."""
    if isinstance(opponents, str) or not isinstance(opponents, Sequence) or not opponents:
        roles = ", ".join(POLICY_ROLES)
        raise ValueError(f"opponents must list one or more of {roles} or bot factories, got {opponents!r}")
    for o in opponents:
        if isinstance(o, str) and o not in POLICY_ROLES:
            raise ValueError(
                f"opponent {o!r}: a role is one of {', '.join(POLICY_ROLES)}; a bot is a factory, "
                f"e.g. lambda: make_agent({o!r}) (shanghai_env.agents.registry)"
            )
        if not isinstance(o, str) and not callable(o):
            raise TypeError(
                f"opponent {o!r}: one of {', '.join(POLICY_ROLES)} or a factory of a bot, "
                f"got {type(o).__name__}"
            )
    return tuple(opponents)


def role_of(agent_id: str) -> tuple[str, int]:
    """``("learner", 0)``, ``("self", k)`` or ``("snapshot", k)`` for an agent id of this env."""
    if agent_id == LEARNER:
        return LEARNER, 0
    role, _, k = agent_id.rpartition("_")
    if role not in POLICY_ROLES or not k.isdigit():
        raise ValueError(f"not an agent id of ShanghaiMultiAgentEnv: {agent_id!r}")
    return role, int(k)


class ShanghaiMultiAgentEnv(MultiAgentEnv):
    """Shanghai Rummy for RLlib: the AEC env, role-named agents, float observations with a mask.

    ``config`` (RLlib's ``env_config``) may hold ``num_players`` (4), ``contracts`` ((1,)),
    ``reward`` ("deal"), ``opponents`` (("self",): roles and bot factories, one drawn per seat and
    episode), ``max_moves_per_deal`` (1000),
    ``illegal_reward`` (-1.0) and the rule options of :class:`shanghai_env.rules.Rules`.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - _KEYS)
        if unknown:
            raise ValueError(f"unknown env_config keys {unknown}")
        contracts = tuple(config.get("contracts", (1,)))
        cap = int_arg(
            "max_moves_per_deal", config.get("max_moves_per_deal", DEFAULT_MAX_MOVES_PER_DEAL), low=1
        )
        self.raw = raw_env(
            num_players=int(config.get("num_players", 4)),
            contracts=contracts,
            reward=config.get("reward", "deal"),
            max_steps=cap * len(contracts),
            **{k: config[k] for k in _RULE_KEYS if k in config},
        )
        self.rules = self.raw.rules
        self.opponents = check_opponents(config.get("opponents", (SELF,)))
        self.illegal_reward = float(config.get("illegal_reward", -1.0))
        # the AEC env as env() wraps it: RLlib's agents step through it (an illegal action ends the game)
        self.aec = wrap_classic(self.raw, illegal_reward=self.illegal_reward)
        roles = [r for r in POLICY_ROLES if r in self.opponents]
        ids: list[Any] = [LEARNER] + [f"{r}_{k}" for r in roles for k in range(1, self.rules.num_players)]
        self.possible_agents, self.agents, self._agent_ids = ids, [LEARNER], set(ids)
        size, encoder = self.raw.action_table.size, self.raw.encoder
        observations = spaces.Box(
            encoder.low.astype(np.float32), encoder.high.astype(np.float32), dtype=np.float32
        )
        mask = spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self.agent_observation_space = spaces.Dict({"observations": observations, "action_mask": mask})
        self.agent_action_space: spaces.Discrete = spaces.Discrete(size)
        observation_spaces: dict[Any, spaces.Space[Any]] = dict.fromkeys(ids, self.agent_observation_space)
        action_spaces: dict[Any, spaces.Space[Any]] = dict.fromkeys(ids, self.agent_action_space)
        self.observation_spaces, self.action_spaces = observation_spaces, action_spaces  # all the same
        self.observation_space = spaces.Dict(observation_spaces)
        self.action_space = spaces.Dict(action_spaces)
        self._bots: dict[tuple[int, int], Agent] = {}  # per (relative seat, opponent): bots keep game state
        self.learner_seat = 0
        self.game_seed = 0
        self._name_of_seat: dict[int, str] = {}  # absolute seat -> agent id, RLlib's seats only
        self._bot_of_seat: dict[int, Agent] = {}
        self._seen: list[str] = []  # agent ids that got an observation this episode, in order
        self._done = True

    # --- RLlib's API ----------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Seat the learner and the opponents, deal a game; observe the first RLlib agent to act."""
        super().reset(seed=seed)
        rng = self.np_random
        n = self.rules.num_players
        self.game_seed = int(seed) if seed is not None else int(rng.integers(_SEED_LIMIT))
        self.learner_seat = int(rng.integers(n))
        self._name_of_seat = {self.learner_seat: LEARNER}
        self._bot_of_seat = {}
        for k in range(1, n):
            which = int(rng.integers(len(self.opponents)))
            opponent = self.opponents[which]
            seat = (self.learner_seat + k) % n
            if isinstance(opponent, str):
                self._name_of_seat[seat] = f"{opponent}_{k}"
            else:
                bot = self._bots.get((k, which))
                if bot is None:
                    bot = self._bots[(k, which)] = opponent()
                bot.reset(int(rng.integers(_SEED_LIMIT)))
                self._bot_of_seat[seat] = bot
        self.agents = [self._name_of_seat[s] for s in sorted(self._name_of_seat)]
        self.aec.reset(seed=self.game_seed)
        self._seen = []
        self._done = False
        obs, _, terminated, truncated, infos = self._advance()
        if terminated["__all__"] or truncated["__all__"]:  # pragma: no cover - bots cannot end a game at once
            raise RuntimeError("the game ended before any RLlib agent acted")
        return obs, infos

    def step(self, action_dict: dict[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
        """Play the acting agent's action, then the env's bots until an RLlib agent must act.

        Returns RLlib's five multi-agent dicts: observations, rewards, terminateds, truncateds
        (both with ``"__all__"``) and infos.
        """
        if self._done:
            raise RuntimeError("the episode is over: call reset() first")
        actor = self._name_of_seat.get(self.raw.game.to_act)
        if actor is None or actor not in action_dict:
            raise ValueError(f"{actor!r} must act now; got actions for {sorted(action_dict)}")
        # env()'s step, armed by the observation _advance read with last(): an illegal action
        # ends the game there, an id outside the table is a ValueError
        self.aec.step(int(np.asarray(action_dict[actor]).reshape(-1)[0]))
        return self._advance()

    def render(self) -> Any:
        """The table as text, every hand shown."""
        return render_text(self.raw.game)

    def close(self) -> None:
        """Nothing to release."""

    # --- playing the env's seats ----------------------------------------------------------------

    def _advance(self) -> StepResult:
        """Play bots until an RLlib agent must act (observe it) or the game ends (observe everyone)."""
        aec, raw = self.aec, self.raw
        game = raw.game
        while True:
            agent = raw.agent_selection
            if raw.terminations[agent] or raw.truncations[agent]:
                return self._finish()
            seat = game.to_act
            name = self._name_of_seat.get(seat)
            if name is not None:
                obs, reward, _, _, _ = aec.last()
                if name not in self._seen:
                    self._seen.append(name)
                not_done = {"__all__": False}
                return {name: self._convert(obs)}, {name: float(reward)}, not_done, dict(not_done), {name: {}}
            bot = self._bot_of_seat[seat]
            decision = decision_for(game, seat, raw.action_table, raw.encoder)
            move = chosen_move(decision, bot.act(decision), f"agent {bot.name!r} in seat {seat}")
            # the AEC env's own step, past env()'s wrappers: the answer is checked, and the
            # wrappers would build the bot's observation only to check it again
            raw.step(decision.action(move))

    def _finish(self) -> StepResult:
        """The episode's end as the AEC env ends it (the game over, its step cap, or an illegal
        action): the last observation and remaining reward of every RLlib agent that has played."""
        aec, raw = self.aec, self.raw
        # env() terminates every agent on an illegal action, with the game unchanged (not over,
        # the offender still to act); the step cap truncates
        terminated = any(raw.terminations.values())
        offender = raw.game.to_act if terminated and not raw.game.game_over else None
        remaining = {a: 0.0 for a in raw.possible_agents}
        for agent in aec.agent_iter():  # PettingZoo's way out: last() then step(None) for every agent
            remaining[agent] = float(aec.last(observe=False)[1])
            aec.step(None)
        self._done = True
        scores = list(raw.game.scores)
        obs: dict[str, Any] = {}
        rewards: dict[str, float] = {}
        infos: dict[str, Any] = {}
        for seat, name in self._name_of_seat.items():
            if name in self._seen:
                agent = raw.possible_agents[seat]
                obs[name] = self._convert(raw.observe(agent))
                rewards[name] = remaining[agent]
                infos[name] = {"seat": seat, "game_scores": scores, "score": scores[seat]}
                if offender is not None:
                    infos[name]["illegal_action"] = seat == offender
        terms: dict[str, bool] = {**dict.fromkeys(obs, terminated), "__all__": terminated}
        truncs: dict[str, bool] = {**dict.fromkeys(obs, not terminated), "__all__": not terminated}
        return obs, rewards, terms, truncs, infos

    @staticmethod
    def _convert(obs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {
            "observations": obs["observation"].astype(np.float32),
            "action_mask": obs["action_mask"].astype(np.float32),
        }
