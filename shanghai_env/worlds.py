"""Worlds a player cannot tell from the real game: complete states sampled from a player's view.

A player sees a :class:`~shanghai_env.engine.PlayerView`: its own hand, the table, the discard
pile, hand sizes, buys, scores, and the face-up cards each player picked up and still holds.
Everything else is hidden: the rest of the other hands and the order of the stock. A
*determinisation* (a *world*) fills the hidden part at random so that the result is a complete
:class:`~shanghai_env.engine.Game` whose ``view(player)`` is the player's view, field for field,
and which plays on under the rules like the real game:

- every other hand has its real size and holds the cards that player was seen to pick up;
- the *unseen* cards (the deck minus the own hand, the table, the discard pile and the others'
  known pickups) are spread uniformly at random over the other hands' unknown slots and the
  stock;
- the discard pile holds exactly the seen discards, with the upcard on top (the order below
  the top only matters to a rebuild of the stock, which shuffles it anyway);
- the phase, the player in turn and to act, the pending buy offer (derived from the rules and
  the public state), buys, who is down, who went down this turn (and whether a joker was in it),
  the rebuilds of the stock left, the dealer and the scores are those of the view;
- the world's ``seed_entropy`` is drawn from the caller's generator, so the world's later
  rebuilds of the stock and later deals come from that generator, not from the real game's seed.

One hidden fact constrains the deal: while another player is going down (phase GOING_DOWN
seen by someone else) its hand must still complete the contract it has started, keeping a card
to discard, as the real hand does. Such worlds are drawn by rejection (exact); when that keeps
failing, from a completion found by search, then mixed by swaps that keep the hand able to
complete (a Metropolis walk whose stationary law is the uniform one over such worlds). The
search counts the cards the hand is known to hold (picked up, seen) first: a set's naturals may
be of any suit, so a set of 9s takes the hand's seen 9s before any unseen copy.

Not derivable from a view, and not needed to play on: the scores of each past deal (the totals
are kept; ``deal_results`` gets one neutral entry per past deal: zero scores, nobody out) and
the moves of past deals (the world's ``move_count`` is the moves of this deal, which are public,
so the rule ``max_moves_per_deal`` ends the world's deal where it ends the real one). Without a
limit on rebuilds, the number of rebuilds so far is not public; it only keys the world's own
shuffles, so it is set to 0.

Every public function takes a :class:`~shanghai_env.engine.PlayerView` (``game.view(player)``):
anything else, a whole ``Game`` or None included, is a TypeError. A view that no game can show
(another table size, a seat, phase or dealer out of range, a hand not of its size, a count below
zero, a card id outside 0..52, an upcard the discard pile does not hold) is a ValueError naming
the field and what it allows, a field of the wrong type a TypeError, and so is a generator that
is not a ``numpy.random.Generator``; each is raised before the generator is drawn from.

:class:`WorldSampler` does the work that depends only on the view once; each
:meth:`WorldSampler.sample` then costs one copy of the state and one permutation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

import numpy as np

from .cards import JOKER, NUM_CARD_KINDS, card_to_str, deck_counts, full_deck, rank_of
from .checks import is_int
from .engine import NO_PLAYER, DealResult, Game, Phase, PlayerView
from .melds import SET, Arrangement, Meld, completion_feasible, completions
from .rules import Rules

__all__ = ["WorldSampler", "sample_world", "unseen_counts"]

_ENTROPY_BOUND = 1 << 63
REJECTION_TRIES = 64  # uniform tries before building a world around a completion
COMPLETIONS_SCANNED = 5000  # completions searched for ones the hand can hold
PRUNING_TRIES = 64  # random orders tried by the pruning search when the scan finds none
SET_NATURAL = 65  # 13 * 5, above every card id: marks a set's natural in a completion's cards
SWAPS_PER_CARD = 8  # Metropolis swaps per unknown card of the hand going down


def unseen_counts(view: PlayerView) -> list[int]:
    """Copies of each card kind that ``view.player`` has not seen: in other hands or the stock.

    The deck minus the own hand, every table meld, the discard pile and the cards the other
    players were seen to pick up and still hold. Raises TypeError if ``view`` is not a
    PlayerView (``game.view(player)``) or one of the fields read has the wrong type, and
    ValueError if a field is out of range (see :func:`_check_cards`) or the view holds more of
    a card than the deck does.
    """
    _check_cards(_require_view(view))
    return _count_unseen(view)


def _require_view(view: object) -> PlayerView:
    """``view`` itself, or TypeError: what one player may know is a PlayerView, not a whole Game."""
    if isinstance(view, PlayerView):
        return view
    if isinstance(view, Game):
        got = "a Game: pass game.view(player), what that player may know"
    else:
        got = "None" if view is None else type(view).__name__
    raise TypeError(f"view must be a PlayerView (game.view(player)), got {got}")


def _check_num_players(view: PlayerView) -> int:
    n = view.num_players
    if not is_int(n):
        raise TypeError(f"view.num_players must be an int 3..8, got {n!r} ({type(n).__name__})")
    if not 3 <= n <= 8:
        raise ValueError(f"view.num_players must be 3..8, got {n}")
    return int(n)


def _check_seat(view: PlayerView, name: str, low: int = 0) -> None:
    """``view.<name>`` is a seat (or, with ``low=-1``, NO_PLAYER)."""
    n = view.num_players
    value = getattr(view, name)
    allowed = f"a seat 0..{n - 1}" + (" or -1 (nobody)" if low < 0 else "")
    if not is_int(value):
        raise TypeError(f"view.{name} must be {allowed}, got {value!r} ({type(value).__name__})")
    if not low <= value < n:
        raise ValueError(f"view.{name} must be {allowed} in a {n}-player game, got {value}")


def _check_sized(name: str, value: object, size: int, what: str) -> Sequence[Any]:
    """``value`` (named ``name``) as a tuple or list of ``size`` entries, or TypeError/ValueError."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name} must be a tuple of {size} entries ({what}), got {type(value).__name__}")
    if len(value) != size:
        raise ValueError(f"{name} must hold {size} entries ({what}), got {len(value)}")
    return value


def _check_counts(name: str, value: object, size: int, what: str) -> None:
    """``value`` holds ``size`` counts (ints >= 0)."""
    counts = _check_sized(name, value, size, what)
    if all(type(k) is int for k in counts) and min(counts, default=0) >= 0:
        return  # what a game's view holds: plain ints
    for i, k in enumerate(counts):
        if not is_int(k):
            raise TypeError(f"{name}[{i}] must be a count (an int >= 0), got {k!r} ({type(k).__name__})")
        if k < 0:
            raise ValueError(f"{name}[{i}] must be a count (an int >= 0), got {k}")


def _check_cards(view: PlayerView) -> None:
    """Refuse a view whose cards no game shows: the fields :func:`unseen_counts` reads.

    The table size, the seat, the hand, the discard pile and the others' pickups as counts per
    card kind, the table as one tuple of Melds per seat holding card ids 0..52, and the upcard:
    -1 with an empty discard pile, else a card the pile holds.
    """
    n = _check_num_players(view)
    _check_seat(view, "player")
    per_kind = "one count per card kind"
    _check_counts("view.hand", view.hand, NUM_CARD_KINDS, per_kind)
    _check_counts("view.discard_counts", view.discard_counts, NUM_CARD_KINDS, per_kind)
    _check_sized("view.picked_up", view.picked_up, n, "one per seat")
    for q, row in enumerate(view.picked_up):
        _check_counts(f"view.picked_up[{q}]", row, NUM_CARD_KINDS, per_kind)
    _check_sized("view.table", view.table, n, "one per seat")
    for q, melds in enumerate(view.table):
        if not isinstance(melds, (tuple, list)):
            raise TypeError(f"view.table[{q}] must be a tuple of Melds, got {type(melds).__name__}")
        for i, meld in enumerate(melds):
            if not isinstance(meld, Meld):
                raise TypeError(f"view.table[{q}][{i}] must be a Meld, got {type(meld).__name__}")
            for c in meld.cards:
                if not is_int(c) or not 0 <= c <= JOKER:
                    error = ValueError if is_int(c) else TypeError
                    raise error(f"view.table[{q}][{i}] holds {c!r}, not a card 0..{JOKER}")
    up, pile = view.upcard, sum(view.discard_counts)
    if not is_int(up) or not NO_PLAYER <= up <= JOKER:
        allowed = f"-1 (an empty discard pile) or a card 0..{JOKER} in the discard pile"
        if not is_int(up):
            raise TypeError(f"view.upcard must be {allowed}, got {up!r} ({type(up).__name__})")
        raise ValueError(f"view.upcard must be {allowed}, got {up}")
    if up == NO_PLAYER and pile:
        raise ValueError(f"view.upcard is -1 (no discard pile), but view.discard_counts holds {pile} cards")
    if up != NO_PLAYER and not view.discard_counts[up]:
        raise ValueError(f"view.upcard is {up} ({card_to_str(up)}), which the discard pile does not hold")


def _count_unseen(view: PlayerView) -> list[int]:
    """:func:`unseen_counts` of a view that :func:`_check_cards` passed."""
    counts = deck_counts(view.num_players)
    for c, k in enumerate(view.hand):
        counts[c] -= k
    for c, k in enumerate(view.discard_counts):
        counts[c] -= k
    for melds in view.table:
        for meld in melds:
            for c in meld.cards:
                counts[c] -= 1
    for q, picked in enumerate(view.picked_up):
        if q != view.player:
            for c, k in enumerate(picked):
                counts[c] -= k
    if min(counts) < 0:
        raise ValueError("the view shows more copies of a card than the deck holds")
    return counts


def _pending_offer(view: PlayerView, rules: Rules) -> list[int]:
    """Players still to be asked in the current buy offer, the player to act first.

    The offer is fixed when the player in turn declines the upcard (the engine opens it then) from
    public facts that cannot change while it runs (buys left, who is down, who discarded the
    upcard): a buy ends the offer and a pass changes nothing but whose turn it is to answer.
    """
    n, turn = view.num_players, view.turn_player
    asked = [
        q
        for q in ((turn + k) % n for k in range(1, n))
        if q != view.upcard_from
        and view.buys_left[q] > 0
        and (rules.down_players_may_buy or not view.down[q])
    ]
    if view.to_act not in asked:
        raise ValueError(f"player_{view.to_act} is to act in a buy offer it cannot be part of")
    return asked[asked.index(view.to_act) :]


def _check_view(view: PlayerView, rules: Rules) -> None:
    """Refuse a view that no game of ``rules`` shows (TypeError: a wrong type; ValueError: a value)."""
    n = _check_num_players(view)

    def flag(name: str, value: object) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")

    if rules.num_players != n:
        raise ValueError(f"the view is of a {n}-player game, the rules are for {rules.num_players}")
    phases = ", ".join(p.name for p in Phase if p != Phase.GAME_OVER)
    if not is_int(view.phase):
        raise TypeError(
            f"view.phase must be a Phase ({phases}), got {view.phase!r} ({type(view.phase).__name__})"
        )
    if view.phase not in list(Phase):
        raise ValueError(f"view.phase must be a Phase ({phases}), got {view.phase!r}")
    if view.phase == Phase.GAME_OVER:
        raise ValueError("the game is over: there is no hidden state left to sample")
    for name in ("player", "to_act", "turn_player", "dealer"):
        _check_seat(view, name)
    _check_seat(view, "upcard_from", -1)
    for name in ("hand_sizes", "buys_left", "down", "scores", "table", "picked_up"):
        _check_sized(f"view.{name}", getattr(view, name), n, "one per seat")
    for name in ("hand", "discard_counts"):
        _check_sized(f"view.{name}", getattr(view, name), NUM_CARD_KINDS, "one count per card kind")
    _check_cards(view)
    _check_counts("view.hand_sizes", view.hand_sizes, n, "one per seat")
    _check_counts("view.buys_left", view.buys_left, n, "one per seat")
    for q, down in enumerate(view.down):
        flag(f"view.down[{q}]", down)
    for q, score in enumerate(view.scores):
        if not is_int(score):
            raise TypeError(f"view.scores[{q}] must be an int, got {score!r} ({type(score).__name__})")
    for name in ("went_down_this_turn", "turn_player_went_down"):
        flag(f"view.{name}", getattr(view, name))
    stock = view.stock_size
    if not is_int(stock) or stock < 0:
        error = ValueError if is_int(stock) else TypeError
        raise error(f"view.stock_size must be an int >= 0, got {stock!r} ({type(stock).__name__})")
    left, most = view.stock_rebuilds_left, rules.max_stock_rebuilds
    if left is not None:
        allowed = "None or an int >= 0" if most is None else f"None or an int 0..{most} (the rules' limit)"
        if not is_int(left):
            raise TypeError(
                f"view.stock_rebuilds_left must be {allowed}, got {left!r} ({type(left).__name__})"
            )
        if left < 0 or (most is not None and left > most):
            raise ValueError(f"view.stock_rebuilds_left must be {allowed}, got {left}")
    if sum(view.hand) != view.hand_sizes[view.player]:
        raise ValueError(
            f"view.hand holds {sum(view.hand)} cards, but player_{view.player}'s hand size is "
            f"{view.hand_sizes[view.player]}"
        )
    if (view.phase == Phase.BUY) == (view.to_act == view.turn_player):
        raise ValueError(
            f"in phase {view.phase.name} the player to act (player_{view.to_act}) "
            + ("is never" if view.phase == Phase.BUY else "must be")
            + f" the player in turn (player_{view.turn_player})"
        )
    moves, cap = view.deal_moves, rules.max_moves_per_deal
    if not is_int(moves):
        raise TypeError(f"view.deal_moves must be an int, got {moves!r} ({type(moves).__name__})")
    if moves < 0 or (cap is not None and moves >= cap):
        limit = "" if cap is None else f" and below {cap}, where the rules end a deal"
        raise ValueError(f"view.deal_moves must be >= 0{limit}, got {moves}")


class WorldSampler:
    """Samples complete games consistent with one player's view (see the module docstring).

    ``WorldSampler(view, rules).sample(rng)`` returns a fresh, independent :class:`Game`;
    ``rules`` are the game's rule options (public; a Decision carries them). Sampling depends on
    ``rng`` only, so a seeded generator gives the same worlds.
    """

    def __init__(self, view: PlayerView, rules: Rules | None = None) -> None:
        n = _check_num_players(_require_view(view))
        if rules is None:
            rules = Rules(num_players=n)
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        _check_view(view, rules)
        if not is_int(view.deal) or not 0 <= view.deal < len(rules.contracts):
            raise ValueError(
                f"deal {view.deal!r} is not one of the {len(rules.contracts)} deals of these rules"
            )
        if rules.contracts[view.deal] != view.contract:
            raise ValueError(f"deal {view.deal} is not played under contract {view.contract} by these rules")
        me = view.player

        unseen = _count_unseen(view)
        # other players' unknown slots: (player, how many of its cards are not known)
        slots = []
        for q in range(n):
            if q == me:
                continue
            known = sum(view.picked_up[q])
            free = view.hand_sizes[q] - known
            if free < 0:
                raise ValueError(f"player_{q} is known to hold {known} cards but holds {view.hand_sizes[q]}")
            if free:
                slots.append((q, free))
        hidden = sum(free for _, free in slots) + view.stock_size
        if sum(unseen) != hidden:
            raise ValueError(
                f"the view leaves {sum(unseen)} cards unseen for {hidden} hidden places "
                "(other hands' unknown cards and the stock)"
            )
        self.view = view
        self.rules = rules
        self.slots: tuple[tuple[int, int], ...] = tuple(slots)
        self.unseen = np.array([c for c in range(NUM_CARD_KINDS) for _ in range(unseen[c])], dtype=np.int64)
        self.template = self._template()
        # Another player going down must keep a hand that completes its started contract.
        self._going_down = view.phase == Phase.GOING_DOWN and view.turn_player != me

    def _template(self) -> Game:
        """The public part of the world; the hidden cards are filled in by :meth:`sample`."""
        view, rules = self.view, self.rules
        n, me = view.num_players, view.player
        game = Game(rules)  # every attribute a game has, then the view's state on top
        game.start_deal(view.deal, view.dealer, full_deck(n))
        game.scores = list(view.scores)
        game.deal_results = [
            DealResult(d, rules.contracts[d], (0,) * n, NO_PLAYER, False) for d in range(view.deal)
        ]
        # start_deal began the deal at move 0: the rule max_moves_per_deal ends it where it ends
        # the real deal
        game.move_count = view.deal_moves

        game.hands = [list(picked) for picked in view.picked_up]
        game.hands[me] = list(view.hand)
        game.hand_sizes = list(view.hand_sizes)
        discard = [c for c in range(NUM_CARD_KINDS) for _ in range(view.discard_counts[c])]
        if view.upcard != NO_PLAYER:  # _check_cards: the pile holds the upcard
            discard.remove(view.upcard)
            discard.append(view.upcard)
        game.discard = discard
        game.discard_counts = list(view.discard_counts)
        game.stock = []
        game.table = [[m.copy() for m in melds] for melds in view.table]
        game.down = list(view.down)
        game.buys_left = list(view.buys_left)
        game.picked_up = [list(picked) for picked in view.picked_up]
        game.upcard_from = view.upcard_from
        left = view.stock_rebuilds_left
        limit = rules.max_stock_rebuilds
        game.reshuffles = 0 if limit is None or left is None else limit - left
        game.turn_player = view.turn_player
        game.to_act = view.to_act
        game.phase = Phase(view.phase)
        went_down = view.turn_player_went_down or view.went_down_this_turn
        game.went_down_this_turn = went_down
        # A player lays no card off in the turn it goes down, so the melds of the player in turn
        # hold exactly what it laid down this turn (the engine's joker_in_down).
        laying = went_down or view.phase == Phase.GOING_DOWN
        game.joker_in_down = laying and any(JOKER in m.cards for m in game.table[view.turn_player])
        game.offer = _pending_offer(view, rules) if view.phase == Phase.BUY else []
        game.forget_caches()  # the table index, the picked-up counts and the legal moves of this state
        return game

    def sample(self, rng: np.random.Generator) -> Game:
        """One world: a complete game that ``view.player`` cannot tell from the real one."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                "rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
                f"got {type(rng).__name__}"
            )
        if self._going_down:
            return self._sample_going_down(rng)
        return self._deal(rng, rng.permutation(self.unseen).tolist())

    def _deal(self, rng: np.random.Generator, cards: list[int]) -> Game:
        """The world whose hidden places get ``cards``: the slots in order, then the stock."""
        game = self.template.clone()
        game.seed_entropy = int(rng.integers(_ENTROPY_BOUND))
        hands = game.hands
        k = 0
        for q, free in self.slots:
            hand = hands[q]
            for c in cards[k : k + free]:
                hand[c] += 1
            k += free
        game.stock = cards[k:]
        return game

    # --- another player is going down ----------------------------------------------------------

    def _completes(self, hand: list[int]) -> bool:
        rules = self.rules
        melds = self.template.table[self.view.turn_player]
        if not rules.exact_contract_melds and all(m.is_complete(False) for m in melds):
            return True  # `finish` is legal
        return completion_feasible(hand, melds, gap=rules.same_suit_run_gap, exact=rules.exact_contract_melds)

    def _sample_going_down(self, rng: np.random.Generator) -> Game:
        turn = self.view.turn_player
        known = list(self.view.picked_up[turn])
        start, free = 0, 0
        for q, k in self.slots:
            if q == turn:
                free = k
                break
            start += k
        for _ in range(REJECTION_TRIES):
            cards = rng.permutation(self.unseen).tolist()
            hand = known[:]
            for c in cards[start : start + free]:
                hand[c] += 1
            if self._completes(hand):
                return self._deal(rng, cards)
        mine = self._completion_cards(rng, known, free)
        rest = self.unseen.tolist()
        for c in mine:
            rest.remove(c)
        own = mine + [int(c) for c in rng.permutation(rest)[: free - len(mine)]]
        rest = self.unseen.tolist()
        for c in own:
            rest.remove(c)
        # Metropolis walk: swap one of the hand's unknown cards with a hidden card elsewhere,
        # keep the swap when the hand still completes (uniform proposals: uniform stationary law)
        hand = known[:]
        for c in own:
            hand[c] += 1
        if rest:
            for _ in range(SWAPS_PER_CARD * free):
                i, j = int(rng.integers(free)), int(rng.integers(len(rest)))
                a, b = own[i], rest[j]
                if a == b:
                    continue
                hand[a] -= 1
                hand[b] += 1
                if self._completes(hand):
                    own[i], rest[j] = b, a
                else:
                    hand[a] += 1
                    hand[b] -= 1
        rest = [int(c) for c in rng.permutation(rest)]
        return self._deal(rng, rest[:start] + own + rest[start:])

    def _completion_cards(self, rng: np.random.Generator, known: list[int], free: int) -> list[int]:
        """Unseen cards that, with the known ones, complete the contract being laid down.

        The search's completions of the known plus every unseen card are scanned (up to
        ``COMPLETIONS_SCANNED``) for those the hand can hold, one of them drawn at random. The
        scan meets completions in the search's order (runs by suit and window, sets by rank):
        with many unseen cards the first ones may all need more unseen cards than the hand has
        room for. Then pruning (:meth:`_pruned_completion`) finds one, and if even that fails
        the scan goes on to the first completion that fits, so a consistent view never fails.
        """
        rules = self.rules
        unseen = [0] * NUM_CARD_KINDS
        for c in self.unseen.tolist():
            unseen[c] += 1
        pool = [k + u for k, u in zip(known, unseen)]
        melds = [m.copy() for m in self.template.table[self.view.turn_player]]
        # a set's natural is marked SET_NATURAL + card: only its rank matters (see _unknown_cards)
        mark = [SET_NATURAL if m.spec.kind == SET else 0 for m in melds]
        size = sum(known) + free

        def fitting(arrangements: Iterable[Arrangement]) -> Iterator[bytes]:
            # each fit is kept as bytes: thousands of kept lists of tuples would wake the
            # garbage collector again and again
            for arrangement in arrangements:
                placed = bytes(
                    c + (m if c != JOKER else 0) for cards, m in zip(arrangement, mark) for c, _place in cards
                )
                if len(placed) >= size:  # no card left to discard
                    continue
                # no more unknown cards than cards placed: only a longer completion needs counting
                if len(placed) <= free or len(_unknown_cards(placed, known, unseen)) <= free:
                    yield placed

        search = completions(pool, melds, gap=rules.same_suit_run_gap, exact=rules.exact_contract_melds)
        fits = list(fitting(islice(search, COMPLETIONS_SCANNED)))
        if fits:
            return _unknown_cards(fits[int(rng.integers(len(fits)))], known, unseen)
        found = self._pruned_completion(rng, known, unseen, free)
        if found is None:
            rest = next(fitting(search), None)  # the rest of the scan: exhaustive
            found = None if rest is None else _unknown_cards(rest, known, unseen)
        if found is None:
            raise ValueError(
                f"player_{self.view.turn_player} is going down but no hand of its size completes its melds"
            )
        return found

    def _pruned_completion(
        self, rng: np.random.Generator, known: list[int], unseen: list[int], free: int
    ) -> list[int] | None:
        """Unseen cards completing the melds with the known ones, found by pruning, or None.

        From the known cards plus every unseen card, drop the unseen cards one at a time,
        keeping each one whose loss would leave the melds uncompletable: what is kept completes
        them, and no kept card could go. The order is random, cards unrelated to the known ones
        (no known card of their rank, or of their suit within four ranks) dropped first, so that
        the completion leans on the known cards; tried until the kept cards fit the unknown slots.
        """
        rules = self.rules
        melds = self.template.table[self.view.turn_player]
        cards = self.unseen.tolist()
        closeness = np.array([_closeness(c, known) for c in cards], dtype=float)
        for _ in range(PRUNING_TRIES):
            hand = [k + u for k, u in zip(known, unseen)]
            for i in np.argsort(closeness + 2.0 * rng.random(len(cards)), kind="stable").tolist():
                c = cards[i]
                hand[c] -= 1
                if not completion_feasible(
                    hand, melds, gap=rules.same_suit_run_gap, exact=rules.exact_contract_melds, reserve=0
                ):
                    hand[c] += 1
            extra = [c for c in range(NUM_CARD_KINDS) for _ in range(hand[c] - known[c])]
            # with a free slot to spare the hand keeps a card to discard; else it must keep one
            if len(extra) < free or (len(extra) == free and self._completes(hand)):
                return extra
        return None


def _closeness(card: int, known: list[int]) -> int:
    """How many known cards ``card`` could share a meld with: same rank, or same suit within four
    ranks (a joker: every known card)."""
    if card == JOKER:
        return sum(known)
    rank, suit = rank_of(card), card // 13
    near = 0
    for c in range(JOKER):
        if known[c] and (c % 13 == rank or (c // 13 == suit and abs(c % 13 - rank) <= 4)):
            near += known[c]
    return near


def _unknown_cards(placed: bytes, known: list[int], unseen: list[int]) -> list[int]:
    """The cards of a completion the hand must hold beyond its ``known`` cards, as few as can be.

    ``placed`` are the cards the completion places, a set's naturals marked ``SET_NATURAL + card``.

    A run's cards and every joker are exact cards; a set's natural only needs its rank (the
    search picks the lowest suits of the pool, which may be unseen copies while the hand holds
    seen ones of another suit). So the runs' cards come from the known cards first, then each
    set natural from a known card of its rank, any suit; what is still missing is an unseen
    card (for a set natural, the lowest unseen suit of its rank). No other assignment needs fewer.
    """
    left = known[:]
    extra: list[int] = []
    set_ranks: list[int] = []
    for c in placed:
        if c >= SET_NATURAL:
            set_ranks.append(c % 13)  # SET_NATURAL is a multiple of 13
        elif left[c]:
            left[c] -= 1
        else:
            extra.append(c)
    avail: list[int] | None = None  # unseen copies not yet in extra, once a set natural needs one
    for r in set_ranks:
        copies = (r, r + 13, r + 26, r + 39)  # the four suits of rank r
        for c in copies:
            if left[c]:
                left[c] -= 1
                break
        else:
            if avail is None:
                avail = unseen[:]
                for c in extra:
                    avail[c] -= 1
            # the pool held the set's naturals, so an unseen copy is left
            c = next(c for c in copies if avail[c])
            avail[c] -= 1
            extra.append(c)
    return extra


def sample_world(view: PlayerView, rng: np.random.Generator, rules: Rules | None = None) -> Game:
    """One world consistent with ``view`` (see :class:`WorldSampler`; build one to sample many)."""
    return WorldSampler(view, rules).sample(rng)
