"""Specs from requests: a shipped one by name, or TOML text uploaded from the page.

Both go through the loader of ``bdi-rl run`` (:func:`bdi_rl.spec.load_spec`), so a spec that
is accepted is one the child can run, and a bad one is refused with the loader's one line.
An uploaded spec may not name a path: its plan files must be shipped ones (``learner.asl``),
it has no ``warm_start``, and its env is a registered id (an entry point ``module:Class``
would import any module). It is checked before any file is written, loaded from a private
temporary directory (so a relative plan file can only be a shipped one), and only once
accepted saved under the runs directory, by its hash, for the child to run.
"""

from __future__ import annotations

import hashlib
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from bdi_rl.spec import ExperimentSpec, SpecError, load_spec, packaged_asl_dir, packaged_specs_dir, shipped_spec_names
from bdi_rl.store import atomic_write_bytes

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


def uploaded_spec(text: str, overrides: dict[str, Any], runs: Path) -> tuple[Path, ExperimentSpec]:
    """Check ``text`` as a spec with ``overrides``, then save it as ``<runs>/.specs/<sha256>.toml``
    (RequestError, and nothing written, if it is refused)."""
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
    saved = runs / SPECS_DIR / f"{hashlib.sha256(data).hexdigest()}.toml"
    if not saved.is_file():
        atomic_write_bytes(saved, data)
    return saved, spec


def _refuse_paths(table: dict[str, Any]) -> None:
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
    plans = _shipped_plans()
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
