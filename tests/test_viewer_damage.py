"""The viewer with damaged and huge traces among its runs (issue 26): each such run is served,
marked damaged with its first damaged line and why (the runs list, the run page's API, the
live stream), read around; every other run is served as if they were not there; a 2 GB trace
(a sparse tail of NUL bytes, or nothing but NULs) keeps no one waiting and costs bounded
memory. The readers' commands are in tests/test_damaged_traces.py."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tracemalloc
import urllib.request
from pathlib import Path

import pytest

from bdi_rl.readers.indexer import Indexer
from bdi_rl.readers.viewer import create_app
from bdi_rl.xmpp.server import free_port
from tests.conftest import run_named
from tests.test_damaged_traces import DAMAGE

HUGE = 2 << 30  # bytes: the size of the sparse traces (no disk is used)
#: Damaged runs put beside the sound one (a few of tests/test_damaged_traces.py's corpus).
SOME_DAMAGE = [
    "an episode.end written twice",
    'a "return": "lots"',
    "a line from another run",
    "a step record referring to an unknown definition",
]


def _copy(source: Path, runs: Path, name: str) -> Path:
    run_dir = runs / name
    shutil.copytree(source, run_dir)
    return run_dir


@pytest.fixture
def runs_with_damage(runs, tmp_path) -> tuple[Path, Path, dict[str, tuple[int, str]]]:
    """A runs directory: the sound run (the newest trace, so listed last among equals), one
    copy per damage of SOME_DAMAGE, one whose trace goes on with 2 GB of NULs, one whose trace
    is 2 GB of NULs only; and (run -> the damaged line's number, what the list must say)."""
    source = run_named(runs, "tiny")
    where = tmp_path / "runs"
    where.mkdir()
    expected: dict[str, tuple[int, str]] = {}
    lines = (source / "trace.jsonl").read_bytes().splitlines(keepends=True)
    for k, name in enumerate(SOME_DAMAGE):
        run_dir = _copy(source, where, f"{source.name}-damaged{k}")
        damaged, at = DAMAGE[name][0](lines)
        (run_dir / "trace.jsonl").write_bytes(b"".join(damaged))
        expected[run_dir.name] = (at + 1, DAMAGE[name][1])
    tail = _copy(source, where, f"{source.name}-nul-tail")
    os.truncate(tail / "trace.jsonl", HUGE)
    expected[tail.name] = (len(lines) + 1, "longer than any trace line")
    nothing = _copy(source, where, f"{source.name}-all-nul")
    (nothing / "trace.jsonl").write_bytes(b"")
    os.truncate(nothing / "trace.jsonl", HUGE)
    expected[nothing.name] = (1, "longer than any trace line")
    sound = _copy(source, where, source.name)
    return where, sound, expected


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def test_damaged_runs_are_marked_and_the_others_served(runs_with_damage, tmp_path):
    where, sound, expected = runs_with_damage
    rss = _rss_mb()
    app = create_app(where, live_poll=0.05, indexer=Indexer(where, tmp_path / "cache"))
    from aiohttp.test_utils import TestClient, TestServer

    async with TestClient(TestServer(app)) as client:
        started = time.monotonic()
        listed = await (await client.get("/api/runs")).json()
        assert time.monotonic() - started < 5  # loosely: two 2 GB traces are among them
        assert sorted(r["run"] for r in listed["runs"]) == sorted([*expected, sound.name])
        for _ in range(200):  # the background indexes (and reads past) the rest
            rows = {r["run"]: r for r in (await (await client.get("/api/runs")).json())["runs"]}
            if all(r["indexing"] is None for r in rows.values()):
                break
            await asyncio.sleep(0.05)
        assert all(r["indexing"] is None for r in rows.values())
        assert rows[sound.name]["damaged"] is None and rows[sound.name]["episodes"] == 20
        for name, (line, why) in expected.items():
            damaged = rows[name]["damaged"]
            assert damaged is not None and damaged["line"] == line and why in damaged["why"], (name, damaged)
            page = await client.get(f"/api/runs/{name}")  # served: read around, and said so
            assert page.status == 200 and (await page.json())["damaged"] == damaged
            assert (await client.get(f"/run/{name}")).status == 200
            mind = await client.get(f"/api/runs/{name}/agents/learner/mind")
            assert mind.status == (200 if "all-nul" not in name else 404)  # that one has no agent
        # the huge ones were read past, never held
        assert rows[f"{sound.name}-nul-tail"]["episodes"] == 20
        assert _rss_mb() - rss < 200  # loosely: it held 1 to 4.2 GB (bench/bench_damaged_traces.py)
        # the sound run is served whole, as if nothing else were there
        body = await (await client.get(f"/api/runs/{sound.name}")).json()
        assert body["damaged"] is None and len(body["agents"]["learner@localhost"]["episodes"]) == 20
        curves = await client.get(f"/api/curves?runs={sound.name}")
        assert curves.status == 200
        damaged = f"{sound.name}-damaged1"
        stream = await client.get(f"/api/runs/{damaged}/live")  # a finished run: one update
        update = json.loads((await stream.read()).decode().split("data: ", 1)[1].split("\n", 1)[0])
        assert update["damaged"] == rows[damaged]["damaged"]


def _viewer(runs: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "view", "--runs", str(runs), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_bdi_rl_view_answers_at_once_beside_a_2_gb_trace(runs_with_damage):
    """``bdi-rl view`` as a user starts it, on a runs directory holding two 2 GB traces: it
    listens, answers the runs list within two seconds of listening with those runs marked
    damaged, serves the sound run, and its memory stays bounded (it held 1 to 4.2 GB)."""
    where, sound, _ = runs_with_damage
    port = free_port()
    viewer = _viewer(where, port)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and viewer.poll() is None, "the viewer never listened"
                time.sleep(0.05)
        listening = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=30) as response:
            rows = {r["run"]: r for r in json.loads(response.read())["runs"]}
        assert time.monotonic() - listening < 2.0
        assert rows[sound.name]["damaged"] is None
        for _ in range(100):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=10) as response:
                rows = {r["run"]: r for r in json.loads(response.read())["runs"]}
            if all(r["indexing"] is None for r in rows.values()):
                break
            time.sleep(0.1)
        assert rows[f"{sound.name}-nul-tail"]["damaged"]["why"].startswith("longer than any trace line")
        assert rows[f"{sound.name}-all-nul"]["damaged"]["line"] == 1
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs/{sound.name}", timeout=10) as response:
            assert json.loads(response.read())["events"] == rows[sound.name]["events"] > 0
        assert _peak_rss_mb(viewer.pid) < 400  # loosely (~150 MB measured): bench/bench_damaged_traces.py
    finally:
        viewer.terminate()
        _, err = viewer.communicate(timeout=20)
    assert f"{sound.name}-nul-tail/trace.jsonl:" in err  # said on stderr too, once per run
    assert err.count(f"{sound.name}-nul-tail/trace.jsonl:") == 1, err


async def test_a_request_working_in_a_thread_holds_no_other_request_of_its_run(runs, monkeypatch, aiohttp_client):
    """The world view of an agent without episodes: its thread raised StopIteration, which
    never reached the request (it hung forever); and while a request works in a thread (a
    slow world view here), the run's other requests and its indexing go on."""
    import threading

    from bdi_rl.readers import world

    run_dir = run_named(runs, "hostile")  # one agent, no episodes
    client = await aiohttp_client(create_app(runs))
    answer = await asyncio.wait_for(client.get(f"/api/runs/{run_dir.name}/agents/learner/world?episode=0"), 30)
    assert answer.status == 200, await answer.text()
    release = threading.Event()
    real = world.episode_world

    def slow(*args, **kwargs):
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(world, "episode_world", slow)
    waiting = asyncio.ensure_future(client.get(f"/api/runs/{run_dir.name}/agents/learner/world?episode=0"))
    await asyncio.sleep(0.2)
    started = time.monotonic()
    mind = await asyncio.wait_for(client.get(f"/api/runs/{run_dir.name}/agents/learner/mind"), 10)
    assert mind.status == 200 and time.monotonic() - started < 5 and not waiting.done()
    release.set()
    assert (await asyncio.wait_for(waiting, 30)).status == 200


async def test_a_huge_sweep_record_is_not_read(runs, tmp_path, aiohttp_client):
    """The runs page asks for the sweeps every few seconds: a 2 GB file among their records
    (runs/.sweeps/) is no sweep, and is not read."""
    where = tmp_path / "runs"
    shutil.copytree(runs, where)
    huge = where / ".sweeps" / "sweep-20261127-101010.json"
    huge.parent.mkdir(exist_ok=True)
    huge.write_bytes(b"")
    os.truncate(huge, HUGE)
    client = await aiohttp_client(create_app(where))
    tracemalloc.start()
    try:
        answer = await client.get("/api/sweeps")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer.status == 200 and peak < 64 << 20  # it read all 2 GB into memory
    assert all(s["id"] != huge.stem for s in (await answer.json())["sweeps"])
