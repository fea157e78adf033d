"""PettingZoo's classic wrappers with direct access to the attributes an AEC loop reads.

PettingZoo's ``BaseWrapper`` forwards every attribute it lacks (``agent_selection``,
``agents``, ``terminations``, ...) through ``__getattr__``, which Python calls only after a
failed lookup. Behind three wrappers a plain ``agent_iter``/``last``/``step`` loop pays for
about 36 such failed lookups a step, a third of the time of a step. These subclasses change
little but that: each hot attribute becomes a property that reads (or writes) the base env
directly. The outer wrapper's ``last``, ``step`` and ``agent_iter`` go further: in the common
case (the selected agent observed, then a plain int action its mask allows) they do at once
what the three wrappers' calls would do, without the frames between. Behaviour, checks and
warnings are PettingZoo's own, with two exceptions, and ``isinstance`` still holds:

- actions are checked with explicit errors, not ``assert`` (which ``python -O`` strips, letting
  ``-1`` through as the last action): a value that is not one int (``True``, ``5.9``, an array
  with elements) is a TypeError, one out of range or ``None`` for a live agent a ValueError;
- ``last()`` and ``step()`` once every agent has stepped out of the finished game raise a
  RuntimeError that says to call ``reset()`` (PettingZoo's ``step`` only warns, and ``last``
  fails with a KeyError).
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

from .checks import EPISODE_OVER, action_id

# Attributes a wrapper never owns: every wrapper reads the base env's.
HOT_ATTRIBUTES = (
    "agents",
    "agent_selection",
    "terminations",
    "truncations",
    "infos",
    "rewards",
    "_cumulative_rewards",
    "possible_agents",
)
# Attributes OrderEnforcingWrapper refuses before reset (see its __getattr__).
GUARDED = {"rewards", "terminations", "truncations", "infos", "agent_selection", "agents"}


def _forwarding(name: str, guarded: bool) -> property:
    def get(self: Any) -> Any:
        if guarded and not self._has_reset:
            # AttributeError from a property falls back to __getattr__, which raises
            # PettingZoo's own "cannot be accessed before reset" error.
            raise AttributeError(name)
        return getattr(self._base, name)

    def set_(self: Any, value: Any) -> None:
        setattr(self._base, name, value)

    return property(get, set_)


def _with_forwarding(cls: type, guard: bool) -> type:
    namespace: dict[str, Any] = {
        name: _forwarding(name, guard and name in GUARDED) for name in HOT_ATTRIBUTES
    }
    namespace["__doc__"] = f"{cls.__name__} reading hot attributes straight from the base env."
    namespace["__module__"] = __name__
    return type(cls.__name__, (cls,), namespace)


_TerminateIllegal = _with_forwarding(wrappers.TerminateIllegalWrapper, guard=False)
_AssertOutOfBounds = _with_forwarding(wrappers.AssertOutOfBoundsWrapper, guard=False)
_OrderEnforcing = _with_forwarding(wrappers.OrderEnforcingWrapper, guard=True)


# The methods below are PettingZoo's own (pettingzoo 1.24-1.27) with each repeated attribute
# read done once from the base env. tests/test_aec.py runs PettingZoo's
# api_test, seed_test and illegal-move checks through them.


class TerminateIllegalWrapper(_TerminateIllegal):  # type: ignore[misc,valid-type]
    # Set by wrap_classic: the base env, whose attributes the hot properties read.
    _base: AECEnv

    def observe(self, agent: Any) -> Any:
        obs = self.env.observe(agent)
        base = self._base
        selected = base.agent_selection
        if agent == selected:
            self._prev_obs = obs
            infos = base.infos
            self._prev_info = infos.get(selected, {})
        return obs

    def step(self, action: Any) -> None:
        # The common case (a live agent plays an action its last observed mask allows) ends
        # exactly as PettingZoo's step does: forget the observation, step the inner env.
        # Everything else (illegal actions, dead agents, no observation yet) is PettingZoo's.
        base = self._base
        selected = base.agent_selection
        prev = self._prev_obs
        if (
            not self._terminated
            and action is not None
            and isinstance(prev, dict)
            and "action_mask" in prev
            and not base.terminations[selected]
            and not base.truncations[selected]
            and prev["action_mask"][action]
        ):
            self._prev_obs = None
            self._prev_info = None
            self.env.step(action)
            return
        super().step(action)


class AssertOutOfBoundsWrapper(_AssertOutOfBounds):  # type: ignore[misc,valid-type]
    # Set by wrap_classic: the base env, and the size of the action table.
    _base: AECEnv
    _num_actions: int

    def step(self, action: Any) -> None:
        base = self._base
        selected = base.agent_selection
        if action is None:
            try:
                done = base.terminations[selected] or base.truncations[selected]
            except KeyError:
                raise RuntimeError(EPISODE_OVER) from None
            if not done:
                raise ValueError(f"{selected} must act: None is only for terminated or truncated agents")
        elif type(action) is not int or not 0 <= action < self._num_actions:
            action = action_id(action, self._num_actions)  # TypeError/ValueError naming what is allowed
        self.env.step(action)


class OrderEnforcingWrapper(_OrderEnforcing):  # type: ignore[misc,valid-type]
    # Set by wrap_classic: the base env, the TerminateIllegalWrapper inside, and the size of the
    # action table.
    _base: AECEnv
    _terminate: TerminateIllegalWrapper
    _num_actions: int

    def step(self, action: Any) -> None:
        if self._has_reset:
            base = self._base
            if not base.agents:
                raise RuntimeError(EPISODE_OVER)
            # The common case, a plain int in range that the live agent's last observed mask
            # allows, ends as the three wrappers' step does (AssertOutOfBounds accepts it,
            # TerminateIllegal forgets the observation): without the two frames between.
            inner = self._terminate
            prev = inner._prev_obs
            if (
                type(action) is int
                and 0 <= action < self._num_actions
                and type(prev) is dict
                and not inner._terminated
                and "action_mask" in prev
                and prev["action_mask"][action]
            ):
                selected = base.agent_selection
                if not base.terminations[selected] and not base.truncations[selected]:
                    self._has_updated = True
                    inner._prev_obs = None
                    inner._prev_info = None
                    base.step(action)
                    return
        super().step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # PettingZoo's error for use before reset
        base = self._base
        if not base.agents:
            raise RuntimeError(EPISODE_OVER)
        agent = base.agent_selection
        infos = base.infos  # a property of raw_env (brought up to date when read): read once
        if observe:
            # what observe(agent) does through the three wrappers for the selected agent
            observation = base.observe(agent)
            inner = self._terminate
            inner._prev_obs = observation
            inner._prev_info = infos.get(agent, {})
        else:
            observation = None
        return (
            observation,
            base._cumulative_rewards[agent],
            base.terminations[agent],
            base.truncations[agent],
            infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable[Any, Any, Any]:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)


class _AgentIterable(AECOrderEnforcingIterable[Any, Any, Any]):
    def __iter__(self) -> AECOrderEnforcingIterator[Any, Any, Any]:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator[Any, Any, Any]):
    """PettingZoo's iterator over the agent to act, reading the base env directly."""

    def __next__(self) -> Any:
        env = self.env
        base = env._base
        if not base.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        if not env._has_updated:
            # PettingZoo's own check (an assert there), kept under python -O too
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        env._has_updated = False
        return base.agent_selection


def wrap_classic(env: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """``env`` in TerminateIllegal -> AssertOutOfBounds -> OrderEnforcing, as PettingZoo's classic envs."""
    base = env.unwrapped
    wrapped: Any = TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    wrapped._base = base
    terminate = wrapped
    num_actions = int(base.action_space(base.possible_agents[0]).n)
    wrapped = AssertOutOfBoundsWrapper(wrapped)
    wrapped._base = base
    wrapped._num_actions = num_actions
    wrapped = OrderEnforcingWrapper(wrapped)
    wrapped._base = base
    wrapped._terminate = terminate
    wrapped._num_actions = num_actions
    return wrapped
