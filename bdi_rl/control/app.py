"""The control surface's web app: the viewer (same app, same pages) plus ``/control``, its API
and the guard on every state-changing request.

Every request that is not a GET or HEAD needs the token printed at start-up, in the
``X-BDI-RL-Token`` header (compared in constant time), and an ``Origin`` header naming the
host (and port) the request is for, its ``Host`` (a missing one is refused): a page of another
site can neither read the token nor forge the origin. The viewer's app answers only to this
server's own host names (``readers.webserver``: no DNS rebinding), so that host is this
server. Refused requests are a 403 ``{"error": ...}`` and change nothing. Bodies are small
JSON objects read with a bound; anything malformed is a 400 with one line.

API (JSON): ``GET /api/control/specs`` (shipped specs, their TOML and learner groups), ``GET
/api/control/jobs`` (the queue), ``POST /api/control/runs`` and ``POST /api/control/sweeps``
(``{"spec": name | "toml": text, "seed", "episodes", "trace", "warm_start": [{"run", "agent",
"group"}]}``, a sweep with ``"seeds": N``), ``POST /api/control/jobs/{id}/stop``, ``POST
/api/control/play`` (``{"run", "agent", "episodes", "seed", "policy_only", "goal": [x, y],
"is_slippery", "map_name"}``: ``bdi-rl play`` of a checkpoint of the library) and ``POST
/api/control/runs/{run}/resume`` (``bdi-rl run --resume`` of an interrupted or abandoned
run). Checkpoints and runs are named by run id and agent, found under the runs directory;
nothing in a request is ever a path. Plays and warm starts are checked as the CLI checks them
(in a worker thread) before anything is queued: a table of another state space is a 400 with
the line ``--warm-start`` gives.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import secrets
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

import msgspec
import orjson
from aiohttp import web
from aiohttp.typedefs import Handler
from msgspec import Meta

from bdi_rl.control.jobs import Job, JobQueue
from bdi_rl.control.plans import StagedPlans
from bdi_rl.control.specs import (
    MAX_SPEC_BYTES,
    AgentName,
    RequestError,
    RunId,
    WarmStartRef,
    apply_warm_starts,
    learner_groups,
    refuse_page_axes,
    save_spec,
    shipped_spec,
    shipped_specs,
    uploaded_spec,
)
from bdi_rl.control.workers import WorkerQueue
from bdi_rl.readers.runstate import run_state
from bdi_rl.readers.viewer import STATIC, create_app, stop_signals
from bdi_rl.readers.viewerapi import CONTROL, bad_request, json_response, not_found
from bdi_rl.readers.webserver import host_check, start_app, url_of
from bdi_rl.rl.checkpoint import CheckpointError
from bdi_rl.rl.envs import EnvError
from bdi_rl.rl.policyfile import PolicyFileError
from bdi_rl.spec import MAX_EPISODES, MAX_SEED, ExperimentSpec, SpecError
from bdi_rl.store import SPEC_FILE, Sweep, new_sweep_id, run_dir_named, write_sweep
from bdi_rl.sweepfile import SweepPlan, configuration_spec, plan_from_table

TOKEN_HEADER = "X-BDI-RL-Token"
#: Largest request body (an uploaded spec, JSON-escaped, and a few numbers).
MAX_BODY = 2 * MAX_SPEC_BYTES + 4096
#: Most seeds in one sweep.
MAX_SWEEP = 64
#: Largest axes text of a sweep, and most runs one sweep queues.
MAX_AXES_BYTES = 20_000
MAX_SWEEP_RUNS = 1000
#: Most jobs waiting at once (a page left starting sweeps must not fill the memory).
MAX_QUEUED = 1024
#: Most warm-start entries in one request (one per agent group).
MAX_AGENT_GROUPS = 1000
#: Most episodes one play from the page plays.
MAX_PLAY_EPISODES = 1_000_000

T = TypeVar("T")
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
    warm_start: Annotated[list[WarmStartRef], Meta(max_length=MAX_AGENT_GROUPS)] = []
    """what learner groups start from, by run id and agent (checked before anything is queued)"""
    plans: dict[str, Annotated[str, Meta(max_length=MAX_SPEC_BYTES)]] = {}
    """plan files uploaded with a sweep (name -> text), named in its axes (``control.plans``)"""
    axes: Annotated[str, Meta(max_length=MAX_AXES_BYTES)] | None = None
    """a sweep's axes as TOML, as a sweep file's ``[axes]`` lines (``"learning.alpha" = [0.1,
    0.2]``), with ``method``, ``samples`` and ``draw_seed`` if it draws (``bdi_rl.sweepfile``);
    its seeds are ``seeds`` from ``seed``"""


class PlayBody(msgspec.Struct, forbid_unknown_fields=True):
    """A play of a checkpoint of the library (``bdi-rl play``), as the library page sends it:
    only the overrides its small form offers, each checked here."""

    run: RunId
    agent: AgentName | None = None
    episodes: Annotated[int, Meta(ge=1, le=MAX_PLAY_EPISODES)] = 100
    seed: Annotated[int, Meta(ge=0, le=MAX_SEED)] | None = None
    policy_only: bool = False
    goal: Annotated[list[Annotated[int, Meta(ge=0, le=10_000)]], Meta(min_length=2, max_length=2)] | None = None
    is_slippery: bool | None = None
    map_name: Literal["4x4", "8x8"] | None = None


@functools.cache
def user_errors() -> tuple[type[Exception], ...]:
    """Errors of a spec, a checkpoint, an env or a play that the CLI would report as bad input:
    a request that meets one is a 400 with that one line. Imported when one is first caught,
    with what checks runs and plays (``xmpp.setup``, ``xmpp.play``): the AgentSpeak runtime
    and the play module would cost the server's start-up ~0.2 s."""
    from bdi_rl.bdi.mind import AslError
    from bdi_rl.xmpp.play import PlayError

    return (RequestError, SpecError, CheckpointError, EnvError, AslError, PolicyFileError, PlayError)


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
    app[CONTROL] = True
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
            web.post("/api/control/play", api_play),
            web.post("/api/control/runs/{run}/resume", api_resume),
        ]
    )
    return app


async def _stop_jobs(app: web.Application) -> None:
    await app[JOBS].shutdown()


# -- the guard ---------------------------------------------------------------------------
def _refused(message: str) -> web.HTTPForbidden:
    return web.HTTPForbidden(text=orjson.dumps({"error": message}).decode(), content_type="application/json")


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
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
    specs = [
        {"name": name, "toml": text, "learner_groups": learner_groups(text)} for name, text in shipped_specs().items()
    ]
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
async def _body(request: web.Request, kind: type[T]) -> T:
    """The body as a ``kind``; 400 naming what is wrong (read with a bound)."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise bad_request(f"request body larger than {MAX_BODY // 1024} KB")
    body = b""
    while chunk := await request.content.read(65536):
        body += chunk
        if len(body) > MAX_BODY:
            raise bad_request(f"request body larger than {MAX_BODY // 1024} KB")
    try:
        return msgspec.json.decode(body, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise bad_request(" ".join(str(exc).split())[:300]) from None


async def _start_request(request: web.Request) -> StartRequest:
    """The body as a :class:`StartRequest`; 400 naming what is wrong."""
    start = await _body(request, StartRequest)
    if (start.spec is None) == (start.toml is None):
        raise bad_request('give "spec" (a shipped spec\'s name) or "toml" (a spec\'s text), not both')
    if request.app[JOBS].queued() + start.seeds > MAX_QUEUED:
        raise bad_request(f"the queue is full ({MAX_QUEUED} jobs waiting): stop some, or wait")
    return start


async def _spec_of(start: StartRequest, request: web.Request) -> tuple[str, Path, Any]:
    """What the job shows as its spec, the file the child runs, and the loaded spec, its warm
    starts resolved and checked against its envs (in a worker thread: tables are read)."""
    overrides = {"seed": start.seed, "episodes": start.episodes, "trace": start.trace}
    runs = request.app[JOBS].runs
    try:
        if start.spec is not None:
            path, spec = shipped_spec(start.spec, overrides)
            label = start.spec
        else:
            assert start.toml is not None
            uploaded, spec = uploaded_spec(start.toml, overrides, runs, save=not start.warm_start)
            path, label = uploaded or Path(), f"{spec.name} (uploaded)"
        if start.warm_start:  # nothing is saved before every warm start is found and checked
            warm = apply_warm_starts(spec, start.warm_start, runs)
            await asyncio.to_thread(_check_learners, spec)
            path, label = save_spec(spec, runs), f"{label}; warm start {', '.join(warm)}"
        return label, path, spec
    except user_errors() as exc:
        raise bad_request(_in_runs(str(exc), runs)) from None
    except OSError as exc:
        raise web.HTTPInternalServerError(
            text=orjson.dumps({"error": f"cannot save the spec: {exc.strerror}"}).decode(),
            content_type="application/json",
        ) from None


def _check_learners(spec: ExperimentSpec) -> None:
    """Every learner's env and warm start, as ``bdi-rl run`` checks them before it starts."""
    from bdi_rl.xmpp.setup import learner_setups

    learner_setups(spec)


def _in_runs(message: str, runs: Path) -> str:
    """A one-line error with the runs directory's paths said as ``runs/<run>/...`` (the
    page names runs by id; it need not learn where the server keeps them)."""
    return " ".join(message.replace(f"{runs}/", "runs/").split())[:600]


async def api_start_run(request: web.Request) -> web.Response:
    start = await _start_request(request)
    if start.seeds != 1:
        raise bad_request("seeds: one run has one seed; start a sweep for more")
    label, path, spec = await _spec_of(start, request)
    queue = request.app[JOBS]
    job = queue.new_job(label, path, spec.seed, episodes=start.episodes, trace=start.trace)
    queue.submit([job])
    return json_response({"jobs": [job.to_json()]}, status=201)


async def api_start_sweep(request: web.Request) -> web.Response:
    """N seeds of one spec (base .. base+N-1), recorded as a sweep (``store.Sweep``)."""
    start = await _start_request(request)
    if start.seed is not None and start.seed + start.seeds - 1 > MAX_SEED:
        raise bad_request(f"seed: {start.seed} + {start.seeds} seeds goes past {MAX_SEED}")
    label, path, spec = await _spec_of(start, request)
    if spec.seed + start.seeds - 1 > MAX_SEED:
        raise bad_request(f"seed: {spec.seed} + {start.seeds} seeds goes past {MAX_SEED}")
    queue = request.app[JOBS]
    seeds = list(range(spec.seed, spec.seed + start.seeds))
    overrides: dict[str, Any] = {
        k: v for k, v in (("episodes", start.episodes), ("trace", start.trace)) if v is not None
    }
    if start.warm_start:
        overrides["warm_start"] = [msgspec.to_builtins(ref) for ref in start.warm_start]
    if start.plans and not start.axes:
        raise bad_request('plans: name them in the axes ("agents.learner.asl" = ["mine.asl"])')
    try:
        staged = StagedPlans(start.plans) if start.plans else None
    except RequestError as exc:
        raise bad_request(str(exc)) from None
    try:
        return await _queue_sweep(start, label, path, spec, seeds, overrides, staged, queue)
    finally:
        if staged is not None:
            staged.discard()


async def _queue_sweep(
    start: StartRequest,
    label: str,
    path: Path,
    spec: ExperimentSpec,
    seeds: list[int],
    overrides: dict[str, Any],
    staged: StagedPlans | None,
    queue: JobQueue,
) -> web.Response:
    plan = await _sweep_plan(start.axes, path, seeds, queue.runs, staged) if start.axes else None
    runs_of = plan.runs() if plan is not None else [(0, seed) for seed in seeds]
    if queue.queued() + len(runs_of) > MAX_QUEUED:
        raise bad_request(f"the queue is full ({MAX_QUEUED} jobs waiting): stop some, or wait")
    created = time.time()
    sweep_id = new_sweep_id(queue.runs, created)
    configurations = [c.settings for c in plan.configurations] if plan is not None else []
    if staged is not None:  # checked: kept beside the sweep, where its runs read them
        try:
            kept = staged.keep(queue.runs, sweep_id)
        except OSError as exc:
            raise web.HTTPInternalServerError(
                text=orjson.dumps({"error": f"cannot keep the plan files: {exc.strerror}"}).decode(),
                content_type="application/json",
            ) from None
        configurations = [{p: staged.moved(v, kept) for p, v in c.items()} for c in configurations]
    sweep = Sweep(
        sweep_id,
        spec.name,
        [seed for _, seed in runs_of],
        [None] * len(runs_of),
        created,
        overrides,
        axes=plan.axes if plan is not None else [],
        configurations=configurations,
        configuration=[k for k, _ in runs_of] if plan is not None else [],
        spec_file=str(path),
    )
    try:
        write_sweep(queue.runs, sweep)
    except OSError as exc:
        raise web.HTTPInternalServerError(
            text=orjson.dumps({"error": f"cannot write the sweep record: {exc.strerror}"}).decode(),
            content_type="application/json",
        ) from None
    jobs = [
        queue.new_job(
            f"{label} ({plan.configurations[c].label()})" if plan is not None else label,
            path,
            seed,
            episodes=start.episodes,
            trace=start.trace,
            sweep=sweep.id,
            sweep_index=k,
            settings=configurations[c] if plan is not None else {},
        )
        for k, (c, seed) in enumerate(runs_of)
    ]
    queue.submit(jobs, sweep)
    return json_response({"sweep": sweep.id, "jobs": [job.to_json() for job in jobs]}, status=201)


async def _sweep_plan(
    axes: str, spec_path: Path, seeds: list[int], runs: Path, staged: StagedPlans | None = None
) -> SweepPlan:
    """The page's axes over the spec, checked whole as ``bdi-rl sweep`` checks a sweep file
    (every value alone, every configuration's env and plans); 400 naming the axis."""
    try:
        table = tomllib.loads(axes)
    except tomllib.TOMLDecodeError as exc:
        raise bad_request(f"axes: not valid TOML: {exc}") from None
    options: dict[str, Any] = {k: table.pop(k) for k in ("method", "samples", "draw_seed") if k in table}
    table.setdefault("seed", seeds)
    try:
        uploaded = frozenset(staged.names) if staged is not None else frozenset()
        refuse_page_axes(spec_path, {path: values for path, values in table.items() if path != "seed"}, uploaded)
        if staged is not None:
            table = staged.resolve(table)
        # plan files: the spec's own, or shipped ones (a page names no other file of the server)
        plan = plan_from_table({"axes": table, **options}, spec_path.parent / "axes", spec_path)
        if len(plan.runs()) > MAX_SWEEP_RUNS:
            raise SpecError(f"axes: {len(plan.runs())} runs: a sweep from this page has at most {MAX_SWEEP_RUNS}")
        from bdi_rl.xmpp.setup import prepare_experiment

        for configuration in plan.configurations:
            try:
                await asyncio.to_thread(prepare_experiment, configuration_spec(plan, configuration))
            except user_errors() as exc:
                raise SpecError(f"axes: configuration ({configuration.label()}): {exc}") from None
    except user_errors() as exc:
        raise bad_request(_in_runs(str(exc), runs)) from None
    return plan


async def api_stop(request: web.Request) -> web.Response:
    raw = request.match_info["job"]
    try:
        job = request.app[JOBS].stop(int(raw)) if raw.isdigit() and len(raw) < 12 else None
    except KeyError:
        job = None
    if job is None:
        raise not_found("no such job")
    return json_response({"job": job.to_json()})


def _queue_one(queue: JobQueue, job: Job) -> web.Response:
    if queue.queued() + 1 > MAX_QUEUED:
        raise bad_request(f"the queue is full ({MAX_QUEUED} jobs waiting): stop some, or wait")
    queue.submit([job])
    return json_response({"jobs": [job.to_json()]}, status=201)


async def api_play(request: web.Request) -> web.Response:
    """``bdi-rl play`` of an agent's checkpoint in a run of this runs directory, checked whole
    (in a worker thread) before it is queued."""
    body = await _body(request, PlayBody)
    queue = request.app[JOBS]
    run_dir = run_dir_named(queue.runs, body.run)
    if run_dir is None:
        raise not_found("no such run")
    env = {k: v for k, v in (("is_slippery", body.is_slippery), ("map_name", body.map_name)) if v is not None}
    goal = (body.goal[0], body.goal[1]) if body.goal is not None else None
    from bdi_rl.xmpp.play import PlayRequest, prepare_play

    play = PlayRequest(run_dir, body.agent, body.episodes, body.seed, env, goal, body.policy_only)
    try:
        await asyncio.to_thread(prepare_play, play)
    except user_errors() as exc:
        raise bad_request(_in_runs(str(exc), queue.runs)) from None
    args = ["play", str(run_dir), "--runs", str(queue.runs), "--episodes", str(body.episodes)]
    if body.agent is not None:
        args += ["--agent", body.agent]
    if body.seed is not None:
        args += ["--seed", str(body.seed)]
    if goal is not None:
        args += ["--goal", f"{goal[0]},{goal[1]}"]
    args += [f"--env={key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in env.items()]
    if body.policy_only:
        args.append("--policy-only")
    on = ", ".join([*(f"{k} {v}" for k, v in env.items()), *([f"goal {goal}"] if goal else [])])
    label = f"play {body.run}/{body.agent or '(its table)'}" + (f" on {on}" if on else "")
    return _queue_one(queue, queue.new_task(label, "play", args, seed=body.seed, episodes=body.episodes))


async def api_resume(request: web.Request) -> web.Response:
    """``bdi-rl run --resume`` of an interrupted or abandoned run of this runs directory."""
    queue = request.app[JOBS]
    run = request.match_info["run"]
    run_dir = run_dir_named(queue.runs, run)
    if run_dir is None or not (run_dir / SPEC_FILE).is_file():
        raise not_found("no such run")
    state = await asyncio.to_thread(run_state, run_dir)
    if state.state not in ("interrupted", "abandoned"):
        raise bad_request(f"{run}: {state.state} ({state.why}): only an interrupted or abandoned run is resumed")
    if await asyncio.to_thread(_is_play, run_dir):
        raise bad_request(f"{run}: an evaluation (bdi-rl play) is not resumed: play the table again")
    active = queue.active_for(run)
    if active is not None:
        raise bad_request(f"{run}: job {active.id} is resuming it already")
    job = queue.new_task(f"resume {run}", "resume", ["run", "--resume", str(run_dir)], run=run)
    return _queue_one(queue, job)


def _is_play(run_dir: Path) -> bool:
    """Whether the run's spec says it is an evaluation (``[play]``)."""
    try:
        with open(run_dir / SPEC_FILE, "rb") as f:
            return "play" in tomllib.loads(f.read(1 << 20).decode("utf-8", "replace"))
    except (OSError, tomllib.TOMLDecodeError, RecursionError):
        return False


# -- serving -----------------------------------------------------------------------------
def serve(
    runs: Path,
    host: str,
    port: int,
    max_running: int,
    allow_hosts: Sequence[str] = (),
    process_per_run: bool = False,
) -> None:
    """``bdi-rl serve`` until Ctrl-C or SIGTERM, which stops running children as Stop does;
    its URL is printed once it listens. OSError, before anything is printed, if the address
    cannot be bound. Runs and resumes go to ``max_running`` worker processes that make one
    run after another, as ``bdi-rl sweep``'s do (start-up paid once per worker, not per run);
    ``process_per_run``: each in a ``bdi-rl run`` child of its own, as plays always are."""
    asyncio.run(_serve(runs, host, port, max_running, allow_hosts, process_per_run))


async def _serve(
    runs: Path, host: str, port: int, max_running: int, allow_hosts: Sequence[str], process_per_run: bool
) -> None:
    token = secrets.token_urlsafe(32)
    queue = JobQueue(runs, max_running) if process_per_run else WorkerQueue(runs, max_running)
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
