"""The one training loop: any method, the same run folder, checkpoints, evaluations and curve.

:func:`train` runs or resumes a run: docs/training.md, section "The run".
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import torch

from shanghai_env.agents.learned.nets.facts import describe_facts
from shanghai_env.agents.learned.players.policy import not_finite
from shanghai_env.agents.learned.train.evaluation import describe, evaluate_all
from shanghai_env.agents.learned.train.methods import method_class
from shanghai_env.agents.learned.train.run import Run, RunConfig, plot_curve, replaced
from shanghai_env.cli import write_atomically


def pick_device(name: str) -> torch.device:
    """``auto``: the GPU when there is one, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is available here; use auto or cpu")
    return torch.device(name)


_BARS: list[Any] = []  # the progress bar in use: messages go above it, not into its line


def _say(config: RunConfig, text: str) -> None:
    if not config.progress:
        return
    if _BARS:
        _BARS[-1].write(text)
    else:
        print(text, flush=True)


def _tell(config: RunConfig, text: str) -> None:
    """What a stopped run must say (how it goes on) even with ``--no-progress``: on stderr then."""
    if config.progress:
        _say(config, text)
    else:
        print(text, file=sys.stderr, flush=True)


def train(config: RunConfig, command: str = "") -> dict[str, Any]:
    """Train (or resume) the run ``config`` describes; returns the last evaluation row.
    ValueError (nothing written) for a folder in use, with other options, or a bad checkpoint;
    KeyboardInterrupt after Ctrl-C (the checkpoint saved)."""
    torch.set_num_threads(config.threads)  # one thread per process unless asked: see docs/training.md
    device = pick_device(config.device)
    training = Training(config, device, command)
    try:
        return training.run()
    finally:
        training.folder.close()
        _release(training.method)


def _release(method: Any) -> None:
    """What a method holds beyond the process (rllib: Ray), let go of when it has a ``close``."""
    close = getattr(method, "close", None)
    if close is not None:
        close()


class Training:
    """One session of a run: the method, its counters and schedule, and the run folder."""

    def __init__(self, config: RunConfig, device: torch.device, command: str) -> None:
        self.config, self.device, self.command = config, device, command
        options = asdict(method_class(config.method).Options())
        self.folder = Run(config, options)  # locked from here on
        self.env_steps, self.train_seconds = 0, 0.0
        self.last_eval: dict[str, Any] = {}
        # the starting player is evaluated first (a schedule due at 0); 0 evaluations: none
        self.next_eval: int | None = config.eval_every or None
        if config.eval_every and config.eval_games:
            self.next_eval = 0
        self.next_ckpt = config.checkpoint_every
        self.whole = True  # the method's state is that of a whole update (a checkpoint may be made)
        try:
            resumed = self.folder.resumes()
            self.method = method_class(config.method)()
            with _children_ignore_ctrl_c():
                self.method.setup(config, device)
                if resumed:
                    self._resume()
            if not resumed:
                self.folder.start_fresh()
        except BaseException:
            self.folder.close(discard=not os.path.exists(self.folder.path("config.json")))
            _release(getattr(self, "method", None))
            raise
        self.player_file = getattr(self.method, "player_file", "model.pt")  # sb3: .zip, scorer: .scorer
        # whether an update has trained on any decision (dmc trains only on deals that ended);
        # a resumed run may have before
        self.learned = resumed

    def _resume(self) -> None:
        config, folder = self.config, self.folder
        ckpt = folder.load_checkpoint(self.device)
        try:
            self.method.load_state_dict(ckpt["method"])
        except (KeyError, TypeError, ValueError, RuntimeError, EOFError) as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
            raise ValueError(
                f"{folder.path('checkpoint.pt')} does not fit this run's {config.method} ({first}); "
                f"use the matching options, or delete it and {folder.path('checkpoint.json')} to start over"
            ) from None
        self.env_steps, self.train_seconds = int(ckpt["env_steps"]), float(ckpt["train_seconds"])
        folder.wall_before = float(ckpt["wall_seconds"])
        self.next_eval, self.next_ckpt = _resumed_schedule(
            config, self.env_steps, ckpt.get("next_eval"), int(ckpt["next_ckpt"])
        )
        self.last_eval = dict(ckpt.get("last_eval", {}))
        folder.truncate_logs(self.env_steps)
        _say(config, f"resuming {config.out} at {self.env_steps:,} env steps")

    # --- the session ----------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        config = self.config
        bar = _progress_bar(config, self.env_steps)
        if bar is not None:
            _BARS.append(bar)
        try:
            with _CtrlC() as ctrl_c:
                self._evaluate_when_due()
                while self.env_steps < config.timesteps:
                    with ctrl_c.deferred(self):
                        self._update(bar)
                    if ctrl_c.asked:
                        raise KeyboardInterrupt
                    self._evaluate_when_due()
                if config.eval_games and self.last_eval.get("env_steps") != self.env_steps:
                    self.evaluate()
        except KeyboardInterrupt:
            self._stopped()
            raise
        finally:
            if bar is not None:
                bar.close()
                _BARS.remove(bar)
        self.checkpoint()
        self.export(self.folder.path(self.player_file))
        self.write_recipe()
        if not self.learned:
            print(
                f"shanghai-train: {self.env_steps:,} env steps trained on no decision ({config.method} "
                "learns from deals that ended, and none did): the player is untrained; give more --timesteps",
                file=sys.stderr,
            )
        return self.last_eval

    def _update(self, bar: Any) -> None:
        """One step of the method, its progress row, and the checkpoint when one is due."""
        config, folder = self.config, self.folder
        start = time.perf_counter()
        self.whole = False
        stats = self.method.step()
        seconds = time.perf_counter() - start
        self.train_seconds += seconds
        done_now = int(stats.pop("env_steps"))
        self.env_steps += done_now
        self.learned = self.learned or stats.get("trained_decisions", 1) > 0
        self.whole = True
        row = {"env_steps": self.env_steps, "wall_seconds": round(folder.wall(), 2)}
        row["steps_per_second"] = round(done_now / seconds, 1)
        row.update(stats)
        folder.log("progress.csv", row)
        if bar is not None:
            bar.update(min(self.env_steps, config.timesteps) - bar.n)
            bar.set_postfix_str(f"{row['steps_per_second']:,.0f} steps/s")
        if self.env_steps >= self.next_ckpt:
            self.next_ckpt = self.env_steps + config.checkpoint_every
            self.checkpoint()

    def _evaluate_when_due(self) -> None:
        """The evaluation the schedule asks for now: not the final one, nor a second of one player."""
        due = self.next_eval is not None and self.env_steps >= self.next_eval
        done = self.last_eval.get("env_steps") == self.env_steps
        if due and not done and self.env_steps < self.config.timesteps:
            self.evaluate()
            self.next_eval = self.env_steps + self.config.eval_every if self.config.eval_every else None
            self.checkpoint()

    def _stopped(self) -> None:
        """Ctrl-C: a checkpoint of the last whole update, so the same command goes on from it."""
        if not self.whole:
            where = f"{self.config.out} goes on from its last checkpoint"
            _tell(self.config, f"stopped within an update: {where}")
            return
        self.checkpoint()
        _tell(
            self.config,
            f"stopped at {self.env_steps:,} env steps; checkpoint saved: the same command goes on from there",
        )

    # --- what the session writes ----------------------------------------------------------------

    def export(self, path: str) -> None:
        """The player, written whole (ValueError if its weights are not finite: none is written)."""
        with replaced(path) as tmp:
            self.method.export(tmp, {"method": self.config.method, "env_steps": self.env_steps})

    def checkpoint(self) -> None:
        """The method's state and the counters; ValueError (the last one kept) for weights not finite."""
        net = getattr(self.method, "net", None)
        bad = not_finite(net.state_dict()) if net is not None else []
        if bad:
            raise ValueError(
                f"the network's weights became NaN or inf ({', '.join(bad[:3])}) by {self.env_steps:,} env "
                f"steps: training diverged; {self.config.out} keeps its last checkpoint (try a lower --lr)"
            )
        self.folder.save_checkpoint(
            {
                "method_name": self.config.method,
                "method": self.method.state_dict(),
                "env_steps": self.env_steps,
                "train_seconds": self.train_seconds,
                "wall_seconds": self.folder.wall(),
                "next_eval": self.next_eval,
                "next_ckpt": self.next_ckpt,
                "last_eval": self.last_eval,
            }
        )

    def evaluate(self) -> dict[str, Any]:
        """Save the player, play it against the evaluation bots, log and draw the result."""
        config, folder = self.config, self.folder
        path = folder.path(self.player_file)
        self.export(path)
        start = time.perf_counter()
        row: dict[str, Any] = {"env_steps": self.env_steps, "wall_seconds": round(folder.wall(), 1)}
        row["train_seconds"] = round(self.train_seconds, 1)
        row.update(evaluate_all(path, config, workers=config.env_workers))  # the games' cores wait meanwhile
        folder.log("eval.csv", row)
        plot_curve([folder.path("eval.csv")], folder.path("curve.png"), f"{config.method}: {config.out}")
        _say(
            config,
            f"evaluation at {self.env_steps:,} steps ({time.perf_counter() - start:.0f} s): "
            f"game score minus each bot seat, {int(row['games'])} games in {int(row['rounds'])} rounds "
            f"(below 0: ahead of it): {describe(row, config.eval_opponents)}",
        )
        self.last_eval = row
        self.write_recipe()  # the player just saved, with this evaluation: a run stopped later keeps it
        if config.keep_players:
            stem, ext = os.path.splitext(self.player_file)
            kept = folder.path(os.path.join("players", f"{stem}_{self.env_steps}"))
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            for source, target in ((path, kept + ext), (folder.path("model.json"), kept + ".json")):
                with replaced(target) as tmp:
                    shutil.copyfile(source, tmp)
        return row

    def write_recipe(self) -> None:
        """``model.json``: how the player in the folder was made, and what it reads."""
        config, device = self.config, self.device
        hardware = f"{platform.machine()}, {os.cpu_count()} cores, {device.type}, torch {torch.__version__}"
        recipe = {
            "player": self.player_file,
            "method": config.method,
            "command": self.command or " ".join(sys.argv),
            "config": config.to_json(),
            # the imitated player (dagger); None: no labels, what it learns comes from its own play
            "teacher": config.method_options.get("teacher") or None,
            "init": config.init or None,  # the starting weights, if any
            "inputs": {
                "observation": "the env's observation of the seat to act (docs/observation.md)"
                + (", in the 8-seat layout of encoding any_table" if config.encoding == "any_table" else ""),
                "encoding": config.encoding,
                "facts": describe_facts(config.facts_version) if config.facts else None,
            },
            "env_steps": self.env_steps,
            "train_seconds": round(self.train_seconds, 1),
            "wall_seconds": round(self.folder.wall(), 1),
            "hardware": hardware,
            "evaluation": self.last_eval,
        }
        write_atomically(self.folder.path("model.json"), json.dumps(recipe, indent=2))


class _CtrlC:
    """SIGINT while the loop runs: inside an update (:meth:`deferred`) it is remembered and the
    loop stops once the update is whole; elsewhere, or a second time, KeyboardInterrupt at once."""

    def __init__(self) -> None:
        self.asked = False
        self._deferring = False
        self._before: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():  # the only one with a handler
            self._before = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._before is not None:
            signal.signal(signal.SIGINT, self._before)

    def _handle(self, signum: int, frame: Any) -> None:
        if self._deferring and not self.asked:
            self.asked = True
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self, training: Training) -> Iterator[None]:
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self.asked:
            _say(training.config, "Ctrl-C: stopping after this update (again: at once, without a checkpoint)")


@contextlib.contextmanager
def _children_ignore_ctrl_c() -> Iterator[None]:
    """Processes started meanwhile (game workers) ignore Ctrl-C: the trainer stops them itself."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # a child inherits an ignored SIGINT, and Python then leaves it ignored
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _resumed_schedule(
    config: RunConfig, env_steps: int, saved_eval: int | None, saved_ckpt: int
) -> tuple[int | None, int]:
    """The next evaluation and checkpoint of a resumed run: as saved, or sooner by the new interval."""
    if not config.eval_every:
        next_eval = None
    elif saved_eval is None:
        next_eval = env_steps + config.eval_every
    else:
        next_eval = min(int(saved_eval), env_steps + config.eval_every)
    return next_eval, min(saved_ckpt, env_steps + config.checkpoint_every)


def _progress_bar(config: RunConfig, initial: int) -> Any:
    if not config.progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=config.timesteps, initial=min(initial, config.timesteps), unit="step", unit_scale=True)
