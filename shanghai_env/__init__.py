"""shanghai-env: Shanghai Rummy as a reinforcement-learning environment."""

from .cards import JOKER, card_to_str, parse_cards, str_to_card
from .engine import NO_PLAYER, DealResult, Game, InvariantError, Phase, PlayerView
from .melds import CONTRACTS, arrangements, can_fulfil
from .moves import Move, MoveKind, move_name, parse_move
from .rules import Rules

__all__ = [
    "CONTRACTS",
    "JOKER",
    "NO_PLAYER",
    "DealResult",
    "Game",
    "InvariantError",
    "Move",
    "MoveKind",
    "Phase",
    "PlayerView",
    "Rules",
    "arrangements",
    "can_fulfil",
    "card_to_str",
    "move_name",
    "parse_cards",
    "parse_move",
    "str_to_card",
]
__version__ = "0.1.0"
