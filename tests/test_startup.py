"""What a run's process imports: only what it uses (issue 33, start-up under half a second).

The cost itself is measured in bench/bench_whole_process.py (BENCHMARKS.md); here, which
libraries a whole ``bdi-rl run`` loads, so that a change that pulls one back in fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

#: Run bdi-rl's main as the console script does, then print what it imported.
RUN_AND_LIST = """
import json, sys
from bdi_rl.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
print("MODULES " + json.dumps(sorted(sys.modules)), flush=True)
sys.exit(code)
"""

#: Libraries a run never uses: SPADE's own server (pyjabber and its database layer), SPADE's
#: web pages and file upload (aiohttp, jinja2), PettingZoo for a Gym env, slixmpp's debug-log
#: colours (pygments) and DNS resolver (aiodns, pycares).
NEVER = (
    "pyjabber",
    "sqlalchemy",
    "alembic",
    "aiohttp",
    "jinja2",
    "aiohttp_jinja2",
    "pettingzoo",
    "aiosqlite",
    "pygments",
    "aiodns",
    "pycares",
)


def _run_modules(tmp_path: Path, cache: Path) -> set[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_AND_LIST,
            "run",
            "agents/frozenlake-4x4.toml",
            "--episodes",
            "20",
            "--trace",
            "episode",
            "--no-progress",
            "--runs",
            str(tmp_path / "runs"),
        ],
        capture_output=True,
        text=True,
        timeout=100,
        env={**os.environ, "BDI_RL_CACHE": str(cache)},
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("MODULES "))
    return {name.split(".")[0] for name in json.loads(line[len("MODULES ") :])}


def test_a_run_imports_only_what_it_uses(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _run_modules(tmp_path, cache)
    assert [name for name in NEVER if name in first] == []
    assert "cryptography" in first  # the first run on a machine makes the server's certificate
    assert (cache / "xmpp" / "localhost.pem").stat().st_mode & 0o077 == 0
    again = _run_modules(tmp_path, cache)
    assert "cryptography" not in again  # later runs reuse it without reading it
    assert "lark" in first and "lark" not in again  # the plans are parsed once, then read back
    assert {"spade", "slixmpp", "gymnasium", "numpy"} <= again  # it did run agents on an env


def test_the_viewer_imports_no_statistics_or_env_library_until_asked() -> None:
    """``bdi-rl view`` starts on aiohttp and the readers: scipy (~0.7 s to import) comes with
    the first curve statistic, gymnasium with the first world rebuilt, and no agent code."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, bdi_rl.readers.viewer; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in json.loads(done.stdout.replace("'", '"'))}
    assert {"aiohttp"} <= loaded
    assert [name for name in ("scipy", "gymnasium", "spade", "pyjabber") if name in loaded] == []


def test_inspect_imports_no_event_loop_agent_or_env_library(runs: Path) -> None:
    """``bdi-rl inspect`` reads a trace and prints: no asyncio (~30 ms to import), no agent,
    XMPP or env library."""
    (run,) = [d for d in runs.iterdir() if "tiny" in d.name]
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST, "inspect", str(run), "--agent", "learner"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    assert "learner" in done.stdout  # it did inspect the learner
    line = next(line for line in done.stdout.splitlines() if line.startswith("MODULES "))
    loaded = {name.split(".")[0] for name in json.loads(line[len("MODULES ") :])}
    assert [name for name in ("asyncio", "spade", "slixmpp", "gymnasium", "scipy") if name in loaded] == []
