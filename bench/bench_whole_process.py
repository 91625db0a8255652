"""What the user waits for (issue 33): whole processes, start-up, training, evaluation and exit
included, against the plain loop a user would write (bench/plain_frozenlake.py).

Each round runs, one after another: the plain loop; the README's first command at ``--trace
episode``; the first command as shipped (trace ``step``); ``bdi-rl run climbing``. The ratios
are taken within a round (each command's wall time over the plain loop's of the same round);
the table gives their medians over ``--rounds``.

    python bench/bench_whole_process.py --rounds 5 [--sources]

``--sources``: each bdi-rl command runs a second time in the round with its runtime from its
sources (``BDI_RL_PURE_PYTHON=1``, bdi_rl/compiled.py), right after its compiled run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bdi_rl.compiled import PURE_PYTHON  # the name only: a checkout measured may predate it

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "plain loop (bench/plain_frozenlake.py)": [str(ROOT / "bench" / "plain_frozenlake.py")],
    "first command, --trace episode": ["-m", "bdi_rl", "run", "agents/frozenlake-4x4.toml", "--trace", "episode"],
    "first command (trace step)": ["-m", "bdi_rl", "run", "agents/frozenlake-4x4.toml"],
    "bdi-rl run climbing": ["-m", "bdi_rl", "run", "climbing"],
}


def _wall(args: list[str], runs: Path, sources: bool = False) -> float:
    extra = [] if args[0].endswith(".py") else ["--runs", str(runs), "--no-progress"]
    env = {key: value for key, value in os.environ.items() if key != PURE_PYTHON}
    if sources:
        env[PURE_PYTHON] = "1"
    started = time.perf_counter()
    subprocess.run([sys.executable, *args, *extra], cwd=ROOT, check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sources", action="store_true", help="each bdi-rl command also from its sources")
    args = parser.parse_args()
    runs: list[tuple[str, list[str], bool]] = []
    for name, command in COMMANDS.items():
        runs.append((name, command, False))
        if args.sources and command[0] == "-m":
            runs.append((f"{name}, runtime from its sources", command, True))
    walls: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, command, sources in runs:
                walls[name].append(_wall(command, Path(tmp) / f"runs-{round_}", sources))
            print(f"round {round_ + 1}: " + ", ".join(f"{w[-1]:.2f} s" for w in walls.values()), flush=True)
    plain = walls[next(iter(COMMANDS))]
    print("| command | wall s, median (min-max) | plain loop ÷ command, median of rounds |")
    print("|---|---:|---:|")
    for name, times in walls.items():
        ratios = [p / t for p, t in zip(plain, times, strict=True)]
        print(
            f"| {name} | {statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f}) | "
            f"{statistics.median(ratios):.2f}x |"
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
