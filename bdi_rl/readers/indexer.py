"""The viewer's run indexes, kept up to date in the background, off the event loop.

A request never waits for a whole big trace: it indexes at most ``request_budget`` bytes
(about 0.1 s) and answers with what is indexed, saying how far indexing has got; a
background task indexes the rest in slices, newest runs first, and follows live runs. Each
index is loaded from and saved to the index cache (:mod:`bdi_rl.readers.indexcache`), so a run
indexed once opens at once the next time.

The trace is read, checked and indexed in a worker thread, never on the event loop: one huge
or damaged trace (2 GB of NUL bytes) costs its own run a slice at a time and keeps no other
request waiting, and the viewer listens at once. Each run's index has a lock: it changes only
under it (in the worker), and requests read it on the event loop under it
(:meth:`Indexer.reading`), so none sees an index mid-update. A request that reads it in a
thread of its own (the world view, a video, joint actions) holds no lock meanwhile (a slow or
stuck one must not hold the run): the index only grows, each part written before what points
to it, so such a reader sees it as of some line. Indexes read around damaged lines: the run is served,
marked damaged (``RunIndex.damaged``), and the damage is logged once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from bdi_rl.readers.indexcache import MIN_CACHED_BYTES, load_index, save_index
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.store import TRACE_FILE

log = logging.getLogger("bdi_rl.readers.indexer")

#: Bytes one request may index before it answers (~0.1 s of a step-level trace).
REQUEST_BUDGET = 8 << 20
#: Bytes the background task indexes between two chances for requests (~20 ms).
SLICE = 2 << 20
#: A live run's cache is saved again after it grows this much.
SAVE_GROWTH = 64 << 20


T = TypeVar("T")


async def _in_worker(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` in the default executor's thread. Cancelled meanwhile (the viewer
    stopping), it still waits for the thread to finish before it lets go of the run's lock:
    an index is never changed by a worker and read (or saved) by anyone at once."""
    future = asyncio.get_running_loop().run_in_executor(None, work, *args)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        await asyncio.wait({future})  # bounded: a slice, a request's budget, or one save
        raise


class Indexer:
    """Run indexes of one runs directory, by run name."""

    def __init__(
        self,
        runs_dir: Path,
        cache_dir: Path | None,
        *,
        request_budget: int = REQUEST_BUDGET,
        slice_bytes: int = SLICE,
        min_cached_bytes: int = MIN_CACHED_BYTES,
    ) -> None:
        self.runs_dir = runs_dir
        self.cache_dir = cache_dir
        self.request_budget = request_budget
        self.slice_bytes = slice_bytes
        self.min_cached_bytes = min_cached_bytes
        self.indexes: dict[str, RunIndex] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._saved: dict[str, int] = {}  # bytes indexed at the last save or load
        self._told: dict[str, tuple[int, int]] = {}  # damage already logged: (lines, first line)
        self._wake = asyncio.Event()

    @contextlib.asynccontextmanager
    async def reading(self, run_dir: Path, budget: int | None = -1) -> AsyncIterator[RunIndex]:
        """The run's index, brought up to date by at most ``budget`` bytes (default: the
        request budget; None: fully; 0: not at all), to read while the block runs: it does
        not change meanwhile."""
        async with self._lock(run_dir.name):
            yield await self._refreshed(run_dir, self.request_budget if budget == -1 else budget)

    async def get(self, run_dir: Path, budget: int | None = -1) -> RunIndex:
        """The run's index brought up to date as :meth:`reading` does, for a caller that
        reads only what cannot change under it (counts; a copy)."""
        async with self.reading(run_dir, budget) as index:
            return index

    def _lock(self, name: str) -> asyncio.Lock:
        lock = self._locks.get(name)
        if lock is None:
            lock = self._locks[name] = asyncio.Lock()
        return lock

    async def _refreshed(self, run_dir: Path, budget: int | None) -> RunIndex:
        """(Under the run's lock.) Open the index on first sight (from the cache, in the
        worker), then index up to ``budget`` bytes more in the worker."""
        name = run_dir.name
        index = self.indexes.get(name)
        if index is None:
            index = await _in_worker(self._open, run_dir)
            self.indexes[name] = index
            self._saved[name] = index.indexed_bytes
        if budget == 0:
            index.refresh(0)  # reads nothing: says whether there is more to read
        elif not index.up_to_date():
            await _in_worker(index.refresh, budget)
            self._tell_damage(index)
        if not index.complete:
            self._wake.set()
        return index

    def _open(self, run_dir: Path) -> RunIndex:
        index = (load_index(run_dir, self.cache_dir) if self.cache_dir else None) or RunIndex(run_dir)
        index.read_around = True
        return index

    def _tell_damage(self, index: RunIndex) -> None:
        """Log a run's damage once (and again if more is found)."""
        damaged = index.damaged
        if damaged is None:
            return
        seen = (damaged["lines"], damaged["line"])
        if self._told.get(index.run_dir.name) != seen:
            self._told[index.run_dir.name] = seen
            log.warning("viewer: %s", index.damage_notice())

    def run_dirs(self) -> list[Path]:
        """The run directories with a trace, newest first."""
        if not self.runs_dir.is_dir():
            return []
        found = []
        for path in self.runs_dir.iterdir():
            try:
                found.append(((path / TRACE_FILE).stat().st_mtime, path))
            except OSError:  # no trace (yet), or not a directory
                continue
        return [path for _, path in sorted(found, key=lambda pair: pair[0], reverse=True)]

    async def keep_indexing(self, poll: float) -> None:
        """Forever: index every run to its end, a slice at a time (each in the worker, the
        run's lock released in between so requests get in), then wait ``poll`` s (or until
        a request finds a run unfinished) and look again."""
        while True:
            for run_dir in self.run_dirs():
                while True:
                    async with self._lock(run_dir.name):
                        index = await self._refreshed(run_dir, self.slice_bytes)
                        if index.complete:
                            await self._maybe_save(index)
                            break
            self._wake.clear()
            try:  # asyncio.timeout, not wait_for: wait_for can swallow a cancellation that
                async with asyncio.timeout(poll):  # races the event (a viewer that never stops)
                    await self._wake.wait()
            except TimeoutError:
                pass

    def save_all(self) -> None:
        """Save every index that grew since it was saved (at shutdown)."""
        for index in self.indexes.values():
            if self._grown(index, 1):
                self._save(index)

    async def _maybe_save(self, index: RunIndex) -> None:
        """(Under the run's lock.) Save the index in the worker if it grew enough."""
        if self._grown(index, SAVE_GROWTH if index.live else 1):
            await _in_worker(self._save, index)

    def _grown(self, index: RunIndex, growth: int) -> bool:
        grown = index.indexed_bytes - self._saved.get(index.run_dir.name, 0)
        return self.cache_dir is not None and grown >= growth

    def _save(self, index: RunIndex) -> None:
        assert self.cache_dir is not None
        if save_index(index, self.cache_dir, self.min_cached_bytes) is not None:
            self._saved[index.run_dir.name] = index.indexed_bytes
