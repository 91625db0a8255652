"""The trace event format: one module shared by agents, telemetry, viewer and exporters.

An event is a plain dict (cheap to build on the hot path); serialisation happens once per
batch with orjson, because per-event ``json.dumps`` costs ~25% of a plain Q-learning loop
(DESIGN.md section 4).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import deque
from enum import IntEnum
from typing import Any, BinaryIO, Callable, Iterable

import orjson

SCHEMA = "bdi-rl.trace/1"
BATCH_SCHEMA = "bdi-rl.trace-batch/1"

#: XMPP metadata that marks trace batches and their acknowledgements (kept apart from
#: spade_bdi's ``performative=BDI`` messages so any BDI client never sees them).
BATCH_METADATA = {"performative": "inform", "ontology": "bdi-rl.trace"}
ACK_METADATA = {"performative": "confirm", "ontology": "bdi-rl.trace-ack"}
#: An agent in its own process asks the telemetry agent which run it belongs to.
JOIN_REQUEST_METADATA = {"performative": "request", "ontology": "bdi-rl.join"}
JOIN_REPLY_METADATA = {"performative": "inform", "ontology": "bdi-rl.join"}

#: Bounds of one batch: far below any XMPP server's stanza limit (ejabberd: 64 KiB+).
MAX_BATCH_EVENTS = 256
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
MAX_BATCH_BYTES = 48_000


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

    def ack(self, upto: int) -> None:
        """Forget every event with seq < ``upto`` (cumulative acknowledgement)."""
        pending = self.pending
        while pending and pending[0]["seq"] < upto:
            pending.popleft()
        if upto > self.acked:
            self.acked = upto
            if self.on_ack is not None:
                self.on_ack(upto)
        if self.spilled:
            self._refill()

    @property
    def all_acked(self) -> bool:
        return self.acked >= self.seq

    def next_batch(self, start: int = 0) -> tuple[list[dict[str, Any]], bytes]:
        """The oldest unacknowledged events from index ``start`` of ``pending``, encoded."""
        events: list[dict[str, Any]] = []
        for i in range(start, min(len(self.pending), start + MAX_BATCH_EVENTS)):
            events.append(self.pending[i])
        body = encode_batch(self.run, self.agent, events)
        while len(body) > MAX_BATCH_BYTES and len(events) > 1:
            events = events[: len(events) // 2]
            body = encode_batch(self.run, self.agent, events)
        return events, body


def encode_batch(run: str, agent: str, events: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"schema": BATCH_SCHEMA, "run": run, "agent": agent, "events": events},
                        option=NUMPY)


def decode_batch(body: str | bytes) -> tuple[str, str, list[dict[str, Any]]]:
    """Parse and validate a batch body; raise TraceFormatError with a one-line reason."""
    if len(body) > 4 * MAX_BATCH_BYTES:
        raise TraceFormatError(f"batch of {len(body)} bytes exceeds the limit")
    try:
        batch = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise TraceFormatError(f"batch is not JSON: {exc}") from None
    if not isinstance(batch, dict) or batch.get("schema") != BATCH_SCHEMA:
        raise TraceFormatError(f"batch schema is not {BATCH_SCHEMA}")
    run, agent, events = batch.get("run"), batch.get("agent"), batch.get("events")
    if not isinstance(run, str) or not isinstance(agent, str) or not isinstance(events, list):
        raise TraceFormatError("batch needs string 'run', 'agent' and a list 'events'")
    for event in events:
        validate_event(event)
        if event["agent"] != agent or event["run"] != run:
            raise TraceFormatError("batch mixes events of another agent or run")
    return run, agent, events


_FIELDS = frozenset(REQUIRED_FIELDS)


def validate_event(event: Any) -> None:
    if not isinstance(event, dict):
        raise TraceFormatError("event is not an object")
    if event.keys() != _FIELDS:
        missing = [f for f in REQUIRED_FIELDS if f not in event]
        if missing:
            raise TraceFormatError(f"event lacks field {missing[0]!r}")
        raise TraceFormatError(f"event has unknown fields {sorted(event.keys() - _FIELDS)}")
    if event["schema"] != SCHEMA:
        raise TraceFormatError(f"event schema is not {SCHEMA}")
    if not isinstance(event["seq"], int) or event["seq"] < 0:
        raise TraceFormatError("event seq must be a non-negative integer")
    if event["kind"] not in KIND_LEVEL:
        raise TraceFormatError(f"unknown event kind {event['kind']!r}")
    if not isinstance(event["data"], dict):
        raise TraceFormatError("event data must be an object")


def encode_lines(events: Iterable[dict[str, Any]]) -> bytes:
    """JSONL bytes for ``events`` (one object per line)."""
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def read_trace(path: str) -> list[dict[str, Any]]:
    """Every event of a trace JSONL file, in file order."""
    with open(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]
