"""The run index: read in pieces (a live run, lines torn mid-write, damaged lines in between,
read around) it holds exactly what one line-by-line pass over the finished file gives."""

from __future__ import annotations

import shutil

from bdi_rl.readers.runindex import RunIndex
from tests.conftest import run_named as _run_named


def _line_by_line(run_dir, read_around: bool = False) -> RunIndex:
    index = RunIndex(run_dir, read_around)
    offset = 0
    for line in (run_dir / "trace.jsonl").read_bytes().splitlines(keepends=True):
        index._index_line(line, offset)
        offset += len(line)
    return index


def _same(a: RunIndex, b: RunIndex) -> None:
    assert sorted(a.agents) == sorted(b.agents) and a.run_events == b.run_events
    assert (a.lines, a.damage, a.damaged_lines) == (b.lines, b.damage, b.damaged_lines)
    for name in a.agents:
        x, y = a.agents[name], b.agents[name]
        assert list(x.offsets) == list(y.offsets) and list(x.firsts) == list(y.firsts) and x.count == y.count
        assert {k: list(v) for k, v in x.latest.items()} == {k: list(v) for k, v in y.latest.items()}
        assert (x.lives, x.record_life, list(x.snapshot_at)) == (y.lives, y.record_life, list(y.snapshot_at))
        assert (x.episodes, x.evals, x.messages, x.stopped, x.action_names) == (
            y.episodes,
            y.evals,
            y.messages,
            y.stopped,
            y.action_names,
        )
        assert [_snapshot(s) for s in x.snapshots] == [_snapshot(s) for s in y.snapshots]


def _snapshot(snapshot):
    """A folded mind, or the line of the record whose keyframe it is (read when needed)."""
    return snapshot if isinstance(snapshot, int) else (snapshot.beliefs, snapshot.intentions)


def test_refresh_equals_line_by_line_on_a_team_run(runs):
    run_dir = _run_named(runs, "team")
    index = RunIndex(run_dir)
    index.refresh()
    assert len(index.agents) == 4 and index.run_events  # coordinator + 3 learners; telemetry's own
    assert sum(len(a.rl_positions) for a in index.agents.values()) > 1000  # counted, not expanded
    _same(index, _line_by_line(run_dir))


def test_refresh_in_pieces_with_torn_and_bad_lines(runs, tmp_path):
    source = _run_named(runs, "tiny")
    run_dir = tmp_path / source.name
    shutil.copytree(source, run_dir)
    lines = (run_dir / "trace.jsonl").read_bytes().splitlines(keepends=True)
    assert sum(b'"kind":"steps"' in line for line in lines) > 10
    first = len(lines) // 3 + 1  # the damaged lines' numbers, from 1
    lines.insert(first - 1, b"not json at all\n")
    second = len(lines) // 2 + 1
    lines.insert(second - 1, b'{"schema":"bdi-rl.trace/1","agent":\n')
    whole = b"".join(lines)
    trace = run_dir / "trace.jsonl"
    growing = RunIndex(run_dir, read_around=True)
    for cut in (len(whole) // 4 + 7, len(whole) // 2 + 3, len(whole)):  # torn mid-line each time
        trace.write_bytes(whole[:cut])
        growing.refresh()
    assert [(d.line, d.why.split(":")[0]) for d in growing.damage] == [(first, "not JSON"), (second, "not JSON")]
    assert growing.damaged == {"line": first, "why": growing.damage[0].why, "lines": 2, "unread_from": None}
    _same(growing, _line_by_line(run_dir, read_around=True))
    refusing = RunIndex(run_dir)  # the commands' default: nothing after the first damaged line
    refusing.refresh()
    assert refusing.stopped_at == first and refusing.lines == first and len(refusing.damage) == 1
