"""The README's Python examples run as written, and its AEC loop is the one docs/usage.md shows;
its commands after the demo are the demo's own."""

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


def test_readme_vector_env_example_runs() -> None:
    code = python_blocks(ROOT / "README.md")[1]
    assert "shanghai_env.vector_env(" in code and "venv.step(actions)" in code
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    venv, obs, mask, rewards = (namespace[k] for k in ("venv", "obs", "mask", "rewards"))
    assert obs.shape == (64, venv.observation_length) and mask.shape == (64, venv.num_actions)
    assert all(mask[i, ids].all() and mask[i].sum() == len(ids) for i, ids in enumerate(venv.legal_actions))
    assert rewards.shape == (64, 4)


VENV = "python3 -m venv .venv && . .venv/bin/activate && "
CPU_TORCH = "python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


def setup_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Setup: two commands", 1)[1].split("\n## ", 1)[0]


def setup_commands() -> list[str]:
    """The commands of the README's setup block (its comment lines left out)."""
    match = re.search(r"```bash\n(.*?)```", setup_section(), flags=re.S)
    assert match, "the setup section has no bash block"
    return [line for line in match.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_the_setup_commands_make_a_virtual_environment_with_the_cpu_build_of_torch() -> None:
    """Two one-line commands that work as written where ``python`` does not exist and the system's
    Python refuses ``pip install`` (externally managed, as on Debian and Ubuntu): each makes and
    enters a virtual environment first, then installs PyTorch's CPU build from PyTorch's own index
    (the default index serves the CUDA build on Linux)."""
    train, test = setup_commands()
    for command in (train, test):
        assert command.startswith(VENV), command
        steps = command[len(VENV) :].split(" && ")
        assert steps[0] == CPU_TORCH, command
        assert all(step.startswith("python ") for step in steps), command  # the venv's python only
    assert train.endswith(' && python -m pip install -e ".[train,eval,play]" && python train.py')
    assert test.endswith(' && python -m pip install -e ".[dev,train,eval,play]" && python -m pytest -n 2')


def ci_lines() -> list[str]:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def test_the_test_command_installs_and_runs_what_ci_does() -> None:
    """The README's test command is .ci/run's environment and test run, step for step, with one
    difference: .ci/run installs the pinned torch from the package index pip is configured with
    (on the machines CI runs on that index carries the CPU build, and download.pytorch.org may
    not be reachable), while the README names PyTorch's CPU index, which a user's machine needs
    to get the CPU build."""
    steps = setup_commands()[1].split(" && ")
    ci = [line.replace(" -q ", " ") for line in ci_lines()]
    assert steps[0] in ci and steps[1] in ci  # python3 -m venv .venv, . .venv/bin/activate
    assert steps[2].removesuffix(" --index-url https://download.pytorch.org/whl/cpu") in ci  # the pin
    assert steps[3] in ci  # the project with the same extras
    assert any(line.endswith(f"; {steps[4]}") for line in ci)  # python -m pytest -n 2
    assert ci.index(steps[0]) < ci.index(steps[1]) < ci.index(steps[3])


def test_the_readme_says_what_ci_adds_to_the_test_command() -> None:
    """CI installs more extras and runs lint and type checks: the README names each, and does not
    call the test command exactly what CI runs."""
    section = setup_section()
    assert "exactly what CI runs" not in section
    test = setup_commands()[1]
    installed = set(re.search(r'-e "\.\[([^\]]+)\]"', test).group(1).split(","))  # type: ignore[union-attr]
    ci_extras = {
        extra
        for extras in re.findall(r'-e "\.\[([^\]]+)\]"', "\n".join(ci_lines()))
        for extra in extras.split(",")
    }
    for extra in sorted(ci_extras - installed):
        assert f"`{extra}`" in section, extra
    for check in ("ruff check", "ruff format --check", "python .ci/typecheck.py"):
        assert check in " ".join(ci_lines()), check
        assert check in " ".join(section.split()), check


def test_the_train_and_evaluate_commands_run_after_the_demo() -> None:
    """After ``python train.py`` (the demo, in runs/demo) the README's commands run as written: its
    training is the demo's command, which finds the run finished instead of refusing a folder that
    holds a run with other options, and the evaluation and the game are what the demo suggests."""
    import shlex

    from shanghai_env.agents.learned.train import cli

    section = (ROOT / "README.md").read_text(encoding="utf-8").split("**Train and evaluate**", 1)[1]
    match = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert match, "the Train and evaluate paragraph has no bash block"
    commands = [line.split("  #")[0].strip() for line in match.group(1).splitlines() if line.strip()]
    train = [c for c in commands if c.startswith("shanghai-train")]
    assert len(train) == 1 and shlex.split(train[0]) == ["shanghai-train", *cli.DEMO]
    evaluation = cli.DEMO_EVALUATION.replace("python evaluate.py", "shanghai-evaluate")
    assert evaluation in commands and cli.DEMO_PLAY in commands
    assert "--games 1000" in cli.DEMO_EVALUATION and "runs/demo/model.pt" in cli.DEMO_PLAY
