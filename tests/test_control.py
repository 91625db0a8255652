"""``bdi-rl serve``: the control surface's API, its guard, its queue and its real child runs.

The fast tests drive the app with aiohttp's test client (refusals spawn no child) and the
queue with stand-in children; the slow ones start a real ``bdi-rl serve`` process whose
children are real ``bdi-rl run`` runs of frozenlake-4x4 (a few seconds each)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bdi_rl.control.app import MAX_BODY, TOKEN_HEADER, create_control_app, same_origin
from bdi_rl.control.jobs import ANNOUNCE, QUEUED, RUNNING, STOPPED, JobQueue
from bdi_rl.readers.viewer import SECURITY_HEADERS, create_app
from bdi_rl.spec import shipped_spec_names
from bdi_rl.store import Sweep, read_sweep, read_sweeps, write_sweep
from bdi_rl.xmpp.server import free_port
from tests.conftest import AGENTS

TOKEN = "t0ken-for-tests"
SPEC_TEXT = (AGENTS / "frozenlake-4x4.toml").read_text()


# -- the app, through aiohttp's test client ------------------------------------------------
@pytest.fixture
async def control(tmp_path):
    """The control app over an empty runs directory, on a known port (its origin)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    port = free_port()
    queue = JobQueue(runs, max_running=1)
    app = create_control_app(runs, queue, TOKEN, "127.0.0.1")
    client = TestClient(TestServer(app, host="127.0.0.1", port=port))
    await client.start_server()
    client.runs, client.queue, client.origin = runs, queue, f"http://127.0.0.1:{port}"
    yield client
    await client.close()


def _headers(client, token=TOKEN, origin="own"):
    headers = {}
    if token is not None:
        headers[TOKEN_HEADER] = token
    if origin == "own":
        headers["Origin"] = client.origin
    elif origin is not None:
        headers["Origin"] = origin
    return headers


def _nothing_created(client) -> None:
    assert client.queue.jobs == {}
    assert sorted(p.name for p in client.runs.iterdir()) == []  # no run dir, .specs or .sweeps


REFUSALS = {
    "no token": {"token": None},
    "wrong token": {"token": "x" + TOKEN},
    "foreign origin": {"origin": "http://evil.example:8765"},
    "same host, other port": {"origin": "http://127.0.0.1:1"},
    "missing origin": {"origin": None},
    "null origin": {"origin": "null"},
}
GOOD_START = {"spec": "frozenlake-4x4", "episodes": 50, "trace": "episode"}


@pytest.mark.parametrize("how", REFUSALS)
@pytest.mark.parametrize(
    "path, body",
    [
        ("/api/control/runs", GOOD_START),
        ("/api/control/sweeps", {**GOOD_START, "seeds": 3}),
        ("/api/control/runs", {"toml": SPEC_TEXT}),
        ("/api/control/jobs/1/stop", {}),
    ],
)
async def test_a_refused_request_changes_nothing(control, how, path, body):
    response = await control.post(path, json=body, headers=_headers(control, **REFUSALS[how]))
    assert response.status == 403
    assert set(await response.json()) == {"error"}
    assert response.headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    _nothing_created(control)
    assert read_sweeps(control.runs) == []


async def test_the_viewer_stays_read_only(control):
    for path in ("/", "/api/runs", "/api/control/jobs"):
        response = await control.request("PUT", path, headers=_headers(control, token=None))
        assert response.status == 403
    response = await control.delete("/api/runs", headers=_headers(control))
    assert response.status == 405  # with the token, still no such route
    _nothing_created(control)


BAD_REQUESTS = [
    (b"{not json", "malformed"),
    (b"[1, 2]", "Expected `object`"),
    (b'{"spec": "frozenlake-4x4", "seed": "1"}', "$.seed"),
    (b'{"spec": "frozenlake-4x4", "seed": true}', "$.seed"),
    (b'{"spec": "frozenlake-4x4", "seed": 1.5}', "$.seed"),
    (b'{"spec": "frozenlake-4x4", "seed": -1}', "$.seed"),
    (b'{"spec": "frozenlake-4x4", "seed": 4294967296}', "$.seed"),
    (b'{"spec": "frozenlake-4x4", "seed": 1' + b"0" * 5000 + b"}", "$.seed"),
    (b'{"spec": "frozenlake-4x4", "episodes": 0}', "$.episodes"),
    (b'{"spec": "frozenlake-4x4", "trace": "everything"}', "$.trace"),
    (b'{"spec": "frozenlake-4x4", "path": "/etc"}', "unknown field"),
    (b'{"spec": "nosuchspec"}', "no shipped spec 'nosuchspec' (shipped: "),
    (b'{"spec": "../agents/frozenlake-4x4"}', "no shipped spec"),
    (b'{"spec": "frozenlake-4x4", "toml": "name = 1"}', "not both"),
    (b"{}", "not both"),
    (b'{"spec": "frozenlake-4x4", "seeds": 2}', "start a sweep"),
    (b'{"toml": "name = "}', "spec: not valid TOML"),
    (
        b'{"toml": "name = \\"x\\"\\n[env]\\nid = \\"FrozenLake-v1\\"\\n[[agents]]\\nname = \\"Bad Name\\""}',
        "agents[0].name",
    ),
    (
        b'{"toml": "name = \\"x\\"\\nepisodes = -3\\n[env]\\nid = \\"FrozenLake-v1\\"\\n[[agents]]\\nname = \\"a\\""}',
        "episodes",
    ),
]


@pytest.mark.parametrize("body, message", BAD_REQUESTS)
async def test_bad_input_is_a_400_with_one_line(control, body, message):
    response = await control.post("/api/control/runs", data=body, headers=_headers(control))
    assert response.status == 400
    error = (await response.json())["error"]
    assert message in error and "\n" not in error and "Traceback" not in error
    _nothing_created(control)


@pytest.mark.parametrize(
    "body, message",
    [
        ({**GOOD_START, "seeds": 65}, "$.seeds"),
        ({**GOOD_START, "seeds": 0}, "$.seeds"),
        ({**GOOD_START, "seed": 4294967295, "seeds": 2}, "goes past"),
    ],
)
async def test_a_sweep_out_of_range_is_refused(control, body, message):
    response = await control.post("/api/control/sweeps", json=body, headers=_headers(control))
    assert response.status == 400 and message in (await response.json())["error"]
    _nothing_created(control)


@pytest.mark.parametrize(
    "axes, message",
    [
        ('"learning.alpah" = [0.1]', "axes.learning.alpah = 0.1: learning.alpah: unknown key"),
        ('"learning.alpha" = [0.1, "high"]', "axes.learning.alpha = high: learning.alpha: expected a number"),
        ('"env.kwargs.map_name" = ["4x4", "5x5"]', "configuration (map_name=5x5)"),
        (
            '"agents.learner.asl" = ["/etc/passwd"]',
            "axes.agents.learner.asl = '/etc/passwd': agents[0].asl: an uploaded",
        ),
        ('"agents.learner.asl" = ["../../asl/learner.asl"]', "may name only a shipped plan file"),
        ('"env.id" = ["os:system"]', "env.id: an uploaded spec names a registered env id"),
        ('"agents.learner.warm_start" = ["runs/x"]', "not allowed in an uploaded spec"),
        ('"xmpp.server" = ["evil.example:5222"]', "runs started here use the embedded XMPP server"),
        ('"learning.alpha" = [0.1', "axes: not valid TOML"),
        ('"learning.alpha" = { uniform = [0.1, 0.2] }', 'needs method = "random"'),
    ],
)
async def test_a_sweep_whose_axes_are_bad_is_refused_whole(control, axes, message):
    response = await control.post(
        "/api/control/sweeps", json={**GOOD_START, "seeds": 2, "axes": axes}, headers=_headers(control)
    )
    assert response.status == 400
    error = (await response.json())["error"]
    assert message in error and "\n" not in error, error
    _nothing_created(control)


async def test_a_sweep_of_axes_queues_every_configuration_on_every_seed(control):
    body = {**GOOD_START, "seed": 7, "seeds": 2, "axes": '"learning.alpha" = [0.1, 0.3]\n"learning.gamma" = [0.9]'}
    response = await control.post("/api/control/sweeps", json=body, headers=_headers(control))
    assert response.status == 201, await response.text()
    started = await response.json()
    sweep = read_sweep(control.runs, started["sweep"])
    assert sweep.axes == ["learning.alpha", "learning.gamma"] and sweep.seeds == [7, 7, 8, 8]
    assert sweep.configurations == [
        {"learning.alpha": 0.1, "learning.gamma": 0.9},
        {"learning.alpha": 0.3, "learning.gamma": 0.9},
    ]
    assert sweep.configuration == [0, 1, 0, 1]
    jobs = [control.queue.jobs[j["id"]] for j in started["jobs"]]
    commands = [control.queue.command(job) for job in jobs]
    assert [c[c.index("--seed") + 1] for c in commands] == ["7", "7", "8", "8"]
    assert all("learning.gamma=0.9" in c for c in commands)
    assert ["learning.alpha=0.1" in c for c in commands] == [True, False, True, False]
    for job in jobs:
        control.queue.stop(job.id)


MY_PLAN = """
!start.
+!start <- .rl_reset; !go.
+!go : not outcome(_) <- .rl_act(2); !go.
+!go <- .rl_finish.
"""


@pytest.mark.parametrize(
    "plans, axes, message",
    [
        ({"mine.asl": '+!start <- .print("unclosed).'}, '"agents.learner.asl" = ["mine.asl"]', "mine.asl:1"),
        ({"learner.asl": MY_PLAN}, '"agents.learner.asl" = ["learner.asl"]', "a shipped plan's name"),
        ({"../x.asl": MY_PLAN}, '"agents.learner.asl" = ["x.asl"]', "not a plan file name"),
        ({"mine.asl": MY_PLAN}, None, "name them in the axes"),
        ({"mine.asl": MY_PLAN}, '"agents.learner.asl" = ["other.asl"]', "may name only a shipped plan file"),
    ],
)
async def test_uploaded_plans_are_checked_before_anything_is_kept(control, plans, axes, message):
    body = {**GOOD_START, "seeds": 1, "plans": plans, **({"axes": axes} if axes else {})}
    response = await control.post("/api/control/sweeps", json=body, headers=_headers(control))
    assert response.status == 400
    error = (await response.json())["error"]
    assert message in error and "\n" not in error, error
    _nothing_created(control)


async def test_uploaded_plans_are_kept_beside_their_sweep_and_run_from_there(control):
    body = {
        **GOOD_START,
        "seeds": 1,
        "plans": {"mine.asl": MY_PLAN},
        "axes": '"agents.learner.asl" = ["mine.asl", "learner.asl"]',
    }
    response = await control.post("/api/control/sweeps", json=body, headers=_headers(control))
    assert response.status == 201, await response.text()
    started = await response.json()
    kept = control.runs / ".sweeps" / started["sweep"] / "plans"
    assert (kept / "mine.asl").read_text() == MY_PLAN and (kept / "lib" / "episode.asl").is_file()
    sweep = read_sweep(control.runs, started["sweep"])
    assert [c["agents.learner.asl"] for c in sweep.configurations] == [str(kept / "mine.asl"), "learner.asl"]
    commands = [control.queue.command(control.queue.jobs[j["id"]]) for j in started["jobs"]]
    assert f'agents.learner.asl="{kept / "mine.asl"}"' in commands[0]
    for job in started["jobs"]:
        control.queue.stop(job["id"])


async def test_a_huge_body_is_refused(control):
    body = json.dumps({"toml": "# " + "x" * MAX_BODY}).encode()
    response = await control.post("/api/control/runs", data=body, headers=_headers(control))
    assert response.status == 400 and "larger than" in (await response.json())["error"]

    async def chunks():  # no Content-Length: the bound holds while reading
        for _ in range(MAX_BODY // 65536 + 2):
            yield b" " * 65536

    response = await control.post("/api/control/runs", data=chunks(), headers=_headers(control))
    assert response.status == 400 and "larger than" in (await response.json())["error"]
    _nothing_created(control)


def _with_group_line(line: str) -> str:
    return SPEC_TEXT.replace('asl = "learner.asl"', line)


@pytest.mark.parametrize(
    "text, message",
    [
        (_with_group_line('asl = "/etc/passwd"'), "agents[0].asl: an uploaded spec may name only a shipped plan file"),
        (_with_group_line('asl = "../asl/learner.asl"'), "agents[0].asl"),
        (_with_group_line('asl = "lib/episode.asl"'), "agents[0].asl"),
        (_with_group_line('asl = "learner.asl"\nwarm_start = "/tmp"'), "agents[0].warm_start: not allowed"),
        (_with_group_line('asl = "learner.asl"\nwarm_start = "runs/x"'), "agents[0].warm_start: not allowed"),
        (SPEC_TEXT.replace('id = "FrozenLake-v1"', 'id = "os:system"'), "env.id"),
        (SPEC_TEXT + '\n[xmpp]\nserver = "example.org:5222"\n', "xmpp.server"),
        (SPEC_TEXT + "\n[viewer]\nenabled = true\n", "viewer.enabled"),
    ],
)
async def test_an_uploaded_spec_names_no_path(control, text, message):
    for path, extra in (("/api/control/runs", {}), ("/api/control/sweeps", {"seeds": 2})):
        response = await control.post(path, json={"toml": text, **extra}, headers=_headers(control))
        assert response.status == 400
        assert message in (await response.json())["error"]
    _nothing_created(control)
    assert not (control.runs / ".specs").exists() and not (control.runs / ".sweeps").exists()


async def test_stopping_no_such_job_is_a_404(control):
    for job in ("1", "x", "9" * 40):
        response = await control.post(f"/api/control/jobs/{job}/stop", headers=_headers(control))
        assert response.status == 404
    _nothing_created(control)


async def test_the_page_and_the_reading_api(control):
    page = await control.get("/control")
    assert page.status == 200 and "control.js" in await page.text()
    assert page.headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    for name in ("control.js", "control.css"):
        assert (await control.get(f"/static/{name}")).status == 200
    specs = await (await control.get("/api/control/specs")).json()
    assert [s["name"] for s in specs["specs"]] == shipped_spec_names()
    assert specs["max_sweep"] == 64
    jobs = await (await control.get("/api/control/jobs")).json()
    assert jobs == {"jobs": [], "running": 0, "max_running": 1}
    assert (await control.get("/")).status == 200  # the viewer is all there


async def test_pages_learn_from_the_server_whether_control_is_served(control, tmp_path):
    """The pages probe /api/server (never a control route, a 404 under bdi-rl view)."""
    assert await (await control.get("/api/server")).json() == {"control": True}
    viewer = TestClient(TestServer(create_app(control.runs), host="127.0.0.1", port=free_port()))
    await viewer.start_server()
    try:
        assert await (await viewer.get("/api/server")).json() == {"control": False}
        assert (await viewer.get("/api/control/jobs")).status == 404
    finally:
        await viewer.close()


def test_an_origin_is_own_when_it_names_the_host_the_request_is_for():
    """The host check (readers.webserver) has made sure that host is this server's."""
    assert same_origin("http://127.0.0.1:8765", "127.0.0.1:8765")
    assert same_origin("http://localhost:9000", "localhost:9000")  # a forwarded port: ssh -L 9000:...
    assert same_origin("https://viewer.example.org", "viewer.example.org")  # behind a TLS proxy
    assert same_origin("http://[::1]:8765", "[::1]:8765")
    for origin, host in [
        ("http://127.0.0.1:1", "127.0.0.1:8765"),
        ("http://evil.example:8765", "127.0.0.1:8765"),
        ("null", "127.0.0.1:8765"),
        ("file://", ""),
        ("http://127.0.0.1:8765", ""),
        ("ftp://127.0.0.1:8765", "127.0.0.1:8765"),
        ("http://[::1", "[::1]"),
    ]:
        assert not same_origin(origin, host), (origin, host)


async def test_the_page_reached_as_localhost_may_start_runs(control):
    """Host and Origin both name localhost (the URL typed as http://localhost:PORT): the
    guard lets it through to the spec's checks (a bad spec name: 400, nothing made)."""
    host = f"localhost:{control.server.port}"
    response = await control.post(
        "/api/control/runs",
        json={"spec": "no-such-spec"},
        headers={TOKEN_HEADER: TOKEN, "Origin": f"http://{host}", "Host": host},
    )
    assert response.status == 400 and "no-such-spec" in (await response.json())["error"]
    _nothing_created(control)


# -- the queue, with stand-in children (fast) ----------------------------------------------
class StandInQueue(JobQueue):
    """A queue whose children make a directory and announce it as ``bdi-rl run`` does, then
    wait for a file (or SIGINT) to finish: its scheduling, stopping and sweep records are
    the real ones."""

    def __init__(self, runs: Path, max_running: int, release: Path) -> None:
        super().__init__(runs, max_running, grace=5)
        self.release = release

    def command(self, job):
        script = (
            "import os, pathlib, signal, sys, time\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"  # as bdi-rl's main does
            f"d = pathlib.Path({str(self.runs)!r}) / 'run-{job.seed}'\n"
            "d.mkdir()\n"
            f"print({ANNOUNCE!r} + str(d), flush=True)\n"
            "try:\n"
            f"    while not pathlib.Path({str(self.release)!r}).exists(): time.sleep(0.02)\n"
            "except KeyboardInterrupt:\n"
            "    print('bdi-rl: interrupted', file=sys.stderr); sys.exit(130)\n"
            f"sys.exit({job.seed} % 7 == 6)\n"  # seed 6 fails
        )
        return [sys.executable, "-c", script]


async def _until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_the_queue_runs_at_most_n_and_fills_the_sweep_record(tmp_path):
    runs, release = tmp_path / "runs", tmp_path / "release"
    runs.mkdir()
    queue = StandInQueue(runs, 1, release)
    sweep = Sweep("sweep-20260101-000000", "x", [4, 5, 6], [None, None, None], 0.0)
    write_sweep(runs, sweep)
    jobs = [queue.new_job("x", Path("x.toml"), s, sweep=sweep.id, sweep_index=k) for k, s in enumerate(sweep.seeds)]
    queue.submit(jobs, sweep)
    assert [j.state for j in jobs] == [RUNNING, QUEUED, QUEUED]
    await _until(lambda: jobs[0].run is not None)
    assert jobs[0].run == "run-4" and read_sweep(runs, sweep.id).runs == ["run-4", None, None]
    release.touch()
    await _until(lambda: all(j.ended for j in jobs))
    assert [(j.state, j.exit_code, j.run) for j in jobs] == [
        ("finished", 0, "run-4"),
        ("finished", 0, "run-5"),
        ("failed", 1, "run-6"),
    ]
    assert jobs[2].error == "exit status 1"  # no stderr line: the status says it
    assert read_sweep(runs, sweep.id).runs == ["run-4", "run-5", "run-6"]


async def test_stop_cancels_a_queued_job_and_interrupts_a_running_one(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    queue = StandInQueue(runs, 1, tmp_path / "never")
    first, second = queue.new_job("x", Path("x"), 1), queue.new_job("x", Path("x"), 2)
    queue.submit([first, second])
    assert queue.stop(second.id).state == STOPPED  # queued: cancelled, never started
    await _until(lambda: first.run is not None)
    queue.stop(first.id)
    assert first.to_json()["stopping"]
    await _until(lambda: first.ended is not None)
    assert (first.state, first.exit_code, first.error) == ("stopped", 130, None)
    assert second.run is None and not (runs / "run-2").exists()
    with pytest.raises(KeyError):
        queue.stop(99)


async def test_a_cancelled_seed_is_recorded_so_the_compare_page_stops_waiting_for_it(tmp_path, aiohttp_client):

    runs, release = tmp_path / "runs", tmp_path / "release"
    runs.mkdir()
    queue = StandInQueue(runs, 1, release)
    sweep = Sweep("sweep-20260101-000000", "x", [4, 5], [None, None], 0.0)
    write_sweep(runs, sweep)
    jobs = [queue.new_job("x", Path("x.toml"), s, sweep=sweep.id, sweep_index=k) for k, s in enumerate(sweep.seeds)]
    queue.submit(jobs, sweep)
    queue.stop(jobs[1].id)  # queued: it will never run
    assert read_sweep(runs, sweep.id).cancelled == [1]
    client = await aiohttp_client(create_app(runs))
    assert (await (await client.get(f"/api/curves?sweep={sweep.id}")).json())["waiting"] == 1  # seed 4 starting
    release.touch()
    await _until(lambda: jobs[0].ended is not None)
    (runs / "run-4" / "trace.jsonl").touch()  # the stand-in's run has its trace: nothing left to wait for
    assert (await (await client.get(f"/api/curves?sweep={sweep.id}")).json())["waiting"] == 0


async def test_shutdown_stops_every_child(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    queue = StandInQueue(runs, 2, tmp_path / "never")
    jobs = [queue.new_job("x", Path("x"), s) for s in (1, 2, 3)]
    queue.submit(jobs)
    await _until(lambda: all(j.run for j in jobs[:2]))
    await queue.shutdown()
    assert [j.state for j in jobs] == [STOPPED] * 3
    assert all(j.proc.returncode is not None for j in jobs[:2])


# -- a real bdi-rl serve and real runs (slow) ----------------------------------------------
class Serve:
    """``bdi-rl serve`` as a user starts it; the token from the line it prints."""

    def __init__(self, runs: Path, jobs: int = 1, cwd: Path | None = None) -> None:
        self.port = free_port()
        self.runs = runs
        self.proc = subprocess.Popen(  # -P: as the console script, the installed package
            [
                sys.executable,
                "-P",
                "-m",
                "bdi_rl",
                "serve",
                "--runs",
                str(runs),
                "--port",
                str(self.port),
                "--jobs",
                str(jobs),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
        )
        line = self.proc.stdout.readline()
        assert line.startswith(f"bdi-rl serve: http://127.0.0.1:{self.port}/control#token="), line
        self.page_url = line.split(": ", 1)[1].strip()
        self.token = self.page_url.split("#token=", 1)[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def post(self, path: str, body: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body or {}).encode(),
            method="POST",
            headers={TOKEN_HEADER: self.token, "Origin": self.url, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as exc:
            return exc.code, json.load(exc)

    def jobs(self) -> list[dict]:
        with urllib.request.urlopen(self.url + "/api/control/jobs", timeout=30) as response:
            return json.load(response)["jobs"]

    def wait(self, predicate, timeout: float = 180) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            jobs = self.jobs()
            if predicate(jobs):
                return jobs
            assert time.monotonic() < deadline, f"timed out: {jobs}"
            time.sleep(0.2)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=60)


@pytest.fixture
def serve(tmp_path):
    server = Serve(tmp_path / "runs")
    yield server
    server.stop()


def _summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


SMALL = {"episodes": 100, "trace": "episode"}


@pytest.mark.slow
def test_a_sweep_of_three_seeds_with_one_job_slot(serve):
    status, started = serve.post("/api/control/sweeps", {"spec": "frozenlake-4x4", "seed": 10, "seeds": 3, **SMALL})
    assert status == 201, started
    sweep_id = started["sweep"]
    states = [j["state"] for j in serve.jobs()]
    assert states == ["running", "queued", "queued"]
    jobs = serve.wait(lambda jobs: all(j["state"] not in ("queued", "running") for j in jobs))
    assert [(j["state"], j["exit_code"], j["seed"]) for j in jobs] == [("finished", 0, s) for s in (10, 11, 12)]
    sweep = read_sweep(serve.runs, sweep_id)
    assert sweep.seeds == [10, 11, 12] and sweep.overrides == SMALL and sweep.spec == "frozenlake-4x4"
    assert sweep.runs == [j["run"] for j in jobs]
    run_dirs = sorted(p for p in serve.runs.iterdir() if not p.name.startswith("."))
    assert sorted(p.name for p in run_dirs) == sorted(sweep.runs)
    for run_dir, seed in zip(sorted(run_dirs, key=lambda p: sweep.runs.index(p.name)), (10, 11, 12), strict=True):
        assert f"__{seed}__" in run_dir.name
        summary = _summary(run_dir)
        assert not summary.get("interrupted")
    with urllib.request.urlopen(f"{serve.url}/api/curves?sweep={sweep_id}", timeout=30) as response:
        assert response.status == 200  # the overlay page's data for it


def _children_of(pid: int) -> set[tuple[int, str]]:
    """The processes ``pid`` has started and that are alive now: (pid, command line)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:  # it has just ended
                continue
            found.add((int(child), command))
    return found


@pytest.mark.slow
def test_a_sweep_from_the_page_runs_in_one_worker_process_per_slot(serve):
    """Start-up is paid once per worker, not once per run (issue 30): the four runs of a sweep
    started on one job slot are all made by the same ``bdi-rl sweep-worker`` process, and no
    ``bdi-rl run`` child is started; each is still an ordinary run directory of its seed."""
    status, started = serve.post("/api/control/sweeps", {"spec": "frozenlake-4x4", "seed": 20, "seeds": 4, **SMALL})
    assert status == 201, started
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + 180
    while True:
        seen |= _children_of(serve.proc.pid)
        jobs = serve.jobs()
        if all(j["state"] not in ("queued", "running") for j in jobs):
            break
        assert time.monotonic() < deadline, jobs
        time.sleep(0.05)
    assert [(j["state"], j["exit_code"]) for j in jobs] == [("finished", 0)] * 4
    workers = {pid for pid, command in seen if "bdi_rl sweep-worker" in command}
    assert len(workers) == 1, seen
    assert not [command for _, command in seen if "bdi_rl run " in command], seen
    for job in jobs:
        assert f"__{job['seed']}__" in job["run"] and _summary(serve.runs / job["run"])["seed"] == job["seed"]


@pytest.mark.slow
def test_stopping_a_running_job_leaves_an_interrupted_run(serve):
    status, started = serve.post(
        "/api/control/runs", {"spec": "frozenlake-4x4", "episodes": 10_000_000, "trace": "episode"}
    )
    assert status == 201
    job = started["jobs"][0]["id"]
    serve.wait(lambda jobs: jobs[0]["run"] is not None)
    time.sleep(1.5)  # some episodes
    status, stopped = serve.post(f"/api/control/jobs/{job}/stop")
    assert status == 200 and stopped["job"]["stopping"]
    jobs = serve.wait(lambda jobs: jobs[0]["state"] != "running", timeout=60)
    assert (jobs[0]["state"], jobs[0]["exit_code"]) == ("stopped", 130)
    summary = _summary(serve.runs / jobs[0]["run"])
    assert summary["interrupted"] is True


@pytest.mark.slow
def test_an_uploaded_spec_runs_and_is_kept(serve):
    text = SPEC_TEXT.replace("eval_episodes = 1000", "eval_episodes = 10")
    status, started = serve.post("/api/control/runs", {"toml": text, "seed": 3, **SMALL})
    assert status == 201, started
    assert started["jobs"][0]["spec"] == "frozenlake-4x4 (uploaded)"
    jobs = serve.wait(lambda jobs: jobs[0]["state"] not in ("queued", "running"))
    assert jobs[0]["state"] == "finished", jobs
    kept = list((serve.runs / ".specs").iterdir())
    assert len(kept) == 1 and kept[0].read_text() == text
    saved = (serve.runs / jobs[0]["run"] / "spec.toml").read_text()
    assert 'asl = "learner.asl"' in saved and "eval_episodes = 10" in saved


@pytest.mark.slow
def test_runs_are_the_installed_bdi_rl_whatever_directory_serve_was_started_in(tmp_path):
    """``python -m bdi_rl`` puts the working directory first: a ``bdi_rl`` there (an old
    checkout) would have run instead of the installed package."""
    decoy = tmp_path / "bdi_rl"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("")
    (decoy / "__main__.py").write_text("import sys; sys.exit('a bdi_rl in the working directory ran')\n")
    serve = Serve(tmp_path / "runs", cwd=tmp_path)
    try:
        status, started = serve.post("/api/control/runs", {"spec": "frozenlake-4x4", **SMALL})
        assert status == 201, started
        jobs = serve.wait(lambda jobs: jobs[0]["state"] not in ("queued", "running"))
        assert jobs[0]["state"] == "finished", jobs
    finally:
        serve.stop()


@pytest.mark.slow
def test_a_run_that_fails_says_why(serve):
    text = SPEC_TEXT.replace('id = "FrozenLake-v1"', 'id = "NoSuchEnv-v0"')
    status, started = serve.post("/api/control/runs", {"toml": text, **SMALL})
    assert status == 201, started  # the loader cannot know; the run's own checks do
    jobs = serve.wait(lambda jobs: jobs[0]["state"] not in ("queued", "running"))
    assert (jobs[0]["state"], jobs[0]["exit_code"], jobs[0]["run"]) == ("failed", 2, None)
    assert jobs[0]["error"].startswith("bdi-rl: error:") and "NoSuchEnv" in jobs[0]["error"]


@pytest.mark.slow
def test_ctrl_c_on_serve_stops_its_runs_then_exits(tmp_path):
    server = Serve(tmp_path / "runs", jobs=2)
    try:
        for seed in (1, 2, 3):
            status, _ = server.post(
                "/api/control/runs",
                {"spec": "frozenlake-4x4", "seed": seed, "episodes": 10_000_000, "trace": "episode"},
            )
            assert status == 201
        jobs = server.wait(lambda jobs: all(j["run"] for j in jobs[:2]))
        deadline = time.monotonic() + 10  # both children: seen in /proc, under a loaded machine
        while len(children := _children(server.proc.pid)) != 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(children) == 2, (children, server.jobs())
        time.sleep(1)
    finally:
        assert server.stop() == 0
    for job in jobs[:2]:
        assert _summary(server.runs / job["run"])["interrupted"] is True
    assert [p.name for p in server.runs.iterdir() if not p.name.startswith(".")].__len__() == 2
    assert not any(_alive(pid) for pid in children)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


async def test_a_full_queue_takes_no_more(control, monkeypatch):
    monkeypatch.setattr(control.queue, "queued", lambda: 1024)
    response = await control.post("/api/control/runs", json=GOOD_START, headers=_headers(control))
    assert response.status == 400 and "queue is full" in (await response.json())["error"]
    _nothing_created(control)


async def test_a_token_that_is_not_ascii_is_refused(control):
    response = await control.post(
        "/api/control/runs",
        json=GOOD_START,
        headers={**_headers(control), TOKEN_HEADER: "tök\udcff".encode("utf-8", "surrogateescape").decode("latin-1")},
    )
    assert response.status == 403
    _nothing_created(control)


# -- the command line ------------------------------------------------------------------------
def test_serve_refuses_a_bad_runs_directory_or_port(tmp_path):
    from tests.conftest import run_main

    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    result = run_main("serve", "--runs", str(not_a_dir))
    assert (
        result.returncode == 2
        and result.stderr.startswith("bdi-rl: error: --runs ")
        and "not a directory" in result.stderr
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = run_main("serve", "--runs", str(tmp_path / "runs"), "--port", str(busy.getsockname()[1]))
    assert result.returncode == 2 and "cannot listen" in result.stderr and result.stderr.count("\n") == 1
    result = run_main("serve", "--jobs", "0")
    assert result.returncode == 2 and "--jobs" in result.stderr
