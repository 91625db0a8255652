"""Is ``env_steps_per_second`` in summary.json what users think it is (issue 33)?

For N learners in one ``bdi-rl run`` (embedded server, episode mode, FrozenLake 4x4, trace at
``episode`` level) and for a run continued with ``--resume``, this compares the summary's figure
with one measured from the trace alone: all learners' env steps (``episode.end`` lengths) over
the time from the first episode's end to the last one's, plus the first learner's shortest
time between two of its episodes' ends (for its first episode, which ended first). It also
prints what the old definition (all steps over the longest single learner's training) said.

    python bench/bench_speed_figure.py --learners 1 100 1000 --episodes 200
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

SPEC = """
name = "speed-figure"
episodes = {episodes}
eval_episodes = 10
seed = 1
trace = "episode"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "4x4", is_slippery = true }}

[[agents]]
name = "learner"
count = {count}
"""


def _from_trace(run: Path, after_resume: bool) -> tuple[int, float]:
    """Env steps and the training phase's seconds (after the last ``run.resume``)."""
    steps, ends = 0, list[tuple[float, str]]()
    with (run / "trace.jsonl").open("rb") as f:
        for line in f:
            if b'"run.resume"' in line and after_resume:
                steps, ends = 0, []
            elif b'"episode.end"' in line:
                event = orjson.loads(line)
                steps += event["data"]["length"]
                ends.append((event["ts"], event["agent"]))
    first_ts, first_agent = min(ends)
    own = sorted(ts for ts, agent in ends if agent == first_agent)
    first_episode = min(b - a for a, b in zip(own, own[1:], strict=False))
    return steps, max(ends)[0] - first_ts + first_episode


def _report(label: str, run: Path, resumed: bool) -> None:
    summary = json.loads((run / "summary.json").read_text())
    steps, seconds = _from_trace(run, resumed)
    agents = [a for a in summary["agents"].values() if "env_steps_per_second" in a]
    longest = max(a["env_steps"] / a["env_steps_per_second"] for a in agents) if not resumed else float("nan")
    measured = steps / seconds
    print(
        f"| {label} | {steps:,} | {summary['env_steps_per_second']:,.0f} | {measured:,.0f} | "
        f"{summary['env_steps_per_second'] / measured:.3f} | {steps / longest:,.0f} |",
        flush=True,
    )


def _run(args: list[str], cwd: Path) -> Path:
    result = subprocess.run(
        [sys.executable, "-m", "bdi_rl", "run", *args, "--runs", "runs", "--no-progress"],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        sys.exit(f"bdi-rl run {' '.join(args)} failed: {result.stderr.strip().splitlines()[-1:]}")
    return cwd / result.stdout.strip().splitlines()[-1]


def _resumed(cwd: Path, episodes: int) -> Path:
    """One learner stopped (Ctrl-C) a third of the way in, then continued with --resume."""
    (cwd / "long.toml").write_text(SPEC.format(episodes=episodes, count=1))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "run", "long.toml", "--runs", "runs", "--no-progress"],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    runs = cwd / "runs"
    while not runs.is_dir() or not any(runs.glob("*/trace.jsonl")):
        time.sleep(0.05)
    (trace,) = runs.glob("*/trace.jsonl")
    while trace.read_bytes().count(b'"episode.end"') < episodes // 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    return _run(["--resume", str(trace.parent)], cwd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--resume-episodes", type=int, default=60_000)
    args = parser.parse_args()
    print("| run | env steps | summary steps/s | trace steps/s | summary / trace | old definition |")
    print("|---|---:|---:|---:|---:|---:|")
    for n in args.learners:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            (cwd / "spec.toml").write_text(SPEC.format(episodes=args.episodes, count=n))
            _report(f"{n} learner{'s' if n > 1 else ''}", _run(["spec.toml"], cwd), resumed=False)
    with tempfile.TemporaryDirectory() as tmp:
        _report("1 learner, resumed part", _resumed(Path(tmp), args.resume_episodes), resumed=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
