"""Shared-world throughput: joint env steps per second with 2, 4 and 8 agents, in one process
and across processes over ejabberd.

The world is ``consensus_game_v0`` (n players, 2 actions, one step per episode: the world
itself costs next to nothing, so the figure is the price of one step for all: every agent's
reasoning cycle, the barrier, the joint step, each learner's update and percepts). Agents
run ``asl/learner.asl``; the trace is at ``episode`` level.

- ``one process``: ``bdi-rl run`` (the world agent in the run's process, called directly);
- ``over ejabberd``: a private ejabberd (as the tests start it), ``bdi-rl telemetry``, the
  world agent and every player in a process of its own (``bdi-rl agent --name``): every
  choice and every answer is an XMPP message.

The figure is joint steps over training time (``summary.json``: all agents' env steps per
second, divided by n). Sizes run interleaved: 2 4 8 2 4 8 ... for ``--rounds``.

    python bench/bench_world_throughput.py --rounds 2 --episodes 2000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.ejabberd import remove, start_ejabberd  # noqa: E402

SPEC = """
name = "consensus-{n}"
seed = 0
episodes = {episodes}
eval_episodes = 1
trace = "episode"
checkpoint_every = 0

[env]
id = "consensus_game_v0"
kwargs = {{ n = {n}, actions = 2 }}

[world]

[learning]
epsilon_decay_episodes = {episodes}

[[agents]]
name = "p"
count = {n}
"""


def _bdi_rl(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", *args],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def one_process(spec: Path, runs: Path) -> float:
    proc = _bdi_rl("run", str(spec), "--runs", str(runs), "--no-progress")
    _, err = proc.communicate(timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"bdi-rl run failed: {err}")
    [run] = [p for p in runs.iterdir() if p.is_dir()]
    return json.loads((run / "summary.json").read_text())["env_steps_per_second"]


def across_processes(spec: Path, runs: Path, n: int, port: int) -> float:
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "bench"}
    xmpp = ["--xmpp", f"localhost:{port}", "--runs", str(runs)]
    procs = [
        _bdi_rl("agent", str(spec), "--name", name, *xmpp, env=env)
        for name in ["world", *(f"p-{i}" for i in range(1, n + 1))]
    ]
    telemetry = _bdi_rl("telemetry", str(spec), *xmpp, env=env)
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=1800)
            if proc.returncode != 0:
                raise SystemExit(f"bdi-rl agent failed: {err}")
        out, err = telemetry.communicate(timeout=300)
        if telemetry.returncode != 0:
            raise SystemExit(f"bdi-rl telemetry failed: {err}")
    finally:
        for proc in (*procs, telemetry):
            if proc.poll() is None:
                proc.kill()
    run = Path(out.strip().splitlines()[-1])
    return json.loads((run / "summary.json").read_text())["env_steps_per_second"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=2000, help="joint steps per run")
    args = parser.parse_args()
    server = start_ejabberd()
    results: dict[tuple[str, int], list[float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                for n in args.sizes:
                    spec = Path(tmp) / f"consensus-{n}.toml"
                    spec.write_text(SPEC.format(n=n, episodes=args.episodes))
                    for where in ("one process", "over ejabberd"):
                        runs = Path(tmp) / f"runs-{r}-{n}-{where.replace(' ', '-')}"
                        runs.mkdir()
                        if where == "one process":
                            steps = one_process(spec, runs)
                        else:
                            steps = across_processes(spec, runs, n, server.port)
                        results.setdefault((where, n), []).append(steps / n)
                        print(
                            f"round {r + 1}, {n} agents, {where}: {steps / n:,.0f} joint steps/s",
                            file=sys.stderr,
                            flush=True,
                        )
    finally:
        server.stop()
        remove(server)
    print("| agents | one process: joint steps/s | over ejabberd (a process each): joint steps/s |")
    print("|---:|---:|---:|")
    for n in args.sizes:
        cells = []
        for where in ("one process", "over ejabberd"):
            values = results[where, n]
            cells.append(f"{statistics.median(values):,.0f} ({', '.join(f'{v:,.0f}' for v in values)})")
        print(f"| {n} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
