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

from bdi_rl.trace.batch import decode_batch, encode_batch
from bdi_rl.trace.errors import TraceFileError
from bdi_rl.trace.kinds import SCHEMA, SCHEMA_V1, TraceLevel
from bdi_rl.trace.reading import check_trace, read_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.server import free_port
from bdi_rl.xmpp.telemetry import TraceLog
from tests import tracelines
from tests.conftest import MINIMAL_SPEC, run_cli
from tests.tracelines import end_data

RUN = "FrozenLake-v1__tiny__3__1"


def _line(seq: object, agent: str = "a@x", run: str = RUN, **fields: object) -> bytes:
    """An episode-level line (episode.end, as telemetry checks it) with ``fields`` replaced."""
    s = seq if isinstance(seq, int) else 0
    event = {
        "schema": SCHEMA,
        "run": run,
        "agent": agent,
        "seq": seq,
        "ts": 1.5,
        "kind": "episode.end",
        "episode": s,
        "step": 0,
        "data": end_data(s),
        **fields,
    }
    return orjson.dumps(event) + b"\n"


def _agent_lines(agent: str, script: str) -> list[bytes]:
    """An agent's first lines as its tracer writes them: per letter of ``script``, a step
    record of two env steps ("s", closed as the shipper closes it) or an episode.end ("e")."""
    tracer = Tracer(RUN, agent, TraceLevel.STEP)
    for i, what in enumerate(script):
        if what == "s":
            tracelines.record(tracer, 2 * i, 2)
            tracer.flush_record()
        else:
            tracer.emit("episode.end", end_data(i))
    return [tracelines.line(event) for event in tracer.pending]


A = _agent_lines("a@x", "sess")  # seq 0-3: steps, episode.end, steps, steps
B = _agent_lines("b@x", "se")


def _steps(seq: int, **fields: object) -> bytes:
    """A real step record of a@x renumbered ``seq``, with ``fields`` replaced."""
    return tracelines.line(orjson.loads(A[0]), seq=seq, **fields)


def _trace(tmp_path: Path, *lines: bytes) -> Path:
    path = tmp_path / RUN / "trace.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return path


GOOD = [A[0], B[0], A[1], A[2], B[1]]  # a@x's seq 0-2, b@x's 0-1


@pytest.mark.parametrize(
    "tail, why",
    [
        (A[3][:40], "no newline"),  # killed mid-write
        (A[3][:300], "no newline"),  # inside a step record
        (A[3][:-1], "no newline"),  # the whole record but its newline
        (_line(3)[:-1], "no newline"),  # an episode-level line
        (A[3][:300] + b"\n", "not JSON"),
        (b'{"schema": "bdi-rl.tr\n', "not JSON"),
        (b"\x00" * 300 + b"\n", "not JSON"),  # a block of zeros after a crash
        (b"\n", "not JSON"),
    ],
)
def test_a_torn_last_line_is_cut_and_nothing_else(tmp_path, tail, why, caplog):
    path = _trace(tmp_path, *GOOD, tail)
    log = TraceLog(path, RUN)
    log.close()
    assert path.read_bytes() == b"".join(GOOD)
    assert log.recovered == 5 and log.next_seq == {"a@x": 3, "b@x": 2}
    assert why in caplog.text and "torn" in caplog.text


def _record(change) -> bytes:
    """a@x's seq-2 step record (ops belief.add, rl.step, belief.add, rl.step) with ``change``
    applied to its data."""
    event = orjson.loads(A[2])
    change(event["data"])
    return tracelines.line(event)


NOT_EVENTS = [
    (b"{oops\n", "not JSON"),  # damaged
    (_line(2)[:30] + b"\n", "not JSON"),  # torn, then more lines were written after it
    (A[2][:200] + b"\n", "not JSON"),  # a torn step record, then more lines
    (A[2].replace(b'"ops":[0,6', b'"ops":[0,\x006'), "not JSON"),  # a damaged byte
    (b"\n", "not JSON"),  # a blank line
    (b'{"a": 1}\n', "not a trace event: Object contains unknown field `a`"),
    (b"[1,2]\n", "not a trace event: Expected `object`, got `array`"),
    (b'"x"\n', "not a trace event: Expected `object`, got `str`"),
    (b"7\n", "not a trace event"),
    (orjson.dumps({"seq": 2}) + b"\n", "not a trace event: Object missing required field"),
    (_line("2"), "Expected `int`, got `str` - at `$.seq`"),
    (_line(2, ts=None), "at `$.ts`"),
    (_line(2, extra=1), "unknown field `extra`"),
    (_line(2, schema="bdi-rl.trace/0"), "event schema is not bdi-rl.trace/2 (or bdi-rl.trace/1)"),
    (_line(2, kind="belief.mangled"), "unknown event kind 'belief.mangled'"),
    (_line(2, data=[1]), "data must be an object"),
    (_line(2, kind="rl.step", data=tracelines.rl_data(2)), "a bdi-rl.trace/2 line cannot be of kind 'rl.step'"),
    (tracelines.line(orjson.loads(A[2]), schema=SCHEMA_V1), "a bdi-rl.trace/1 line cannot be of kind 'steps'"),
    (_record(lambda d: d["refs"].pop()), "steps data: 3 refs for 4 ops"),
    (_record(lambda d: d["ops"].__setitem__(0, 42)), "steps data: unknown op 42"),
    (
        _record(lambda d: d["refs"].__setitem__(0, 9)),
        "steps data: a belief.add refers to 9, which the record does not hold",
    ),
    (
        _record(lambda d: d["defs"][0].pop("source")),
        "steps data: a belief.add definition: Object missing required field `source`",
    ),
    (_record(lambda d: d["rl"]["r"].pop()), "steps data: rl columns of different lengths"),
    (_record(lambda d: d.__setitem__("at", [0, 0, 4, 2, 0, 4, 1, 0, 5])), "steps data: at must be"),
    # its definitions numbered as if a record had come between (one was lost): refs shifted too
    (
        _record(
            lambda d: d.update(
                def0=d["def0"] + 3,
                refs=[r + 3 if r >= d["def0"] and op != 6 else r for op, r in zip(d["ops"], d["refs"], strict=False)],
            )
        ),
        "steps data: def0 5 where a@x has made 2 definitions",
    ),
    (
        _line(2, run="FrozenLake-v1__other__3__9"),
        "an event of run 'FrozenLake-v1__other__3__9', not of 'FrozenLake-v1__tiny__3__1'",
    ),
    (A[1], "seq 1 of a@x where the trace needs 2"),  # a line written twice
    (A[0], "seq 0 of a@x where the trace needs 2"),  # a step record written twice
    (_line(5), "seq 5 of a@x where the trace needs 2"),  # lines lost
    (_steps(5), "seq 5 of a@x where the trace needs 2"),
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


def test_a_huge_last_line_is_torn_and_read_in_bounded_memory(tmp_path):
    """A crash's tail of NUL bytes (here 256 MB, sparse) is a torn last line, cut by a resume;
    the check never holds more than a piece of it. In the middle, it is damage."""
    import tracemalloc

    path = _trace(tmp_path, *GOOD)
    os.truncate(path, path.stat().st_size + (256 << 20))
    tracemalloc.start()
    scan = check_trace(path, RUN)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (scan.events, scan.good_end) == (5, len(b"".join(GOOD))) and scan.torn == "no newline at its end"
    assert peak < 24 << 20
    with open(path, "ab") as f:
        f.write(b"\n" + A[3])
    with pytest.raises(TraceFileError, match=rf"^{path}:6: a line of {(256 << 20) + 1} bytes, longer than any"):
        check_trace(path, RUN)


def test_check_trace_reads_a_whole_trace(tmp_path):
    path = _trace(tmp_path, *GOOD)
    scan = check_trace(path, RUN, keep={"steps"})
    assert (scan.events, scan.good_end, scan.torn) == (5, len(b"".join(GOOD)), None)
    assert scan.kept == [line[:-1] for line in (A[0], B[0], A[2])]
    assert [(e["agent"], e["kind"]) for e in read_trace(path)] == [
        *[("a@x", "belief.add"), ("a@x", "rl.step")] * 2,
        *[("b@x", "belief.add"), ("b@x", "rl.step")] * 2,
        ("a@x", "episode.end"),
        *[("a@x", "belief.add"), ("a@x", "rl.step")] * 2,
        ("b@x", "episode.end"),
    ]
    assert check_trace(_trace(tmp_path / "empty")).events == 0


def test_a_format_1_trace_is_continued_in_format_2(tmp_path):
    """An old trace (``bdi-rl.trace/1``) is resumed: its lines pass, format-2 lines follow them."""
    old = [_line(seq, schema=SCHEMA_V1, kind="rl.step", data=tracelines.rl_data(seq), step=seq) for seq in range(3)]
    path = _trace(tmp_path, *old, _line(3, schema=SCHEMA_V1), b'{"schema":"bdi-rl.trace/1","ru')
    log = TraceLog(path, RUN)
    assert log.recovered == 4 and log.next_seq == {"a@x": 4}
    more = [orjson.loads(_steps(4)), orjson.loads(_line(5))]
    assert log.accept(decode_batch(encode_batch(RUN, "a@x", more))) == (6, False)
    log.close()
    assert check_trace(path, RUN).events == 6
    assert [e["kind"] for e in read_trace(path)] == [
        "rl.step",
        "rl.step",
        "rl.step",
        "episode.end",
        "belief.add",
        "rl.step",
        "belief.add",
        "rl.step",
        "episode.end",
    ]


# -- through the entry points ----------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A real tiny run (two learners, step-level trace) made by ``bdi-rl run``."""
    base = tmp_path_factory.mktemp("recovery")
    (base / "spec.toml").write_text(MINIMAL_SPEC.replace('name = "learner"', 'name = "learner"\ncount = 2'))
    result = run_cli(
        "run",
        str(base / "spec.toml"),
        "--runs",
        str(base / "runs"),
        "--no-progress",
        "--trace",
        "step",
        "--episodes",
        "5",
    )
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


def _steps_line(trace: Path, where: float) -> int:
    """The index of a step record about ``where`` (0 to 1) of the way into ``trace``."""
    lines = trace.read_bytes().splitlines()
    records = [i for i, line in enumerate(lines) if b'"kind":"steps"' in line and 10 < i < len(lines) - 10]
    assert len(records) > 3
    return records[round(where * (len(records) - 1))]


def _snapshot(run_dir: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(run_dir)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(run_dir.rglob("*"))}


@pytest.mark.parametrize(
    "bad",
    [
        b'{"schema": "bdi-rl.trace/1", "run": "FrozenL\x00\x00\x00 damaged\n',
        b'{"a": 1}\n',
    ],
)
def test_resume_refuses_a_damaged_middle_line_and_keeps_every_line(finished_run, tmp_path, bad):
    run_dir = _killed_copy(finished_run, tmp_path)
    trace = run_dir / "trace.jsonl"
    middle = _steps_line(trace, 0.5)
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
    with open(trace, "ab") as f:  # a process killed while writing a step record
        f.write(whole.splitlines()[_steps_line(trace, 1)][:300])
    result = run_cli("run", "--resume", str(run_dir), "--no-progress", timeout=180)
    assert result.returncode == 0, result.stderr
    assert "ended in a torn line (no newline at its end); cut it off (300 bytes)" in result.stderr
    after = trace.read_bytes()
    assert after.startswith(whole) and b'"kind":"run.resume"' in after[len(whole) :]
    check_trace(trace, run_dir.name)  # whole and gapless


def test_telemetry_run_refuses_a_damaged_middle_line_before_connecting(finished_run, tmp_path):
    """``telemetry --run`` with a line of another run in the middle: one line, exit 2, at once.
    Nothing listens on the port given: a process that tried to connect would wait for it."""
    run_dir = _killed_copy(finished_run, tmp_path)
    trace = run_dir / "trace.jsonl"
    middle = _steps_line(trace, 0.33)
    other = trace.read_bytes().splitlines()[middle].replace(run_dir.name.encode(), b"another-run")
    lines = _damage(trace, middle, other + b"\n")
    before = _snapshot(run_dir)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "telemetry",
            str(run_dir / "spec.toml"),
            "--run",
            str(run_dir),
            "--xmpp",
            f"localhost:{free_port()}",
            "--runs",
            str(tmp_path / "runs"),
        ],
        env={**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"bdi-rl: error: --run: {trace}:{middle + 1}: an event of run 'another-run', not of {run_dir.name!r}\n"
    )
    assert trace.read_bytes().splitlines(keepends=True) == lines
    assert _snapshot(run_dir) == before
