"""The trace event format: one module shared by agents, telemetry, viewer and exporters.

An event is a plain dict (cheap to build on the hot path); it is serialised by orjson once,
when its batch is shipped, because per-event ``json.dumps`` costs ~25% of a plain Q-learning
loop (docs/ARCHITECTURE.md). This module says what an event is: the schema, the kinds and the
level that records each, the check every line read or received passes, and reading a trace
file back.
"""

from __future__ import annotations

import io
from collections.abc import Collection
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Iterable

import msgspec
import orjson

SCHEMA = "bdi-rl.trace/1"
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
