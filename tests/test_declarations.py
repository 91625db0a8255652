"""The Cython declarations beside compiled modules (``*.pxd``: some of their classes built as
extension types, BENCHMARKS.md "Extension types"): they must say what the source's class is,
or the compiled build would refuse (or lose) an attribute the source accepts. Checked from
the texts, so a class and its declaration cannot drift apart unnoticed; and, on this
install, that the build uses them."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bdi_rl.compiled import PURE_PYTHON, read_manifest

ROOT = Path(__file__).resolve().parent.parent
DECLARATIONS = sorted((ROOT / "bdi_rl").rglob("*.pxd"))
_CLASS = re.compile(r"^cdef class (\w+):\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.MULTILINE)


def _module(pxd: Path) -> str:
    return ".".join(pxd.relative_to(ROOT).with_suffix("").parts)


def _declared(pxd: Path) -> dict[str, tuple[set[str], bool]]:
    """class -> (the fields it declares, whether it keeps a ``__dict__``)."""
    classes = {}
    for name, body in _CLASS.findall(pxd.read_text()):
        fields: set[str] = set()
        has_dict = False
        for line in body.splitlines():
            line = line.strip()
            if line == "cdef dict __dict__":
                has_dict = True
            elif line.startswith("cdef public object "):
                fields |= {f.strip() for f in line.removeprefix("cdef public object ").split(",")}
            elif line and not line.startswith("#"):
                raise AssertionError(f"{pxd.name}: class {name}: a declaration this test does not read: {line}")
        classes[name] = (fields, has_dict)
    return classes


def _source_class(pxd: Path, name: str) -> ast.ClassDef:
    tree = ast.parse(pxd.with_suffix(".py").read_text())
    found = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name]
    assert found, f"{pxd.name} declares class {name}, which {pxd.with_suffix('.py').name} does not define"
    return found[0]


def _slots(cls: ast.ClassDef) -> set[str] | None:
    for item in cls.body:
        if isinstance(item, ast.Assign) and any(getattr(t, "id", "") == "__slots__" for t in item.targets):
            return set(ast.literal_eval(item.value))
    return None


def _assigned(cls: ast.ClassDef) -> set[str]:
    """The attributes the class's own methods give ``self``."""
    names = set()
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            for part in ast.walk(target) if target is not None else ():
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    names.add(part.attr)
    return names


def test_there_are_declarations_and_each_is_of_a_compiled_module():
    """Each ``.pxd`` is of a module the build here compiled (its manifest: .ci/run builds it)."""
    assert DECLARATIONS, "no .pxd found: the extension types' declarations are gone"
    built = read_manifest()
    for pxd in DECLARATIONS:
        assert _module(pxd) in built, (
            f"{pxd.relative_to(ROOT)}: its module was not built (is it in setup.py's COMPILED?)"
        )


@pytest.mark.parametrize("pxd", DECLARATIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_declared_class_is_the_sources_class(pxd):
    """A class with ``__slots__``: exactly its slots, no ``__dict__`` (the source has none
    either). One without: a ``__dict__`` (for what is not declared) and only attributes its
    methods assign. Either way a plain class (an extension type cannot derive from a Python
    class, nor be a dataclass)."""
    declared = _declared(pxd)
    assert declared, f"{pxd.name} declares no class"
    for name, (fields, has_dict) in declared.items():
        cls = _source_class(pxd, name)
        assert not cls.bases and not cls.decorator_list, f"{name}: bases or decorators an extension type cannot have"
        slots = _slots(cls)
        if slots is not None:
            assert fields == slots, f"{pxd.name}: {name} declares {sorted(fields)}, its __slots__ are {sorted(slots)}"
            assert not has_dict, f"{pxd.name}: {name} has __slots__ (no __dict__) but is declared with one"
        else:
            assert has_dict, f"{pxd.name}: {name} has no __slots__: its declaration needs 'cdef dict __dict__'"
            unknown = fields - _assigned(cls)
            assert not unknown, f"{pxd.name}: {name} declares {sorted(unknown)}, which it never assigns"


def test_the_build_here_uses_the_declarations():
    """On this install (.ci/run builds it), in a process running the build, each declared
    class is an extension type: its fields are the build's descriptors. With
    ``BDI_RL_PURE_PYTHON=1`` each is the source's class again (slots, or a ``__dict__``)."""
    wanted = {
        _module(pxd): {name: sorted(fields) for name, (fields, _) in _declared(pxd).items()} for pxd in DECLARATIONS
    }
    code = (
        "import importlib, json, sys\n"
        "wanted = json.loads(sys.argv[1])\n"
        "out = {}\n"
        "for module, classes in wanted.items():\n"
        "    m = importlib.import_module(module)\n"
        "    for name, fields in classes.items():\n"
        "        cls = getattr(m, name)\n"
        "        out[module + '.' + name] = sorted({type(vars(cls).get(f)).__name__ for f in fields})\n"
        "print(json.dumps(out))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != PURE_PYTHON}
    for environ, kinds in (
        (env, [["getset_descriptor"]]),
        ({**env, PURE_PYTHON: "1"}, [["member_descriptor"], ["NoneType"]]),
    ):
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps(wanted)],
            capture_output=True,
            text=True,
            check=True,
            env=environ,
            cwd=ROOT,
        )
        for cls, found in json.loads(done.stdout).items():
            assert found in kinds, f"{cls}: its fields are {found}, not {' or '.join(map(str, kinds))}"
