"""Start-up (issue 33): how long ``bdi-rl run`` takes to its first env step, and to exit on a
run that does nearly nothing else, for one or more checkouts of bdi-rl, interleaved; and how
long the readers take to be ready: ``view`` and ``serve`` until their port takes a connection,
``inspect`` (of a 200-episode FrozenLake run) until it has printed and exited.

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
import socket
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


#: name -> arguments after ``python -m bdi_rl`` of a reader; ``{run}``: the run it reads
READERS = {
    "bdi-rl view (listening)": ["view", "--runs", "{runs}"],
    "bdi-rl serve (listening)": ["serve", "--runs", "{runs}"],
    "bdi-rl inspect RUN --agent learner": ["inspect", "{run}", "--agent", "learner"],
}


def process_env(checkout: Path) -> dict[str, str]:
    """The environment of a timed command: bdi-rl's modules from ``checkout``, bytecode cached."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(checkout) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(checkout: Path, args: list[str]) -> float:
    """Seconds from start to a server's port taking a connection, or to a command's exit."""
    began = time.perf_counter()
    if args[0] not in ("view", "serve"):
        subprocess.run(
            [sys.executable, "-m", "bdi_rl", *args],
            cwd=checkout,
            env=process_env(checkout),
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - began
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", *args, "--port", str(port)],
        cwd=checkout,
        env=process_env(checkout),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
                return time.perf_counter() - began
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError(f"{args[0]} exited before it listened") from None
                time.sleep(0.002)
    finally:
        process.terminate()
        process.wait()


def first_step(runs: Path, started: float) -> float | None:
    """Seconds from ``started`` (epoch) to the run's first ``steps`` record."""
    for trace in runs.glob("*/trace.jsonl"):
        with trace.open() as f:
            for line in f:
                record = json.loads(line)
                if record.get("kind") == "steps":
                    return float(record["ts"]) - started
    return None


def _once(checkout: Path, args: list[str], runs: Path) -> tuple[float, float | None]:
    env = process_env(checkout)
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
    return wall, first_step(runs, started_epoch)


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
    readies: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        read = Path(tmp) / "read"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bdi_rl",
                "run",
                "agents/frozenlake-4x4.toml",
                "--episodes",
                "200",
                "--runs",
                str(read),
                "--no-progress",
            ],
            cwd=ROOT,
            env=process_env(ROOT),
            check=True,
            capture_output=True,
        )
        [run] = read.iterdir()
        for round_ in range(args.rounds):
            for command, command_args in READERS.items():
                for name, checkout in checkouts.items():
                    filled = [a.format(runs=read, run=run) for a in command_args]
                    readies.setdefault((command, name), []).append(_ready(checkout, filled))
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
        steps = firsts.get((command, name), [])
        shown = f"{statistics.median(steps):.3f} ({min(steps):.3f}-{max(steps):.3f})" if steps else "-"
        print(f"| {command} | {name} | {shown} | {statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f}) |")
    print()
    print("| reader | checkout | ready, s: median (min-max) |")
    print("|---|---|---:|")
    for (command, name), times in readies.items():
        print(f"| {command} | {name} | {statistics.median(times):.3f} ({min(times):.3f}-{max(times):.3f}) |")


if __name__ == "__main__":
    main()
