"""Damaged and huge traces: what checking every line costs the readers, and what one huge
trace costs the viewer (issue 26).

    python bench/bench_damaged_traces.py --make              # makes a run: frozenlake-4x4, 2000 episodes, step trace
    python bench/bench_damaged_traces.py --run runs/<a run>  # or measure on a run of yours
    python bench/bench_damaged_traces.py --run ... --huge 2G # the size of the NUL tail (default 2G)

It measures whatever ``bdi_rl`` the interpreter imports (run it with ``PYTHONPATH`` set to
another checkout for a before/after), each number in a fresh process:

- "index": a cold ``RunIndex`` over the whole trace (what ``inspect``, ``plot`` and ``export``
  do without an index cache): seconds, CPU seconds (the best of ``--repeat``) and peak RSS;
- "export": ``bdi-rl export RUN --csv`` with the index cache off: seconds, CPU seconds, peak RSS;
- "viewer with a huge trace": a runs directory holding the run and a copy of it whose trace
  goes on with a sparse tail of NUL bytes (``truncate -s 2G``: no disk used). ``bdi-rl view``
  is started on it; measured: the time until it accepts a connection, until ``/api/runs``
  answers (and what it says of each run), until the good run's page API answers, and the
  process's peak RSS (``VmHWM``) over the first 20 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

_INDEX = """
import resource, sys, time
from pathlib import Path
from bdi_rl.readers.runindex import RunIndex
started, cpu = time.perf_counter(), time.process_time()
index = RunIndex(Path(sys.argv[1]))
index.refresh()
print(time.perf_counter() - started, time.process_time() - cpu, index.lines,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def make_run(runs: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "run",
            "frozenlake-4x4",
            "--runs",
            str(runs),
            "--episodes",
            "2000",
            "--no-progress",
        ],
        check=True,
        capture_output=True,
    )
    return next(runs.iterdir())


def measure_index(run_dir: Path, repeat: int) -> dict[str, float]:
    """The best of ``repeat`` fresh processes (this machine is shared: CPU time varies by 2x)."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", _INDEX, str(run_dir)], check=True, capture_output=True, text=True, cwd="/"
        )  # not the checkout: PYTHONPATH says which bdi_rl
        runs.append([float(x) for x in out.stdout.split()])
    seconds, cpu, lines, rss_kb = min(runs, key=lambda r: r[1])
    return {"index_s": seconds, "index_cpu_s": cpu, "lines": int(lines), "index_peak_rss_mb": rss_kb / 1024}


def measure_export(run_dir: Path, scratch: Path) -> dict[str, float]:
    started = time.perf_counter()
    out = subprocess.run(
        [
            "/usr/bin/time",
            "-f",
            "%U %M",
            sys.executable,
            "-m",
            "bdi_rl",
            "export",
            str(run_dir),
            "--csv",
            str(scratch / "out.csv"),
        ],
        env={**os.environ, "BDI_RL_INDEX_CACHE": "off"},
        capture_output=True,
        text=True,
        cwd="/",
    )
    seconds = time.perf_counter() - started
    if out.returncode:
        raise SystemExit(f"export failed: {out.stderr}")
    user, rss_kb = out.stderr.split()[-2:]
    return {"export_s": seconds, "export_cpu_s": float(user), "export_peak_rss_mb": int(rss_kb) / 1024}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float) -> tuple[int | str, dict]:
    """The status and JSON answer, or ("timed out", {}) / ("failed: ...", {})."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    except TimeoutError:
        return f"timed out after {timeout:.0f} s", {}
    except OSError as exc:
        return f"failed: {exc}", {}


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure_viewer(run_dir: Path, scratch: Path, huge: str, watch_s: float = 20.0) -> dict[str, object]:
    runs = scratch / "runs"
    runs.mkdir()
    good = runs / run_dir.name
    shutil.copytree(run_dir, good)
    damaged = runs / (run_dir.name + "-huge")
    shutil.copytree(run_dir, damaged)
    subprocess.run(["truncate", "-s", huge, str(damaged / "trace.jsonl")], check=True)
    port = _free_port()
    env = {**os.environ, "BDI_RL_INDEX_CACHE": str(scratch / "cache")}
    started = time.perf_counter()
    viewer = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "view", "--runs", str(runs), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
    )
    result: dict[str, object] = {"trace_bytes": (damaged / "trace.jsonl").stat().st_size}
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
                break
            except OSError:
                if time.perf_counter() - started > 120 or viewer.poll() is not None:
                    raise SystemExit("the viewer never listened") from None
                time.sleep(0.01)
        result["listening_s"] = time.perf_counter() - started
        status, body = _get(f"http://127.0.0.1:{port}/api/runs", timeout=120)
        result["api_runs_s"] = time.perf_counter() - started
        result["api_runs_status"] = status
        result["runs"] = {
            r["run"]: {k: r.get(k) for k in ("events", "indexing", "damaged")} for r in body.get("runs", [])
        }
        t0 = time.perf_counter()
        status, body = _get(f"http://127.0.0.1:{port}/api/runs/{good.name}", timeout=120)
        result["good_run_page_s"] = time.perf_counter() - t0
        result["good_run_page_status"] = status
        while time.perf_counter() - started < watch_s:
            time.sleep(0.2)
        status, body = _get(f"http://127.0.0.1:{port}/api/runs", timeout=120)
        result["runs_after_watch"] = {
            r["run"]: {k: r.get(k) for k in ("events", "indexing", "damaged")} for r in body.get("runs", [])
        }
        result["peak_rss_mb"] = _hwm_mb(viewer.pid)
    finally:
        viewer.terminate()
        try:
            viewer.wait(10)
        except subprocess.TimeoutExpired:
            viewer.kill()
            viewer.wait()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, help="a run directory")
    parser.add_argument("--make", action="store_true", help="make a run first (~5 s)")
    parser.add_argument("--huge", default="2G", help="size of the damaged copy's trace (truncate -s)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["index", "export", "viewer"])
    parser.add_argument("--repeat", type=int, default=3, help="cold indexes, the best one kept (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        run_dir = make_run(scratch / "made") if args.make else args.run
        if run_dir is None:
            parser.error("give --run RUN_DIR or --make")
        import bdi_rl

        result: dict[str, object] = {
            "bdi_rl": str(Path(bdi_rl.__file__).parent),
            "run": run_dir.name,
            "trace_mb": (run_dir / "trace.jsonl").stat().st_size / 2**20,
        }
        if "index" not in args.skip:
            result.update(measure_index(run_dir, args.repeat))
        if "export" not in args.skip:
            result.update(measure_export(run_dir, scratch))
        if "viewer" not in args.skip:
            result["viewer"] = measure_viewer(run_dir, scratch, args.huge)
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
