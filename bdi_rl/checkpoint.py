"""Q-table checkpoints: one ``.npz`` per agent, checked before any table is used.

A checkpoint holds the table (``q``) and JSON metadata (``meta``): format version, the env's
state-space signature (id, the kwargs that shape the states, sizes), the env's full kwargs,
agent, run, episodes and env steps trained, epsilon and alpha at save, hyper-parameters, the
spec's hash, where a warm start came from, a SHA-256 of the table, and the creation time.

Files are written atomically (temporary file, fsync, rename), so a process killed while
saving leaves the previous checkpoint or the new one, never a torn file. Reading refuses,
with one line naming the file, anything that is not exactly such a checkpoint: not an
archive, truncated, another format version, a table that does not match its own metadata
or checksum, non-finite values. :func:`check_env` then refuses a table made for another
state space, saying what differs; a table is never reshaped to fit.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.store import QTABLE_DIR, atomic_write_bytes

FORMAT = 2
#: Format 1 (before checksums) is still read; its tables are checked for shape only.
READABLE_FORMATS = (1, 2)


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; one line, naming the file."""


@dataclass
class Checkpoint:
    path: Path
    q: np.ndarray
    meta: dict[str, Any]

    @property
    def episodes(self) -> int:
        """Training episodes behind this table, over every run it was warm-started through."""
        return int(self.meta.get("total_episodes", self.meta.get("episodes", 0)))

    @property
    def env(self) -> dict[str, Any]:
        return self.meta.get("env") or {}


def table_checksum(q: np.ndarray) -> str:
    """SHA-256 of the table's values as little-endian float64, row by row."""
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(q, dtype="<f8").tobytes()).hexdigest()


def save_checkpoint(path: Path, q: np.ndarray, meta: dict[str, Any]) -> None:
    """Write ``q`` and ``meta`` (plus format, shape and checksum) atomically."""
    header = {"format": FORMAT, **meta, "shape": list(q.shape), "dtype": "float64",
              "checksum": table_checksum(q), "created": time.time()}
    buffer = io.BytesIO()
    np.savez(buffer, q=np.asarray(q, dtype=np.float64),
             meta=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
    atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path: Path) -> Checkpoint:
    """Read and check a checkpoint file (not yet against an env: :func:`check_env`)."""
    if path.is_dir():
        raise CheckpointError(f"{path}: is a directory, not a checkpoint file")
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        with np.load(path, allow_pickle=False) as data:
            names = set(data.files)
            if not {"q", "meta"} <= names:
                raise CheckpointError(f"{path}: not a bdi-rl Q-table checkpoint "
                                      f"(arrays {sorted(names)}, expected q and meta)")
            q = data["q"]
            meta_bytes = data["meta"].tobytes()
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint, truncated or not an .npz "
                              f"archive ({type(exc).__name__})") from None
    try:
        meta = json.loads(meta_bytes.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(f"{path}: corrupt metadata (not JSON)") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: corrupt metadata (not a JSON object)")
    version = meta.get("format")
    if version not in READABLE_FORMATS:
        raise CheckpointError(f"{path}: checkpoint format {version!r}; this bdi-rl reads formats "
                              f"{', '.join(map(str, READABLE_FORMATS))}")
    _check_table(path, q, meta)
    return Checkpoint(path, q.astype(np.float64), meta)


def _check_table(path: Path, q: np.ndarray, meta: dict[str, Any]) -> None:
    if q.ndim != 2 or q.dtype.kind not in "fi":
        raise CheckpointError(f"{path}: the table is not a 2-D numeric array ({q.dtype}, {q.ndim}-D)")
    if list(q.shape) != meta.get("shape"):
        raise CheckpointError(f"{path}: the table is {_shape(q.shape)} but its metadata says "
                              f"{_shape(meta.get('shape'))}")
    env = meta.get("env")
    if isinstance(env, dict) and (env.get("n_states"), env.get("n_actions")) != tuple(q.shape):
        raise CheckpointError(f"{path}: the table is {_shape(q.shape)} but its env has "
                              f"{env.get('n_states')} states and {env.get('n_actions')} actions")
    if meta["format"] >= 2 and meta.get("checksum") != table_checksum(q):
        raise CheckpointError(f"{path}: corrupt table (checksum mismatch)")
    if not np.isfinite(q).all():
        raise CheckpointError(f"{path}: the table holds NaN or infinite values")


def _shape(shape: Any) -> str:
    if isinstance(shape, (list, tuple)) and len(shape) == 2:
        return f"{shape[0]}x{shape[1]}"
    return repr(shape)


def check_env(checkpoint: Checkpoint, signature: dict[str, Any],
              against: str = "this run's env", labels: str = "checkpoint vs run") -> None:
    """Refuse a table made for another state space than ``signature``'s; the message says
    what differs (``labels`` names the two sides)."""
    made = checkpoint.env
    if not made:
        raise CheckpointError(f"{checkpoint.path}: the checkpoint does not say which env it is for")
    differences = []
    if made.get("env_id") != signature["env_id"]:
        differences.append(f"env {made.get('env_id')} vs {signature['env_id']}")
    shape, needed = checkpoint.q.shape, (signature["n_states"], signature["n_actions"])
    if tuple(shape) != needed:
        differences.append(f"table {_shape(shape)} vs {_shape(needed)} (states x actions)")
    kwargs, wanted = _space_kwargs(made.get("kwargs") or {}), signature.get("kwargs") or {}
    for key in sorted(set(kwargs) | set(wanted)):
        if kwargs.get(key) != wanted.get(key):
            differences.append(f"{key} {_brief(kwargs.get(key))} vs {_brief(wanted.get(key))}")
    if differences:
        raise CheckpointError(f"{checkpoint.path}: made for another state space than {against} "
                              f"({labels}: {'; '.join(differences)})")


def _space_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Checkpoints before the task/state-space split recorded FrozenLake's whole map as its
    state space; its size is what the state space is."""
    desc = kwargs.get("desc")
    if isinstance(desc, list) and desc and all(isinstance(row, str) for row in desc):
        return {**{k: v for k, v in kwargs.items() if k != "desc"}, "grid": f"{len(desc)}x{len(desc[0])}"}
    return kwargs


def task_change(checkpoint: Checkpoint, task: dict[str, Any]) -> str | None:
    """How this run's task differs from the one the table was learned on (FrozenLake: the
    cells whose letter changed, e.g. the goal moved), or None."""
    made = checkpoint.meta.get("task") or {}
    old_desc = made.get("desc") or (checkpoint.env.get("kwargs") or {}).get("desc")
    new_desc = task.get("desc")
    if not isinstance(old_desc, list) or not isinstance(new_desc, list) or old_desc == new_desc:
        return None
    changed = [f"({x},{y}) {old_desc[y][x]}->{new_desc[y][x]}"
               for y in range(min(len(old_desc), len(new_desc)))
               for x in range(min(len(old_desc[y]), len(new_desc[y])))
               if old_desc[y][x] != new_desc[y][x]]
    return "map cells changed: " + ", ".join(changed[:12]) + (" ..." if len(changed) > 12 else "")


def _brief(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(row, str) for row in value):
        return f"{len(value)}x{len(value[0])} map {'/'.join(value)[:40]}"  # FrozenLake's desc
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def find_checkpoint(source: Path, agent: str) -> Path:
    """The checkpoint a warm start reads for ``agent``: ``source`` itself if it is a file,
    else ``qtables/<agent>.npz`` in the run directory ``source`` (or ``<agent>.npz`` in a
    ``qtables`` directory). CheckpointError naming what exists otherwise."""
    if source.is_file():
        return source
    if not source.is_dir():
        raise CheckpointError(f"{source}: no such run directory or checkpoint file")
    folder = source / QTABLE_DIR if (source / QTABLE_DIR).is_dir() else source
    path = folder / f"{agent}.npz"
    if not path.is_file():
        present = sorted(p.stem for p in folder.glob("*.npz"))
        raise CheckpointError(f"{source}: no checkpoint for {agent} "
                              f"(has: {', '.join(present) or 'none'})")
    return path
