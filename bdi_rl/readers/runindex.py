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
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from bdi_rl.rl.success import family_of_env_id, is_success
from bdi_rl.readers.runstate import RunState, run_state
from bdi_rl.store import SPEC_FILE, TRACE_FILE
from bdi_rl.trace.steps import OP, expand, keyframe_of
from bdi_rl.trace.events import (
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
    RL_STEP,
    RUN_RESUME,
    RUN_START,
    RUN_STOP,
    SCHEMA_V1,
    STEPS,
    TELEMETRY_RESTART,
)

#: Events between two mind snapshots of one agent.
CHECKPOINT = 500

#: How an ``rl.step`` line says its kind, byte for byte as orjson writes it.
_RL_STEP = orjson.dumps({"kind": RL_STEP})[1:-1]
_AGENT_KEY = b'"agent":"'
#: Events of the run rather than of one agent.
_RUN_KINDS = frozenset({RUN_START, RUN_STOP, RUN_RESUME, TELEMETRY_RESTART})


@dataclass
class MindState:
    """What an agent believed and intended after one of its events."""

    beliefs: dict[str, list[str]] = field(default_factory=dict)
    """belief text -> its sources, in the order they told it (Jason: one belief, several
    sources; it goes when its last source does)"""
    intentions: list[dict[str, Any]] = field(default_factory=list)
    """running plans, oldest first: trigger, plan label, source"""
    rl: dict[str, Any] | None = None
    """the latest ``rl.step`` up to this point (state, action, Q row, epsilon)"""
    cycle: dict[str, Any] | None = None
    """``cycle`` level: the latest reasoning cycle (its events taken, the events pending)"""
    options: dict[str, Any] | None = None
    """``cycle`` level: the latest plan selection (relevant, applicable, selected plans)"""
    stacks: list[dict[str, Any]] | None = None
    """``cycle`` level: every intention's stack of intended means, as last recorded"""

    def copy(self) -> "MindState":
        return MindState(
            {b: list(s) for b, s in self.beliefs.items()},
            [dict(i) for i in self.intentions],
            self.rl,
            self.cycle,
            self.options,
            self.stacks,
        )

    def apply(self, event: dict[str, Any]) -> None:
        kind, data = event["kind"], event["data"]
        if kind == AGENT_START:  # a new mind (the run was resumed): nothing carries over
            self.beliefs.clear()
            self.intentions.clear()
            self.cycle = self.options = self.stacks = None
        elif kind == CYCLE:
            self.cycle = data
        elif kind == OPTIONS:
            self.options = data
        elif kind == INTENTIONS:
            self.stacks = data.get("intentions")
        elif kind == BELIEF_ADD:
            held = self.beliefs.setdefault(data["belief"], [])
            held.extend(s for s in _sources(data) if s not in held)
        elif kind == BELIEF_DEL:
            known = self.beliefs.get(data["belief"])
            if known is not None:
                gone = _sources(data)
                known[:] = [s for s in known if s not in gone]
                if not known:
                    del self.beliefs[data["belief"]]
        elif kind == INTENTION_START:
            self.intentions.append(
                {"trigger": data.get("trigger"), "plan": data.get("plan"), "source": data.get("source", "self")}
            )
        elif kind == INTENTION_END or kind == INTENTION_FAIL:
            plan = data.get("plan")
            for i in range(len(self.intentions) - 1, -1, -1):
                if self.intentions[i]["plan"] == plan:
                    del self.intentions[i]
                    break


#: Kinds whose latest occurrence the mind shows (located at index time, read when asked for).
LATEST_KINDS = (RL_STEP, CYCLE, OPTIONS, INTENTIONS)


@dataclass
class AgentIndex:
    """One agent's events: where each is, series, and mind snapshots.

    Positions count the agent's events as format 1 has them (a format-2 step record is as
    many events as it holds). ``offsets[i]`` is the byte offset of the agent's line ``i`` and
    ``firsts[i]`` the position of its first event (format 1: ``i`` itself)."""

    name: str
    offsets: array = field(default_factory=lambda: array("q"))
    firsts: array = field(default_factory=lambda: array("q"))
    episodes: list[dict[str, Any]] = field(default_factory=list)
    evals: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, array] = field(default_factory=lambda: {kind: array("q") for kind in LATEST_KINDS})
    """positions of each kind whose latest occurrence the mind shows (``rl.step`` lines of
    format 1 are located, not parsed)"""
    snapshot_at: array = field(default_factory=lambda: array("q", [0]))
    snapshots: list[Any] = field(default_factory=lambda: [MindState()])
    """``snapshots[k]`` is the mind before position ``snapshot_at[k]``: a MindState (format 1:
    every CHECKPOINT events, folded while indexing), or the line index of a format-2 record
    whose keyframe it is (built when first asked for)"""
    lives: list[list[Any]] = field(default_factory=list)
    """format 2: the definitions of each of the agent's lives (a resumed run starts a new one)"""
    record_life: dict[int, int] = field(default_factory=dict)
    """format 2: line index of each step record -> its life"""
    state: MindState = field(default_factory=MindState)
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
    def rl_positions(self) -> array:
        return self.latest[RL_STEP]


class RunIndex:
    """The index of one run; :meth:`refresh` reads what was appended since the last call."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.trace_path = run_dir / TRACE_FILE
        self._spec: dict[str, Any] = {}
        self.agents: dict[str, AgentIndex] = {}
        self.run_events: list[dict[str, Any]] = []
        self._agents_by_key: dict[bytes, AgentIndex] = {}  # name as it appears in a line
        self.indexed_bytes = 0  # bytes of complete lines indexed so far
        self.size = 0  # of the trace at the last refresh
        self.complete = True  # False while a refresh with ``max_bytes`` left lines unread
        self.indexed_before_refresh = 0
        self.lines = 0
        self.bad_lines = 0

    # -- reading ------------------------------------------------------------------
    def refresh(self, max_bytes: int | None = None) -> bool:
        """Index complete lines appended since the last call, at most ``max_bytes`` of them
        (a big trace is indexed in slices, between which a server stays responsive);
        True if there were any."""
        try:
            size = self.trace_path.stat().st_size
        except FileNotFoundError:
            return False
        self.size = size
        self.indexed_before_refresh = self.indexed_bytes
        remaining = size - self.indexed_bytes
        if remaining <= 0:
            return False
        want = remaining if max_bytes is None else min(remaining, max_bytes)
        self.complete = want == remaining
        if want <= 0:
            return False
        with open(self.trace_path, "rb") as f:
            f.seek(self.indexed_bytes)
            chunk = f.read(want)
            if b"\n" not in chunk and want < size - self.indexed_bytes:  # one line longer than a slice
                chunk += f.readline()
        end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next call
        self._index_lines(chunk[:end], self.indexed_bytes)
        self.indexed_bytes += end
        return end > 0

    def _index_lines(self, chunk: bytes, offset: int) -> None:
        """The hot loop: format 1's ``rl.step`` lines (most of such a trace) are located, not
        parsed."""
        by_key = self._agents_by_key
        for line in chunk.splitlines(keepends=True):
            if _RL_STEP in line:
                start = line.find(_AGENT_KEY) + len(_AGENT_KEY)
                agent = by_key.get(line[start : line.find(b'"', start)])
                if agent is not None and start >= len(_AGENT_KEY):
                    n = agent.count
                    if n % CHECKPOINT == 0:
                        self._checkpoint(agent)
                    agent.latest[RL_STEP].append(n)
                    agent.offsets.append(offset)
                    agent.firsts.append(n)
                    agent.count = n + 1
                    self.lines += 1
                    offset += len(line)
                    continue
            self._index_line(line, offset)
            offset += len(line)

    def _index_line(self, line: bytes, offset: int) -> None:
        """Parse and index one line (``_index_lines`` skips parsing known agents' ``rl.step``)."""
        self.lines += 1
        try:
            event = orjson.loads(line)
            agent_name, kind = event["agent"], event["kind"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            self.bad_lines += 1
            return
        if not (isinstance(agent_name, str) and isinstance(kind, str) and isinstance(event.get("data"), dict)):
            self.bad_lines += 1
            return
        if kind in _RUN_KINDS:
            self.run_events.append(event)
            if kind == RUN_RESUME:
                self._resumed(event["data"])
            return
        agent = self.agents.get(agent_name)
        if agent is None:
            agent = self.add_agent(AgentIndex(agent_name))
        if kind == STEPS:
            self._index_record(agent, event, offset)
            return
        format1 = event.get("schema") == SCHEMA_V1
        if format1:
            self._checkpoint(agent)
        position = agent.count
        if kind in agent.latest:
            agent.latest[kind].append(position)
        agent.offsets.append(offset)
        agent.firsts.append(position)
        agent.count = position + 1
        if format1:
            agent.state.apply(event)
        elif kind == AGENT_START:  # a new life: its mind starts empty, its definitions from 0
            agent.lives.append([])
            agent.snapshot_at.append(position + 1)
            agent.snapshots.append(MindState())
        data = event.get("data") or {}
        if kind == EPISODE_END:
            agent.episodes.append(
                {
                    "episode": event.get("episode"),
                    "return": data.get("return"),
                    "length": data.get("length"),
                    "outcome": data.get("outcome"),
                    "success": _episode_success(agent, data),
                    "epsilon": data.get("epsilon"),
                    "ts": event.get("ts"),
                    "position": position,
                }
            )
        elif kind == EVAL:
            agent.evals.append(
                {"after_episodes": len(agent.episodes), **data, "ts": event.get("ts"), "position": position}
            )
        elif kind == MSG_SEND or kind == MSG_RECV:
            agent.messages.append(
                {"kind": kind, "ts": event.get("ts"), "position": position, "episode": event.get("episode"), **data}
            )
        elif kind == AGENT_STOP:
            agent.stopped = True
        elif kind == AGENT_START:
            if isinstance(data.get("actions"), list):
                agent.action_names = [str(name) for name in data["actions"]]
            if isinstance(data.get("env"), str):
                agent.env_family = family_of_env_id(data["env"])

    def _index_record(self, agent: AgentIndex, event: dict[str, Any], offset: int) -> None:
        """A format-2 step record: its events are counted and located, not expanded."""
        data = event["data"]
        try:
            ops, defs, def0 = data["ops"], data["defs"], data["def0"]
            if not agent.lives:
                agent.lives.append([])  # a trace cut before its agent.start
            life = agent.lives[-1]
            if def0 != len(life) or not isinstance(ops, list) or not isinstance(defs, list):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            self.bad_lines += 1
            return
        life.extend(defs)
        position = agent.count
        line = len(agent.offsets)
        agent.record_life[line] = len(agent.lives) - 1
        if "keyframe" in data:
            agent.snapshot_at.append(position)
            agent.snapshots.append(line)
        for op, kind in _LATEST_OPS:
            if op in ops:
                agent.latest[kind].extend(position + i for i, o in enumerate(ops) if o == op)
        agent.offsets.append(offset)
        agent.firsts.append(position)
        agent.count = position + len(ops)

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
        self._agents_by_key[agent.name.encode()] = agent
        return agent

    @staticmethod
    def _checkpoint(agent: AgentIndex) -> None:
        """Format 1: a snapshot of the folded mind every CHECKPOINT events."""
        n = agent.count
        if n % CHECKPOINT == 0 and n > agent.snapshot_at[-1]:
            agent.snapshot_at.append(n)
            agent.snapshots.append(agent.state.copy())

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
                event = _read_event(f, agent.offsets[line])
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
            event = _read_event(f, agent.offsets[snapshot])
        frame = keyframe_of(event["data"], agent.lives[agent.record_life[snapshot]])
        state = MindState()
        if frame is not None:
            beliefs, intentions = frame
            for belief in beliefs:
                state.beliefs[belief["belief"]] = _sources(belief)
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

    def overview(self) -> dict[str, Any]:
        """The runs-list row: what ran, how far, how well."""
        spec = self.spec
        start = next((e for e in self.run_events if e["kind"] == RUN_START), None)
        learners = [a for a in self.agents.values() if a.action_names is not None or a.episodes or a.evals]
        finals = [a.evals[-1] for a in learners if a.evals]
        state = self.state
        return {
            "run": self.run_dir.name,
            "env": (spec.get("env") or {}).get("id"),
            "experiment": spec.get("name"),
            "agents": sorted(self.agents),
            "learners": _spec_learners(spec) or len(learners),  # also those a run stopped early never traced
            "episodes": max((len(a.episodes) for a in learners), default=0),
            "final_eval": _mean_eval(finals),
            "started": start["ts"] if start else None,
            "state": state.state,
            "state_why": state.why,
            "live": state.state == "live",
            "indexing": self.indexing,
            "events": sum(a.events for a in self.agents.values()),
        }


def _spec_learners(spec: dict[str, Any]) -> int:
    """The learners the run's spec names (0 when it cannot be read): every group's ``count``
    (1 by default) whose ``role`` is ``learner`` (the default)."""
    groups = spec.get("agents")
    counts = [
        group.get("count", 1)
        for group in (groups if isinstance(groups, list) else [])
        if isinstance(group, dict) and group.get("role", "learner") == "learner"
    ]
    return sum(count for count in counts if isinstance(count, int))


def _sources(data: dict[str, Any]) -> list[str]:
    """A belief event's sources: all of them when it names several, else its one."""
    several = data.get("sources")
    return [str(s) for s in several] if isinstance(several, list) and several else [data.get("source", "self")]


def _mean_eval(evals: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The learners' latest evaluations averaged: return and success side by side, never
    one standing in for the other (the runs list had them mixed in one column)."""
    returns = [e["mean_return"] for e in evals if isinstance(e.get("mean_return"), (int, float))]
    rates = [e["success_rate"] for e in evals if isinstance(e.get("success_rate"), (int, float))]
    if not returns:
        return None
    return {
        "mean_return": sum(returns) / len(returns),
        "success_rate": sum(rates) / len(rates) if rates else None,
        "learners": len(returns),
    }


def _episode_success(agent: AgentIndex, data: dict[str, Any]) -> bool:
    """The episode's stored ``success``, or (older traces) the env kind's rule applied."""
    stored = data.get("success")
    if isinstance(stored, bool):
        return stored
    episode_return = data.get("return")
    return is_success(
        agent.env_family, data.get("outcome"), episode_return if isinstance(episode_return, (int, float)) else None
    )


def _read_event(f: BinaryIO, offset: int) -> dict[str, Any]:
    f.seek(offset)
    return orjson.loads(f.readline())


def _read_spec(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


_LATEST_OPS = tuple((OP[kind], kind) for kind in LATEST_KINDS)
_LATEST_ATTRIBUTES = ((RL_STEP, "rl"), (CYCLE, "cycle"), (OPTIONS, "options"), (INTENTIONS, "stacks"))
