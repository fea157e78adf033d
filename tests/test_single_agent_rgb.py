"""The single-agent view draws the table as pixels (``render_mode="rgb_array"``): what
Stable-Baselines3's ``make_vec_env`` asks for by default and Gymnasium's ``RecordVideo`` needs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import shanghai_env
from shanghai_env import SingleAgentEnv

ROOT = Path(__file__).resolve().parents[1]


def test_rgb_array_frames_are_the_table_as_pixels() -> None:
    pytest.importorskip("PIL")
    env = SingleAgentEnv(num_players=3, contracts=(1,), render_mode="rgb_array")
    env.reset(seed=3)
    frame = env.render()
    assert isinstance(frame, np.ndarray)
    assert frame.dtype == np.uint8 and frame.shape == (142 + 156 * 3, 1000, 3)
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 10  # a drawing, not a blank
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert env.render().shape == frame.shape  # type: ignore[union-attr]


def test_rgb_array_is_among_the_render_modes() -> None:
    assert "rgb_array" in SingleAgentEnv.metadata["render_modes"]
    with pytest.raises(ValueError, match="render_mode"):
        SingleAgentEnv(render_mode="human")


def test_stable_baselines3_make_vec_env_by_its_id() -> None:
    """make_vec_env passes render_mode="rgb_array" unless told otherwise."""
    pytest.importorskip("PIL")
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    vec = env_util.make_vec_env(shanghai_env.GYM_ENV_ID, n_envs=1, seed=0, env_kwargs={"contracts": (1,)})
    try:
        obs = vec.reset()
        assert obs.shape[0] == 1
        frame = vec.render()
        assert frame is not None and frame.ndim == 3 and frame.shape[2] == 3
    finally:
        vec.close()


def test_record_video(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    pytest.importorskip("moviepy")
    env = gymnasium.make(shanghai_env.GYM_ENV_ID, contracts=(1,), max_steps=5, render_mode="rgb_array")
    env = gymnasium.wrappers.RecordVideo(
        env, str(tmp_path), episode_trigger=lambda _: True, disable_logger=True
    )
    env.reset(seed=0)
    done = False
    while not done:
        mask = env.unwrapped.action_masks()  # type: ignore[attr-defined]
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(mask)[0]))
        done = terminated or truncated
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def test_without_pillow_rgb_array_names_the_extra() -> None:
    """The env is made (make_vec_env makes every env this way); drawing names the extra."""
    code = (
        "import sys\n"
        "sys.modules['PIL'] = None\n"
        "from shanghai_env import SingleAgentEnv\n"
        "env = SingleAgentEnv(contracts=(1,), render_mode='rgb_array')\n"
        "env.reset(seed=0)\n"
        "try:\n"
        "    env.render()\n"
        "except Exception as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("DependencyNotInstalled")
    assert "'draw' extra" in run.stdout and "shanghai-env[draw]" in run.stdout
