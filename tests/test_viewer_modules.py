"""The viewer's scripts are ES modules (no build step): each page loads one module, every name
a module imports is exported by the module it names, the graph has no cycle and leaves no
script out, and the server types them as JavaScript (a browser runs a module only then).
eslint (``.ci/run``, where npm is present) checks each module's own names; it does not
resolve imports, which this does on every machine."""

from __future__ import annotations

import re
from pathlib import Path

from bdi_rl.readers.viewer import STATIC, create_app

PAGES = sorted(STATIC.glob("*.html"))
SCRIPTS = {path.name: path.read_text() for path in sorted(STATIC.glob("*.js"))}

SCRIPT_TAG = re.compile(r"<script\b([^>]*)>")
NAMED_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+)";', re.M)
EXPORT_DECLARATION = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([\w$]+)", re.M)


def _attributes(tag: str) -> dict[str, str]:
    return {name: value for name, value in re.findall(r'([\w-]+)(?:="([^"]*)")?', tag)}


def _imports(name: str) -> dict[str, set[str]]:
    """The names ``name`` imports, by the script they come from. Any other import form fails,
    rather than being read as no import."""
    text = SCRIPTS[name]
    statements = re.findall(r"^import\b.*$", text, re.M)
    found = NAMED_IMPORT.findall(text)
    assert len(found) == len(statements), f"{name}: an import this test does not read: {statements}"
    imports: dict[str, set[str]] = {}
    for names, source in found:
        imports.setdefault(source, set()).update(n.split(" as ")[0].strip() for n in names.split(",") if n.strip())
    return imports


def _exports(name: str) -> set[str]:
    text = SCRIPTS[name]
    assert not re.search(r"^export\s*(\{|\*|default)", text, re.M), f"{name}: an export this test does not read"
    return set(EXPORT_DECLARATION.findall(text))


def _entries() -> dict[str, str]:
    """Each page's module, checked to be its only script besides the vendored plotly.js."""
    entries = {}
    for page in PAGES:
        tags = [_attributes(tag) for tag in SCRIPT_TAG.findall(page.read_text())]
        modules = [t["src"] for t in tags if t.get("type") == "module"]
        classic = [t["src"] for t in tags if t.get("type") != "module"]
        assert len(modules) == 1 and modules[0].startswith("/static/"), f"{page.name}: {modules}"
        assert all(src.startswith("/static/vendor/plotly") for src in classic), f"{page.name}: classic {classic}"
        assert all("defer" in t for t in tags if t.get("type") != "module"), f"{page.name}: plotly.js before the module"
        entries[page.name] = modules[0].removeprefix("/static/")
    return entries


def test_every_page_loads_one_module_and_every_script_is_reached():
    entries = _entries()
    assert entries == {
        "compare.html": "compare.js",
        "control.html": "control.js",
        "index.html": "runs.js",
        "library.html": "library.js",
        "run.html": "run.js",
    }
    reached: set[str] = set()
    todo = list(entries.values())
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += _imports(name)
    assert reached == set(SCRIPTS), f"scripts no page loads: {sorted(set(SCRIPTS) - reached)}"


def test_every_imported_name_is_exported_and_every_export_is_used():
    imported: dict[str, set[str]] = {name: set() for name in SCRIPTS}
    for name in SCRIPTS:
        for source, names in _imports(name).items():
            assert source in SCRIPTS, f"{name}: imports {source}, not a viewer script"
            missing = names - _exports(source)
            assert not missing, f"{name}: imports {sorted(missing)} that {source} does not export"
            imported[source] |= names
    unused = {name: sorted(_exports(name) - imported[name]) for name in SCRIPTS if _exports(name) - imported[name]}
    assert not unused, f"exported, never imported: {unused}"


def test_the_module_graph_has_no_cycle():
    """A cycle would let a module read another's const before it is set, depending on which
    page loads which module first."""
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, "import cycle: " + " -> ".join((*path, name))
        if name not in done:
            for source in _imports(name):
                visit(source, (*path, name))
            done.add(name)

    for name in SCRIPTS:
        visit(name, ())


def test_no_script_declares_strict_mode_or_reads_plotly_implicitly():
    """Modules are strict already; plotly.js is the one classic script, read as window.Plotly."""
    for name, text in SCRIPTS.items():
        assert '"use strict"' not in text, name
        assert not re.search(r"(?<![\w.])Plotly\b", text), f"{name}: Plotly without window."


async def test_scripts_are_served_as_javascript(aiohttp_client, tmp_path: Path):
    client = await aiohttp_client(create_app(tmp_path))
    for name in SCRIPTS:
        response = await client.get(f"/static/{name}")
        assert response.status == 200 and response.content_type == "text/javascript", name
    assert (await client.get("/static/viewer.css")).content_type == "text/css"
