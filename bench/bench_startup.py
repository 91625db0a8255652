"""Start-up (issue 33): how long ``bdi-rl run`` takes to its first env step, and to exit on a
run that does nearly nothing else, for one or more checkouts of bdi-rl, interleaved.

The first env step is read from the run's own trace: the time stamp of its first ``steps``
record (the step-level trace of the first episode, written by the learner as the episode
runs; ``--trace step``) less the moment the process was started. A round starts each command
once per checkout, in turn (A B A B...), so a noisy machine slows both alike.

    python bench/bench_startup.py --rounds 7 [--checkout NAME=PATH ...]

``--checkout`` puts ``PATH`` first on ``PYTHONPATH`` (another worktree of bdi-rl, e.g. the
commit before the change); without it, only this checkout runs. ``PYTHONDONTWRITEBYTECODE``
is unset for the commands (with it, Python compiles bdi-rl's modules anew in every process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> arguments after ``python -m bdi_rl``; the first env step is measured for the first
COMMANDS = {
    "FrozenLake 4x4, 1 episode": ["run", "agents/frozenlake-4x4.toml", "--episodes", "1", "--trace", "step"],
    "bdi-rl run climbing": ["run", "climbing"],
}


def _first_step(runs: Path, started: float) -> float | None:
    """Seconds from ``started`` (epoch) to the run's first ``steps`` record."""
    for trace in runs.glob("*/trace.jsonl"):
        with trace.open() as f:
            for line in f:
                record = json.loads(line)
                if record.get("kind") == "steps":
                    return float(record["ts"]) - started
    return None


def _once(checkout: Path, args: list[str], runs: Path) -> tuple[float, float | None]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(checkout) + os.pathsep + env.get("PYTHONPATH", "")
    started_epoch = time.time()
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bdi_rl", *args, "--runs", str(runs), "--no-progress"],
        cwd=checkout,
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - began
    return wall, _first_step(runs, started_epoch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    checkouts = {"this checkout": ROOT}
    for item in args.checkout:
        name, _, path = item.partition("=")
        checkouts[name] = Path(path).resolve()
    walls: dict[tuple[str, str], list[float]] = {}
    firsts: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for command, command_args in COMMANDS.items():
                for name, checkout in checkouts.items():
                    runs = Path(tmp) / f"{round_}-{command[:5]}-{name[:5]}".replace(" ", "_")
                    wall, first = _once(checkout, command_args, runs)
                    walls.setdefault((command, name), []).append(wall)
                    if first is not None:
                        firsts.setdefault((command, name), []).append(first)
            print(f"round {round_ + 1} done", file=sys.stderr, flush=True)
    print("| command | checkout | first env step, s: median (min-max) | whole process, s: median (min-max) |")
    print("|---|---|---:|---:|")
    for (command, name), times in walls.items():
        first = firsts.get((command, name), [])
        shown = f"{statistics.median(first):.3f} ({min(first):.3f}-{max(first):.3f})" if first else "-"
        print(f"| {command} | {name} | {shown} | {statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f}) |")


if __name__ == "__main__":
    main()
