"""Continuing a trace (``run --resume``, ``telemetry --run``) never deletes a good event line:
only a torn *last* line is cut; any other line that is not the next event of the run is an
error naming the file and line, and nothing is changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from bdi_rl.xmpp.telemetry import TraceLog
from bdi_rl.trace.events import SCHEMA, TraceFileError, check_trace
from bdi_rl.xmpp.server import free_port
from tests.conftest import MINIMAL_SPEC, run_cli

RUN = "FrozenLake-v1__tiny__3__1"


def _line(seq: object, agent: str = "a@x", run: str = RUN, **fields: object) -> bytes:
    s = seq if isinstance(seq, int) else 0  # an rl.step's data as telemetry checks it (RlStepData)
    data = {"s": s, "a": 0, "r": 0.0, "s2": s + 1, "done": False, "q_before": 0.0, "q_after": 0.0, "epsilon": 1.0}
    event = {"schema": SCHEMA, "run": run, "agent": agent, "seq": seq, "ts": 1.5,
             "kind": "rl.step", "episode": 0, "step": seq, "data": data, **fields}
    return orjson.dumps(event) + b"\n"


def _trace(tmp_path: Path, *lines: bytes) -> Path:
    path = tmp_path / RUN / "trace.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return path


GOOD = [_line(0), _line(0, agent="b@x"), _line(1), _line(2), _line(1, agent="b@x")]


@pytest.mark.parametrize("tail, why", [
    (_line(3)[:40], "no newline"),  # killed mid-write
    (_line(3)[:-1], "no newline"),  # the whole event but its newline
    (b'{"schema": "bdi-rl.tr\n', "not JSON"),
    (b"\x00" * 300 + b"\n", "not JSON"),  # a block of zeros after a crash
    (b"\n", "not JSON"),
])
def test_a_torn_last_line_is_cut_and_nothing_else(tmp_path, tail, why, caplog):
    path = _trace(tmp_path, *GOOD, tail)
    log = TraceLog(path, RUN)
    log.close()
    assert path.read_bytes() == b"".join(GOOD)
    assert log.recovered == 5 and log.next_seq == {"a@x": 3, "b@x": 2}
    assert why in caplog.text and "torn" in caplog.text


NOT_EVENTS = [
    (b"{oops\n", "not JSON"),  # damaged
    (_line(2)[:30] + b"\n", "not JSON"),  # torn, then more lines were written after it
    (b"\n", "not JSON"),  # a blank line
    (b'{"a": 1}\n', "not a trace event: Object contains unknown field `a`"),
    (b"[1,2]\n", "not a trace event: Expected `object`, got `array`"),
    (b'"x"\n', "not a trace event: Expected `object`, got `str`"),
    (b"7\n", "not a trace event"),
    (orjson.dumps({"seq": 2}) + b"\n", "not a trace event: Object missing required field"),
    (_line("2"), "Expected `int`, got `str` - at `$.seq`"),
    (_line(2, ts=None), "at `$.ts`"),
    (_line(2, extra=1), "unknown field `extra`"),
    (_line(2, schema="bdi-rl.trace/0"), "event schema is not bdi-rl.trace/1"),
    (_line(2, kind="belief.mangled"), "unknown event kind 'belief.mangled'"),
    (_line(2, data=[1]), "data must be an object"),
    (_line(2, run="FrozenLake-v1__other__3__9"),
     "an event of run 'FrozenLake-v1__other__3__9', not of 'FrozenLake-v1__tiny__3__1'"),
    (_line(1), "seq 1 of a@x where the trace needs 2"),  # a line written twice
    (_line(5), "seq 5 of a@x where the trace needs 2"),  # lines lost
    (_line(1, agent="c@x"), "seq 1 of c@x where the trace needs 0"),
]


@pytest.mark.parametrize("bad, reason", NOT_EVENTS)
def test_a_bad_line_in_the_middle_is_refused_and_nothing_changes(tmp_path, bad, reason):
    path = _trace(tmp_path, *GOOD[:3], bad, *GOOD[3:])
    before = path.read_bytes()
    with pytest.raises(TraceFileError) as caught:
        TraceLog(path, RUN)
    assert str(caught.value).startswith(f"{path}:4: ") and reason in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert path.read_bytes() == before


@pytest.mark.parametrize("bad, reason", [case for case in NOT_EVENTS if case[1] != "not JSON"])
def test_a_last_line_that_is_json_but_not_the_next_event_is_refused_not_cut(tmp_path, bad, reason):
    """Whole JSON is no torn write: it is damage (or someone's data), never cut."""
    path = _trace(tmp_path, *GOOD[:3], bad)
    before = path.read_bytes()
    with pytest.raises(TraceFileError) as caught:
        TraceLog(path, RUN)
    assert str(caught.value).startswith(f"{path}:4: ") and reason in str(caught.value)
    assert path.read_bytes() == before


def test_check_trace_reads_a_whole_trace(tmp_path):
    path = _trace(tmp_path, *GOOD)
    scan = check_trace(path, RUN, keep={"rl.step"})
    assert (scan.events, scan.good_end, scan.torn) == (5, len(b"".join(GOOD)), None)
    assert scan.kept == [line[:-1] for line in GOOD]
    assert check_trace(_trace(tmp_path / "empty")).events == 0


# -- through the entry points ----------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A real tiny run (two learners, step-level trace) made by ``bdi-rl run``."""
    base = tmp_path_factory.mktemp("recovery")
    (base / "spec.toml").write_text(MINIMAL_SPEC.replace('name = "learner"', 'name = "learner"\ncount = 2'))
    result = run_cli("run", str(base / "spec.toml"), "--runs", str(base / "runs"), "--no-progress",
                     "--trace", "step", "--episodes", "5")
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def _killed_copy(finished_run: Path, tmp_path: Path) -> Path:
    """The run as a kill would have left it: no summary yet."""
    run_dir = tmp_path / "runs" / finished_run.name
    shutil.copytree(finished_run, run_dir)
    (run_dir / "summary.json").unlink()
    return run_dir


def _damage(trace: Path, at: int, bad: bytes) -> list[bytes]:
    """Replace line ``at`` (0-based) by ``bad``; returns the lines as they now are."""
    lines = trace.read_bytes().splitlines(keepends=True)
    assert 10 < at < len(lines) - 10
    lines[at] = bad
    trace.write_bytes(b"".join(lines))
    return lines


def _snapshot(run_dir: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(run_dir)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(run_dir.rglob("*"))}


@pytest.mark.parametrize("bad", [
    b'{"schema": "bdi-rl.trace/1", "run": "FrozenL\x00\x00\x00 damaged\n',
    b'{"a": 1}\n',
])
def test_resume_refuses_a_damaged_middle_line_and_keeps_every_line(finished_run, tmp_path, bad):
    run_dir = _killed_copy(finished_run, tmp_path)
    trace = run_dir / "trace.jsonl"
    middle = len(trace.read_bytes().splitlines()) // 2
    lines = _damage(trace, middle, bad)
    before = _snapshot(run_dir)
    result = run_cli("run", "--resume", str(run_dir), "--no-progress", timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"bdi-rl: error: --resume: {trace}:{middle + 1}: ")
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
    assert trace.read_bytes().splitlines(keepends=True) == lines  # every line, byte for byte
    assert _snapshot(run_dir) == before  # nothing created or changed


def test_resume_cuts_a_torn_last_line_and_goes_on(finished_run, tmp_path):
    run_dir = _killed_copy(finished_run, tmp_path)
    trace = run_dir / "trace.jsonl"
    whole = trace.read_bytes()
    with open(trace, "ab") as f:
        f.write(whole.splitlines()[-1][:50])  # a process killed mid-write
    result = run_cli("run", "--resume", str(run_dir), "--no-progress", timeout=180)
    assert result.returncode == 0, result.stderr
    assert "ended in a torn line (no newline at its end); cut it off (50 bytes)" in result.stderr
    after = trace.read_bytes()
    assert after.startswith(whole) and b'"kind":"run.resume"' in after[len(whole):]
    check_trace(trace, run_dir.name)  # whole and gapless


def test_telemetry_run_refuses_a_damaged_middle_line_before_connecting(finished_run, tmp_path):
    """``telemetry --run`` with a line of another run in the middle: one line, exit 2, at once.
    Nothing listens on the port given: a process that tried to connect would wait for it."""
    run_dir = _killed_copy(finished_run, tmp_path)
    trace = run_dir / "trace.jsonl"
    middle = len(trace.read_bytes().splitlines()) // 3
    other = trace.read_bytes().splitlines()[middle].replace(run_dir.name.encode(), b"another-run")
    lines = _damage(trace, middle, other + b"\n")
    before = _snapshot(run_dir)
    result = subprocess.run(
        [sys.executable, "-m", "bdi_rl", "telemetry", str(run_dir / "spec.toml"), "--run", str(run_dir),
         "--xmpp", f"localhost:{free_port()}", "--runs", str(tmp_path / "runs")],
        env={**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (f"bdi-rl: error: --run: {trace}:{middle + 1}: an event of run "
                             f"'another-run', not of {run_dir.name!r}\n")
    assert trace.read_bytes().splitlines(keepends=True) == lines
    assert _snapshot(run_dir) == before
