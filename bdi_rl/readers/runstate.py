"""What state a run is in, from evidence any reader can check on disk.

A run directory is written by one process at a time (``store.RunWriter``: a lock the kernel
drops when that process ends, however it ends), and that process writes ``summary.json``
last, before it lets the lock go. So:

- **live**: a process holds the writer lock (a resumed run is live again);
- **finished**: no writer, and the summary names no failure;
- **interrupted**: no writer, and the summary says ``"interrupted": true`` (Ctrl-C, SIGTERM,
  Stop; ``bdi-rl run --resume`` continues it);
- **failed**: no writer, and the summary names an agent's failure, or there is no summary but
  a ``crash.log`` (the process died of an error it reported);
- **abandoned**: no writer and no summary: the process was killed (SIGKILL, a crash of the
  machine) before it could write one. ``--resume`` continues it too.

A run of a bdi-rl older than the lock has no lock file: without a summary it counts as live
while its trace still grows (written to in the last :data:`LEGACY_QUIET_S`), else abandoned.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bdi_rl.crashlog import CRASH_LOG
from bdi_rl.store import SUMMARY_FILE, TRACE_FILE, WRITER_FILE, run_writer

__all__ = ["RunState", "State", "read_summary", "run_state"]

State = Literal["live", "finished", "interrupted", "failed", "abandoned"]

#: A lock-less run (older bdi-rl) whose trace has not changed for this long has no writer.
LEGACY_QUIET_S = 30.0


@dataclass(frozen=True)
class RunState:
    state: State
    why: str
    """one line saying what the state rests on (who writes it, which agent failed ...)"""


def run_state(run_dir: Path) -> RunState:
    """The state of ``run_dir`` now (module docstring)."""
    writer = run_writer(run_dir)
    if writer is not None:
        return RunState("live", f"written by {writer.describe()}")
    summary = _read_summary(run_dir / SUMMARY_FILE)
    if isinstance(summary, dict):
        return _ended(summary)
    if summary is _UNREADABLE:
        return RunState("failed", f"no process writes it and its {SUMMARY_FILE} cannot be read")
    if not (run_dir / WRITER_FILE).exists() and _recently_written(run_dir):
        return RunState("live", "its trace is growing (a run of an older bdi-rl: no writer lock)")
    if (run_dir / CRASH_LOG).is_file():
        return RunState("failed", f"its process failed before writing a summary ({CRASH_LOG} has the traceback)")
    return RunState("abandoned", "no process writes it and it has no summary: its process was killed")


def _ended(summary: dict[str, object]) -> RunState:
    if summary.get("interrupted"):
        return RunState("interrupted", "stopped before the end (Ctrl-C, SIGTERM or Stop); --resume continues it")
    agents = summary.get("agents")
    failures = (
        [(name, entry["failure"]) for name, entry in agents.items() if isinstance(entry, dict) and entry.get("failure")]
        if isinstance(agents, dict)
        else []
    )
    if failures:
        name, failure = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        return RunState("failed", f"{name} failed: {failure}{more}")
    return RunState("finished", "every agent finished")


_UNREADABLE = object()


def read_summary(run_dir: Path) -> dict[str, object] | None:
    """The run's ``summary.json`` as a JSON object, or None (none yet, unreadable, or larger
    than any summary: :data:`MAX_SUMMARY_BYTES`); parsed once per version of the file."""
    summary = _read_summary(run_dir / SUMMARY_FILE)
    return summary if isinstance(summary, dict) else None


def _read_summary(path: Path) -> dict[str, object] | object | None:
    """The summary (None if there is none, ``_UNREADABLE`` if it is not a JSON object);
    parsed once per version of the file (the runs list asks every 2 s)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return _parse_summary(str(path), info.st_mtime_ns, info.st_size)


#: No summary is this big (1000 agents write ~200 KB): a bigger file is not read, so one
#: huge file cannot stall the runs list that asks for every run's state.
MAX_SUMMARY_BYTES = 16 << 20


@functools.lru_cache(maxsize=4096)
def _parse_summary(path: str, _mtime_ns: int, size: int) -> dict[str, object] | object | None:
    if size > MAX_SUMMARY_BYTES:
        return _UNREADABLE
    try:
        value = json.loads(Path(path).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return _UNREADABLE
    return value if isinstance(value, dict) else _UNREADABLE


def _recently_written(run_dir: Path) -> bool:
    newest = 0.0
    for path in (run_dir, run_dir / TRACE_FILE):
        try:
            newest = max(newest, path.stat().st_mtime)
        except OSError:
            pass
    return time.time() - newest < LEGACY_QUIET_S
