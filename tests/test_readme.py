"""The README's Python examples run as written, and its AEC loop is the one docs/usage.md shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def test_readme_loop_is_the_documented_loop_and_runs() -> None:
    readme = python_blocks(ROOT / "README.md")
    assert readme[0] == python_blocks(ROOT / "docs" / "usage.md")[0]
    namespace: dict[str, Any] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme[0], "README.md", "exec"), namespace)
    assert namespace["env"].agents == []  # the game ran to its end
    assert "final scores:" in out.getvalue()


def test_readme_single_agent_example_runs() -> None:
    code = python_blocks(ROOT / "README.md")[1]
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    env = namespace["env"]
    mask = env.action_masks()
    assert namespace["observation"].shape == env.observation_space.shape
    assert mask.any()
    _, _, terminated, truncated, _ = env.step(int(mask.nonzero()[0][0]))
    assert isinstance(terminated, bool) and isinstance(truncated, bool)
