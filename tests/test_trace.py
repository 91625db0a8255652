"""The trace format: levels, step records, gapless seqs, cumulative acks, batch round trip and
validation, spilling. Everything that travels is format 2 (``bdi-rl.trace/2``) as a real
Tracer writes it: step records (``steps`` lines) between episode-level events."""

from __future__ import annotations

import base64
import copy

import orjson
import pytest
import zstandard

from bdi_rl.trace import steps
from bdi_rl.trace.batch import (
    BATCH_SCHEMA,
    MAX_BATCH_EVENTS,
    MAX_BODY_CHARS,
    MAX_PAYLOAD_BYTES,
    decode_batch,
    encode_batch,
)
from bdi_rl.trace.check import check_event
from bdi_rl.trace.errors import TraceFileError, TraceFormatError
from bdi_rl.trace.kinds import SCHEMA, SCHEMA_V1, TraceLevel
from bdi_rl.trace.reading import check_trace, read_trace
from bdi_rl.trace.steps import RecordReader, expanded
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.telemetry import TraceLog
from tests import tracelines
from tests.tracelines import end_data, fill, rl_data

_step = rl_data


def test_levels_filter_kinds():
    tracer = Tracer("run", "a@x", TraceLevel.EPISODE)
    tracer.emit("rl.step", _step(0))
    tracer.emit("belief.add", {"belief": "b", "source": "self"})
    tracer.emit("episode.end", end_data(1))
    tracer.flush_record()
    assert [e["kind"] for e in tracer.pending] == ["episode.end"] and not len(tracer.record)
    assert tracer.pending[0]["seq"] == 0  # filtered events take no seq: no gaps
    cycle = Tracer("run", "a@x", TraceLevel.CYCLE)
    cycle.emit("cycle", {"n": 1, "plan": None, "depth": 0, "line": None, "intentions": 0})
    cycle.emit("rl.step", _step(0))
    cycle.emit("episode.end", end_data(1))
    assert [(e["seq"], e["kind"]) for e in cycle.pending] == [(0, "steps"), (1, "episode.end")]
    assert [e["kind"] for e in expanded(cycle.pending)] == ["cycle", "rl.step", "episode.end"]


def test_events_follow_the_schema():
    tracer = Tracer("r1", "a@x", TraceLevel.STEP)
    tracer.stamp(4, 9)
    tracer.emit("rl.step", _step(1))
    tracer.flush_record()
    event = tracer.pending[0]
    assert event["schema"] == SCHEMA and event["run"] == "r1" and event["agent"] == "a@x"
    assert (event["episode"], event["step"], event["kind"]) == (4, 9, "steps")
    assert isinstance(event["ts"], float)
    (step,) = expanded(tracer.pending)
    assert (step["episode"], step["step"], step["kind"], step["data"]) == (4, 9, "rl.step", _step(1))


# -- step records ----------------------------------------------------------------------------


def test_a_record_closes_before_any_other_event_keeping_the_order():
    """belief.add, msg.send, belief.add: the first belief is numbered before the message."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    tracer.emit("belief.add", {"belief": "b(1)", "source": "self"})
    tracer.emit("msg.send", {"to": "b@x", "performative": "tell", "content": "hi"})
    tracer.emit("belief.add", {"belief": "b(2)", "source": "self"})
    assert [e["kind"] for e in tracer.pending] == ["steps", "msg.send"] and len(tracer.record) == 1
    tracer.flush_record()
    tracer.flush_record()  # an empty record makes no event
    assert [(e["seq"], e["kind"]) for e in tracer.pending] == [(0, "steps"), (1, "msg.send"), (2, "steps")]
    assert [(e["kind"], e["seq"], e["data"].get("belief")) for e in expanded(tracer.pending)] == [
        ("belief.add", 0, "b(1)"),
        ("msg.send", 1, None),
        ("belief.add", 2, "b(2)"),
    ]


def test_a_record_is_stamped_with_each_step_and_closed_when_full():
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    for k in range(steps.MAX_ENTRIES):
        tracer.stamp(3, k)
        tracer.emit("rl.step", _step(k))
    (event,) = tracer.pending  # the record closed as soon as it was full
    assert event["kind"] == "steps" and (event["episode"], event["step"]) == (3, 0)
    assert len(event["data"]["ops"]) == steps.MAX_ENTRIES and not len(tracer.record)
    assert [(e["episode"], e["step"], e["data"]["s"]) for e in expanded(tracer.pending)] == [
        (3, k, k) for k in range(steps.MAX_ENTRIES)
    ]
    tracer.stamp(3, steps.MAX_ENTRIES)
    tracer.emit("rl.step", _step(0))
    tracer.flush_record()
    assert (tracer.pending[-1]["episode"], tracer.pending[-1]["step"]) == (3, steps.MAX_ENTRIES)
    for event in tracer.pending:
        check_event(orjson.dumps(event))  # a full record passes telemetry's check


def test_agent_start_begins_a_new_life_with_its_definitions_from_0():
    """An agent started again (a resumed run) numbers its definitions from 0: the reader
    resets them at agent.start, and refuses a record that does not continue them."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    start = {"jid": "a@x", "asl": "a.asl"}
    tracer.emit("agent.start", start)
    tracer.emit("belief.add", {"belief": "life(1)", "source": "self"})
    tracer.emit("agent.stop", {"reason": "finished", "emitted": 3})
    tracer.emit("agent.start", start)
    tracer.emit("belief.add", {"belief": "life(2)", "source": "self"})
    tracer.emit("goal.add", {"goal": "go", "source": "self"})
    tracer.flush_record()
    pending = list(tracer.pending)
    assert [e["kind"] for e in pending] == ["agent.start", "steps", "agent.stop", "agent.start", "steps"]
    assert [e["data"]["def0"] for e in pending if e["kind"] == "steps"] == [0, 0]
    assert [
        (e["kind"], e["data"].get("belief", e["data"].get("goal")))
        for e in expanded(pending)
        if e["kind"] != "agent.stop"
    ] == [
        ("agent.start", None),
        ("belief.add", "life(1)"),
        ("agent.start", None),
        ("belief.add", "life(2)"),
        ("goal.add", "go"),
    ]
    with pytest.raises(TraceFormatError, match=r"^steps record of a@x defines from 0, the trace holds 1$"):
        expanded(pending[:3] + pending[4:])  # the second life without its agent.start


def test_a_record_that_does_not_continue_the_agents_definitions_is_refused():
    first, _, second = tracelines.events(3)
    assert (first["data"]["def0"], second["data"]["def0"]) == (0, 1)
    reader = RecordReader()
    check_event(orjson.dumps(second))  # a line's check cannot know the lines before it: the reader does
    with pytest.raises(TraceFormatError, match=r"^steps record of a@x defines from 1, the trace holds 0$"):
        reader.expand(second)  # the record before it is missing
    with pytest.raises(TraceFormatError, match=r"^steps record of a@x defines from 0, the trace holds 1$"):
        expanded([first, first])  # a record read twice
    assert [e["data"]["belief"] for e in expanded([first, second]) if e["kind"] == "belief.add"] == [
        "state(0)",
        "state(1)",
    ]


# -- transport --------------------------------------------------------------------------------


def test_ack_is_cumulative():
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    fill(tracer, 10)
    tracer.ack(4)
    assert [e["seq"] for e in tracer.pending][:1] == [4] and len(tracer.pending) == 6
    tracer.ack(2)  # a stale ack changes nothing
    assert len(tracer.pending) == 6 and not tracer.all_acked
    tracer.ack(10)
    assert tracer.all_acked and not tracer.pending


def _event(seq: int, **fields) -> dict:
    """An episode-level event line; see _steps for a step record."""
    return {
        "schema": SCHEMA,
        "run": "r",
        "agent": "a",
        "seq": seq,
        "ts": 0.5,
        "kind": "episode.end",
        "episode": 0,
        "step": 0,
        "data": end_data(seq),
        **fields,
    }


def _steps(seq: int = 0, **fields) -> dict:
    """A real step record (two env steps: ops belief.add, rl.step, belief.add, rl.step)."""
    tracer = Tracer("r", "a", TraceLevel.STEP)
    tracelines.record(tracer, 0, 2)
    tracer.flush_record()
    return {**tracer.pending[0], "seq": seq, "ts": 0.5, **fields}  # a fixed ts: a stable test id


@pytest.mark.parametrize("compress", [False, True])
def test_batches_are_bounded_and_round_trip(compress):
    """Step records and the events between them, halved until a batch fits."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    for i in range(2500):
        tracer.stamp(0, i)
        tracer.emit("belief.add", {"belief": f"b{i}({'x' * 600})", "source": "self"})
        tracer.emit("rl.step", _step(i))
        tracer.emit("msg.send", {"to": "b@x", "performative": "tell", "content": f"b{i}"})
    count, body = tracer.next_batch(compress=compress)
    assert 0 < count < MAX_BATCH_EVENTS and len(body) <= MAX_BODY_CHARS  # halved to fit
    batch = decode_batch(body)
    events = list(tracer.pending)[:count]
    assert (batch.run, batch.agent, batch.first) == ("r", "a@x", 0) and batch.events == events
    assert [orjson.loads(line) for line in batch.lines] == events
    assert batch.kinds == ["steps", "msg.send"] * (count // 2) + ["steps"] * (count % 2)
    assert [e["data"]["s"] for e in expanded(batch.events) if e["kind"] == "rl.step"] == list(range((count + 1) // 2))
    _, later = tracer.next_batch(start=count, compress=compress)
    assert decode_batch(later).first == count


def test_a_local_batch_is_the_batch_a_body_decodes_to():
    """A tracer's batch for a telemetry agent of its own process skips the body: what
    telemetry appends from it is what it appends from the same events sent by XMPP, line
    for line (step records, numpy values, non-ASCII text, events after an acknowledgement)."""
    import numpy as np

    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    for i in range(300):
        tracer.stamp(i // 10, i % 10)
        tracer.emit("belief.add", {"belief": f"near(été, {i})", "source": "percept"})
        tracer.emit("rl.step", _step(i))
        tracer.emit("msg.send", {"to": "b@x", "performative": "tell", "content": f"q({np.float32(i / 3)})"})
        tracer.emit("episode.end", {**end_data(i), "return": np.float64(i / 7)})
    tracer.flush_record()
    tracer.ack(5)
    for start in (0, 7):
        local = tracer.next_local_batch(start)
        _, body = tracer.next_batch(start)
        sent = decode_batch(body)
        assert (local.run, local.agent, local.first) == (sent.run, sent.agent, sent.first) == ("r", "a@x", 5 + start)
        assert local.lines == sent.lines and local.kinds == sent.kinds and local.jsonl == sent.jsonl
        assert set(local.kinds) == {"steps", "msg.send", "episode.end"}


def test_a_batch_of_step_records_round_trips_whole():
    """Big records (thousands of entries each) travel one to a batch when they must."""
    tracer = Tracer("r", "a@x", TraceLevel.CYCLE)
    for i in range(3 * steps.MAX_ENTRIES):
        tracer.stamp(i // 100, i % 100)
        tracer.emit("belief.add", {"belief": f"seen({i})", "source": "percept"})
    tracer.flush_record()
    assert [len(e["data"]["ops"]) for e in tracer.pending] == [steps.MAX_ENTRIES] * 3
    shipped, start = [], 0
    while start < len(tracer.pending):
        count, body = tracer.next_batch(start, compress=True)
        shipped += decode_batch(body).events
        start += count
    assert shipped == list(tracer.pending)
    assert [e["data"]["belief"] for e in expanded(shipped)] == [f"seen({i})" for i in range(3 * steps.MAX_ENTRIES)]


def test_compressed_batches_are_several_times_smaller():
    tracer = Tracer("FrozenLake-v1__x__1__1", "learner-1@localhost", TraceLevel.STEP)
    fill(tracer, MAX_BATCH_EVENTS, steps=4)
    _, plain = tracer.next_batch()
    _, packed = tracer.next_batch(compress=True)
    assert len(packed) * 4 < len(plain)
    assert decode_batch(packed).lines == decode_batch(plain).lines


def _packed(payload: bytes) -> str:
    return base64.b64encode(zstandard.ZstdCompressor().compress(payload)).decode()


def _header(**fields) -> bytes:
    return orjson.dumps({"schema": BATCH_SCHEMA, "run": "r", "agent": "a", "first": 0, "count": 1, **fields}) + b"\n"


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
        (
            (_header() + orjson.dumps(_event(0)) + b"," + orjson.dumps(_event(1)) + b"\n").decode(),
            "trailing characters",
        ),  # two events on one line
        ((_header() + orjson.dumps({"seq": 0}) + b"\n").decode(), "missing required field"),
        ((_header() + orjson.dumps(_event(0, extra=1)) + b"\n").decode(), "unknown field `extra`"),
        ((_header() + orjson.dumps({**_event(0), "seq": True}) + b"\n").decode(), "Expected `int`"),
        ((_header() + orjson.dumps(_event(0, schema="other")) + b"\n").decode(), "schema"),
        ("\ud800", "not UTF-8"),
        (_packed(_header() + orjson.dumps(_event(0, data={"k": "X"})).replace(b"X", b"\xff") + b"\n"), "not UTF-8"),
        ((_header() + orjson.dumps(_event(0, kind="bogus")) + b"\n").decode(), "kind"),
        ((_header() + orjson.dumps(_event(0, data=[])) + b"\n").decode(), "data must be an object"),
        (
            (
                _header() + orjson.dumps({k: v for k, v in _event(0).items() if k != "step"} | {"step": 0}) + b"\n"
            ).decode(),
            "last field",
        ),
        ((_header() + b'{"schema":' + b"[" * 100 + b"\n").decode(), "seq 0"),
        ((_header() + orjson.dumps(_event(1)) + b"\n").decode(), "seq 1 where the batch needs 0"),
        ((_header() + orjson.dumps(_event(0, agent="b")) + b"\n").decode(), "another agent"),
        ((_header() + orjson.dumps(_event(-1)) + b"\n").decode(), "seq -1 where the batch needs 0"),
        (" " * (MAX_BODY_CHARS + 1), "exceeds"),
        ("KLUv/" + "!" * 20, "zstd"),  # looks compressed, is not base64
        ("KLUv/\x80DaFQQA0sgbHIAlag==", "zstd"),  # non-ASCII in base64: found by tests/test_fuzz.py
        (base64.b64encode(b"\x28\xb5\x2f\xfd" + b"garbage").decode(), "zstd"),
        (_packed(_header() + b" " * (MAX_PAYLOAD_BYTES + 1)), "inflates to"),  # a zip bomb
        # a step record is a line like any other
        ((_header() + orjson.dumps(_steps(1)) + b"\n").decode(), "seq 1 where the batch needs 0"),
        ((_header() + orjson.dumps(_steps(0, agent="b")) + b"\n").decode(), "another agent"),
        ((_header() + orjson.dumps(_steps(0, data=[])) + b"\n").decode(), "data must be an object"),
        ((_header() + orjson.dumps(_steps(0))[:-40] + b"\n").decode(), "event seq 0: "),  # cut short
        ((_header(count=2) + orjson.dumps(_steps(0)) + b"\n").decode(), "1 lines, its header says 2"),
        # format 2 writes step-level kinds only inside records, format 1 had no records
        (
            (_header() + orjson.dumps(_event(0, kind="rl.step", data=_step(0))) + b"\n").decode(),
            "a bdi-rl.trace/2 line cannot be of kind 'rl.step'",
        ),
        (
            (_header() + orjson.dumps(_steps(0, schema=SCHEMA_V1)) + b"\n").decode(),
            "a bdi-rl.trace/1 line cannot be of kind 'steps'",
        ),
    ],
)
def test_malformed_batches_are_refused(body, reason):
    with pytest.raises(TraceFormatError, match=reason):
        decode_batch(body)


def _damaged(change) -> dict:
    """A real step record (see _steps) with ``change(data)`` applied to its data."""
    event = _steps(0)
    event["data"] = copy.deepcopy(event["data"])
    change(event["data"])
    return event


def _set(key, value):
    return lambda data: data.__setitem__(key, value)


#: A record's data damaged in the ways its columns can disagree, and how telemetry says so.
#: The record is ops [belief.add, rl.step, belief.add, rl.step], refs [0, 0, 1, 1], two
#: definitions (def0 0), two rl rows, at [0, 0, 0, 2, 0, 1].
BAD_RECORDS = [
    (lambda d: d["refs"].pop(), "steps data: 3 refs for 4 ops (one each, at least one)"),
    (lambda d: (d["ops"].clear(), d["refs"].clear()), "steps data: 0 refs for 0 ops"),
    (lambda d: d["ops"].__setitem__(2, 99), "steps data: unknown op 99"),
    (lambda d: d["ops"].__setitem__(2, -1), "steps data: unknown op -1"),
    (lambda d: d["refs"].__setitem__(2, 7), "steps data: a belief.add refers to 7, which the record does not hold"),
    (_set("def0", -1), "steps data: def0 must be 0 or more"),
    (lambda d: d["refs"].__setitem__(3, 2), "steps data: a rl.step refers to 2, which the record does not hold"),
    (
        lambda d: d["defs"][0].pop("source"),
        "steps data: a belief.add definition: Object missing required field `source`",
    ),
    (lambda d: d["defs"][1].update(extra=1), "steps data: a belief.add definition: Object contains unknown field"),
    (
        lambda d: d["ops"].__setitem__(2, 3),  # intention.start refers to a belief's definition
        "steps data: a intention.start definition: Object contains unknown field `belief`",
    ),
    (lambda d: d["rl"]["s2"].pop(), "steps data: rl columns of different lengths"),
    (lambda d: d["rl"]["q"].pop(), "steps data: rl columns of different lengths"),  # a Q row short
    (lambda d: d["rl"]["eps_rows"].clear(), "steps data: rl epsilon must be given from row 0"),
    (lambda d: d["rl"]["done"].append(2), "steps data: rl done names a row that does not exist"),
    (lambda d: d["rl"]["s"].__setitem__(0, "zero"), "steps data: Expected `int`, got `str` - at `data.rl.s[0]`"),
    (_set("at", [0, 0, 0, 3, 0, 1, 2, 0, 2]), "steps data: at must be (entry, episode, step) triples"),
    (_set("at", [1, 0, 0]), "steps data: at must be (entry, episode, step) triples from entry 0"),
    (_set("at", [0, 0, 0, 9, 0, 1]), "steps data: at must be"),
    (_set("at", [0, 0]), "steps data: at must be"),
    (_set("at", []), "steps data: at must be"),
    (
        _set("keyframe", {"beliefs": [0, 2], "intentions": []}),
        "steps data: the keyframe refers to a definition that does not exist",
    ),
    (_set("cycles", [{"n": 1}]), "steps data: Object missing required field `plan` - at `data.cycles[0]`"),
    (_set("extra", 1), "steps data: Object contains unknown field `extra`"),
]


@pytest.mark.parametrize("change, reason", BAD_RECORDS)
def test_a_step_record_whose_columns_disagree_is_refused_naming_what(change, reason, tmp_path):
    """Telemetry's per-line check on a ``steps`` line: one line of TraceFormatError, for a
    batch received and for a trace file read back (nothing is cut or changed)."""
    line = orjson.dumps(_damaged(change))
    with pytest.raises(TraceFormatError) as caught:
        check_event(line)
    assert reason in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(TraceFormatError) as caught:
        decode_batch(encode_batch("r", "a", [_damaged(change)], compress=True))
    assert str(caught.value).startswith("event seq 0: ") and reason in str(caught.value)
    path = tmp_path / "trace.jsonl"
    good = orjson.dumps(_event(0, agent="b")) + b"\n"
    path.write_bytes(good + line + b"\n" + good.replace(b'"seq":0', b'"seq":1'))
    before = path.read_bytes()
    with pytest.raises(TraceFileError) as caught:
        TraceLog(path, "r")
    assert str(caught.value).startswith(f"{path}:2: ") and reason in str(caught.value)
    assert path.read_bytes() == before


def test_the_record_kinds_definitions_and_rows_pass_as_the_writers_make_them():
    """Every record kind, a keyframe, definitions used again in later records: every line passes."""
    tracer = Tracer("r", "a", TraceLevel.CYCLE)
    record = tracer.record
    record.keyframe = lambda r: {"beliefs": [0], "intentions": []}
    tracer.emit("belief.add", {"belief": "b", "source": "self"})
    tracer.emit("belief.del", {"belief": "b", "source": "self"})
    tracer.emit("goal.add", {"goal": "g", "source": "self"})
    tracer.emit("intention.start", {"trigger": "+!g", "plan": "g", "source": "self"})
    tracer.emit("options", {"event": "+!g", "relevant": ["g"], "applicable": ["g"], "selected": "g"})
    means = [{"trigger": "+!g", "plan": "g", "file": "a.asl", "line": 2}]
    tracer.emit("intentions", {"intentions": [{"id": 1, "state": "current", "means": means}]})
    tracer.emit("action", {"name": ".note", "args": [1, "x"], "result": True})
    tracer.emit(
        "cycle", {"n": 1, "plan": "g", "depth": 1, "line": 2, "intentions": 1, "events": ["+!g"], "pending": []}
    )
    tracer.emit("intention.end", {"plan": "g"})
    tracer.emit("rl.step", _step(1))
    tracer.emit("rl.step", {**_step(2), "done": True, "epsilon": 0.05})
    record.since_keyframe = steps.KEYFRAME_ENTRIES  # the next close takes a keyframe
    tracer.flush_record()
    record.ops.append(steps.OP_BELIEF_DEL)  # a writer refers to a definition of an earlier record
    record.refs.append(0)
    tracer.flush_record()
    first, second = tracer.pending
    assert second["data"]["keyframe"] == {"beliefs": [0], "intentions": []} and second["data"]["defs"] == []
    for event in tracer.pending:
        check_event(orjson.dumps(event))
    assert [e["kind"] for e in expanded(tracer.pending)] == [
        "belief.add",
        "belief.del",
        "goal.add",
        "intention.start",
        "options",
        "intentions",
        "action",
        "cycle",
        "intention.end",
        "rl.step",
        "rl.step",
        "belief.del",
    ]


def test_format_1_lines_are_still_read(tmp_path):
    """Old traces (``bdi-rl.trace/1``: a line per step-level event) pass the check and can be
    resumed: the format-2 lines a resumed run appends follow them."""
    old = [
        {
            "schema": SCHEMA_V1,
            "run": "r",
            "agent": "a",
            "seq": 0,
            "ts": 0.5,
            "kind": "rl.step",
            "episode": 0,
            "step": 0,
            "data": _step(0),
        },
        {
            "schema": SCHEMA_V1,
            "run": "r",
            "agent": "a",
            "seq": 1,
            "ts": 0.5,
            "kind": "belief.add",
            "episode": 0,
            "step": 1,
            "data": {"belief": "b", "source": "self"},
        },
        _event(2, schema=SCHEMA_V1),
    ]
    assert [check_event(orjson.dumps(e)).kind for e in old] == ["rl.step", "belief.add", "episode.end"]
    assert decode_batch(encode_batch("r", "a", old)).events == old
    with pytest.raises(TraceFormatError, match=r"rl\.step data: .*`data\.s`"):
        check_event(orjson.dumps({**old[0], "data": {**_step(0), "s": "x"}}))
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [*old, _steps(3), _event(4)]))
    scan = check_trace(path, "r", keep={"rl.step", "steps"})
    assert (scan.events, scan.next_seq, scan.torn) == (5, {"a": 5}, None)
    assert [orjson.loads(line)["kind"] for line in scan.kept] == ["rl.step", "steps"]
    assert [e["kind"] for e in read_trace(path)] == [
        "rl.step",
        "belief.add",
        "episode.end",
        "belief.add",
        "rl.step",
        "belief.add",
        "rl.step",
        "episode.end",
    ]


def test_trace_log_appends_lines_as_received_once(tmp_path):
    """Exactly once, in seq order, byte for byte: step records and the events between them."""
    log = TraceLog(tmp_path / "trace.jsonl")
    events = tracelines.events(10, agent="a", steps=3)
    assert log.accept(decode_batch(encode_batch("r", "a", events[:4]))) == (4, False)
    assert log.accept(decode_batch(encode_batch("r", "a", events[2:6], compress=True))) == (6, False)
    assert log.accept(decode_batch(encode_batch("r", "a", events[:2]))) == (6, False)  # a replay
    assert log.accept(decode_batch(encode_batch("r", "a", [events[9]]))) == (6, True)  # a gap
    log.close()
    written = (tmp_path / "trace.jsonl").read_bytes()
    assert written == b"".join(orjson.dumps(e) + b"\n" for e in events[:6])
    assert (log.written, log.duplicates) == (6, 4)
    assert read_trace(tmp_path / "trace.jsonl") == expanded(events[:6])
    kinds = [e["kind"] for e in read_trace(tmp_path / "trace.jsonl")]
    assert kinds == (["belief.add", "rl.step"] * 3 + ["episode.end"]) * 3


def _backlog(tracer: Tracer) -> None:
    """300 events, one big step record (4000 entries, ~0.3 MB), 300 more."""
    fill(tracer, 300)
    tracelines.record(tracer, 1000, 2000)
    tracer.flush_record()
    fill(tracer, 300)


def _same(events: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in ("ts", "run")} for e in events]


def test_ack_counts_what_left_the_head_while_spilled_events_come_back():
    """A shipper keeps its place in ``pending`` by what each ack drops. Taken from the change
    in length, an ack that also refilled from the spill file moved that place past events
    never sent: after a server restart with a big backlog the trace then stalled 5 s per refill."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP, memory_events=100)
    _backlog(tracer)
    assert tracer.spilled > 400
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
    assert seqs == list(range(601)), "an event was skipped or sent twice"


def test_backlog_spills_to_disk_and_comes_back_in_order():
    """Telemetry unreachable: memory stays bounded, nothing is dropped, order is kept; a big
    step record spilled comes back whole, as the same events."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP, memory_events=100)
    _backlog(tracer)  # a step record counts as the events it holds
    assert tracer.held <= 100 and len(tracer.pending) + tracer.spilled == 601 and tracer.spilled > 500
    reference = Tracer("r", "a@x", TraceLevel.STEP)  # the same events, never spilled
    _backlog(reference)
    tracer.set_run("named-later")
    shipped = []
    while not tracer.all_acked:
        _, body = tracer.next_batch()
        events = decode_batch(body).events
        assert events and (tracer.held <= 100 or len(tracer.pending) == 1)  # a bigger line comes alone
        shipped.extend(events)
        tracer.ack(events[-1]["seq"] + 1)
    assert [e["seq"] for e in shipped] == list(range(601))
    assert _same(shipped) == _same(reference.pending)
    big = shipped[300]
    assert big["kind"] == "steps" and len(big["data"]["ops"]) == 4000
    assert [e["data"]["s"] for e in expanded(shipped) if e["kind"] == "rl.step"] == [
        *range(150),
        *range(1000, 3000),
        *range(151, 301),
    ]
    assert {e["run"] for e in shipped[100:]} == {"named-later"}
    assert tracer.spilled == 0
    tracer.emit("episode.end", end_data(601))  # back to memory once drained
    assert tracer.pending[0]["seq"] == 601 and tracer.spilled == 0


_COUNT_BATCHES = """
import collections, sys
import orjson
from bdi_rl.xmpp import telemetry
from bdi_rl.cli import main

batches = collections.Counter()
accept = telemetry.TraceLog.accept
def counted(self, batch):
    batches[batch.agent] += 1
    return accept(self, batch)
telemetry.TraceLog.accept = counted
status = main(sys.argv[1:])
print(orjson.dumps(batches).decode())
sys.exit(status)
"""


def test_a_busy_agent_ships_its_trace_every_flush_not_every_acknowledgement(tmp_path):
    """Two coordinating agents in one process, 1000 episodes at step level: each ships its
    trace a few times a second (``telemetry.flush_seconds``), not once per acknowledgement
    (that was ~260 batches of ~8 events each, and as many acks, for a ~1 s run)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    command = [sys.executable, "-c", _COUNT_BATCHES, "run", "climbing", "--runs", str(tmp_path), "--no-progress"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    batches = orjson.loads(result.stdout.strip().splitlines()[-1])
    (run,) = tmp_path.iterdir()
    summary = orjson.loads((run / "summary.json").read_bytes())
    due = summary["wall_seconds"] / 0.2 + 3  # one per flush, and the last ones as it stops
    events = {e["agent"] for e in read_trace(run / "trace.jsonl")}
    assert {"player-1@localhost", "player-2@localhost"} <= events
    for agent in ("player-1@localhost", "player-2@localhost"):
        assert 1 <= batches[agent] <= due, (agent, batches[agent], due)
