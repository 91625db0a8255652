"""The ``bdi-rl`` command's entry point; ``python -m bdi_rl`` works the same.

It raises the garbage collector's young-generation threshold before the command line's
modules are imported (:data:`YOUNG_COLLECTION_EVERY`), then runs :func:`bdi_rl.cli.main`.
"""

import gc
import sys

#: Net new container objects (allocated and still alive) between two collections of the
#: young generation while a command starts; Python's default is 700. Start-up keeps nearly
#: all it makes (modules, compiled plans, agents): ~140 collections found nothing to free and
#: cost 40-100 ms of the ~0.45 s to a run's first env step (BENCHMARKS.md). A run goes back
#: to Python's default once its start-up heap is frozen (``xmpp.runner.start_agents``); the
#: readers keep this one (garbage in cycles waits for at most this many objects, a few MB).
YOUNG_COLLECTION_EVERY = 50_000


def main() -> int:
    """``bdi-rl ARGS``: the command's exit status (the threshold restored after it, for a
    caller in the same process)."""
    saved = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *saved[1:])
    try:
        from bdi_rl.cli import main as run_command

        return run_command()
    finally:
        gc.set_threshold(*saved)


if __name__ == "__main__":
    sys.exit(main())
