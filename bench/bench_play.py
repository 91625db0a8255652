"""``bdi-rl play``: greedy episodes per second, policy-only and through the agent's plans.

Trains each shipped spec once with the real CLI (``bdi-rl run SPEC --trace episode``), then
plays its table ``--episodes`` times over, in interleaved rounds, as a user does:

- ``--policy-only``: the table alone in a plain loop, traced at step level, no XMPP;
- with the plans: the agent's plan library on the embedded XMPP server with telemetry, traced
  at step level (the spec's mode: frozenlake-4x4's plans choose every step, frozenlake-8x8's
  run each episode in Python and see its outcome);
- and once more with plans on a moved goal (what a user measures transfer with).

Episodes/s is played episodes over the play's own playing time (the summary's env steps over
its env steps/s: start-up and the final summary left out); "wall" is the whole command, start
to exit. Success is with its 95 % Wilson interval.

    python bench/bench_play.py --rounds 3 --episodes 1000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPECS = {"frozenlake-4x4": "3,0", "frozenlake-8x8": "0,7"}  # the spec, and a goal cell to move its goal to


def cli(*args: str) -> tuple[Path, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bdi_rl", *args, "--no-progress"], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bdi-rl {' '.join(args)} failed: {done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1]), wall


def measure(run_dir: Path, wall: float) -> dict[str, float]:
    summary = json.loads((run_dir / "summary.json").read_text())
    (entry,) = summary["evaluation"]["agents"].values()
    seconds = (
        sum(a["env_steps"] for a in summary["agents"].values() if "env_steps" in a) / summary["env_steps_per_second"]
    )
    return {
        "episodes_per_s": entry["episodes"] / seconds,
        "wall": wall,
        "success": entry["success_rate"],
        "low": entry["success_ci95"][0],
        "high": entry["success_ci95"][1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-play-") as tmp:
        runs = Path(tmp) / "runs"
        trained = {}
        for spec in SPECS:
            trained[spec], wall = cli("run", spec, "--trace", "episode", "--runs", str(runs))
            print(f"trained {spec} in {wall:.1f} s: {trained[spec].name}", flush=True)
        results: dict[tuple[str, str], list[dict[str, float]]] = {}
        for round_ in range(args.rounds):
            for spec, goal in SPECS.items():
                for how, extra in (
                    ("policy only", ["--policy-only"]),
                    ("plans", []),
                    ("plans, moved goal", ["--goal", goal]),
                ):
                    run_dir, wall = cli(
                        "play", str(trained[spec]), "--episodes", str(args.episodes), "--runs", str(runs), *extra
                    )
                    results.setdefault((spec, how), []).append(measure(run_dir, wall))
            print(f"round {round_ + 1} done", flush=True)
    print(f"\n| spec | played | episodes/s (median of {args.rounds}) | wall s (median) | success [95 % CI] |")
    print("|---|---|---:|---:|---|")
    for (spec, how), rows in results.items():
        speed = statistics.median(r["episodes_per_s"] for r in rows)
        wall = statistics.median(r["wall"] for r in rows)
        last = rows[-1]
        print(
            f"| {spec} | {how} | {speed:,.0f} | {wall:.1f} | "
            f"{last['success']:.3f} [{last['low']:.3f}, {last['high']:.3f}] |"
        )


if __name__ == "__main__":
    main()
