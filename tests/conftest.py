"""Shared fixtures: paths of the shipped specs and plans, and a runner of the real CLI."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bdi_rl.patches import apply_all
from bdi_rl.trace.kinds import BELIEF_ADD, BELIEF_DEL

apply_all()  # as the CLI does before it runs agents: tests build minds and agents in-process

ROOT = Path(__file__).resolve().parent.parent

# bdi-rl's caches (the viewer's index, the built grammar) go to a private directory, never
# the user's ~/.cache; tests of a cache itself pass their own.
if "BDI_RL_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["BDI_RL_CACHE"] = tempfile.mkdtemp(prefix="bdi-rl-cache-")
    os.environ.setdefault("BDI_RL_INDEX_CACHE", os.path.join(os.environ["BDI_RL_CACHE"], "index"))
    atexit.register(shutil.rmtree, os.environ["BDI_RL_CACHE"], True)
AGENTS = ROOT / "agents"
ASL = ROOT / "asl"


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -m bdi_rl ARGS`` as a user would (a real process, real servers)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bdi_rl", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def run_main(*args: str) -> subprocess.CompletedProcess:
    """``bdi-rl ARGS`` in this process, through the CLI's ``main`` and its error boundary, with
    what ``run_cli`` returns: for the readers' tests, which need no process of their own (an
    interpreter start and the imports cost ~0.4 s a call)."""
    from bdi_rl.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exc:  # a usage error, refused by the argument parser
            status = exc.code
    return subprocess.CompletedProcess(["bdi-rl", *args], status, out.getvalue(), err.getvalue())


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


#: Beliefs that are HTML meant to run in the viewer (it must show them as text), and a plan
#: that notes them.
HOSTILE_NOTES = [
    "<script>document.body.dataset.pwned = 1</script>",
    '<img src=x onerror="document.body.dataset.pwned = 1">',
]
HOSTILE_ASL = f"""
!start.
@start +!start <- {"; ".join(f"+note({json.dumps(note)})" for note in HOSTILE_NOTES)}; .rl_finish.
"""


def _reader_specs(base: Path) -> dict[str, Path]:
    """The specs of the readers' runs: a small learner, one whose plan notes hostile HTML, a
    team (coordinator + 3 learners) that talks."""
    from tests.test_team import _team_spec

    (base / "hostile.asl").write_text(HOSTILE_ASL)
    texts = {
        "tiny": MINIMAL_SPEC,
        "hostile": MINIMAL_SPEC.replace('name = "tiny"', 'name = "hostile"').replace(
            'name = "learner"', 'name = "learner"\nasl = "hostile.asl"'
        ),
        "team": _team_spec("v"),
    }
    for name, text in texts.items():
        (base / f"{name}.toml").write_text(text)
    return {name: base / f"{name}.toml" for name in texts}


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> Path:
    """Finished runs for the viewer, inspect, plot, export and dashboard tests, written as a
    run writes them (tests/fakeruns.py: the package's own writers, no XMPP, no agents; ~0.3 s):
    a small learner traced at step level, one whose beliefs are hostile HTML, and a team
    (coordinator + 3 learners) that talks. ``cli_run`` holds them to a real run."""
    from tests.fakeruns import learner_run, notes_run, team_run

    base = tmp_path_factory.mktemp("runs")
    specs, runs = _reader_specs(base), base / "runs"
    learner_run(runs, specs["tiny"], rng_seed=11, trace="step")  # 11: reaches the goal (Q-values to draw)
    notes_run(runs, specs["hostile"], HOSTILE_NOTES, trace="step")
    team_run(runs, specs["team"], episodes=60)
    return runs


@pytest.fixture(scope="session")
def cli_run(tmp_path_factory) -> Path:
    """One run made by the CLI, a team traced at step level (the richest trace: minds,
    Q-learning steps, messages): the slow tier's check that the written runs are real ones."""
    base = tmp_path_factory.mktemp("cli-run")
    specs = _reader_specs(base)
    result = run_cli("run", str(specs["team"]), "--runs", str(base / "runs"), "--no-progress", "--episodes", "60")
    assert result.returncode == 0, result.stderr
    return run_named(base / "runs", "team")


@pytest.fixture(scope="session")
def cycle_run(tmp_path_factory) -> Path:
    """A real run traced at cycle level (the CLI, 3 episodes of FrozenLake: ~2 s), for the
    Mind Inspector's tests in the viewer and in ``inspect``."""
    runs_dir = tmp_path_factory.mktemp("cycle") / "runs"
    result = run_cli(
        "run",
        str(AGENTS / "frozenlake-4x4.toml"),
        "--episodes",
        "3",
        "--trace",
        "cycle",
        "--runs",
        str(runs_dir),
        "--no-progress",
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return run_named(runs_dir, "frozenlake-4x4")


CHROMIUM = "/usr/bin/chromium"
# Headless, and quiet on a closed network (no background connections at start).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright (no browser download), one per module of browser
    tests: Playwright's sync API holds an event loop open while it runs, and the asyncio tests
    that come after a module need none running."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).is_file(), "chromium is not installed (.ci/run installs it)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def run_named(runs: Path, experiment: str) -> Path:
    return next(p for p in runs.iterdir() if f"__{experiment}__" in p.name)


def line_seqs(events: list[dict], agent: str) -> list[int]:
    """The seqs of ``agent``'s trace lines, in order, from its events as read_trace gives them
    (the events of one step record are consecutive and share its seq)."""
    return [seq for seq, _ in itertools.groupby(e["seq"] for e in events if e["agent"] == agent)]


def beliefs_after(events: list[dict], position: int) -> dict[str, list[str]]:
    """What the trace says the agent believed after its event ``position`` (folded from 0):
    each belief's sources, sorted (a keyframe restates them from the mind's set, in no order
    of their coming); it goes with its last source."""
    beliefs: dict[str, list[str]] = {}
    for event in events[: position + 1]:
        data = event["data"]
        named = data.get("sources") or [data.get("source")] if event["kind"] in (BELIEF_ADD, BELIEF_DEL) else []
        if event["kind"] == BELIEF_ADD:
            beliefs[data["belief"]] = sorted({*beliefs.get(data["belief"], []), *named})
        elif event["kind"] == BELIEF_DEL and data["belief"] in beliefs:
            beliefs[data["belief"]] = [s for s in beliefs[data["belief"]] if s not in named]
            if not beliefs[data["belief"]]:
                del beliefs[data["belief"]]
    return beliefs


#: What makes a test slow: a real ejabberd, the CLI runs of ``cli_run`` and ``cycle_run``, or
#: a telemetry agent fed hostile batches over XMPP (it waits out each refusal).
SLOW_FIXTURES = {
    "ejabberd",
    "cli_run",
    "cycle_run",
    "batches_received",
    "world_runs",  # the shipped climbing and foraging specs, run whole (tests/test_world_readers.py)
    "crowd_run",  # 60 learners, run whole (tests/test_throughput.py)
    "runs_with_damage",  # two sparse 2 GB traces read past (tests/test_viewer_damage.py)
}
#: Modules whose every test runs whole experiments or several processes.
SLOW_MODULES = {
    "test_trace_v1",  # two shipped specs run whole, compared with their format-1 recordings
    "test_viewer_damage_browser",
    "test_processes",
    "test_cli_run",
    "test_team",
    "test_resume",
    "test_trust",
    "test_viewer_browser",
    "test_packaging",
    "test_claim",
    "test_stop_and_errors",
    "test_warm_start",
    "test_world_browser",
    "test_compose_run",
}


def pytest_configure(config: pytest.Config) -> None:
    """The fast tier (``-m "not slow"``) tries a fifth of each fuzz test's examples
    (tests/fuzzing.py); a whole run tries them all."""
    from tests import fuzzing

    if "not slow" in (config.getoption("markexpr", "") or ""):
        fuzzing.SHARE[0] = 0.2


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A long text parameter (a trace line, a batch) is named by its argument alone (pytest
    numbers the repeats): its text may hold a time stamp, and the test processes of
    ``pytest -n`` must collect the same names."""
    if isinstance(val, str | bytes) and len(val) > 60:
        return argname
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow tier, so that ``pytest -m "not slow"`` is the fast one (README)."""
    for item in items:
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
