"""Run directories and the files in them, always written atomically.

A run directory follows the CleanRL convention ``<env>__<experiment>__<seed>__<unix time>``;
a reader (viewer, exporter, warm start) never sees a half-written file because every file
is written to a temporary name, fsynced and renamed.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

TRACE_FILE = "trace.jsonl"
SPEC_FILE = "spec.toml"
SUMMARY_FILE = "summary.json"
QTABLE_DIR = "qtables"

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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix.
    An OSError names ``path`` (not the temporary file it was being written as)."""
    try:
        _atomic_write(path, data)
    except OSError as exc:
        if exc.filename == str(path):
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def run_id(env_id: str, experiment: str, seed: int, started: float | None = None) -> str:
    """``<env>__<experiment>__<seed>__<unix time>`` with path-safe parts."""
    stamp = int(started if started is not None else time.time())
    return f"{_slug(env_id.split(':')[-1])}__{_slug(experiment)}__{seed}__{stamp}"


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


def new_run_dir(runs: Path, env_id: str, experiment: str, seed: int) -> Path:
    """Create a fresh run directory (a second run in the same second gets a suffix)."""
    runs.mkdir(parents=True, exist_ok=True)
    base = run_id(env_id, experiment, seed)
    for n in range(1000):
        candidate = runs / (base if n == 0 else f"{base}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        (candidate / QTABLE_DIR).mkdir()
        return candidate
    raise RuntimeError(f"cannot create a run directory under {runs}")


# -- sweeps ------------------------------------------------------------------------------
#: Where a runs directory keeps its sweep records (a dot name: never taken for a run).
SWEEPS_DIR = ".sweeps"
SWEEP_ID = re.compile(r"sweep-[0-9]{8}-[0-9]{6}(-[0-9]{1,3})?")


class Sweep(msgspec.Struct, forbid_unknown_fields=True):
    """N runs of one spec that differ only in their seed (``bdi-rl serve`` starts them).

    ``runs[k]`` is the run id of ``seeds[k]`` once its run directory exists (None while it
    is queued or if it never started), so readers can overlay and aggregate a sweep."""

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
