"""The one training loop: any method, the same run folder, checkpoints, evaluations and curve.

``train(config)``: set up the method (or resume it from the run folder's checkpoint), evaluate
the starting player, then ``method.step()`` until ``timesteps`` learner decisions are consumed,
writing a progress row per update, a checkpoint every ``checkpoint_every`` env steps and an
evaluation every ``eval_every``; at the end the player (``model.pt``), its recipe
(``model.json``) and the learning curve (``curve.png``). A stopped run (Ctrl-C, a killed
process, the end of a session) goes on from its last checkpoint when the same command runs
again; ``--timesteps`` may be raised to train further.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
from typing import Any

import torch

from .evaluation import evaluate_all
from .facts import describe_facts
from .methods import method_class
from .run import Run, RunConfig, plot_curve


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


def train(config: RunConfig, command: str = "") -> dict[str, Any]:
    """Train (or resume) the run ``config`` describes; returns the last evaluation row."""
    torch.set_num_threads(config.threads)  # one thread per process unless asked: see docs/training.md
    device = pick_device(config.device)
    run = Run(config)
    resumed = run.check_config()
    method = method_class(config.method)()
    method.setup(config, device)
    player_file = getattr(method, "player_file", "model.pt")  # a scorer saves a .zip
    env_steps, train_seconds = 0, 0.0
    next_eval = config.eval_every if config.eval_every else None
    next_ckpt = config.checkpoint_every
    last_eval: dict[str, Any] = {}
    if resumed:
        ckpt = torch.load(run.path("checkpoint.pt"), map_location=device, weights_only=False)
        method.load_state_dict(ckpt["method"])
        env_steps, train_seconds = int(ckpt["env_steps"]), float(ckpt["train_seconds"])
        run.wall_before = float(ckpt["wall_seconds"])
        next_eval, next_ckpt = _resumed_schedule(config, env_steps, ckpt["next_eval"], ckpt["next_ckpt"])
        last_eval = ckpt.get("last_eval", {})
        run.truncate_logs(env_steps)
        _say(config, f"resuming {config.out} at {env_steps:,} env steps")

    def write_recipe() -> None:
        """``model.json``: how the player in the folder was made, and what it reads."""
        hardware = f"{platform.machine()}, {os.cpu_count()} cores, {device.type}, torch {torch.__version__}"
        recipe = {
            "player": player_file,
            "method": config.method,
            "command": command or " ".join(sys.argv),
            "config": config.to_json(),
            # the imitated player (dagger); None: no labels, what it learns comes from its own play
            "teacher": config.method_options.get("teacher") or None,
            # the player the network amends (ppo --prior); its moves are played, not fitted
            "prior": config.method_options.get("prior") or None,
            "init": config.init or None,  # the starting weights, if any
            "inputs": {
                "observation": "the env's observation of the seat to act (docs/observation.md)",
                "facts": describe_facts(config.facts_version) if config.facts else None,
            },
            "env_steps": env_steps,
            "train_seconds": round(train_seconds, 1),
            "wall_seconds": round(run.wall(), 1),
            "hardware": hardware,
            "evaluation": last_eval,
        }
        with open(run.path("model.json"), "w", encoding="utf-8") as f:
            json.dump(recipe, f, indent=2)

    def evaluate() -> dict[str, Any]:
        nonlocal last_eval
        path = run.path(player_file)
        method.export(path, {"method": config.method, "env_steps": env_steps})
        start = time.perf_counter()
        row: dict[str, Any] = {"env_steps": env_steps, "wall_seconds": round(run.wall(), 1)}
        row["train_seconds"] = round(train_seconds, 1)
        row.update(evaluate_all(path, config))
        run.log("eval.csv", row)
        plot_curve([run.path("eval.csv")], run.path("curve.png"), f"{config.method}: {config.out}")
        shown = ", ".join(
            f"{b}: {row[f'{b}_diff']:+.1f} [{row[f'{b}_low']:+.1f}, {row[f'{b}_high']:+.1f}]"
            for b in config.eval_opponents
        )
        _say(
            config,
            f"evaluation at {env_steps:,} steps ({time.perf_counter() - start:.0f} s): "
            f"game score minus each bot seat, {int(row['games'])} games (below 0: ahead of it): {shown}",
        )
        last_eval = row
        write_recipe()  # the player just saved, with this evaluation: a run stopped later keeps it
        if config.keep_players:
            kept = run.path(os.path.join("players", f"{os.path.splitext(player_file)[0]}_{env_steps}"))
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            shutil.copyfile(path, kept + os.path.splitext(player_file)[1])
            shutil.copyfile(run.path("model.json"), kept + ".json")
        return row

    def checkpoint() -> None:
        state = {
            "method": method.state_dict(),
            "env_steps": env_steps,
            "train_seconds": train_seconds,
            "wall_seconds": run.wall(),
            "next_eval": next_eval,
            "next_ckpt": next_ckpt,
            "last_eval": last_eval,
        }
        tmp = run.path("checkpoint.pt.tmp")
        torch.save(state, tmp)
        os.replace(tmp, run.path("checkpoint.pt"))

    if not resumed and config.eval_every and config.eval_games:
        last_eval = evaluate()
    bar = _progress_bar(config, env_steps)
    if bar is not None:
        _BARS.append(bar)
    try:
        while env_steps < config.timesteps:
            start = time.perf_counter()
            stats = method.step()
            seconds = time.perf_counter() - start
            train_seconds += seconds
            done_now = int(stats.pop("env_steps"))
            env_steps += done_now
            row = {"env_steps": env_steps, "wall_seconds": round(run.wall(), 2)}
            row["steps_per_second"] = round(done_now / seconds, 1)
            row.update(stats)
            run.log("progress.csv", row)
            if bar is not None:
                bar.update(min(env_steps, config.timesteps) - bar.n)
                bar.set_postfix_str(f"{row['steps_per_second']:,.0f} steps/s")
            if env_steps >= next_ckpt:
                next_ckpt = env_steps + config.checkpoint_every
                checkpoint()
            if next_eval is not None and env_steps >= next_eval and env_steps < config.timesteps:
                next_eval = env_steps + config.eval_every
                last_eval = evaluate()
                checkpoint()
    finally:
        if bar is not None:
            bar.close()
            _BARS.remove(bar)
    if config.eval_games and (not last_eval or last_eval.get("env_steps") != env_steps):
        last_eval = evaluate()
    checkpoint()
    method.export(run.path(player_file), {"method": config.method, "env_steps": env_steps})
    write_recipe()
    return last_eval


def _resumed_schedule(
    config: RunConfig, env_steps: int, saved_eval: int | None, saved_ckpt: int
) -> tuple[int | None, int]:
    """When the next evaluation and checkpoint fall in a resumed run. ``--eval-every`` and
    ``--checkpoint-every`` may change on resuming (run.RESUMABLE): the saved schedule holds unless
    it is further away than the new interval, and a run that evaluated only at its end (0) starts
    evaluating."""
    if not config.eval_every:
        next_eval = None
    elif saved_eval is None:
        next_eval = env_steps + config.eval_every
    else:
        next_eval = min(saved_eval, env_steps + config.eval_every)
    return next_eval, min(saved_ckpt, env_steps + config.checkpoint_every)


def _progress_bar(config: RunConfig, initial: int) -> Any:
    if not config.progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=config.timesteps, initial=min(initial, config.timesteps), unit="step", unit_scale=True)
