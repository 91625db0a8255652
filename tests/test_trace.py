"""The trace format: levels, gapless seqs, cumulative acks, batch round trip and validation."""

from __future__ import annotations

import base64

import orjson
import pytest
import zstandard

from bdi_rl.xmpp.telemetry import TraceLog
from bdi_rl.trace.batch import BATCH_SCHEMA, MAX_BATCH_EVENTS, MAX_BODY_CHARS, MAX_PAYLOAD_BYTES, decode_batch, encode_batch
from bdi_rl.trace.events import SCHEMA, TraceFormatError, TraceLevel
from bdi_rl.trace.tracer import Tracer


def _step(i: int = 0) -> dict:
    """An ``rl.step`` event's data (telemetry checks it: RlStepData), told apart by ``s``."""
    return {"s": i, "a": i % 4, "r": 0.0, "s2": i + 1, "done": False, "q_before": 0.5, "q_after": 0.25,
            "epsilon": 0.1, "q": [0.25, 0.5, 0.125, 0.0]}


def test_levels_filter_kinds():
    tracer = Tracer("run", "a@x", TraceLevel.EPISODE)
    tracer.emit("rl.step", {"s": 0})
    tracer.emit("belief.add", {"belief": "b"})
    tracer.emit("episode.end", {"return": 1.0})
    assert [e["kind"] for e in tracer.pending] == ["episode.end"]
    assert tracer.pending[0]["seq"] == 0  # filtered events take no seq: no gaps
    cycle = Tracer("run", "a@x", TraceLevel.CYCLE)
    for kind in ("cycle", "rl.step", "episode.end"):
        cycle.emit(kind, {})
    assert [e["seq"] for e in cycle.pending] == [0, 1, 2]


def test_events_follow_the_schema():
    tracer = Tracer("r1", "a@x", TraceLevel.STEP)
    tracer.episode, tracer.step = 4, 9
    tracer.emit("rl.step", {"s": 1, "a": 2})
    event = tracer.pending[0]
    assert event["schema"] == SCHEMA and event["run"] == "r1" and event["agent"] == "a@x"
    assert (event["episode"], event["step"], event["kind"]) == (4, 9, "rl.step")
    assert isinstance(event["ts"], float)


def test_ack_is_cumulative():
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    for i in range(10):
        tracer.emit("rl.step", _step(i))
    tracer.ack(4)
    assert [e["seq"] for e in tracer.pending][:1] == [4] and len(tracer.pending) == 6
    tracer.ack(2)  # a stale ack changes nothing
    assert len(tracer.pending) == 6 and not tracer.all_acked
    tracer.ack(10)
    assert tracer.all_acked and not tracer.pending


def _event(seq: int, **fields) -> dict:
    return {"schema": SCHEMA, "run": "r", "agent": "a", "seq": seq, "ts": 0.5, "kind": "rl.step",
            "episode": 0, "step": 0, "data": _step(seq), **fields}


@pytest.mark.parametrize("compress", [False, True])
def test_batches_are_bounded_and_round_trip(compress):
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    for i in range(5000):
        tracer.emit("belief.add", {"belief": f"b{i}({'x' * 600})", "source": "self"})
    count, body = tracer.next_batch(compress=compress)
    assert 0 < count < MAX_BATCH_EVENTS and len(body) <= MAX_BODY_CHARS  # halved to fit
    batch = decode_batch(body)
    events = list(tracer.pending)[:count]
    assert (batch.run, batch.agent, batch.first) == ("r", "a@x", 0) and batch.events == events
    assert [orjson.loads(line) for line in batch.lines] == events
    later_count, later = tracer.next_batch(start=count, compress=compress)
    assert decode_batch(later).first == count


def test_compressed_batches_are_several_times_smaller():
    tracer = Tracer("FrozenLake-v1__x__1__1", "learner-1@localhost", TraceLevel.STEP)
    for i in range(MAX_BATCH_EVENTS):
        tracer.emit("rl.step", _step(i % 64))
    _, plain = tracer.next_batch()
    _, packed = tracer.next_batch(compress=True)
    assert len(packed) * 4 < len(plain)
    assert decode_batch(packed).lines == decode_batch(plain).lines


def _packed(payload: bytes) -> str:
    return base64.b64encode(zstandard.ZstdCompressor().compress(payload)).decode()


def _header(**fields) -> bytes:
    return orjson.dumps({"schema": BATCH_SCHEMA, "run": "r", "agent": "a", "first": 0, "count": 1,
                         **fields}) + b"\n"


@pytest.mark.parametrize(
    "body, reason",
    [
        ("{not json", "header is not JSON"),
        ("[]", "schema"),
        (_header(schema="bdi-rl.trace-batch/1").decode(), "schema"),
        (_header(run=7).decode(), "string 'run'"),
        (_header(count=0).decode(), "'count'"),
        (_header(first=-1).decode(), "'first'"),
        ((_header(count=2) + orjson.dumps(_event(0)) + b"\n").decode(), "1 lines, its header says 2"),
        ((_header() + orjson.dumps(_event(0))).decode(), "lines"),  # no final newline
        ((_header() + b"{oops\n").decode(), "seq 0: JSON is malformed"),
        ((_header() + orjson.dumps(_event(0)) + b"," + orjson.dumps(_event(1)) + b"\n").decode(),
         "trailing characters"),  # two events on one line
        ((_header() + orjson.dumps({"seq": 0}) + b"\n").decode(), "missing required field"),
        ((_header() + orjson.dumps(_event(0, extra=1)) + b"\n").decode(), "unknown field `extra`"),
        ((_header() + orjson.dumps({**_event(0), "seq": True}) + b"\n").decode(), "Expected `int`"),
        ((_header() + orjson.dumps(_event(0, schema="other")) + b"\n").decode(), "schema"),
        ("\ud800", "not UTF-8"),
        (_packed(_header() + orjson.dumps(_event(0, data={"k": "X"})).replace(b"X", b"\xff") + b"\n"),
         "not UTF-8"),
        ((_header() + orjson.dumps(_event(0, kind="bogus")) + b"\n").decode(), "kind"),
        ((_header() + orjson.dumps(_event(0, data=[])) + b"\n").decode(), "data must be an object"),
        ((_header() + orjson.dumps({k: v for k, v in _event(0).items() if k != "step"} | {"step": 0})
          + b"\n").decode(), "last field"),
        ((_header() + b'{"schema":' + b"[" * 100 + b"\n").decode(), "seq 0"),
        ((_header() + orjson.dumps(_event(1)) + b"\n").decode(), "seq 1 where the batch needs 0"),
        ((_header() + orjson.dumps(_event(0, agent="b")) + b"\n").decode(), "another agent"),
        ((_header() + orjson.dumps(_event(-1)) + b"\n").decode(), "seq -1 where the batch needs 0"),
        (" " * (MAX_BODY_CHARS + 1), "exceeds"),
        ("KLUv/" + "!" * 20, "zstd"),  # looks compressed, is not base64
        ("KLUv/\x80DaFQQA0sgbHIAlag==", "zstd"),  # non-ASCII in base64: found by tests/test_fuzz.py
        (base64.b64encode(b"\x28\xb5\x2f\xfd" + b"garbage").decode(), "zstd"),
        (_packed(_header() + b" " * (MAX_PAYLOAD_BYTES + 1)), "inflates to"),  # a zip bomb
    ],
)
def test_malformed_batches_are_refused(body, reason):
    with pytest.raises(TraceFormatError, match=reason):
        decode_batch(body)


def test_trace_log_appends_lines_as_received_once(tmp_path):
    log = TraceLog(tmp_path / "trace.jsonl")
    events = [_event(i) for i in range(6)]
    assert log.accept(decode_batch(encode_batch("r", "a", events[:4]))) == (4, False)
    assert log.accept(decode_batch(encode_batch("r", "a", events[2:6], compress=True))) == (6, False)
    assert log.accept(decode_batch(encode_batch("r", "a", events[:2]))) == (6, False)  # a replay
    assert log.accept(decode_batch(encode_batch("r", "a", [_event(9)]))) == (6, True)  # a gap
    log.close()
    written = (tmp_path / "trace.jsonl").read_bytes()
    assert written == b"".join(orjson.dumps(e) + b"\n" for e in events)
    assert (log.written, log.duplicates) == (6, 4)


def test_ack_counts_what_left_the_head_while_spilled_events_come_back():
    """A shipper keeps its place in ``pending`` by what each ack drops. Taken from the change
    in length, an ack that also refilled from the spill file moved that place past events
    never sent: after a server restart with a big backlog the trace then stalled 5 s per refill."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP, memory_events=100)
    for i in range(1000):
        tracer.emit("rl.step", _step(i))
    sent = 0
    shipped = []
    while not tracer.all_acked:
        while sent < len(tracer.pending):  # a whole window in flight, like the shipper
            count, body = tracer.next_batch(sent)
            shipped.extend(decode_batch(body).events)
            sent += count
        upto = tracer.pending[0]["seq"] + 30  # telemetry acks the first 30 of them
        sent -= tracer.ack(min(upto, tracer.seq))
    seqs = [e["seq"] for e in shipped]
    assert seqs == list(range(1000)), "an event was skipped or sent twice"


def test_backlog_spills_to_disk_and_comes_back_in_order():
    """Telemetry unreachable: memory stays bounded, nothing is dropped, order is kept."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP, memory_events=100)
    for i in range(1000):
        tracer.emit("rl.step", _step(i))
    assert len(tracer.pending) == 100 and tracer.spilled == 900
    tracer.set_run("named-later")
    shipped = []
    while not tracer.all_acked:
        _, body = tracer.next_batch()
        events = decode_batch(body).events
        assert events and len(tracer.pending) <= 100
        shipped.extend(events)
        tracer.ack(events[-1]["seq"] + 1)
    assert [e["seq"] for e in shipped] == list(range(1000))
    assert [e["data"]["s"] for e in shipped] == list(range(1000))
    assert {e["run"] for e in shipped[100:]} == {"named-later"}
    assert tracer.spilled == 0
    tracer.emit("rl.step", _step(1000))  # back to memory once drained
    assert tracer.pending[0]["seq"] == 1000 and tracer.spilled == 0
