"""The one real run the readers' tests keep (slow): a team made by the CLI, read by the
readers, and held to the runs the fast tier writes itself (``runs``, tests/fakeruns.py): the
same files, the same event kinds with the same fields, the same spec and checkpoint
metadata. A change to what runs write, or to what readers expect, fails here even when the
written runs still satisfy the fast tier."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path
from typing import Any

import orjson

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.viewer import create_app
from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.store import SPEC_FILE, SUMMARY_FILE, TRACE_FILE
from bdi_rl.trace.reading import check_trace, read_trace
from tests.conftest import beliefs_after, run_cli, run_named

#: Fields written only when there is something to say (a clipped message, replayed steps).
SOMETIMES = {"content_chars", "replayed_steps"}


def _fields(run_dir: Path) -> dict[str, set[str]]:
    """Each event kind of the trace and every field its ``data`` had."""
    fields: dict[str, set[str]] = {}
    for event in read_trace(run_dir / TRACE_FILE):
        fields.setdefault(event["kind"], set()).update(event["data"])
    return {kind: keys - SOMETIMES for kind, keys in fields.items()}


def _keys(value: Any) -> Any:
    """The shape of a JSON value: its keys, all the way down (values dropped)."""
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items() if k not in SOMETIMES}
    return type(value).__name__


def test_the_written_runs_are_what_a_real_run_writes(cli_run, runs):
    written = run_named(runs, "team")
    for run_dir in (cli_run, written):  # every line an event of its run, each agent's seqs gapless
        assert check_trace(run_dir / TRACE_FILE, run_dir.name).torn is None
    files = [
        {p.relative_to(d) for p in d.rglob("*") if p.is_file() and p.parts[len(d.parts)] != "xmpp"}
        for d in (cli_run, written)
    ]
    assert files[0] == files[1]
    assert _fields(written) == _fields(cli_run)
    assert tomllib.loads((written / SPEC_FILE).read_text()) == tomllib.loads((cli_run / SPEC_FILE).read_text())
    summaries = [orjson.loads((d / SUMMARY_FILE).read_bytes()) for d in (cli_run, written)]
    assert _keys(summaries[0]) == _keys(summaries[1])
    for path in sorted(p for p in files[0] if p.suffix == ".npz"):
        real, mine = load_checkpoint(cli_run / path), load_checkpoint(written / path)
        assert _keys(real.meta) == _keys(mine.meta) and real.q.shape == mine.q.shape


async def test_the_viewer_reads_a_real_run(cli_run, aiohttp_client):
    index = RunIndex(cli_run)
    index.refresh()
    assert index.damaged is None and len(index.agents) == 4  # every line checked; coordinator + 3 learners
    client = await aiohttp_client(create_app(cli_run.parent))
    (row,) = (await (await client.get("/api/runs")).json())["runs"]
    assert row["run"] == cli_run.name and not row["live"]
    learner = "vlearner-1@localhost"
    data = await (await client.get(f"/api/runs/{cli_run.name}")).json()
    assert len(data["agents"][learner]["episodes"]) == 60
    events = [e for e in read_trace(cli_run / TRACE_FILE) if e["agent"] == learner]
    for position in (0, len(events) // 2, len(events) - 1):
        mind = await (await client.get(f"/api/runs/{cli_run.name}/agents/{learner}/mind?pos={position}")).json()
        assert mind["event"] == {**events[position], "position": position}
        assert {b["belief"]: b["sources"] for b in mind["beliefs"]} == beliefs_after(events, position)
    talk = await (await client.get(f"/api/runs/{cli_run.name}/messages?hide=experience")).json()
    assert {"ready", "train"} <= {m["content"] for m in talk["messages"]}
    grid = await (await client.get(f"/api/runs/{cli_run.name}/agents/vlearner-1/qtable")).json()
    assert (grid["rows"], grid["cols"]) == (4, 4)


def test_inspect_and_export_read_a_real_run(cli_run, tmp_path):
    """As a user runs them: their own processes."""
    result = run_cli("inspect", str(cli_run), "--agent", "vlearner-1", "--event", "100")
    assert result.returncode == 0, result.stderr
    assert "event 100 of" in result.stdout
    out = tmp_path / "team.csv"
    result = run_cli("export", str(cli_run), "--csv", str(out))
    assert result.returncode == 0, result.stderr
    with open(out) as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "episode"]
    assert len(rows) == 3 * 60
