"""The trace event format: one module shared by agents, telemetry, viewer and exporters.

An event is a plain dict (cheap to build on the hot path); it is serialised by orjson once,
when its batch is shipped, because per-event ``json.dumps`` costs ~25% of a plain Q-learning
loop (docs/ARCHITECTURE.md). This module says what an event is: the schema, the kinds (one
constant each), the level that records each and the fields of its ``data`` (a TypedDict
each), the check every line read or received passes, and reading a trace file back. It is
the one place a kind's name is written: everything else imports the constants
(``tests/test_events.py`` holds the package to that).
"""

# No ``from __future__ import annotations`` here: on Python 3.11 it hides NotRequired from
# TypedDict's required keys, which the check below is built from.
import io
import types
from collections.abc import Collection
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import (
    Any,
    BinaryIO,
    ClassVar,
    Final,
    Iterable,
    Literal,
    NotRequired,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

import msgspec
import numpy as np
import orjson

SCHEMA = "bdi-rl.trace/2"
#: The format before step records (every step-level event a line of its own): still read.
SCHEMA_V1 = "bdi-rl.trace/1"
#: numpy scalars (a Q-value, an action index) may reach event data: serialise them as numbers.
NUMPY = orjson.OPT_SERIALIZE_NUMPY
#: Longest literal / message text kept in one event (a shared-experience literal is ~12 KB).
MAX_TEXT_CHARS = 1024
#: The longest line a trace holds: telemetry writes none longer than one batch's payload
#: (``trace.batch.MAX_PAYLOAD_BYTES``, 1 MB), so a longer "line" (a run of NUL bytes, a
#: file that is no trace) is damage, and no reader holds more than this of one line in memory.
MAX_LINE_BYTES: Final = 1 << 20


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
            raise ValueError(f"trace level must be one of episode, step, cycle; got {name!r}") from None


# -- the kinds ----------------------------------------------------------------------------
# Plain str constants (module globals: as cheap as a literal where events are emitted).
RUN_START: Final = "run.start"
RUN_STOP: Final = "run.stop"
RUN_RESUME: Final = "run.resume"
TELEMETRY_RESTART: Final = "telemetry.restart"
AGENT_START: Final = "agent.start"
AGENT_STOP: Final = "agent.stop"
EPISODE_END: Final = "episode.end"
EVAL: Final = "eval"
QTABLE_SAVE: Final = "qtable.save"
QTABLE_LOAD: Final = "qtable.load"
MSG_SEND: Final = "msg.send"
MSG_RECV: Final = "msg.recv"
INTENTION_FAIL: Final = "intention.fail"
XMPP_RECONNECT: Final = "xmpp.reconnect"
BELIEF_ADD: Final = "belief.add"
BELIEF_DEL: Final = "belief.del"
GOAL_ADD: Final = "goal.add"
INTENTION_START: Final = "intention.start"
INTENTION_END: Final = "intention.end"
ACTION: Final = "action"
RL_STEP: Final = "rl.step"
CYCLE: Final = "cycle"
OPTIONS: Final = "options"
INTENTIONS: Final = "intentions"
STEPS: Final = "steps"
WORLD_STEP: Final = "world.step"
WORLD_LATE: Final = "world.late"

#: The kinds format 2 keeps in step records (``bdi_rl.trace.steps``), by op code: the code is
#: the index, so never reorder, only append. Format 1 wrote each as a line of its own.
RECORD_KINDS: tuple[str, ...] = (
    BELIEF_ADD,
    BELIEF_DEL,
    GOAL_ADD,
    INTENTION_START,
    INTENTION_END,
    ACTION,
    RL_STEP,
    CYCLE,
    OPTIONS,
    INTENTIONS,
)

#: The lowest level at which each kind is recorded.
KIND_LEVEL: dict[str, TraceLevel] = {
    RUN_START: TraceLevel.EPISODE,
    RUN_STOP: TraceLevel.EPISODE,
    RUN_RESUME: TraceLevel.EPISODE,
    TELEMETRY_RESTART: TraceLevel.EPISODE,
    AGENT_START: TraceLevel.EPISODE,
    AGENT_STOP: TraceLevel.EPISODE,
    EPISODE_END: TraceLevel.EPISODE,
    EVAL: TraceLevel.EPISODE,
    QTABLE_SAVE: TraceLevel.EPISODE,
    QTABLE_LOAD: TraceLevel.EPISODE,
    MSG_SEND: TraceLevel.EPISODE,
    MSG_RECV: TraceLevel.EPISODE,
    INTENTION_FAIL: TraceLevel.EPISODE,
    XMPP_RECONNECT: TraceLevel.EPISODE,
    BELIEF_ADD: TraceLevel.STEP,
    BELIEF_DEL: TraceLevel.STEP,
    GOAL_ADD: TraceLevel.STEP,
    INTENTION_START: TraceLevel.STEP,
    INTENTION_END: TraceLevel.STEP,
    ACTION: TraceLevel.STEP,
    RL_STEP: TraceLevel.STEP,
    CYCLE: TraceLevel.CYCLE,
    OPTIONS: TraceLevel.CYCLE,
    INTENTIONS: TraceLevel.CYCLE,
    STEPS: TraceLevel.STEP,
    WORLD_STEP: TraceLevel.STEP,
    WORLD_LATE: TraceLevel.EPISODE,
}


# -- each kind's data -----------------------------------------------------------------------
# What the writers put in ``data``, key for key: TypedDicts, so writers keep building plain
# dicts (no cost) that mypy checks where they are annotated, and telemetry checks every line
# received against them (:func:`check_event`): a missing, extra or wrongly typed field is
# refused. A float that is NaN or infinite is written as null (JSON has neither), so the
# check takes null for any float.


class RunStartData(TypedDict):
    spec: str
    env: str
    agents: list[str]
    """the agents' names (``bdi-rl run``) or bare JIDs (the telemetry role)"""


class RunStopData(TypedDict):
    failures: dict[str, str]
    """why each agent that did not finish stopped, by JID"""


class RunResumeData(TypedDict):
    agents: dict[str, int]
    """each learner's JID -> the episode its trace goes on from (readers drop later ones)"""


class TelemetryRestartData(TypedDict):
    recovered_events: int


class WorldData(TypedDict):
    """A grid world's map (``rl.envs.EnvAdapter.world``), so readers draw episodes on it."""

    family: str
    """frozenlake, cliffwalking, taxi or lbforaging (a shared world's open field)"""
    rows: int
    cols: int
    map: list[str]
    """a string per row, a letter per cell (FrozenLake S F H G; CliffWalking S C G .; Taxi R G Y B .)"""
    walls: NotRequired[list[list[int]]]
    """Taxi: [row, col] of each cell with a wall on its east side"""


class AgentStartData(TypedDict):
    jid: str
    asl: str
    env: NotRequired[str]
    """learners: the env id"""
    actions: NotRequired[list[str]]
    """learners: what each action index does ("left", ...)"""
    world: NotRequired[WorldData]
    """learners on a grid world: its map (traces before it lack it: readers rebuild it from the spec)"""
    seats: NotRequired[list[list[str]]]
    """a shared world's agent: ``[seat, agent name]`` of each of its agents, in its order"""


class AgentStopData(TypedDict):
    reason: str
    """why it stopped: "finished", "interrupted" or the failure"""
    emitted: int
    """events the agent emitted, this one included"""
    replayed_steps: NotRequired[int]
    joint_episodes: NotRequired[int]
    """a shared world's agent: the joint episodes it began"""
    joint_steps: NotRequired[int]
    """a shared world's agent: the joint steps it took"""
    seats_left: NotRequired[list[str]]
    """a shared world's agent: the agents that left it before they finished training (their
    seats played the default action from then on)"""


EpisodeEndData = TypedDict(
    "EpisodeEndData",
    {
        "return": float,
        "length": int,
        "outcome": str,
        "epsilon": float,
        "goal": NotRequired[list[int]],  # moving goals: the episode's goal cell
        "success": NotRequired[bool],  # by the env kind's rule (rl.success); older traces lack it
    },
)


class EvalData(TypedDict):
    episodes: int
    mean_return: float
    success_rate: float
    """by the env kind's rule (rl.success)"""
    mean_length: float
    after_episodes: NotRequired[int]
    """training episodes done when it ran (``eval_every``); older traces lack it"""
    seconds: NotRequired[float]
    """its wall time (summaries leave evaluations during training out of training time)"""


class WorldStepData(TypedDict):
    """One step of a shared world (``bdi.world``), written once by the world's own tracer:
    every acting agent's state, action and reward, in the world's seat order."""

    episode: int
    """the world's joint episode, from 0 (as each learner numbers its episodes)"""
    step: int
    """the step within it, from 1"""
    agents: list[str]
    """the bdi-rl agents that acted (their seats' order)"""
    states: list[int]
    """each one's observation when it chose"""
    actions: list[int]
    rewards: list[float]
    done: bool
    """the episode ended with this step"""
    defaulted: NotRequired[list[str]]
    """agents that had not chosen by the deadline: they played the world's default action"""
    positions: NotRequired[list[list[int]]]
    """a grid world: every agent's ``[x, y]`` after the step, in the world's order (all of
    ``agent.start``'s ``seats``, not only those that acted)"""
    items: NotRequired[list[list[int]]]
    """a grid world: ``[x, y, level]`` of each item still there after the step (lbforaging's food)"""


class WorldLateData(TypedDict):
    """A barrier of a shared world went on at its deadline without some of its agents
    (``bdi.world``): written by the world agent."""

    call: str
    """the barrier: ``.rl_reset``, ``.rl_act`` or ``.rl_evaluate``"""
    agents: list[str]
    """the agents it went on without (their seats played the default action)"""
    stuck: NotRequired[list[str]]
    """those of them the world finished as stuck (too many deadlines missed in a row)"""


class QtableSaveData(TypedDict):
    path: str
    """relative to the run directory"""
    episodes: int


class QtableLoadData(TypedDict):
    path: str
    episodes: int
    checksum: str | None
    """None for a checkpoint of format 1"""
    epsilon: float
    task_change: str | None


class MessageText(TypedDict):
    """A message body as ``msg.send`` and ``msg.recv`` carry it."""

    content: str
    """the body, clipped to MAX_TEXT_CHARS"""
    content_chars: NotRequired[int]
    """the body's length when it was clipped"""


class MsgSendData(TypedDict):
    to: str
    performative: str
    content: str
    content_chars: NotRequired[int]


MsgRecvData = TypedDict(
    "MsgRecvData",
    {
        "from": str,
        "performative": str | None,  # None: a message without an ilf_type
        "content": str,
        "content_chars": NotRequired[int],
        "rejected": NotRequired[str],  # why the message was refused
    },
)


class IntentionFailData(TypedDict):
    plan: str | None
    error: str


class XmppReconnectData(TypedDict):
    down_s: float


class BeliefAddData(TypedDict):
    belief: str
    source: str
    """whose belief: "self", "percept" or the telling agent's JID"""
    sources: NotRequired[list[str]]
    """every source, when there are several (a belief told by four learners; its removal
    when the last source goes); ``source`` is the first of them"""


class BeliefDelData(TypedDict):
    belief: str
    source: str
    sources: NotRequired[list[str]]


class GoalAddData(TypedDict):
    goal: str
    source: str


class IntentionStartData(TypedDict):
    trigger: str
    plan: str
    source: str


class IntentionEndData(TypedDict):
    plan: str


class ActionData(TypedDict):
    name: str
    args: list[Any]
    result: NotRequired[Any]
    """functions only"""


class RlStepData(TypedDict):
    s: int
    a: int
    r: float
    s2: int
    done: bool
    q_before: float
    q_after: float
    epsilon: float
    q: NotRequired[list[float]]
    """Q[s] the action was chosen from"""


class CycleData(TypedDict):
    n: int
    plan: str | None
    depth: int
    line: int | None
    intentions: int
    events: NotRequired[list[str]]
    """format 2: the events this cycle turned into intentions, in the order it took them"""
    pending: NotRequired[list[str]]
    """format 2: the events still waiting when the cycle ended"""


class OptionsData(TypedDict):
    """A plan selection (Jason's "options"): for an event, the plans whose trigger matches
    (relevant), those whose context holds too (applicable), and the one chosen."""

    event: str
    relevant: list[str]
    applicable: list[str]
    selected: str | None


class IntendedMeans(TypedDict):
    """One frame of an intention: the plan pushed for ``trigger``, and where it is."""

    trigger: str
    plan: str
    file: str
    line: int
    """of the instruction it runs next (its first, when just pushed)"""


class StackData(TypedDict):
    id: int
    means: list[IntendedMeans]
    """the stack, bottom (the intention's first plan) first"""
    state: str
    """"running", "current" (the one the cycle runs) or "suspended" (.wait, an ask)"""


class IntentionsData(TypedDict):
    """Every intention's stack of intended means, after a plan was pushed or popped."""

    intentions: list[StackData]


class RlColumns(TypedDict):
    """A record's Q-updates, one row per ``rl.step``. ``q`` holds, row after row, Q[s] as
    each action was chosen from it (each as long as the env has actions: row k is
    ``q[k*n : (k+1)*n]`` with ``n = len(q) // len(s)``, and Q[s, a] before the update is its
    element ``a``); ``done`` lists the rows that ended an episode; ``epsilon[j]`` holds from
    row ``eps_rows[j]`` on."""

    s: list[int]
    a: list[int]
    r: list[float]
    s2: list[int]
    done: list[int]
    q_after: list[float]
    q: list[float]
    epsilon: list[float]
    eps_rows: list[int]
    q_before: NotRequired[list[float]]
    """only in a record whose rows have no Q row (``q`` empty): Q[s, a] before, per row"""


class Keyframe(TypedDict):
    """The mind before a record's first entry, as definition ids."""

    beliefs: list[int]
    """``belief.add`` definitions: every belief with its source"""
    intentions: list[int]
    """``intention.start`` definitions: every running plan, oldest first"""


class StepsData(TypedDict):
    """A step record (format 2): the step-level events of one stretch of an agent's life."""

    ops: list[int]
    """per event, its kind as an index into RECORD_KINDS"""
    refs: list[int]
    """per event, its data: a definition id, or for rl.step / cycle a row of ``rl`` / ``cycles``"""
    at: list[int]
    """(entry, episode, step) triples: events from ``entry`` on happened at (episode, step)"""
    def0: int
    """the id of ``defs[0]``: each agent's definitions are numbered from 0, without gaps"""
    defs: list[dict[str, Any]]
    """new definitions, each the data of the event kind that refers to it"""
    keyframe: NotRequired[Keyframe]
    rl: NotRequired[RlColumns]
    cycles: NotRequired[list[CycleData]]


#: Each kind's ``data``.
KIND_DATA: dict[str, Any] = {
    RUN_START: RunStartData,
    RUN_STOP: RunStopData,
    RUN_RESUME: RunResumeData,
    TELEMETRY_RESTART: TelemetryRestartData,
    AGENT_START: AgentStartData,
    AGENT_STOP: AgentStopData,
    EPISODE_END: EpisodeEndData,
    EVAL: EvalData,
    QTABLE_SAVE: QtableSaveData,
    QTABLE_LOAD: QtableLoadData,
    MSG_SEND: MsgSendData,
    MSG_RECV: MsgRecvData,
    INTENTION_FAIL: IntentionFailData,
    XMPP_RECONNECT: XmppReconnectData,
    BELIEF_ADD: BeliefAddData,
    BELIEF_DEL: BeliefDelData,
    GOAL_ADD: GoalAddData,
    INTENTION_START: IntentionStartData,
    INTENTION_END: IntentionEndData,
    ACTION: ActionData,
    RL_STEP: RlStepData,
    CYCLE: CycleData,
    OPTIONS: OptionsData,
    INTENTIONS: IntentionsData,
    STEPS: StepsData,
    WORLD_STEP: WorldStepData,
    WORLD_LATE: WorldLateData,
}

REQUIRED_FIELDS = ("schema", "run", "agent", "seq", "ts", "kind", "episode", "step", "data")


class TraceFormatError(ValueError):
    """A batch or event that does not follow the schema."""


class TraceFileError(TraceFormatError):
    """A trace file that cannot be continued as it is, as one line: ``"<path>:<line>: <what
    is wrong>"``. Raised before the file is changed (nothing is cut, nothing appended)."""


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
    return Union[args] if origin is types.UnionType else origin[args]


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
if _DATA_STRUCTS.keys() != KIND_LEVEL.keys():
    raise RuntimeError("trace.events: every kind needs a level in KIND_LEVEL and data in KIND_DATA")

#: The kinds a line may have in each format: format 1 wrote every kind it knew as a line;
#: format 2 writes the record kinds only inside ``steps`` lines.
LINE_KINDS = {
    SCHEMA_V1: tuple(kind for kind in KIND_DATA if kind not in (OPTIONS, INTENTIONS, STEPS)),
    SCHEMA: tuple(kind for kind in KIND_DATA if kind not in RECORD_KINDS),
}


def _event_decoder(schema: str) -> msgspec.json.Decoder:
    base = msgspec.defstruct(f"Event{schema[-1]}", [("schema", Literal[schema])], bases=(CheckedEvent,), kw_only=True)
    return msgspec.json.Decoder(
        Union[
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


class _NotJson(TraceFormatError):
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
            raise _NotJson(str(exc)) from None
        raise TraceFormatError(reason) from None
    except msgspec.DecodeError as exc:
        raise _NotJson(str(exc)) from None
    # The decode typed every other field, so only a ``data`` last can end the line in "}}"
    # (our encoder always writes it last).
    if not line.endswith(b"}}"):
        raise TraceFormatError("data must be an object and the last field")
    if event.kind == STEPS:
        check_record(event.data)  # type: ignore[attr-defined]
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
    rl = data.rl
    rows = 0
    if rl is not msgspec.UNSET:
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
        except _NotJson as exc:
            raise _NotJson(f"not JSON: {exc}") from None
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
            def0, defined = event.data.def0, self.next_def.get(agent, 0)  # type: ignore[attr-defined]
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
            data = event.data  # type: ignore[attr-defined]
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
            except _NotJson as exc:
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
    from bdi_rl.trace.steps import expanded  # steps builds on this module

    with open(path, "rb") as f:
        return expanded(orjson.loads(line) for line in f if line.strip())
