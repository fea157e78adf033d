"""Bad input is refused with a clear error and changes nothing: malformed engine moves, malformed
env actions (also under ``python -O``), unknown agents, use after the episode; infos keep one
set of keys; importing works without PettingZoo's registry."""

from __future__ import annotations

import ast
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pettingzoo
import pytest
from helpers import play, quick_game, snapshot

import shanghai_env
from shanghai_env import Game, Move, MoveKind, Phase
from shanghai_env.render import render_text
from shanghai_env.single_agent import SingleAgentEnv

ROOT = Path(__file__).resolve().parent.parent

# --- the engine ------------------------------------------------------------------------------


def malformed(move: Move) -> list[Any]:
    """Variants of a legal move that compare equal to it (or nearly) but are not plain ints."""
    out: list[Any] = [tuple(move), list(move), move.name.encode()]
    for i, value in enumerate(move):
        for bad in (float(value), np.float64(value), str(value), None, [value]):
            fields = list(move)
            fields[i] = bad
            out.append(Move(*fields))
        if value in (0, 1):
            fields = list(move)
            fields[i] = bool(value)
            out.append(Move(*fields))
    return out


def test_malformed_moves_of_every_kind_change_nothing() -> None:
    game = Game(num_players=4, contracts=tuple(range(1, 11)), exact_contract_melds=False)
    game.reset(3)
    rng = random.Random(3)
    eager = {MoveKind.MELD, MoveKind.LAYOFF, MoveKind.SWAP, MoveKind.FINISH, MoveKind.BUY, MoveKind.TAKE}
    kinds: set[MoveKind] = set()
    checked = 0
    while not game.game_over and (len(kinds) < len(MoveKind) or checked < 300):
        legal = game.legal_moves()
        by_kind = {m.kind: m for m in legal}
        before = snapshot(game)
        for move in by_kind.values():
            for bad in malformed(move):
                with pytest.raises(TypeError):
                    game.apply(bad)
                with pytest.raises(TypeError):
                    game.is_legal(bad)
                checked += 1
            assert snapshot(game) == before
        kinds |= set(by_kind)
        pool = [m for m in legal if m.kind in eager]
        game.apply(rng.choice(pool if pool and rng.random() < 0.8 else legal))
        game.validate()
    assert kinds == set(MoveKind)


def test_float_discard_and_float_meld_are_refused_before_anything_changes() -> None:
    game = quick_game()
    play(game, "draw; pass; pass; pass")
    before = snapshot(game)
    legal_discard = next(m for m in game.legal_moves() if m.kind == MoveKind.DISCARD)
    with pytest.raises(TypeError, match="card"):
        game.apply(Move(MoveKind.DISCARD, float(legal_discard.card)))
    legal_meld = next(m for m in game.legal_moves() if m.kind == MoveKind.MELD)
    with pytest.raises(TypeError, match="meld"):
        game.apply(legal_meld._replace(meld=float(legal_meld.meld)))
    assert snapshot(game) == before and game.phase == Phase.PLAY and game.table[0] == []
    game.apply(legal_meld)  # the well-formed move still plays
    assert game.phase == Phase.GOING_DOWN


def test_numpy_fields_and_int_kinds_are_the_same_move() -> None:
    for convert in (np.int64, np.int16, int):
        game = quick_game()
        twin = quick_game()
        play(game, "draw; pass; pass; pass")
        play(twin, "draw; pass; pass; pass")
        move = next(m for m in game.legal_moves() if m.kind == MoveKind.MELD)
        game.apply(Move(int(move.kind), *(convert(v) for v in move[1:])))  # type: ignore[arg-type]
        twin.apply(move)
        assert snapshot(game) == snapshot(twin)
    with pytest.raises(ValueError, match="kind"):
        quick_game().apply(Move(99))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="kind"):
        quick_game().apply(Move(1.0))  # type: ignore[arg-type]


# --- env actions ------------------------------------------------------------------------------

BAD_ENV_ACTIONS = [
    (True, TypeError),
    (False, TypeError),
    (np.True_, TypeError),
    (5.9, TypeError),
    (1.0, TypeError),
    ("1", TypeError),
    (b"1", TypeError),
    ([1, 2], TypeError),
    (np.array([1, 2]), TypeError),
    (np.array([1]), TypeError),
    ({}, TypeError),
    (-1, ValueError),
    (np.int64(-1), ValueError),
    (10**6, ValueError),
    (None, ValueError),  # a live agent must act
]


@pytest.mark.parametrize("make", [shanghai_env.env, shanghai_env.raw_env])
@pytest.mark.parametrize(("action", "error"), BAD_ENV_ACTIONS, ids=[repr(a) for a, _ in BAD_ENV_ACTIONS])
def test_bad_env_actions_are_refused_and_change_nothing(make: Any, action: Any, error: Any) -> None:
    env = make(num_players=4, contracts=(1,))
    env.reset(seed=2)
    env.last()
    env.step(env.unwrapped.action_id("draw"))
    agent = env.agent_selection
    before = (
        agent,
        env.observe(agent)["observation"].tobytes(),
        render_text(env.unwrapped.game),
        env.rewards,
    )
    with pytest.raises(error, match=r"action|must act"):
        env.step(action)
    assert (
        agent,
        env.observe(agent)["observation"].tobytes(),
        render_text(env.unwrapped.game),
        env.rewards,
    ) == before
    assert not any(env.terminations.values())
    obs = env.last()[0]
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))  # still playable


def test_checks_hold_under_python_O() -> None:
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import shanghai_env
        from shanghai_env import Move, MoveKind
        from shanghai_env.single_agent import SingleAgentEnv
        assert False, "asserts must be off"  # stripped by -O
        """
    ) + textwrap.dedent(
        """
        if sys.flags.optimize < 1:
            raise SystemExit("not optimized")
        def refused(call, error):
            try:
                call()
            except error:
                return
            raise SystemExit(f"{call} was not refused with {error.__name__}")
        for make in (shanghai_env.env, shanghai_env.raw_env):
            env = make(num_players=4, contracts=(1,))
            env.reset(seed=0)
            env.last()
            n = env.unwrapped.action_table.size
            for bad, error in ((-1, ValueError), (n, ValueError), (2.5, TypeError), (True, TypeError),
                               (None, ValueError), (np.array([0, 1]), TypeError)):
                refused(lambda: env.step(bad), error)
            assert_steps = env.unwrapped.num_steps
            if assert_steps != 0:
                raise SystemExit("a refused action was played")
        game = shanghai_env.Game(num_players=4)
        game.reset(0)
        game.apply("draw")
        while game.phase.name == "BUY":
            game.apply("pass")
        card = next(m.card for m in game.legal_moves() if m.kind == MoveKind.DISCARD)
        refused(lambda: game.apply(Move(MoveKind.DISCARD, float(card))), TypeError)
        env = SingleAgentEnv()
        env.reset(seed=0)
        for bad, error in ((-1, ValueError), (2.5, TypeError), ([0, 1], TypeError)):
            refused(lambda: env.step(bad), error)
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-O", "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize(
    "module",
    ["aec", "fast_wrappers", "single_agent", "checks", "engine", "moves", "actions", "rules", "decision"],
)
def test_no_assert_statements_check_input(module: str) -> None:
    tree = ast.parse((ROOT / "shanghai_env" / f"{module}.py").read_text(encoding="utf-8"))
    asserts = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    assert asserts == [], f"shanghai_env/{module}.py uses assert at lines {asserts}"


# --- agents and the episode's end ---------------------------------------------------------------


@pytest.mark.parametrize("make", [shanghai_env.env, shanghai_env.raw_env])
def test_after_the_episode_and_unknown_agents(make: Any) -> None:
    env = make(num_players=3, contracts=(1,), max_moves_per_deal=20)
    env.reset(seed=1)
    for name in ("player_9", "nobody", 0, None):
        for call in (env.observe, env.action_space, env.observation_space):
            with pytest.raises(ValueError, match="player_0, player_1, player_2"):
                call(name)
    for _agent in env.agent_iter():
        obs, _r, term, trunc, _info = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.agents == [] and env.unwrapped.game.game_over
    with pytest.raises(RuntimeError, match=r"episode is over.*reset\(\)"):
        env.last()
    with pytest.raises(RuntimeError, match=r"episode is over.*reset\(\)"):
        env.step(None)
    with pytest.raises(RuntimeError, match=r"episode is over.*reset\(\)"):
        env.step(0)
    env.reset(seed=2)
    assert env.last()[0]["action_mask"].any()


# --- infos -----------------------------------------------------------------------------------


def signature(info: dict[str, Any]) -> dict[str, Any]:
    """Each key's type and, for sequences, length (what a buffer that stacks infos needs)."""
    return {k: (type(v).__name__, len(v) if hasattr(v, "__len__") else None) for k, v in info.items()}


@pytest.mark.parametrize("make", [shanghai_env.env, shanghai_env.raw_env])
def test_aec_infos_keep_their_keys_types_and_lengths(make: Any) -> None:
    env = make(num_players=4, contracts=(1, 2), max_moves_per_deal=300)
    env.reset(seed=4)
    rng = random.Random(4)
    first = signature(env.infos["player_0"])
    assert set(first) == {
        "action_mask",
        "game_scores",
        "deals_played",
        "deal_scores",
        "capped_deals",
        "winners",
    }
    assert env.infos["player_0"]["deal_scores"] == (0, 0, 0, 0) == env.infos["player_0"]["winners"]
    seen = []
    for _agent in env.agent_iter():
        obs, _r, term, trunc, info = env.last()
        seen.append(info)
        for other in env.infos.values():
            assert signature(other) == first
        env.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    final = seen[-1]
    assert sum(final["winners"]) >= 1 and set(final["winners"]) <= {0, 1}
    assert final["deals_played"] == 2 and any(final["deal_scores"])
    # what a replay buffer does: stack every key into one numeric array
    for key in first:
        stacked = np.asarray([info[key] for info in seen])
        assert stacked.dtype != object and stacked.shape[0] == len(seen)
        assert not np.isnan(stacked.astype(float)).any()


def test_single_agent_infos_keep_their_keys_types_and_lengths() -> None:
    infos = []
    for kwargs, illegal_at in (({}, None), ({"max_steps": 15}, None), ({}, 5)):
        env = SingleAgentEnv(contracts=(1, 2), max_moves_per_deal=300, **kwargs)
        _obs, info = env.reset(seed=6)
        infos.append(info)
        done, step = False, 0
        while not done:
            mask = env.action_masks()
            action = int(np.flatnonzero(~mask if step == illegal_at else mask)[0])
            *_, terminated, truncated, info = env.step(action)
            infos.append(info)
            done = terminated or truncated
            step += 1
    first = signature(infos[0])
    assert all(signature(info) == first for info in infos)
    assert any(info["illegal_action"] for info in infos) and any(info["deals_played"] == 2 for info in infos)
    for key in first:
        stacked = np.asarray([info[key] for info in infos])
        assert stacked.dtype != object and not np.isnan(stacked.astype(float)).any()


# --- PettingZoo before its registry (1.24 to 1.26) ---------------------------------------------


def test_registration_is_skipped_without_pettingzoos_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(pettingzoo, "register", raising=False)
    shanghai_env.register()  # nothing to register with, no error
    script = (
        "import pettingzoo\n"
        "for name in ('register', 'aec_registry', 'make'):\n"
        "    vars(pettingzoo).pop(name, None)\n"
        "import shanghai_env\n"
        "env = shanghai_env.env()\n"
        "env.reset(seed=0)\n"
        "print(env.agent_selection)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("player_")
