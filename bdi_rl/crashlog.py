"""Where an unexpected exception goes: one line for the user, the traceback in a file.

The CLI has one error boundary (``bdi_rl.cli.main``). Bad input is reported as one line;
anything else that escapes is a bug or a broken environment, and a traceback on the terminal
would bury the line that says what failed. So the line names the failure and the file that
holds the traceback: ``crash.log`` in the run directory once a run has one (beside the trace
it explains), else a temporary file.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

CRASH_LOG = "crash.log"

_run_dir: Path | None = None


def note_run_dir(run_dir: Path | None) -> None:
    """The run directory a crash from now on belongs to (None: no run yet)."""
    global _run_dir
    _run_dir = run_dir


def write_crash_log(exc: BaseException) -> Path:
    """Write ``exc``'s traceback (appended, timestamped) and return the file's path."""
    text = f"--- bdi-rl crashed at {time.strftime('%Y-%m-%d %H:%M:%S')} (pid {os.getpid()})\n" + "".join(
        traceback.format_exception(exc)
    )
    if _run_dir is not None and _run_dir.is_dir():
        path = _run_dir / CRASH_LOG
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(text)
            return path
        except OSError:
            pass  # a read-only or vanished run directory: a temporary file still keeps it
    fd, name = tempfile.mkstemp(prefix="bdi-rl-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return Path(name)


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``exc`` as one short line: its type and the first line of its message."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
