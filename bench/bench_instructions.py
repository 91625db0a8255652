"""Instructions, not seconds (issues 30 and 33): what a command costs counted by valgrind's
callgrind, for one or more checkouts of bdi-rl. On the shared 2-core VMs wall time varies
0.5-1.3x from minute to minute, so a change of a few percent cannot be seen by a clock; an
instruction count varies by ~1-3 % between runs (timers fire at other instructions), and is
the same on a busy machine as on a quiet one.

Two figures per checkout, each the median of ``--rounds`` runs:

- **climbing, per episode**: ``bdi-rl run climbing --trace episode`` at ``--episodes`` minus
  the same at 1 episode, divided by the difference: the coordination plans' work per
  episode (two agents, one joint step), start-up and the end of the run taken out. This is
  what a sweep worker pays per episode (issue 30).
- **step tracing, per episode**: the README's first command (FrozenLake 4x4, step mode) the
  same way, 3 x ``--episodes`` training episodes less 1, at ``--trace step`` ÷ at ``--trace
  episode``: what step-level tracing adds to a training episode. The first command's whole
  process (issue 33's "the first command ÷ --trace episode") adds the same start-up to both,
  so its ratio is a little lower than this one.

    python bench/bench_instructions.py --rounds 3 [--episodes 300] [--checkout NAME=PATH ...] [--sources]

``--checkout`` runs ``PATH``'s bdi-rl too (another worktree of bdi-rl, built, e.g. the commit
before a change), from that directory and first on ``PYTHONPATH``: in each round the
checkouts given run first, in their order, then this one; ratios are to the first.
``--sources`` runs each checkout a second time with its runtime from its sources
(``BDI_RL_PURE_PYTHON=1``: bdi_rl/compiled.py), beside its compiled build. The checkouts
alternate within each round. Needs ``valgrind`` (Debian: ``apt-get install valgrind``); a run
is ~50x slower under it (a round of the defaults takes ~5 minutes).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bdi_rl.compiled import PURE_PYTHON  # the name only: a checkout measured may predate it

ROOT = Path(__file__).resolve().parent.parent
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


#: A checkout to measure: its directory, and whether its runtime runs from its sources.
Checkout = tuple[Path, bool]


def _env(checkout: Checkout) -> dict[str, str]:
    path, sources = checkout
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONDONTWRITEBYTECODE", PURE_PYTHON)}
    env["PYTHONPATH"] = str(path) + os.pathsep + env.get("PYTHONPATH", "")
    if sources:
        env[PURE_PYTHON] = "1"
    return env


def instructions(checkout: Checkout, args: list[str], runs: Path) -> int:
    """Instructions the whole ``python -m bdi_rl ARGS`` process ran (children are not counted:
    a run's agents, server and telemetry live in its one process)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "bdi_rl",
            *args,
            "--no-progress",
            "--runs",
            str(runs),
        ]
        done = subprocess.run(command, cwd=checkout[0], env=_env(checkout), capture_output=True, text=True, check=False)
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{' '.join(args)} failed under valgrind (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def warm(checkout: Checkout, args: list[str], runs: Path) -> None:
    """Run ``python -m bdi_rl ARGS`` once, not counted: what a checkout does once (its
    bytecode written, its plan files parsed into the program cache) is not a run's cost. A
    fresh checkout paid it in its 1-episode run and showed a negative cost per episode."""
    command = [sys.executable, "-m", "bdi_rl", *args, "--no-progress", "--runs", str(runs)]
    subprocess.run(command, cwd=checkout[0], env=_env(checkout), capture_output=True, check=True)


def per_episode(checkout: Checkout, command: list[str], episodes: int, runs: Path) -> float:
    """Instructions per training episode of ``command``: at ``episodes`` less at 1."""
    warm(checkout, [*command, "--episodes", "1"], runs)
    one = instructions(checkout, [*command, "--episodes", "1"], runs)
    many = instructions(checkout, [*command, "--episodes", str(episodes)], runs)
    return (many - one) / (episodes - 1)


CLIMBING = ["run", "climbing", "--trace", "episode"]
FIRST_COMMAND = ["run", "agents/frozenlake-4x4.toml", "--set", "eval_episodes=1"]


def step_tracing_ratio(checkout: Checkout, episodes: int, runs: Path) -> float:
    step = per_episode(checkout, [*FIRST_COMMAND, "--trace", "step"], episodes, runs)
    episode = per_episode(checkout, [*FIRST_COMMAND, "--trace", "episode"], episodes, runs)
    return step / episode


def _checkouts(given: list[str], sources: bool) -> dict[str, Checkout]:
    """The checkouts given, in order, then this one (so the ratios are this one's to the first)."""
    paths = {}
    for item in given:
        name, _, path = item.partition("=")
        if not path:
            raise SystemExit(f"--checkout {item!r}: expected NAME=PATH")
        paths[name] = Path(path).resolve()
    paths["this checkout"] = ROOT
    found: dict[str, Checkout] = {}
    for name, path in paths.items():
        found[name] = (path, False)
        if sources:
            found[f"{name}, from its sources"] = (path, True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=300, help="climbing episodes (FrozenLake: 3x as many)")
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--sources", action="store_true", help="each checkout also with BDI_RL_PURE_PYTHON=1")
    args = parser.parse_args()
    checkouts = _checkouts(args.checkout, args.sources)
    climbing: dict[str, list[float]] = {name: [] for name in checkouts}
    ratio: dict[str, list[float]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        for round_ in range(args.rounds):
            for name, checkout in checkouts.items():
                climbing[name].append(per_episode(checkout, CLIMBING, args.episodes, runs))
                ratio[name].append(step_tracing_ratio(checkout, 3 * args.episodes, runs))
                print(
                    f"round {round_ + 1}, {name}: climbing {climbing[name][-1] / 1e6:.3f} M instructions "
                    f"per episode, step tracing per episode {ratio[name][-1]:.3f}",
                    file=sys.stderr,
                )
    first = next(iter(checkouts))
    print(
        "| checkout | climbing: M instructions per episode, median (min-max) | ÷ first "
        "| FrozenLake, per episode: trace step ÷ episode |"
    )
    print("|---|---:|---:|---:|")
    for name in checkouts:
        costs = climbing[name]
        to_first = statistics.median(a / b for a, b in zip(costs, climbing[first], strict=True))
        print(
            f"| {name} | {statistics.median(costs) / 1e6:.3f} ({min(costs) / 1e6:.3f}-{max(costs) / 1e6:.3f}) | "
            f"{to_first:.3f} | {statistics.median(ratio[name]):.3f} ({min(ratio[name]):.3f}-{max(ratio[name]):.3f}) |"
        )


if __name__ == "__main__":
    main()
