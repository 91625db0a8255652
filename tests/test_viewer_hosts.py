"""The viewer and ``bdi-rl serve`` answer only for themselves (DNS rebinding): a request whose
``Host`` names another host is a 421 with the security headers and one line, on every kind of
route, and changes nothing; the names a user reaches the server by still work. Over sockets
to real listening servers, with forged Host headers, as a rebinding page's requests arrive."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bdi_rl.control.app import TOKEN_HEADER, create_control_app
from bdi_rl.control.jobs import JobQueue
from bdi_rl.readers.viewer import start_viewer
from bdi_rl.readers.webserver import SECURITY_HEADERS, host_check, host_name, machine_names, start_app
from bdi_rl.xmpp.server import free_port
from tests.conftest import run_named
from tests.test_bad_input import raw_request

TOKEN = "t0ken-for-tests"

#: Host headers a rebinding page (or another site's) sends, each refused.
FORGED = [
    "evil.example:{port}",
    "evil.example",
    "EVIL.example:{port}",
    "localhost.evil.example:{port}",
    "127.0.0.1.nip.io:{port}",
    "localhost:notaport",
    "[::1",
    "::1",
    "",  # named, but empty: refused like any name that is not the server's
]


def _get(path: str, host: str | None) -> bytes:
    if host is None:  # HTTP/1.0 may leave Host out (1.1 may not: aiohttp refuses it, 400)
        return f"GET {path} HTTP/1.0\r\n\r\n".encode()
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()


def _post(path: str, host: str, body: bytes = b'{"spec": "frozenlake-4x4", "episodes": 5}') -> bytes:
    """As the rebinding page's script would send it: the token (say it leaked) and an Origin
    that names the page's own host, which is the host it forged."""
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n{TOKEN_HEADER}: {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def _refused(status: int, headers: dict[str, str], body: bytes) -> None:
    assert status == 421, (status, body[:200])
    for header, value in SECURITY_HEADERS.items():
        assert headers.get(header) == value, header
    assert body.startswith(b"421 Misdirected Request") and body.count(b"\n") == 1, body


@contextlib.asynccontextmanager
async def _serve(
    runs: Path, bind: str = "127.0.0.1", allow: tuple[str, ...] = ()
) -> AsyncIterator[tuple[int, JobQueue]]:
    """``bdi-rl serve``'s app (the viewer's plus the control routes) on a free port."""
    port = free_port()
    queue = JobQueue(runs, max_running=1)
    runner = await start_app(create_control_app(runs, queue, TOKEN, bind, allow), bind, port)
    try:
        yield port, queue
    finally:
        await runner.cleanup()


def _routes(runs: Path) -> dict[str, str]:
    run = run_named(runs, "tiny").name
    return {
        "page": "/",
        "run page": f"/run/{run}",
        "API": "/api/runs",
        "API of a run": f"/api/runs/{run}/agents/learner/mind?pos=3",
        "static": "/static/run.js",
        "vendored library": "/static/vendor/plotly.min.js",
        "live stream": f"/api/runs/{run}/live",
        "no such route": "/nope",
    }


@pytest.mark.parametrize("forged", FORGED)
async def test_a_forged_host_gets_421_on_every_route_of_the_viewer(runs, forged):
    port = free_port()
    runner = await start_viewer(runs, "127.0.0.1", port)
    try:
        for kind, path in _routes(runs).items():
            status, headers, body = await raw_request(port, _get(path, forged.format(port=port)))
            assert b"learner" not in body, kind
            _refused(status, headers, body)
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("forged", FORGED[:4])
async def test_a_forged_host_gets_421_on_serve_and_starts_nothing(tmp_path, forged):
    """Reading the jobs, the control page and a POST that would start a run: each refused
    before the token and Origin are looked at; no job, no run directory."""
    control_runs = tmp_path / "runs"
    control_runs.mkdir()
    async with _serve(control_runs) as (port, queue):
        host = forged.format(port=port)
        for path in ("/control", "/api/control/jobs", "/api/control/specs", "/api/runs"):
            _refused(*await raw_request(port, _get(path, host)))
        for path in ("/api/control/runs", "/api/control/sweeps", "/api/control/jobs/1/stop"):
            _refused(*await raw_request(port, _post(path, host)))
        assert queue.jobs == {} and list(control_runs.iterdir()) == []
        # the same POST with this server's own name passes the host check to the guard and the queue
        status, _, body = await raw_request(
            port, _post("/api/control/runs", f"localhost:{port}", b'{"spec": "no-such-spec"}')
        )
        assert status == 400 and b"no-such-spec" in body


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "127.0.0.1",
        "localhost:{port}",
        "LocalHost",
        "[::1]:{port}",
        "[::1]",
        "127.0.0.2:{port}",
        "localhost:9000",
        None,
    ],
)
async def test_the_names_a_user_reaches_it_by_are_answered(runs, host):
    """Loopback addresses and localhost, with any port (a forwarded one too) or none; an IP
    literal cannot be rebound; no Host at all is no browser's request."""
    port = free_port()
    runner = await start_viewer(runs, "127.0.0.1", port)
    try:
        for kind, path in _routes(runs).items():
            if kind == "live stream":
                continue  # a live stream of a finished run ends at once; its headers below
            status, headers, _ = await raw_request(port, _get(path, None if host is None else host.format(port=port)))
            assert status == (404 if kind == "no such route" else 200), (kind, status)
            assert headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    finally:
        await runner.cleanup()


async def test_the_live_stream_carries_the_security_headers(runs):
    """Server-sent events are prepared inside the handler, before a middleware sees the answer."""
    port = free_port()
    runner = await start_viewer(runs, "127.0.0.1", port)
    try:
        path = f"/api/runs/{run_named(runs, 'tiny').name}/live"
        status, headers, body = await raw_request(port, _get(path, f"localhost:{port}"))
        assert status == 200 and headers["Content-Type"] == "text/event-stream" and b"event: update" in body
        for header, value in SECURITY_HEADERS.items():
            assert headers[header] == value
    finally:
        await runner.cleanup()


async def test_a_wildcard_bind_answers_its_addresses_the_machine_and_allowed_names(tmp_path):
    """As in docker compose (``--view 0.0.0.0:8765``, published on 127.0.0.1): IP literals,
    localhost and the machine's own names; a reverse proxy's name only with --allow-host."""
    control_runs = tmp_path / "runs"
    control_runs.mkdir()
    async with _serve(control_runs, "0.0.0.0", ("viewer.example.org",)) as (port, _):
        for host in [
            "127.0.0.1:{port}",
            "localhost:{port}",
            "viewer.example.org",
            "VIEWER.example.org:443",
            *(f"{name}:{{port}}" for name in machine_names()),
        ]:
            status, _, _ = await raw_request(port, _get("/api/control/jobs", host.format(port=port)))
            assert status == 200, host
        for host in ("evil.example:{port}", "viewer.example.org.evil.example", "example.org"):
            _refused(*await raw_request(port, _get("/api/control/jobs", host.format(port=port))))


async def test_a_server_bound_to_a_name_answers_to_it(runs):
    port = free_port()
    runner = await start_viewer(runs, "localhost", port, allow_hosts=["proxy.example"])
    try:
        for host in ("localhost", "proxy.example:8443", "127.0.0.1"):
            status, _, _ = await raw_request(port, _get("/api/runs", host))
            assert status == 200, host
        _refused(*await raw_request(port, _get("/api/runs", "other.example")))
    finally:
        await runner.cleanup()


def test_which_names_a_bind_answers_to():
    loopback = host_check("127.0.0.1")
    assert loopback.names == {"localhost"}  # and every IP literal
    assert host_check("::1").names == {"localhost"} and host_check("localhost").names == {"localhost"}
    assert host_check("0.0.0.0").names == {"localhost"} | machine_names()
    assert host_check("192.168.1.5", ["Proxy.Example"]).names == {"localhost", "proxy.example"} | machine_names()
    assert "viewer.lan" in host_check("viewer.lan").names
    for value, name in [
        ("LOCALHOST:80", "localhost"),
        ("[::1]:8765", "::1"),
        ("[::1]", "::1"),
        ("a.b", "a.b"),
        ("[::1]x", None),
        ("[evil]:80", None),
        ("a:b", None),
        ("::1", None),
    ]:
        assert host_name(value) == name, value
    assert loopback.allows([]) and loopback.allows(["10.0.0.7:1"]) and not loopback.allows(["localhost", "localhost"])


# -- through the command line ---------------------------------------------------------------------
def _wait_for_line(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return line


def _http_status(port: int, host: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(_get("/api/runs", host))
        return int(sock.recv(64).split()[1])


def test_view_allow_host_through_the_cli(runs):
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "view",
            "--runs",
            str(runs),
            "--port",
            str(port),
            "--allow-host",
            "Viewer.Example.org",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _wait_for_line(proc).startswith(f"bdi-rl viewer: http://127.0.0.1:{port}/")
        assert _http_status(port, "viewer.example.org") == 200
        assert _http_status(port, f"localhost:{port}") == 200
        assert _http_status(port, "evil.example") == 421
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err
    assert err.count("refused a request for host 'evil.example'") == 1, err  # said once, in one line


def test_a_bad_allow_host_is_one_line(tmp_path):
    from tests.conftest import run_main

    for command in ("view", "serve"):
        result = run_main(command, "--runs", str(tmp_path), "--allow-host", "evil.example/x")
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--allow-host" in result.stderr


def _taken_port() -> socket.socket:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    return busy


@pytest.mark.parametrize("command", ["view", "serve"])
def test_a_taken_port_is_one_line_and_no_url(tmp_path, command):
    """The port is someone else's server: no URL pointing at it, one line naming the port,
    exit status 2, the same from view and serve."""
    with _taken_port() as busy:
        port = busy.getsockname()[1]
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "bdi_rl", command, "--runs", str(tmp_path), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2, result.stderr
    assert result.stdout == "", result.stdout  # no URL printed
    assert result.stderr == f"bdi-rl: error: --host/--port: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert time.monotonic() - started < 30


def test_view_prints_its_url_once_it_listens(runs):
    """The line comes once the port is bound: a connection made as soon as it is read works."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "view", "--runs", str(runs), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _wait_for_line(proc)
        assert line == f"bdi-rl viewer: http://127.0.0.1:{port}/  (runs in {runs}; Ctrl-C stops)\n"
        assert _http_status(port, f"127.0.0.1:{port}") == 200  # no retry: it is listening
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_the_wildcard_bind_is_printed_as_a_url_to_open(runs):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "view", "--runs", str(runs), "--host", "0.0.0.0", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _wait_for_line(proc).startswith(f"bdi-rl viewer: http://127.0.0.1:{port}/ ")
        assert _http_status(port, socket.gethostname()) == 200 and _http_status(port, "evil.example") == 421
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


async def test_the_app_in_aiohttps_test_client_answers_only_loopback_names(aiohttp_client, runs):
    """The default of ``create_app`` (tests, embedding): a loopback server's names."""
    from bdi_rl.readers.viewer import create_app

    client = await aiohttp_client(create_app(runs))
    assert (await client.get("/api/runs")).status == 200
    response = await client.get("/api/runs", headers={"Host": "evil.example"})
    assert response.status == 421 and response.headers["Content-Security-Policy"]
    await asyncio.sleep(0)
