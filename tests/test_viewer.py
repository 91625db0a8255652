"""The viewer's HTTP API over finished runs (``runs``: written as runs write them): content,
safety, read-only."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from pathlib import Path

import pytest
from aiohttp import web

from bdi_rl.readers.viewer import SECURITY_HEADERS, create_app
from bdi_rl.store import RunWriter
from bdi_rl.trace.reading import read_trace
from bdi_rl.xmpp.server import free_port
from tests.conftest import beliefs_after as _beliefs_after
from tests.conftest import run_named as _run_named


async def test_runs_list_describes_each_run(aiohttp_client, runs):
    client = await aiohttp_client(create_app(runs))
    response = await client.get("/api/runs")
    assert response.status == 200
    rows = {row["experiment"]: row for row in (await response.json())["runs"]}
    tiny = rows["tiny"]
    assert tiny["env"] == "FrozenLake-v1" and tiny["agents"] == ["learner@localhost"]
    assert tiny["episodes"] == 20 and tiny["learners"] == 1 and not tiny["live"]
    evaluated = tiny["final_eval"]  # return and success side by side, never one for the other
    assert isinstance(evaluated["mean_return"], float) and 0.0 <= evaluated["success_rate"] <= 1.0
    team = rows["team"]  # 3 learners of 60 episodes each: episodes per learner, not summed
    assert team["episodes"] == 60 and team["learners"] == 3 and team["final_eval"]["learners"] == 3
    assert tiny["run"] == _run_named(runs, "tiny").name


async def test_mind_at_any_position_is_what_the_trace_says(aiohttp_client, runs):
    run_dir = _run_named(runs, "tiny")
    events = [e for e in read_trace(run_dir / "trace.jsonl") if e["agent"] == "learner@localhost"]
    assert len(events) > 1200  # several mind snapshots (every 500 events) are crossed
    client = await aiohttp_client(create_app(runs))
    for position in (0, 1, 498, 499, 500, 501, 999, 1000, len(events) // 2, len(events) - 1):
        response = await client.get(f"/api/runs/{run_dir.name}/agents/learner/mind?pos={position}")
        assert response.status == 200
        mind = await response.json()
        assert {k: v for k, v in mind["event"].items() if k != "position"} == events[position]
        assert mind["event"]["position"] == position
        assert {b["belief"]: b["sources"] for b in mind["beliefs"]} == _beliefs_after(events, position)
    # Between two positions: what was added is marked new, what went is listed as removed.
    response = await client.get(f"/api/runs/{run_dir.name}/agents/learner/mind?pos=900&prev=800")
    mind = await response.json()
    before, after = _beliefs_after(events, 800), _beliefs_after(events, 900)
    assert {b["belief"] for b in mind["beliefs"] if b["new"]} == set(after) - set(before)
    assert set(mind["removed"]) == set(before) - set(after)
    assert [e["position"] for e in mind["changes"]] == list(range(801, 901))


async def test_learning_curves_come_from_the_episodes(aiohttp_client, runs):
    run_dir = _run_named(runs, "tiny")
    client = await aiohttp_client(create_app(runs))
    data = await (await client.get(f"/api/runs/{run_dir.name}")).json()
    episodes = data["agents"]["learner@localhost"]["episodes"]
    ends = [e for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == "episode.end"]
    assert [e["return"] for e in episodes] == [e["data"]["return"] for e in ends]
    assert [e["epsilon"] for e in episodes] == [e["data"]["epsilon"] for e in ends]


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/..",
        "/api/runs/%2e%2e",
        "/api/runs/..%2F..%2Fetc",
        "/api/runs/%2Fetc%2Fpasswd",
        "/api/runs/nope",
        "/run/..%2F..",
        "/static/..%2Fviewer.py",
        "/static/viewer.py",
    ],
)
async def test_paths_outside_the_runs_are_not_served(aiohttp_client, runs, path):
    client = await aiohttp_client(create_app(runs))
    response = await client.get(path)
    assert response.status == 404
    assert "root:" not in await response.text()
    for header, value in SECURITY_HEADERS.items():
        assert response.headers[header] == value


async def test_unknown_agents_and_bad_numbers_are_refused(aiohttp_client, runs):
    run = _run_named(runs, "tiny").name
    client = await aiohttp_client(create_app(runs))
    assert (await client.get(f"/api/runs/{run}/agents/..%2F..%2Fx/mind")).status == 404
    assert (await client.get(f"/api/runs/{run}/agents/ghost/mind")).status == 404
    response = await client.get(f"/api/runs/{run}/agents/learner/mind?pos=abc")
    assert response.status == 400 and "pos" in (await response.json())["error"]


async def test_read_only(aiohttp_client, runs):
    run = _run_named(runs, "tiny").name
    before = {p: p.stat().st_mtime_ns for p in runs.rglob("*")}
    client = await aiohttp_client(create_app(runs))
    for method in ("post", "put", "delete"):
        response = await getattr(client, method)(f"/api/runs/{run}")
        assert response.status == 405
    await client.get(f"/api/runs/{run}")
    assert {p: p.stat().st_mtime_ns for p in runs.rglob("*")} == before


async def test_pages_carry_a_strict_content_security_policy(aiohttp_client, runs):
    client = await aiohttp_client(create_app(runs))
    for path in ("/", f"/run/{_run_named(runs, 'hostile').name}", "/static/run.js"):
        response = await client.get(path)
        assert response.status == 200
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    # Hostile beliefs travel as JSON strings; the page renders them with textContent only.
    run = _run_named(runs, "hostile").name
    mind = await (await client.get(f"/api/runs/{run}/agents/learner/mind")).json()
    assert any("<script>" in b["belief"] for b in mind["beliefs"])
    scripts = "".join(
        (Path(__file__).parent.parent / "bdi_rl" / "readers" / "static" / name).read_text()
        for name in ("common.js", "runs.js", "run.js", "charts.js")
    )
    assert "innerHTML" not in scripts and "insertAdjacentHTML" not in scripts


async def test_qtable_of_a_grid_world(aiohttp_client, runs):
    import numpy as np

    from bdi_rl.rl.checkpoint import load_checkpoint

    run_dir = _run_named(runs, "tiny")
    client = await aiohttp_client(create_app(runs))
    grid = await (await client.get(f"/api/runs/{run_dir.name}/agents/learner/qtable")).json()
    q = load_checkpoint(run_dir / "qtables" / "learner.npz").q
    assert (grid["rows"], grid["cols"]) == (4, 4)
    assert grid["letters"][1][1] == "H" and grid["letters"][3][3] == "G"
    for s in range(16):
        cell = grid["max_q"][s // 4][s % 4]
        assert cell is None if np.ptp(q[s]) < 1e-6 else cell == q[s].max()
    # FrozenLake's action 2 is RIGHT: a greedy RIGHT shows as (1, 0).
    moves = {(s // 4, s % 4): grid["moves"][s // 4][s % 4] for s in range(16)}
    for s in range(16):
        if moves[(s // 4, s % 4)] is not None and q[s].argmax() == 2:
            assert moves[(s // 4, s % 4)] == [1, 0]
    hostile = _run_named(runs, "hostile").name
    missing = await (await client.get(f"/api/runs/{hostile}/agents/learner/qtable")).json()
    assert "no Q-table checkpoint" in missing["error"]


async def test_a_run_directory_cannot_make_the_viewer_run_code(aiohttp_client, runs, tmp_path):
    """A runs directory from elsewhere whose spec.toml names an entry point (here one that
    would run a command): the Q-table and world panels rebuild no env from it, they say why."""
    import numpy as np

    from bdi_rl.rl.checkpoint import save_checkpoint

    source = _run_named(runs, "tiny")
    run_dir = tmp_path / "runs" / source.name
    shutil.copytree(source, run_dir)
    marker = tmp_path / "ran"
    spec = (run_dir / "spec.toml").read_text()
    env_table = spec[spec.index("[env]") : spec.index("[[agents]]")]
    (run_dir / "spec.toml").write_text(
        spec.replace(env_table, f'[env]\nid = "subprocess:run"\n\n[env.kwargs]\nargs = ["touch", "{marker}"]\n\n')
    )
    # a checkpoint that does not say its env, and a trace that does not record the map
    save_checkpoint(run_dir / "qtables" / "learner.npz", np.zeros((16, 4)), {"agent": "learner", "episodes": 1})
    lines = (run_dir / "trace.jsonl").read_bytes().splitlines(keepends=True)
    for k, line in enumerate(lines):
        event = json.loads(line)
        if event["kind"] == "agent.start" and event["agent"] == "learner@localhost":
            event["data"].pop("world")
            lines[k] = json.dumps(event, separators=(",", ":")).encode() + b"\n"
    (run_dir / "trace.jsonl").write_bytes(b"".join(lines))
    client = await aiohttp_client(create_app(tmp_path / "runs"))
    panel = await (await client.get(f"/api/runs/{run_dir.name}/agents/learner/qtable")).json()
    assert "subprocess:run is an entry point" in panel["table"]["why"]
    world = await (await client.get(f"/api/runs/{run_dir.name}/agents/learner/world?episode=1")).json()
    assert "subprocess:run; the trace records no map, and the entry point" in world["error"]
    assert not marker.exists()


def test_run_with_view_serves_the_run_then_stops_on_ctrl_c(tmp_path, write_spec):
    """``bdi-rl run --view``: the run is on the viewer while it goes and after it ends; Ctrl-C
    then stops the viewer and the exit status is the run's."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    from bdi_rl.xmpp.server import free_port
    from tests.conftest import MINIMAL_SPEC

    port = free_port()
    spec = write_spec(MINIMAL_SPEC)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "run",
            str(spec),
            "--runs",
            str(tmp_path / "runs"),
            "--no-progress",
            "--view",
            "--view-port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline, rows = time.monotonic() + 60, []
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=2) as r:
                    rows = json.loads(r.read())["runs"]
                if rows and not rows[0]["live"] and rows[0]["indexing"] is None:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert rows and rows[0]["experiment"] == "tiny" and rows[0]["episodes"] == 20
        assert proc.poll() is None  # the viewer outlives the run
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"http://127.0.0.1:{port}/" in err and out.strip().splitlines()[-1].endswith(rows[0]["run"])


async def test_message_flow_of_a_team(aiohttp_client, runs):
    run = _run_named(runs, "team").name
    client = await aiohttp_client(create_app(runs))
    everything = await (await client.get(f"/api/runs/{run}/messages")).json()
    talk = await (await client.get(f"/api/runs/{run}/messages?hide=experience")).json()
    assert any(m["content"].startswith("experience(") for m in everything["messages"])
    assert talk["messages"] and not any(m["content"].startswith("experience(") for m in talk["messages"])
    assert {"ready", "train"} <= {m["content"] for m in talk["messages"]}
    times = [m["ts"] for m in talk["messages"]]
    assert times == sorted(times)
    assert (await client.get(f"/api/runs/{run}/messages?hide=../x")).status == 400


async def test_why_an_episode_mode_learner_took_each_action(aiohttp_client, runs):
    """Team learners run whole episodes in Python (mode episode); their steps still carry
    the Q row they chose from, so the inspector can say why they went where they went."""
    run_dir = _run_named(runs, "team")
    trace = read_trace(run_dir / "trace.jsonl")
    starts = {e["agent"]: e["data"] for e in trace if e["kind"] == "agent.start"}
    learner = next(jid for jid, data in starts.items() if "actions" in data)
    assert starts[learner]["actions"] == ["left", "down", "right", "up"]
    events = [e for e in trace if e["agent"] == learner]
    steps = [(i, e["data"]) for i, e in enumerate(events) if e["kind"] == "rl.step"]
    assert len(steps) > 100
    assert all(len(d["q"]) == 4 and d["q"][d["a"]] == d["q_before"] for _, d in steps)
    explored = next(i for i, d in steps if d["q"][d["a"]] < max(d["q"]))
    greedy = next(
        i for i, d in steps[len(steps) // 2 :] if d["q"][d["a"]] == max(d["q"]) and d["q"].count(max(d["q"])) == 1
    )
    client = await aiohttp_client(create_app(runs))
    for position, word in ((explored, "exploring move"), (greedy, "greedy choice")):
        mind = await (await client.get(f"/api/runs/{run_dir.name}/agents/{learner}/mind?pos={position}")).json()
        choice = mind["choice"]
        assert choice["labels"] == ["left", "down", "right", "up"] and word in choice["why"], choice
        assert choice["action"] == choice["labels"][events[position]["data"]["a"]]
        # its beliefs are the previous episode's: the inspector says so (issue 18)
        (note,) = mind["notes"]
        episode = events[position]["episode"]
        assert note.startswith("Episode mode") and (f"episode {episode - 1} ended" in note or episode == 0)
    step_mode = _run_named(runs, "tiny")  # a step-mode learner perceives every step: no note
    mind = await (await client.get(f"/api/runs/{step_mode.name}/agents/learner/mind?episode=3&step=1")).json()
    assert mind["beliefs"] and mind["notes"] == []


async def test_an_episode_level_trace_says_why_it_shows_no_beliefs(aiohttp_client, runs, tmp_path):
    from tests.fakeruns import learner_run

    spec = tmp_path / "spec.toml"
    spec.write_text((_run_named(runs, "tiny") / "spec.toml").read_text())
    run_dir = learner_run(tmp_path / "runs", spec, trace="episode", episodes=5)
    client = await aiohttp_client(create_app(tmp_path / "runs"))
    mind = await (await client.get(f"/api/runs/{run_dir.name}/agents/learner/mind")).json()
    assert mind["beliefs"] == [] and "traced at level episode" in mind["notes"][0]


async def test_a_closed_page_ends_its_live_stream_quietly(runs, tmp_path, caplog):
    """A tab closed on a live run: the stream ends, and nothing lands in the run's terminal
    (it printed aiohttp's ClientConnectionResetError traceback there). A real server and a
    socket closed as a browser closes it."""
    source = _run_named(runs, "tiny")
    run_dir = tmp_path / "runs" / source.name
    shutil.copytree(source, run_dir)
    (run_dir / "summary.json").unlink()  # the run is still going: no summary, no run.stop yet
    lock = RunWriter.acquire(run_dir, "a test's stand-in for bdi-rl run")  # and a writer holds it
    trace = run_dir / "trace.jsonl"
    lines = [line for line in trace.read_bytes().splitlines(keepends=True) if b'"kind":"run.stop"' not in line]
    trace.write_bytes(b"".join(lines))
    runner = web.AppRunner(create_app(run_dir.parent, live_poll=0.02))
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        with caplog.at_level(logging.DEBUG):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"GET /api/runs/{run_dir.name}/live HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
            received = b""
            while b"event: update" not in received:  # the headers may come on their own first
                chunk = await asyncio.wait_for(reader.read(4096), 10)
                assert chunk, received
                received += chunk
            writer.close()  # the tab goes
            for _ in range(10):  # the run goes on: the server has more to send, to nobody
                with open(trace, "ab") as f:
                    f.write(lines[-1])
                await asyncio.sleep(0.05)
    finally:
        await runner.cleanup()
        lock.release()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, [r.getMessage() for r in errors]
