"""The ``bdi-rl`` command's entry point; ``python -m bdi_rl`` works the same.

It raises the garbage collector's young-generation threshold before the command line's
modules are imported (:func:`bdi_rl.garbage.starting`), then runs :func:`bdi_rl.cli.main`.
"""

import sys

from bdi_rl.garbage import starting


def main() -> int:
    """``bdi-rl ARGS``: the command's exit status."""
    with starting():
        from bdi_rl.cli import main as run_command

        return run_command()


if __name__ == "__main__":
    sys.exit(main())
