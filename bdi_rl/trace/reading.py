"""Reading a trace file: one bounded line at a time (a line is at most MAX_LINE_BYTES, so no
reader holds more of a damaged file in memory), the check of a whole file before it is
continued (:func:`check_trace`), and every event of a file as format 1 has them
(:func:`read_trace`)."""

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

from bdi_rl.trace.check import NotJson, TraceChecker
from bdi_rl.trace.errors import TraceFileError, TraceFormatError
from bdi_rl.trace.steps import expanded

#: The longest line a trace holds: telemetry writes none longer than one batch's payload
#: (``trace.batch.MAX_PAYLOAD_BYTES``, 1 MB), so a longer "line" (a run of NUL bytes, a
#: file that is no trace) is damage, and no reader holds more than this of one line in memory.
MAX_LINE_BYTES: Final = 1 << 20


def read_line(f: BinaryIO, limit: int = MAX_LINE_BYTES) -> tuple[bytes | None, int, bool]:
    """The next line of ``f``: (its bytes with the newline, or None for a line longer than
    ``limit``, which is read past in bounded pieces and never held; its length in bytes;
    whether it ends in a newline). ``(b"", 0, False)`` at the end of the file."""
    line = f.readline(limit + 1)
    if line.endswith(b"\n") or len(line) <= limit:
        return line, len(line), line.endswith(b"\n")
    size, ended = len(line), False
    while not ended:
        skipped, ended = skip_line(f, 1 << 30)
        size += skipped
        if not skipped:
            break
    return None, size, ended


#: Bytes read at a time past a "line" too long to be one (~3 ms of a 2 GB run of NUL bytes).
SKIP_PIECE = 8 << 20


def skip_line(f: BinaryIO, most: int) -> tuple[int, bool]:
    """Read past the rest of a line from ``f``'s position, at most ``most`` bytes of it, in
    bounded pieces (``readline`` on a 2 GB run of NUL bytes took 9 s, this 0.8 s); ``f`` is
    left after its newline, or where it stopped. Returns (bytes read past, whether the
    newline was among them)."""
    start = f.tell()
    done = 0
    while done < most:
        piece = f.read(min(SKIP_PIECE, most - done))
        if not piece:
            break
        end = piece.find(b"\n")
        if end >= 0:
            done += end + 1
            f.seek(start + done)
            return done, True
        done += len(piece)
    return done, False


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
    is only read. Every line must pass :class:`TraceChecker` (events of ``run``, each the
    next of its agent), as telemetry writes them. Only the last line may be torn (no
    newline, or not JSON); any other bad line is a TraceFileError naming it: cutting the
    file there would delete every good event after it. Memory stays bounded whatever the
    file holds (a line is at most MAX_LINE_BYTES)."""
    checker = TraceChecker(run)
    kept: list[bytes] = []
    good_end = count = 0
    with open(path, "rb") as f:
        number = 0
        while True:
            line, size, ended = read_line(f)
            if not size:
                break
            number += 1
            if not ended:  # only the last line can lack a newline
                return TraceScan(count, good_end, "no newline at its end", checker.next_seq, kept)
            if line is None:
                if not f.read(1):  # the last line: a torn write (a crash's block of zeros)
                    return TraceScan(count, good_end, _too_long(size), checker.next_seq, kept)
                raise TraceFileError(f"{path}:{number}: {_too_long(size)}")
            text = line[:-1]
            try:
                event = checker.check(text)
            except NotJson as exc:
                if not f.read(1):  # the last line: a torn write
                    return TraceScan(count, good_end, f"{exc}", checker.next_seq, kept)
                raise TraceFileError(f"{path}:{number}: {exc}") from None
            except TraceFormatError as exc:
                raise TraceFileError(f"{path}:{number}: {exc}") from None
            if event.kind in keep:
                kept.append(text)
            good_end += size
            count += 1
    return TraceScan(count, good_end, None, checker.next_seq, kept)


def _too_long(size: int) -> str:
    return f"a line of {size} bytes, longer than any trace line ({MAX_LINE_BYTES}): not an event"


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Every event of a trace JSONL file, in file order, as format 1 has them: each step
    record expanded into the events it holds (``bdi_rl.trace.steps``)."""
    with open(path, "rb") as f:
        return expanded(orjson.loads(line) for line in f if line.strip())
