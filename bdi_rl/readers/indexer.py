"""The viewer's run indexes, kept up to date in the background.

A request never waits for a whole big trace: it indexes at most ``request_budget`` bytes
(about 0.1 s) and answers with what is indexed, saying how far indexing has got; a
background task indexes the rest in slices, newest runs first, and follows live runs. Each
index is loaded from and saved to the index cache (:mod:`bdi_rl.readers.indexcache`), so a run
indexed once opens at once the next time. Everything runs on the server's event loop, so
requests never see an index mid-update.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from bdi_rl.readers.indexcache import MIN_CACHED_BYTES, load_index, save_index
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.store import TRACE_FILE

log = logging.getLogger("bdi_rl.readers.indexer")

#: Bytes one request may index before it answers (~0.1 s of a step-level trace).
REQUEST_BUDGET = 8 << 20
#: Bytes the background task indexes between two yields to the event loop (~20 ms).
SLICE = 2 << 20
#: A live run's cache is saved again after it grows this much.
SAVE_GROWTH = 64 << 20


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
        self._saved: dict[str, int] = {}  # bytes indexed at the last save or load
        self._wake = asyncio.Event()

    def get(self, run_dir: Path, budget: int | None = -1) -> RunIndex:
        """The run's index, brought up to date by at most ``budget`` bytes (default: the
        request budget; None: fully)."""
        index = self.indexes.get(run_dir.name)
        if index is None:
            index = load_index(run_dir, self.cache_dir) if self.cache_dir else None
            index = index or RunIndex(run_dir)
            self.indexes[run_dir.name] = index
            self._saved[run_dir.name] = index.indexed_bytes
        index.refresh(self.request_budget if budget == -1 else budget)
        if not index.complete:
            self._wake.set()
        return index

    def run_dirs(self) -> list[Path]:
        """The run directories with a trace, newest first."""
        if not self.runs_dir.is_dir():
            return []
        found = [p for p in self.runs_dir.iterdir() if (p / TRACE_FILE).is_file()]
        return sorted(found, key=lambda p: (p / TRACE_FILE).stat().st_mtime, reverse=True)

    async def keep_indexing(self, poll: float) -> None:
        """Forever: index every run to its end, a slice at a time, then wait ``poll`` s (or
        until a request finds a run unfinished) and look again."""
        while True:
            for run_dir in self.run_dirs():
                index = self.get(run_dir, self.slice_bytes)
                while not index.complete:
                    await asyncio.sleep(0)  # let requests in between slices
                    index.refresh(self.slice_bytes)
                self._maybe_save(index)
                await asyncio.sleep(0)
            self._wake.clear()
            try:  # asyncio.timeout, not wait_for: wait_for can swallow a cancellation that
                async with asyncio.timeout(poll):  # races the event (a viewer that never stops)
                    await self._wake.wait()
            except TimeoutError:
                pass

    def save_all(self) -> None:
        """Save every index that grew since it was saved (at shutdown)."""
        for index in self.indexes.values():
            self._maybe_save(index, growth=1)

    def _maybe_save(self, index: RunIndex, growth: int | None = None) -> None:
        if self.cache_dir is None:
            return
        name = index.run_dir.name
        grown = index.indexed_bytes - self._saved.get(name, 0)
        needed = growth if growth is not None else (SAVE_GROWTH if index.live else 1)
        if grown >= needed and save_index(index, self.cache_dir, self.min_cached_bytes) is not None:
            self._saved[name] = index.indexed_bytes
