"""Format 1 stays readable: a run traced by bdi-rl before step records (tests/data/trace-v1)
and the same run traced today, in format 2, give the same answers in every reader: the
events (read_trace), the index (episodes, positions, the mind at any position, a step's
span), ``inspect``, ``export``, the viewer's API and the plot's curves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import zstandard
from aiohttp.test_utils import TestClient, TestServer

from bdi_rl.readers.export import rows
from bdi_rl.readers.inspector import inspect_mind
from bdi_rl.readers.plots import learner_curves
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.viewer import create_app
from bdi_rl.store import TRACE_FILE
from bdi_rl.trace.kinds import SCHEMA, SCHEMA_V1, STEPS
from bdi_rl.trace.reading import check_trace, read_trace
from tests.conftest import AGENTS, run_cli

FIXTURES = Path(__file__).parent / "data" / "trace-v1"
#: Each fixture's run and the command that made it (tests/data/trace-v1/README.md).
RUNS = {
    "FrozenLake-v1__frozenlake-4x4__1__1795458472": ("frozenlake-4x4.toml", "--episodes", "60"),
    "Taxi-v4__taxi__1__1795458474": ("taxi.toml", "--episodes", "15", "--trace", "step"),
}
LEARNER = "learner@localhost"
#: Fields that name the run or the file the agent ran, or count lines rather than events.
_PLACE = {"asl", "emitted", "path"}


def v1_run(name: str, runs: Path) -> Path:
    """The fixture as a run directory (its trace decompressed)."""
    run_dir = runs / name
    shutil.copytree(FIXTURES / name, run_dir, ignore=shutil.ignore_patterns("*.zst"))
    compressed = (FIXTURES / name / "trace.jsonl.zst").read_bytes()
    (run_dir / TRACE_FILE).write_bytes(zstandard.ZstdDecompressor().decompress(compressed))
    return run_dir


@pytest.fixture(scope="module", params=sorted(RUNS))
def pair(request, tmp_path_factory) -> tuple[Path, Path]:
    """(the format-1 run, the same run made now)."""
    base = tmp_path_factory.mktemp("v1-v2")
    old = v1_run(request.param, base / "v1")
    spec, *args = RUNS[request.param]
    result = run_cli("run", str(AGENTS / spec), *args, "--runs", str(base / "v2"), "--no-progress")
    assert result.returncode == 0, result.stderr
    (new,) = (base / "v2").iterdir()
    return old, new


#: Data fields the writers gained after 7dd50c0 (issue 18): an episode's ``success`` and an
#: evaluation's ``after_episodes``; the index derives both for these older traces, and the
#: index test below holds the derived values to the written ones. A learner's ``world`` (its
#: map, in ``agent.start``): the world view rebuilds it from the spec (tests/test_world.py). A
#: learner's ``training`` span in ``agent.stop``: its times differ from run to run.
_ADDED_SINCE = {"success", "after_episodes", "seconds", "world", "training"}


def _same_event(e: dict) -> tuple:
    data = e["data"]
    if isinstance(data, dict):  # fields written since 7dd50c0 are derived by readers for older traces
        data = {k: v for k, v in data.items() if k not in _PLACE and k not in _ADDED_SINCE}
    return e["agent"].split("@")[0], e["kind"], e["episode"], e["step"], data


def test_the_two_runs_are_in_the_two_formats_and_hold_the_same_events(pair):
    old, new = pair
    assert b'"schema":"' + SCHEMA_V1.encode() in (old / TRACE_FILE).read_bytes()[:200]
    lines = (new / TRACE_FILE).read_bytes().splitlines()
    assert all(line.startswith(b'{"schema":"' + SCHEMA.encode()) for line in lines)
    assert sum(b'"kind":"' + STEPS.encode() in line for line in lines) > 5
    a = [_same_event(e) for e in read_trace(old / TRACE_FILE) if e["agent"] == LEARNER]
    b = [_same_event(e) for e in read_trace(new / TRACE_FILE) if e["agent"] == LEARNER]
    assert len(a) == len(b) > 1000 and a == b
    assert (new / TRACE_FILE).stat().st_size * 3 < (old / TRACE_FILE).stat().st_size  # Taxi: ~3.8x, FrozenLake ~9x
    for run_dir in pair:  # both can be continued (--resume, telemetry restarts)
        assert check_trace(run_dir / TRACE_FILE, run_dir.name).torn is None


def _index(run_dir: Path) -> RunIndex:
    index = RunIndex(run_dir)
    index.refresh()
    return index


def test_the_index_and_the_mind_at_every_position_agree(pair):
    old, new = (_index(run_dir) for run_dir in pair)
    x, y = old.agents[LEARNER], new.agents[LEARNER]
    assert x.events == y.events and list(x.rl_positions) == list(y.rl_positions)
    strip = [{k: v for k, v in e.items() if k != "ts"} for e in x.episodes]
    assert strip == [{k: v for k, v in e.items() if k != "ts"} for e in y.episodes]
    assert [{k: v for k, v in e.items() if k not in ("ts", "seconds")} for e in x.evals] == [
        {k: v for k, v in e.items() if k not in ("ts", "seconds")} for e in y.evals
    ]
    for position in [*range(0, x.events, 37), x.events - 1]:
        (a, ca), (b, cb) = old.mind_at(LEARNER, position), new.mind_at(LEARNER, position)
        assert (a.beliefs, a.intentions, a.rl) == (b.beliefs, b.intentions, b.rl), position
        assert _same_event(ca[0]) == _same_event(cb[0])
    last = x.episodes[-1]["episode"]
    for episode, step in ((0, 0), (1, 2), (last // 2, 1), (last, None)):
        assert old.span_of(LEARNER, episode, step) == new.span_of(LEARNER, episode, step)


def test_inspect_export_and_plot_give_the_same_answers(pair):
    old, new = pair
    for where in ({"event": 0}, {"event": 1234}, {"episode": 3, "step": 1}, {}):
        a = inspect_mind(old, "learner", where.get("event"), where.get("episode"), where.get("step"))
        b = inspect_mind(new, "learner", where.get("event"), where.get("episode"), where.get("step"))
        for view in (a, b):
            view["event"] = _same_event(view["event"])
            view["messages"] = len(view["messages"])
        assert a == b
    skip = {"run", "wall_time"}
    assert [{k: v for k, v in r.items() if k not in skip} for r in rows(old)] == [
        {k: v for k, v in r.items() if k not in skip} for r in rows(new)
    ]
    (a,), (b,) = learner_curves([old]), learner_curves([new])
    assert [list(map(float, a[k])) for k in ("returns", "success", "epsilon")] == [
        list(map(float, b[k])) for k in ("returns", "success", "epsilon")
    ]


async def test_the_viewer_opens_both(pair):
    for run_dir in pair:
        client = TestClient(TestServer(create_app(run_dir.parent)))
        await client.start_server()
        try:
            body = await (await client.get(f"/api/runs/{run_dir.name}")).json()
            assert body["agents"][LEARNER]["episodes"] and body["indexing"] is None
            mind = await (await client.get(f"/api/runs/{run_dir.name}/agents/learner/mind?episode=2&step=1")).json()
            assert mind["episode"] == 2 and mind["step"] == 1 and mind["rl"] is not None and mind["beliefs"]
        finally:
            await client.close()
