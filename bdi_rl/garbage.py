"""When Python's garbage collector runs in a ``bdi-rl`` process, and why.

Start-up keeps nearly all it makes (modules, compiled plans, agents, connections): the
collector's young generation, collected every 700 new objects by default, scanned it ~140
times in a run's first 0.45 s and freed nothing (40-100 ms, BENCHMARKS.md). So:

- a command starts with the young generation collected every
  :data:`YOUNG_COLLECTION_EVERY` objects (:func:`starting`, the entry point's);
- once a run's agents are up, that heap is frozen (:func:`heap_built`): the collector never
  scans it again, and the run goes on at the same threshold, so its cyclic garbage (finished
  intentions, messages) waits for at most that many objects, a few MB;
- a process that runs many runs (a sweep worker) collects the run before whole
  (:func:`between_runs`);
- a process that ends does not collect its heap at exit (:func:`no_collection_at_exit`).
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Net new container objects (allocated and still alive) between two collections of the
#: young generation; Python's default is 700.
YOUNG_COLLECTION_EVERY = 50_000


@contextmanager
def starting() -> Iterator[None]:
    """A command runs with the raised threshold; the one before is restored after it (for a
    caller in the same process)."""
    saved = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


#: Whether :func:`heap_built` froze this process's heap (``gc.get_freeze_count`` would say,
#: but it counts the frozen objects one by one: 9 ms for a sweep worker's heap, every run).
_frozen = False


def heap_built() -> None:
    """A run's agents are started: what the process holds now is never garbage. Frozen once
    per process: a sweep worker that froze at every run kept each run's garbage for good
    (+2.8 MB a climbing run, BENCHMARKS.md "Sweeps: start-up amortised")."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


def between_runs() -> None:
    """The run before is garbage now, much of it in cycles (agents, minds, the server):
    collected whole (~4 ms), so a worker stays flat (66 MB over 40 climbing runs)."""
    gc.collect()


def no_collection_at_exit() -> None:
    """What a run holds is written by the time the interpreter exits; its teardown would then
    only collect the garbage of a large heap, 4-6 s of CPU for a team agent (measured): past
    compose's grace period when several containers stop at once. Frozen at exit, it is not
    scanned."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
