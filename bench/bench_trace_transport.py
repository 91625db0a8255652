"""Trace events/s from K learner processes into the telemetry JSONL over a real ejabberd.

Starts a private ejabberd (Debian's, configured by compose/ejabberd.yml, as the tests do), one
`bdi-rl telemetry` process and K `bdi-rl agent` processes running episode-mode learners with
step-level tracing (each env step's Q-update a row of a ``steps`` record), then reads the
trace back: events/s is the learners' lines over the span between their first and last line
(a ``steps`` line counts once, however many events it holds: in trace format 1 every event
was a line), and "lost" compares what each agent says it emitted (``agent.stop``'s
``emitted``: its lines) with what the file holds.

    python bench/bench_trace_transport.py --learners 2 --episodes 3000

``--flood N`` measures the transport's capacity instead: K ``bench/trace_flood.py`` processes
each emit N ``rl.step`` events through the real tracer and shipper as fast as acknowledgements
allow; events/s is every flooder's lines over the span from the first emitted event to the
last acknowledgement (so written to the JSONL), and "lost" is checked the same way. In trace
format 2 the tracer keeps those events in its open step record, which becomes one ``steps``
line when it closes (see trace_flood.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.ejabberd import remove, start_ejabberd  # noqa: E402

SPEC = """
name = "transport"
episodes = {episodes}
eval_episodes = 1
seed = 1
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "8x8", is_slippery = true }}
max_episode_steps = 200

[[agents]]
name = "learner"
count = {learners}
mode = "episode"

[telemetry]
name = "telemetry-bench"
"""


def _beam_pid(node: str) -> int:
    return int(
        subprocess.run(["pgrep", "-f", f"beam.smp.*{node}"], capture_output=True, text=True, check=True).stdout.split()[
            0
        ]
    )


def cpu_seconds(pid: int) -> float:
    """User and system CPU of a running process so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_cpu(proc: subprocess.Popen) -> float:
    """Wait for ``proc``; its user + system CPU seconds."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def _count(trace: Path, names: list[str]) -> tuple[Counter, dict[str, int], float, float]:
    """Events per agent, what each agent says it emitted, and the first and last ts, read
    by bytes (parsing millions of lines would take longer than the run)."""
    held: Counter = Counter()
    emitted: dict[str, int] = {}
    markers = {f'"agent":"{name}@'.encode(): f"{name}@localhost" for name in names}
    first = last = None
    with open(trace, "rb") as f:
        for line in f:
            for marker, agent in markers.items():
                if marker in line:
                    held[agent] += 1
                    if first is None or b'"kind":"agent.stop"' in line or b'"kind":"agent.start"' in line:
                        event = orjson.loads(line)
                        first = event["ts"] if first is None else min(first, event["ts"])
                        last = event["ts"] if last is None else max(last, event["ts"])
                        if event["kind"] == "agent.stop":
                            emitted[agent] = event["data"]["emitted"]
                    break
    return held, emitted, first or 0.0, last or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument(
        "--flood", type=int, default=0, metavar="N", help="flood N events per process instead of running learners"
    )
    args = parser.parse_args()
    server = start_ejabberd()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            spec = Path(tmp) / "transport.toml"
            spec.write_text(SPEC.format(episodes=args.episodes, learners=args.learners))
            env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "bench"}
            common = ["--xmpp", f"localhost:{server.port}", "--runs", str(Path(tmp) / "runs")]
            cmd = [sys.executable, "-m", "bdi_rl"]
            telemetry = subprocess.Popen(
                [*cmd, "telemetry", str(spec), *common], env=env, stdout=subprocess.PIPE, text=True
            )
            names = [f"learner-{i}" for i in range(1, args.learners + 1)]
            beam = _beam_pid(server.node)
            beam_cpu = cpu_seconds(beam)
            if args.flood:
                flood = [
                    sys.executable,
                    str(ROOT / "bench" / "trace_flood.py"),
                    str(spec),
                    "--xmpp",
                    f"localhost:{server.port}",
                    "--events",
                    str(args.flood),
                ]
                learners = [
                    subprocess.Popen([*flood, "--name", name], env=env, stdout=subprocess.PIPE, text=True)
                    for name in names
                ]
                spans = [tuple(float(x) for x in proc.stdout.read().split()[:2]) for proc in learners]
            else:
                learners = [
                    subprocess.Popen([*cmd, "agent", str(spec), "--name", name, *common], env=env) for name in names
                ]
            sender_cpu = sum(_wait_cpu(proc) for proc in learners)
            beam_cpu = cpu_seconds(beam) - beam_cpu
            out = telemetry.stdout.read()
            telemetry_cpu = _wait_cpu(telemetry)
            run_dir = Path(out.strip().splitlines()[-1])
            held, emitted, first_ts, last_ts = _count(run_dir / "trace.jsonl", names)
            lost = sum(emitted[a] - held[a] for a in emitted)
            total = sum(held.values())
            span = max(end for _, end in spans) - min(start for start, _ in spans) if args.flood else last_ts - first_ts
            kind = "flood" if args.flood else "learner"
            print(
                f"{args.learners} {kind} processes, {total:,} events in {span:.2f} s: "
                f"{total / span:,.0f} events/s, lost {lost}"
            )
            per_event = {"senders": sender_cpu, "ejabberd": beam_cpu, "telemetry": telemetry_cpu}
            print("CPU per event: " + ", ".join(f"{k} {v / total * 1e6:.2f} µs" for k, v in per_event.items()))
    finally:
        remove(server)


if __name__ == "__main__":
    main()
