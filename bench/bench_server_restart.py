"""How a run rides out an ejabberd restart: reconnection delay, backlog, drain rate, loss.

Starts a private ejabberd (as the tests do), one `bdi-rl telemetry` and one `bdi-rl agent`
process (a step-mode FrozenLake 4x4 learner with step-level tracing; it emitted ~60k lines/s
in trace format 1, where every event was a line, and far fewer in format 2, whose ``steps``
lines hold up to 4096 events each),
stops ejabberd once the trace holds ``--after-mb`` MB, starts it again ``--down`` s later, then
reads the trace back:

- reconnected: seconds from the start of ``ejabberdctl start`` to the learner's and telemetry's
  ``reconnected to the XMPP server`` log lines (stamped as they are read);
- backlog: lines the learner held when it reconnected (all it emitted minus what was written);
- drain: seconds from the reconnection until telemetry had written every line (the
  learner finishes during the outage with these settings, so its exit marks the end);
- lost / duplicated: checked against the count the learner says it emitted.

    python bench/bench_server_restart.py --episodes 4000 --down 3
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.ejabberd import remove, start_ejabberd  # noqa: E402

SPEC = """
name = "restart"
episodes = {episodes}
eval_episodes = 1
seed = 1
trace = "step"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "4x4", is_slippery = false }}

[[agents]]
name = "phoenix"

[telemetry]
name = "telemetry-restart"
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=4000)
    parser.add_argument("--down", type=float, default=3.0, help="seconds between stop and start")
    parser.add_argument("--after-mb", type=float, default=2.0, help="trace size at which to stop")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bdi-rl-restart-"))
    spec = work / "spec.toml"
    spec.write_text(SPEC.format(episodes=args.episodes))
    server = start_ejabberd()
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "bench"}
    xmpp = ["--xmpp", f"localhost:{server.port}", "--runs", str(work / "runs")]
    role = [sys.executable, "-m", "bdi_rl"]
    telemetry = subprocess.Popen(
        [*role, "telemetry", str(spec), *xmpp], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    learner = subprocess.Popen(
        [*role, "agent", str(spec), "--name", "phoenix", *xmpp],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: dict[str, list[tuple[float, str]]] = {"telemetry": [], "learner": []}
    readers = [
        threading.Thread(target=_stamp, args=(proc.stderr, lines[name]), daemon=True)
        for name, proc in (("telemetry", telemetry), ("learner", learner))
    ]
    for reader in readers:
        reader.start()
    try:
        trace = None
        while trace is None or trace.stat().st_size < args.after_mb * 1e6:
            found = list((work / "runs").glob("*/trace.jsonl"))
            trace = found[0] if found else None
            time.sleep(0.05)
        stop_began = time.time()
        server.stop()
        stopped = time.time()
        time.sleep(args.down)
        starting = time.time()
        server.start()
        up = time.time()
        # Telemetry cannot write while the server is away: what the file holds now is what
        # got through before the outage.
        written_before = trace.read_bytes().count(b'"agent":"phoenix@localhost"')
        learner.wait(timeout=600)
        learner_done = time.time()
        telemetry.wait(timeout=120)
        for reader in readers:
            reader.join(timeout=10)
    finally:
        for proc in (learner, telemetry):
            if proc.poll() is None:
                proc.kill()
        remove(server)

    events = [orjson.loads(line) for line in trace.read_bytes().splitlines()]
    mine = [e for e in events if e["agent"] == "phoenix@localhost"]
    stop = next(e for e in mine if e["kind"] == "agent.stop")
    emitted = stop["data"]["emitted"]
    seqs = [e["seq"] for e in mine]
    print(
        f"ejabberdctl: stop took {stopped - stop_began:.1f} s, then {args.down:.1f} s down; "
        f"start reported the server up after {up - starting:.1f} s"
    )
    back = {}
    for name, stamped in lines.items():
        times = [t for t, line in stamped if "reconnected to the XMPP server" in line]
        back[name] = times[-1]
        print(
            f"{name}: {len(times)} reconnections; the last {times[-1] - starting:.2f} s after ejabberdctl start began"
        )
    print(
        f"learner: {written_before} events written before the outage, {emitted} emitted in all "
        f"(it finished during the outage: {stop['ts'] < up})"
    )
    drain = learner_done - back["learner"]
    print(
        f"drained {emitted - written_before} events in {drain:.1f} s after reconnecting "
        f"({(emitted - written_before) / drain / 1000:.1f}k events/s)"
    )
    print(
        f"lost {emitted - len(set(seqs))}, duplicated {len(seqs) - len(set(seqs))}, "
        f"gapless {seqs == list(range(len(seqs)))}"
    )
    print(f"run in {trace.parent}")


def _stamp(stream, into: list[tuple[float, str]]) -> None:
    for line in stream:
        into.append((time.time(), line))


if __name__ == "__main__":
    main()
