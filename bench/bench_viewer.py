"""Viewer on a big run: time to open it (cold and from the index cache) and per slider position.

    python bench/bench_viewer.py --run runs/<a big run>          # or:
    python bench/bench_viewer.py --make                            # makes one: frozenlake-team, step trace

Targets (roadmap): a run with 1M trace events opens in < 1 s; the slider answers in < 50 ms
per position. Measured, each with a fresh viewer app (aiohttp's test client):

- "full index": a cold ``RunIndex`` over the whole trace, as ``inspect`` without a cache;
- "first answer, cold": the run page's API answer from a viewer that never saw the run (it
  answers with what one request budget indexed, and says how far it got), then the time until
  the background task has indexed all of it;
- "open, cached": the run page's API answer, complete, from a new viewer whose index cache
  holds the run (what every open after the first costs);
- the slider: the Mind Inspector API at random positions of the busiest agent, then moving
  one position at a time.
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

from bdi_rl.readers.indexer import Indexer
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.viewer import create_app


def make_run(runs: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "run",
            "frozenlake-team",
            "--runs",
            str(runs),
            "--trace",
            "step",
            "--no-progress",
            "--episodes",
            "2600",
        ],
        check=True,
        capture_output=True,
    )
    return next(runs.iterdir())


async def _get(client: TestClient, url: str) -> tuple[float, dict]:
    started = time.perf_counter()
    response = await client.get(url)
    body = await response.json()
    return time.perf_counter() - started, body


async def measure(run_dir: Path, positions: int, cache: Path) -> dict[str, float]:
    started = time.perf_counter()
    index = RunIndex(run_dir)
    index.refresh()
    result: dict[str, float] = {"events": index.lines, "index_s": time.perf_counter() - started}
    api = f"/api/runs/{run_dir.name}"
    async with TestClient(
        TestServer(create_app(run_dir.parent, live_poll=0.05, indexer=Indexer(run_dir.parent.resolve(), cache)))
    ) as client:
        started = time.perf_counter()
        result["cold_first_s"], body = await _get(client, api)
        result["cold_first_fraction"] = body["indexing"] if body["indexing"] is not None else 1.0
        while body["indexing"] is not None:
            await asyncio.sleep(0.05)
            _, body = await _get(client, api)
        result["cold_complete_s"] = time.perf_counter() - started
    async with TestClient(
        TestServer(create_app(run_dir.parent, indexer=Indexer(run_dir.parent.resolve(), cache)))
    ) as client:
        result["cached_open_s"], body = await _get(client, api)
        assert body["indexing"] is None and body["events"] == sum(a.events for a in index.agents.values()), (
            "the cache was not used"
        )
        agent = max(index.agents.values(), key=lambda a: a.events)
        mind = f"{api}/agents/{agent.name}/mind"
        rng = random.Random(1)
        latencies = [(await _get(client, f"{mind}?pos={rng.randrange(agent.events)}"))[0] for _ in range(positions)]
        pos = agent.events // 2  # one step at a time, as a dragged slider or the arrow keys do
        steps = [(await _get(client, f"{mind}?pos={pos + k + 1}&prev={pos + k}"))[0] for k in range(positions)]
    latencies.sort()
    steps.sort()
    result.update(
        {
            "random_median_ms": statistics.median(latencies) * 1e3,
            "random_p95_ms": latencies[int(0.95 * len(latencies))] * 1e3,
            "step_median_ms": statistics.median(steps) * 1e3,
            "step_p95_ms": steps[int(0.95 * len(steps))] * 1e3,
        }
    )
    return result


def browser_open(run_dir: Path, cache: Path, browser: str) -> list[float]:
    """``bdi-rl view`` in its own process with a warm index cache; seconds from navigating to
    the run page until it has drawn its curves and the Mind Inspector (``data-ready``)."""
    import os
    import socket

    from playwright.sync_api import sync_playwright

    from bdi_rl.xmpp.server import free_port

    port = free_port()
    env = {**os.environ, "BDI_RL_INDEX_CACHE": str(cache)}
    viewer = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "view", "--runs", str(run_dir.parent), "--port", str(port)], env=env
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=browser, args=["--headless", "--no-sandbox"])
            times = []
            for _ in range(3):  # the first includes the viewer process loading the cache
                page = chromium.new_page()
                started = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/run/{run_dir.name}")
                page.wait_for_selector("body[data-ready='1']", timeout=60_000)
                times.append(time.perf_counter() - started)
                page.close()
            chromium.close()
        return times
    finally:
        viewer.terminate()
        viewer.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", type=Path, help="an existing run directory")
    source.add_argument("--make", action="store_true", help="make a frozenlake-team run first (~1 min)")
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument(
        "--browser", default="/usr/bin/chromium", help="also time the run page in this browser ('' to skip)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = make_run(Path(tmp) / "runs") if args.make else args.run
        cache = Path(tmp) / "index-cache"
        r = asyncio.run(measure(run_dir, args.positions, cache))
        if args.browser:
            r["browser_s"] = browser_open(run_dir, cache, args.browser)
        size = (run_dir / "trace.jsonl").stat().st_size
    print(f"{r['events']:,} events ({size / 1e6:.0f} MB); full index {r['index_s']:.2f} s")
    print(
        f"cold viewer: first answer {r['cold_first_s'] * 1e3:.0f} ms "
        f"({r['cold_first_fraction']:.0%} indexed), complete after {r['cold_complete_s']:.2f} s"
    )
    print(f"cached viewer: run page {r['cached_open_s'] * 1e3:.0f} ms, complete")
    if "browser_s" in r:
        first, *again = r["browser_s"]
        print(
            f"cached viewer in {args.browser}, run page until curves and inspector are drawn: "
            f"{first * 1e3:.0f} ms just after the viewer started, then "
            + ", ".join(f"{t * 1e3:.0f}" for t in again)
            + " ms"
        )
    print(f"slider, random positions: median {r['random_median_ms']:.1f} ms, p95 {r['random_p95_ms']:.1f} ms")
    print(f"slider, next position:    median {r['step_median_ms']:.1f} ms, p95 {r['step_p95_ms']:.1f} ms")


if __name__ == "__main__":
    main()
