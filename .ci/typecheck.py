"""Type-check the package as it is installed: ``shanghai_env`` and ``agents/`` as ``shanghai_env.agents``.

mypy maps a file to a module by its folder, and knows nothing of setuptools' ``package-dir``, so
plain ``mypy`` would check ``agents/`` (if at all) as a top-level package ``agents`` whose imports of
``shanghai_env.agents`` it cannot follow. This names every file under ``agents/`` with its installed
module name, then runs mypy with the ``[tool.mypy]`` settings of pyproject.toml. Arguments are passed
to mypy (e.g. ``--no-incremental``). Exit status as mypy's: 0 clean, 1 errors, 2 a blocking error.

    python .ci/typecheck.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]
# the same mapping as [tool.setuptools.package-dir] in pyproject.toml
MAPPED = {"agents": "shanghai_env.agents"}


def mapped_sources() -> list[BuildSource]:
    """Every module under the mapped folders, named as installed."""
    out = []
    for folder, package in MAPPED.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append(BuildSource(str(path), ".".join((package, *parts))))
    return out


def main(argv: list[str]) -> int:
    os.chdir(ROOT)  # the config's paths are relative to the repository
    sources, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), *argv])
    mapped = [ROOT / folder for folder in MAPPED]
    sources = [
        s for s in sources if not (s.path and any(Path(s.path).resolve().is_relative_to(m) for m in mapped))
    ]
    sources += mapped_sources()
    try:
        messages = build.build(sources, options).errors
    except CompileError as err:
        print("\n".join(err.messages))
        return 2
    for line in messages:
        print(line)
    errors = sum(": error:" in line for line in messages)
    if errors:
        print(f"Found {errors} errors ({len(sources)} source files)")
        return 1
    print(f"Success: no issues found in {len(sources)} source files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
