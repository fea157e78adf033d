"""The one interface for anything that acts; it lives in :mod:`shanghai_env.decision`.

Re-exported here so that agents written against ``shanghai_env.agents.base`` keep working.
"""

from shanghai_env.decision import Agent, Decision, Encoder, decision_for

__all__ = ["Agent", "Decision", "Encoder", "decision_for"]
