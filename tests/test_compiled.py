"""The compiled runtime (bdi_rl/compiled.py, setup.py): a module's C build runs only while its
source is the one it was built from; the sources run otherwise, and with
``BDI_RL_PURE_PYTHON=1``. (That the compiled modules do what their sources do is the rest of
the suite: .ci/run runs it compiled, and the runtime's tests again on the sources.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from bdi_rl import compiled
from tests.conftest import run_main

ROOT = Path(__file__).resolve().parent.parent


def _finder(tmp_path: Path, digest: str | None = None) -> tuple[compiled.CompiledFinder, Path]:
    """A package ``pkg`` with module ``pkg.mod`` and a stand-in build of it (any extension
    file: the finder only decides which file is loaded)."""
    source = tmp_path / "pkg" / "mod.py"
    source.parent.mkdir()
    source.write_text("X = 1\n")
    built = tmp_path / "pkg" / "_compiled" / ("mod" + EXTENSION_SUFFIXES[0])
    built.parent.mkdir()
    built.write_bytes(b"")
    entries = {"pkg.mod": digest if digest is not None else compiled.source_hash(source.read_bytes())}
    return compiled.CompiledFinder(entries, root=tmp_path, compiled=tmp_path / "pkg" / "_compiled"), source


def test_a_module_built_from_its_current_source_is_loaded_built(tmp_path):
    finder, _ = _finder(tmp_path)
    spec = finder.find_spec("pkg.mod", None)
    assert spec is not None and spec.origin == str(tmp_path / "pkg" / "_compiled" / ("mod" + EXTENSION_SUFFIXES[0]))
    assert finder.loaded == ["pkg.mod"]


def test_a_module_edited_since_its_build_runs_from_its_source(tmp_path):
    finder, source = _finder(tmp_path)
    source.write_text("X = 2\n")
    assert finder.find_spec("pkg.mod", None) is None
    assert finder.loaded == []


def test_modules_the_manifest_does_not_name_and_builds_for_another_interpreter_are_not_found(tmp_path):
    finder, _ = _finder(tmp_path)
    assert finder.find_spec("pkg.other", None) is None
    for built in (tmp_path / "pkg" / "_compiled").iterdir():
        built.rename(built.with_name("mod.cpython-39-x86_64-linux-gnu.so"))
    assert finder.find_spec("pkg.mod", None) is None


@pytest.mark.parametrize("text", ["", "{", '{"modules": []}', '{"other": {}}', '{"modules": {"a": 1, "b": "x"}}'])
def test_a_damaged_manifest_uses_nothing_compiled(tmp_path, text):
    path = tmp_path / "manifest.json"
    path.write_text(text)
    assert compiled.read_manifest(path) == ({"b": "x"} if '"b"' in text else {})
    assert compiled.read_manifest(tmp_path / "missing.json") == {}


def test_version_says_what_runs_compiled_and_what_does_not(tmp_path, monkeypatch):
    monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    manifest = tmp_path / "manifest.json"
    assert compiled.describe(manifest).startswith("runtime from its sources: not compiled")
    stale = {"bdi_rl.bdi.runtime.terms": "0" * 64, "bdi_rl.bdi.runtime.unify": "0" * 64}
    manifest.write_text(json.dumps({"modules": stale, "left_out": ["bdi_rl.rl.qlearning"]}))
    assert compiled.describe(manifest) == (
        "runtime compiled: 0 of 2 modules (the others edited since the build); "
        "1 did not compile and run from their sources: bdi_rl.rl.qlearning"
    )
    monkeypatch.setenv(compiled.PURE_PYTHON, "1")
    assert compiled.describe(manifest) == "runtime from its sources: BDI_RL_PURE_PYTHON is set"


def _built_modules(env: dict[str, str] | None = None) -> dict[str, str]:
    """Where a new process takes each module the manifest names from."""
    code = (
        "import importlib, json, sys\n"
        "from bdi_rl import compiled\n"
        "names = sorted(compiled.read_manifest())\n"
        "print(json.dumps({n: importlib.import_module(n).__file__ for n in names}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=ROOT)
    return json.loads(done.stdout)


def test_this_install_runs_the_runtime_compiled_unless_told_not_to():
    """The package as installed here (.ci/run's ``pip install -e``): every module setup.py
    built comes from its build; ``BDI_RL_PURE_PYTHON=1``: every one from its source."""
    built = _built_modules()
    assert built, "no compiled runtime: setup.py built nothing (is Cython installed? a C compiler?)"
    assert all(path.endswith(tuple(EXTENSION_SUFFIXES)) for path in built.values()), built
    assert "bdi_rl.bdi.runtime.queries" in built
    pure = _built_modules({**os.environ, compiled.PURE_PYTHON: "1"})
    assert pure.keys() == built.keys()
    assert all(path.endswith(".py") for path in pure.values()), pure
    assert run_main("--version").stdout.strip().endswith(f"(runtime compiled: {len(built)} modules)")


def test_an_edited_runtime_module_runs_as_written_until_the_next_build(tmp_path):
    """A copy of the package whose ``terms.py`` is edited after the build: the edit is what
    runs (a build beside its source would have shadowed it)."""
    copy = tmp_path / "bdi_rl"
    shutil.copytree(ROOT / "bdi_rl", copy, ignore=shutil.ignore_patterns("__pycache__"))
    terms = copy / "bdi" / "runtime" / "terms.py"
    terms.write_text(terms.read_text() + "\nEDITED = True\n")
    code = (
        "import bdi_rl.bdi.runtime.terms as t, bdi_rl.bdi.runtime.unify as u\n"
        "print(getattr(t, 'EDITED', False), t.__file__.endswith('.py'), u.__file__.endswith('.py'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    edited, terms_from_source, unify_from_source = done.stdout.split()
    assert edited == "True" and terms_from_source == "True"
    assert unify_from_source == "False"  # its build is current: still compiled


def _build(copy: Path) -> bytes:
    """``setup.py build_ext --inplace`` in ``copy`` (one module, ``arith``); the build's bytes."""
    env = {**os.environ, "BDI_RL_COMPILE": "bdi_rl.bdi.runtime.arith"}
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=copy, env=env, capture_output=True, check=True
    )
    (built,) = (copy / "bdi_rl" / "_compiled" / "bdi" / "runtime").glob("arith.*")
    return built.read_bytes()


@pytest.mark.slow
def test_a_build_with_other_settings_is_made_again(tmp_path):
    """setup.py's settings changed and changed back: the build is the one of the settings in
    force, though build/ still holds the C of the first ones, older than the build between
    (setuptools compiles only a C newer than its build; the manifest keeps the settings)."""
    copy = tmp_path / "checkout"
    (copy / "bdi_rl" / "bdi" / "runtime").mkdir(parents=True)
    shutil.copy(ROOT / "setup.py", copy)
    shutil.copy(ROOT / "bdi_rl" / "bdi" / "runtime" / "arith.py", copy / "bdi_rl" / "bdi" / "runtime")
    setup = copy / "setup.py"
    first = _build(copy)
    setup.write_text(setup.read_text().replace('CFLAGS = ["-O3", "-g0"]', 'CFLAGS = ["-O0", "-g0"]'))
    other = _build(copy)
    assert other != first
    setup.write_text(setup.read_text().replace('CFLAGS = ["-O0", "-g0"]', 'CFLAGS = ["-O3", "-g0"]'))
    assert _build(copy) == first
    manifest = json.loads((copy / "bdi_rl" / "_compiled" / "manifest.json").read_text())
    assert manifest["modules"] == {
        "bdi_rl.bdi.runtime.arith": compiled.source_hash(
            (ROOT / "bdi_rl" / "bdi" / "runtime" / "arith.py").read_bytes()
        )
    }
