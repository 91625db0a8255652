"""Q-tables between machines: ``bdi-rl qtable export`` and ``qtable import``.

An export is one zip archive: ``manifest.json`` (what it holds: each table's agent, file,
SHA-256 of the file, table checksum, episodes, the run that made it, its warm-start lineage
and its run's final evaluation) and the checkpoints themselves, byte for byte, with each
agent's policy cache if its run kept one. A bare checkpoint (``.npz``) imports too.

An import is checked whole before anything is created: the archive (members, sizes: no zip
bomb, no path from a member's name), the manifest's schema, each file's SHA-256, each
checkpoint as ``--warm-start`` checks it (format, metadata, checksum), its state space
against the env it names rebuilt here (registered gymnasium ids and shipped worlds only: a
``module:Class`` named by a file is never imported), each policy cache. Then it lands as a
run directory of its own (``<env>__<experiment>-import__<seed>__<time>``, holding
``qtables/``, ``policies/`` and a ``summary.json`` saying where it came from), so it is named,
listed, played and warm-started from like any run; a bad file is one line, and nothing is made.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from bdi_rl.rl.checkpoint import (
    _ARCHIVE_ERRORS,
    MAX_FILE_BYTES,
    Checkpoint,
    CheckpointError,
    Checksum,
    Count,
    Probability,
    Timestamp,
    check_env,
    field_error,
    load_checkpoint,
)
from bdi_rl.rl.policyfile import POLICY_DIR, PolicyFileError, read_policy_file
from bdi_rl.store import QTABLE_DIR, SUMMARY_FILE, atomic_write_bytes, atomic_write_json, new_run_dir

FORMAT = "bdi-rl.qtables/1"
MANIFEST = "manifest.json"
#: Largest manifest read (a thousand tables' entries are ~1 MB).
MAX_MANIFEST_BYTES = 1 << 20
#: Most tables in one export (a run has at most 1000 agents).
MAX_TABLES = 1000
#: Largest policy cache (``rl.policyfile``'s bound).
MAX_POLICY_BYTES = 64 << 20
#: A summary is read for the final evaluations up to this size (runstate's bound).
MAX_SUMMARY_BYTES = 16 << 20
#: A run id (``store.run_id``): an import is named after the run its tables came from.
_SOURCE_RUN = re.compile(r"(?P<env>.+?)__(?P<experiment>.+)__(?P<seed>[0-9]{1,10})__[0-9]+(?:-[0-9]+)?")

AgentName = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]
Sha256 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
Finite = Annotated[float, msgspec.Meta(ge=-1e300, le=1e300)]


class ExchangeError(ValueError):
    """A file that cannot be exported or imported; one line naming it."""


class ExportedEval(msgspec.Struct, frozen=True):
    episodes: Count
    mean_return: Finite
    success_rate: Probability | None = None


class ExportedTable(msgspec.Struct, frozen=True):
    agent: AgentName
    file: str
    sha256: Sha256
    checksum: Checksum | None = None
    episodes: Count = 0
    made_by: str = ""
    lineage: dict[str, Any] | None = None
    eval: ExportedEval | None = None


class ExportedPolicy(msgspec.Struct, frozen=True):
    agent: AgentName
    file: str
    sha256: Sha256


class Manifest(msgspec.Struct, frozen=True):
    """``manifest.json`` of an export."""

    format: Literal["bdi-rl.qtables/1"]
    exported: Timestamp
    tables: Annotated[list[ExportedTable], msgspec.Meta(min_length=1, max_length=MAX_TABLES)]
    policies: Annotated[list[ExportedPolicy], msgspec.Meta(max_length=MAX_TABLES)] = []
    source_run: str = ""


# -- export ------------------------------------------------------------------------------------
def export_tables(source: Path, file: Path) -> str:
    """Write ``source``'s tables (a run directory's every checkpoint, or one checkpoint) and
    their policy caches into ``file``; every one is checked first. Returns what was written."""
    tables, run_dir = _tables_to_export(source)
    checked = [load_checkpoint(path) for path in tables]
    evals = _final_evals(run_dir) if run_dir is not None else {}
    buffer = io.BytesIO()
    entries: list[dict[str, Any]] = []
    policies: list[dict[str, Any]] = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for checkpoint in checked:
            agent = checkpoint.path.stem
            data = checkpoint.path.read_bytes()
            archive.writestr(f"{QTABLE_DIR}/{agent}.npz", data)
            entries.append(
                {
                    "agent": agent,
                    "file": f"{QTABLE_DIR}/{agent}.npz",
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "checksum": checkpoint.checksum,
                    "episodes": checkpoint.episodes,
                    "made_by": checkpoint.header.run,
                    "lineage": checkpoint.lineage,
                    "eval": evals.get(agent),
                }
            )
            cache = checkpoint.path.parent.parent / POLICY_DIR / f"{agent}.json" if run_dir is not None else None
            if cache is not None and cache.is_file():
                _check_policies(cache, checkpoint)
                data = cache.read_bytes()
                archive.writestr(f"{POLICY_DIR}/{agent}.json", data)
                policies.append(
                    {"agent": agent, "file": f"{POLICY_DIR}/{agent}.json", "sha256": hashlib.sha256(data).hexdigest()}
                )
        manifest = {
            "format": FORMAT,
            "exported": time.time(),
            "source_run": run_dir.name if run_dir is not None else (checked[0].header.run or ""),
            "tables": entries,
            "policies": policies,
        }
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
    atomic_write_bytes(file, buffer.getvalue())
    return (
        f"{file}: {len(entries)} table(s) ({', '.join(e['agent'] for e in entries)}), {len(policies)} policy cache(s)"
    )


def _tables_to_export(source: Path) -> tuple[list[Path], Path | None]:
    """The checkpoints to export and their run directory (None for a lone file)."""
    try:
        if source.is_file():
            folder = source.parent
            return [source], folder.parent if folder.name == QTABLE_DIR else None
        if not source.is_dir():
            raise ExchangeError(f"{source}: no such run directory or checkpoint file")
        tables = sorted((source / QTABLE_DIR).glob("*.npz"))
    except OSError as exc:
        raise ExchangeError(f"{source}: cannot use this path ({exc.strerror})") from None
    if not tables:
        raise ExchangeError(f"{source}: no Q-table checkpoint to export (no {QTABLE_DIR}/*.npz)")
    if len(tables) > MAX_TABLES:
        raise ExchangeError(f"{source}: {len(tables)} tables; an export holds at most {MAX_TABLES}")
    for path in tables:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", path.stem):
            raise ExchangeError(f"{path}: not an agent's checkpoint name (agents are named {AGENT_RULE})")
    return tables, source


AGENT_RULE = "lower-case ASCII letters, digits, '-' or '_'"


def _final_evals(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Each agent's final evaluation in the run's summary (none if it has no readable one)."""
    try:
        with open(run_dir / SUMMARY_FILE, "rb") as f:
            raw = f.read(MAX_SUMMARY_BYTES + 1)
        summary = json.loads(raw) if len(raw) <= MAX_SUMMARY_BYTES else {}
    except (OSError, ValueError):
        return {}
    agents = summary.get("agents") if isinstance(summary, dict) else None
    found = {}
    for name, entry in (agents or {}).items():
        final = entry.get("eval") if isinstance(entry, dict) else None
        try:
            found[name] = msgspec.to_builtins(msgspec.convert(final, ExportedEval))
        except msgspec.ValidationError:
            continue
    return found


def _check_policies(path: Path, checkpoint: Checkpoint) -> None:
    """A policy cache readable, and made for its table's state space."""
    cache = read_policy_file(path)
    made = checkpoint.env
    signature = {k: v for k, v in cache.env.items() if k != "agent"}  # a seat's names its agent
    if made is not None and signature != msgspec.to_builtins(made):
        raise PolicyFileError(f"{path}: made for another state space than its table")


# -- import ------------------------------------------------------------------------------------
def import_tables(file: Path, runs: Path) -> str:
    """Check ``file`` whole (an export, or one checkpoint), then make it a run directory
    under ``runs``; returns what was made. ExchangeError (or CheckpointError, PolicyFileError)
    naming the file and what is wrong, with nothing made, for anything else."""
    _must_be_a_file(file)
    with tempfile.TemporaryDirectory(prefix="bdi-rl-import-") as tmp:
        scratch = Path(tmp)
        try:
            archive = zipfile.ZipFile(file)
        except _ARCHIVE_ERRORS:
            raise ExchangeError(f"{file}: not a bdi-rl export or checkpoint (not a zip archive)") from None
        with archive:
            names = set(archive.namelist())
            policies: dict[str, Path] = {}
            manifest: Manifest | None = None
            if {"q.npy", "meta.npy"} <= names:  # a bare checkpoint: read as --warm-start reads one
                tables = _bare_checkpoint(file)
            elif MANIFEST in names:
                manifest = _read_manifest(file, archive)
                tables, policies = _exported_files(file, archive, manifest, scratch)
            else:
                raise ExchangeError(f"{file}: neither a bdi-rl export (no {MANIFEST}) nor a Q-table checkpoint")
        for agent, checkpoint in tables.items():
            _check_state_space(file, agent, checkpoint)
        for agent, path in policies.items():
            try:
                _check_policies(path, tables[agent])
            except PolicyFileError as exc:
                raise ExchangeError(
                    f"{file}: {POLICY_DIR}/{agent}.json: {str(exc).removeprefix(f'{path}: ')}"
                ) from None
        return _land(file, runs, tables, policies, manifest)


def _must_be_a_file(file: Path) -> None:
    try:
        if not file.is_file():
            raise ExchangeError(f"{file}: no such file")
    except OSError as exc:
        raise ExchangeError(f"{file}: cannot be read ({exc.strerror})") from None


def _file_sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _member(file: Path, archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """A member's bytes, at most ``limit`` (its declared size is checked first, and reading
    stops there whatever the compressed data would expand to)."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ExchangeError(f"{file}: {name} is named in the manifest but not in the archive") from None
    if info.file_size > limit:
        raise ExchangeError(f"{file}: {name} is {info.file_size} bytes, more than it can be ({limit})")
    try:
        with archive.open(info) as member:
            data = member.read(limit + 1)
    except _ARCHIVE_ERRORS as exc:
        raise ExchangeError(f"{file}: {name} cannot be read ({type(exc).__name__}): a damaged archive") from None
    if len(data) > limit:
        raise ExchangeError(f"{file}: {name} is larger than it can be ({limit} bytes)")
    return data


def _read_manifest(file: Path, archive: zipfile.ZipFile) -> Manifest:
    raw = _member(file, archive, MANIFEST, MAX_MANIFEST_BYTES)
    try:
        manifest = msgspec.json.decode(raw, type=Manifest)
    except msgspec.ValidationError as exc:
        raise ExchangeError(f"{file}: {field_error(str(exc), MANIFEST)}") from None
    except (msgspec.DecodeError, RecursionError):
        raise ExchangeError(f"{file}: {MANIFEST} is not JSON") from None
    agents = [t.agent for t in manifest.tables]
    if len(set(agents)) != len(agents):
        raise ExchangeError(f"{file}: {MANIFEST} lists an agent's table twice")
    for table in manifest.tables:
        if table.file != f"{QTABLE_DIR}/{table.agent}.npz":
            raise ExchangeError(f"{file}: {MANIFEST}: {table.agent}'s table is {table.file!r}, not qtables/<agent>.npz")
    for policy in manifest.policies:
        if policy.agent not in agents or policy.file != f"{POLICY_DIR}/{policy.agent}.json":
            raise ExchangeError(f"{file}: {MANIFEST}: policy cache {policy.file!r} belongs to no table")
    listed = {MANIFEST} | {t.file for t in manifest.tables} | {p.file for p in manifest.policies}
    extra = sorted(set(archive.namelist()) - listed)
    if extra:
        raise ExchangeError(f"{file}: {extra[0][:80]!r} is in the archive but not in its {MANIFEST}")
    return manifest


def _exported_files(
    file: Path, archive: zipfile.ZipFile, manifest: Manifest, scratch: Path
) -> tuple[dict[str, Checkpoint], dict[str, Path]]:
    """Each listed file out of the archive into ``scratch`` (under a name of ours), its
    SHA-256 as the manifest says, each checkpoint read and checked."""
    tables: dict[str, Checkpoint] = {}
    for entry in manifest.tables:
        data = _member(file, archive, entry.file, MAX_FILE_BYTES)
        _same_sha(file, entry.file, data, entry.sha256)
        path = scratch / QTABLE_DIR / f"{entry.agent}.npz"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        checkpoint = _loaded(file, entry.file, path)
        if entry.checksum is not None and checkpoint.checksum != entry.checksum:
            raise ExchangeError(f"{file}: {entry.file}: its table's checksum is not the manifest's")
        tables[entry.agent] = checkpoint
    policies: dict[str, Path] = {}
    for cache in manifest.policies:
        data = _member(file, archive, cache.file, MAX_POLICY_BYTES)
        _same_sha(file, cache.file, data, cache.sha256)
        path = scratch / POLICY_DIR / f"{cache.agent}.json"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        try:
            read_policy_file(path)
        except PolicyFileError as exc:
            raise ExchangeError(f"{file}: {cache.file}: {str(exc).removeprefix(f'{path}: ')}") from None
        policies[cache.agent] = path
    return tables, policies


def _same_sha(file: Path, name: str, data: bytes, expected: str) -> None:
    if hashlib.sha256(data).hexdigest() != expected:
        raise ExchangeError(f"{file}: {name}: its SHA-256 is not the manifest's (damaged or changed since export)")


def _loaded(file: Path, name: str, path: Path) -> Checkpoint:
    try:
        return load_checkpoint(path)
    except CheckpointError as exc:
        raise ExchangeError(f"{file}: {name}: {str(exc).removeprefix(f'{path}: ')}") from None


def _bare_checkpoint(file: Path) -> dict[str, Checkpoint]:
    checkpoint = load_checkpoint(file)
    agent = checkpoint.header.agent or file.stem
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", agent):
        raise ExchangeError(f"{file}: agent {agent[:64]!r}: not an agent's name ({AGENT_RULE})")
    return {agent: checkpoint}


def _check_state_space(file: Path, agent: str, checkpoint: Checkpoint) -> None:
    """The table fits the env it says it was made for, rebuilt here from its metadata."""
    from bdi_rl.rl.envs import EnvError, make_env
    from bdi_rl.rl.worldenv import is_world_id, make_world

    made = checkpoint.env
    if made is None:
        raise ExchangeError(f"{file}: {agent}'s table does not say which env it is for")
    where = f"{file}: {agent}'s table"
    if ":" in made.env_id:
        raise ExchangeError(
            f"{where} is for the env entry point {made.env_id[:80]!r}: an import takes tables of registered "
            "envs only (the code a file names is never run)"
        )
    kwargs = dict(checkpoint.header.env_kwargs or made.kwargs)
    kwargs.pop("grid", None)
    if checkpoint.header.task.desc:
        kwargs = {k: v for k, v in kwargs.items() if k != "map_name"} | {"desc": list(checkpoint.header.task.desc)}
    try:
        if is_world_id(made.env_id):
            world = make_world(made.env_id, kwargs)
            signatures = [seat.state_space_signature() for seat in world.seats.values()]
        else:
            signatures = [make_env(made.env_id, kwargs).state_space_signature()]
    except EnvError as exc:
        raise ExchangeError(f"{where}: its env cannot be made here: {exc}") from None
    problems = []
    for signature in signatures:
        try:
            check_env(checkpoint, signature, against="its own env", labels="table vs env")
            return
        except CheckpointError as exc:
            problems.append(str(exc).removeprefix(f"{checkpoint.path}: "))
    raise ExchangeError(f"{where}: {problems[0]}")


def _land(
    file: Path,
    runs: Path,
    tables: dict[str, Checkpoint],
    policies: dict[str, Path],
    manifest: Manifest | None,
) -> str:
    """The checked files as a new run directory (removed again if writing fails)."""
    first = next(iter(tables.values()))
    source = manifest.source_run if manifest is not None else first.header.run
    named = _SOURCE_RUN.fullmatch(source or "")
    experiment = f"{named['experiment']}-import" if named else "import"
    seed = int(named["seed"]) if named else 0
    env_id = first.env.env_id if first.env is not None else "unknown"
    run_dir, writer = new_run_dir(runs, env_id, experiment[:60], seed, "bdi-rl qtable import")
    try:
        agents: dict[str, Any] = {}
        exported = {t.agent: t for t in manifest.tables} if manifest is not None else {}
        for agent, checkpoint in tables.items():
            atomic_write_bytes(run_dir / QTABLE_DIR / f"{agent}.npz", checkpoint.path.read_bytes())
            entry: dict[str, Any] = {
                "episodes": checkpoint.header.episodes,
                "env_steps": checkpoint.header.env_steps,
                "qtable": f"{QTABLE_DIR}/{agent}.npz",
            }
            final = exported[agent].eval if agent in exported else None
            if final is not None:
                entry["eval"] = msgspec.to_builtins(final)
            agents[agent] = entry
        for agent, path in policies.items():
            atomic_write_bytes(run_dir / POLICY_DIR / f"{agent}.json", path.read_bytes())
        summary = {
            "run": run_dir.name,
            "env": env_id,
            "experiment": experiment,
            "seed": seed,
            "imported": {
                "file": str(file),
                "sha256": _file_sha256(file),
                "from_run": source or None,
                "exported": manifest.exported if manifest is not None else None,
                "at": time.time(),
            },
            "agents": agents,
        }
        atomic_write_json(run_dir / SUMMARY_FILE, summary)
    except BaseException:
        writer.release()
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    writer.release()
    return f"{run_dir}: imported {len(tables)} table(s) ({', '.join(tables)}) from {file}"
