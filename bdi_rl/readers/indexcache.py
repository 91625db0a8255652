"""A run index saved outside the run, so a big run opens at once the next time.

Indexing a step-level trace costs about 3 s per million events, nearly all of it Python's
per-line overhead. The viewer (and ``inspect``) therefore keep what they indexed in a cache
directory (``$BDI_RL_INDEX_CACHE``, else ``$XDG_CACHE_HOME/bdi-rl/index``, else
``~/.cache/bdi-rl/index``; the run directory stays read-only) and on the next open read only
what the trace gained since.

A cache file is untrusted input: an ``.npz`` read without pickle, one JSON member and raw
integer arrays. It is used only if it names the same trace file (path, device, inode), the
trace still starts and, at the indexed length, ends with the same bytes (a fingerprint), and
a trace that has not grown since was not written since (its modification time): a replaced
or rewritten trace is indexed afresh. A cache holds only an index of sound lines (``RunIndex``
checks every line; the index of a damaged trace is never saved), so a reader that uses one
has applied the check. Anything unreadable is logged and ignored: the cache is only ever a
shortcut.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import zipfile
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from bdi_rl.readers.mindstate import MindState
from bdi_rl.readers.runindex import CHECKPOINT, AgentIndex, OnDamage, RunIndex
from bdi_rl.store import atomic_write_bytes, cache_root
from bdi_rl.trace.check import TraceChecker

log = logging.getLogger("bdi_rl.readers.indexcache")

# 3: episodes carry success, agents their env kind; 4: beliefs their sources; 5: every line
# checked (a cache of 4 may hold lines 5 would refuse), the check's state kept; 6: agents
# their warm start's episodes
FORMAT = "bdi-rl.index/7"
#: Runs whose trace is smaller than this are indexed in well under 0.1 s: not cached.
MIN_CACHED_BYTES = 8 << 20
#: Bytes fingerprinted at the start of the trace and before the indexed end.
_FINGERPRINT_BYTES = 1 << 16


def default_cache_dir() -> Path | None:
    """Where index caches live; None when ``BDI_RL_INDEX_CACHE`` is ``off``."""
    configured = os.environ.get("BDI_RL_INDEX_CACHE")
    if configured:
        return None if configured == "off" else Path(configured)
    return cache_root() / "index"


def cache_file(cache_dir: Path, run_dir: Path) -> Path:
    """One file per trace, named by a hash of its absolute path."""
    key = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:32]
    return cache_dir / f"{key}.npz"


def save_index(index: RunIndex, cache_dir: Path, min_bytes: int = MIN_CACHED_BYTES) -> Path | None:
    """Write the index atomically; returns the file, or None if the run is smaller than
    ``min_bytes``, its trace is damaged (a cache holds only checked, sound lines, so a reader
    that refuses damage can trust it), or the cache cannot be written (logged: the viewer
    goes on without it)."""
    if index.indexed_bytes < min_bytes or index.damage or index.stopped_at is not None:
        return None
    path = cache_file(cache_dir, index.run_dir)
    try:
        meta = {
            "format": FORMAT,
            "checkpoint": CHECKPOINT,
            **_identity(index.trace_path),
            "written": _written(index.trace_path),
            "fingerprint": _fingerprint(index.trace_path, index.indexed_bytes),
            "indexed_bytes": index.indexed_bytes,
            "lines": index.lines,
            "checker": index.checker.state(),
            "run_events": index.run_events,
            "agents": [_agent_meta(agent) for agent in index.agents.values()],
        }
        arrays: dict[str, Any] = {"meta": np.frombuffer(orjson.dumps(meta), dtype=np.uint8)}
        for k, agent in enumerate(index.agents.values()):
            for name, values in _arrays(agent).items():
                arrays[f"{name}_{k}"] = np.frombuffer(values, dtype=np.int64)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        atomic_write_bytes(path, buffer.getvalue())
    except OSError as exc:
        log.warning("index cache: could not write %s: %s", path, exc)
        return None
    return path


def load_index(run_dir: Path, cache_dir: Path) -> RunIndex | None:
    """The cached index of ``run_dir``'s trace, or None when there is no usable one (then
    the caller indexes from scratch; why the cache was not used is logged)."""
    path = cache_file(cache_dir, run_dir)
    if not path.is_file():
        return None
    try:
        return _read(path, run_dir)
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
        log.warning("index cache %s not used (%s); indexing %s afresh", path, exc, run_dir.name)
        return None


def open_index(run_dir: Path, cache_dir: Path | None, on_damage: OnDamage = None) -> RunIndex:
    """The run's index brought up to date: from the cache when there is a usable one, saved
    back when it grew. ``cache_dir`` None: no cache. A damaged trace is refused (a
    TraceFileError naming its first damaged line) unless ``on_damage`` is given: then the
    damaged lines are read around and ``on_damage`` gets the one line saying so."""
    index = (load_index(run_dir, cache_dir) if cache_dir else None) or RunIndex(run_dir)
    index.read_around = on_damage is not None
    before = index.indexed_bytes
    index.refresh()
    if cache_dir and index.indexed_bytes > before:
        save_index(index, cache_dir)
    notice = index.damage_notice()
    if notice is not None:
        if on_damage is None:
            index.check_whole()
        else:
            on_damage(notice)
    return index


# -- the file ------------------------------------------------------------------------------
def _identity(trace: Path) -> dict[str, Any]:
    stat = trace.stat()
    return {"trace": str(trace.resolve()), "device": stat.st_dev, "inode": stat.st_ino}


def _written(trace: Path) -> tuple[int, int]:
    """The trace's size and modification time: a trace whose size did not change since it was
    indexed must not have been written at all (an edit in its middle that keeps its size is
    caught here: the fingerprint sees only its start and its indexed end)."""
    stat = trace.stat()
    return stat.st_size, stat.st_mtime_ns


def _fingerprint(trace: Path, length: int) -> str:
    digest = hashlib.sha256()
    with open(trace, "rb") as f:
        digest.update(f.read(min(length, _FINGERPRINT_BYTES)))
        tail = min(length, _FINGERPRINT_BYTES)
        f.seek(length - tail)
        digest.update(f.read(tail))
    return digest.hexdigest()


def _arrays(agent: AgentIndex) -> dict[str, array[int]]:
    return {
        "offsets": agent.offsets,
        "firsts": agent.firsts,
        "snapshot_at": agent.snapshot_at,
        **{f"latest-{kind}": positions for kind, positions in agent.latest.items()},
    }


def _agent_meta(agent: AgentIndex) -> dict[str, Any]:
    return {
        "name": agent.name,
        "count": agent.count,
        "episodes": agent.episodes,
        "evals": agent.evals,
        "messages": agent.messages,
        "choices": agent.choices,
        "stopped": agent.stopped,
        "actions": agent.action_names,
        "env_family": agent.env_family,
        "warm_episodes": agent.warm_episodes,
        "snapshots": [_mind(s) if isinstance(s, MindState) else s for s in agent.snapshots],
        "state": _mind(agent.state),
        "lives": agent.lives,
        "record_life": [[line, life] for line, life in agent.record_life.items()],
    }


def _mind(state: MindState) -> dict[str, Any]:
    return {"beliefs": state.beliefs, "intentions": state.intentions}


def _read(path: Path, run_dir: Path) -> RunIndex:
    with np.load(path, allow_pickle=False) as npz:
        meta = orjson.loads(npz["meta"].tobytes())
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file")
        if meta["checkpoint"] != CHECKPOINT:
            raise ValueError(f"snapshots every {meta['checkpoint']} events, not {CHECKPOINT}")
        index = RunIndex(run_dir)
        if {k: meta[k] for k in ("trace", "device", "inode")} != _identity(index.trace_path):
            raise ValueError("made for another trace file")
        indexed = int(meta["indexed_bytes"])
        if index.trace_path.stat().st_size < indexed:
            raise ValueError("the trace is shorter than what was indexed")
        size, mtime = _written(index.trace_path)
        if size == meta["written"][0] and mtime != meta["written"][1]:  # not grown, yet written
            raise ValueError("the trace was rewritten since it was indexed")
        if meta["fingerprint"] != _fingerprint(index.trace_path, indexed):
            raise ValueError("the trace's content changed")
        for k, agent_meta in enumerate(meta["agents"]):
            agent = AgentIndex(str(agent_meta["name"]))
            for name, values in _arrays(agent).items():
                values.frombytes(npz[f"{name}_{k}"].astype(np.int64).tobytes())
            del agent.snapshot_at[0]  # an AgentIndex starts with the empty mind at 0: the file has it
            agent.count = int(agent_meta["count"])
            agent.episodes = agent_meta["episodes"]
            agent.evals = agent_meta["evals"]
            agent.messages = agent_meta["messages"]
            agent.choices = agent_meta["choices"]
            agent.snapshots = [s if isinstance(s, int) else _mind_from(s) for s in agent_meta["snapshots"]]
            agent.state = _mind_from(agent_meta["state"])
            agent.stopped = bool(agent_meta["stopped"])
            agent.action_names = _names(agent_meta["actions"])
            agent.env_family = str(agent_meta["env_family"])
            agent.warm_episodes = int(agent_meta["warm_episodes"])
            agent.lives = agent_meta["lives"]
            agent.record_life = {int(line): int(life) for line, life in agent_meta["record_life"]}
            _check(agent, indexed)
            index.add_agent(agent)
    index.indexed_bytes = indexed
    index.lines = int(meta["lines"])
    index.checker = TraceChecker.from_state(meta["checker"])
    index.run_events = list(meta["run_events"])
    return index


def _check(agent: AgentIndex, indexed: int) -> None:
    """What the index's readers rely on: snapshots, positions and lines agree."""
    lines = len(agent.offsets)
    if not lines or len(agent.firsts) != lines or not 0 < agent.count or agent.firsts[-1] >= agent.count:
        raise ValueError(f"agent {agent.name}: lines and positions disagree")
    if len(agent.snapshots) != len(agent.snapshot_at) or not agent.snapshot_at or agent.snapshot_at[0] != 0:
        raise ValueError(f"agent {agent.name}: snapshots and their positions disagree")
    if agent.offsets[-1] >= indexed or any(p and p[-1] >= agent.count for p in agent.latest.values()):
        raise ValueError(f"agent {agent.name}: positions past the indexed trace")
    if not isinstance(agent.lives, list) or not all(isinstance(life, list) for life in agent.lives):
        raise ValueError(f"agent {agent.name}: definitions are not lists")
    for line, life in agent.record_life.items():
        if not (0 <= line < lines and 0 <= life < len(agent.lives)):
            raise ValueError(f"agent {agent.name}: a record's life is not in the index")
    for snapshot in agent.snapshots:
        if isinstance(snapshot, int) and snapshot not in agent.record_life:
            raise ValueError(f"agent {agent.name}: a keyframe snapshot names no record")
    for series in (agent.episodes, agent.evals, agent.messages, agent.choices):
        if not isinstance(series, list) or not all(isinstance(row, dict) for row in series):
            raise ValueError(f"agent {agent.name}: a series is not a list of records")


def _names(value: Any) -> list[str] | None:
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise ValueError("action names are not a list of strings")
    return value


def _mind_from(value: dict[str, Any]) -> MindState:
    beliefs, intentions = value["beliefs"], value["intentions"]
    if not isinstance(beliefs, dict) or not isinstance(intentions, list):
        raise ValueError("a mind snapshot is not beliefs and intentions")
    if not all(isinstance(s, list) for s in beliefs.values()):
        raise ValueError("a mind snapshot is not beliefs and intentions")
    return MindState(beliefs, intentions)
