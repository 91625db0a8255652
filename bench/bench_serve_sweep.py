"""A seed sweep started from the control page (issue 30: "the same from the control page"),
two ways, interleaved: ``bdi-rl serve`` as it is (its runs made by worker processes that run
one run after another) and ``bdi-rl serve --process-per-run`` (each run a ``bdi-rl run``
child, as the page did before). The climbing game, coordination plans, trace at ``episode``
level, ``--jobs 2`` on the 2-core machine; the time from the POST that starts the sweep to
the moment every run has finished, read from the page's own job list.

    python bench/bench_serve_sweep.py --seeds 40 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bdi_rl.control.app import TOKEN_HEADER
from bdi_rl.xmpp.serverhost import free_port

ROOT = Path(__file__).resolve().parent.parent


def sweep_seconds(runs: Path, seeds: int, extra: list[str]) -> float:
    """Wall time of one ``seeds``-run climbing sweep started through a fresh ``bdi-rl serve``."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "bdi_rl", "serve", "--runs", str(runs), "--port", str(port), "--jobs", "2"]
    serve = subprocess.Popen([*command, *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert serve.stdout is not None
        token = serve.stdout.readline().split("#token=", 1)[1].strip()
        url = f"http://127.0.0.1:{port}"
        body = {"spec": "climbing", "seed": 0, "seeds": seeds, "trace": "episode"}
        request = urllib.request.Request(
            url + "/api/control/sweeps",
            data=json.dumps(body).encode(),
            method="POST",
            headers={TOKEN_HEADER: token, "Origin": url, "Content-Type": "application/json"},
        )
        began = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
        while True:
            with urllib.request.urlopen(url + "/api/control/jobs", timeout=30) as response:
                jobs = json.load(response)["jobs"]
            if all(job["state"] not in ("queued", "running") for job in jobs):
                break
            time.sleep(0.1)
        took = time.perf_counter() - began
        if any(job["state"] != "finished" for job in jobs):
            raise SystemExit(f"a run did not finish: {[j for j in jobs if j['state'] != 'finished'][:1]}")
        return took
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ways = {"bdi-rl serve (worker processes)": [], "bdi-rl serve --process-per-run": ["--process-per-run"]}
    walls: dict[str, list[float]] = {name: [] for name in ways}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for k, (name, extra) in enumerate(ways.items()):
                walls[name].append(sweep_seconds(Path(tmp) / f"runs-{round_}-{k}", args.seeds, extra))
            print(f"round {round_ + 1}: " + ", ".join(f"{w[-1]:.1f} s" for w in walls.values()), file=sys.stderr)
    base = walls["bdi-rl serve --process-per-run"]
    print(f"| {args.seeds} climbing runs from the page, --jobs 2 | wall s, median (min-max) | ÷ process per run |")
    print("|---|---:|---:|")
    for name, times in walls.items():
        ratio = statistics.median(t / b for t, b in zip(times, base, strict=True))
        print(f"| {name} | {statistics.median(times):.1f} ({min(times):.1f}-{max(times):.1f}) | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
