"""Checks of the command line's paths and addresses, made before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

from bdi_rl.cli.errors import BadInput


def check_runs(runs: Path, must_exist: bool = False) -> None:
    from bdi_rl.store import RunsDirError, check_runs_dir

    try:
        check_runs_dir(runs, must_exist=must_exist)
    except RunsDirError as exc:
        raise BadInput(f"--runs {exc}") from None


def check_ready_file(path: Path | None) -> None:
    """``--ready-file``: a stale one (a container restarted after SIGKILL) would say ready at
    once, so it goes now; one that could never be written is refused before anything."""
    if path is None:
        return
    parent = path.absolute().parent
    if path.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"--ready-file {path}: not a file in a writable directory")
    path.unlink(missing_ok=True)


def cannot_listen(what: str, host: str, port: int, exc: OSError) -> str:
    """One line for an address the viewer cannot bind (a port in use: someone else's server);
    the reason as the OS says it (asyncio's own message repeats the address)."""
    import os

    return f"{what}: cannot listen on {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}"
