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

``--checkout DIR`` (repeatable) runs each configuration with each checkout in turn (its
``bdi_rl`` on PYTHONPATH), interleaved within every round: before and after a change on the
same machine at the same time (``git archive <commit> | tar -x -C DIR``). ``--where`` picks
``one`` (one process), ``xmpp`` (over ejabberd) or both; ``--repeat-8`` runs the 8-agent
configuration over ejabberd that many more times per checkout and counts the failures.

    python bench/bench_world_throughput.py --rounds 3 --episodes 3000 --checkout /tmp/base --checkout .
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


def _bdi_rl(*args: str, tree: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**(env or os.environ), "PYTHONPATH": str(tree)}
    return subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", *args],
        cwd=tree,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def one_process(spec: Path, runs: Path, tree: Path = ROOT) -> float:
    proc = _bdi_rl("run", str(spec), "--runs", str(runs), "--no-progress", tree=tree)
    _, err = proc.communicate(timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"bdi-rl run failed: {err}")
    [run] = [p for p in runs.iterdir() if p.is_dir()]
    return json.loads((run / "summary.json").read_text())["env_steps_per_second"]


class RunFailed(Exception):
    pass


def across_processes(spec: Path, runs: Path, n: int, port: int, tree: Path = ROOT) -> float:
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "bench"}
    xmpp = ["--xmpp", f"localhost:{port}", "--runs", str(runs)]
    procs = [
        _bdi_rl("agent", str(spec), "--name", name, *xmpp, tree=tree, env=env)
        for name in ["world", *(f"p-{i}" for i in range(1, n + 1))]
    ]
    telemetry = _bdi_rl("telemetry", str(spec), *xmpp, tree=tree, env=env)
    try:
        for proc in procs:
            _, err = proc.communicate(timeout=1800)
            if proc.returncode != 0:
                raise RunFailed(f"bdi-rl agent failed: {err.strip().splitlines()[-1:]}")
        out, err = telemetry.communicate(timeout=300)
        if telemetry.returncode != 0:
            raise RunFailed(f"bdi-rl telemetry failed: {err.strip().splitlines()[-1:]}")
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
    parser.add_argument("--checkout", type=Path, action="append", help="a checkout to run (repeatable)")
    parser.add_argument("--where", choices=["one", "xmpp", "both"], default="both")
    parser.add_argument("--repeat-8", type=int, default=0, help="more 8-agent runs over ejabberd, failures counted")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.checkout or [ROOT]]
    wheres = {"one": ["one process"], "xmpp": ["over ejabberd"], "both": ["one process", "over ejabberd"]}[args.where]
    server = start_ejabberd()
    results: dict[tuple[str, int, Path], list[float]] = {}
    failures: dict[Path, list[str]] = {tree: [] for tree in trees}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                for n in args.sizes:
                    spec = Path(tmp) / f"consensus-{n}.toml"
                    spec.write_text(SPEC.format(n=n, episodes=args.episodes))
                    for where in wheres:
                        for t, tree in enumerate(trees):
                            runs = Path(tmp) / f"runs-{r}-{n}-{where.replace(' ', '-')}-{t}"
                            runs.mkdir()
                            try:
                                if where == "one process":
                                    steps = one_process(spec, runs, tree)
                                else:
                                    steps = across_processes(spec, runs, n, server.port, tree)
                            except RunFailed as exc:
                                failures[tree].append(f"round {r + 1}, {n} agents, {where}: {exc}")
                                print(f"{tree}: {failures[tree][-1]}", file=sys.stderr, flush=True)
                                continue
                            results.setdefault((where, n, tree), []).append(steps / n)
                            print(
                                f"round {r + 1}, {n} agents, {where}, {tree}: {steps / n:,.0f} joint steps/s",
                                file=sys.stderr,
                                flush=True,
                            )
            spec = Path(tmp) / "consensus-8.toml"
            spec.write_text(SPEC.format(n=8, episodes=args.episodes))
            for i in range(args.repeat_8):
                for t, tree in enumerate(trees):
                    runs = Path(tmp) / f"repeat-{i}-{t}"
                    runs.mkdir()
                    try:
                        steps = across_processes(spec, runs, 8, server.port, tree)
                        print(f"repeat {i + 1}, 8 agents, {tree}: {steps / 8:,.0f} joint steps/s", file=sys.stderr)
                    except RunFailed as exc:
                        failures[tree].append(f"repeat {i + 1}: {exc}")
                        print(f"{tree}: {failures[tree][-1]}", file=sys.stderr, flush=True)
    finally:
        server.stop()
        remove(server)
    header = " | ".join(f"{where}: joint steps/s ({tree.name})" for where in wheres for tree in trees)
    print(f"| agents | {header} |")
    print("|---:|" + "---:|" * (len(wheres) * len(trees)))
    for n in args.sizes:
        cells = []
        for where in wheres:
            for tree in trees:
                values = results.get((where, n, tree), [])
                median = f"{statistics.median(values):,.0f}" if values else "-"
                cells.append(f"{median} ({', '.join(f'{v:,.0f}' for v in values)})")
        print(f"| {n} | {' | '.join(cells)} |")
    for tree in trees:
        print(f"{tree.name}: {len(failures[tree])} failed runs" + "".join(f"\n  {f}" for f in failures[tree]))


if __name__ == "__main__":
    main()
