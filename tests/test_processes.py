"""Every role in its own process, over a real ejabberd: one run, one directory, no lost event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from bdi_rl.trace import read_trace
from tests.conftest import MINIMAL_SPEC

SPEC = MINIMAL_SPEC.replace('name = "learner"', 'name = "proc"\ncount = 2') + """
[telemetry]
name = "telemetry-procs"
"""


def _start(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bdi_rl", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_agents_and_telemetry_in_separate_processes(ejabberd, tmp_path, write_spec):
    spec = write_spec(SPEC.replace("episodes = 20", "episodes = 60"))
    runs = tmp_path / "runs"
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    xmpp = ["--xmpp", f"localhost:{ejabberd.port}", "--runs", str(runs)]
    # The learners start first: they must wait for telemetry instead of failing or losing events.
    learners = [_start("agent", str(spec), "--name", name, *xmpp, env=env)
                for name in ("proc-1", "proc-2")]
    telemetry = _start("telemetry", str(spec), *xmpp, env=env)
    try:
        for proc in learners:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
        out, err = telemetry.communicate(timeout=60)
        assert telemetry.returncode == 0, err
    finally:
        for proc in [*learners, telemetry]:
            if proc.poll() is None:
                proc.kill()
    run_dir = Path(out.strip().splitlines()[-1])
    assert run_dir.parent == runs and (run_dir / "spec.toml").is_file()

    events = read_trace(run_dir / "trace.jsonl")
    seqs: dict[str, list[int]] = defaultdict(list)
    for event in events:
        assert event["run"] == run_dir.name
        seqs[event["agent"]].append(event["seq"])
    for name in ("proc-1", "proc-2"):
        jid = f"{name}@localhost"
        assert seqs[jid] == list(range(len(seqs[jid])))
        stop = [e for e in events if e["agent"] == jid and e["kind"] == "agent.stop"]
        assert stop and stop[0]["data"]["emitted"] == len(seqs[jid])  # every emitted event, once
        assert (run_dir / "qtables" / f"{name}.npz").is_file()

    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(summary["agents"]) == {"proc-1", "proc-2"}
    for agent in summary["agents"].values():
        assert agent["episodes"] == 60 and agent["eval"]["episodes"] == 10
        assert agent["qtable"] == f"qtables/{'proc-1' if agent is summary['agents']['proc-1'] else 'proc-2'}.npz"


def test_roles_need_a_password(tmp_path, write_spec):
    spec = write_spec(SPEC)
    env = {k: v for k, v in os.environ.items() if k != "BDI_RL_XMPP_PASSWORD"}
    result = subprocess.run([sys.executable, "-m", "bdi_rl", "telemetry", str(spec), "--xmpp",
                             "localhost:5222", "--runs", str(tmp_path / "runs")],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "BDI_RL_XMPP_PASSWORD" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()
