"""The run as Jason's multi-agent system (issue 27, bdi_rl/xmpp/society.py), through the real
``bdi-rl run`` (telemetry, SPADE agents; the embedded XMPP server, whose accounts are made
up front, and ejabberd, where agents register): a coordinator lists the run's agents,
broadcasts to them, creates an agent from a plan file beside its own, talks to it, kills
it, and ends the run with ``.stopMAS`` while two learners still train.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bdi_rl.trace.reading import check_trace, read_trace
from tests.conftest import ASL, MINIMAL_SPEC, run_cli

BOSS = """
!start.
+!start <- .all_names(L); .sort(L, S); .print(S); .broadcast(tell, go);
   .create_agent(helper, "helpers/helper.asl"); .send(helper, achieve, ping).
+pong[source(H)] <- .print("pong from ", H); .kill_agent(helper); .all_names(L); .length(L, N);
   .print(N, " agents"); !tell_helper.
+!tell_helper <- .send(helper, tell, late).
-!tell_helper[error(E)] <- .print("helper is gone: ", E); .stopMAS.
"""
HELPER = '+!ping[source(S)] <- .print("ping from ", S); .send(S, tell, pong).\n'


@pytest.mark.slow
@pytest.mark.parametrize("server", ["embedded", "ejabberd"])
def test_create_kill_broadcast_and_stop_mas_in_a_run(tmp_path: Path, server: str, request, monkeypatch) -> None:
    (tmp_path / "boss.asl").write_text(BOSS)
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "helper.asl").write_text(HELPER)
    learner = (ASL / "learner.asl").read_text() + '+go[source(B)] <- .print("go from ", B).\n'
    (tmp_path / "learner.asl").write_text(learner)
    (tmp_path / "lib").symlink_to(ASL / "lib")
    xmpp = ""
    if server == "ejabberd":
        monkeypatch.setenv("BDI_RL_XMPP_PASSWORD", "pw")
        xmpp = f'[xmpp]\nserver = "localhost:{request.getfixturevalue("ejabberd").port}"\n'
    spec = tmp_path / "spec.toml"
    spec.write_text(
        MINIMAL_SPEC.split("[[agents]]")[0].replace("episodes = 20", "episodes = 1000000")
        + '[[agents]]\nname = "boss"\nrole = "coordinator"\nasl = "boss.asl"\n'
        + '[[agents]]\nname = "worker"\ncount = 2\nasl = "learner.asl"\n'
        + xmpp
    )
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=300)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert lines[0] == '[boss@localhost] ["boss@localhost","worker-1@localhost","worker-2@localhost"]'
    assert sorted(lines[1:3]) == [f"[worker-{i}@localhost] go from boss@localhost" for i in (1, 2)]
    assert lines[3:] == [
        "[helper@localhost] ping from boss@localhost",
        "[boss@localhost] pong from helper@localhost",
        "[boss@localhost] 3 agents",
        "[boss@localhost] helper is gone: receiver_not_found",
    ]
    run_dir = next((tmp_path / "runs").iterdir())
    check_trace(run_dir / "trace.jsonl", run_dir.name)  # the created agent's events are whole
    events = list(read_trace(run_dir / "trace.jsonl"))
    starts = {e["agent"]: e["data"] for e in events if e["kind"] == "agent.start"}
    stops = {e["agent"]: e["data"]["reason"] for e in events if e["kind"] == "agent.stop"}
    assert starts["helper@localhost"] == {"jid": "helper@localhost", "asl": str(tmp_path / "helpers" / "helper.asl")}
    stopped = "stopped by .stopMAS of boss@localhost"
    assert stops == {
        "helper@localhost": "killed by boss@localhost",
        "boss@localhost": stopped,
        "worker-1@localhost": stopped,
        "worker-2@localhost": stopped,
    }
    summary = json.loads((run_dir / "summary.json").read_text())["agents"]
    assert summary["helper"] == {
        "role": "created",
        "created_by": "boss@localhost",
        "asl": str(tmp_path / "helpers" / "helper.asl"),
        "stopped": "killed by boss@localhost",
    }
    for name in ("worker-1", "worker-2"):
        assert summary[name]["stopped"] == stopped and "failure" not in summary[name]
        assert summary[name]["episodes"] < 1000000
        assert (run_dir / summary[name]["qtable"]).is_file()  # what it learned is kept
    assert summary["boss"] == {"role": "coordinator", "stopped": stopped}
