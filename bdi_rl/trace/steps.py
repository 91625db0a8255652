"""Step records: how format 2 keeps an agent's step-level events (``bdi-rl.trace/2``).

Format 1 wrote every belief change, goal, plan start and end, action and Q-update as an event
of its own: a dict built, timestamped and encoded per event, 10 events and 2.4 KB per env step
of the README's first run. Format 2 keeps them, in order, in the agent's open
:class:`StepRecord`: an op code and a reference per event, appended to two lists. A literal,
goal or plan seen before is a number (its *definition*, written once per agent, in the record
that first uses it); a Q-update is a row of columns. The record becomes one ``steps`` event
when any other event is emitted (so the order of events is kept), when it grows past
:data:`MAX_ENTRIES`, or when the shipper flushes it.

Readers never see records: :class:`RecordReader` expands each into the format-1 events it
stands for (same kinds, same data, same episode and step), so everything that reads format 1
reads format 2 with the same answers (``tests/test_trace_v1.py`` holds them to it).

A record may start with a *keyframe*: the definitions of what the agent believed and
intended before its first entry, written every :data:`KEYFRAME_ENTRIES` entries, so a reader
can show the mind at any point by folding at most that many events, never from the start.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

from bdi_rl.trace.errors import TraceFormatError
from bdi_rl.trace.kinds import AGENT_START, RECORD_KINDS, STEPS

OP = {kind: code for code, kind in enumerate(RECORD_KINDS)}
OP_BELIEF_ADD, OP_BELIEF_DEL, OP_GOAL, OP_START, OP_END, OP_ACTION, OP_RL, OP_CYCLE, OP_OPTIONS, OP_INTENTIONS = range(
    len(RECORD_KINDS)
)

#: Entries in one record before it is closed (a record must fit a trace batch: <= 1 MB).
MAX_ENTRIES = 4096
#: Bytes of new definitions in one record before it is closed.
MAX_DEF_BYTES = 256 << 10
#: Entries between two keyframes (a reader folds at most about this many to show a mind).
KEYFRAME_ENTRIES = 1024


class StepRecord:
    """An agent's open record; writers append to it through the methods below.

    The lists are kept for the record's life and copied out when it closes, so a hot path
    may hold their bound ``append`` methods."""

    def __init__(self) -> None:
        self.ops: list[int] = []
        self.refs: list[int] = []
        self.at: list[int] = []
        """(entry, episode, step) triples: the stamp of the entries from ``entry`` on"""
        self.ids: dict[Hashable, int] = {}
        """a writer's key -> definition id, for the agent's whole life (a new agent.start resets)"""
        self.defs: list[Any] = []
        """definitions made since the record opened (ids ``def0`` ...)"""
        self.def0 = 0
        self.def_bytes = 0
        # rl columns
        self.s: list[int] = []
        self.a: list[int] = []
        self.r: list[float] = []
        self.s2: list[int] = []
        self.done: list[int] = []
        self.q_after: list[float] = []
        self.q: list[float] = []
        """the Q rows, one after another (a list of lists would be one more object per step
        for the garbage collector to scan, as long as the record waits for its ack)"""
        self.q_before: list[float] = []
        """rows without a Q row (a writer that had none): Q[s, a] before, per row"""
        self.epsilon: list[float] = []
        self.eps_rows: list[int] = []
        self.cycles: list[dict[str, Any]] = []
        self.since_keyframe = 0  # a reader starts each agent's life with an empty mind
        self._next_keyframe: dict[str, list[int]] | None = None
        self.keyframe: Callable[[StepRecord], dict[str, list[int]]] | None = None
        """what the agent believes and intends now, as definition ids (set by the mind's tracer)"""

    def __len__(self) -> int:
        return len(self.ops)

    def reset(self) -> None:
        """A new agent life (``agent.start``): definitions start again from 0."""
        self.ids.clear()
        self.defs.clear()
        self.def0 = 0
        self.def_bytes = 0
        self.since_keyframe = 0
        self._next_keyframe = None

    # -- writing ----------------------------------------------------------------------------
    def define(self, key: Hashable, data: Any, size: int | None = None) -> int:
        """A new definition (``data``: the event data it stands for) under ``key`` (None: a
        definition no later event can share). Returns its id. ``size``: ``data_size(data)``,
        when the writer knows it cheaper (a belief: every episode defines a few)."""
        ref = self.def0 + len(self.defs)
        self.defs.append(data)
        self.def_bytes += data_size(data) if size is None else size
        if key is not None:
            self.ids[key] = ref
        return ref

    def add(self, kind: str, data: dict[str, Any]) -> None:
        """One event of a record kind, given as its data (the slow, general path: writers
        on hot paths intern their keys and append ``ops``/``refs`` themselves)."""
        op = OP[kind]
        if op == OP_CYCLE:
            self.ops.append(op)
            self.refs.append(len(self.cycles))
            self.cycles.append(data)
            return
        if op == OP_RL:
            row = data.get("q")
            if not row:  # a writer without the Q row: only Q[s, a] before is known
                self.q_before.append(data["q_before"])
                row = []
            self.rl_step(
                data["s"],
                data["a"],
                data["r"],
                data["s2"],
                data["done"],
                data["q_after"],
                data["epsilon"],
                row,
                self.at[-2],  # the clock stays where it is
                self.at[-1],
            )
            return
        self.ops.append(op)
        self.refs.append(self.define(None, data))

    def rl_step(
        self,
        s: int,
        a: int,
        r: float,
        s2: int,
        done: bool,
        q_after: float,
        epsilon: float,
        row: list[float],
        episode: int,
        step: int,
    ) -> bool:
        """One Q-update, and the env's clock moving on to ``episode``, ``step`` (what follows
        happened after it); ``row`` is Q[s] as the action was chosen from it (so Q[s, a]
        before the update is ``row[a]``). True when the record is full (close it)."""
        k = len(self.s)
        ops = self.ops
        ops.append(OP_RL)
        self.refs.append(k)
        self.s.append(s)
        self.a.append(a)
        self.r.append(r)
        self.s2.append(s2)
        self.q_after.append(q_after)
        self.q += row
        if done:
            self.done.append(k)
        eps = self.epsilon
        if not eps or eps[-1] != epsilon:
            eps.append(epsilon)
            self.eps_rows.append(k)
        n = len(ops)
        self.at += (n, episode, step)
        return n >= MAX_ENTRIES

    def rl_rows(self, columns: Any, start: int, stop: int, done: bool, epsilon: float, episode: int) -> None:
        """Rows ``start`` to ``stop`` of an episode's columns (``rl.qlearning.StepColumns``)
        at once, each stamped with its step; ``done``: the last of them ended the episode."""
        k0, n0, n = len(self.s), len(self.ops), stop - start
        self.ops += [OP_RL] * n
        self.refs += range(k0, k0 + n)
        self.s += columns.s[start:stop]
        self.a += columns.a[start:stop]
        self.r += columns.r[start:stop]
        self.s2 += columns.s2[start:stop]
        self.q_after += columns.q_after[start:stop]
        width = len(columns.q) // len(columns.s)
        self.q += columns.q[start * width : stop * width]
        if done:
            self.done.append(k0 + n - 1)
        if not self.epsilon or self.epsilon[-1] != epsilon:
            self.epsilon.append(epsilon)
            self.eps_rows.append(k0)
        marks = [episode] * (3 * n)  # (entry, episode, step) after each row
        marks[0::3] = range(n0 + 1, n0 + n + 1)
        marks[2::3] = range(start + 1, stop + 1)
        self.at += marks

    def stamp(self, episode: int, step: int) -> None:
        """Entries from now on belong to ``episode``, ``step``."""
        at = self.at
        if at and at[-3] == len(self.ops):
            at[-2] = episode
            at[-1] = step
        else:
            at += (len(self.ops), episode, step)

    # -- closing --------------------------------------------------------------------------------
    @property
    def full(self) -> bool:
        return len(self.ops) >= MAX_ENTRIES or self.def_bytes >= MAX_DEF_BYTES

    def close(self, episode: int, step: int) -> dict[str, Any] | None:
        """The record's ``steps`` data, or None if it holds nothing; the record is empty
        after it, stamped ``episode``, ``step``."""
        n = len(self.ops)
        if not n:
            self.at[:] = (0, episode, step)
            if self._next_keyframe is not None and self.keyframe is not None:
                self._next_keyframe = self.keyframe(self)  # an event between records may have changed the mind
            return None
        data: dict[str, Any] = {"ops": self.ops[:], "refs": self.refs[:], "at": self.at[:], "def0": self.def0}
        if self.s:
            data["rl"] = {
                "s": self.s[:],
                "a": self.a[:],
                "r": self.r[:],
                "s2": self.s2[:],
                "done": self.done[:],
                "q_after": self.q_after[:],
                "q": self.q[:],
                **({"q_before": self.q_before[:]} if self.q_before else {}),
                "epsilon": self.epsilon[:],
                "eps_rows": self.eps_rows[:],
            }
        if self.cycles:
            data["cycles"] = self.cycles[:]
        if self._next_keyframe is not None:
            data["keyframe"] = self._next_keyframe
            self._next_keyframe = None
        data["defs"] = self.defs[:]
        self.def0 += len(self.defs)
        for column in (
            self.ops,
            self.refs,
            self.defs,
            self.s,
            self.a,
            self.r,
            self.s2,
            self.done,
            self.q_after,
            self.q,
            self.q_before,
            self.epsilon,
            self.eps_rows,
            self.cycles,
        ):
            column.clear()
        self.def_bytes = 0
        self.at[:] = (0, episode, step)
        self.since_keyframe += n
        if self.keyframe is not None and self.since_keyframe >= KEYFRAME_ENTRIES:
            # the mind now is the mind before the next record's first entry
            self._next_keyframe = self.keyframe(self)
            self.since_keyframe = 0
        return data


def data_size(data: Any) -> int:
    """About how many bytes ``data`` takes in the trace (exact enough to bound a record)."""
    if type(data) is dict:
        return 16 + sum(len(k) + data_size(v) for k, v in data.items())
    if type(data) is str:
        return len(data) + 2
    if type(data) is list:
        return 2 + sum(data_size(v) + 1 for v in data)
    return 24


# -- reading ------------------------------------------------------------------------------------
class RecordReader:
    """Expands records into format-1 events; one per trace, it keeps each agent's definitions."""

    def __init__(self) -> None:
        self.defs: dict[str, list[Any]] = {}

    def reset(self, agent: str) -> None:
        """``agent`` started (again): its definitions start from 0."""
        self.defs[agent] = []

    def learn(self, event: dict[str, Any]) -> list[Any]:
        """Take the record's new definitions; returns the agent's definitions so far."""
        data = event["data"]
        defs = self.defs.setdefault(event["agent"], [])
        if data["def0"] != len(defs):
            raise TraceFormatError(
                f"steps record of {event['agent']} defines from {data['def0']}, the trace holds {len(defs)}"
            )
        defs.extend(data["defs"])
        return defs

    def expand(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The format-1 events a ``steps`` event stands for, in order."""
        return expand(event, self.learn(event))

    def events(self, events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``events`` (one trace's, in order) as format 1 has them: records expanded."""
        for event in events:
            kind = event["kind"]
            if kind == STEPS:
                yield from self.expand(event)
                continue
            if kind == AGENT_START:
                self.reset(event["agent"])
            yield event


def expanded(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with every step record expanded (a tracer's ``pending``, a file's lines)."""
    return list(RecordReader().events(events))


def expand(event: dict[str, Any], defs: list[Any], start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
    """Events ``start`` to ``stop`` of the ``steps`` event ``event``, ``defs`` the agent's
    definitions (including the record's own)."""
    data = event["data"]
    ops, refs, at = data["ops"], data["refs"], data["at"]
    stop = len(ops) if stop is None else min(stop, len(ops))
    rl = data.get("rl")
    cycles = data.get("cycles")
    base = {k: event[k] for k in ("schema", "run", "agent", "seq", "ts")}
    out = []
    mark = 0  # index into at (triples)
    n_marks = len(at) // 3
    for i in range(start, stop):
        while mark + 1 < n_marks and at[3 * (mark + 1)] <= i:
            mark += 1
        op, ref = ops[i], refs[i]
        kind = RECORD_KINDS[op]
        if op == OP_RL:
            payload = rl_row(rl, ref)
        elif op == OP_CYCLE:
            payload = cycles[ref]
        else:
            payload = defs[ref]
        out.append({**base, "kind": kind, "episode": at[3 * mark + 1], "step": at[3 * mark + 2], "data": payload})
    return out


def rl_row(rl: dict[str, Any], k: int) -> dict[str, Any]:
    """Row ``k`` of a record's rl columns, as format 1's ``rl.step`` data."""
    q = rl["q"]
    width = len(q) // len(rl["s"])
    row = q[k * width : (k + 1) * width]
    a = rl["a"][k]
    if "q_before" in rl:  # rows written without their Q row
        before = rl["q_before"][k]
    else:
        before = row[a] if 0 <= a < len(row) else None
    eps_rows = rl["eps_rows"]
    j = len(eps_rows) - 1
    while eps_rows[j] > k:
        j -= 1
    return {
        "s": rl["s"][k],
        "a": a,
        "r": rl["r"][k],
        "s2": rl["s2"][k],
        "done": k in rl["done"],
        "q_before": before,
        "q_after": rl["q_after"][k],
        "epsilon": rl["epsilon"][j],
        **({"q": row} if row else {}),
    }


def keyframe_of(data: dict[str, Any], defs: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """A record's keyframe as (belief.add data, intention.start data), or None."""
    frame = data.get("keyframe")
    if frame is None:
        return None
    return [defs[ref] for ref in frame["beliefs"]], [defs[ref] for ref in frame["intentions"]]
