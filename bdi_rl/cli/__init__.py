"""The ``bdi-rl`` command line.

One error boundary (:func:`main`): bad input (spec, plan library, env, checkpoint, trace,
argument) is one line on stderr and exit status 2, found before anything is written under
``runs/``; any other exception is one line naming what failed, exit status 1, and its
traceback in a file the line names (:mod:`bdi_rl.crashlog`). SIGTERM (``docker stop``,
``docker compose down``, systemd) does exactly what Ctrl-C does.

The commands live in :mod:`bdi_rl.cli.agents` (those that run agents) and
:mod:`bdi_rl.cli.readers` (those that read run directories), their arguments in
:mod:`bdi_rl.cli.options`; each imports what it needs when it runs, so a command pays for its
own imports only.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bdi_rl.cli import agents, readers, sweeps, worker
from bdi_rl.cli.errors import (
    DISK_FULL,
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    is_user_error,
    say_user_error,
    short_path,
)
from bdi_rl.cli.options import build_parser
from bdi_rl.cli.process import patch_libraries, prepare_agent_process, quiet_libraries, terminate_like_interrupt
from bdi_rl.garbage import no_collection_at_exit

__all__ = ["main", "prepare_agent_process"]

#: The commands that run agents: they patch the libraries first; the readers never import them.
AGENT_COMMANDS = frozenset({"run", "agent", "telemetry", "play", "sweep-worker"})


def main(argv: Sequence[str] | None = None) -> int:
    """The error boundary: whatever happens, one line on stderr and an exit status."""
    terminate_like_interrupt()
    args = build_parser().parse_args(argv)
    quiet_libraries()
    from bdi_rl.crashlog import note_run_dir, one_line, write_crash_log

    commands = {
        "run": agents.cmd_run,
        "agent": agents.cmd_agent,
        "telemetry": agents.cmd_telemetry,
        "view": readers.cmd_view,
        "serve": readers.cmd_serve,
        "inspect": readers.cmd_inspect,
        "search": readers.cmd_search,
        "plot": readers.cmd_plot,
        "render": readers.cmd_render,
        "export": readers.cmd_export,
        "dashboard": readers.cmd_dashboard,
        "qtable": readers.cmd_qtable,
        "play": agents.cmd_play,
        "sweep": sweeps.cmd_sweep,
        "sweep-report": sweeps.cmd_sweep_report,
        "sweep-worker": worker.cmd_sweep_worker,
    }
    note_run_dir(None)
    try:
        if args.command in AGENT_COMMANDS:  # libraries already quieted above
            patch_libraries()
            no_collection_at_exit()
        return commands[args.command](args)
    except TimeoutError as exc:  # a role process waited for a peer that never answered
        print(f"bdi-rl: error: {exc or 'timed out waiting for the telemetry agent'}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("bdi-rl: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the boundary: every exception ends here
        if is_user_error(exc):
            print(f"bdi-rl: error: {say_user_error(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:  # not the user's input: the machine's
            print(f"bdi-rl: error: {short_path(exc.filename)}: {exc.strerror}", file=sys.stderr)
            return EXIT_FAILED
        if isinstance(exc, OSError) and exc.filename is not None:
            # a path the user gave that cannot be read, written or created (too long, a
            # directory, under /proc ...)
            print(f"bdi-rl: error: {short_path(exc.filename)}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        where = write_crash_log(exc)  # a bug or a broken environment
        print(f"bdi-rl: error: {args.command} failed: {one_line(exc)} (traceback in {where})", file=sys.stderr)
        return EXIT_FAILED
