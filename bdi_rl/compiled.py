"""The reasoning cycle's hot modules compiled to C (by Cython, when the package is built),
used only where they were built from the source that is here now.

A plan's context, body and unification are a few thousand small Python calls per env step,
spread evenly over the runtime's modules (BENCHMARKS.md, "Instructions, not seconds"):
no one of them is worth rewriting, and the interpreter's own overhead is most of the cost.
Cython compiles the same modules, unchanged, to C extension modules that do the same work
in fewer instructions (BENCHMARKS.md); declarations beside some of them (``*.pxd``) make
their plain classes extension types in the build (docs/ARCHITECTURE.md). ``setup.py``
builds them into ``bdi_rl/_compiled/`` with a manifest of each module's source hash, and
:func:`install` (run when ``bdi_rl`` is imported) puts a finder first on ``sys.meta_path``
that loads a compiled module in place of its source only when the source's hash is the
manifest's. So an edited module runs as written (an editable install, a developer's
checkout) until the next build, and a machine without Cython or a C compiler runs the plain
source, the same code.

``BDI_RL_PURE_PYTHON=1`` turns the compiled modules off (a profiler then sees every Python
frame; the tests run the runtime both ways, .ci/run).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from pathlib import Path
from types import ModuleType

#: Set to 1 (or any non-empty value but 0): every module runs from its source.
PURE_PYTHON = "BDI_RL_PURE_PYTHON"
#: Where setup.py puts the compiled modules, mirroring the package's paths, and its manifest.
COMPILED_DIR = Path(__file__).resolve().parent / "_compiled"
MANIFEST = COMPILED_DIR / "manifest.json"
#: The package's parent directory: a module ``bdi_rl.x.y``'s source is ``ROOT/bdi_rl/x/y.py``.
ROOT = Path(__file__).resolve().parent.parent


def source_hash(data: bytes) -> str:
    """What the manifest records of a module's source (setup.py computes it the same way)."""
    return hashlib.sha256(data).hexdigest()


class CompiledFinder:
    """Finds a module's compiled build when the manifest names it and its source is the one
    it was built from; None otherwise (the next finder imports the source)."""

    def __init__(self, entries: dict[str, str], root: Path = ROOT, compiled: Path = COMPILED_DIR) -> None:
        self.entries = entries
        """module name -> the hash of the source its build was made from"""
        self.root = root
        self.compiled = compiled
        self.loaded: list[str] = []
        """modules this finder gave their compiled build (in import order)"""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        built_from = self.entries.get(fullname)
        if built_from is None:
            return None
        relative = Path(*fullname.split("."))
        try:
            source = (self.root / relative.with_suffix(".py")).read_bytes()
        except OSError:
            return None
        if source_hash(source) != built_from:
            return None  # edited since the build: the source runs
        for suffix in EXTENSION_SUFFIXES:
            binary = self.compiled / relative.parent.relative_to(relative.parts[0]) / (relative.name + suffix)
            if binary.is_file():
                self.loaded.append(fullname)
                return ModuleSpec(fullname, ExtensionFileLoader(fullname, str(binary)), origin=str(binary))
        return None  # built for another interpreter


def read_manifest(path: Path = MANIFEST) -> dict[str, str]:
    """module -> source hash, from the last build; empty when there was none (or it is unreadable:
    then nothing compiled is used, and the sources run)."""
    modules = _read(path).get("modules")
    if not isinstance(modules, dict):
        return {}
    return {name: digest for name, digest in modules.items() if isinstance(name, str) and isinstance(digest, str)}


def left_out(path: Path = MANIFEST) -> list[str]:
    """The modules the last build tried and could not compile."""
    names = _read(path).get("left_out")
    return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []


def _read(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _turned_off() -> bool:
    return os.environ.get(PURE_PYTHON, "") not in ("", "0")


_finder: CompiledFinder | None = None


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once; not when turned off or never built)."""
    global _finder
    if _finder is not None or _turned_off():
        return
    entries = read_manifest()
    if not entries:
        return
    _finder = CompiledFinder(entries)
    sys.meta_path.insert(0, _finder)


def describe(manifest: Path = MANIFEST) -> str:
    """How this installation runs its runtime, in a few words (``bdi-rl --version``)."""
    if _turned_off():
        return f"runtime from its sources: {PURE_PYTHON} is set"
    entries = read_manifest(manifest)
    if not entries:
        return "runtime from its sources: not compiled when installed (no Cython or no C compiler)"
    finder = CompiledFinder(entries)
    current = [name for name in entries if finder.find_spec(name, None) is not None]
    said = f"runtime compiled: {len(entries)} modules"
    if len(current) < len(entries):
        said = f"runtime compiled: {len(current)} of {len(entries)} modules (the others edited since the build)"
    failed = left_out(manifest)
    if failed:
        said += f"; {len(failed)} did not compile and run from their sources: {', '.join(failed)}"
    return said
