"""The tournament director: schedules games (duplicate deals by default) and plays them in parallel.

**Duplicate deals.** A *block* is one game seed, i.e. one set of decks for every deal (and one
first dealer: the cut comes from the seed too). The block is played once per seat rotation of
one cycle of the players: in rotation ``r`` the player ``cycle[i]`` sits in seat
``(i + r) % n``. The decks and the dealer stay; the players move, so every player meets every
hand of the block from every seat, and most of the luck of the deal cancels when players are
compared within a block. The blocks take the cycles of the seat design in turn
(:mod:`shanghai_env.agents.arena.seating`), each also reflected; a *round* has one block of
each, so that every player sits in every seat, and right after every other player, equally
often (6 games for three players, 24 for four; ``n(n-1)`` for odd ``n``, ``2n(n-1)`` for even
``n``). ``games`` is rounded up to whole rounds. With ``duplicate=False`` every game gets fresh
decks and exactly ``games`` games are played, the seat orders taken in the same turn (balanced
when ``games`` is a multiple of a round).

**The order the players are listed in changes nothing.** The seat design and the agents' seeds
are laid on the players in their :func:`canonical_order` (sorted by name; the copies of one
player in the order listed), not as listed: the same players and seed play the same games,
each player on the same decks from the same seats with the same seed, in any listing. Results
and reports keep the listing (``GameResult`` is indexed by player as listed).

**Reproducibility.** Game seeds and every agent's seed derive from ``(seed, block, rotation,
player's canonical position)`` with :class:`numpy.random.SeedSequence`; workers receive only
plain data (player names, seeds) and rebuild agents themselves (spawn-safe), and results are put
back in schedule order, so a run gives the same numbers whatever ``workers`` is.

**Ray.** ``run_tournament(..., backend="ray")`` submits the same blocks as Ray tasks instead, to
a local Ray or to a cluster (``ray_address``), and gives the same results as the local workers:
the tasks receive the same plain data and play the same :func:`play_task`. Ray is imported only
then (the ``rllib`` extra installs it).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shanghai_env.actions import action_table
from shanghai_env.agents.arena.ray_address import ray_address_problem as ray_address_problem
from shanghai_env.agents.arena.runner import DEFAULT_MAX_MOVES_PER_DEAL, GameRecord, play_games
from shanghai_env.agents.arena.seating import DESIGN_NAME, SeatDesign, seat_design
from shanghai_env.agents.arena.workers import one_thread_per_worker as one_thread_per_worker
from shanghai_env.agents.arena.workers import run_in_workers
from shanghai_env.agents.base import Agent
from shanghai_env.agents.registry import check_spec, make_agent, player_labels, spec_stem
from shanghai_env.engine import Game
from shanghai_env.rules import ALL_CONTRACTS, Rules


@dataclass(frozen=True)
class TournamentConfig:
    """Who plays, how many games, on which decks."""

    players: tuple[str, ...]
    games: int = 400
    seed: int = 0
    contracts: tuple[int, ...] = ALL_CONTRACTS
    duplicate: bool = True
    max_moves_per_deal: int | None = DEFAULT_MAX_MOVES_PER_DEAL  # the rule (docs/rules.md 5.5)
    record_games: int = 0  # keep the game records of the first N games (schedule order); -1: all

    def __post_init__(self) -> None:
        players = tuple(check_spec(p) for p in self.players)
        object.__setattr__(self, "players", players)
        if not 3 <= len(players) <= 8:
            raise ValueError(f"a game seats 3 to 8 players, got {len(players)}: {', '.join(players)}")
        if not isinstance(self.games, int) or self.games < 1:
            raise ValueError(f"games must be a positive int, got {self.games!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        _ = self.rules  # raises on bad contracts or a bad max_moves_per_deal

    @property
    def num_players(self) -> int:
        """Seats per game."""
        return len(self.players)

    @property
    def rules(self) -> Rules:
        """The rule options every game of the tournament uses."""
        return Rules(
            num_players=len(self.players),
            contracts=tuple(self.contracts),
            max_moves_per_deal=self.max_moves_per_deal,
        )

    @property
    def labels(self) -> list[str]:
        """Unique display names, in the order listed
        (:func:`shanghai_env.agents.registry.player_labels`: a ``module:factory`` by its agent's
        name, a repeated name with ``#2``, ``#3``, ...)."""
        return player_labels(self.players)

    @property
    def canonical(self) -> list[int]:
        """The players (indices into ``players``) in the order the schedule seats them."""
        return canonical_order(self.players)

    @property
    def seat_design(self) -> SeatDesign:
        """Who sits where in each game of a block (:mod:`shanghai_env.agents.arena.seating`)."""
        return seat_design(self.num_players)

    @property
    def rounds(self) -> int:
        """Rounds of the seat design the games cover (without duplicate deals the last one may
        be cut short)."""
        return math.ceil(self.games / self.seat_design.games_per_round)

    @property
    def blocks(self) -> int:
        """Number of deck sets: whole rounds of blocks in duplicate mode, one per game otherwise."""
        return self.rounds * self.seat_design.blocks_per_round if self.duplicate else self.games

    @property
    def total_games(self) -> int:
        """Games actually played (whole rounds of the seat design in duplicate mode)."""
        return self.blocks * self.seat_design.games_per_block if self.duplicate else self.games

    def seating(self) -> dict[str, Any]:
        """The seat design as played, for ``summary.json`` and the report."""
        design = self.seat_design
        return {
            "design": DESIGN_NAME,
            "description": design.describe(),
            "games_per_block": design.games_per_block if self.duplicate else 1,
            "games_per_round": design.games_per_round,
            "rounds": self.rounds,
            "balanced": self.total_games % design.games_per_round == 0,
            "order": ORDER_NAME,
            "games_asked": self.games,
        }


ORDER_NAME = "players seated by their sorted names, whatever the order listed"


def canonical_order(players: Sequence[str]) -> list[int]:
    """The indices of ``players`` sorted by name (a saved model by its file name, wherever the
    file is; then the whole name), the copies of one player in the order listed.

    The schedule seats the players in this order, so that the games do not depend on the order
    they were listed in. Built from the names alone (no agent is made), the same in every process.
    """
    return sorted(range(len(players)), key=lambda i: (spec_stem(players[i]), players[i], i))


@dataclass(frozen=True)
class GameTask:
    """One scheduled game: its deck seed, who sits where, every agent's seed."""

    index: int
    block: int
    round: int  # the round of the seat design: the unit of the statistics
    rotation: int  # which rotation of the block's cycle (seats: who sits where)
    game_seed: int
    seats: tuple[int, ...]  # seats[s] = player index sitting in seat s
    agent_seeds: tuple[int, ...]  # by player index


@dataclass
class GameResult:
    """One game, indexed by player (not seat)."""

    index: int
    block: int
    round: int  # the round of the seat design: every seat and neighbour balanced within it
    rotation: int  # which rotation of the block's cycle (seats: who sat where)
    game_seed: int
    seats: tuple[int, ...]
    scores: list[int]
    deal_scores: list[list[int]]  # [deal][player]
    contracts: list[int]
    went_out: list[int]  # per deal: the player who went out, or -1
    blind: list[bool]
    capped: list[bool]
    moves: int
    seconds: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)
    record: dict[str, Any] | None = None  # the game record (shanghai_env.record), seats as played

    @property
    def winners(self) -> list[int]:
        """Players with the lowest total (ties share first)."""
        low = min(self.scores)
        return [i for i, s in enumerate(self.scores) if s == low]


def _derive(*key: int) -> int:
    return int(np.random.SeedSequence(list(key)).generate_state(1)[0])


def schedule(config: TournamentConfig) -> list[GameTask]:
    """Every game of the tournament, in a fixed order (block-major).

    The seat design places players by their position in :func:`canonical_order`; the tasks name
    them by their index as listed.
    """
    design = config.seat_design
    per_round = design.blocks_per_round
    canonical = config.canonical
    tasks: list[GameTask] = []
    if config.duplicate:
        for block in range(config.blocks):
            game_seed = _derive(config.seed, block)
            for r, seats in enumerate(design.blocks[block % per_round]):
                tasks.append(
                    _task(config, canonical, len(tasks), block, block // per_round, r, seats, game_seed)
                )
    else:
        orders = design.orders
        for g in range(config.games):
            k = g % len(orders)
            rotation = k % config.num_players
            tasks.append(
                _task(config, canonical, g, g, g // len(orders), rotation, orders[k], _derive(config.seed, g))
            )
    return tasks


def _task(
    config: TournamentConfig,
    canonical: Sequence[int],
    index: int,
    block: int,
    round_: int,
    rotation: int,
    design_seats: tuple[int, ...],
    game_seed: int,
) -> GameTask:
    """One game: ``design_seats[s]`` is the canonical position of the player in seat ``s``."""
    seats = tuple(canonical[k] for k in design_seats)
    agent_seeds = [0] * config.num_players
    for k, player in enumerate(canonical):
        agent_seeds[player] = _derive(config.seed, block, rotation, k, 1)
    return GameTask(index, block, round_, rotation, game_seed, seats, tuple(agent_seeds))


# --- playing (also in worker processes) --------------------------------------------------------

_AGENTS: dict[tuple[str, ...], list[Agent]] = {}  # per worker process: built once, reset per game
_COPIES: dict[tuple[str, ...], list[list[Agent]]] = {}  # more agents, for games played together
_ENCODERS: dict[Rules, Any] = {}


def _agents_for(players: tuple[str, ...], copy: int = 0) -> list[Agent]:
    """This process's agents for ``players``; ``copy`` k > 0: a k-th set of its own (built once)."""
    agents = _AGENTS.get(players)
    if agents is None:
        agents = _AGENTS[players] = [make_agent(p) for p in players]
    if copy == 0:
        return agents
    copies = _COPIES.setdefault(players, [])
    while len(copies) < copy:
        copies.append([make_agent(p) for p in players])
    return copies[copy - 1]


def forget_agents(players: tuple[str, ...]) -> None:
    """Drop this process's cached agents for ``players`` (e.g. a model evaluated only once)."""
    _AGENTS.pop(players, None)
    _COPIES.pop(players, None)


def play_task(config: TournamentConfig, task: GameTask) -> GameResult:
    """Play one scheduled game; the same task always gives the same result."""
    return play_tasks(config, [task])[0]


def batchable(agent: Agent) -> bool:
    """Whether one ``agent`` can sit in many games played together: it has ``act_batch`` and
    chooses deterministically (a greedy network), so its answer depends on the decision alone."""
    return hasattr(agent, "act_batch") and getattr(agent, "greedy", True)


def play_tasks(config: TournamentConfig, tasks: Sequence[GameTask]) -> list[GameResult]:
    """Play scheduled games together (:func:`.play_games`): each batchable player answers all its
    games' decisions in one call, every other player has its own agent in each game. Every game
    is the one it is when played alone (its seed, its agents' seeds)."""
    shared = _agents_for(config.players)
    rules = config.rules
    encoder = None
    if any(getattr(a, "needs_observation", False) for a in shared):
        encoder = _ENCODERS.get(rules)
        if encoder is None:
            from shanghai_env.agents.learned.players.sb3 import observation_encoder

            encoder = _ENCODERS[rules] = observation_encoder(rules)
    can_share = [batchable(a) for a in shared]
    seated: list[list[Agent]] = []
    for k, task in enumerate(tasks):
        # a player that cannot be shared has its own agent in each game (the k-th copy)
        copies = _agents_for(config.players, k) if k and not all(can_share) else shared
        own = [a if ok else mine for a, ok, mine in zip(shared, can_share, copies)]
        for agent, seed in zip(own, task.agent_seeds):
            agent.reset(seed)
        seated.append([own[i] for i in task.seats])
    start = time.perf_counter()
    played = play_games(
        [Game(rules) for _ in tasks],
        seated,
        [task.game_seed for task in tasks],
        encoder=encoder,
        table=action_table(rules),
        record=[config.record_games < 0 or task.index < config.record_games for task in tasks],
    )
    seconds = (time.perf_counter() - start) / max(1, len(tasks))  # the games' mean: they shared it
    return [_result(config, task, record, seconds) for task, record in zip(tasks, played)]


def _result(config: TournamentConfig, task: GameTask, record: GameRecord, seconds: float) -> GameResult:
    """A game's result by player, from its record by seat."""
    if record.record is not None:
        labels = config.labels
        record.record["players"] = [labels[i] for i in task.seats]
        record.record["meta"] = {
            "tournament_seed": config.seed,
            "game": task.index,
            "block": task.block,
            "round": task.round,
            "rotation": task.rotation,
        }
    n = config.num_players
    player_of_seat = task.seats
    scores = [0] * n
    for s, score in enumerate(record.scores):
        scores[player_of_seat[s]] = score
    deal_scores = []
    for row in record.deal_scores:
        by_player = [0] * n
        for s, score in enumerate(row):
            by_player[player_of_seat[s]] = score
        deal_scores.append(by_player)
    return GameResult(
        index=task.index,
        block=task.block,
        round=task.round,
        rotation=task.rotation,
        game_seed=task.game_seed,
        seats=task.seats,
        scores=scores,
        deal_scores=deal_scores,
        contracts=list(config.contracts),
        went_out=[player_of_seat[s] if s >= 0 else -1 for s in record.out_players],
        blind=record.blind,
        capped=record.capped,
        moves=record.moves,
        seconds=seconds,
        record=record.record,
    )


def _play_chunk(config: TournamentConfig, tasks: list[GameTask]) -> list[GameResult]:
    if any(batchable(a) for a in _agents_for(config.players)):
        return play_tasks(config, tasks)
    return [play_task(config, t) for t in tasks]


BACKENDS = ("processes", "ray")
RAY_MISSING = "the ray backend needs Ray, which is not installed: pip install -e '.[rllib]'"


def run_tournament(
    config: TournamentConfig,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    backend: str = "processes",
    ray_address: str | None = None,
    played: Sequence[GameResult] = (),
    on_games: Callable[[list[GameResult]], None] | None = None,
) -> list[GameResult]:
    """Play every scheduled game; ``progress(k)`` is called as ``k`` more games finish, and
    ``on_games(results)`` with each batch of them (in this process, as they finish).

    ``played``: games of this schedule played already (by an earlier sitting,
    :mod:`shanghai_env.agents.arena.stored_games`): they are kept and not played again.

    ``backend="processes"``: ``workers`` defaults to every core; 1 plays in this process.
    ``backend="ray"``: every block is a Ray task (:func:`run_on_ray`); ``workers``, if given,
    caps the tasks running at once, and ``ray_address`` names the cluster when Ray is not
    initialized yet. Results come back in schedule order, the same whatever the backend and the
    number of workers.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    tasks = _to_play(config, played)
    results: list[GameResult] = list(played)

    def take(_: int, chunk_results: list[GameResult]) -> None:
        results.extend(chunk_results)
        if on_games:
            on_games(chunk_results)
        if progress:
            progress(len(chunk_results))

    if backend == "ray":
        run_on_ray(config, tasks, take, workers, ray_address)
    elif ray_address is not None:
        raise ValueError("ray_address is for backend='ray'")
    else:
        workers = (os.cpu_count() or 1) if workers is None else workers
        chunks = _chunks(config, tasks, workers)
        if workers == 1 or len(chunks) == 1:
            for chunk in chunks:
                take(0, _play_chunk(config, chunk))
        else:
            # workers that end with this process, on Ctrl-C and when it is killed (agents/arena/workers.py)
            run_in_workers([(_play_chunk, (config, c)) for c in chunks], workers, take)
    results.sort(key=lambda r: r.index)
    return results


def _to_play(config: TournamentConfig, played: Sequence[GameResult]) -> list[GameTask]:
    """The scheduled games not among ``played`` (each of which must be one of the schedule's)."""
    tasks = schedule(config)
    done = {r.index for r in played}
    if len(done) != len(played) or not done <= set(range(len(tasks))):
        raise ValueError(f"played must hold distinct games of the {len(tasks)} scheduled, by index")
    return [t for t in tasks if t.index not in done]


BATCH_GAMES = 64  # games a worker plays together when a network sits at the table


def _chunks(config: TournamentConfig, tasks: list[GameTask], workers: int = 0) -> list[list[GameTask]]:
    """Whole blocks: one a chunk, or with ``workers`` and a player that answers many games at
    once, as many as share the games evenly among the workers, up to about BATCH_GAMES games."""
    per_chunk = config.num_players  # one block per task in duplicate mode
    if workers and any(batchable(a) for a in _agents_for(config.players)):
        blocks = math.ceil(len(tasks) / per_chunk)
        per_chunk *= max(1, min(BATCH_GAMES // per_chunk, math.ceil(blocks / workers)))
    return [tasks[i : i + per_chunk] for i in range(0, len(tasks), per_chunk)]


# --- Ray: blocks as Ray tasks, on this machine or a cluster ---------------------------------------

_RUN: list[str] = [""]  # in a Ray worker: the run whose agents _AGENTS holds


def _play_chunk_of_run(run: str, config: TournamentConfig, tasks: list[GameTask]) -> list[GameResult]:
    """A Ray task: one block. Ray reuses its worker processes from run to run, so the agents built
    for an earlier run (a model file since rewritten, say) are dropped when a new run starts."""
    if _RUN[0] != run:
        _AGENTS.clear()
        _COPIES.clear()
        _RUN[0] = run
    return _play_chunk(config, tasks)


def start_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to the Ray cluster at ``address`` (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``), or
    start a local Ray (``None`` or ``local``; ``num_cpus`` for it); True if this call started it.

    Nothing happens when Ray is already initialized. Raises ImportError (naming the ``rllib``
    extra) without Ray, and Ray's own errors when the cluster cannot be joined.
    """
    try:
        import ray
    except ImportError:
        raise ImportError(RAY_MISSING) from None
    if ray.is_initialized():
        return False
    if address in (None, "local"):
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return True


def run_on_ray(
    config: TournamentConfig,
    tasks: Sequence[GameTask],
    take: Callable[[int, list[GameResult]], None],
    workers: int | None = None,
    ray_address: str | None = None,
) -> None:
    """Play the blocks of ``tasks`` as Ray tasks (one CPU each); ``take(0, results)`` is called
    in this process as each finishes (:func:`run_tournament` orders them).

    Uses the running Ray if there is one, else joins ``ray_address`` or starts a local Ray
    (and shuts down what it started). ``workers`` caps the tasks in flight (default: all
    submitted at once, Ray runs as many as the cluster has CPUs). Every node must be able to
    import ``shanghai_env`` and open the players (the same paths for saved models).
    """
    import uuid

    started = start_ray(ray_address)
    import ray

    try:
        remote = ray.remote(num_cpus=1)(_play_chunk_of_run)
        run = uuid.uuid4().hex
        config_ref = ray.put(config)
        chunks = _chunks(config, list(tasks))
        limit = workers or len(chunks)
        waiting = list(reversed(chunks))
        pending: list[Any] = []
        try:
            while waiting or pending:
                while waiting and len(pending) < limit:
                    pending.append(remote.remote(run, config_ref, waiting.pop()))
                done, pending = ray.wait(pending, num_returns=1)
                for chunk_results in ray.get(done):
                    take(0, chunk_results)
        except BaseException:  # Ctrl-C or a failed game: play no more
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()


def games_per_block(results: Sequence[GameResult]) -> dict[int, list[GameResult]]:
    """Results grouped by block (deck set)."""
    blocks: dict[int, list[GameResult]] = {}
    for r in results:
        blocks.setdefault(r.block, []).append(r)
    return blocks


def games_per_round(results: Sequence[GameResult]) -> dict[int, list[GameResult]]:
    """Results grouped by round of the seat design (every seat and neighbour balanced in each)."""
    rounds: dict[int, list[GameResult]] = {}
    for r in results:
        rounds.setdefault(r.round, []).append(r)
    return rounds
