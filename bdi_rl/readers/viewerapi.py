"""The viewer's JSON API (``/api/...``): each route's handler, the lookups that check every
name a URL gives against what exists (no path ever comes from the URL), and the JSON answers
the control routes build on too (``bdi_rl.control``). The pages, static files and the server
around it are :mod:`bdi_rl.readers.viewer`'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson
from aiohttp import web

from bdi_rl.readers import curves, joint, render, sweepreport, world
from bdi_rl.readers.explain import choices_behind, explain_step
from bdi_rl.readers.indexer import Indexer
from bdi_rl.readers.library import Library
from bdi_rl.readers.mindnotes import mind_notes
from bdi_rl.readers.overview import run_overview
from bdi_rl.readers.pattern import PatternError, parse_pattern
from bdi_rl.readers.qgrid import QGridError, QTable, load_qview
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.search import Scope, search
from bdi_rl.store import TRACE_FILE, read_sweep, read_sweeps
from bdi_rl.trace.kinds import (
    ACTION,
    BELIEF_ADD,
    BELIEF_DEL,
    CYCLE,
    GOAL_ADD,
    INTENTION_END,
    INTENTION_FAIL,
    INTENTION_START,
    INTENTIONS,
    KIND_LEVEL,
    MSG_RECV,
    MSG_SEND,
    OPTIONS,
    PLAN_CHOICE,
    PLAN_VALUE,
    RL_STEP,
    STEPS,
    WORLD_STEP,
)

RUNS_DIR = web.AppKey("runs_dir", Path)
INDEXER = web.AppKey("indexer", Indexer)
LIVE_POLL = web.AppKey("live_poll", float)
LIBRARY = web.AppKey("library", Library)
CONTROL = web.AppKey("control", bool)
"""whether the control surface is served too (``bdi-rl serve``): pages ask ``/api/server``"""
#: Seconds the library's answer waits for its scan (the rest is listed as pending, read on).
LIBRARY_WAIT = 1.0

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,200}")
#: Most events one API call folds or returns.
MAX_EVENTS_PER_CALL = 5000

#: How the run page describes an event of each kind in one line (``VIEWS`` in run.js); a
#: kind not listed shows its data as JSON.
KIND_VIEWS = {
    BELIEF_ADD: "belief",
    BELIEF_DEL: "belief",
    GOAL_ADD: "goal",
    INTENTION_START: "intention-start",
    INTENTION_END: "intention-end",
    INTENTION_FAIL: "intention-end",
    ACTION: "internal-action",
    RL_STEP: "rl-step",
    MSG_SEND: "sent",
    MSG_RECV: "received",
    CYCLE: "reasoning-cycle",
    OPTIONS: "plan-options",
    INTENTIONS: "intention-stacks",
    STEPS: "data",  # readers expand step records into their events: never shown as such
    WORLD_STEP: "joint-step",
    PLAN_CHOICE: "plan-choice",
    PLAN_VALUE: "plan-value",
}


# The JSON answers of the viewer and of the control routes built on it (bdi_rl.control).
def json_response(value: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(value), status=status, content_type="application/json")


def not_found(what: str) -> web.HTTPNotFound:
    return web.HTTPNotFound(text=orjson.dumps({"error": what}).decode(), content_type="application/json")


def bad_request(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=orjson.dumps({"error": message}).decode(), content_type="application/json")


# -- lookups (every name from a URL is checked against what exists) ----------------------
def _existing_run(runs: Path, run: str) -> Path | None:
    """The run directory of that id under ``runs``, or None (no such run, or not an id)."""
    if not _RUN_ID.fullmatch(run) or run in (".", ".."):
        return None
    path = runs / run
    if path.parent != runs or not (path / TRACE_FILE).is_file():
        return None
    return path


def run_dir_of(request: web.Request) -> Path:
    path = _existing_run(request.app[RUNS_DIR], request.match_info["run"])
    if path is None:
        raise not_found("no such run")
    return path


Handler = Callable[[web.Request, RunIndex], Awaitable[web.StreamResponse]]


def _with_index(handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A handler of one run's API, given the run's index brought up to date (off the event
    loop, by at most the request budget); the index does not change while it runs."""

    @functools.wraps(handler)
    async def with_index(request: web.Request) -> web.StreamResponse:
        async with request.app[INDEXER].reading(run_dir_of(request)) as index:
            return await handler(request, index)

    return with_index


def _with_fresh_index(handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A handler of one run's API that reads the index in a thread: given the index brought up
    to date as :func:`_with_index` does, but without the run's lock while it runs (a slow or
    stuck thread must not hold every other request to the run; the index only grows, and a
    reader in a thread sees whole lines of it, as the worker writes them)."""

    @functools.wraps(handler)
    async def with_fresh_index(request: web.Request) -> web.StreamResponse:
        return await handler(request, await request.app[INDEXER].get(run_dir_of(request)))

    return with_fresh_index


def _agent(index: RunIndex, name: str) -> str:
    """An agent of the run, by bare JID or local part."""
    if name in index.agents:
        return name
    for jid in index.agents:
        if jid.split("@", 1)[0] == name:
            return jid
    raise not_found("no such agent")


def _int_param(request: web.Request, key: str, default: int, minimum: int = 0) -> int:
    """An integer query parameter; 400 for one that is not an integer or is below ``minimum``
    (Python refuses integers of more than 4300 digits, so no huge number gets through)."""
    raw = request.query.get(key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{key}: not an integer") from None
    if value < minimum:
        raise bad_request(f"{key}: must be {minimum} or more")
    return value


# -- API --------------------------------------------------------------------------------
async def api_server(request: web.Request) -> web.Response:
    """What this server offers: pages probe it instead of a control route, which under
    ``bdi-rl view`` would answer 404 (a console error in every page)."""
    return web.json_response({"control": request.app[CONTROL]})


async def api_kinds(request: web.Request) -> web.Response:
    """Every event kind (the page names none itself): the trace level that records it and
    how the page shows it."""
    return json_response(
        {
            "kinds": {
                kind: {"level": level.name.lower(), "view": KIND_VIEWS.get(kind, "data")}
                for kind, level in KIND_LEVEL.items()
            }
        }
    )


async def api_runs(request: web.Request) -> web.Response:
    indexer = request.app[INDEXER]
    rows, budget = [], indexer.request_budget  # shared: big runs not yet indexed say how far
    for path in indexer.run_dirs():
        if _RUN_ID.fullmatch(path.name):
            async with indexer.reading(path, budget) as index:
                budget = max(0, budget - (index.indexed_bytes - index.indexed_before_refresh))
                rows.append(run_overview(index))
    rows.sort(key=lambda r: r["started"] or 0, reverse=True)
    return json_response({"runs": rows})


@_with_index
async def api_run(request: web.Request, index: RunIndex) -> web.Response:
    agents = {}
    for jid, agent in sorted(index.agents.items()):
        agents[jid] = {
            "events": agent.events,
            "episodes": agent.episodes,
            "evals": agent.evals,
            "stopped": agent.stopped,
            "plan_values": curves.plan_value_series(agent.choices),
        }
    return json_response({**run_overview(index), "agents": agents})


#: Most runs one compare page overlays.
MAX_COMPARED = 64


def _compared_runs(request: web.Request) -> tuple[list[Path], int]:
    """The runs of ``?runs=id1,id2`` (each must exist: 404 otherwise) or of ``?sweep=id``
    (those started so far), and how many of the sweep's seeds have no trace yet (queued, or
    just starting: the page keeps following the sweep until they come)."""
    runs = request.app[RUNS_DIR]
    if "sweep" in request.query:
        sweep = read_sweep(runs, request.query["sweep"])
        if sweep is None:
            raise not_found("no such sweep")
        found = [_existing_run(runs, r) if r else None for r in sweep.runs]
        waiting = sum(p is None and k not in sweep.cancelled for k, p in enumerate(found))
        return [p for p in found if p is not None], waiting
    names = [n for n in request.query.get("runs", "").split(",") if n]
    if not names:
        raise bad_request("say runs=id1,id2,... or sweep=id")
    if len(names) > MAX_COMPARED:
        raise bad_request(f"runs: at most {MAX_COMPARED}")
    paths = [_existing_run(runs, n) for n in dict.fromkeys(names)]
    if any(p is None for p in paths):
        raise not_found("no such run")
    return [p for p in paths if p is not None], 0


def _configuration_groups(request: web.Request, paths: list[Path]) -> dict[str, list[int]] | None:
    """``by=configuration`` of a sweep's runs: each configuration's label -> the numbers of
    its runs among ``paths`` (the sweep's runs found so far, in order)."""
    sweep = read_sweep(request.app[RUNS_DIR], request.query.get("sweep", ""))
    if sweep is None or not sweep.configurations:
        return None
    index = {name: k for k, name in enumerate(p.name for p in paths)}
    groups: dict[str, list[int]] = {sweepreport.configuration_label(c): [] for c in sweep.configurations}
    labels = list(groups)
    for k, run in enumerate(sweep.runs):
        if run in index and k < len(sweep.configuration) and 0 <= sweep.configuration[k] < len(labels):
            groups[labels[sweep.configuration[k]]].append(index[run])
    return groups


def _choice(request: web.Request, key: str, choices: tuple[str, ...]) -> str:
    value = request.query.get(key, choices[0])
    if value not in choices:
        raise bad_request(f"{key}: one of {', '.join(choices)}")
    return value


async def api_curves(request: web.Request) -> web.Response:
    """Learning curves of one or more runs and their aggregate (``readers.curves``):
    ``runs=`` or ``sweep=``, ``x=episodes|env_steps|time``, ``smooth=N`` (0: raw),
    ``method=rolling|ema``, ``across=runs|agents``."""
    paths, waiting = _compared_runs(request)
    x_axis = _choice(request, "x", curves.X_AXES)
    method = _choice(request, "method", curves.METHODS)
    across = _choice(request, "across", curves.ACROSS)
    window = min(_int_param(request, "smooth", 100), 100_000)
    indexer = request.app[INDEXER]
    series = []
    for path in paths:  # copied here, worked out in a thread
        async with indexer.reading(path) as index:
            series.append(curves.run_series(index))
    groups = _configuration_groups(request, paths) if request.query.get("by") == "configuration" else None
    payload = await asyncio.to_thread(curves.curves_payload, series, x_axis, window, method, across, groups=groups)
    return json_response({**payload, "waiting": waiting})


async def api_sweeps(request: web.Request) -> web.Response:
    """Every sweep record of the runs directory, newest first."""
    return json_response({"sweeps": [msgspec.to_builtins(s) for s in read_sweeps(request.app[RUNS_DIR])]})


async def api_sweep_groups(request: web.Request) -> web.Response:
    """A sweep's runs grouped by configuration (``readers.sweepreport``, as ``bdi-rl
    sweep-report`` prints them): ``?metric=success|return&threshold=0.7&window=100``, as JSON
    or, with ``&format=csv``, as a CSV file."""
    sweep_id = request.match_info["sweep"]
    metric = _choice(request, "metric", sweepreport.METRICS)
    window = min(_int_param(request, "window", 100, minimum=1), 100_000)
    try:
        threshold = float(request.query.get("threshold", "0.7"))
    except ValueError:
        raise bad_request("threshold: not a number") from None
    recorded = read_sweep(request.app[RUNS_DIR], sweep_id)
    if recorded is None:
        raise not_found("no such sweep")
    if not recorded.axes:  # a sweep of seeds: one group, which the curves page shows already
        return json_response({"sweep": recorded.id, "spec": recorded.spec, "axes": [], "rows": []})
    try:
        sweep, rows = await asyncio.to_thread(
            sweepreport.report, sweep_id, request.app[RUNS_DIR], metric, threshold, window, True
        )
    except sweepreport.SweepReportError as exc:
        raise bad_request(str(exc)) from None
    if request.query.get("format") == "csv":
        return web.Response(
            text=sweepreport.csv_text(rows),
            content_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{sweep.id}-groups.csv"'},
        )
    return json_response(
        {
            "sweep": sweep.id,
            "spec": sweep.spec,
            "axes": sweep.axes,
            "metric": metric,
            "threshold": threshold,
            "window": window,
            "iqm_min_runs": sweepreport.IQM_MIN_RUNS,
            "rows": rows,
        }
    )


async def api_library(request: web.Request) -> web.Response:
    """The checkpoint library (``readers.library``): every checkpoint and policy cache under
    the runs directory, read in a worker thread; what it has not read within LIBRARY_WAIT
    seconds is listed as pending (``"pending": N``) and read on meanwhile."""
    return json_response(await request.app[LIBRARY].listing(LIBRARY_WAIT))


@_with_index
async def api_mind(request: web.Request, index: RunIndex) -> web.Response:
    jid = _agent(index, request.match_info["agent"])
    agent = index.agents[jid]
    if "episode" in request.query:  # a step (or a whole episode): its last event, and
        step = _int_param(request, "step", 0) if "step" in request.query else None
        try:  # everything it did in it listed as the changes
            first, position = index.span_of(jid, _int_param(request, "episode", 0), step)
        except KeyError as exc:
            raise not_found(exc.args[0]) from None
        previous = first - 1
    else:
        position = max(0, min(_int_param(request, "pos", agent.events - 1), agent.events - 1))
        previous = max(-1, min(_int_param(request, "prev", position - 1, minimum=-1), position - 1))
    if position - previous > MAX_EVENTS_PER_CALL:
        previous = position - MAX_EVENTS_PER_CALL
    state, _ = index.mind_at(jid, position)
    before, _ = index.mind_at(jid, previous) if previous >= 0 else (None, None)
    changes = [
        {**e, "position": k} for k, e in enumerate(index.events_of(jid, previous + 1, position + 1), previous + 1)
    ]
    current = changes[-1]
    added = {b for b in state.beliefs if before is None or b not in before.beliefs}
    removed = [] if before is None else sorted(b for b in before.beliefs if b not in state.beliefs)
    return json_response(
        {
            "agent": jid,
            "position": position,
            "previous": previous,
            "events": agent.events,
            "episode": current.get("episode"),
            "step": current.get("step"),
            "event": current,
            "beliefs": [
                {"belief": b, "source": s[0], "sources": s, "new": b in added} for b, s in sorted(state.beliefs.items())
            ],
            "removed": removed,
            "intentions": state.intentions,
            "stacks": state.stacks,
            "options": state.options,
            "cycle": state.cycle,
            "rl": state.rl,
            "choice": explain_step(state.rl, agent.action_names) if state.rl else None,
            "plan_choices": choices_behind(agent.choices, state.intentions, position),
            "changes": changes[-200:],
            "messages": [m for m in agent.messages if previous < m["position"] <= position][-50:],
            "notes": mind_notes(index.trace_level, state.beliefs, current),
        }
    )


@_with_index
async def api_qtable(request: web.Request, index: RunIndex) -> web.Response:
    """The agent's latest Q-table checkpoint on its grid, or as numbers (``{"table": ...}``)
    when it has no map, saying why (a shared world's seat ...); ``{"error": why}`` when it
    has no readable checkpoint (``readers.qgrid``)."""
    jid = _agent(index, request.match_info["agent"])
    names = index.agents[jid].action_names
    try:
        view = await asyncio.to_thread(load_qview, index.run_dir, jid.split("@", 1)[0], names)
    except QGridError as exc:
        return json_response({"error": str(exc)})
    if isinstance(view, QTable):
        return json_response({"table": dataclasses.asdict(view)})
    return json_response(dataclasses.asdict(view))


async def api_search(request: web.Request) -> web.Response:
    """When each belief matching ``belief=PATTERN`` was first added and removed, per agent
    and source (``agent=NAME``: one agent's; ``readers.search``); a bad pattern is a 400."""
    async with request.app[INDEXER].reading(run_dir_of(request)) as index:
        jid = _agent(index, request.query["agent"]) if request.query.get("agent") else None
        try:
            pattern = parse_pattern(request.query.get("belief", ""))
        except PatternError as exc:
            raise bad_request(f"belief: {exc}") from None
        scope = Scope.of(index, jid)  # copied here, searched in a thread while indexing goes on
        indexing = index.indexing
    result = await asyncio.to_thread(search, scope, pattern)
    return json_response({**result.to_dict(), "agent": jid, "indexing": indexing})


@_with_fresh_index
async def api_world(request: web.Request, index: RunIndex) -> web.Response:
    """An episode on the agent's grid world (``readers.world``): ``episode=N`` (404 if the
    trace has none), ``step=K`` the frame whose beliefs and Q-values to draw; ``{"error":
    why}`` for an agent without a world view."""
    jid = _agent(index, request.match_info["agent"])
    episode, frame = _int_param(request, "episode", 0), _int_param(request, "step", 0)
    try:
        return json_response(await asyncio.to_thread(world.episode_world, index, jid, episode, frame))
    except world.WorldError as exc:
        if str(exc).startswith("episode:"):
            raise not_found(str(exc)) from None
        return json_response({"error": str(exc)})


@_with_fresh_index
async def api_render(request: web.Request, index: RunIndex) -> web.Response:
    """The episode as a GIF (``readers.render``, as ``bdi-rl render`` draws it)."""
    jid = _agent(index, request.match_info["agent"])
    episode = _int_param(request, "episode", 0)
    try:
        gif = await asyncio.to_thread(render.render_episode, index, jid, episode, "gif")
    except world.WorldError as exc:
        raise not_found(str(exc)) from None
    name = f"{jid.split('@', 1)[0]}-episode-{episode}.gif"
    return web.Response(
        body=gif, content_type="image/gif", headers={"Content-Disposition": f'inline; filename="{name}"'}
    )


@_with_fresh_index
async def api_joint(request: web.Request, index: RunIndex) -> web.Response:
    """A shared world's joint actions early and late in training (``readers.joint``), and
    its map when it is a grid; ``{"error": why}`` for a run without a world. With
    ``from=A&to=B``: the joint actions of episodes A to B instead (400 for a range the
    trace does not have)."""
    if "from" in request.query or "to" in request.query:
        first = _int_param(request, "from", 0, minimum=0)
        last = _int_param(request, "to", first, minimum=0)
        try:
            return json_response(await asyncio.to_thread(joint.joint_range, index, first, last))
        except joint.JointError as exc:
            raise bad_request(str(exc)) from None
    try:
        summary = await asyncio.to_thread(joint.joint_summary, index)
    except joint.JointError as exc:
        return json_response({"error": str(exc)})
    return json_response(summary)


@_with_fresh_index
async def api_joint_episode(request: web.Request, index: RunIndex) -> web.Response:
    """Every joint step of one of the world's episodes (404 if the trace has none)."""
    try:
        episode = int(request.match_info["episode"])
    except ValueError:
        raise bad_request("episode: not an integer") from None
    try:
        return json_response(await asyncio.to_thread(joint.joint_episode, index, episode))
    except joint.JointError as exc:
        raise not_found(str(exc)) from None


@_with_index
async def api_messages(request: web.Request, index: RunIndex) -> web.Response:
    """Who told whom what: every ``msg.send`` of the run in time order (long runs: the last
    ``limit``, default 2000); ``hide=functor`` leaves out messages of that functor."""
    limit = min(_int_param(request, "limit", 2000, minimum=1), 20000)
    hide = request.query.get("hide", "")  # a functor whose messages to leave out (experience)
    if hide and not re.fullmatch(r"[a-z][A-Za-z0-9_]{0,60}", hide):
        raise bad_request("hide: not an AgentSpeak functor")
    prefix = f"{hide}(" if hide else None
    sent = [
        {"from": jid, **m}
        for jid, agent in index.agents.items()
        for m in agent.messages
        if m["kind"] == MSG_SEND and not (prefix and str(m.get("content", "")).startswith(prefix))
    ]
    sent.sort(key=lambda m: m["ts"] or 0)
    return json_response({"messages": sent[-limit:], "total": len(sent)})


async def api_live(request: web.Request) -> web.StreamResponse:
    """Server-sent events: one ``update`` each time the run's trace grows, until it ends or
    the page goes (a closed tab is no error: nothing is logged)."""
    run_dir = run_dir_of(request)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    try:
        await _stream_updates(request, run_dir, response)
    except ConnectionResetError:  # aiohttp's ClientConnectionResetError: the page was closed
        pass
    return response


async def _stream_updates(request: web.Request, run_dir: Path, response: web.StreamResponse) -> None:
    last = -1
    poll = request.app[LIVE_POLL]
    indexer = request.app[INDEXER]
    while True:
        async with indexer.reading(run_dir) as index:  # read under its lock, written after
            total = index.lines
            payload = {
                "events": total,
                "live": index.live,
                "state": index.state.state,
                "indexing": index.indexing,
                "episodes": {jid: len(a.episodes) for jid, a in index.agents.items()},
                "damaged": index.damaged,
            }
            done = not index.live and index.complete
        if total != last:
            last = total
            await response.write(b"event: update\ndata: " + orjson.dumps(payload) + b"\n\n")
        if done:
            return
        await asyncio.sleep(poll)
