"""The checkpoint library: every Q-table checkpoint under a runs directory, and each agent's
policy cache, with what one is chosen by.

For each ``<run>/qtables/<agent>.npz``: the env and its state-space signature, the agent,
the run (and the run that made the table, for an imported one), episodes trained, epsilon at
save, the run's final evaluation of that agent, when it was saved, where it was warm-started
from (and whether that table is still in the library as it was), its integrity (checksum
verified, or why it cannot be used), its policy cache, and the plays of it (``bdi-rl play``
runs). One reader serves the viewer's library page and ``bdi-rl qtable list``.

Reading is bounded per file: a checkpoint is read with :func:`~bdi_rl.rl.checkpoint.load_checkpoint`'s
limits (its table and metadata sizes), a file bigger on disk than any checkpoint can be is not
opened, and a file is read once per version (size, mtime, inode). A damaged or hostile file is
an entry saying why, never an error of the list. The viewer reads in a worker thread and answers
within its budget with what is read so far (:class:`Library`), as it indexes traces.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec

from bdi_rl.readers.runstate import read_summary, run_state
from bdi_rl.rl.checkpoint import MAX_FILE_BYTES, CheckpointError, load_checkpoint
from bdi_rl.rl.policyfile import POLICY_DIR, PolicyFileError, read_policy_file
from bdi_rl.store import QTABLE_DIR, RUN_ID

#: Seconds between two publications of a scan's progress (the page shows what is read).
_PUBLISH_EVERY = 0.2


@dataclass
class Entry:
    """One agent's checkpoint in one run (or its policy cache alone)."""

    key: str
    """``<run>/<agent>``: how the page and the control surface name it (never a path)"""
    run: str
    agent: str
    file: str | None
    """the checkpoint relative to the runs directory; None: a policy cache with no table"""
    bytes: int = 0
    verified: bool = False
    """readable, and its table matches its checksum (format 2) or its shape (format 1)"""
    integrity: str = "being verified"
    group: str = "unreadable"
    """the env and state space it is listed under: tables that can warm-start each other"""
    env: str | None = None
    signature: dict[str, Any] | None = None
    """the state-space signature (``env_id``, ``kwargs``, ``n_states``, ``n_actions``)"""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    made_by: str | None = None
    """the run that saved it, as its metadata says (another run than ``run``: imported)"""
    episodes: int | None = None
    """training episodes of the run that saved it"""
    total_episodes: int | None = None
    """over every run it was warm-started through"""
    env_steps: int | None = None
    epsilon: float | None = None
    alpha: float | None = None
    created: float | None = None
    checksum: str | None = None
    lineage: dict[str, Any] | None = None
    """the checkpoint it was warm-started from (path, episodes, checksum), and where that is now"""
    evaluation: dict[str, Any] | None = None
    """the run's final greedy evaluation of this agent (``summary.json``)"""
    run_state: str | None = None
    imported: dict[str, Any] | None = None
    policies: dict[str, Any] | None = None
    plays: list[dict[str, Any]] = field(default_factory=list)
    """evaluations of this table (``bdi-rl play`` runs): run, episodes, success and return with CIs"""


def checkpoint_files(runs: Path) -> list[Path]:
    """Every ``<run>/qtables/*.npz`` and ``<run>/policies/*.json`` directly under ``runs``."""
    found: list[Path] = []
    try:
        run_dirs = sorted(p for p in runs.iterdir() if RUN_ID.fullmatch(p.name) and p.is_dir())
    except OSError:
        return []
    for run_dir in run_dirs:
        for folder, pattern in ((QTABLE_DIR, "*.npz"), (POLICY_DIR, "*.json")):
            with contextlib.suppress(OSError):
                found += sorted(p for p in (run_dir / folder).glob(pattern) if p.is_file())
    return found


def _file_key(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino)


def read_checkpoint_entry(path: Path) -> Entry:
    """The entry of one checkpoint file: everything its metadata says, verified, or why not."""
    run, agent = path.parent.parent.name, path.stem
    entry = Entry(f"{run}/{agent}", run, agent, f"{run}/{QTABLE_DIR}/{path.name}")
    try:
        entry.bytes = path.stat().st_size
    except OSError as exc:
        entry.integrity = f"cannot be read ({exc.strerror})"
        return entry
    if entry.bytes > MAX_FILE_BYTES:
        entry.integrity = f"{entry.bytes} bytes: larger than any checkpoint (at most {MAX_FILE_BYTES}); not read"
        return entry
    try:
        checkpoint = load_checkpoint(path)
    except CheckpointError as exc:
        entry.integrity = str(exc).removeprefix(f"{path}: ")
        return entry
    header = checkpoint.header
    entry.verified = True
    entry.checksum = checkpoint.checksum
    entry.integrity = (
        f"verified ({checkpoint.checksum[:19]}...)"
        if checkpoint.checksum
        else "format 1: no checksum (its shape checked only)"
    )
    made = header.env
    if made is not None:
        entry.env = made.env_id
        entry.signature = msgspec.to_builtins(made)
        entry.group = _group_label(made.env_id, made.kwargs, made.n_states, made.n_actions)
    else:  # sound, but no env can be checked against it
        entry.group = f"no env recorded · {checkpoint.q.shape[0]} states x {checkpoint.q.shape[1]} actions"
        entry.integrity += "; it does not say which env it is for: no warm start or play can check it"
    entry.env_kwargs = dict(header.env_kwargs)
    entry.task = msgspec.to_builtins(header.task)
    entry.made_by = header.run or None
    entry.episodes = header.episodes
    entry.total_episodes = checkpoint.episodes
    entry.env_steps = header.env_steps
    entry.epsilon = checkpoint.epsilon
    entry.alpha = checkpoint.alpha
    entry.created = None if isinstance(header.created, msgspec.UnsetType) else header.created
    entry.lineage = checkpoint.lineage
    return entry


def _group_label(env_id: str, kwargs: dict[str, Any], states: int, actions: int) -> str:
    shaped = ", ".join(f"{k} {v}" for k, v in sorted(kwargs.items()))
    return " · ".join(filter(None, (env_id, shaped, f"{states} states x {actions} actions")))


def read_policy_entry(path: Path) -> dict[str, Any]:
    """What a policy cache holds (its goals), or why it cannot be used."""
    try:
        cache = read_policy_file(path)
    except PolicyFileError as exc:
        return {"goals": [], "problem": str(exc).removeprefix(f"{path}: ")}
    return {"goals": [list(p.goal) for p in cache.policies], "env": cache.env, "problem": None}


class Library:
    """The checkpoint library of one runs directory, read in a worker thread (the viewer's)
    or at once (``scan``), each file once per version."""

    def __init__(self, runs: Path) -> None:
        self.runs = runs.resolve()
        self._entries: dict[Path, tuple[tuple[int, int, int] | None, Any]] = {}
        self._latest: dict[str, Any] = {"entries": [], "pending": 0, "scanned": None}
        self._lock = threading.Lock()
        self._scan: asyncio.Future[dict[str, Any]] | None = None

    # -- reading -------------------------------------------------------------------------
    def scan(self) -> dict[str, Any]:
        """Read every file not read in its current version, then the whole listing."""
        files = checkpoint_files(self.runs)
        self._publish(files)
        last = time.monotonic()
        for path in files:
            key = _file_key(path)
            with self._lock:
                known = self._entries.get(path)
            if known is not None and known[0] == key:
                continue
            value = read_policy_entry(path) if path.suffix == ".json" else read_checkpoint_entry(path)
            with self._lock:
                self._entries[path] = (key, value)
            if time.monotonic() - last > _PUBLISH_EVERY:
                self._publish(files)
                last = time.monotonic()
        with self._lock:
            for gone in set(self._entries) - set(files):
                del self._entries[gone]
        return self._publish(files, done=True)

    async def listing(self, wait: float) -> dict[str, Any]:
        """The listing as read within ``wait`` seconds: a scan goes on in the worker thread
        meanwhile (one at a time), and files it has not reached yet are listed as pending."""
        if self._scan is None or self._scan.done():
            self._scan = asyncio.get_running_loop().run_in_executor(None, self.scan)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._scan), wait)
        with self._lock:
            return dict(self._latest)

    # -- the listing -----------------------------------------------------------------------
    def _publish(self, files: list[Path], done: bool = False) -> dict[str, Any]:
        with self._lock:
            known = dict(self._entries)
        entries: dict[str, Entry] = {}
        pending = 0
        for path in files:
            found = known.get(path)
            if path.suffix == ".npz":
                if found is None:
                    pending += 1
                    run, agent = path.parent.parent.name, path.stem
                    entries[f"{run}/{agent}"] = Entry(f"{run}/{agent}", run, agent, f"{run}/{QTABLE_DIR}/{path.name}")
                else:  # a copy: what the listing adds (its run's, cross-references) is its own
                    entries[found[1].key] = replace(found[1], plays=[])
        for path in files:  # policy caches: beside their agent's table, or alone
            found = known.get(path)
            if path.suffix != ".json" or found is None:
                continue
            run, agent = path.parent.parent.name, path.stem
            entry = entries.get(f"{run}/{agent}")
            if entry is None:
                entry = entries[f"{run}/{agent}"] = Entry(f"{run}/{agent}", run, agent, None)
                entry.integrity = "no Q-table checkpoint beside this policy cache"
            entry.policies = _policies_of(found[1], entry)
        listing = [_with_run(self.runs, entry) for entry in entries.values()]
        _link(listing, self.runs)
        result = {
            "entries": [asdict(e) for e in listing],
            "pending": pending,
            "scanned": time.time() if done and not pending else None,
        }
        with self._lock:
            self._latest = result
        return result


def _policies_of(cache: dict[str, Any], entry: Entry) -> dict[str, Any]:
    """A policy cache as its entry shows it: its goals, or why it cannot go with the table."""
    problem = cache["problem"]
    if problem is None and entry.signature is not None and cache.get("env") != entry.signature:
        problem = "made for another state space than its table"
    return {"goals": cache["goals"], "problem": problem}


def _with_run(runs: Path, entry: Entry) -> Entry:
    """The entry with what its run says of it: its state, its final evaluation, an import."""
    run_dir = runs / entry.run
    entry.run_state = run_state(run_dir).state
    summary = read_summary(run_dir) or {}
    agents = summary.get("agents")
    mine = agents.get(entry.agent) if isinstance(agents, dict) else None
    final = mine.get("eval") if isinstance(mine, dict) else None
    entry.evaluation = final if isinstance(final, dict) else None
    imported = summary.get("imported")
    entry.imported = imported if isinstance(imported, dict) else None
    return entry


def _link(entries: list[Entry], runs: Path) -> None:
    """Cross-references: where each table's warm start is now, and the plays of each table."""
    by_file = {e.file: e for e in entries if e.file}
    root = str(runs) + "/"
    for entry in entries:
        origin = entry.lineage
        if origin is None:
            continue
        path = str(origin.get("path", ""))
        inside = path.removeprefix(root) if path.startswith(root) else None
        source = by_file.get(inside) if inside else None
        if inside is None:
            status = "outside this runs directory"
        elif source is None:
            status = "no longer in the library"
        elif origin.get("checksum") and source.checksum != origin.get("checksum"):
            status = "in the library, changed since (its run went on)"
        else:
            status = "in the library"
        entry.lineage = {**origin, "key": source.key if source else None, "status": status}
    for play in _plays(runs):
        target = by_file.get(play.pop("file"))
        if target is not None:
            target.plays.append(play)


def _plays(runs: Path) -> list[dict[str, Any]]:
    """Every play under ``runs``: the table it played and what it measured."""
    root = str(runs) + "/"
    found = []
    with contextlib.suppress(OSError):
        for run_dir in runs.iterdir():
            if not RUN_ID.fullmatch(run_dir.name):
                continue
            summary = read_summary(run_dir)
            evaluation = summary.get("evaluation") if summary else None
            if not isinstance(evaluation, dict):
                continue
            agents = evaluation.get("agents")
            for name, result in (agents if isinstance(agents, dict) else {}).items():
                table = result.get("checkpoint") if isinstance(result, dict) else None
                path = str(table.get("path", "")) if isinstance(table, dict) else ""
                if path.startswith(root):
                    keys = ("episodes", "success_rate", "success_ci95", "mean_return", "return_ci95", "task_change")
                    found.append(
                        {
                            "file": path.removeprefix(root),
                            "run": run_dir.name,
                            "agent": name,
                            "policy_only": bool(evaluation.get("policy_only")),
                            **{k: result.get(k) for k in keys},
                        }
                    )
    return sorted(found, key=lambda p: p["run"])
