"""The control surface's web app: the viewer (same app, same pages) plus ``/control``, its API
and the guard on every state-changing request.

Every request that is not a GET or HEAD needs the token printed at start-up, in the
``X-BDI-RL-Token`` header (compared in constant time), and an ``Origin`` header naming the
host (and port) the request is for, its ``Host`` (a missing one is refused): a page of another
site can neither read the token nor forge the origin. The viewer's app answers only to this
server's own host names (``readers.webserver``: no DNS rebinding), so that host is this
server. Refused requests are a 403 ``{"error": ...}`` and change nothing. Bodies are small
JSON objects read with a bound; anything malformed is a 400 with one line.

API (JSON): ``GET /api/control/specs`` (shipped specs and their TOML), ``GET
/api/control/jobs`` (the queue), ``POST /api/control/runs`` and ``POST /api/control/sweeps``
(``{"spec": name | "toml": text, "seed", "episodes", "trace"}``, a sweep with ``"seeds": N``),
``POST /api/control/jobs/{id}/stop``.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit
from typing import Annotated, Any, Literal

import msgspec
import orjson
from aiohttp import web
from msgspec import Meta

from bdi_rl.control.jobs import JobQueue
from bdi_rl.control.specs import MAX_SPEC_BYTES, RequestError, shipped_spec, shipped_specs, uploaded_spec
from bdi_rl.readers.viewer import STATIC, bad_request, create_app, json_response, not_found, stop_signals
from bdi_rl.readers.webserver import host_check, start_app, url_of
from bdi_rl.spec import MAX_EPISODES, MAX_SEED
from bdi_rl.store import Sweep, new_sweep_id, write_sweep

TOKEN_HEADER = "X-BDI-RL-Token"
#: Largest request body (an uploaded spec, JSON-escaped, and a few numbers).
MAX_BODY = 2 * MAX_SPEC_BYTES + 4096
#: Most seeds in one sweep.
MAX_SWEEP = 64
#: Most jobs waiting at once (a page left starting sweeps must not fill the memory).
MAX_QUEUED = 1024

JOBS = web.AppKey("jobs", JobQueue)
TOKEN = web.AppKey("token", str)


class StartRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A run or sweep to start, as the page sends it."""

    spec: Annotated[str, Meta(min_length=1, max_length=100)] | None = None
    toml: Annotated[str, Meta(min_length=1, max_length=MAX_SPEC_BYTES)] | None = None
    seed: Annotated[int, Meta(ge=0, le=MAX_SEED)] | None = None
    episodes: Annotated[int, Meta(ge=1, le=MAX_EPISODES)] | None = None
    trace: Literal["episode", "step", "cycle"] | None = None
    seeds: Annotated[int, Meta(ge=1, le=MAX_SWEEP)] = 1


def same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` (an ``Origin`` header) names ``host`` (the request's ``Host``, host
    and port): a page of this server, however it was reached (a forwarded port, a proxy)."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host.lower()


def create_control_app(
    runs: Path, queue: JobQueue, token: str, host: str, allow_hosts: Sequence[str] = ()
) -> web.Application:
    """The viewer over ``runs`` answering to the names of a server bound to ``host`` and
    ``allow_hosts``, with the control routes and their guard."""
    app = create_app(runs, hosts=host_check(host, allow_hosts))
    app.middlewares.append(_guard)  # inside the viewer's host check
    app[JOBS] = queue
    app[TOKEN] = token
    app.on_shutdown.append(_stop_jobs)
    app.add_routes(
        [
            web.get("/control", _control_page),
            web.get("/api/control/specs", api_specs),
            web.get("/api/control/jobs", api_jobs),
            web.post("/api/control/runs", api_start_run),
            web.post("/api/control/sweeps", api_start_sweep),
            web.post("/api/control/jobs/{job}/stop", api_stop),
        ]
    )
    return app


async def _stop_jobs(app: web.Application) -> None:
    await app[JOBS].shutdown()


# -- the guard ---------------------------------------------------------------------------
def _refused(message: str) -> web.HTTPForbidden:
    return web.HTTPForbidden(text=orjson.dumps({"error": message}).decode(), content_type="application/json")


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    """Only reading is open: anything else needs this server's origin and the token."""
    if request.method not in ("GET", "HEAD"):
        origin = request.headers.get("Origin")
        if origin is None:
            raise _refused("missing Origin header: state-changing requests come from this server's page")
        if not same_origin(origin, request.headers.get("Host", "")):
            raise _refused("foreign origin: state-changing requests come from this server's page")
        given = request.headers.get(TOKEN_HEADER, "").encode("utf-8", "replace")
        if not hmac.compare_digest(given, request.app[TOKEN].encode()):
            raise _refused(f"missing or wrong token ({TOKEN_HEADER}): open the URL bdi-rl serve printed")
    return await handler(request)


# -- pages and reading -------------------------------------------------------------------
async def _control_page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "control.html")


async def api_specs(request: web.Request) -> web.Response:
    """The shipped specs (name and TOML text), and the limits the page should know."""
    specs = [{"name": name, "toml": text} for name, text in shipped_specs().items()]
    return json_response(
        {"specs": specs, "max_sweep": MAX_SWEEP, "max_seed": MAX_SEED, "max_spec_bytes": MAX_SPEC_BYTES}
    )


async def api_jobs(request: web.Request) -> web.Response:
    """Every job of this server, oldest first."""
    queue = request.app[JOBS]
    return json_response(
        {
            "jobs": [job.to_json() for job in queue.jobs.values()],
            "running": queue.running(),
            "max_running": queue.max_running,
        }
    )


# -- changing things ---------------------------------------------------------------------
async def _start_request(request: web.Request) -> StartRequest:
    """The body as a :class:`StartRequest`; 400 naming what is wrong."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise bad_request(f"request body larger than {MAX_BODY // 1024} KB")
    body = b""
    while chunk := await request.content.read(65536):
        body += chunk
        if len(body) > MAX_BODY:
            raise bad_request(f"request body larger than {MAX_BODY // 1024} KB")
    try:
        start = msgspec.json.decode(body, type=StartRequest)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise bad_request(" ".join(str(exc).split())[:300]) from None
    if (start.spec is None) == (start.toml is None):
        raise bad_request('give "spec" (a shipped spec\'s name) or "toml" (a spec\'s text), not both')
    if request.app[JOBS].queued() + start.seeds > MAX_QUEUED:
        raise bad_request(f"the queue is full ({MAX_QUEUED} jobs waiting): stop some, or wait")
    return start


def _spec_of(start: StartRequest, request: web.Request) -> tuple[str, Path, Any]:
    """What the job shows as its spec, the file the child runs, and the loaded spec."""
    overrides = {"seed": start.seed, "episodes": start.episodes, "trace": start.trace}
    try:
        if start.spec is not None:
            path, spec = shipped_spec(start.spec, overrides)
            return start.spec, path, spec
        assert start.toml is not None
        path, spec = uploaded_spec(start.toml, overrides, request.app[JOBS].runs)
        return f"{spec.name} (uploaded)", path, spec
    except RequestError as exc:
        raise bad_request(str(exc)) from None
    except OSError as exc:
        raise web.HTTPInternalServerError(
            text=orjson.dumps({"error": f"cannot save the spec: {exc.strerror}"}).decode(),
            content_type="application/json",
        ) from None


async def api_start_run(request: web.Request) -> web.Response:
    start = await _start_request(request)
    if start.seeds != 1:
        raise bad_request("seeds: one run has one seed; start a sweep for more")
    label, path, spec = _spec_of(start, request)
    queue = request.app[JOBS]
    job = queue.new_job(label, path, spec.seed, episodes=start.episodes, trace=start.trace)
    queue.submit([job])
    return json_response({"jobs": [job.to_json()]}, status=201)


async def api_start_sweep(request: web.Request) -> web.Response:
    """N seeds of one spec (base .. base+N-1), recorded as a sweep (``store.Sweep``)."""
    start = await _start_request(request)
    label, path, spec = _spec_of(start, request)
    if spec.seed + start.seeds - 1 > MAX_SEED:
        raise bad_request(f"seed: {spec.seed} + {start.seeds} seeds goes past {MAX_SEED}")
    queue = request.app[JOBS]
    seeds = list(range(spec.seed, spec.seed + start.seeds))
    overrides = {k: v for k, v in (("episodes", start.episodes), ("trace", start.trace)) if v is not None}
    created = time.time()
    sweep = Sweep(new_sweep_id(queue.runs, created), spec.name, seeds, [None] * len(seeds), created, overrides)
    try:
        write_sweep(queue.runs, sweep)
    except OSError as exc:
        raise web.HTTPInternalServerError(
            text=orjson.dumps({"error": f"cannot write the sweep record: {exc.strerror}"}).decode(),
            content_type="application/json",
        ) from None
    jobs = [
        queue.new_job(label, path, seed, episodes=start.episodes, trace=start.trace, sweep=sweep.id, sweep_index=k)
        for k, seed in enumerate(seeds)
    ]
    queue.submit(jobs, sweep)
    return json_response({"sweep": sweep.id, "jobs": [job.to_json() for job in jobs]}, status=201)


async def api_stop(request: web.Request) -> web.Response:
    raw = request.match_info["job"]
    try:
        job = request.app[JOBS].stop(int(raw)) if raw.isdigit() and len(raw) < 12 else None
    except KeyError:
        job = None
    if job is None:
        raise not_found("no such job")
    return json_response({"job": job.to_json()})


# -- serving -----------------------------------------------------------------------------
def serve(runs: Path, host: str, port: int, max_running: int, allow_hosts: Sequence[str] = ()) -> None:
    """``bdi-rl serve`` until Ctrl-C or SIGTERM, which stops running children as Stop does;
    its URL is printed once it listens. OSError, before anything is printed, if the address
    cannot be bound."""
    asyncio.run(_serve(runs, host, port, max_running, allow_hosts))


async def _serve(runs: Path, host: str, port: int, max_running: int, allow_hosts: Sequence[str]) -> None:
    token = secrets.token_urlsafe(32)
    queue = JobQueue(runs, max_running)
    runner = await start_app(create_control_app(runs, queue, token, host, allow_hosts), host, port)
    print(f"bdi-rl serve: {url_of(host, port)}control#token={token}", flush=True)
    print(
        f"bdi-rl serve: runs in {runs}, at most {max_running} at once; Ctrl-C stops the running ones, then serve",
        file=sys.stderr,
        flush=True,
    )
    try:
        with stop_signals() as stop:
            await stop.wait()
            if queue.running():
                print(f"bdi-rl serve: stopping {queue.running()} running run(s) ...", file=sys.stderr, flush=True)
            await queue.shutdown()
    finally:
        await runner.cleanup()
