"""Builds the reasoning cycle's hot modules with Cython into ``bdi_rl/_compiled/`` (everything
else about the package is in pyproject.toml).

``bdi_rl/compiled.py`` says why and how they are used: each compiled module runs in place of
its source only while that source is the one it was built from (the manifest written here
holds each source's hash). Without Cython or a C compiler the build goes on without them and
the package runs its sources, the same code; a module that fails to compile is left out alone.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, LinkError, PlatformError

#: The modules compiled, by how much of a run's time they hold (py-spy, BENCHMARKS.md
#: "The runtime compiled"): the AgentSpeak runtime's reasoning, queries, unification and
#: terms, its standard actions on the hot paths, tracing compiled in; a learner's episode,
#: seat, world and Q-learning; the mind's trace, message bodies, and trace records and batches.
COMPILED = [
    *(
        f"bdi_rl.bdi.runtime.{name}"
        for name in (
            "arith",
            "believing",
            "beliefs",
            "body",
            "control",
            "functions",
            "host",
            "instructions",
            "intention",
            "jason_cycle",
            "kqml",
            "literals",
            "queries",
            "reasoning",
            "relations",
            "state",
            "stdlib",
            "stdlib_beliefs",
            "stdlib_core",
            "stdlib_lists",
            "stdlib_mas",
            "terms",
            "traced",
            "tracing",
            "triggers",
            "unify",
            "waiting",
        )
    ),
    "bdi_rl.bdi.episode",
    "bdi_rl.bdi.mindtrace",
    "bdi_rl.bdi.plainliteral",
    "bdi_rl.bdi.seat",
    "bdi_rl.bdi.text",
    "bdi_rl.bdi.wire",
    "bdi_rl.bdi.world",
    "bdi_rl.rl.matrixgames",
    "bdi_rl.rl.qlearning",
    "bdi_rl.rl.sharedworld",
    "bdi_rl.rl.worldenv",
    "bdi_rl.trace.batch",
    "bdi_rl.trace.steps",
    "bdi_rl.trace.tracer",
]

#: The modules as Python runs them: no C types from their annotations or inferred from their
#: assignments (Cython's typed paths refuse what Python accepts: a ``str`` parameter given an
#: int, a slice of a list assigned a ``range``), functions that are functions (``binding``).
DIRECTIVES = {"language_level": 3, "binding": True, "annotation_typing": False, "infer_types": False}
COMPILED_DIR = Path("bdi_rl", "_compiled")
#: -O3, Python's own level (against -O2: 2.05-2.15 M instructions per climbing episode against
#: 2.16-2.18, within the ~3 % runs vary; ~1.3x the compile time); no debug information (it
#: tripled the modules' size).
CFLAGS = ["-O3", "-g0"]
#: The settings the modules are built with: names their C's directory under build/, and is
#: kept in the manifest, so a build made with other settings is made again (see run()).
MADE_WITH = hashlib.sha256(json.dumps([DIRECTIVES, CFLAGS], sort_keys=True).encode()).hexdigest()[:12]


def _source(module: str) -> Path:
    return Path(*module.split(".")).with_suffix(".py")


def _cythonized(extensions: list[Extension]) -> list[Extension]:
    """The extensions with their C sources made by Cython (under build/), or none without it."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("bdi-rl: Cython is not installed: the runtime runs from its sources")
        return []
    if any(source.endswith(".c") for ext in extensions for source in ext.sources):
        return extensions  # done already (setuptools finalizes a command more than once)
    build_dir = f"build/cython-{MADE_WITH}"  # made again, and compiled again, with other settings
    return cythonize(extensions, compiler_directives=DIRECTIVES, build_dir=build_dir, quiet=True)


class BuildCompiled(build_ext):
    """``build_ext`` that cythonizes first (or builds nothing when Cython is missing), keeps
    going past a module that does not compile, puts each build in ``bdi_rl/_compiled/`` (in
    the source tree for an editable install, as setuptools builds extensions in place there)
    and writes the manifest of what it built."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self.built: dict[str, str] = {}
        self.left_out: list[str] = []
        self.into_source = False

    def finalize_options(self) -> None:
        self.distribution.ext_modules = _cythonized(self.distribution.ext_modules or [])
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        self.into_source = bool(self.inplace)  # setuptools' run turns it off while it builds
        if self._made_with() != MADE_WITH:
            # setuptools compiles a module only if its C is newer than its build: the C of
            # settings used before (build/cython-<settings>/) is older than a build made since
            # with others, which would stay, with a manifest saying it is current
            self.force = True
        super().run()
        self._write_manifest()

    def _made_with(self) -> str | None:
        """The settings of the build there now (None: no build, or one before they were kept)."""
        try:
            made = json.loads(self._manifest_path().read_text())
        except (OSError, ValueError):
            return None
        return made.get("made_with") if isinstance(made, dict) else None

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except (CCompilerError, CompileError, LinkError, PlatformError) as exc:
            print(f"bdi-rl: {ext.name} not compiled ({exc}): it runs from its source")
            self.left_out.append(ext.name)
            return
        self.built[ext.name] = hashlib.sha256(_source(ext.name).read_bytes()).hexdigest()

    def _base(self) -> Path:
        return Path() if self.into_source else Path(self.build_lib)

    def get_ext_fullpath(self, ext_name: str) -> str:
        """``bdi_rl/_compiled/<the module's path below bdi_rl>``: beside its source a build
        would shadow the source even once it was edited."""
        parts = ext_name.split(".")
        return str(self._base() / COMPILED_DIR / Path(*parts[1:-1]) / self.get_ext_filename(parts[-1]))

    def copy_extensions_to_source(self) -> None:
        """Built where they belong already (:meth:`get_ext_fullpath`)."""

    def get_output_mapping(self) -> dict[str, str]:
        return {}

    def _manifest_path(self) -> Path:
        return self._base() / COMPILED_DIR / "manifest.json"

    def _write_manifest(self) -> None:
        path = self._manifest_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        made = {"made_with": MADE_WITH, "modules": dict(sorted(self.built.items())), "left_out": sorted(self.left_out)}
        text = json.dumps(made, indent=1) + "\n"
        partial = path.with_name(path.name + ".part")
        partial.write_text(text)
        partial.replace(path)

    def get_outputs(self) -> list[str]:
        built = [self.get_ext_fullpath(name) for name in self.built]
        return [*built, str(self._manifest_path())]


def _chosen() -> list[str]:
    """:data:`COMPILED`, or those of them ``$BDI_RL_COMPILE`` names (comma-separated; ``none``:
    none, for a quick install that runs the sources)."""
    given = os.environ.get("BDI_RL_COMPILE", "").strip()
    if not given:
        return COMPILED
    names = [name.strip() for name in given.split(",") if name.strip() and name.strip() != "none"]
    unknown = sorted(set(names) - set(COMPILED))
    if unknown:
        raise SystemExit(f"BDI_RL_COMPILE: not a module setup.py compiles: {', '.join(unknown)}")
    return names


setup(
    ext_modules=[Extension(name, [str(_source(name))], extra_compile_args=CFLAGS) for name in _chosen()],
    cmdclass={"build_ext": BuildCompiled},
)
