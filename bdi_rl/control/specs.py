"""Specs from requests: a shipped one by name, or TOML text uploaded from the page, and the
checkpoints their learners warm-start from, named by run id and agent.

Both go through the loader of ``bdi-rl run`` (:func:`bdi_rl.spec.load_spec`), so a spec that
is accepted is one the child can run, and a bad one is refused with the loader's one line.
An uploaded spec may not name a path: its plan files must be shipped ones (``learner.asl``),
it has no ``warm_start``, and its env is a registered id (an entry point ``module:Class``
would import any module). It is checked before any file is written, loaded from a private
temporary directory (so a relative plan file can only be a shipped one), and only once
accepted saved under the runs directory, by its hash, for the child to run.

A warm start comes by run id and agent (:func:`apply_warm_starts`), never as a path: the
server finds ``<runs>/<run>/qtables/<agent>.npz`` itself (or the run directory, each agent
taking its own table), sets the group's ``warm_start`` to it, and saves the resolved spec
(:func:`save_spec`) for the child; the run's own checks then refuse a table of another state
space with the line ``--warm-start`` gives.
"""

from __future__ import annotations

import copy
import hashlib
import tempfile
import tomllib
from pathlib import Path
from typing import Annotated, Any

import msgspec
import tomli_w

from bdi_rl.spec import (
    ExperimentSpec,
    Name,
    SpecError,
    load_spec,
    packaged_asl_dir,
    packaged_specs_dir,
    shipped_spec_names,
)
from bdi_rl.store import QTABLE_DIR, RUN_ID, atomic_write_bytes, run_dir_named

#: Where accepted uploaded specs are kept (a dot name: never taken for a run).
SPECS_DIR = ".specs"
#: Largest uploaded spec (the shipped ones are ~1 KB).
MAX_SPEC_BYTES = 64 * 1024


class RequestError(ValueError):
    """A request that cannot be honoured; the message is one line for the page (HTTP 400)."""


def shipped_specs() -> dict[str, str]:
    """Every shipped spec's TOML text by name (what the page offers)."""
    found = {}
    for name in shipped_spec_names():
        try:
            found[name] = (packaged_specs_dir() / f"{name}.toml").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return found


def shipped_spec(name: str, overrides: dict[str, Any]) -> tuple[Path, ExperimentSpec]:
    """A shipped spec by name, loaded with ``overrides`` (RequestError if unknown or refused)."""
    if name not in shipped_spec_names():
        raise RequestError(f"spec: no shipped spec {name[:80]!r} (shipped: {', '.join(shipped_spec_names())})")
    path = packaged_specs_dir() / f"{name}.toml"
    try:
        return path, load_spec(path, overrides)
    except SpecError as exc:
        raise RequestError(_one_line(str(exc))) from None


def uploaded_spec(
    text: str, overrides: dict[str, Any], runs: Path, save: bool = True
) -> tuple[Path | None, ExperimentSpec]:
    """Check ``text`` as a spec with ``overrides``, then save it as ``<runs>/.specs/<sha256>.toml``
    (RequestError, and nothing written, if it is refused). ``save`` False: not saved (a spec
    the server changes further is saved by :func:`save_spec` once every check passed)."""
    data = text.encode("utf-8")
    if len(data) > MAX_SPEC_BYTES:
        raise RequestError(f"spec: larger than {MAX_SPEC_BYTES // 1024} KB")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RequestError(_one_line(f"spec: not valid TOML: {exc}")) from None
    except RecursionError:
        raise RequestError("spec: not valid TOML: nested too deeply") from None
    _refuse_paths(table)
    with tempfile.TemporaryDirectory(prefix="bdi-rl-spec-") as tmp:
        path = Path(tmp) / "spec.toml"
        path.write_bytes(data)
        try:
            spec = load_spec(path, overrides)
        except SpecError as exc:
            raise RequestError(_one_line(str(exc).replace(str(path), "spec"))) from None
    shipped = packaged_asl_dir().resolve()
    for i, group in enumerate(spec.agents):  # what the loader resolved: shipped plans only
        if not Path(group.asl).resolve().is_relative_to(shipped) or group.warm_start is not None:
            raise RequestError(f"agents[{i}]: an uploaded spec may name only shipped plan files")
    if not save:
        return None, spec
    saved = runs / SPECS_DIR / f"{hashlib.sha256(data).hexdigest()}.toml"
    if not saved.is_file():
        atomic_write_bytes(saved, data)
    return saved, spec


def refuse_page_axes(spec_path: Path, axes: dict[str, Any], uploaded: frozenset[str] = frozenset()) -> None:
    """Each value of a page's sweep axes, set alone in the spec, under the rules of an uploaded
    spec (:func:`_refuse_paths`: shipped plan files only, no warm start, env entry point or
    other server; ``uploaded``: the plan files uploaded with the sweep, by name), before the
    loader looks for any file it names. RequestError naming it."""
    from bdi_rl.settings import apply_setting

    base = tomllib.loads(spec_path.read_text())
    for path, values in axes.items():
        for value in values if isinstance(values, list) else []:
            table = copy.deepcopy(base)
            try:
                apply_setting(table, path, value, f"axes.{path}")
            except SpecError as exc:
                raise RequestError(str(exc)) from None
            try:
                _refuse_paths(table, uploaded)
            except RequestError as exc:
                raise RequestError(f"axes.{path} = {str(value)[:80]!r}: {exc}") from None


def _refuse_paths(table: dict[str, Any], uploaded: frozenset[str] = frozenset()) -> None:
    """Refuse, before the loader touches the file system, whatever in an uploaded spec names
    a path or code: a plan file that is not shipped, a warm start, an env entry point."""
    env = table.get("env")
    if isinstance(env, dict) and isinstance(env.get("id"), str) and ":" in env["id"]:
        raise RequestError("env.id: an uploaded spec names a registered env id, not an entry point (module:Class)")
    xmpp = table.get("xmpp")
    if isinstance(xmpp, dict) and xmpp.get("server", "embedded") != "embedded":
        raise RequestError("xmpp.server: runs started here use the embedded XMPP server")
    viewer = table.get("viewer")
    if isinstance(viewer, dict) and viewer.get("enabled"):
        raise RequestError("viewer.enabled: this server is the viewer; leave it out")
    agents = table.get("agents")
    if not isinstance(agents, list):
        return  # the loader says what is wrong
    plans = _shipped_plans() | uploaded
    for i, group in enumerate(agents):
        if not isinstance(group, dict):
            continue
        if "warm_start" in group:
            raise RequestError(f"agents[{i}].warm_start: not allowed in an uploaded spec (it names a path)")
        asl = group.get("asl")
        if isinstance(asl, str) and asl not in plans:
            raise RequestError(
                f"agents[{i}].asl: an uploaded spec may name only a shipped plan file "
                f"({', '.join(sorted(plans))}), not {asl[:80]!r}"
            )


def _shipped_plans() -> set[str]:
    """The plan files an uploaded spec may name, as relative POSIX paths (``learner.asl``)."""
    try:
        return {p.name for p in packaged_asl_dir().glob("*.asl")}
    except OSError:
        return set()


def _one_line(text: str, most: int = 400) -> str:
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 3] + "..."


#: A run id and an agent's name as a request gives them: never a path (``store.RUN_ID``; an
#: agent's name is a JID's local part).
RunId = Annotated[str, msgspec.Meta(pattern=f"^{RUN_ID.pattern}$")]
AgentName = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]


class WarmStartRef(msgspec.Struct, forbid_unknown_fields=True):
    """What a learner group starts from: an agent's checkpoint in a run of this server's
    runs directory (``agent`` None: each agent its own table of that run)."""

    run: RunId
    agent: AgentName | None = None
    group: Name | None = None
    """the learner group it is for (None: every learner group no other entry names)"""


def learner_groups(text: str) -> list[str]:
    """The learner groups a spec's TOML text names (what the page offers to warm-start)."""
    try:
        groups = tomllib.loads(text).get("agents")
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    return [
        str(g.get("name"))
        for g in (groups if isinstance(groups, list) else [])
        if isinstance(g, dict) and g.get("role", "learner") == "learner" and isinstance(g.get("name"), str)
    ]


def checkpoint_of(runs: Path, run: str, agent: str | None) -> Path:
    """The checkpoint (or, with no agent, the run directory) a warm start by run id and agent
    names, found under ``runs`` (RequestError naming what exists otherwise)."""
    run_dir = run_dir_named(runs, run)
    if run_dir is None:
        raise RequestError(f"warm_start: no run {run[:80]!r} in this runs directory")
    tables = sorted(p.stem for p in (run_dir / QTABLE_DIR).glob("*.npz"))
    if agent is None:
        if not tables:
            raise RequestError(f"warm_start: run {run} has no Q-table checkpoint")
        return run_dir
    path = run_dir / QTABLE_DIR / f"{agent}.npz"
    if not path.is_file():
        raise RequestError(f"warm_start: run {run} has no checkpoint of {agent} (has: {', '.join(tables) or 'none'})")
    return path


def apply_warm_starts(spec: ExperimentSpec, refs: list[WarmStartRef], runs: Path) -> list[str]:
    """Set each learner group's ``warm_start`` from ``refs`` (checkpoints found under
    ``runs``); returns what was set, ``group <- run/agent``, for the job's label and the sweep
    record. RequestError for a group the spec lacks, or a run or checkpoint that is not there."""
    learners = [g for g in spec.agents if g.role == "learner"]
    names = [g.name for g in learners]
    named = [r.group for r in refs if r.group is not None]
    if len(set(named)) != len(named) or sum(r.group is None for r in refs) > 1:
        raise RequestError("warm_start: one entry per group (and one for every other group)")
    for wanted in named:
        if wanted not in names:
            raise RequestError(
                f"warm_start: the spec has no learner group {wanted!r} (its learner groups: {', '.join(names)})"
            )
    done = []
    for ref in refs:
        source = checkpoint_of(runs, ref.run, ref.agent)
        for group in learners:
            if group.name == ref.group or (ref.group is None and group.name not in named):
                group.warm_start = str(source)
                done.append(f"{group.name} <- {ref.run}/{ref.agent or '(each agent)'}")
    return done


def save_spec(spec: ExperimentSpec, runs: Path) -> Path:
    """The resolved ``spec`` as ``<runs>/.specs/<sha256>.toml``, for a child to run (a spec the
    server changed: its warm starts resolved under ``runs``)."""
    data = tomli_w.dumps(spec.to_dict()).encode()
    saved = runs / SPECS_DIR / f"{hashlib.sha256(data).hexdigest()}.toml"
    if not saved.is_file():
        atomic_write_bytes(saved, data)
    return saved
