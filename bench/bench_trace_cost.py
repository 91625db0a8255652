"""What tracing costs a run, from outside the process: the figures issue 17 (trace v2) is judged by.

Every measurement is a whole ``python -m bdi_rl run SPEC --no-progress --runs TMP`` process (the
real path: embedded XMPP server, telemetry agent, trace file), run as A B pairs, A B A B over
``--rounds`` rounds, so drift in the shared machine's load hits both sides of a pair alike.
Reported: medians of each side and the median of the per-pair B/A ratios, for the process's
CPU time (user + system, the steadier one on a shared machine), its wall time, and the learners'
own throughput (``env_steps_per_second`` in summary.json: training only, start-up excluded, the
figure bench_throughput.py and the issue's "on/off" use). Issue 17's targets:

1. step-level tracing on/off >= 0.9x in step mode (FrozenLake 4x4, the first command's spec) and
   in episode mode (Taxi): ``--trace step`` against ``--trace episode``, same learner and seed;
2. the README's first command as it is (default level ``step``) against ``--trace episode``:
   < 1.3x the time, and a trace < 50 MB;
3. ``--trace cycle`` against ``--trace episode`` in step mode: < 2x;
4. opening the first command's run in ``bdi-rl view`` (its own process, as a user starts it):
   time from the first request until the run page's API says the index is complete, then the
   page's other data requests (kinds, messages, the last mind position, the Q-table); cold with
   ``BDI_RL_INDEX_CACHE=off``, warm from a cache an earlier viewer filled. Target < 1 s.

bench_viewer.py measures the same viewer in-process on a team run, with the slider; this one
times the shipped command's own run through a real ``bdi-rl view``. Temporary run directories
are deleted as soon as they are measured (the first command's trace was ~410 MB in trace
format 1, where every event was a line).

    python bench/bench_trace_cost.py [--rounds 3] [--episodes 2000] [--taxi-episodes 1000] [--rows 1,2,3,4]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bdi_rl.xmpp.server import free_port

ROOT = Path(__file__).resolve().parent.parent
FIRST = "agents/frozenlake-4x4.toml"  # the README's first command: step mode, trace = "step"


def run(runs: Path, spec: str, *extra: str) -> dict:
    """One ``bdi-rl run`` process: CPU and wall seconds, training steps/s, trace MB, its run dir."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bdi_rl", "run", spec, "--no-progress", "--runs", str(runs), *extra],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_dir = max(runs.iterdir(), key=lambda p: p.stat().st_mtime)
    summary = json.loads((run_dir / "summary.json").read_text())
    return {
        "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "wall": wall,
        "steps_s": float(summary["env_steps_per_second"]),
        "mb": (run_dir / "trace.jsonl").stat().st_size / 1e6,
        "dir": run_dir,
    }


def pairs(
    tmp: Path, rounds: int, spec: str, a: list[str], b: list[str], keep_last_b: bool = False
) -> list[tuple[dict, dict]]:
    """A B A B ...; each run directory deleted once measured (but the last B's if asked)."""
    result = []
    for r in range(rounds):
        pair = (run(tmp, spec, *a), run(tmp, spec, *b))
        for side, m in zip("AB", pair, strict=True):
            if not (keep_last_b and side == "B" and r == rounds - 1):
                shutil.rmtree(m["dir"])
        result.append(pair)
    return result


def _get(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=120) as response:
        return json.loads(response.read())


def open_in_viewer(run_dir: Path, cache: str) -> dict:
    """``bdi-rl view --runs`` on a free port; seconds from the first request until the run page's
    API answers with the index complete, then its other requests; plus from the process's launch."""
    port = free_port()
    launched = time.perf_counter()
    command = [sys.executable, "-m", "bdi_rl", "view", "--runs", str(run_dir.parent), "--port", str(port)]
    viewer = subprocess.Popen(
        command,
        env={**os.environ, "BDI_RL_INDEX_CACHE": cache},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.02)
        started = time.perf_counter()
        api = f"/api/runs/{run_dir.name}"
        body = _get(port, api)
        first = time.perf_counter() - started
        while body["indexing"] is not None:
            time.sleep(0.02)
            body = _get(port, api)
        indexed = time.perf_counter() - started
        agent = next(iter(body["agents"]))
        for path in ("/api/kinds", f"{api}/messages", f"{api}/agents/{agent}/mind", f"{api}/agents/{agent}/qtable"):
            _get(port, path)
        done = time.perf_counter()
        return {
            "first": first,
            "indexed": indexed,
            "open": done - started,
            "from_launch": done - launched,
            "events": body["events"],
        }
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)


def _med(values: list[float]) -> float:
    return statistics.median(values)


def _list(values: list[float], fmt: str = ".2f") -> str:
    return ", ".join(format(v, fmt) for v in values)


def row(label: str, measured: list[tuple[dict, dict]], target: str) -> None:
    """Medians of A and B, and the median of the per-pair ratios (B/A time; B/A steps/s)."""
    ratio = {key: [b[key] / a[key] for a, b in measured] for key in ("cpu", "wall", "steps_s")}
    side = {
        key: (_med([a[key] for a, _ in measured]), _med([b[key] for _, b in measured])) for key in ("cpu", "wall", "mb")
    }
    cells = [f"{side[k][0]:6.2f} {side[k][1]:6.2f} {_med(ratio[k]):5.2f}" for k in ("cpu", "wall")]
    print(
        f"{label:<44} {cells[0]:>20} {cells[1]:>20} {_med(ratio['steps_s']):7.3f} "
        f"{side['mb'][0]:7.1f} {side['mb'][1]:7.1f}  {target}"
    )
    print(
        f"{'':<44} pairs B/A: cpu {_list(ratio['cpu'])}; wall {_list(ratio['wall'])}; "
        f"steps/s {_list(ratio['steps_s'], '.3f')}"
    )
    sys.stdout.flush()


def viewer_row(label: str, opens: list[dict]) -> None:
    m = {key: _med([o[key] for o in opens]) for key in ("first", "indexed", "open", "from_launch")}
    print(
        f"4. viewer, {label}, {opens[0]['events']:,} events: first answer {m['first']:.2f} s, "
        f"index complete {m['indexed']:.2f} s, page data {m['open']:.2f} s "
        f"({_list([o['open'] for o in opens])}), from launch {m['from_launch']:.2f} s; target < 1 s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=2000, help="FrozenLake 4x4 episodes for rows 1 and 3")
    parser.add_argument("--taxi-episodes", type=int, default=1000, help="Taxi episodes for row 1, episode mode")
    parser.add_argument("--viewer-opens", type=int, default=3)
    parser.add_argument("--rows", default="1,2,3,4", help="which rows: 1 (both), 2 (with 4), 3; e.g. 1,2")
    args = parser.parse_args()
    rows = set(args.rows.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="bench_trace_cost"))
    try:
        fl = ["--episodes", str(args.episodes)]
        taxi = ["--episodes", str(args.taxi_episodes)]
        print(
            f"{args.rounds} rounds A B; medians; B/A = median of per-pair ratios (time: lower is better; "
            f"steps/s: training throughput B/A)"
        )
        print(f"{'A -> B':<44} {'CPU s: A B B/A':>20} {'wall s: A B B/A':>20} {'steps/s':>7} {'trace MB: A B':>15}")
        if "1" in rows:
            row(
                f"1. FL4x4 step mode {args.episodes} ep: episode -> step",
                pairs(tmp, args.rounds, FIRST, [*fl, "--trace", "episode"], [*fl, "--trace", "step"]),
                "target >= 0.9 steps/s",
            )
            row(
                f"1. Taxi episode mode {args.taxi_episodes} ep: episode -> step",
                pairs(tmp, args.rounds, "agents/taxi.toml", [*taxi, "--trace", "episode"], [*taxi, "--trace", "step"]),
                "target >= 0.9 steps/s",
            )
        if "3" in rows:
            row(
                f"3. FL4x4 step mode {args.episodes} ep: episode -> cycle",
                pairs(tmp, args.rounds, FIRST, [*fl, "--trace", "episode"], [*fl, "--trace", "cycle"]),
                "target < 2 time",
            )
        if "2" not in rows and "4" not in rows:
            return
        first = pairs(tmp, args.rounds, FIRST, ["--trace", "episode"], [], keep_last_b=True)
        row("2. first command: --trace episode -> as is", first, "target < 1.3 wall, < 50 MB")
        if "4" not in rows:
            return
        run_dir = first[-1][1]["dir"]
        cache = tmp / "index-cache"
        open_in_viewer(run_dir, str(cache))  # fills the cache for the warm opens
        while not any(cache.glob("*.npz")):  # the viewer saves it just after indexing
            time.sleep(0.1)
        for label, setting in (("cold (BDI_RL_INDEX_CACHE=off)", "off"), ("warm (index cache)", str(cache))):
            viewer_row(label, [open_in_viewer(run_dir, setting) for _ in range(args.viewer_opens)])
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
