"""The web viewer: runs, learning curves, the Mind Inspector and the message flow, live.

An aiohttp app over a runs directory. It reads run directories through
:class:`~bdi_rl.readers.runindex.RunIndex` indexes that :class:`~bdi_rl.readers.indexer.Indexer` keeps up to
date in the background (a big run answers at once, saying how far indexing has got), and
never imports agent code or writes into a run; the only file it writes is its index cache.
Safe by default: it binds 127.0.0.1, answers only to its own host names (no DNS rebinding;
``readers.webserver``), accepts only GET, resolves run ids and agent names
against what exists (no path ever comes from the URL), and the pages build their DOM with
``textContent`` only (a belief holding ``<script>`` shows as text), under a strict
Content-Security-Policy. Pages are static files; data comes from the JSON API; a run that is
still going pushes updates over server-sent events. Here: the app, its pages and static
files, and serving it; the JSON API is :mod:`bdi_rl.readers.viewerapi`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from bdi_rl.readers import vendor
from bdi_rl.readers.indexcache import default_cache_dir
from bdi_rl.readers.indexer import Indexer
from bdi_rl.readers.library import Library
from bdi_rl.readers.viewerapi import (
    CONTROL,
    INDEXER,
    LIBRARY,
    LIVE_POLL,
    RUNS_DIR,
    api_curves,
    api_joint,
    api_joint_episode,
    api_kinds,
    api_library,
    api_live,
    api_messages,
    api_mind,
    api_qtable,
    api_render,
    api_run,
    api_runs,
    api_search,
    api_server,
    api_sweep_groups,
    api_sweeps,
    api_world,
    not_found,
    run_dir_of,
)
from bdi_rl.readers.webserver import SECURITY_HEADERS as SECURITY_HEADERS  # what every answer carries
from bdi_rl.readers.webserver import HostCheck, harden, host_check, start_app, url_of

STATIC = Path(__file__).resolve().parent / "static"


def create_app(
    runs_dir: Path, live_poll: float = 1.0, indexer: Indexer | None = None, hosts: HostCheck | None = None
) -> web.Application:
    """The viewer over ``runs_dir``, answering only to ``hosts`` (default: a loopback
    server's, ``readers.webserver``); by default its indexes persist in the user's index
    cache (``bdi_rl.readers.indexcache``), another ``indexer`` may say otherwise."""
    app = web.Application()
    harden(app, hosts or host_check("127.0.0.1"))
    app[RUNS_DIR] = runs_dir.resolve()
    app[INDEXER] = indexer or Indexer(app[RUNS_DIR], default_cache_dir())
    app[LIVE_POLL] = live_poll
    app[LIBRARY] = Library(app[RUNS_DIR])
    app[CONTROL] = False
    app.cleanup_ctx.append(_background_indexing)
    app.add_routes(
        [
            web.get("/", _page("index.html")),
            web.get("/run/{run}", _page("run.html")),
            web.get("/compare", _page("compare.html")),
            web.get("/library", _page("library.html")),
            web.get("/static/{name}", _static),
            web.get("/static/vendor/{name}", _vendor),
            web.get("/favicon.ico", _no_icon),
            web.get("/api/server", api_server),
            web.get("/api/kinds", api_kinds),
            web.get("/api/runs", api_runs),
            web.get("/api/runs/{run}", api_run),
            web.get("/api/runs/{run}/agents/{agent}/mind", api_mind),
            web.get("/api/runs/{run}/messages", api_messages),
            web.get("/api/runs/{run}/agents/{agent}/qtable", api_qtable),
            web.get("/api/runs/{run}/agents/{agent}/world", api_world),
            web.get("/api/runs/{run}/agents/{agent}/render", api_render),
            web.get("/api/runs/{run}/search", api_search),
            web.get("/api/runs/{run}/live", api_live),
            web.get("/api/runs/{run}/joint", api_joint),
            web.get("/api/runs/{run}/joint/{episode}", api_joint_episode),
            web.get("/api/curves", api_curves),
            web.get("/api/sweeps", api_sweeps),
            web.get("/api/sweeps/{sweep}/groups", api_sweep_groups),
            web.get("/api/library", api_library),
        ]
    )
    return app


async def _background_indexing(app: web.Application) -> Any:
    """Index every run in the background while the viewer serves; save indexes at the end."""
    indexer = app[INDEXER]
    task = asyncio.create_task(indexer.keep_indexing(app[LIVE_POLL]))
    yield
    task.cancel()
    await asyncio.wait({task}, timeout=5)  # shutting down must never hang on it
    indexer.save_all()


# -- pages -------------------------------------------------------------------------------
def _page(name: str) -> Any:
    async def handler(request: web.Request) -> web.FileResponse:
        if "run" in request.match_info:
            run_dir_of(request)  # an unknown run is a 404 page, not an empty one
        return web.FileResponse(STATIC / name)

    return handler


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


#: The types of the static files, named rather than guessed from the host's MIME table: the
#: pages load their scripts as ES modules, which a browser runs only when served as JavaScript.
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css"}


async def _static(request: web.Request) -> web.FileResponse:
    name = request.match_info["name"]
    allowed = {p.name: p.suffix for p in STATIC.iterdir() if p.suffix in STATIC_TYPES}
    if name not in allowed:
        raise not_found("no such file")
    return web.FileResponse(STATIC / name, headers={"Content-Type": STATIC_TYPES[allowed[name]]})


#: How long a browser may keep the charting library (it changes only with the installed plotly).
VENDOR_CACHE = "public, max-age=604800"


async def _vendor(request: web.Request) -> web.StreamResponse:
    """plotly.js from the installed wheel, its CSS and the prelude that lets it run under
    the CSP (``readers.vendor``); nothing else."""
    name = request.match_info["name"]
    headers = {"Cache-Control": VENDOR_CACHE}
    if name == "plotly.min.js":
        return web.FileResponse(vendor.PLOTLY_JS, headers=headers)
    if name == "plotly.css":
        return web.Response(text=vendor.plotly_css(), content_type="text/css", headers=headers)
    if name == "plotly-csp.js":
        return web.Response(text=vendor.prelude_js(), content_type="text/javascript", headers=headers)
    raise not_found("no such file")


async def start_viewer(runs_dir: Path, host: str, port: int, allow_hosts: Sequence[str] = ()) -> web.AppRunner:
    """Serve the viewer on the running event loop (beside a run or the telemetry agent),
    answering to the names of ``host`` and ``allow_hosts`` (``readers.webserver``); ``await
    runner.cleanup()`` stops it. OSError if the address cannot be bound."""
    return await start_app(create_app(runs_dir, hosts=host_check(host, allow_hosts)), host, port)


@contextlib.contextmanager
def stop_signals() -> Iterator[asyncio.Event]:
    """An event SIGINT and SIGTERM set while the block runs (a second one during shutdown
    sets it again instead of interrupting)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        yield stop
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def serve_until_stopped(runner: web.AppRunner) -> None:
    """Keep serving until SIGINT or SIGTERM, then stop."""
    try:
        with stop_signals() as stop:
            await stop.wait()
    finally:
        await runner.cleanup()


def serve(runs_dir: Path, host: str = "127.0.0.1", port: int = 8765, allow_hosts: Sequence[str] = ()) -> None:
    """Run the viewer until Ctrl-C or SIGTERM (``bdi-rl view``); its URL is printed once it
    listens. OSError, before anything is printed, if the address cannot be bound."""
    try:
        asyncio.run(_serve(runs_dir, host, port, allow_hosts))
    except KeyboardInterrupt:  # stopped while starting, before its own handlers: stopped all the same
        pass


async def _serve(runs_dir: Path, host: str, port: int, allow_hosts: Sequence[str]) -> None:
    runner = await start_viewer(runs_dir, host, port, allow_hosts)
    print(f"bdi-rl viewer: {url_of(host, port)}  (runs in {runs_dir}; Ctrl-C stops)", flush=True)
    await serve_until_stopped(runner)
