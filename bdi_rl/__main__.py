"""The ``bdi-rl`` command's entry point; ``python -m bdi_rl`` works the same.

It raises the garbage collector's young-generation threshold before the command line's
modules are imported (:data:`YOUNG_COLLECTION_EVERY`), then runs :func:`bdi_rl.cli.main`.
"""

import gc
import sys

#: Net new container objects (allocated and still alive) between two collections of the
#: young generation; Python's default is 700. A command's start-up keeps nearly all it makes
#: (modules, compiled plans, agents): ~140 collections found nothing to free and cost
#: 40-100 ms of the ~0.45 s to a run's first env step. In a run, most objects are freed by
#: their reference count when they die, and those never count; what lives on (trace records
#: until acknowledged, new definitions) was scanned again at each collection: 65-80 ms of a
#: climbing run, 170 ms of the README's first command (BENCHMARKS.md). Garbage in cycles waits
#: for at most this many objects, a few MB, before it is collected.
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
