"""A run directory has one writer, and every run's state is told from evidence on disk:
live (a process holds the writer lock), finished, interrupted, failed, abandoned."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bdi_rl.readers.runstate import run_state
from bdi_rl.readers.viewer import create_app
from bdi_rl.store import SUMMARY_FILE, RunBusyError, RunWriter, run_writer
from tests.conftest import run_cli, run_named

#: A process that takes a run directory's writer lock, says so, and holds it until killed.
HOLDER = """
import sys, time
from pathlib import Path
from bdi_rl.store import RunWriter
writer = RunWriter.acquire(Path(sys.argv[1]), "bdi-rl run (a test's stand-in)")
writer.announce()
print("holding", flush=True)
time.sleep(600)
"""


def _hold(run_dir: Path) -> subprocess.Popen:
    """Another process holding ``run_dir``'s writer lock (as a live ``bdi-rl run`` does)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


@pytest.fixture
def run_copy(runs: Path, tmp_path: Path) -> Path:
    """A copy of a finished run (``runs``), to change without touching the others' runs."""
    source = run_named(runs, "tiny")
    target = tmp_path / "runs" / source.name
    shutil.copytree(source, target)
    return target


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run but the writer lock (the holder's, which names itself in it)."""
    return {
        str(p.relative_to(run_dir)): p.read_bytes()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != ".writer"
    }


def test_a_second_writer_is_refused_naming_the_first(run_copy: Path) -> None:
    holder = _hold(run_copy)
    try:
        with pytest.raises(RunBusyError) as refused:
            RunWriter.acquire(run_copy, "bdi-rl run --resume")
        message = str(refused.value)
        assert str(run_copy) in message and f"pid {holder.pid}" in message and "a test's stand-in" in message
        writer = run_writer(run_copy)
        assert writer is not None and writer.pid == holder.pid
    finally:
        holder.kill()
        holder.wait()
    # The kernel dropped the lock with its process, however it ended (SIGKILL here).
    writer = RunWriter.acquire(run_copy, "bdi-rl run --resume")
    assert run_writer(run_copy) is not None  # now held by this process
    writer.release()
    assert run_writer(run_copy) is None


def test_a_writer_is_not_refused_by_readers_looking(run_copy: Path) -> None:
    """Readers take a shared lock for an instant to look (every runs-list refresh): a writer
    starting meanwhile waits it out instead of being refused."""
    stop_at = time.monotonic() + 1.0
    looker = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\nfrom bdi_rl.store import run_writer\n"
            f"end = time.monotonic() + 1.5\nwhile time.monotonic() < end: run_writer(Path({str(run_copy)!r}))",
        ]
    )
    try:
        while time.monotonic() < stop_at:
            RunWriter.acquire(run_copy, "a writer").release()
    finally:
        looker.wait()


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / SUMMARY_FILE).read_text())


def _write_summary(run_dir: Path, summary: dict) -> None:
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary))


def test_each_state_rests_on_evidence(run_copy: Path) -> None:
    assert run_state(run_copy).state == "finished"

    holder = _hold(run_copy)  # a resumed run is live again, its old summary notwithstanding
    try:
        state = run_state(run_copy)
        assert state.state == "live" and f"pid {holder.pid}" in state.why
    finally:
        holder.kill()
        holder.wait()

    summary = _summary(run_copy)
    _write_summary(run_copy, {**summary, "interrupted": True})
    assert run_state(run_copy).state == "interrupted"

    agents = {name: {**entry, "failure": "its mind failed"} for name, entry in summary["agents"].items()}
    _write_summary(run_copy, {**summary, "agents": agents})
    state = run_state(run_copy)
    assert state.state == "failed" and "learner failed: its mind failed" in state.why

    (run_copy / SUMMARY_FILE).write_text("{not json")
    assert run_state(run_copy).state == "failed"
    with open(run_copy / SUMMARY_FILE, "wb") as f:  # 2 GB, sparse: never read whole
        f.truncate(2 << 30)
    state = run_state(run_copy)
    assert state.state == "failed" and "cannot be read" in state.why

    (run_copy / SUMMARY_FILE).unlink()  # killed: nobody writes it, and it has no summary
    state = run_state(run_copy)
    assert state.state == "abandoned" and "killed" in state.why

    (run_copy / "crash.log").write_text("Traceback ...\n")  # died of an error it reported
    assert run_state(run_copy).state == "failed"


def test_a_run_of_an_older_bdi_rl_without_a_lock(run_copy: Path) -> None:
    (run_copy / ".writer").unlink()
    (run_copy / SUMMARY_FILE).unlink()
    assert run_state(run_copy).state == "live"  # its trace was written a moment ago
    old = time.time() - 3600
    for path in (run_copy, run_copy / "trace.jsonl"):
        os.utime(path, (old, old))
    assert run_state(run_copy).state == "abandoned"


async def test_the_runs_list_and_a_run_page_say_each_state(aiohttp_client, run_copy: Path) -> None:
    client = await aiohttp_client(create_app(run_copy.parent))

    async def state() -> tuple[str, str, bool]:
        rows = (await (await client.get("/api/runs")).json())["runs"]
        run = await (await client.get(f"/api/runs/{run_copy.name}")).json()
        assert (rows[0]["state"], rows[0]["live"]) == (run["state"], run["live"])
        return run["state"], run["state_why"], run["live"]

    assert (await state())[0] == "finished"
    (run_copy / SUMMARY_FILE).unlink()
    assert (await state())[:3:2] == ("abandoned", False)
    holder = _hold(run_copy)
    try:
        assert (await state())[:3:2] == ("live", True)
        # Its live stream goes on while it is written ...
        response = await client.get(f"/api/runs/{run_copy.name}/live")
        assert b"event: update" in await response.content.readuntil(b"\n\n")
        response.close()
    finally:
        holder.kill()
        holder.wait()
    # ... and ends once nobody writes it any more (the page stops refreshing)
    response = await client.get(f"/api/runs/{run_copy.name}/live")
    body = await response.read()
    assert body.count(b"event: update") == 1 and b'"state":"abandoned"' in body


@pytest.mark.slow  # three bdi-rl processes
def test_resume_and_telemetry_run_refuse_a_run_being_written(run_copy: Path) -> None:
    (run_copy / SUMMARY_FILE).write_text(json.dumps({**_summary(run_copy), "interrupted": True}))
    holder = _hold(run_copy)
    before = _snapshot(run_copy)
    try:
        resumed = run_cli("run", "--resume", str(run_copy), "--no-progress")
        assert resumed.returncode == 2, resumed.stderr
        line = resumed.stderr.strip()
        assert "\n" not in line and "one writer at a time" in line and f"pid {holder.pid}" in line
        env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw", "PYTHONUNBUFFERED": "1"}
        telemetry = subprocess.run(
            [
                sys.executable,
                "-m",
                "bdi_rl",
                "telemetry",
                str(run_copy / "spec.toml"),
                "--xmpp",
                "localhost:1",
                "--run",
                str(run_copy),
                "--runs",
                str(run_copy.parent),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert telemetry.returncode == 2, telemetry.stderr
        assert "one writer at a time" in telemetry.stderr and len(telemetry.stderr.strip().splitlines()) == 1
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert _snapshot(run_copy) == before  # not a byte changed
