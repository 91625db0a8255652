"""Search a run for beliefs: when each belief matching a pattern was first added and first
removed, by which agent, from which source (the viewer's search box, ``bdi-rl search``).

Patterns are AgentSpeak literals, ``_`` or a variable matching any one top-level argument
(``hazard(_, _)``, ``hazard(3, Y)``, a bare ``hazard`` for every arity): the language is
:mod:`bdi_rl.readers.pattern`'s. A hit is one (agent, belief, source, add or removal): its
first event, at the position the Mind Inspector counts (``RunIndex``). An event naming several
sources (``sources``) is a first add or removal for each of them.

Fast on big runs: in format 2 a belief is a definition made once per agent life, so the
pattern is tested on the definitions (held by the index), and only the ``ops`` and ``refs``
lists of the agent's step records are read, joined into one numpy array per life and masked
at once; no record is expanded. Format-1 lines (one per event) are found by their kind's
bytes and parsed only when they name a matching functor. The search takes a snapshot of the
index first (:class:`Scope`), so it may run in a thread while the index grows.
"""

from __future__ import annotations

import bisect
import mmap
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import orjson

from bdi_rl.readers.mindstate import belief_sources
from bdi_rl.readers.pattern import Pattern
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.trace.kinds import BELIEF_ADD, BELIEF_DEL
from bdi_rl.trace.steps import OP_BELIEF_ADD, OP_BELIEF_DEL

#: Most hits one search returns (it says when there were more).
MAX_HITS = 500
ADD, DEL = "add", "del"

_OPS = b'"data":{"ops":['
_REFS = b',"refs":['
_AT = b',"at":['
_TS = b',"ts":'
#: A format-1 belief line, by its kind (no JSON string can hold these bytes: its quotes are escaped).
_BELIEF_LINE = re.compile(b'"kind":"(' + re.escape(BELIEF_ADD.encode()) + b"|" + re.escape(BELIEF_DEL.encode()) + b')"')


@dataclass
class Hit:
    agent: str
    belief: str
    source: str
    kind: str
    """``add`` or ``del``"""
    position: int
    episode: int | None
    step: int | None
    ts: float | None


@dataclass
class SearchResult:
    pattern: str
    hits: list[Hit]
    """first adds and removals, in time order (at most ``limit``)"""
    found: int
    """first adds and removals in all"""
    adds: int
    """``belief.add`` events that matched, in all"""
    dels: int
    truncated: bool
    limit: int

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "hits": [asdict(h) for h in self.hits]}


@dataclass
class _AgentScope:
    name: str
    offsets: np.ndarray
    firsts: np.ndarray
    count: int
    records: list[tuple[int, int]]
    """(line index, life) of each step record, in order"""
    lives: list[list[Any]]


@dataclass
class Scope:
    """What a search reads of an index, copied (cheap: arrays of line offsets), so that the
    index may grow meanwhile."""

    trace: Any
    indexed_bytes: int
    agents: list[_AgentScope]

    @classmethod
    def of(cls, index: RunIndex, agent: str | None = None) -> Scope:
        names = [agent] if agent is not None else sorted(index.agents)
        agents = []
        for name in names:
            a = index.agents[name]
            n = len(a.offsets)
            agents.append(
                _AgentScope(
                    name,
                    np.array(a.offsets[:n], dtype=np.int64),
                    np.array(a.firsts[:n], dtype=np.int64),
                    a.count,
                    sorted((line, life) for line, life in a.record_life.items() if line < n),
                    [list(life) for life in a.lives],
                )
            )
        return cls(index.trace_path, index.indexed_bytes, agents)


@dataclass
class _Found:
    """Hits being gathered: the first of each (agent, belief, source, kind), and counts."""

    firsts: dict[tuple[str, str, str, str], tuple[int, int, int]] = field(default_factory=dict)
    """key -> (position, byte offset of its line, entry in that line's record: -1 format 1)"""
    adds: int = 0
    dels: int = 0

    def note(self, agent: str, data: Any, kind: str, position: int, offset: int, entry: int) -> None:
        for source in belief_sources(data):
            key = (agent, data["belief"], source, kind)
            known = self.firsts.get(key)
            if known is None or position < known[0]:
                self.firsts[key] = (position, offset, entry)


def search_run(index: RunIndex, pattern: Pattern, agent: str | None = None, limit: int = MAX_HITS) -> SearchResult:
    """The first adds and removals of the beliefs ``pattern`` matches (``agent``: a JID of
    the run, only its events)."""
    return search(Scope.of(index, agent), pattern, limit)


def search(scope: Scope, pattern: Pattern, limit: int = MAX_HITS) -> SearchResult:
    found = _Found()
    if scope.indexed_bytes > 0 and scope.agents:
        with open(scope.trace, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            matches: dict[str, bool] = {}
            for agent in scope.agents:
                _search_records(mm, agent, pattern, matches, found)
            _search_lines(mm, scope, pattern, matches, found)
            hits = _hits(mm, found)
    else:
        hits = []
    hits.sort(key=lambda h: (h.ts if h.ts is not None else 0.0, h.agent, h.position))
    return SearchResult(pattern.text, hits[:limit], len(hits), found.adds, found.dels, len(hits) > limit, limit)


def _matching(defs: list[Any], pattern: Pattern, matches: dict[str, bool]) -> np.ndarray:
    """Which of a life's definitions are beliefs the pattern matches (a lookup table by id)."""
    table = np.zeros(len(defs), dtype=bool)
    for ref, data in enumerate(defs):
        belief = data.get("belief") if type(data) is dict else None
        if type(belief) is str:
            hit = matches.get(belief)
            if hit is None:
                hit = matches[belief] = pattern.matches(belief)
            table[ref] = hit
    return table


def _search_records(
    mm: mmap.mmap, agent: _AgentScope, pattern: Pattern, matches: dict[str, bool], found: _Found
) -> None:
    """Format 2: each life's records' ops and refs, as one array each, masked at once."""
    by_life: dict[int, list[int]] = {}
    for line, life in agent.records:
        by_life.setdefault(life, []).append(line)
    for life, lines in by_life.items():
        defs = agent.lives[life]
        table = _matching(defs, pattern, matches)
        if not table.any():
            continue  # nothing this life defined matches: its records are not read
        ends = np.append(agent.firsts[1:], agent.count)
        lengths = [int(ends[line] - agent.firsts[line]) for line in lines]
        ops, refs = _life_columns(mm, [int(agent.offsets[line]) for line in lines], sum(lengths))
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        belief = np.flatnonzero(ops <= max(OP_BELIEF_ADD, OP_BELIEF_DEL))
        ids = refs[belief]
        known = (ids >= 0) & (ids < len(table))
        belief, ids = belief[known], ids[known]
        selected = belief[table[ids]]
        if not len(selected):
            continue
        kinds = ops[selected]
        found.adds += int(np.count_nonzero(kinds == OP_BELIEF_ADD))
        found.dels += int(np.count_nonzero(kinds == OP_BELIEF_DEL))
        _, first = np.unique(refs[selected] * 2 + kinds, return_index=True)
        for entry in selected[first]:
            r = int(np.searchsorted(starts, entry, side="right")) - 1
            line = lines[r]
            within = int(entry - starts[r])
            kind = ADD if ops[entry] == OP_BELIEF_ADD else DEL
            position = int(agent.firsts[line]) + within
            found.note(agent.name, defs[int(refs[entry])], kind, position, int(agent.offsets[line]), within)


def _life_columns(mm: mmap.mmap, offsets: list[int], events: int) -> tuple[np.ndarray, np.ndarray]:
    """The ops and refs of the records at ``offsets``, each joined into one array. Read as
    the writer lays a record out (``ops`` then ``refs`` first in ``data``), or, should that
    not give the ``events`` the index counted, from each record parsed whole."""
    for whole in (False, True):
        parts = [_ops_refs(mm, offset, whole) for offset in offsets]
        ops = _numbers(b",".join(p[0] for p in parts))
        refs = _numbers(b",".join(p[1] for p in parts))
        if len(ops) == len(refs) == events:
            return ops, refs
    raise ValueError(f"step records at byte {offsets[0]}: other events than the index counted")


def _ops_refs(mm: mmap.mmap, offset: int, whole: bool = False) -> tuple[bytes, bytes]:
    """A record's ops and refs as the bytes of two number lists, without their brackets."""
    end = mm.find(b"\n", offset)
    end = len(mm) if end < 0 else end
    at = -1 if whole else mm.find(_OPS, offset, end)
    if at >= 0:
        ops_end = mm.find(b"]", at + len(_OPS), end)
        if ops_end >= 0 and mm[ops_end + 1 : ops_end + 1 + len(_REFS)] == _REFS:
            refs_at = ops_end + 1 + len(_REFS)
            refs_end = mm.find(b"]", refs_at, end)
            if refs_end >= 0:
                return mm[at + len(_OPS) : ops_end], mm[refs_at:refs_end]
    data = orjson.loads(mm[offset:end])["data"]
    return orjson.dumps(data["ops"])[1:-1], orjson.dumps(data["refs"])[1:-1]


def _numbers(text: bytes) -> np.ndarray:
    """Comma-separated integers as an array (one parse for a whole life's records: numpy's
    text reader, ~6x orjson's list and its conversion)."""
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)


def _search_lines(mm: mmap.mmap, scope: Scope, pattern: Pattern, matches: dict[str, bool], found: _Found) -> None:
    """Format 1: belief events that are lines of their own (an old trace, or its part)."""
    agents = {a.name: a for a in scope.agents}
    functor = b'"belief":"' + pattern.functor.encode()
    for m in _BELIEF_LINE.finditer(mm, 0, scope.indexed_bytes):
        start = mm.rfind(b"\n", 0, m.start()) + 1
        end = mm.find(b"\n", m.end())
        end = len(mm) if end < 0 else end
        at = mm.find(functor, start, end)
        if at < 0 or mm[at + len(functor) : at + len(functor) + 1] not in (b"(", b'"'):
            continue
        try:
            event = orjson.loads(mm[start:end])
            agent, data = agents.get(event["agent"]), event["data"]
            belief = data["belief"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
        if agent is None or type(belief) is not str:
            continue
        line = int(np.searchsorted(agent.offsets, start))
        if line >= len(agent.offsets) or agent.offsets[line] != start:
            continue  # a line the index did not take
        hit = matches.get(belief)
        if hit is None:
            hit = matches[belief] = pattern.matches(belief)
        if not hit:
            continue
        if event["kind"] == BELIEF_ADD:
            found.adds += 1
        else:
            found.dels += 1
        found.note(agent.name, data, ADD if event["kind"] == BELIEF_ADD else DEL, int(agent.firsts[line]), start, -1)


def _hits(mm: mmap.mmap, found: _Found) -> list[Hit]:
    """Each first add or removal with its time, episode and step (read from its line: a
    record's stamps for its entry)."""
    lines: dict[int, tuple[float | None, list[int] | None, dict[str, Any] | None]] = {}
    hits = []
    for (agent, belief, source, kind), (position, offset, entry) in found.firsts.items():
        info = lines.get(offset)
        if info is None:
            info = lines[offset] = _line_info(mm, offset, entry < 0)
        ts, at, event = info
        episode = step = None
        if event is not None:
            episode, step = event.get("episode"), event.get("step")
        elif at:
            k = bisect.bisect_right(at[0::3], entry) - 1
            episode, step = at[3 * k + 1], at[3 * k + 2]
        hits.append(Hit(agent, belief, source, kind, position, episode, step, ts))
    return hits


def _line_info(mm: mmap.mmap, offset: int, whole: bool) -> tuple[float | None, list[int] | None, dict[str, Any] | None]:
    """(ts, the record's ``at`` stamps, the event when ``whole``) of the line at ``offset``."""
    end = mm.find(b"\n", offset)
    end = len(mm) if end < 0 else end
    if whole:
        event = orjson.loads(mm[offset:end])
        return event.get("ts"), None, event
    ts = None
    at_ts = mm.find(_TS, offset, end)
    if at_ts >= 0:
        comma = mm.find(b",", at_ts + len(_TS), end)
        try:
            ts = float(mm[at_ts + len(_TS) : comma])
        except ValueError:
            ts = None
    at = None
    at_at = mm.find(_AT, offset, end)
    if at_at >= 0:
        close = mm.find(b"]", at_at, end)
        at = orjson.loads(b"[" + mm[at_at + len(_AT) : close] + b"]")
    else:
        at = orjson.loads(mm[offset:end])["data"]["at"]
    return ts, at, None


def format_result(result: SearchResult) -> str:
    """The hits as ``bdi-rl search`` prints them: one line each, in time order."""
    head = (
        f"{result.pattern}: {result.found} first adds/removals "
        f"({result.adds} adds and {result.dels} removals matched)"
        + (f"; the first {result.limit} in time order" if result.truncated else "")
    )
    rows = [("agent", "", "belief", "source", "episode", "step", "event")]
    rows += [
        (
            h.agent.split("@", 1)[0],
            "added" if h.kind == ADD else "removed",
            h.belief,
            h.source,
            _cell(h.episode),
            _cell(h.step),
            str(h.position),
        )
        for h in result.hits
    ]
    widths = [min(60, max(len(r[k]) for r in rows)) for k in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join([head, *lines] if result.hits else [head])


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)
