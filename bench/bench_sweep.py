"""A seed sweep of the climbing game (coordination plans, trace at ``episode`` level, as the
climbing benchmark of BENCHMARKS.md "Shared worlds: BDI coordination plans") three ways,
interleaved (issue 30, start-up amortised): N sequential ``bdi-rl run climbing --seed k
--trace episode`` processes, the same as ``bdi-rl sweep`` on one worker process (start-up
paid once per 200 runs), and on two (both cores).

    python bench/bench_sweep.py --seeds 200 --rounds 1

Each round runs the three one after another; the table gives each one's wall time and its
ratio to the sequential runs of the same round (median over rounds).
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

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _sequential(seeds: int, runs: Path) -> float:
    began = time.perf_counter()
    for seed in range(seeds):
        command = ["run", "climbing", "--seed", str(seed), "--trace", "episode", "--runs", str(runs), "--no-progress"]
        subprocess.run(
            [sys.executable, "-m", "bdi_rl", *command], cwd=ROOT, env=_env(), check=True, capture_output=True
        )
    return time.perf_counter() - began


def _sweep(seeds: int, workers: int, runs: Path, tmp: Path) -> float:
    sweep = tmp / f"climbing-{seeds}.toml"
    sweep.write_text(f'spec = "climbing"\n[axes]\ntrace = ["episode"]\nseed = {{ from = 0, count = {seeds} }}\n')
    began = time.perf_counter()
    command = ["sweep", str(sweep), "--workers", str(workers), "--runs", str(runs), "--no-progress"]
    subprocess.run([sys.executable, "-m", "bdi_rl", *command], cwd=ROOT, env=_env(), check=True, capture_output=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    names = (f"{args.seeds} x bdi-rl run, one after another", "bdi-rl sweep, 1 worker", "bdi-rl sweep, 2 workers")
    walls: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for round_ in range(args.rounds):
            walls[names[0]].append(_sequential(args.seeds, tmp / f"seq-{round_}"))
            walls[names[1]].append(_sweep(args.seeds, 1, tmp / f"w1-{round_}", tmp))
            walls[names[2]].append(_sweep(args.seeds, 2, tmp / f"w2-{round_}", tmp))
            print(f"round {round_ + 1}: " + ", ".join(f"{w[-1]:.1f} s" for w in walls.values()), file=sys.stderr)
    base = walls[names[0]]
    print("| how | wall s, median (min-max) | ÷ sequential runs, median of rounds | s per run |")
    print("|---|---:|---:|---:|")
    for name, times in walls.items():
        ratio = statistics.median(t / b for t, b in zip(times, base, strict=True))
        print(
            f"| {name} | {statistics.median(times):.1f} ({min(times):.1f}-{max(times):.1f}) | {ratio:.2f}x | "
            f"{statistics.median(times) / args.seeds:.2f} |"
        )


if __name__ == "__main__":
    main()
