"""Trace events/s from K learner processes into the telemetry JSONL over a real ejabberd.

Starts a private ejabberd (Debian's, configured by compose/ejabberd.yml, as the tests do), one
`bdi-rl telemetry` process and K `bdi-rl agent` processes running episode-mode learners with
step-level tracing (one rl.step event per env step), then reads the trace back: events/s is
the learners' events over the span between their first and last event, and "lost" compares
what each agent says it emitted with what the file holds.

    python bench/bench_trace_transport.py --learners 2 --episodes 3000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bdi_rl.trace import read_trace  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=3000)
    args = parser.parse_args()
    server = start_ejabberd()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            spec = Path(tmp) / "transport.toml"
            spec.write_text(SPEC.format(episodes=args.episodes, learners=args.learners))
            env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "bench"}
            common = ["--xmpp", f"localhost:{server.port}", "--runs", str(Path(tmp) / "runs")]
            cmd = [sys.executable, "-m", "bdi_rl"]
            telemetry = subprocess.Popen([*cmd, "telemetry", str(spec), *common], env=env,
                                         stdout=subprocess.PIPE, text=True)
            learners = [subprocess.Popen([*cmd, "agent", str(spec), "--name", f"learner-{i}", *common],
                                         env=env) for i in range(1, args.learners + 1)]
            for proc in learners:
                proc.wait()
            out, _ = telemetry.communicate(timeout=120)
            run_dir = Path(out.strip().splitlines()[-1])
            events = [e for e in read_trace(run_dir / "trace.jsonl") if e["agent"].startswith("learner")]
            emitted = {e["agent"]: e["data"]["emitted"] for e in events if e["kind"] == "agent.stop"}
            held = Counter(e["agent"] for e in events)
            lost = sum(emitted[a] - held[a] for a in emitted)
            span = max(e["ts"] for e in events) - min(e["ts"] for e in events)
            print(f"{args.learners} learner processes, {len(events):,} events in {span:.2f} s: "
                  f"{len(events) / span:,.0f} events/s, lost {lost}")
    finally:
        remove(server)


if __name__ == "__main__":
    main()
