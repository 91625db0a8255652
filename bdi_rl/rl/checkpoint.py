"""Q-table checkpoints: one ``.npz`` per agent, checked before any table is used.

A checkpoint holds the table (``q``) and JSON metadata (``meta``), whose one schema is
:class:`CheckpointMeta`: format version, the env's state-space signature (id, the kwargs
that shape the states, sizes), the env's full kwargs, agent, run, episodes and env steps
trained, the step limit, epsilon and alpha at save, hyper-parameters, the spec's hash, where a warm start
came from, a SHA-256 of the table, and the creation time.

Files are written atomically (temporary file, fsync, rename), so a process killed while
saving leaves the previous checkpoint or the new one, never a torn file. Reading refuses,
with one line naming the file, anything that is not exactly such a checkpoint: not an
archive, truncated, another format version, a metadata field of the wrong type or out of
range (naming the field), a table that does not match its own metadata or checksum,
non-finite values. :func:`check_env` then refuses a table made for another state space,
saying what differs; a table is never reshaped to fit.

The schema, the writer and the reader's checks stay one module (~500 lines): they are one
file format, and change together.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import struct
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeGuard

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from bdi_rl.store import QTABLE_DIR, atomic_write_bytes

FORMAT = 2
#: Format 1 (before checksums) is still read; its tables are checked for shape only.
READABLE_FORMATS = (1, 2)
#: Largest uncompressed table and metadata read from an archive: a few-KB file must not
#: expand into gigabytes (a Taxi table is 24 KB; 256 MiB is 32M Q-values).
MAX_TABLE_BYTES = 256 << 20
MAX_META_BYTES = 16 << 20
#: No checkpoint file is bigger than its largest table and metadata (``np.savez`` stores them
#: uncompressed) and a little zip framing: readers that list or import files open none bigger.
MAX_FILE_BYTES = MAX_TABLE_BYTES + MAX_META_BYTES + (1 << 20)
#: Deepest nesting of the metadata's JSON (bdi-rl writes 3 levels; printing or comparing a
#: deeper value could exhaust the stack).
MAX_META_DEPTH = 32


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; one line, naming the file."""


Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
Size = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
"""finite: NaN fails both bounds"""
Rate = Annotated[float, msgspec.Meta(gt=0.0, le=1.0)]
PlanValue = Annotated[float, msgspec.Meta(ge=-1e300, le=1e300)]
"""finite: NaN and the infinities fail the bounds"""
Checksum = Annotated[str, msgspec.Meta(pattern=r"^sha256:[0-9a-f]{64}$")]
Timestamp = Annotated[float, msgspec.Meta(ge=0.0, le=253402128000.0)]
"""unix seconds up to the end of year 9999, less two days (what ``datetime`` can show in
any time zone)"""


class EnvSignature(msgspec.Struct, frozen=True):
    """The state space a table was made for (``EnvAdapter.state_space_signature``)."""

    env_id: Annotated[str, msgspec.Meta(min_length=1)]
    n_states: Size
    n_actions: Size
    kwargs: dict[str, Any] = {}
    """only the kwargs that shape the states (FrozenLake: ``grid``)"""


class TaskSignature(msgspec.Struct, frozen=True):
    """The task on those states at save (``EnvAdapter.task_signature``, plus the goal)."""

    desc: list[str] = []
    """FrozenLake's map rows (empty for other envs)"""
    goal: Annotated[list[Count], msgspec.Meta(max_length=2)] = []
    """the current goal cell with moving goals, else empty"""


class WarmStartOrigin(msgspec.Struct, frozen=True):
    """Where a warm-started table came from (kept through resumes)."""

    path: str
    episodes: Count
    checksum: Checksum | None = None


class CheckpointMeta(msgspec.Struct, frozen=True):
    """The metadata of a checkpoint, as :func:`save_checkpoint` and ``RlBridge`` write it.

    Fields bdi-rl may leave out (format 1, or a checkpoint saved by a test or a tool) are
    optional; a field that is present must have its type and range (``epsilon: null`` is
    refused, as the writer never writes it). Unknown fields are ignored, so a later bdi-rl
    may add some without a new format."""

    format: Literal[1, 2]
    shape: Annotated[list[Size], msgspec.Meta(min_length=2, max_length=2)]
    """[states, actions] of ``q``"""
    episodes: Count
    """training episodes of the run that saved it"""
    env: EnvSignature | None = None
    checksum: Checksum | UnsetType = UNSET
    """SHA-256 of the table (format 2)"""
    dtype: Literal["float64"] = "float64"
    created: Timestamp | UnsetType = UNSET
    agent: str = ""
    run: str = ""
    env_kwargs: dict[str, Any] = {}
    """the env's full kwargs (the state space's are in ``env``)"""
    max_episode_steps: Size | UnsetType = UNSET
    """the env's step limit as trained (not part of the state space; a play of the table
    on its own env needs it: FrozenLake 8x8 is trained with 200 steps, registered with 100)"""
    task: TaskSignature = msgspec.field(default_factory=TaskSignature)
    total_episodes: Count | UnsetType = UNSET
    """episodes over every run the table was warm-started through"""
    env_steps: Count = 0
    epsilon: Probability | UnsetType = UNSET
    alpha: Rate | UnsetType = UNSET
    learning: dict[str, Any] = {}
    """the learner's hyper-parameters (``LearningConfig``)"""
    spec_hash: str = ""
    warm_start: WarmStartOrigin | None = None
    plan_values: dict[str, dict[str, dict[str, PlanValue]]] | UnsetType = UNSET
    """learned plan selection's values, goal -> abstract state -> plan label -> value
    (``bdi_rl.rl.options``; only a learner with learned plans saves them)"""
    subtask_tables: dict[str, dict[str, list[PlanValue]]] | UnsetType = UNSET
    """the sub-goal tables of a hierarchy of plans, sub-goal -> abstract state (a whole
    number, as text) -> its actions' values (``bdi_rl.rl.subtasks``; only a learner whose
    plans use them saves them)"""


@dataclass
class Checkpoint:
    path: Path
    q: np.ndarray
    header: CheckpointMeta
    """the checked, typed metadata: what code reads"""
    meta: dict[str, Any]
    """the same metadata as stored (a JSON object whose known fields passed the check)"""

    @property
    def episodes(self) -> int:
        """Training episodes behind this table, over every run it was warm-started through."""
        total = self.header.total_episodes
        return self.header.episodes if total is UNSET else total

    @property
    def prior_episodes(self) -> int:
        """Training episodes behind the table from before the run that saved it."""
        return self.episodes - self.header.episodes

    @property
    def env(self) -> EnvSignature | None:
        return self.header.env

    @property
    def checksum(self) -> str | None:
        return None if self.header.checksum is UNSET else self.header.checksum

    @property
    def plan_values(self) -> dict[str, dict[str, dict[str, float]]]:
        """The learned plan values saved with the table (empty: none)."""
        values = self.header.plan_values
        return {} if values is UNSET else values

    @property
    def subtask_tables(self) -> dict[str, dict[int, list[float]]]:
        """The sub-goal tables saved with the table (empty: none; their states checked at load)."""
        tables = self.header.subtask_tables
        if tables is UNSET:
            return {}
        return {task: {int(state): row for state, row in rows.items()} for task, rows in tables.items()}

    @property
    def alpha(self) -> float | None:
        """The learning rate at save (None: not recorded)."""
        return None if self.header.alpha is UNSET else self.header.alpha

    @property
    def epsilon(self) -> float | None:
        """The exploration rate at save (None: not recorded)."""
        return None if self.header.epsilon is UNSET else self.header.epsilon

    @property
    def lineage(self) -> dict[str, Any] | None:
        """The warm start behind this table (path, episodes, checksum), as recorded."""
        origin = self.header.warm_start
        return None if origin is None else msgspec.to_builtins(origin)

    def as_warm_start(self) -> dict[str, Any]:
        """The lineage a table warm-started from this checkpoint records."""
        return {"path": str(self.path), "episodes": self.episodes, "checksum": self.checksum}


def table_checksum(q: np.ndarray) -> str:
    """SHA-256 of the table's values as little-endian float64, row by row."""
    return "sha256:" + hashlib.sha256(np.ascontiguousarray(q, dtype="<f8").tobytes()).hexdigest()


def save_checkpoint(path: Path, q: np.ndarray, meta: dict[str, Any]) -> None:
    """Write ``q`` and ``meta`` (plus format, shape and checksum) atomically."""
    header = {
        "format": FORMAT,
        **meta,
        "shape": list(q.shape),
        "dtype": "float64",
        "checksum": table_checksum(q),
        "created": time.time(),
    }
    buffer = io.BytesIO()
    np.savez(buffer, q=np.asarray(q, dtype=np.float64), meta=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8))
    atomic_write_bytes(path, buffer.getvalue())


#: What reading a damaged or foreign archive can raise (zipfile, its decompressors, numpy's
#: .npy header parser); each means "not a readable checkpoint".
_ARCHIVE_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    KeyError,
    NotImplementedError,
    RuntimeError,
    zlib.error,
    lzma.LZMAError,
    struct.error,
    MemoryError,
    OverflowError,
)


def load_checkpoint(path: Path) -> Checkpoint:
    """Read and check a checkpoint file (not yet against an env: :func:`check_env`)."""
    try:
        if path.is_dir():
            raise CheckpointError(f"{path}: is a directory, not a checkpoint file")
        if not path.is_file():
            raise CheckpointError(f"{path}: no such checkpoint file")
    except OSError as exc:  # a name too long, say
        raise CheckpointError(f"{path}: cannot read it ({exc.strerror or type(exc).__name__})") from None
    q, meta_bytes = _read_archive(path)
    meta = _decode_meta(path, meta_bytes)
    version = meta.get("format")
    if type(version) is not int or version not in READABLE_FORMATS:
        raise CheckpointError(
            f"{path}: checkpoint format {_clip(repr(version))}; this bdi-rl reads "
            f"formats {', '.join(map(str, READABLE_FORMATS))}"
        )
    try:
        header = msgspec.convert(meta, CheckpointMeta)
    except msgspec.ValidationError as exc:
        raise CheckpointError(f"{path}: {field_error(str(exc))}") from None
    table = _check_table(path, q, header)
    _check_subtask_tables(path, header)
    return Checkpoint(path, table, header, meta)


#: Most members an archive may list to be read as a checkpoint (it has two, ``q`` and ``meta``):
#: Python's zipfile parses the whole central directory when it opens one, and a 200 MB file
#: can list millions of members (gigabytes of ``ZipInfo``), so a bigger one is refused first.
MAX_MEMBERS = 64
_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


def _members_listed(path: Path) -> int | None:
    """How many members the archive's end record says it lists (None: no end record, or
    one that cannot be read; zipfile then says what is wrong)."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        tail_size = min(size, _EOCD.size + 0xFFFF)
        f.seek(size - tail_size)
        tail = f.read(tail_size)
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + _EOCD.size > len(tail):
            return None
        entries = _EOCD.unpack_from(tail, at)[4]
        if entries != 0xFFFF:
            return int(entries)
        locator = tail.rfind(b"PK\x06\x07", 0, at)  # zip64: the real count is in its own record
        if locator < 0:
            return None
        offset = struct.unpack_from("<Q", tail, locator + 8)[0]
        if offset + _ZIP64_EOCD.size > size:
            return None
        f.seek(offset)
        record = f.read(_ZIP64_EOCD.size)
        if len(record) < _ZIP64_EOCD.size or record[:4] != b"PK\x06\x06":
            return None
        return int(_ZIP64_EOCD.unpack(record)[7])


def _read_archive(path: Path) -> tuple[np.ndarray, bytes]:
    """The ``q`` and ``meta`` arrays of an ``.npz``, read without pickle, sizes bounded."""
    try:
        listed = _members_listed(path)
        if listed is not None and listed > MAX_MEMBERS:
            raise CheckpointError(
                f"{path}: not a bdi-rl Q-table checkpoint (an archive of {listed} members; a checkpoint has 2)"
            )
        with zipfile.ZipFile(path) as archive:
            members = {info.filename: info for info in archive.infolist()}
            if not {"q.npy", "meta.npy"} <= members.keys():
                names = sorted(name.removesuffix(".npy") for name in members)
                shown = _clip(repr(names[:10])[:-1] + (", ...]" if len(names) > 10 else "]"), 200)
                raise CheckpointError(f"{path}: not a bdi-rl Q-table checkpoint (arrays {shown}, expected q and meta)")
            q = _read_npy(path, archive, members["q.npy"], MAX_TABLE_BYTES)
            meta = _read_npy(path, archive, members["meta.npy"], MAX_META_BYTES)
            return q, meta.tobytes()
    except CheckpointError:
        raise
    except _ARCHIVE_ERRORS as exc:
        raise CheckpointError(
            f"{path}: not a readable checkpoint, truncated or not an .npz archive ({type(exc).__name__})"
        ) from None


def _read_npy(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> np.ndarray:
    name = info.filename.removesuffix(".npy")
    if info.file_size > limit:
        raise CheckpointError(
            f"{path}: array {name} is {info.file_size} bytes uncompressed; a checkpoint holds at most {limit}"
        )
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _decode_meta(path: Path, raw: bytes) -> dict[str, Any]:
    """The metadata's JSON object (the stdlib's JSON, as the writer's: NaN is read, then
    refused by the schema, naming the field)."""
    try:
        meta = json.loads(raw.decode())
    except (UnicodeDecodeError, ValueError, RecursionError):  # ValueError: also 5000-digit ints
        raise CheckpointError(f"{path}: corrupt metadata (not JSON)") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: corrupt metadata (not a JSON object)")
    problem = _json_problem(meta)
    if problem:
        raise CheckpointError(f"{path}: corrupt metadata ({problem})")
    return meta


def _json_problem(value: Any) -> str | None:
    """Why decoded JSON is unfit to show or compare: nested deeper than
    :data:`MAX_META_DEPTH`, or text that is not valid Unicode (a lone surrogate escape)."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, str):
            texts: Any = (item,)
        elif isinstance(item, (dict, list)):
            if depth >= MAX_META_DEPTH:
                return f"nested deeper than {MAX_META_DEPTH} levels"
            children = item.values() if isinstance(item, dict) else item
            todo.extend((child, depth + 1) for child in children)
            texts = item.keys() if isinstance(item, dict) else ()
        else:
            continue
        for text in texts:
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    return "text that is not valid Unicode"
    return None


def field_error(text: str, noun: str = "metadata") -> str:
    """msgspec's "Expected `int`, got `str` - at `$.episodes`" as
    "metadata field episodes: expected int, got str" (``noun``: whose field)."""
    what, _, where = text.partition(" - at `")
    field = where.rstrip("`").removeprefix("$").removeprefix(".")
    missing = what.removeprefix("Object missing required field `")
    if missing != what:
        field = ".".join(filter(None, (field, missing.rstrip("`"))))
        what = "missing"
    what = what.replace("`", "")
    what = what[:1].lower() + what[1:]
    return f"{noun} field {field}: {what}" if field else f"{noun}: {what}"


def _check_table(path: Path, q: np.ndarray, header: CheckpointMeta) -> np.ndarray:
    """``q`` as float64, once it matches its metadata and checksum."""
    if q.ndim != 2 or q.dtype.kind not in "fi":
        raise CheckpointError(f"{path}: the table is not a 2-D numeric array ({q.dtype}, {q.ndim}-D)")
    if list(q.shape) != header.shape:
        raise CheckpointError(f"{path}: the table is {_shape(q.shape)} but its metadata says {_shape(header.shape)}")
    env = header.env
    if env is not None and (env.n_states, env.n_actions) != tuple(q.shape):
        raise CheckpointError(
            f"{path}: the table is {_shape(q.shape)} but its env has {env.n_states} states and {env.n_actions} actions"
        )
    if header.total_episodes is not UNSET and header.total_episodes < header.episodes:
        raise CheckpointError(
            f"{path}: metadata field total_episodes: {header.total_episodes} is "
            f"fewer than this run's episodes ({header.episodes})"
        )
    table = q.astype(np.float64)
    if header.format >= 2 and header.checksum is UNSET:
        raise CheckpointError(f"{path}: metadata field checksum: missing (format 2 has one)")
    if header.format >= 2 and header.checksum != table_checksum(table):
        raise CheckpointError(f"{path}: corrupt table (checksum mismatch)")
    if not np.isfinite(table).all():
        raise CheckpointError(f"{path}: the table holds NaN or infinite values")
    return table


def _check_subtask_tables(path: Path, header: CheckpointMeta) -> None:
    """Each sub-goal table's states are whole numbers and its rows as wide as the Q-table."""
    tables = header.subtask_tables
    if tables is UNSET:
        return
    actions = header.shape[1]
    for task, rows in tables.items():
        for state, row in rows.items():
            where = f"{path}: metadata field subtask_tables.{_clip(task)}.{_clip(state)}"
            if not state.isascii() or not state.isdigit() or len(state) > 9:
                raise CheckpointError(f"{where}: an abstract state must be a whole number")
            if len(row) != actions:
                raise CheckpointError(f"{where}: {len(row)} action values, the table has {actions} actions")


def _shape(shape: Any) -> str:
    if isinstance(shape, (list, tuple)) and len(shape) == 2:
        return f"{shape[0]}x{shape[1]}"
    return repr(shape)


def _clip(text: str, limit: int = 40) -> str:
    """``text`` fit for a one-line message: shortened, control characters escaped."""
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_env(
    checkpoint: Checkpoint,
    signature: dict[str, Any],
    against: str = "this run's env",
    labels: str = "checkpoint vs run",
) -> None:
    """Refuse a table made for another state space than ``signature``'s; the message says
    what differs (``labels`` names the two sides)."""
    made = checkpoint.env
    if made is None:
        raise CheckpointError(f"{checkpoint.path}: the checkpoint does not say which env it is for")
    differences = []
    if made.env_id != signature["env_id"]:
        differences.append(f"env {_clip(made.env_id)} vs {signature['env_id']}")
    shape, needed = checkpoint.q.shape, (signature["n_states"], signature["n_actions"])
    if tuple(shape) != needed:
        differences.append(f"table {_shape(shape)} vs {_shape(needed)} (states x actions)")
    kwargs, wanted = _space_kwargs(made.kwargs), signature.get("kwargs") or {}
    for key in sorted(set(kwargs) | set(wanted)):
        if kwargs.get(key) != wanted.get(key):
            differences.append(f"{_clip(key)} {_brief(kwargs.get(key))} vs {_brief(wanted.get(key))}")
    if differences:
        raise CheckpointError(
            f"{checkpoint.path}: made for another state space than {against} ({labels}: {'; '.join(differences)})"
        )


def state_space_of(checkpoint: Checkpoint) -> dict[str, Any]:
    """The state-space signature the table was made for, as ``EnvAdapter`` gives it (so
    another checkpoint can be checked against it)."""
    made = checkpoint.env
    if made is None:
        raise CheckpointError(f"{checkpoint.path}: the checkpoint does not say which env it is for")
    return {
        "env_id": made.env_id,
        "kwargs": _space_kwargs(made.kwargs),
        "n_states": made.n_states,
        "n_actions": made.n_actions,
    }


def _is_map(value: Any) -> TypeGuard[list[str]]:
    """FrozenLake's ``desc``: a non-empty list of rows of text."""
    return isinstance(value, list) and bool(value) and all(isinstance(row, str) for row in value)


def _space_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Checkpoints before the task/state-space split recorded FrozenLake's whole map as its
    state space; its size is what the state space is."""
    desc = kwargs.get("desc")
    if _is_map(desc):
        return {**{k: v for k, v in kwargs.items() if k != "desc"}, "grid": f"{len(desc)}x{len(desc[0])}"}
    return kwargs


def task_change(checkpoint: Checkpoint, task: dict[str, Any]) -> str | None:
    """How this run's task differs from the one the table was learned on (FrozenLake: the
    cells whose letter changed, e.g. the goal moved), or None."""
    old_desc: Any = checkpoint.header.task.desc
    if not old_desc and checkpoint.env is not None:  # before the task split: the map was in env
        old_desc = checkpoint.env.kwargs.get("desc")
    new_desc = task.get("desc")
    if not _is_map(old_desc) or not _is_map(new_desc) or old_desc == new_desc:
        return None
    changed = [
        f"({x},{y}) {old_desc[y][x]}->{new_desc[y][x]}"
        for y in range(min(len(old_desc), len(new_desc)))
        for x in range(min(len(old_desc[y]), len(new_desc[y])))
        if old_desc[y][x] != new_desc[y][x]
    ]
    return "map cells changed: " + ", ".join(changed[:12]) + (" ..." if len(changed) > 12 else "")


def _brief(value: Any) -> str:
    if _is_map(value):
        return f"{len(value)}x{len(value[0])} map {_clip('/'.join(value))}"  # FrozenLake's desc
    return _clip(json.dumps(value))


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
        raise CheckpointError(f"{source}: no checkpoint for {agent} (has: {', '.join(present) or 'none'})")
    return path
