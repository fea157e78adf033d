"""shanghai-env: Shanghai Rummy as a reinforcement-learning environment.

``shanghai_env.env(**options)`` is the PettingZoo AEC env (``raw_env`` without the wrappers);
importing this package registers it as ``pettingzoo.make("aec", "shanghai/Shanghai-v0")``.
``SingleAgentEnv`` is the single-agent Gymnasium view for training (one learning seat); importing
this package registers it as ``gymnasium.make("shanghai/ShanghaiSingleAgent-v0", **kwargs)``, with
its batched view (:class:`shanghai_env.gym_vector.SingleAgentVectorEnv`) as the vector entry point
of ``gymnasium.make_vec``.
"""

import os as _os

from .aec import ENV_ID, env, raw_env, register
from .cards import JOKER, card_to_str, parse_cards, str_to_card
from .engine import NO_PLAYER, DealResult, Game, InvariantError, Phase, PlayerView
from .melds import CONTRACTS, arrangements, can_fulfil
from .moves import Move, MoveKind, move_name, parse_move
from .observation import ObservationEncoder, StateEncoder
from .rules import Rules
from .single_agent import SingleAgentEnv
from .vector import VectorEnv, vector_env

# agents/ and models/ live at the repository root; the wheel and an editable install map them to
# shanghai_env.agents and shanghai_env.models (pyproject.toml). In a source checkout run as it is
# (tests, PYTHONPATH=.) the import system finds them beside this package instead: no links needed.
_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_ROOT, "shanghai_env", "agents")) and _os.path.isfile(
    _os.path.join(_ROOT, "agents", "__init__.py")
):
    __path__.append(_ROOT)
del _ROOT

GYM_ENV_ID = "shanghai/ShanghaiSingleAgent-v0"


def register_gymnasium() -> None:
    """Register :class:`SingleAgentEnv` with Gymnasium as :data:`GYM_ENV_ID` (once; done on import),
    and the batched view of N games as its vector entry point
    (``gymnasium.make_vec(GYM_ENV_ID, n, vectorization_mode="vector_entry_point")``)."""
    import gymnasium

    if GYM_ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYM_ENV_ID,
            entry_point="shanghai_env.single_agent:SingleAgentEnv",
            vector_entry_point="shanghai_env.gym_vector:SingleAgentVectorEnv",
        )


register()
register_gymnasium()

__all__ = [
    "CONTRACTS",
    "ENV_ID",
    "GYM_ENV_ID",
    "JOKER",
    "NO_PLAYER",
    "DealResult",
    "Game",
    "InvariantError",
    "Move",
    "MoveKind",
    "ObservationEncoder",
    "Phase",
    "PlayerView",
    "Rules",
    "SingleAgentEnv",
    "StateEncoder",
    "VectorEnv",
    "arrangements",
    "can_fulfil",
    "card_to_str",
    "env",
    "move_name",
    "parse_cards",
    "parse_move",
    "raw_env",
    "register",
    "register_gymnasium",
    "str_to_card",
    "vector_env",
]
__version__ = "0.2.0"
