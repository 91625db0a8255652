"""An index over one run directory's trace, for the viewer, ``inspect`` and exporters.

The trace is append-only JSONL (``bdi_rl.trace``), possibly still growing, in format 2 (step
records) or format 1 (a line per event), or both (an old run resumed). The index reads it
once, from where it stopped last time, and keeps per agent: the byte offset of every line and
the position of its first event (any event is one seek and at most one record's expansion
away), the episode and evaluation series (learning curves), the messages, and snapshots of
the mind: format 1's every ``CHECKPOINT`` events (folded while indexing), format 2's at the
records' keyframes (read when first needed; a record is counted from its ``ops``, never
expanded while indexing). The mind at any position is a snapshot plus the events since it
folded on top, never a rescan. It never writes to the run directory.

Building the index and reading through it (events at positions, the mind at a position, an
episode's span) stay one module past ~500 lines: both work on the same per-agent arrays and
the two formats' layout, and change together. The mind it folds is ``readers.mindstate``'s;
the runs list's row of a run, ``readers.overview``'s.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import orjson

from bdi_rl.readers.mindstate import MindState, belief_sources
from bdi_rl.readers.runstate import RunState, run_state
from bdi_rl.rl.success import family_of_env_id, is_success
from bdi_rl.store import SPEC_FILE, TRACE_FILE
from bdi_rl.trace.check import CheckedEvent, LineOutOfTurn, TraceChecker
from bdi_rl.trace.errors import TraceFileError, TraceFormatError
from bdi_rl.trace.kinds import (
    AGENT_START,
    AGENT_STOP,
    BELIEF_ADD,
    BELIEF_DEL,
    CYCLE,
    EPISODE_END,
    EVAL,
    INTENTION_END,
    INTENTION_FAIL,
    INTENTION_START,
    INTENTIONS,
    MSG_RECV,
    MSG_SEND,
    OPTIONS,
    PLAN_CHOICE,
    QTABLE_LOAD,
    RL_STEP,
    RUN_RESUME,
    RUN_START,
    RUN_STOP,
    SCHEMA_V1,
    STEPS,
    TELEMETRY_RESTART,
)
from bdi_rl.trace.reading import MAX_LINE_BYTES, skip_line
from bdi_rl.trace.steps import OP, expand, keyframe_of

#: Events between two mind snapshots of one agent.
CHECKPOINT = 500

#: Events of the run rather than of one agent.
_RUN_KINDS = frozenset({RUN_START, RUN_STOP, RUN_RESUME, TELEMETRY_RESTART})


#: Kinds whose latest occurrence the mind shows (located at index time, read when asked for).
LATEST_KINDS = (RL_STEP, CYCLE, OPTIONS, INTENTIONS)


@dataclass
class AgentIndex:
    """One agent's events: where each is, series, and mind snapshots.

    Positions count the agent's events as format 1 has them (a format-2 step record is as
    many events as it holds). ``offsets[i]`` is the byte offset of the agent's line ``i`` and
    ``firsts[i]`` the position of its first event (format 1: ``i`` itself)."""

    name: str
    offsets: array[int] = field(default_factory=lambda: array("q"))
    firsts: array[int] = field(default_factory=lambda: array("q"))
    episodes: list[dict[str, Any]] = field(default_factory=list)
    evals: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    choices: list[dict[str, Any]] = field(default_factory=list)
    """learned plan choices (``plan.choice``), each with its position: why a plan runs"""
    latest: dict[str, array[int]] = field(default_factory=lambda: {kind: array("q") for kind in LATEST_KINDS})
    """positions of each kind whose latest occurrence the mind shows (``rl.step`` lines of
    format 1 are located, not parsed)"""
    snapshot_at: array[int] = field(default_factory=lambda: array("q", [0]))
    snapshots: list[Any] = field(default_factory=lambda: [MindState()])
    """``snapshots[k]`` is the mind before position ``snapshot_at[k]``: a MindState (format 1:
    every CHECKPOINT events, folded while indexing), or the line index of a format-2 record
    whose keyframe it is (built when first asked for)"""
    lives: list[list[Any]] = field(default_factory=list)
    """format 2: the definitions of each of the agent's lives (a resumed run starts a new one)"""
    record_life: dict[int, int] = field(default_factory=dict)
    """format 2: line index of each step record -> its life"""
    lost_definitions: bool = False
    """format 2, read around damage: the current life lacks definitions a lost line made"""
    state: MindState = field(default_factory=MindState)
    warm_episodes: int = 0
    """training episodes behind the table it was warm-started from (its curves go on from there)"""
    env_family: str = "generic"
    """the env kind its ``agent.start`` named (success of episodes that do not carry it)"""
    """format 1: the mind after the last event indexed"""
    count: int = 0
    stopped: bool = False
    action_names: list[str] | None = None
    """what its actions do ("left", ...), from its ``agent.start`` (learners only)"""

    @property
    def events(self) -> int:
        return self.count

    @property
    def rl_positions(self) -> array[int]:
        return self.latest[RL_STEP]


#: What a reader does with a damaged trace (``indexcache.open_index``): None refuses it; a
#: function reads around its damaged lines, and is given the one line that says so.
OnDamage = Callable[[str], None] | None


class DamagedTrace(TraceFileError):
    """A trace a reader refuses, as one line: ``<trace>:<line>: <what is wrong>`` (the first
    damaged line)."""


@dataclass(frozen=True)
class Damage:
    """A line of the trace that is not the run's next event, and why (``TraceChecker``)."""

    line: int
    """its number in the file, from 1"""
    why: str


#: Damaged lines noted one by one (the rest are counted).
NOTED_DAMAGE = 100
#: After this many damaged lines, reading around them stops: what is left is not a trace,
#: and a file of garbage costs bounded time (sound records that refer to definitions a
#: damaged line held are not counted: they cost no more than any line).
MAX_DAMAGED_LINES = 1000
#: Bytes read past a "line" too long to be one (a search for its newline, at ~3 GB/s) cost
#: the budget of a refresh as this many times fewer bytes indexed.
_SKIP_COST = 32
#: Kinds whose data the index keeps (as dicts): the series, the messages, the mind of format 1.
_PARSED_KINDS = frozenset({EPISODE_END, EVAL, MSG_SEND, MSG_RECV, AGENT_START, QTABLE_LOAD, PLAN_CHOICE})
_FOLDED_KINDS = frozenset(
    {AGENT_START, CYCLE, OPTIONS, INTENTIONS, BELIEF_ADD, BELIEF_DEL, INTENTION_START, INTENTION_END, INTENTION_FAIL}
)


class RunIndex:
    """The index of one run; :meth:`refresh` reads what was appended since the last call.

    Every line is checked as it is indexed, by the check ``run --resume`` applies
    (``trace.check.TraceChecker``): a line that is not the run's next event is damage. With
    ``read_around`` False (the commands' default) indexing stops at the first damaged line,
    and :meth:`check_whole` refuses the run naming it; with ``read_around`` (the viewer, the
    commands' ``--skip-damaged``) damaged lines are left out, noted in :attr:`damage` and
    said by :attr:`damaged`. A torn last line is a line still being written, not damage,
    unless it holds NUL bytes (no writer writes one); a "line" longer than MAX_LINE_BYTES is
    damage and is read past, never held."""

    def __init__(self, run_dir: Path, read_around: bool = False) -> None:
        self.run_dir = run_dir
        self.trace_path = run_dir / TRACE_FILE
        self.read_around = read_around
        self._spec: dict[str, Any] = {}
        self.agents: dict[str, AgentIndex] = {}
        self.run_events: list[dict[str, Any]] = []
        self.indexed_bytes = 0  # bytes of complete lines indexed so far
        self.size = 0  # of the trace at the last refresh
        self.complete = True  # False while a refresh with ``max_bytes`` left lines unread
        self.indexed_before_refresh = 0
        self.lines = 0
        self.checker = TraceChecker()
        self.damage: list[Damage] = []
        """the first NOTED_DAMAGE damaged lines"""
        self.damaged_lines = 0
        self.torn_tail: Damage | None = None
        """a last line without its newline that cannot be one being written (NUL bytes)"""
        self.stopped_at: int | None = None
        """the line from which nothing is read: the first damaged one (not ``read_around``),
        or the one past MAX_DAMAGED_LINES"""
        self._skipping = False  # inside a "line" too long to be one
        self._counted_damage = 0

    # -- reading ------------------------------------------------------------------
    def refresh(self, max_bytes: int | None = None) -> bool:
        """Index complete lines appended since the last call, at most ``max_bytes`` of them
        (a big trace is indexed in slices, between which a server stays responsive);
        True if there were any. One line at a time is held in memory."""
        try:
            size = self.trace_path.stat().st_size
        except FileNotFoundError:
            return False
        self.size = size
        start = self.indexed_before_refresh = offset = self.indexed_bytes
        if self.stopped_at is not None or size <= start:
            self.complete = True
            return False
        budget = size - start if max_bytes is None else max_bytes
        if budget <= 0:  # nothing may be read now: the rest waits
            self.complete = False
            return False
        self.torn_tail = None
        at_end = False
        with open(self.trace_path, "rb") as f:
            f.seek(offset)
            readline = f.readline
            spent = 0  # of the budget: bytes indexed, and bytes read past at a fraction
            while spent < budget and self.stopped_at is None:
                if self._skipping:
                    skipped, ended = skip_line(f, (budget - spent) * _SKIP_COST)
                    offset += skipped
                    spent += max(1, skipped // _SKIP_COST)
                    self._skipping = not ended
                    if not ended and (not skipped or offset >= size):  # the end, for now
                        at_end = True
                        break
                    continue
                line = readline(MAX_LINE_BYTES + 1)
                spent += len(line)
                if line.endswith(b"\n"):
                    self._index_line(line, offset)
                    offset += len(line)
                elif len(line) > MAX_LINE_BYTES:
                    self.lines += 1
                    self._damaged(self.lines, f"longer than any trace line ({MAX_LINE_BYTES} bytes): not an event")
                    offset += len(line)
                    self._skipping = True
                else:  # the end, or a last line still being written (or cut by a kill)
                    if b"\0" in line:
                        self.torn_tail = Damage(self.lines + 1, "NUL bytes: not a line being written")
                        if not self.read_around:
                            self.stopped_at = self.torn_tail.line
                    at_end = True
                    break
        self.indexed_bytes = offset
        self.complete = at_end or self.stopped_at is not None or offset >= size
        return offset > start

    def up_to_date(self) -> bool:
        """Whether a refresh would find nothing to index (one ``stat``)."""
        if self.stopped_at is not None:
            return True
        try:
            size = self.trace_path.stat().st_size
        except OSError:
            return False
        return self.complete and size == self.size

    def _index_line(self, line: bytes, offset: int) -> None:
        """Check one line (with its newline), at ``offset``, and index it if it is sound."""
        self.lines += 1
        try:
            event = self.checker.check(line[:-1])
        except LineOutOfTurn as exc:
            self._damaged(self.lines, str(exc))
            if not (self.read_around and exc.ahead and self.stopped_at is None):
                return
            event = exc.event  # lines were lost before it: read on from it
            self.checker.take(event)
        except TraceFormatError as exc:
            self._damaged(self.lines, str(exc))
            if self.read_around:
                self.checker.pass_over(line[:-1])
            return
        self._index_event(event, line, offset)

    def _damaged(self, line: int, why: str, counts: bool = True) -> None:
        """Note a damaged line; ``counts`` toward MAX_DAMAGED_LINES unless it is a sound
        line made unreadable by one before it."""
        self.damaged_lines += 1
        self._counted_damage += counts
        if len(self.damage) < NOTED_DAMAGE:
            self.damage.append(Damage(line, why))
        if not self.read_around or self._counted_damage >= MAX_DAMAGED_LINES:
            self.stopped_at = line

    def _index_event(self, event: CheckedEvent, line: bytes, offset: int) -> None:
        """Index a checked event; its line is parsed into a dict only for the kinds whose
        data the index keeps."""
        kind = event.kind
        if kind in _RUN_KINDS:
            whole = orjson.loads(line)
            self.run_events.append(whole)
            if kind == RUN_RESUME:
                self._resumed(whole["data"])
            return
        agent = self.agents.get(event.agent)
        if agent is None:
            agent = self.add_agent(AgentIndex(event.agent))
        if kind == STEPS:
            self._index_record(agent, event.data, offset)
            return
        format1 = event.schema == SCHEMA_V1
        if format1:
            self._checkpoint(agent)
        position = agent.count
        if kind in agent.latest:
            agent.latest[kind].append(position)
        agent.offsets.append(offset)
        agent.firsts.append(position)
        agent.count = position + 1
        if kind == AGENT_STOP:
            agent.stopped = True
        if kind not in _PARSED_KINDS and not (format1 and kind in _FOLDED_KINDS):
            return
        whole = orjson.loads(line)
        if format1:
            agent.state.apply(whole)
        elif kind == AGENT_START:  # a new life: its mind starts empty, its definitions from 0
            agent.lives.append([])
            agent.lost_definitions = False
            agent.snapshots.append(MindState())  # before its position: a reader in another
            agent.snapshot_at.append(position + 1)  # thread never finds a position without it
        data = whole["data"]
        if kind == EPISODE_END:
            agent.episodes.append(
                {
                    "episode": event.episode,
                    "return": data.get("return"),
                    "length": data.get("length"),
                    "outcome": data.get("outcome"),
                    "success": _episode_success(agent, data),
                    "epsilon": data.get("epsilon"),
                    "ts": event.ts,
                    "position": position,
                }
            )
        elif kind == EVAL:
            agent.evals.append({"after_episodes": len(agent.episodes), **data, "ts": event.ts, "position": position})
        elif kind == MSG_SEND or kind == MSG_RECV:
            agent.messages.append(
                {"kind": kind, "ts": event.ts, "position": position, "episode": event.episode, **data}
            )
        elif kind == PLAN_CHOICE:
            agent.choices.append({**data, "ts": event.ts, "position": position, "episode": event.episode})
        elif kind == QTABLE_LOAD:  # a warm start: the episodes behind the table it starts from
            episodes = data.get("episodes")
            if type(episodes) is int and episodes >= 0 and not agent.episodes:
                agent.warm_episodes = episodes
        elif kind == AGENT_START:
            if isinstance(data.get("actions"), list):
                agent.action_names = [str(name) for name in data["actions"]]
            if isinstance(data.get("env"), str):
                agent.env_family = family_of_env_id(data["env"])

    def _index_record(self, agent: AgentIndex, data: Any, offset: int) -> None:
        """A format-2 step record (checked): its events are counted and located, not expanded."""
        ops, def0 = data.ops, data.def0
        if not agent.lives:
            agent.lives.append([])  # a trace cut before its agent.start
        life = agent.lives[-1]
        if def0 > len(life):  # read around: lines lost before it held these definitions
            life.extend([None] * (def0 - len(life)))
            agent.lost_definitions = True
        life.extend(data.defs)
        if agent.lost_definitions and _refers_to_lost(data, life):  # sound, but unreadable now
            self._damaged(self.lines, "refers to definitions made in a line that is damaged or lost", counts=False)
            return
        position = agent.count
        line = len(agent.offsets)
        agent.record_life[line] = len(agent.lives) - 1
        if data.keyframe is not msgspec.UNSET:
            agent.snapshots.append(line)  # before its position (a reader in another thread)
            agent.snapshot_at.append(position)
        for op, kind in _LATEST_OPS:
            if op in ops:
                agent.latest[kind].extend(position + i for i, o in enumerate(ops) if o == op)
        agent.offsets.append(offset)
        agent.firsts.append(position)
        agent.count = position + len(ops)

    # -- damage ---------------------------------------------------------------------
    @property
    def damaged(self) -> dict[str, Any] | None:
        """The trace's damage as the runs list and the run page show it: the first damaged
        line and why, how many there are, and the line from which nothing was read (None:
        everything else was); None for a sound trace."""
        notes = self.damage + ([self.torn_tail] if self.torn_tail is not None else [])
        if not notes:
            return None
        return {
            "line": notes[0].line,
            "why": notes[0].why,
            "lines": self.damaged_lines + (self.torn_tail is not None),
            "unread_from": self.stopped_at,
        }

    def damage_notice(self) -> str | None:
        """One line saying what was read around, for a reader that did (None: nothing was)."""
        damaged = self.damaged
        if damaged is None:
            return None
        count = damaged["lines"]
        notice = (
            f"{self.trace_path}:{damaged['line']}: {damaged['why']}; "
            f"read around {count} damaged line{'' if count == 1 else 's'}"
        )
        if damaged["unread_from"] is not None:
            notice += f"; nothing from line {damaged['unread_from']} on was read"
        return notice

    def check_whole(self) -> None:
        """DamagedTrace naming the first damaged line (``<trace>:<line>: why``), if any."""
        damaged = self.damaged
        if damaged is not None:
            raise DamagedTrace(f"{self.trace_path}:{damaged['line']}: {damaged['why']}")

    def _resumed(self, data: dict[str, Any]) -> None:
        """A resumed run re-runs the episodes after each learner's last checkpoint: the
        series keep what came before that point, and get the re-run episodes anew."""
        points = data.get("agents")
        for jid, episode in points.items() if isinstance(points, dict) else ():
            agent = self.agents.get(jid)
            if agent is None or not isinstance(episode, int):
                continue
            agent.episodes = [e for e in agent.episodes if isinstance(e.get("episode"), int) and e["episode"] < episode]
            agent.evals = [e for e in agent.evals if e["after_episodes"] <= len(agent.episodes)]

    def add_agent(self, agent: AgentIndex) -> AgentIndex:
        self.agents[agent.name] = agent
        return agent

    @staticmethod
    def _checkpoint(agent: AgentIndex) -> None:
        """Format 1: a snapshot of the folded mind every CHECKPOINT events."""
        n = agent.count
        if n % CHECKPOINT == 0 and n > agent.snapshot_at[-1]:
            agent.snapshots.append(agent.state.copy())  # before its position (a reader in another thread)
            agent.snapshot_at.append(n)

    # -- random access --------------------------------------------------------------
    def events_of(self, agent_name: str, start: int, stop: int) -> list[dict[str, Any]]:
        """The agent's events at positions ``start`` (inclusive) to ``stop`` (exclusive)."""
        agent = self.agents[agent_name]
        start, stop = max(0, start), min(stop, agent.events)
        if start >= stop:
            return []
        out: list[dict[str, Any]] = []
        line = bisect.bisect_right(agent.firsts, start) - 1
        with open(self.trace_path, "rb") as f:
            while len(out) < stop - start:
                event = read_event_at(f, agent.offsets[line])
                first = agent.firsts[line]
                if event.get("kind") == STEPS:
                    defs = agent.lives[agent.record_life[line]]
                    out += expand(event, defs, max(0, start - first), stop - first)
                else:
                    out.append(event)
                line += 1
        return out

    def mind_at(self, agent_name: str, position: int) -> tuple[MindState, list[dict[str, Any]]]:
        """The mind after the agent's event ``position``, and the events since the previous
        position (what changed, ending with the event at ``position`` itself)."""
        agent = self.agents[agent_name]
        position = max(0, min(position, agent.events - 1))
        k = bisect.bisect_right(agent.snapshot_at, position + 1) - 1
        state = self._snapshot(agent, k).copy()
        folded = self.events_of(agent_name, agent.snapshot_at[k], position + 1)
        for event in folded:
            state.apply(event)
        for kind, attribute in _LATEST_ATTRIBUTES:
            positions = agent.latest[kind]
            i = bisect.bisect_right(positions, position)
            if i:
                latest = self.events_of(agent_name, positions[i - 1], positions[i - 1] + 1)[0]["data"]
                setattr(state, attribute, latest.get("intentions") if kind == INTENTIONS else latest)
        if not folded:
            folded = self.events_of(agent_name, position, position + 1)
        return state, folded[-1:]

    def _snapshot(self, agent: AgentIndex, k: int) -> MindState:
        snapshot = agent.snapshots[k]
        if isinstance(snapshot, MindState):
            return snapshot
        with open(self.trace_path, "rb") as f:
            event = read_event_at(f, agent.offsets[snapshot])
        frame = keyframe_of(event["data"], agent.lives[agent.record_life[snapshot]])
        state = MindState()
        if frame is not None:
            beliefs, intentions = frame
            for belief in beliefs:
                state.beliefs[belief["belief"]] = belief_sources(belief)
            state.intentions = [
                {"trigger": i.get("trigger"), "plan": i.get("plan"), "source": i.get("source", "self")}
                for i in intentions
            ]
        agent.snapshots[k] = state
        return state

    def span_of(self, agent_name: str, episode: int, step: int | None = None) -> tuple[int, int]:
        """Positions of the first and last events of ``step`` of ``episode`` (the whole
        episode when ``step`` is None). KeyError naming what the trace does have otherwise."""
        agent = self.agents[agent_name]
        if not agent.episodes and agent.events:  # no episode.end (a shared world's agent):
            start, end = self._stamped_span(agent_name, episode)  # by the events' own stamps
        else:
            ends = [k for k, e in enumerate(agent.episodes) if e["episode"] == episode]
            if not ends:
                last = agent.episodes[-1]["episode"] if agent.episodes else None
                raise KeyError(f"episode {episode} is not in the trace (episodes 0..{last})")
            k = ends[0]
            end = agent.episodes[k]["position"]
            start = agent.episodes[k - 1]["position"] + 1 if k else 0
        if step is None:
            return start, end
        first = last = None
        steps_seen = None
        for i in range(start, end + 1, 4096):
            for offset, event in enumerate(self.events_of(agent_name, i, min(i + 4096, end + 1))):
                if event.get("episode") != episode:
                    continue
                steps_seen = event.get("step")
                if event.get("step") == step:
                    first = i + offset if first is None else first
                    last = i + offset
        if first is None or last is None:
            raise KeyError(
                f"episode {episode} has no step {step} in the trace"
                + (f" (it ends at step {steps_seen})" if steps_seen is not None else "")
            )
        return first, last

    def _stamped_span(self, agent_name: str, episode: int) -> tuple[int, int]:
        """First and last positions of the events stamped ``episode`` (they come in episode
        order: two binary searches read ~2 log2(n) events)."""
        total = self.agents[agent_name].events

        def first_at_least(target: int) -> int:
            lo, hi = 0, total
            while lo < hi:
                mid = (lo + hi) // 2
                if self.events_of(agent_name, mid, mid + 1)[0].get("episode", 0) < target:
                    lo = mid + 1
                else:
                    hi = mid
            return lo

        start, stop = first_at_least(episode), first_at_least(episode + 1)
        if start >= stop:
            last = self.events_of(agent_name, total - 1, total)[0].get("episode")
            raise KeyError(f"episode {episode} is not in the trace (episodes 0..{last})")
        return start, stop - 1

    # -- summaries --------------------------------------------------------------------
    @property
    def indexing(self) -> float | None:
        """The fraction of the trace indexed while indexing is not done, else None."""
        return None if self.complete else round(self.indexed_bytes / max(self.size, 1), 3)

    @property
    def state(self) -> RunState:
        """Live, finished, interrupted, failed or abandoned (readers.runstate), as of now."""
        return run_state(self.run_dir)

    @property
    def live(self) -> bool:
        """True while a process writes the run (readers.runstate)."""
        return self.state.state == "live"

    @property
    def spec(self) -> dict[str, Any]:
        """The run's ``spec.toml`` as a table, read once (every mind request asks for the
        trace level; the runs list for the env); empty while it cannot be read."""
        if not self._spec:
            self._spec = _read_spec(self.run_dir / SPEC_FILE)
        return self._spec

    @property
    def trace_level(self) -> str | None:
        """The level the run was traced at (its ``spec.toml``), None when that is unreadable."""
        level = self.spec.get("trace")
        return level if isinstance(level, str) else None


def _episode_success(agent: AgentIndex, data: dict[str, Any]) -> bool:
    """The episode's stored ``success``, or (older traces) the env kind's rule applied."""
    stored = data.get("success")
    if isinstance(stored, bool):
        return stored
    episode_return = data.get("return")
    return is_success(
        agent.env_family, data.get("outcome"), episode_return if isinstance(episode_return, (int, float)) else None
    )


def _refers_to_lost(data: Any, life: list[Any]) -> bool:
    """Whether a record refers to a definition its life lacks (read around a lost line)."""
    defined = (ref for op, ref in zip(data.ops, data.refs, strict=True) if op != OP[RL_STEP] and op != OP[CYCLE])
    frame = data.keyframe
    framed = () if frame is msgspec.UNSET else (*frame.beliefs, *frame.intentions)
    return any(life[ref] is None for ref in (*defined, *framed))


def read_event_at(f: BinaryIO, offset: int) -> dict[str, Any]:
    """The event of the line at ``offset`` (indexed, so checked); TraceFileError if the file
    no longer holds it there (rewritten since)."""
    f.seek(offset)
    line = f.readline(MAX_LINE_BYTES + 1)
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        event = None
    if not isinstance(event, dict):
        raise TraceFileError(f"{f.name}: the line at byte {offset} is not the event indexed there (the trace changed)")
    return event


#: A spec.toml is a few KB: a bigger one is not read (it is not a spec, and would cost its size).
_MAX_SPEC_BYTES = 1 << 20


def _read_spec(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as f:
            text = f.read(_MAX_SPEC_BYTES + 1)
        return tomllib.loads(text.decode()) if len(text) <= _MAX_SPEC_BYTES else {}
    except (OSError, UnicodeError, tomllib.TOMLDecodeError):
        return {}


_LATEST_OPS = tuple((OP[kind], kind) for kind in LATEST_KINDS)
_LATEST_ATTRIBUTES = ((RL_STEP, "rl"), (CYCLE, "cycle"), (OPTIONS, "options"), (INTENTIONS, "stacks"))
