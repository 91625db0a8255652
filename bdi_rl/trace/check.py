"""The check of trace lines: one line (:func:`check_event`, a step record's references and
definitions with it, :func:`check_record`), and a whole trace line after line
(:class:`TraceChecker`). The one checker of event lines, for batches telemetry receives and
trace files read back (``run --resume``, every reader).
"""

import types
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import msgspec
import numpy as np

from bdi_rl.trace.errors import TraceFormatError
from bdi_rl.trace.kinds import (
    AGENT_START,
    BELIEF_ADD,
    BELIEF_DEL,
    CYCLE,
    KIND_DATA,
    KIND_LEVEL,
    LINE_KINDS,
    RECORD_KINDS,
    RL_STEP,
    SCHEMA,
    SCHEMA_V1,
    STEPS,
)


class _WireEvent(msgspec.Struct, forbid_unknown_fields=True):
    """One event line with ``data`` left as raw JSON: what a line that failed the check is
    read as again, to say what is wrong with it."""

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


class CheckedEvent(msgspec.Struct, tag_field="kind", forbid_unknown_fields=True, gc=False):
    """One event line as telemetry checks it: decoded in C, in one pass, into the struct type
    of its kind (the kind is the tag) with ``data`` checked field by field, never built as
    dicts: ~0.2 µs a line more than leaving ``data`` unchecked (BENCHMARKS.md, "Trace
    transport"); a Python check per field would cost several times that."""

    kind: ClassVar[str]
    schema: str  # each format's subclass narrows it to its own name, checked in C
    run: str
    agent: str
    seq: int
    ts: float
    episode: int
    step: int
    if TYPE_CHECKING:  # a field of each kind's subclass, a struct made at import: typed Any
        data: Any


def _wire_type(tp: Any) -> Any:
    """``tp`` as it reads back from JSON: a float may be null (orjson writes NaN as null)."""
    if tp is float:
        return float | None
    if is_typeddict(tp):
        return _data_struct(tp)
    origin = get_origin(tp)
    if origin not in (list, dict, Union, types.UnionType):
        return tp
    args = tuple(_wire_type(arg) for arg in get_args(tp))
    return Union[args] if origin is types.UnionType else origin[args]  # noqa: UP007 (built from a tuple)


def _data_struct(record: Any) -> type[msgspec.Struct]:
    """A msgspec struct checking what ``record`` (a TypedDict) says, no key more or less."""
    required = record.__required_keys__
    fields = [
        (name, _wire_type(tp)) if name in required else (name, _wire_type(tp), msgspec.UNSET)
        for name, tp in get_type_hints(record).items()
    ]
    return msgspec.defstruct(record.__name__, fields, kw_only=True, forbid_unknown_fields=True, gc=False)


_DATA_STRUCTS = {kind: _data_struct(record) for kind, record in KIND_DATA.items()}
#: One decoder per kind for ``data`` alone: what names the field a refused line got wrong.
_DATA_DECODERS = {kind: msgspec.json.Decoder(struct) for kind, struct in _DATA_STRUCTS.items()}


def _event_decoder(schema: str) -> msgspec.json.Decoder[CheckedEvent]:
    """Every kind of the schema as a struct of its own, each a :class:`CheckedEvent`."""
    base = msgspec.defstruct(f"Event{schema[-1]}", [("schema", Literal[schema])], bases=(CheckedEvent,), kw_only=True)
    return msgspec.json.Decoder(
        Union[  # noqa: UP007 (built from a tuple)
            tuple(
                msgspec.defstruct(
                    f"{_DATA_STRUCTS[kind].__name__}Event{schema[-1]}",
                    [("data", _DATA_STRUCTS[kind])],
                    bases=(base,),
                    tag=kind,
                    namespace={"kind": kind},
                )
                for kind in LINE_KINDS[schema]
            )
        ]
    )


_EVENT = {schema: _event_decoder(schema) for schema in LINE_KINDS}
#: How a format-2 line starts, byte for byte as orjson writes it (the schema is written first).
_V2_PREFIX = b'{"schema":"' + SCHEMA.encode() + b'"'


class NotJson(TraceFormatError):
    """A line that is not JSON at all (a torn write), as opposed to JSON that is no event."""


def check_event(line: bytes) -> CheckedEvent:
    """One JSONL line checked against the event schema: every field present with its type and
    no other, a schema bdi-rl reads (format 2, or format 1 of older traces), a kind of that
    format, ``data`` an object with the fields of that kind (:data:`KIND_DATA`), and a step
    record's references and definitions sound (:func:`check_record`). The one checker of
    event lines, for batches received and trace files read back; TraceFormatError with the
    reason."""
    schema = SCHEMA if line.startswith(_V2_PREFIX) else SCHEMA_V1
    try:
        event = _EVENT[schema].decode(line)
    except msgspec.ValidationError:
        try:
            reason = _refusal(line)
        except msgspec.DecodeError as exc:  # typed up to a wrong field, then not JSON (a damaged byte)
            raise NotJson(str(exc)) from None
        raise TraceFormatError(reason) from None
    except msgspec.DecodeError as exc:
        raise NotJson(str(exc)) from None
    # The decode typed every other field, so only a ``data`` last can end the line in "}}"
    # (our encoder always writes it last).
    if not line.endswith(b"}}"):
        raise TraceFormatError("data must be an object and the last field")
    if event.kind == STEPS:
        check_record(event.data)
    return event


def _refusal(line: bytes) -> str:
    """Why :func:`check_event` refused a line that is JSON (the slow path: read it again)."""
    try:
        event = _WIRE_EVENT.decode(line)
    except msgspec.ValidationError as exc:
        return f"not a trace event: {exc}"
    if event.schema not in LINE_KINDS:
        return f"event schema is not {SCHEMA} (or {SCHEMA_V1})"
    if event.kind not in LINE_KINDS[event.schema]:
        if event.kind in KIND_LEVEL:
            return f"a {event.schema} line cannot be of kind {event.kind!r}"
        return f"unknown event kind {event.kind!r}"
    if not bytes(event.data).startswith(b"{"):
        return "data must be an object and the last field"
    try:
        _DATA_DECODERS[event.kind].decode(event.data)
    except msgspec.ValidationError as exc:  # "... - at `$.s`": the field
        return f"{event.kind} data: {exc}".replace("`$.", "`data.").replace("`$`", "`data`")
    return "not a trace event"  # not reached: the checks above are the decode's


#: Record ops whose reference is a row of the record (rl columns, cycles), not a definition.
_OP_RL, _OP_CYCLE = RECORD_KINDS.index(RL_STEP), RECORD_KINDS.index(CYCLE)


#: Records with at most this many entries are checked in plain Python: numpy's fixed cost per
#: call (~50 µs a record) is most of the check of a one-episode record (most records are).
_SMALL_RECORD = 512


def check_record(data: Any) -> None:
    """What the C decode of a ``steps`` line cannot say: one reference per op, ops known,
    every reference to a definition or row that exists, stamps in order, and each new
    definition the data of the kind that uses it (TraceFormatError naming what is wrong).
    Whether the definitions made in earlier lines exist is the trace's check: the record's
    ``def0`` must be the number its agent made before (:class:`TraceChecker`)."""
    ops, refs, at = data.ops, data.refs, data.at
    n = len(ops)
    small = n <= _SMALL_RECORD
    if not n or len(refs) != n:
        raise TraceFormatError(f"steps data: {len(refs)} refs for {n} ops (one each, at least one)")
    if len(at) % 3 or not at or at[0] != 0 or at[-3] > n or not _in_order(at[::3], small):
        raise TraceFormatError("steps data: at must be (entry, episode, step) triples from entry 0, in order")
    rows = _rl_rows(data.rl) if data.rl is not msgspec.UNSET else 0
    cycles = len(data.cycles) if data.cycles is not msgspec.UNSET else 0
    def0 = data.def0
    limit = def0 + len(data.defs)
    if def0 < 0:
        raise TraceFormatError("steps data: def0 must be 0 or more")
    new = (_new_definitions if small else _new_definitions_numpy)(ops, refs, rows, cycles, def0, limit)
    for op, local in new:
        kind = RECORD_KINDS[op]
        _check_definition(BELIEF_ADD if kind == BELIEF_DEL else kind, data.defs[local])
    # ``cycles`` rows were typed by the line's decode already (CycleData structs, not dicts).
    frame = data.keyframe
    if frame is not msgspec.UNSET:
        if any(not 0 <= ref < limit for ref in (*frame.beliefs, *frame.intentions)):
            raise TraceFormatError("steps data: the keyframe refers to a definition that does not exist")


def _rl_rows(rl: Any) -> int:
    """How many rows a record's rl columns (:class:`~bdi_rl.trace.kinds.RlColumns`) hold,
    once they are checked to be columns of one table."""
    rows = len(rl.s)
    without_q = rl.q_before is not msgspec.UNSET
    if any(len(column) != rows for column in (rl.a, rl.r, rl.s2, rl.q_after)) or (
        (rl.q or len(rl.q_before) != rows) if without_q else rows and (not rl.q or len(rl.q) % rows)
    ):
        raise TraceFormatError("steps data: rl columns of different lengths")
    if len(rl.epsilon) != len(rl.eps_rows) or not rl.eps_rows or rl.eps_rows[0] != 0:
        raise TraceFormatError("steps data: rl epsilon must be given from row 0")
    if rl.done and not (0 <= min(rl.done) and max(rl.done) < rows):
        raise TraceFormatError("steps data: rl done names a row that does not exist")
    return rows


def _in_order(values: list[int], small: bool) -> bool:
    if small:
        return values == sorted(values)  # in C: ~5x a comparison of neighbours in Python
    return not (np.diff(np.asarray(values, dtype=np.int64)) < 0).any()


def _unknown_op(op: int) -> TraceFormatError:
    return TraceFormatError(f"steps data: unknown op {op}")


def _wrong_ref(op: int, ref: int) -> TraceFormatError:
    return TraceFormatError(f"steps data: a {RECORD_KINDS[op]} refers to {ref}, which the record does not hold")


def _new_definitions(
    ops: list[int], refs: list[int], rows: int, cycles: int, def0: int, limit: int
) -> list[tuple[int, int]]:
    """Every reference checked against what the record holds; the (op, index in ``defs``)
    of each new definition it uses, sorted (as :func:`_new_definitions_numpy` gives them)."""
    if min(ops) < 0 or max(ops) >= len(RECORD_KINDS):
        raise _unknown_op(next(op for op in ops if not 0 <= op < len(RECORD_KINDS)))
    if min(refs) < 0:
        i = next(i for i, ref in enumerate(refs) if ref < 0)
        raise _wrong_ref(ops[i], refs[i])
    op_rl, op_cycle = _OP_RL, _OP_CYCLE  # locals: this loop runs for every entry
    new = []
    for op, ref in zip(ops, refs, strict=True):
        if op == op_rl:
            if ref >= rows:
                raise _wrong_ref(op, ref)
        elif op == op_cycle:
            if ref >= cycles:
                raise _wrong_ref(op, ref)
        elif ref >= def0:
            if ref >= limit:
                raise _wrong_ref(op, ref)
            new.append((op, ref - def0))
    return sorted(set(new))


def _new_definitions_numpy(
    ops: list[int], refs: list[int], rows: int, cycles: int, def0: int, limit: int
) -> list[tuple[int, int]]:
    """:func:`_new_definitions` in numpy: a record holds up to 4096 entries."""
    o = np.asarray(ops, dtype=np.int64)
    r = np.asarray(refs, dtype=np.int64)
    unknown = (o < 0) | (o >= len(RECORD_KINDS))
    if unknown.any():
        raise _unknown_op(int(o[unknown][0]))
    is_rl, is_cycle = o == _OP_RL, o == _OP_CYCLE
    bound = np.where(is_rl, rows, np.where(is_cycle, cycles, limit))
    wrong = (r < 0) | (r >= bound)
    if wrong.any():
        i = int(wrong.argmax())
        raise _wrong_ref(int(o[i]), int(r[i]))
    new = ~(is_rl | is_cycle) & (r >= def0)
    if not new.any():
        return []
    keys = np.unique(o[new] * (limit + 1) + (r[new] - def0)).tolist()
    return [divmod(key, limit + 1) for key in keys]


def _check_definition(kind: str, value: Any) -> None:
    try:
        msgspec.convert(value, _DATA_STRUCTS[kind])
    except msgspec.ValidationError as exc:
        raise TraceFormatError(f"steps data: a {kind} definition: {exc}") from None


class LineOutOfTurn(TraceFormatError):
    """An event sound in itself that is not the next one of its agent (a seq, or a record's
    first definition, out of turn); ``ahead``: it comes after a gap in the lines of an agent
    the trace has already shown (lines lost before it), so a reader reading around the
    damage can go on from it (:meth:`TraceChecker.take`). An agent's first line is never
    ahead: a line of an agent the trace never started is someone else's, not a gap."""

    def __init__(self, message: str, event: CheckedEvent, ahead: bool) -> None:
        super().__init__(message)
        self.event = event
        self.ahead = ahead


class TraceChecker:
    """The check of a trace read from its first line on, one line after the other: each line
    an event (:func:`check_event`) of the trace's run (``run``; None: the run its first line
    names), the next seq of its agent (gapless from 0, each once), and a step record's first
    definition (``def0``) the next of its agent's life (numbered from 0 again at each
    ``agent.start``): so every definition a record refers to is in the trace, once.

    The one check of a trace file: ``run --resume`` and ``telemetry --run`` apply it
    (:func:`check_trace`) before continuing one, every reader (``readers.runindex``) as it
    indexes one. It holds a few integers per agent, so a reader can keep it with its index."""

    def __init__(self, run: str | None = None) -> None:
        self.run = run
        self.next_seq: dict[str, int] = {}
        """each agent's next seq"""
        self.next_def: dict[str, int] = {}
        """each agent's next definition id in its current life"""

    def check(self, line: bytes) -> CheckedEvent:
        """The event ``line`` (without its newline) holds, if it is the trace's next one;
        TraceFormatError saying why not (a :class:`LineOutOfTurn` for a sound event out of
        turn). The checker's state moves on only for an event it returns."""
        try:
            event = check_event(line)
        except NotJson as exc:
            raise NotJson(f"not JSON: {exc}") from None
        if self.run is None:
            self.run = event.run
        elif event.run != self.run:
            raise TraceFormatError(f"an event of run {event.run!r}, not of {self.run!r}")
        agent = event.agent
        expected = self.next_seq.get(agent, 0)
        if event.seq != expected:
            raise LineOutOfTurn(
                f"seq {event.seq} of {agent} where the trace needs {expected} "
                "(each agent's events are gapless from 0, each once)",
                event,
                event.seq > expected and agent in self.next_seq,
            )
        if event.kind == STEPS:
            def0, defined = event.data.def0, self.next_def.get(agent, 0)
            if def0 != defined:
                raise LineOutOfTurn(
                    f"steps data: def0 {def0} where {agent} has made {defined} definitions "
                    "(its records must number them on, without gaps)",
                    event,
                    def0 > defined,
                )
        self.take(event)
        return event

    def take(self, event: CheckedEvent) -> None:
        """Go on from ``event`` as if it were the next one (what :meth:`check` does with a
        sound event; a reader reading around lines lost before it calls it too)."""
        agent = event.agent
        self.next_seq[agent] = event.seq + 1
        if event.kind == STEPS:
            data = event.data
            self.next_def[agent] = data.def0 + len(data.defs)
        elif event.kind == AGENT_START:  # a new life: definitions from 0
            self.next_def[agent] = 0

    def pass_over(self, line: bytes) -> None:
        """A line that failed :meth:`check`, left out by a reader reading around it: if it is
        still an event envelope in turn (only its ``data`` is wrong), its agent's next line is
        in turn after it, so the damage is this one line, not the one after it as well."""
        try:
            event = _WIRE_EVENT.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return
        if event.seq != self.next_seq.get(event.agent, 0) or event.run != (self.run or event.run):
            return
        self.next_seq[event.agent] = event.seq + 1
        if event.kind == STEPS:  # its definitions are lost with it, but numbered on
            try:
                data = msgspec.json.decode(event.data)
                def0, defs = data["def0"], data["defs"]
            except (msgspec.DecodeError, TypeError, KeyError):
                return
            if type(def0) is int and def0 == self.next_def.get(event.agent, 0) and isinstance(defs, list):
                self.next_def[event.agent] = def0 + len(defs)
        elif event.kind == AGENT_START:
            self.next_def[event.agent] = 0

    def state(self) -> dict[str, Any]:
        """What it holds, as JSON (a reader's index cache keeps it)."""
        return {"run": self.run, "next_seq": self.next_seq, "next_def": self.next_def}

    @classmethod
    def from_state(cls, state: Any) -> "TraceChecker":
        """The checker :meth:`state` described; ValueError if ``state`` is not such a thing."""
        if not isinstance(state, dict) or not isinstance(state.get("run"), (str, type(None))):
            raise ValueError("not a trace checker's state")
        checker = cls(state["run"])
        for name in ("next_seq", "next_def"):
            counts = state.get(name)
            if not isinstance(counts, dict) or not all(
                isinstance(k, str) and type(v) is int and v >= 0 for k, v in counts.items()
            ):
                raise ValueError(f"a trace checker's {name} is not counts by agent")
            setattr(checker, name, counts)
        return checker
