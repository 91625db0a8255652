"""Shared fixtures: paths of the shipped specs and plans, and a runner of the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The viewer's index cache goes to a private directory, never the user's ~/.cache; tests of
# the cache itself pass their own.
if "BDI_RL_INDEX_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["BDI_RL_INDEX_CACHE"] = tempfile.mkdtemp(prefix="bdi-rl-index-cache-")
    atexit.register(shutil.rmtree, os.environ["BDI_RL_INDEX_CACHE"], True)
AGENTS = ROOT / "agents"
ASL = ROOT / "asl"


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -m bdi_rl ARGS`` as a user would (a real process, real servers)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "bdi_rl", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def ejabberd():
    """A private Debian ejabberd configured by compose/ejabberd.yml (started once per session)."""
    from tests.ejabberd import remove, start_ejabberd

    server = start_ejabberd()
    yield server
    remove(server)


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write a spec file from TOML text; returns its path."""

    def write(text: str, name: str = "spec.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


MINIMAL_SPEC = """
name = "tiny"
episodes = 20
eval_episodes = 10
seed = 3

[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4", is_slippery = false }

[[agents]]
name = "learner"
"""


HOSTILE_ASL = """
!start.
@start +!start <- +note("<script>document.body.dataset.pwned = 1</script>");
                  +note("<img src=x onerror=\\"document.body.dataset.pwned = 1\\">"); .rl_finish.
"""


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> Path:
    """Finished runs made by the CLI, shared by the viewer, inspect, plot, export and dashboard
    tests: a small learner traced at step level, one whose beliefs are hostile HTML, and a
    team (coordinator + 3 learners) that talks."""
    base = tmp_path_factory.mktemp("viewer")
    runs = base / "runs"
    (base / "spec.toml").write_text(MINIMAL_SPEC)
    result = run_cli("run", str(base / "spec.toml"), "--runs", str(runs), "--no-progress", "--trace", "step")
    assert result.returncode == 0, result.stderr
    (base / "hostile.asl").write_text(HOSTILE_ASL)
    (base / "hostile.toml").write_text(MINIMAL_SPEC.replace('name = "tiny"', 'name = "hostile"')
                                       .replace('name = "learner"', 'name = "learner"\nasl = "hostile.asl"'))
    result = run_cli("run", str(base / "hostile.toml"), "--runs", str(runs), "--no-progress", "--trace", "step")
    assert result.returncode == 0, result.stderr
    from tests.test_team import _team_spec

    (base / "team.toml").write_text(_team_spec("v"))
    result = run_cli("run", str(base / "team.toml"), "--runs", str(runs), "--no-progress", "--episodes", "60")
    assert result.returncode == 0, result.stderr
    return runs


def run_named(runs: Path, experiment: str) -> Path:
    return next(p for p in runs.iterdir() if f"__{experiment}__" in p.name)


def beliefs_after(events: list[dict], position: int) -> dict[str, str]:
    """What the trace says the agent believed after its event ``position`` (folded from 0)."""
    beliefs: dict[str, str] = {}
    for event in events[: position + 1]:
        if event["kind"] == "belief.add":
            beliefs[event["data"]["belief"]] = event["data"]["source"]
        elif event["kind"] == "belief.del":
            beliefs.pop(event["data"]["belief"], None)
    return beliefs


#: What makes a test slow: a real ejabberd, the three full CLI runs of the ``runs`` fixture, or
#: a telemetry agent fed hostile batches over XMPP (it waits out each refusal).
SLOW_FIXTURES = {"ejabberd", "runs", "batches_received"}
#: Modules whose every test runs whole experiments or several processes.
SLOW_MODULES = {"test_processes", "test_cli_run", "test_team", "test_resume", "test_trust",
                "test_viewer_browser", "test_packaging", "test_claim", "test_stop_and_errors"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow tier, so that ``pytest -m "not slow"`` is the fast one (README)."""
    for item in items:
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
