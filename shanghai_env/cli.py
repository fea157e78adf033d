"""What the command lines share: checked option values, options given once, usable output folders,
and a quiet end on Ctrl-C.

A bad command line ends with one line on stderr saying what is wrong and what is allowed, and
exit status 2, before any work starts; Ctrl-C ends a run with "interrupted" and status 130. The
helpers here are plain ``argparse`` pieces:

- :func:`int_in` and :func:`number_in` build ``type=`` functions that check a range;
- :func:`options_once` makes every option that takes a value refuse to be given twice (the second
  value would silently win), and records which options the command line gave (:func:`given`);
- :func:`prepare_output` creates an output folder and says why it cannot take outputs,
  :func:`output_file_problem` says why a file cannot be written, :func:`writes_over` whether an
  output would write over an input, and :func:`write_atomically` writes a file whole or not at all;
- :func:`run` calls a ``main`` and turns ``KeyboardInterrupt`` into a one-line exit;
- :func:`require_extra` ends a command whose optional dependencies are missing with one line naming
  the extra to install.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib.util
import math
import os
import re
import secrets
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

INTERRUPTED = 130  # the shell's status for a program ended by SIGINT
_GIVEN = "_given_options"


def int_in(low: int, high: int | None = None, what: str = "an integer") -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``low..high`` (no upper bound when ``high`` is None)."""
    allowed = f"{what} {low}..{high}" if high is not None else f"{what} >= {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}")
        return value

    return parse


def positive_ints(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated positive integers (layer sizes: ``128,128``)."""
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def number_in(
    low: float, high: float | None = None, *, low_open: bool = False, what: str = "a number"
) -> Callable[[str], float]:
    """An argparse ``type``: a finite float ``>= low`` (``> low`` if ``low_open``), ``<= high``."""
    bounds = f"> {low:g}" if low_open else f">= {low:g}"
    allowed = f"{what} {bounds}" + (f" and <= {high:g}" if high is not None else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}") from None
        bad = not math.isfinite(value) or value < low or (low_open and value == low)
        if bad or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}")
        return value

    return parse


class StoreOnce(argparse.Action):
    """``store``, except that an option given twice is a usage error; remembers what was given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = namespace.__dict__.setdefault(_GIVEN, set())
        if self.dest in seen:
            names = "/".join(self.option_strings)
            parser.error(f"{names} given twice; give it once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """Every command's argument parser: a plain option given twice is an error (:class:`StoreOnce`),
    and a usage error is one line, ``PROG: error: WHAT (see PROG --help)``, then exit status 2
    (argparse would print the whole usage first). Sub-commands' parsers are Parsers too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def given(args: argparse.Namespace) -> set[str]:
    """The ``dest`` names of the :class:`StoreOnce` options the command line gave."""
    return set(getattr(args, _GIVEN, set()))


def prepare_output(path: str, files: Sequence[str] = ()) -> str | None:
    """Create the output folder ``path`` if missing and check that files can be written in it.

    Returns why it cannot take outputs named ``files`` (a sentence), or None when it can.
    """
    if not path:
        return "the output folder is an empty name"
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{path!r} exists and is not a folder"
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        return f"cannot write in the folder {path!r}: {err.strerror or err}"
    for name in files:
        if os.path.isdir(os.path.join(path, name)):
            return f"{os.path.join(path, name)!r} is a folder, where an output file goes"
    return None


def output_file_problem(path: str) -> str | None:
    """Why a file cannot be written at ``path`` (missing folders on the way are created when it is
    written); None if it can. Creates nothing."""
    if not path:
        return "the file name is empty"
    if os.path.isdir(path):
        return f"{path!r} is a folder; name a file"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"{path!r} is not writable"
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return f"{path!r} cannot be written: {folder!r} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{path!r} cannot be written: the folder {folder!r} is not writable"
    return None


def writes_over(path: str, inputs: Sequence[str]) -> str | None:
    """Why writing ``path`` would destroy one of the files ``inputs`` (the same path, or another
    name of the same file); None if it would not."""
    for source in inputs:
        same = os.path.abspath(path) == os.path.abspath(source)
        with contextlib.suppress(OSError):  # a missing file is no other file's name
            same = same or os.path.samefile(path, source)
        if same:
            return f"{path!r} is the input {source!r}: writing it would destroy the input; name another file"
    return None


def write_atomically(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to the file ``path`` whole or not at all, creating missing
    folders on the way.

    The data goes to a new file in the same folder that then replaces ``path`` (``os.replace``),
    so a program stopped midway leaves the old file or none, never a half-written one that could
    pass for complete. A path that is a device or a pipe (``/dev/stdout``) is written in place.
    Raises OSError.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if os.path.exists(path) and not (os.path.isfile(path) or os.path.isdir(path)):
        # a device or a pipe (links followed): nothing to replace
        with open(path, "wb") as stream:
            stream.write(raw)
        return
    target = os.path.realpath(path) if os.path.islink(path) else os.fspath(path)  # replace the file linked
    folder, name = os.path.split(os.path.abspath(target))
    above = folder
    while not os.path.lexists(above):
        above = os.path.dirname(above)
    if not os.path.isdir(above):  # makedirs would say only "File exists"
        raise NotADirectoryError(errno.ENOTDIR, f"{above!r} is a file, not a folder")
    os.makedirs(folder, exist_ok=True)
    while True:  # a fresh name; created with 0o666 so that the umask gives the usual permissions
        temp = os.path.join(folder, f".{name[:200]}.{secrets.token_hex(4)}.part")  # within NAME_MAX
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(raw)
        with contextlib.suppress(OSError):  # keep the permissions of the file replaced
            os.chmod(temp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def plain(doc: str | None) -> str:
    """A docstring as a terminal shows it: without reST's markup (``x``, :mod:`.x`)."""
    text = re.sub(r":\w+:`~?\.?([^`]+)`", r"\1", (doc or "").strip())
    return text.replace("``", "")


def run(main: Callable[[], object]) -> NoReturn:
    """Run a program's ``main``: its int result is the exit status (anything else: 0); Ctrl-C
    ends it with one line on stderr and status 130, not a traceback."""
    try:
        result = main()
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    except BrokenPipeError:  # the reader went away (``| head``): nothing more to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit's flush
        sys.exit(1)
    sys.exit(result if isinstance(result, int) and not isinstance(result, bool) else 0)


def extra_hint(extra: str) -> str:
    """The install command for an extra; right for a wheel and for an editable install alike."""
    return f'pip install "shanghai-env[{extra}]"'


def missing_modules(modules: Sequence[str]) -> list[str]:
    """The top-level ``modules`` that cannot be imported (found without importing them)."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # ValueError: a module in sys.modules without a spec
            found = False
        if not found:
            missing.append(name)
    return missing


# The modules each extra of pyproject.toml installs, by import name (torch: installed first, or
# pulled in by stable-baselines3); tests/test_cli_extras.py keeps this in step with pyproject.toml.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "train": (
        "torch",
        "stable_baselines3",
        "sb3_contrib",
        "tensorboard",
        "tqdm",
        "rich",
        "openskill",
        "scipy",
        "matplotlib",
    ),
    "eval": ("openskill", "scipy", "matplotlib", "tqdm", "rich"),
    "rllib": ("ray", "torch", "stable_baselines3", "sb3_contrib", "openskill", "scipy", "matplotlib"),
}


def require_extra(command: str, extra: str, modules: Sequence[str] | None = None) -> None:
    """Exit with status 2 and one line on stderr if any of ``modules`` (default: those of the
    ``extra``, :data:`EXTRA_MODULES`) is not installed; call it before the command imports them."""
    missing = missing_modules(EXTRA_MODULES[extra] if modules is None else modules)
    if missing:
        print(
            f"{command} needs the {extra!r} extra (not installed: {', '.join(missing)}): {extra_hint(extra)}",
            file=sys.stderr,
        )
        sys.exit(2)
