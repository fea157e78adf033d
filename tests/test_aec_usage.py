"""The usage example of docs/usage.md (copied into README.md) runs as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent / "docs" / "usage.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_canonical_loop_runs() -> None:
    code = python_blocks()[0]
    assert "env.agent_iter()" in code and 'observation["action_mask"]' in code
    namespace: dict[str, Any] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), namespace)
    env = namespace["env"]
    assert env.agents == []  # every agent was terminated or truncated and stepped out
    assert "final scores:" in out.getvalue()


def test_registry_and_names_examples_run() -> None:
    blocks = python_blocks()
    namespace: dict[str, Any] = {}
    exec(compile(blocks[1], str(DOC), "exec"), namespace)
    env = namespace["env"]
    env.reset(seed=0)
    exec(compile(blocks[2], str(DOC), "exec"), namespace)
    assert env.unwrapped.action_name(37) == "discard 7H"
