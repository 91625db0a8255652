"""An index over one run directory's trace, for the viewer, ``inspect`` and exporters.

The trace is append-only JSONL (``bdi_rl.trace``), possibly still growing. The index reads it
once, from where it stopped last time, and keeps per agent: the byte offset of every event
(so any event is one seek away), the episode and evaluation series (learning curves), the
messages, and every ``CHECKPOINT`` events a snapshot of the mind (beliefs and intentions).
The mind at any position is a snapshot plus at most ``CHECKPOINT`` events folded on top,
never a rescan. It never writes to the run directory.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from bdi_rl.store import SPEC_FILE, SUMMARY_FILE, TRACE_FILE
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

    beliefs: dict[str, str] = field(default_factory=dict)
    """belief text -> source"""
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
            dict(self.beliefs), [dict(i) for i in self.intentions], self.rl, self.cycle, self.options, self.stacks
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
            self.beliefs[data["belief"]] = data.get("source", "self")
        elif kind == BELIEF_DEL:
            self.beliefs.pop(data["belief"], None)
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


@dataclass
class AgentIndex:
    """One agent's events: offsets, series and mind snapshots."""

    name: str
    offsets: array = field(default_factory=lambda: array("q"))
    episodes: list[dict[str, Any]] = field(default_factory=list)
    evals: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    rl_positions: array = field(default_factory=lambda: array("q"))
    """positions of the ``rl.step`` events (indexed unparsed; read when asked for)"""
    snapshots: list[MindState] = field(default_factory=list)
    """``snapshots[k]`` is the mind after event ``k * CHECKPOINT - 1`` (k = 0: empty)"""
    state: MindState = field(default_factory=MindState)
    stopped: bool = False
    action_names: list[str] | None = None
    """what its actions do ("left", ...), from its ``agent.start`` (learners only)"""

    @property
    def events(self) -> int:
        return len(self.offsets)


class RunIndex:
    """The index of one run; :meth:`refresh` reads what was appended since the last call."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.trace_path = run_dir / TRACE_FILE
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
        """The hot loop: ``rl.step`` lines (most of a step-level trace) are located, not parsed."""
        by_key = self._agents_by_key
        for line in chunk.splitlines(keepends=True):
            if _RL_STEP in line:
                start = line.find(_AGENT_KEY) + len(_AGENT_KEY)
                agent = by_key.get(line[start : line.find(b'"', start)])
                if agent is not None and start >= len(_AGENT_KEY):
                    offsets = agent.offsets
                    n = len(offsets)
                    if n % CHECKPOINT == 0:
                        self._checkpoint(agent)
                    agent.rl_positions.append(n)
                    offsets.append(offset)
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
            agent = self.add_agent(AgentIndex(agent_name, snapshots=[MindState()]))
        self._checkpoint(agent)
        if kind == RL_STEP:
            agent.rl_positions.append(agent.events)
        agent.offsets.append(offset)
        agent.state.apply(event)
        data = event.get("data") or {}
        position = agent.events - 1
        if kind == EPISODE_END:
            agent.episodes.append(
                {
                    "episode": event.get("episode"),
                    "return": data.get("return"),
                    "length": data.get("length"),
                    "outcome": data.get("outcome"),
                    "epsilon": data.get("epsilon"),
                    "ts": event.get("ts"),
                    "position": position,
                }
            )
        elif kind == EVAL:
            agent.evals.append({**data, "after_episodes": len(agent.episodes), "position": position})
        elif kind == MSG_SEND or kind == MSG_RECV:
            agent.messages.append(
                {"kind": kind, "ts": event.get("ts"), "position": position, "episode": event.get("episode"), **data}
            )
        elif kind == AGENT_STOP:
            agent.stopped = True
        elif kind == AGENT_START and isinstance(data.get("actions"), list):
            agent.action_names = [str(name) for name in data["actions"]]

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
        if agent.events % CHECKPOINT == 0 and agent.events // CHECKPOINT == len(agent.snapshots):
            agent.snapshots.append(agent.state.copy())

    # -- random access --------------------------------------------------------------
    def events_of(self, agent_name: str, start: int, stop: int) -> list[dict[str, Any]]:
        """The agent's events at positions ``start`` (inclusive) to ``stop`` (exclusive)."""
        agent = self.agents[agent_name]
        start, stop = max(0, start), min(stop, agent.events)
        if start >= stop:
            return []
        with open(self.trace_path, "rb") as f:
            return [_read_event(f, agent.offsets[i]) for i in range(start, stop)]

    def mind_at(self, agent_name: str, position: int) -> tuple[MindState, list[dict[str, Any]]]:
        """The mind after the agent's event ``position``, and the events since the previous
        position (what changed, ending with the event at ``position`` itself)."""
        agent = self.agents[agent_name]
        position = max(0, min(position, agent.events - 1))
        k = min((position + 1) // CHECKPOINT, len(agent.snapshots) - 1)
        state = agent.snapshots[k].copy()
        folded = self.events_of(agent_name, k * CHECKPOINT, position + 1)
        for event in folded:
            state.apply(event)
        i = bisect.bisect_right(agent.rl_positions, position)
        if i:
            state.rl = self.events_of(agent_name, agent.rl_positions[i - 1], agent.rl_positions[i - 1] + 1)[0]["data"]
        return state, folded[-1:]

    def span_of(self, agent_name: str, episode: int, step: int | None = None) -> tuple[int, int]:
        """Positions of the first and last events of ``step`` of ``episode`` (the whole
        episode when ``step`` is None). KeyError naming what the trace does have otherwise."""
        agent = self.agents[agent_name]
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
        for i in range(start, end + 1, 256):
            for offset, event in enumerate(self.events_of(agent_name, i, min(i + 256, end + 1))):
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

    # -- summaries --------------------------------------------------------------------
    @property
    def indexing(self) -> float | None:
        """The fraction of the trace indexed while indexing is not done, else None."""
        return None if self.complete else round(self.indexed_bytes / max(self.size, 1), 3)

    @property
    def live(self) -> bool:
        """True while the run has not recorded its end (``run.stop``, or a summary unless it
        was resumed since)."""
        kinds = [e["kind"] for e in self.run_events]
        if kinds and kinds[-1] == RUN_STOP:
            return False
        return RUN_RESUME in kinds or not (self.run_dir / SUMMARY_FILE).is_file()

    def overview(self) -> dict[str, Any]:
        """The runs-list row: what ran, how far, how well."""
        spec = _read_spec(self.run_dir / SPEC_FILE)
        start = next((e for e in self.run_events if e["kind"] == RUN_START), None)
        evals = [ev for agent in self.agents.values() for ev in agent.evals]
        best = max(evals, key=lambda ev: ev.get("mean_return", float("-inf")), default=None)
        return {
            "run": self.run_dir.name,
            "env": (spec.get("env") or {}).get("id"),
            "experiment": spec.get("name"),
            "agents": sorted(self.agents),
            "episodes": sum(len(a.episodes) for a in self.agents.values()),
            "best_eval": None
            if best is None
            else {"mean_return": best.get("mean_return"), "success_rate": best.get("success_rate")},
            "started": start["ts"] if start else None,
            "live": self.live,
            "indexing": self.indexing,
            "events": sum(a.events for a in self.agents.values()),
        }


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
