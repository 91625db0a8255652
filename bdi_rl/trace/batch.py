"""Trace batches: how events travel from an agent to the telemetry agent.

A batch carries its events as the JSONL lines telemetry appends to the trace as they are
(checked, never re-encoded), zstd-compressed when it travels over XMPP: see BENCHMARKS.md,
"Trace transport".
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson
import zstandard

from bdi_rl.trace.check import check_event
from bdi_rl.trace.errors import TraceFormatError

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


#: One compressor per process: level 1 compresses trace JSONL ~5.7x at ~0.7 µs per event,
#: 3.5x faster than zlib's fastest level with a better ratio (BENCHMARKS.md).
_COMPRESSOR = zstandard.ZstdCompressor(level=1)
_DECOMPRESSOR = zstandard.ZstdDecompressor()
_ZSTD_MAGIC_B64 = "KLUv/"  # base64 of zstd's frame magic 28 b5 2f fd


def encode_payload(run: str, agent: str, events: list[dict[str, Any]]) -> bytes:
    """A header line naming the batch, then one JSONL line per event."""
    header = {
        "schema": BATCH_SCHEMA,
        "run": run,
        "agent": agent,
        "first": events[0]["seq"] if events else 0,
        "count": len(events),
    }
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


def local_batch(run: str, agent: str, events: list[dict[str, Any]]) -> Batch:
    """``events`` as a batch for a TraceLog of this process: encoded once, as a body's lines
    are, with nothing to decode and check again. Only for events bdi-rl's own tracer made in
    this process (a body from anywhere else goes through :func:`decode_batch`): decoding and
    checking a step-level run's records again was ~5 % of its process (BENCHMARKS.md)."""
    jsonl = encode_lines(events)
    lines = jsonl.split(b"\n")
    lines.pop()  # after the last newline (orjson escapes any in a string)
    first = events[0]["seq"] if events else 0
    return Batch(run, agent, first, lines, [event["kind"] for event in events], jsonl)


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
