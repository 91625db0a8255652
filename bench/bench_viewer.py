"""Viewer on a big run: time to open it (index the trace) and per slider position.

    python bench/bench_viewer.py --run runs/<a big run>          # or:
    python bench/bench_viewer.py --make                            # makes one: frozenlake-team, step trace

Targets (roadmap): a run with 1M trace events opens in < 1 s; the slider answers in < 50 ms
per position. "Open" is a cold RunIndex over the whole trace plus the run page's API answer;
"slider" is the Mind Inspector API (``/api/runs/<run>/agents/<agent>/mind?pos=N``) through
aiohttp's test client, at random positions of the busiest agent.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from bdi_rl.runindex import RunIndex
from bdi_rl.viewer import create_app


def make_run(runs: Path) -> Path:
    subprocess.run([sys.executable, "-m", "bdi_rl", "run", "frozenlake-team", "--runs", str(runs),
                    "--trace", "step", "--no-progress"], check=True, capture_output=True)
    return next(runs.iterdir())


async def measure(run_dir: Path, positions: int) -> dict[str, float]:
    started = time.perf_counter()
    index = RunIndex(run_dir)
    index.refresh()
    index_seconds = time.perf_counter() - started
    events = index.lines
    async with TestClient(TestServer(create_app(run_dir.parent))) as client:
        started = time.perf_counter()
        response = await client.get(f"/api/runs/{run_dir.name}")
        await response.read()
        open_seconds = time.perf_counter() - started  # cold: this app indexes the run itself
        agent = max(index.agents.values(), key=lambda a: a.events)
        rng = random.Random(1)
        latencies = []
        for _ in range(positions):
            pos = rng.randrange(agent.events)
            started = time.perf_counter()
            response = await client.get(f"/api/runs/{run_dir.name}/agents/{agent.name}/mind?pos={pos}")
            await response.read()
            latencies.append(time.perf_counter() - started)
        # moving one step at a time, as a dragged slider or the arrow keys do
        pos = agent.events // 2
        steps = []
        for k in range(positions):
            started = time.perf_counter()
            response = await client.get(
                f"/api/runs/{run_dir.name}/agents/{agent.name}/mind?pos={pos + k + 1}&prev={pos + k}")
            await response.read()
            steps.append(time.perf_counter() - started)
    latencies.sort()
    steps.sort()
    return {"events": events, "index_s": index_seconds, "open_s": open_seconds,
            "random_median_ms": statistics.median(latencies) * 1e3,
            "random_p95_ms": latencies[int(0.95 * len(latencies))] * 1e3,
            "step_median_ms": statistics.median(steps) * 1e3,
            "step_p95_ms": steps[int(0.95 * len(steps))] * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", type=Path, help="an existing run directory")
    source.add_argument("--make", action="store_true", help="make a frozenlake-team run first (~1 min)")
    parser.add_argument("--positions", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = make_run(Path(tmp) / "runs") if args.make else args.run
        r = asyncio.run(measure(run_dir, args.positions))
    print(f"{r['events']:,} events; index {r['index_s']:.2f} s; run page (cold) {r['open_s']:.2f} s")
    print(f"slider, random positions: median {r['random_median_ms']:.1f} ms, p95 {r['random_p95_ms']:.1f} ms")
    print(f"slider, next position:    median {r['step_median_ms']:.1f} ms, p95 {r['step_p95_ms']:.1f} ms")


if __name__ == "__main__":
    main()
