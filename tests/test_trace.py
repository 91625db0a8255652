"""The trace format: levels, gapless seqs, cumulative acks, batch round trip and validation."""

from __future__ import annotations

import orjson
import pytest

from bdi_rl.trace import (MAX_BATCH_BYTES, MAX_BATCH_EVENTS, SCHEMA, TraceFormatError, TraceLevel,
                          Tracer, decode_batch, encode_batch)


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
        tracer.emit("rl.step", {"i": i})
    tracer.ack(4)
    assert [e["seq"] for e in tracer.pending][:1] == [4] and len(tracer.pending) == 6
    tracer.ack(2)  # a stale ack changes nothing
    assert len(tracer.pending) == 6 and not tracer.all_acked
    tracer.ack(10)
    assert tracer.all_acked and not tracer.pending


def test_batches_are_bounded_and_round_trip():
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    for i in range(1000):
        tracer.emit("belief.add", {"belief": "x" * 300, "i": i})
    events, body = tracer.next_batch()
    assert 0 < len(events) <= MAX_BATCH_EVENTS and len(body) <= MAX_BATCH_BYTES
    run, agent, decoded = decode_batch(body)
    assert (run, agent) == ("r", "a@x") and decoded == events
    later, _ = tracer.next_batch(start=len(events))
    assert later[0]["seq"] == len(events)


@pytest.mark.parametrize(
    "body, reason",
    [
        (b"{not json", "not JSON"),
        (b"[]", "schema"),
        (orjson.dumps({"schema": "bdi-rl.trace-batch/1", "run": "r", "agent": "a", "events": "x"}), "list"),
        (encode_batch("r", "a", [{"seq": 1}]), "lacks field"),
        (encode_batch("r", "a", [{"schema": SCHEMA, "run": "r", "agent": "a", "seq": -1, "ts": 0,
                                  "kind": "rl.step", "episode": 0, "step": 0, "data": {}}]), "seq"),
        (encode_batch("r", "a", [{"schema": SCHEMA, "run": "r", "agent": "a", "seq": 0, "ts": 0,
                                  "kind": "bogus", "episode": 0, "step": 0, "data": {}}]), "kind"),
        (encode_batch("r", "a", [{"schema": SCHEMA, "run": "r", "agent": "b", "seq": 0, "ts": 0,
                                  "kind": "rl.step", "episode": 0, "step": 0, "data": {}}]), "another agent"),
        (b" " * (5 * MAX_BATCH_BYTES), "exceeds"),
    ],
)
def test_malformed_batches_are_refused(body, reason):
    with pytest.raises(TraceFormatError, match=reason):
        decode_batch(body)


def test_backlog_spills_to_disk_and_comes_back_in_order():
    """Telemetry unreachable: memory stays bounded, nothing is dropped, order is kept."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP, memory_events=100)
    for i in range(1000):
        tracer.emit("rl.step", {"i": i})
    assert len(tracer.pending) == 100 and tracer.spilled == 900
    tracer.set_run("named-later")
    shipped = []
    while not tracer.all_acked:
        events, _ = tracer.next_batch()
        assert events and len(tracer.pending) <= 100
        shipped.extend(events)
        tracer.ack(events[-1]["seq"] + 1)
    assert [e["seq"] for e in shipped] == list(range(1000))
    assert [e["data"]["i"] for e in shipped] == list(range(1000))
    assert {e["run"] for e in shipped[100:]} == {"named-later"}
    assert tracer.spilled == 0
    tracer.emit("rl.step", {"i": 1000})  # back to memory once drained
    assert tracer.pending[0]["seq"] == 1000 and tracer.spilled == 0
