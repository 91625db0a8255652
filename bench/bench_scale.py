"""Many learners in one process: start time, total env steps/s and memory per agent.

For each N, a fresh process runs ``bdi-rl run``'s path (embedded XMPP server, telemetry,
trace at ``episode`` level) with N learners of ``asl/learner.asl`` in episode mode on
FrozenLake 4x4, each for ``--episodes`` episodes, and reports:

- start: seconds from the start of ``run_experiment`` until every learner has finished its
  first episode (server, telemetry, N agents connected and released);
- env steps/s: all learners' training steps over the training wall time (the summary's);
- RSS per agent: (peak RSS - RSS after imports) / N;

and, in another fresh process, N idle BDI agents (a plan file with a belief and no goal)
with the embedded server and telemetry:

- connect: seconds until all N have started (XMPP connection, login, presence; the server
  holds their accounts, as in ``bdi-rl run``);
- idle CPU: the whole process's CPU time over ``--idle-seconds`` of wall time, as a
  fraction of one core.

    python bench/bench_scale.py --agents 10 50 100 200 --episodes 200

Targets (roadmap, issue 6): 200 learners learning on 2 cores with per-agent memory reported;
start 100 agents < 10 s; 100 idle agents < 5 % of one core.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(n: int, episodes: int) -> dict[str, float]:
    from spade.container import Container

    from bdi_rl.cli import prepare_agent_process
    from bdi_rl.rl.qlearning import LearningConfig
    from bdi_rl.spec import AgentGroup, EnvSpec, ExperimentSpec, _validate
    from bdi_rl.xmpp.runner import run_experiment

    prepare_agent_process()
    spec = ExperimentSpec(
        name="bench-scale",
        env=EnvSpec(id="FrozenLake-v1", kwargs={"map_name": "4x4", "is_slippery": True}),
        agents=[AgentGroup(name="learner", count=n, mode="episode", asl=str(ROOT / "asl" / "learner.asl"))],
        episodes=episodes,
        seed=1,
        trace="episode",
        eval_episodes=1,
        checkpoint_every=0,
        learning=LearningConfig(epsilon_decay_episodes=max(1, episodes // 2)),
    )
    _validate(spec)
    base = _rss_mb()
    first_episode: dict[int, float] = {}

    def on_episode(session: object) -> None:
        first_episode.setdefault(id(session), time.perf_counter())

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as runs:
        result = Container().loop.run_until_complete(run_experiment(spec, Path(runs), on_episode=on_episode))
    if result.failures:
        raise SystemExit(f"bench run failed: {result.failures}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "agents": n,
        "start_s": max(first_episode.values()) - started,
        "steps_per_s": float(result.summary["env_steps_per_second"]),
        "wall_s": float(result.summary["wall_seconds"]),
        "rss_per_agent_mb": (peak - base) / n,
        "peak_rss_mb": peak,
    }


IDLE_ASL = "ready.\n"


def idle_child(n: int, seconds: float) -> dict[str, float]:
    import asyncio

    from spade.container import Container

    from bdi_rl.cli import prepare_agent_process
    from bdi_rl.trace.kinds import TraceLevel
    from bdi_rl.trace.tracer import Tracer
    from bdi_rl.xmpp.agent import TracedBdiAgent
    from bdi_rl.xmpp.server import EmbeddedXmppServer, free_port
    from bdi_rl.xmpp.telemetry import TelemetryAgent

    prepare_agent_process()

    async def measure(tmp: Path) -> dict[str, float]:
        asl = tmp / "idle.asl"
        asl.write_text(IDLE_ASL)
        # As bdi-rl run: the server holds every agent's account, nobody registers.
        accounts = {"telemetry": "pw", **{f"idle-{i}": "pw" for i in range(n)}}
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp / "xmpp", accounts=accounts)
        await server.start()
        (tmp / "idle-run").mkdir()
        telemetry = TelemetryAgent(f"telemetry@{server.domain}", "pw", port=server.port)
        await telemetry.start(auto_register=False)
        telemetry.open_trace(tmp / "idle-run" / "trace.jsonl")
        agents = [
            TracedBdiAgent(
                f"idle-{i}@{server.domain}",
                "pw",
                str(asl),
                tracer=Tracer("idle-run", f"idle-{i}@{server.domain}", TraceLevel.EPISODE),
                telemetry=f"telemetry@{server.domain}",
                port=server.port,
            )
            for i in range(n)
        ]
        started = time.perf_counter()
        await asyncio.gather(*(agent.start(auto_register=False) for agent in agents))
        connect = time.perf_counter() - started
        await asyncio.sleep(2.0)  # let start-up traffic settle
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        idle = (time.process_time() - cpu) / (time.perf_counter() - wall)
        await asyncio.gather(*(agent.stop() for agent in agents), return_exceptions=True)
        await telemetry.stop()
        await server.stop()
        return {"connect_s": connect, "idle_core": idle}

    with tempfile.TemporaryDirectory() as tmp:
        return Container().loop.run_until_complete(measure(Path(tmp)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[10, 50, 100, 200])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--idle-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.episodes)))
        return
    if args.idle_child:
        print(json.dumps(idle_child(args.idle_child, args.idle_seconds)))
        return
    print(
        f"{'agents':>6} {'start s':>8} {'env steps/s':>12} {'wall s':>8} {'RSS/agent MB':>13} "
        f"{'peak RSS MB':>12} {'connect s':>10} {'idle CPU':>9}"
    )
    for n in args.agents:
        r = _in_child("--child", n, "--episodes", args.episodes)
        idle = _in_child("--idle-child", n, "--idle-seconds", args.idle_seconds)
        if r is None or idle is None:
            continue
        print(
            f"{n:>6} {r['start_s']:8.2f} {r['steps_per_s']:12,.0f} {r['wall_s']:8.1f} "
            f"{r['rss_per_agent_mb']:13.2f} {r['peak_rss_mb']:12.0f} {idle['connect_s']:10.2f} "
            f"{idle['idle_core']:9.1%}",
            flush=True,
        )


def _in_child(*args: object) -> dict[str, float] | None:
    """Run this script with ``args`` in a fresh process; its JSON result, or None (printed)."""
    out = subprocess.run([sys.executable, __file__, *map(str, args)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(f"{args} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
