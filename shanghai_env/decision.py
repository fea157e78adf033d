"""The one interface for anything that acts: a :class:`Decision` in, a legal action id out.

A :class:`Decision` holds only what the acting player may know:

- ``view``: the engine's :class:`~shanghai_env.engine.PlayerView` (own hand, the table, face-up
  information, ``legal_moves``), for bots that want structure;
- ``action_mask``: an int8 vector over the fixed action table, 1 where an action is legal;
- ``observation``: the flat observation vector of
  :class:`shanghai_env.observation.ObservationEncoder`, computed only when first read (bots never
  read it, so they never pay for it), from a :class:`SeatState`: the view and two public facts,
  never the game itself;
- ``table``: the :class:`~shanghai_env.actions.ActionTable` that maps moves to action ids;
- ``rules``: the game's rule options (public knowledge).

An :class:`Agent` has a ``name``, ``reset(seed)`` (called before every game: an agent's play
must depend only on that seed and the decisions it is shown) and ``act(decision) -> int``; a
:class:`BatchAgent` (a trained network) also has ``act_batch(decisions) -> list[int]``, used to
decide several games' decisions in one call.
No Decision holds a reference to the Game: a player can keep one, walk its attributes and
closures, and find no other hand and no stock (tests/test_hidden_info.py checks).
A researcher's policy needs nothing more; see :func:`shanghai_env.agents.registry.make_agent` for how one
is named on the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, partial
from typing import Any, Protocol, runtime_checkable

import numpy as np

from shanghai_env.actions import ActionTable
from shanghai_env.engine import Game, PlayerView
from shanghai_env.moves import Move
from shanghai_env.rules import Rules


class Decision:
    """What the acting player may know at one decision; the observation vector is lazy."""

    def __init__(
        self,
        view: PlayerView,
        table: ActionTable,
        rules: Rules | None = None,
        observe: Callable[[], np.ndarray] | None = None,
    ) -> None:
        self.view = view
        self.table = table
        self.rules = rules if rules is not None else Rules(num_players=view.num_players)
        self._observe = observe

    @cached_property
    def observation(self) -> np.ndarray:
        """The observation vector of the acting player (computed on first use)."""
        if self._observe is None:
            raise RuntimeError(
                "this decision carries no observation encoder; build it with an observe callable "
                "(decision_for(game, player, table, encoder=...))"
            )
        return self._observe()

    @cached_property
    def action_mask(self) -> np.ndarray:
        """int8 mask over the action table: 1 for every legal action."""
        return self.table.mask(self.view.legal_moves)

    @cached_property
    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending."""
        encode = self.table.encode
        return sorted(encode(m) for m in self.view.legal_moves)

    def action(self, move: Move) -> int:
        """The action id of a move."""
        return self.table.encode(move)


@runtime_checkable
class Agent(Protocol):
    """Anything that acts: bots, trained models, a researcher's policy."""

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Forget everything from earlier games; seed any randomness from ``seed``."""
        ...

    def act(self, decision: Decision) -> int:
        """Return a legal action id for this decision."""
        ...


@runtime_checkable
class BatchAgent(Agent, Protocol):
    """An agent that can also decide many decisions at once (a network: one forward pass).

    ``act_batch(decisions)[i]`` must equal ``act(decisions[i])``, and no decision may depend on
    an earlier one (no state kept between decisions): :class:`shanghai_env.vector.VectorEnv`
    gathers one such agent's decisions from all its games and asks for them together.
    """

    def act_batch(self, decisions: list[Decision]) -> list[int]:
        """Legal action ids, one per decision, in order."""
        ...


class Encoder(Protocol):
    """What :func:`decision_for` needs of an observation encoder (``ObservationEncoder``).

    ``encode(state, player)`` is called with a :class:`SeatState` (the game as ``player`` knows
    it, in the Game's attribute names), not the Game: whatever the encoder reads, it reads from
    what the seat may know.
    """

    def encode(self, game: Any, player: int) -> np.ndarray: ...


class SeatState:
    """The game as one seat knows it, in the attribute names of :class:`~shanghai_env.engine.Game`
    that :class:`~shanghai_env.observation.ObservationEncoder` reads: the seat's own hand, the
    public state, and nothing hidden (every other hand is empty, the stock is only its size).

    Built from the seat's :class:`~shanghai_env.engine.PlayerView` and the two public facts a
    view does not carry (who is still to be asked in a buy offer, and whether the player in turn
    laid a joker going down this turn), so that a Decision's observation never needs the Game.
    """

    __slots__ = (
        "num_players", "rules", "hands", "table", "discard", "phase", "discard_counts", "upcard_from",
        "picked_up", "picked_total", "picked_bytes", "hand_sizes", "buys_left", "down", "scores",
        "offer", "to_act", "turn_player", "deal", "dealer", "contract", "stock",
        "went_down_this_turn", "joker_in_down",
    )  # fmt: skip

    def __init__(self, view: PlayerView, rules: Rules, offer: tuple[int, ...], joker_in_down: bool) -> None:
        n = view.num_players
        self.num_players = n
        self.rules = rules
        hands: list[tuple[int, ...]] = [()] * n
        hands[view.player] = view.hand
        self.hands = hands
        self.table = view.table
        # the pile's cards below the top are in discard_counts; only the top and the size are read
        self.discard = [view.upcard] * view.discard_size
        self.phase = view.phase
        self.discard_counts = view.discard_counts
        self.upcard_from = view.upcard_from
        self.picked_up = view.picked_up
        self.picked_total = [sum(row) for row in view.picked_up]
        self.picked_bytes: list[bytes | None] = [None] * n
        # lists, as in a Game: an encoder's caches compare them with the last game's
        self.hand_sizes = list(view.hand_sizes)
        self.buys_left = list(view.buys_left)
        self.down = list(view.down)
        self.scores = list(view.scores)
        self.offer = list(offer)
        self.to_act = view.to_act
        self.turn_player = view.turn_player
        self.deal = view.deal
        self.dealer = view.dealer
        self.contract = view.contract
        self.stock = range(view.stock_size)  # its size only: the cards and their order are hidden
        self.went_down_this_turn = view.turn_player_went_down
        self.joker_in_down = joker_in_down


def chosen_move(decision: Decision, action: object, who: str) -> Move:
    """The move ``action`` names at ``decision``, checked: the one place a player's answer is
    decoded and checked (tournament, single-agent view, vector env). A ValueError names ``who``
    (e.g. ``"agent 'greedy' in seat 2"``) if it is no action id or not a legal move now."""
    try:
        move = decision.table.decode(action)  # type: ignore[arg-type]  # decode checks the type
    except (TypeError, ValueError) as err:
        raise ValueError(f"{who} returned {action!r}: {err}") from None
    if move not in decision.view.legal_moves:
        raise ValueError(
            f"{who} chose illegal action {action} ({move.name}) in phase {decision.view.phase.name}"
        )
    return move


def apply_action(game: Game, decision: Decision, action: object, who: str) -> Move:
    """Check ``action`` against ``decision`` (:func:`chosen_move`) and play it in ``game``: the one
    step every site that plays a player's answer goes through. Nothing changes on a ValueError."""
    move = chosen_move(decision, action, who)
    game.apply(move)
    return move


def play_turn(game: Game, agent: Agent, table: ActionTable, encoder: Encoder | None = None) -> Move:
    """Ask ``agent`` for the decision of the player to act, check its answer and play it."""
    seat = game.to_act
    decision = decision_for(game, seat, table, encoder)
    return apply_action(game, decision, agent.act(decision), f"agent {agent.name!r} in seat {seat}")


def decision_for(game: Game, player: int, table: ActionTable, encoder: Encoder | None = None) -> Decision:
    """The decision of ``player`` (who must be the player to act) in ``game``.

    ``encoder`` is an ``ObservationEncoder`` (anything with ``encode(state, player)``); when given,
    the observation is computed from it on first read, from a :class:`SeatState`. The decision
    keeps the view and two public facts for it, no reference to the game: a player that keeps a
    decision can reach no hidden card through it, and bots (which never read the observation)
    pay nothing for it.
    """
    view = game.view(player)
    if encoder is None:
        return Decision(view, table, game.rules)
    return Decision(
        view,
        table,
        game.rules,
        partial(_observe, encoder, view, game.rules, tuple(game.offer), game.joker_in_down),
    )


def _observe(
    encoder: Encoder, view: PlayerView, rules: Rules, offer: tuple[int, ...], joker_in_down: bool
) -> np.ndarray:
    return encoder.encode(SeatState(view, rules, offer, joker_in_down), view.player)
