"""The trace event format: one module shared by agents, telemetry, viewer and exporters.

An event is a plain dict (cheap to build on the hot path); it is serialised by orjson once,
when its batch is shipped, because per-event ``json.dumps`` costs ~25% of a plain Q-learning
loop (DESIGN.md section 4). A batch carries its events as the JSONL lines telemetry appends
to the trace as they are (checked, never re-encoded), zstd-compressed when it travels over
XMPP: see BENCHMARKS.md, "Trace transport".
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import tempfile
import time
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from enum import IntEnum
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable

import msgspec
import orjson
import zstandard

SCHEMA = "bdi-rl.trace/1"
BATCH_SCHEMA = "bdi-rl.trace-batch/2"

#: XMPP metadata that marks trace batches and their acknowledgements (kept apart from
#: spade_bdi's ``performative=BDI`` messages so any BDI client never sees them).
BATCH_METADATA = {"performative": "inform", "ontology": "bdi-rl.trace"}
ACK_METADATA = {"performative": "confirm", "ontology": "bdi-rl.trace-ack"}
#: An agent in its own process asks the telemetry agent which run it belongs to.
JOIN_REQUEST_METADATA = {"performative": "request", "ontology": "bdi-rl.join"}
JOIN_REPLY_METADATA = {"performative": "inform", "ontology": "bdi-rl.join"}

#: Bounds of one batch. Per-stanza costs (XML, SPADE's message objects, an ack) dominate small
#: batches; 2048 events are ~800 KB of JSONL, ~190 KB once compressed and base64-encoded,
#: within the 1 MiB stanza limit of compose/ejabberd.yml.
MAX_BATCH_EVENTS = 2048
#: A batch's JSONL (decompressed) and a batch body as sent: larger ones are split / refused.
MAX_PAYLOAD_BYTES = 1_000_000
MAX_BODY_CHARS = 1_000_000
#: numpy scalars (a Q-value, an action index) may reach event data: serialise them as numbers.
NUMPY = orjson.OPT_SERIALIZE_NUMPY
#: Longest literal / message text kept in one event (a shared-experience literal is ~12 KB).
MAX_TEXT_CHARS = 1024


def clip_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (the trace stays small
    even when agents exchange large literals)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


class TraceLevel(IntEnum):
    """How much an agent records: each level includes the ones below it."""

    EPISODE = 0
    STEP = 1
    CYCLE = 2

    @classmethod
    def parse(cls, name: str) -> "TraceLevel":
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(
                f"trace level must be one of episode, step, cycle; got {name!r}"
            ) from None


#: The lowest level at which each kind is recorded.
KIND_LEVEL: dict[str, TraceLevel] = {
    "run.start": TraceLevel.EPISODE,
    "run.stop": TraceLevel.EPISODE,
    "run.resume": TraceLevel.EPISODE,
    "telemetry.restart": TraceLevel.EPISODE,
    "agent.start": TraceLevel.EPISODE,
    "agent.stop": TraceLevel.EPISODE,
    "episode.end": TraceLevel.EPISODE,
    "eval": TraceLevel.EPISODE,
    "qtable.save": TraceLevel.EPISODE,
    "qtable.load": TraceLevel.EPISODE,
    "msg.send": TraceLevel.EPISODE,
    "msg.recv": TraceLevel.EPISODE,
    "intention.fail": TraceLevel.EPISODE,
    "xmpp.reconnect": TraceLevel.EPISODE,
    "belief.add": TraceLevel.STEP,
    "belief.del": TraceLevel.STEP,
    "goal.add": TraceLevel.STEP,
    "intention.start": TraceLevel.STEP,
    "intention.end": TraceLevel.STEP,
    "action": TraceLevel.STEP,
    "rl.step": TraceLevel.STEP,
    "cycle": TraceLevel.CYCLE,
}

REQUIRED_FIELDS = ("schema", "run", "agent", "seq", "ts", "kind", "episode", "step", "data")


class TraceFormatError(ValueError):
    """A batch or event that does not follow the schema."""


class TraceFileError(TraceFormatError):
    """A trace file that cannot be continued as it is, as one line: ``"<path>:<line>: <what
    is wrong>"``. Raised before the file is changed (nothing is cut, nothing appended)."""


class Tracer:
    """Numbers one agent's events gaplessly and keeps them until the telemetry agent acks.

    ``pending`` holds the oldest unacknowledged events in memory; the shipper sends from it
    and :meth:`ack` drops what the telemetry agent has written. When telemetry cannot keep
    up or is unreachable, memory stays bounded: past ``memory_events`` the newer events go
    to a spill file and come back, in order, as acknowledgements free memory. Learning never
    waits for telemetry and no event is dropped.
    """

    #: Events kept in memory before newer ones spill to disk (~0.5 KB each).
    MEMORY_EVENTS = 200_000

    def __init__(self, run: str, agent: str, level: TraceLevel,
                 memory_events: int = MEMORY_EVENTS) -> None:
        self.run = run
        self.agent = agent
        self.level = level
        self.seq = 0
        self.closed = False
        self.episode = 0
        self.step = 0
        self.pending: deque[dict[str, Any]] = deque()
        self.acked = 0  # every seq below this is written by telemetry
        self.on_ack: Callable[[int], None] | None = None
        """called when telemetry acknowledges more events (``upto``: the next seq wanted)"""
        self.on_emit: Callable[[], None] | None = None
        """called at the next event, then cleared (wakes an idle shipper)"""
        self.memory_events = memory_events
        self.spilled = 0  # events in the spill file, not yet back in memory
        self._spill: BinaryIO | None = None
        self._spill_read = 0

    def set_run(self, run: str) -> None:
        """Name the run (agents in their own process learn it from telemetry after start)."""
        self.run = run
        for event in self.pending:
            event["run"] = run

    def wants(self, kind: str) -> bool:
        return KIND_LEVEL[kind] <= self.level

    def close(self) -> None:
        """The agent has stopped (``agent.stop`` was its last event): record nothing more,
        even if peers still talk to it, so ``emitted`` stays the true count."""
        self.closed = True

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Record one event if the trace level asks for it."""
        if KIND_LEVEL[kind] > self.level or self.closed:
            return
        event = {
            "schema": SCHEMA,
            "run": self.run,
            "agent": self.agent,
            "seq": self.seq,
            "ts": time.time(),
            "kind": kind,
            "episode": self.episode,
            "step": self.step,
            "data": data,
        }
        if self.spilled or len(self.pending) >= self.memory_events:
            self._spill_event(event)
        else:
            self.pending.append(event)
        self.seq += 1
        if self.on_emit is not None:
            wake, self.on_emit = self.on_emit, None
            wake()

    def _spill_event(self, event: dict[str, Any]) -> None:
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="bdi-rl-trace-")
        self._spill.seek(0, os.SEEK_END)
        self._spill.write(orjson.dumps(event, option=NUMPY) + b"\n")
        self.spilled += 1

    def _refill(self) -> None:
        """Bring spilled events back once acknowledgements have freed half the memory."""
        spill = self._spill
        if spill is None or not self.spilled or len(self.pending) > self.memory_events // 2:
            return
        spill.seek(self._spill_read)
        room = self.memory_events - len(self.pending)
        for _ in range(min(room, self.spilled)):
            event = orjson.loads(spill.readline())
            event["run"] = self.run  # the run may have been named after the event was spilled
            self.pending.append(event)
            self.spilled -= 1
        self._spill_read = spill.tell()
        if not self.spilled:
            spill.seek(0)
            spill.truncate()
            self._spill_read = 0

    def ack(self, upto: int) -> int:
        """Forget every event with seq < ``upto`` (cumulative acknowledgement); returns how
        many left the head of ``pending`` (spilled events coming back join its tail)."""
        pending = self.pending
        dropped = 0
        if pending:  # pending holds consecutive seqs: count what the ack covers, drop it
            popleft = pending.popleft
            dropped = min(len(pending), max(0, upto - pending[0]["seq"]))
            for _ in range(dropped):
                popleft()
        if upto > self.acked:
            self.acked = upto
            if self.on_ack is not None:
                self.on_ack(upto)
        if self.spilled:
            self._refill()
        return dropped

    @property
    def all_acked(self) -> bool:
        return self.acked >= self.seq

    def next_batch(self, start: int = 0, *, compress: bool = False) -> tuple[int, str]:
        """The oldest unacknowledged events from index ``start`` of ``pending`` as a batch
        body; returns (number of events, body). ``compress`` for a trip over XMPP."""
        # islice skips in C; indexing a deque of 100k events one by one was 8 % of a sender.
        events = list(islice(self.pending, start, start + MAX_BATCH_EVENTS))
        while True:
            payload = encode_payload(self.run, self.agent, events)
            if len(events) == 1 or len(payload) <= MAX_PAYLOAD_BYTES:
                body = encode_body(payload, compress)
                if len(events) == 1 or len(body) <= MAX_BODY_CHARS:
                    return len(events), body
            events = events[: len(events) // 2]


#: One compressor per process: level 1 compresses trace JSONL ~5.7x at ~0.7 µs per event,
#: 3.5x faster than zlib's fastest level with a better ratio (BENCHMARKS.md).
_COMPRESSOR = zstandard.ZstdCompressor(level=1)
_DECOMPRESSOR = zstandard.ZstdDecompressor()
_ZSTD_MAGIC_B64 = "KLUv/"  # base64 of zstd's frame magic 28 b5 2f fd


def encode_payload(run: str, agent: str, events: list[dict[str, Any]]) -> bytes:
    """A header line naming the batch, then one JSONL line per event."""
    header = {"schema": BATCH_SCHEMA, "run": run, "agent": agent,
              "first": events[0]["seq"] if events else 0, "count": len(events)}
    out = io.BytesIO()
    out.write(orjson.dumps(header, option=_LINE))
    return encode_lines(events, out)


def encode_body(payload: bytes, compress: bool) -> str:
    """The message body: the payload itself (between agents of one process), or
    zstd + base64 (over XMPP, where every byte is TLS-encrypted, routed and XML-parsed)."""
    if not compress:
        return payload.decode()
    return base64.b64encode(_COMPRESSOR.compress(payload)).decode("ascii")


def encode_batch(run: str, agent: str, events: list[dict[str, Any]], *, compress: bool = False) -> str:
    return encode_body(encode_payload(run, agent, events), compress)


@dataclass(frozen=True)
class Batch:
    """A checked batch: ``lines[i]`` is the JSONL text of the event with seq ``first + i``,
    of kind ``kinds[i]``."""

    run: str
    agent: str
    first: int
    lines: list[bytes]
    kinds: list[str]
    jsonl: bytes
    """every line, each ending in a newline: what telemetry appends when all are new"""

    @property
    def events(self) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.lines]


class _WireEvent(msgspec.Struct, forbid_unknown_fields=True):
    """One event line as telemetry checks it: decoded in C with ``data`` left as raw JSON,
    ~3x faster than building the dicts (BENCHMARKS.md, "Trace transport")."""

    schema: str
    run: str
    agent: str
    seq: int
    ts: float
    kind: str
    episode: int
    step: int
    data: msgspec.Raw


_WIRE_EVENT = msgspec.json.Decoder(_WireEvent)


def decode_batch(body: str) -> Batch:
    """Parse and check a batch body; raise TraceFormatError with a one-line reason.

    Every line must be one event of the header's agent and run, numbered from ``first``
    without gaps: telemetry then appends the lines exactly as received."""
    if len(body) > MAX_BODY_CHARS:
        raise TraceFormatError(f"batch of {len(body)} characters exceeds {MAX_BODY_CHARS}")
    payload = _payload(body)
    header_line, _, rest = payload.partition(b"\n")
    try:
        header = orjson.loads(header_line)
    except orjson.JSONDecodeError as exc:
        raise TraceFormatError(f"batch header is not JSON: {exc}") from None
    if not isinstance(header, dict) or header.get("schema") != BATCH_SCHEMA:
        raise TraceFormatError(f"batch schema is not {BATCH_SCHEMA}")
    run, agent, first, count = (header.get(k) for k in ("run", "agent", "first", "count"))
    if not isinstance(run, str) or not isinstance(agent, str):
        raise TraceFormatError("batch header needs string 'run' and 'agent'")
    if type(first) is not int or type(count) is not int or first < 0 or not 0 < count <= MAX_BATCH_EVENTS:
        raise TraceFormatError(f"batch header needs 'first' >= 0 and 'count' in 1..{MAX_BATCH_EVENTS}")
    lines = rest.split(b"\n")
    if lines.pop() != b"" or len(lines) != count:
        raise TraceFormatError(f"batch holds {len(lines)} lines, its header says {count}")
    kinds = []
    for seq, line in enumerate(lines, first):
        try:
            event = check_event(line)
        except TraceFormatError as exc:
            raise TraceFormatError(f"event seq {seq}: {exc}") from None
        if event.seq != seq:
            raise TraceFormatError(f"event seq {event.seq} where the batch needs {seq}")
        if event.agent != agent or event.run != run:
            raise TraceFormatError("batch mixes events of another agent or run")
        kinds.append(event.kind)
    return Batch(run, agent, first, lines, kinds, rest)


class _NotJson(TraceFormatError):
    """A line that is not JSON at all (a torn write), as opposed to JSON that is no event."""


def check_event(line: bytes) -> _WireEvent:
    """One JSONL line checked against the event schema: every field present with its type and
    no other, this schema, a known kind, ``data`` an object. The one checker of event lines,
    for batches received and trace files read back; TraceFormatError with the reason."""
    try:
        event = _WIRE_EVENT.decode(line)
    except msgspec.ValidationError as exc:
        raise TraceFormatError(f"not a trace event: {exc}") from None
    except msgspec.DecodeError as exc:
        raise _NotJson(str(exc)) from None
    if event.schema != SCHEMA:
        raise TraceFormatError(f"event schema is not {SCHEMA}")
    if event.kind not in KIND_LEVEL:
        raise TraceFormatError(f"unknown event kind {event.kind!r}")
    # The decode typed every other field, so only an object ``data`` can end the line in
    # "}}" (cheaper than inspecting the raw value; our encoder always writes it last).
    if not line.endswith(b"}}"):
        raise TraceFormatError("data must be an object and the last field")
    return event


def _payload(body: str) -> bytes:
    """The JSONL payload of a body, checked to be UTF-8: plain, or zstd + base64 (bounded
    before it is inflated)."""
    try:
        if not body.startswith(_ZSTD_MAGIC_B64):
            return body.encode()
        frame = binascii.a2b_base64(body, strict_mode=True)  # b64decode(validate=) runs a regex
        size = zstandard.frame_content_size(frame)
        if size > MAX_PAYLOAD_BYTES:
            raise TraceFormatError(f"batch inflates to {size} bytes, over {MAX_PAYLOAD_BYTES}")
        payload = _DECOMPRESSOR.decompress(frame, max_output_size=MAX_PAYLOAD_BYTES)
        if not payload.isascii():  # ASCII (the usual case) is UTF-8: no need to decode it
            payload.decode()
        return payload
    except UnicodeError as exc:
        raise TraceFormatError(f"batch is not UTF-8: {exc}") from None
    except (ValueError, zstandard.ZstdError) as exc:  # binascii.Error, or non-ASCII base64
        raise TraceFormatError(f"batch is not valid zstd + base64: {exc}") from None


_LINE = NUMPY | orjson.OPT_APPEND_NEWLINE


def encode_lines(events: Iterable[dict[str, Any]], out: io.BytesIO | None = None) -> bytes:
    """JSONL bytes for ``events`` (one object per line), appended to ``out`` if given.

    Written piece by piece into one buffer: keeping 2048 small ``bytes`` alive for a join
    made each event cost 3.6 µs instead of 0.6 µs (allocator churn, measured)."""
    out = io.BytesIO() if out is None else out
    write = out.write
    for event in events:
        write(orjson.dumps(event, option=_LINE))
    return out.getvalue()


@dataclass(frozen=True)
class TraceScan:
    """A trace file checked line by line (:func:`check_trace`)."""

    events: int
    """complete event lines"""
    good_end: int
    """bytes those lines take from the start of the file: a torn last line begins here"""
    torn: str | None
    """why the last line is torn (a process killed mid-write), or None"""
    next_seq: dict[str, int]
    """each agent's next seq"""
    kept: list[bytes]
    """the event lines of the kinds the caller asked for"""


def check_trace(path: Path, run: str | None = None, keep: Collection[str] = ()) -> TraceScan:
    """Check a trace file before it is continued (``run --resume``, ``telemetry --run``); it
    is only read. Every line must be an event (:func:`check_event`) of ``run`` and the next
    seq of its agent, as telemetry writes them. Only the last line may be torn (no newline,
    or not JSON); any other bad line is a TraceFileError naming it: cutting the file there
    would delete every good event after it."""
    next_seq: dict[str, int] = {}
    kept: list[bytes] = []
    good_end = count = 0
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.endswith(b"\n"):  # only the last line can lack one
                return TraceScan(count, good_end, "no newline at its end", next_seq, kept)
            text = line[:-1]
            try:
                event = check_event(text)
            except _NotJson as exc:
                if not f.read(1):  # the last line: a torn write
                    return TraceScan(count, good_end, f"not JSON ({exc})", next_seq, kept)
                raise TraceFileError(f"{path}:{number}: not JSON: {exc}") from None
            except TraceFormatError as exc:
                raise TraceFileError(f"{path}:{number}: {exc}") from None
            if run is not None and event.run != run:
                raise TraceFileError(f"{path}:{number}: an event of run {event.run!r}, not of {run!r}")
            expected = next_seq.get(event.agent, 0)
            if event.seq != expected:
                raise TraceFileError(f"{path}:{number}: seq {event.seq} of {event.agent} where "
                                     f"the trace needs {expected} (each agent's events are "
                                     "gapless from 0, each once)")
            next_seq[event.agent] = expected + 1
            if event.kind in keep:
                kept.append(text)
            good_end += len(line)
            count += 1
    return TraceScan(count, good_end, None, next_seq, kept)


def read_trace(path: str) -> list[dict[str, Any]]:
    """Every event of a trace JSONL file, in file order."""
    with open(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]
