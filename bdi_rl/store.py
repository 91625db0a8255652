"""Run directories and the files in them, always written atomically.

A run directory follows the CleanRL convention ``<env>__<experiment>__<seed>__<unix time>``;
a reader (viewer, exporter, warm start) never sees a half-written file because every file
is written to a temporary name, fsynced and renamed.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

TRACE_FILE = "trace.jsonl"
SPEC_FILE = "spec.toml"
SUMMARY_FILE = "summary.json"
QTABLE_DIR = "qtables"
WRITER_FILE = ".writer"
"""the run's writer lock (:class:`RunWriter`); a dot name, so no reader takes it for data"""
RESERVE_FILE = ".reserve"
"""room its writer keeps on the run's file system for the summary (:func:`save_summary`)"""
RESERVE_BYTES = 256 * 1024

_UMASK = os.umask(0)
os.umask(_UMASK)


def cache_root() -> Path:
    """bdi-rl's own cache directory: ``$BDI_RL_CACHE``, else ``$XDG_CACHE_HOME/bdi-rl``, else
    ``~/.cache/bdi-rl`` (the viewer's index cache and the built grammar live under it)."""
    configured = os.environ.get("BDI_RL_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bdi-rl"


def private_dir(path: Path) -> Path | None:
    """``path`` as a directory only this user can write (created so), or None if it is not
    one: what is read back from there may be trusted as much as the user's own files."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return path


def atomic_write_bytes(path: Path, data: bytes, private: bool = False) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix
    (``private``: readable by its owner only, as a key is). An OSError names ``path`` (not the
    temporary file it was being written as)."""
    try:
        _atomic_write(path, data, private)
    except OSError as exc:
        if exc.filename == str(path):
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def _atomic_write(path: Path, data: bytes, private: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if not private:
            os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600; run files are for reading
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_bytes(path, (json.dumps(value, indent=2, sort_keys=False) + "\n").encode())


def save_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    """The run's summary, written even when its file system has filled up: the room the
    writer reserved (:meth:`RunWriter.announce`) is given back first, then the summary written
    again. So a run stopped by a full disk still says why (how much it wrote before depends on
    timing; that it can say so does not)."""
    try:
        atomic_write_json(run_dir / SUMMARY_FILE, summary)
    except OSError as exc:
        if exc.errno != errno.ENOSPC or not (run_dir / RESERVE_FILE).exists():
            raise
        (run_dir / RESERVE_FILE).unlink()
        atomic_write_json(run_dir / SUMMARY_FILE, summary)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def run_id(env_id: str, experiment: str, seed: int, started: float | None = None) -> str:
    """``<env>__<experiment>__<seed>__<unix time>`` with path-safe parts."""
    stamp = int(started if started is not None else time.time())
    return f"{_slug(env_id.split(':')[-1])}__{_slug(experiment)}__{seed}__{stamp}"


#: A run directory's name as a request may give it (run_id's slugs and a suffix): anything
#: else that comes from a URL or a request body is no run, and never becomes a path.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,200}")


def run_dir_named(runs: Path, run: str) -> Path | None:
    """The directory ``run`` names directly under ``runs`` (a run id, never a path), or None."""
    if not RUN_ID.fullmatch(run) or run in (".", ".."):
        return None
    path = runs / run
    try:
        return path if path.parent == runs and path.is_dir() else None
    except OSError:
        return None


class RunsDirError(ValueError):
    """A runs directory that cannot hold runs; the message is one line naming it."""


def check_runs_dir(runs: Path, *, must_exist: bool = False) -> None:
    """Refuse, before anything is created, a runs directory that is a file, a dangling
    symlink, or under something that is not a writable directory (``must_exist``: readers
    need one that is already there)."""
    try:
        if runs.is_symlink() and not runs.exists():
            raise RunsDirError(f"{runs}: a symbolic link to {os.readlink(runs)}, which does not exist")
        if runs.exists():
            if not runs.is_dir():
                raise RunsDirError(f"{runs}: not a directory")
            if not must_exist and not os.access(runs, os.W_OK | os.X_OK):
                raise RunsDirError(f"{runs}: not writable")
            return
        if must_exist:
            raise RunsDirError(f"{runs}: no such directory")
        parent = runs.absolute().parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise RunsDirError(f"{runs}: cannot be created: {parent} is not a writable directory")
    except OSError as exc:  # a name too long, a loop of symbolic links ...
        raise RunsDirError(f"{runs}: cannot use this path: {exc.strerror}") from None


def new_run_dir(runs: Path, env_id: str, experiment: str, seed: int, command: str) -> tuple[Path, RunWriter]:
    """Create a fresh run directory (a second run in the same second gets a suffix), and
    hold its writer lock as ``command`` (before anything else is written into it)."""
    runs.mkdir(parents=True, exist_ok=True)
    base = run_id(env_id, experiment, seed)
    for n in range(1000):
        candidate = runs / (base if n == 0 else f"{base}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        writer = RunWriter.acquire(candidate, command)
        writer.announce()
        (candidate / QTABLE_DIR).mkdir()
        return candidate, writer
    raise RuntimeError(f"cannot create a run directory under {runs}")


# -- the one writer of a run directory ----------------------------------------------------
class RunBusyError(RuntimeError):
    """Another process writes that run directory; the message is one line naming it."""


@dataclass(frozen=True)
class WriterInfo:
    """Who holds (or last held) a run directory's writer lock."""

    pid: int
    host: str
    command: str
    since: float

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"{self.command} (pid {self.pid} on {self.host}, since {when})"


#: How long acquiring waits out a reader's brief shared lock (:func:`run_writer`).
_ACQUIRE_PATIENCE_S = 1.0


class RunWriter:
    """The exclusive lock a run directory's one writer holds while it writes.

    ``bdi-rl run`` (new or ``--resume``) and the telemetry role (new or ``--run``) hold it for
    as long as they write the trace, the tables and the summary; a second would-be writer is
    refused (:class:`RunBusyError`) before it reads or changes anything. It is an advisory
    ``flock`` on ``<run>/.writer``: the kernel releases it when the process ends however it
    ends (SIGKILL included), so a reader that finds the lock free and no summary knows the run
    was abandoned (:func:`run_writer`). The file also names the holder, for the message.
    """

    def __init__(self, run_dir: Path, fd: int, command: str) -> None:
        self.run_dir = run_dir
        self.command = command
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, run_dir: Path, command: str) -> RunWriter:
        """Hold ``run_dir``'s writer lock; RunBusyError if another process holds it."""
        path = run_dir / WRITER_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666 & ~_UMASK)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        deadline = time.monotonic() + _ACQUIRE_PATIENCE_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES) or time.monotonic() > deadline:
                    holder = _live_writer(_read_writer(fd))
                    os.close(fd)
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                        raise OSError(exc.errno, exc.strerror, str(path)) from None
                    who = holder.describe() if holder is not None else "another process"
                    raise RunBusyError(f"{run_dir}: this run is being written by {who}; one writer at a time") from None
                time.sleep(0.02)  # a reader looking (run_writer) holds a shared lock for an instant
        return cls(run_dir, fd, command)

    def announce(self) -> None:
        """Name this process in the lock file, once the run really goes on (a ``--resume``
        refused for bad input leaves the file as it was: it changes no byte of the run)."""
        if self._fd is None:
            return
        info = WriterInfo(os.getpid(), socket.gethostname(), self.command, time.time())
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(info.__dict__).encode(), 0)
        try:  # written, not sparse: the blocks are the run's until the summary needs them
            atomic_write_bytes(self.run_dir / RESERVE_FILE, bytes(RESERVE_BYTES))
        except OSError:
            pass  # no room even for that: the summary will say what it can

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up (the run's files are all written); idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            (self.run_dir / RESERVE_FILE).unlink(missing_ok=True)  # the summary is written
            os.close(fd)  # closing the only descriptor releases the flock


def _read_writer(fd: int) -> WriterInfo | None:
    try:
        raw = json.loads(os.pread(fd, 4096, 0) or b"null")
        return WriterInfo(int(raw["pid"]), str(raw["host"]), str(raw["command"]), float(raw["since"]))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _live_writer(info: WriterInfo | None) -> WriterInfo | None:
    """``info`` if it may name the holder: a writer that has not announced itself yet leaves
    the previous one's name in the file, whose process (on this machine) is gone."""
    if info is None or info.host != socket.gethostname():
        return info
    try:
        os.kill(info.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's
    return info


def run_writer(run_dir: Path) -> WriterInfo | None:
    """The process writing ``run_dir`` now, or None if none holds its writer lock (or the
    directory has no lock file: a run of an older bdi-rl, or one that is just being made)."""
    try:
        fd = os.open(run_dir / WRITER_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                return _live_writer(_read_writer(fd)) or WriterInfo(0, "", "a process starting to write it", 0.0)
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


# -- sweeps ------------------------------------------------------------------------------
#: Where a runs directory keeps its sweep records (a dot name: never taken for a run).
SWEEPS_DIR = ".sweeps"
SWEEP_ID = re.compile(r"sweep-[0-9]{8}-[0-9]{6}(-[0-9]{1,3})?")


class Sweep(msgspec.Struct, forbid_unknown_fields=True):
    """Runs of one spec: seeds, and with a sweep file also configurations (``bdi-rl serve``
    and ``bdi-rl sweep`` start them).

    ``runs[k]`` is the run id of ``seeds[k]`` once its run directory exists (None while it
    is queued or if it never started), so readers can overlay and aggregate a sweep; a sweep
    file's run ``k`` ran configuration ``configuration[k]`` (``settings`` of its axes)."""

    id: str
    spec: str
    """the spec's experiment name"""
    seeds: list[int]
    runs: list[str | None]
    created: float
    overrides: dict[str, Any] = {}
    """what the sweep set over the spec (episodes, trace ...)"""
    cancelled: list[int] = []
    """indexes of seeds stopped before their run started: they never will (readers stop
    waiting for them)"""
    axes: list[str] = []
    """a sweep file's axes: the spec paths its configurations set (``bdi_rl.sweepfile``)"""
    configurations: list[dict[str, Any]] = []
    """each configuration's settings (path -> value)"""
    configuration: list[int] = []
    """run ``k``'s configuration (an index into ``configurations``); empty: seeds only"""
    failed: list[int] = []
    """indexes of runs that failed"""
    spec_file: str | None = None
    """the spec file its runs were made from (``bdi-rl sweep --continue`` makes the rest so)"""


def new_sweep_id(runs: Path, started: float | None = None) -> str:
    """``sweep-YYYYmmdd-HHMMSS`` (UTC), with a suffix when one of that second exists."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started if started is not None else time.time()))
    for n in range(1000):
        candidate = f"sweep-{stamp}" if n == 0 else f"sweep-{stamp}-{n}"
        if not (runs / SWEEPS_DIR / f"{candidate}.json").exists():
            return candidate
    raise RuntimeError(f"cannot name a sweep under {runs}")


def write_sweep(runs: Path, sweep: Sweep) -> None:
    """Save (or update) a sweep record atomically."""
    atomic_write_bytes(runs / SWEEPS_DIR / f"{sweep.id}.json", msgspec.json.encode(sweep))


#: A sweep record is a few KB (at most 64 seeds): a bigger file is no sweep, and is not read.
MAX_SWEEP_BYTES = 1 << 20


def read_sweep(runs: Path, sweep_id: str) -> Sweep | None:
    """The sweep of that id, or None (no such id, or a record that is not one)."""
    if not SWEEP_ID.fullmatch(sweep_id):
        return None
    try:
        with open(runs / SWEEPS_DIR / f"{sweep_id}.json", "rb") as f:
            data = f.read(MAX_SWEEP_BYTES + 1)  # the viewer's runs page reads them every few seconds
        return msgspec.json.decode(data, type=Sweep) if len(data) <= MAX_SWEEP_BYTES else None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def read_sweeps(runs: Path) -> list[Sweep]:
    """Every readable sweep record of ``runs``, newest first."""
    folder = runs / SWEEPS_DIR
    if not folder.is_dir():
        return []
    found = [read_sweep(runs, p.stem) for p in folder.glob("sweep-*.json")]
    return sorted((s for s in found if s is not None), key=lambda s: s.created, reverse=True)
