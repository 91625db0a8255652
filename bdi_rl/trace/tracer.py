"""The tracer: numbers one agent's events and keeps them until telemetry acknowledges them."""

from __future__ import annotations

import os
import tempfile
import time
from collections import deque
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any, BinaryIO

import orjson

from bdi_rl.trace.batch import (
    MAX_BATCH_EVENTS,
    MAX_BODY_CHARS,
    MAX_PAYLOAD_BYTES,
    NUMPY,
    Batch,
    encode_body,
    encode_payload,
    local_batch,
)
from bdi_rl.trace.kinds import AGENT_START, KIND_LEVEL, RECORD_KINDS, RL_STEP, SCHEMA, STEPS, TraceLevel
from bdi_rl.trace.steps import MAX_ENTRIES, StepRecord


class Tracer:
    """Numbers one agent's events gaplessly and keeps them until the telemetry agent acks.

    ``pending`` holds the oldest unacknowledged events in memory; the shipper sends from it
    and :meth:`ack` drops what the telemetry agent has written. When telemetry cannot keep
    up or is unreachable, memory stays bounded: past ``memory_events`` the newer events go
    to a spill file and come back, in order, as acknowledgements free memory. Learning never
    waits for telemetry and no event is dropped.

    Step-level events go to :attr:`record` (``bdi_rl.trace.steps``), which becomes one
    ``steps`` event before any other event is numbered, so the order of events is kept.
    """

    #: Events kept in memory before newer ones spill to disk (a step record counts as the
    #: events it holds: ~0.1 KB each, a line event ~0.5 KB).
    MEMORY_EVENTS = 200_000

    def __init__(self, run: str, agent: str, level: TraceLevel, memory_events: int = MEMORY_EVENTS) -> None:
        self.run = run
        self.agent = agent
        self.level = level
        self.seq = 0
        self.closed = False
        self.episode = 0
        self.step = 0
        self.record = StepRecord()
        """the open step record (writers on hot paths append to it directly)"""
        self.record.stamp(0, 0)
        self.pending: deque[dict[str, Any]] = deque()
        self.acked = 0  # every seq below this is written by telemetry
        self.on_ack: Callable[[int], None] | None = None
        """called when telemetry acknowledges more events (``upto``: the next seq wanted)"""
        self.on_emit: Callable[[], None] | None = None
        """called at the next event, then cleared (wakes an idle shipper)"""
        self.memory_events = memory_events
        self.held = 0  # events in ``pending``, a step record counted as the events it holds
        self.spilled = 0  # lines in the spill file, not yet back in memory
        self._spill: BinaryIO | None = None
        self._spill_read = 0

    def set_run(self, run: str) -> None:
        """Name the run (agents in their own process learn it from telemetry after start)."""
        self.run = run
        for event in self.pending:
            event["run"] = run

    def close(self) -> None:
        """The agent has stopped (``agent.stop`` was its last event): record nothing more,
        even if peers still talk to it, so ``emitted`` stays the true count."""
        self.closed = True

    def stamp(self, episode: int, step: int) -> None:
        """What follows happens at ``episode``, ``step`` (the env's clock)."""
        self.episode = episode
        self.step = step
        record = self.record
        record.stamp(episode, step)
        if record.full:
            self.flush_record()

    def rl_rows(self, columns: Any, done: bool, epsilon: float) -> None:
        """A whole episode's Q-updates (``rl.qlearning.StepColumns``), in records of at most
        MAX_ENTRIES entries; the clock ends at the episode's last step."""
        n = len(columns.s)
        start = 0
        while start < n:
            record = self.record
            stop = min(n, start + max(1, MAX_ENTRIES - len(record)))
            record.rl_rows(columns, start, stop, done and stop == n, epsilon, self.episode)
            start = stop
            if record.full:
                self.flush_record()
        self.step = n

    def emit(self, kind: str, data: Mapping[str, Any]) -> None:
        """Record one event if the trace level asks for it: ``kind`` one of the constants of
        ``bdi_rl.trace.kinds``, ``data`` as that kind's TypedDict there says (``KIND_DATA``).
        A kind kept in step records goes to the open record; any other closes it first."""
        if KIND_LEVEL[kind] > self.level or self.closed:
            return
        if kind in _RECORDED:
            record = self.record
            if kind == RL_STEP and record.s and len(data.get("q") or ()) != len(record.q) // len(record.s):
                self.flush_record()  # rows of one record have Q rows of one width (or none)
            record.add(kind, data)  # type: ignore[arg-type]
            if record.full:
                self.flush_record()
            return
        self.flush_record()
        if kind == AGENT_START:
            self.record.reset()  # a new life: its definitions are numbered from 0
        self._number(kind, data, self.episode, self.step)

    def flush_record(self) -> None:
        """Close the open step record into a ``steps`` event, if it holds any."""
        record = self.record
        if self.closed:
            return
        at = record.at
        episode, step = at[1], at[2]
        data = record.close(self.episode, self.step)
        if data is not None:
            self._number(STEPS, data, episode, step)

    def _number(self, kind: str, data: Mapping[str, Any], episode: int, step: int) -> None:
        event = {
            "schema": SCHEMA,
            "run": self.run,
            "agent": self.agent,
            "seq": self.seq,
            "ts": time.time(),
            "kind": kind,
            "episode": episode,
            "step": step,
            "data": data,
        }
        weight = _weight(event)
        if self.spilled or (self.pending and self.held + weight > self.memory_events):
            self._spill_event(event)
        else:
            self.pending.append(event)
            self.held += weight
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
        if spill is None or not self.spilled or self.held > self.memory_events // 2:
            return
        spill.seek(self._spill_read)
        while self.spilled:
            line_start = spill.tell()
            event = orjson.loads(spill.readline())
            weight = _weight(event)
            if self.pending and self.held + weight > self.memory_events:
                spill.seek(line_start)  # not now: it comes back at the next acknowledgement
                break
            event["run"] = self.run  # the run may have been named after the event was spilled
            self.pending.append(event)
            self.held += weight
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
                self.held -= _weight(popleft())
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

    def next_local_batch(self, start: int = 0) -> Batch:
        """The oldest unacknowledged events from index ``start`` of ``pending``, for a
        telemetry agent or trace log of this process (``batch.local_batch``)."""
        return local_batch(self.run, self.agent, list(islice(self.pending, start, start + MAX_BATCH_EVENTS)))


#: Kinds that go to step records rather than being numbered one by one.
_RECORDED = frozenset(RECORD_KINDS)


def _weight(event: dict[str, Any]) -> int:
    """How many events a line holds (a step record: its entries)."""
    return len(event["data"]["ops"]) if event["kind"] == STEPS else 1
