"""The one module that maps what the mind does to trace events (:mod:`bdi_rl.trace.kinds`).

:class:`TraceListener` turns the runtime's listener hooks into ``belief.add`` /
``belief.del``, ``goal.add``, ``intention.start`` / ``intention.end``, ``action`` and, at the
``cycle`` level, ``cycle``, ``options`` and ``intentions``; it is installed only at the levels
that record them (``bdi.mind.load_mind``), so below ``step`` the interpreter runs its plain,
unwrapped paths. :class:`MindHost` records dropped intentions (``intention.fail``, one per
frame, at every level). Texts are :mod:`bdi_rl.bdi.text`'s. It knows nothing of SPADE or RL.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bdi_rl.bdi.runtime import Agent, Host, Listener
from bdi_rl.bdi.runtime import listener as hooks
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.listener import Recorder
from bdi_rl.bdi.runtime.reasoning import applicable_plans
from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, Struct, sources
from bdi_rl.bdi.runtime.triggers import TRIGGER_TEXT
from bdi_rl.bdi.text import source_text, term_text
from bdi_rl.trace.kinds import (
    CYCLE,
    INTENTION_FAIL,
    ActionData,
    BeliefAddData,
    CycleData,
    GoalAddData,
    IntendedMeans,
    IntentionFailData,
    IntentionsData,
    IntentionStartData,
    OptionsData,
    StackData,
    TraceLevel,
    clip_text,
)
from bdi_rl.trace.steps import (
    OP_ACTION,
    OP_BELIEF_ADD,
    OP_BELIEF_DEL,
    OP_END,
    OP_GOAL,
    OP_INTENTIONS,
    OP_OPTIONS,
    OP_START,
    StepRecord,
    data_size,
)
from bdi_rl.trace.tracer import Tracer

if (OP_BELIEF_ADD, OP_BELIEF_DEL, OP_GOAL, OP_START, OP_END, OP_ACTION) != (
    hooks.BELIEF_ADDED,
    hooks.BELIEF_REMOVED,
    hooks.GOAL_ADDED,
    hooks.PLAN_STARTED,
    hooks.PLAN_ENDED,
    hooks.ACTION_RAN,
):
    raise RuntimeError("bdi.mindtrace: the runtime's event codes must be the trace's record ops")

#: ``intention.fail`` events for the frames of one failed intention, at most.
FAILED_FRAMES_TRACED = 20


def plan_labels(mind: Agent) -> dict[str, str]:
    """Each plan's name -> how the trace names it: its ``@label``, or for a plan without
    one its trigger (``+!greet/1``; the runtime calls it ``p__N``, as Jason does)."""
    labels = {}
    for (ttype, functor, arity), plans in mind.plans.items():
        for plan in plans:
            labels[plan.name] = plan.name if plan.label is not None else f"{TRIGGER_TEXT[ttype]}{functor}/{arity}"
    return labels


class _Labels:
    """Plan labels by name, rebuilt when a plan is added (``tellHow``)."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def __call__(self, mind: Agent, name: str | None) -> str | None:
        if name is None:
            return None
        label = self.known.get(name)
        if label is None:
            self.known = plan_labels(mind)
            label = self.known.get(name, name)
        return label


def _source(annots: frozenset[Any]) -> str:
    """Whose belief, goal or event: its first source as the trace names it (cached: the same
    few annotation sets come back every step)."""
    text = _SOURCES.get(annots)
    if text is None:
        who = sources(annots)
        text = _SOURCES[annots] = source_text(who[0]) if who else "self"
        if len(_SOURCES) > 4096:
            _SOURCES.clear()
    return text


_SOURCES: dict[frozenset[Any], str] = {}
#: ``trace.steps.data_size`` of a belief's definition without its two texts: the dict, its keys
#: and the texts' quotes (a definition is made for every new belief, a few per episode).
_BELIEF_SIZE = data_size({"belief": "", "source": ""})
#: The same for a goal's and a plan start's definitions: a goal or trigger that carries the
#: episode's number (``!announce(E, K, A)``) is new every episode, a few per step.
_GOAL_SIZE = data_size({"goal": "", "source": ""})
_START_SIZE = data_size({"trigger": "", "plan": "", "source": ""})


def _action_value(value: Any) -> Any:
    """An action's argument or result as the trace keeps it: JSON values, long strings
    (shared experience) clipped, runtime terms as their text."""
    kind = type(value)
    if kind is str:
        return clip_text(value, 200)
    if kind is tuple or kind is list:
        return [_action_value(v) for v in value]
    if value is None or kind is int or kind is float or kind is bool:
        return value
    return term_text(value)


class TraceListener(Listener):
    """The runtime's hooks as step-level events in the tracer's open step record
    (``bdi_rl.trace.steps``): each is an op and a definition id appended to two lists; a
    literal, goal, plan or action call seen before costs a dict lookup, never a text.
    At ``cycle`` level also ``cycle``, ``options`` and ``intentions`` (the Mind Inspector's
    view: every intention's stack, the events, the plans considered). Failures are traced
    by :class:`MindHost`."""

    def __init__(self, tracer: Tracer, mind: Agent | None = None) -> None:
        """``mind``: the agent traced (its keyframes); None until it is made with this
        listener compiled in (``bdi.mind``), which sets :attr:`mind`."""
        record = tracer.record
        self.tracer = tracer
        self.record = record
        self.ids = record.ids  # all three are cleared in place, never replaced
        self.op = record.ops.append
        self.ref = record.refs.append
        self.cycles = tracer.level >= TraceLevel.CYCLE
        self.wants_options = self.cycles
        self.label = _Labels()
        self.n = 0
        self._taking: list[str] = []
        self.mind: Agent | None = mind
        record.keyframe = self.keyframe
        # Known events go straight to the record (at cycle level, not pushes and pops: the
        # listener snapshots the stacks at each).
        self.recorder: Recorder = Recorder()
        self.recorder.ids, self.recorder.ops, self.recorder.refs = record.ids, record.ops, record.refs

    # -- step level ----------------------------------------------------------------------------
    def on_belief_added(self, agent: Any, functor: str, args: tuple[Any, ...], annots: frozenset[Any]) -> None:
        key = (functor, args, annots)
        ref = self.ids.get(key)
        if ref is None:
            ref = self._belief(key)
        self.op(OP_BELIEF_ADD)
        self.ref(ref)

    def on_belief_removed(self, agent: Any, functor: str, args: tuple[Any, ...], annots: frozenset[Any]) -> None:
        key = (functor, args, annots)
        ref = self.ids.get(key)
        if ref is None:
            ref = self._belief(key)
        self.op(OP_BELIEF_DEL)
        self.ref(ref)

    def on_percept_replaced(
        self, agent: Any, functor: str, old: tuple[Any, ...] | None, new: tuple[Any, ...] | None
    ) -> None:
        ids = self.ids
        if old is not None:
            key = (functor, old, ANNOTS_PERCEPT)
            ref = ids.get(key)
            self.op(OP_BELIEF_DEL)
            self.ref(self._belief(key) if ref is None else ref)
        if new is not None:
            key = (functor, new, ANNOTS_PERCEPT)
            ref = ids.get(key)
            self.op(OP_BELIEF_ADD)
            self.ref(self._belief(key) if ref is None else ref)

    def _belief(self, key: tuple[str, tuple[Any, ...], frozenset[Any]]) -> int:
        functor, args, annots = key
        belief, source = clip_text(term_text(Struct(functor, args), annots=False)), _source(annots)
        data: BeliefAddData = {"belief": belief, "source": source}
        if len(annots) > 1:
            who = sources(annots)
            if len(who) > 1:  # several at once: a keyframe's belief, or the removal of all of them
                data["sources"] = [source_text(s) for s in who]
                return self.record.define(key, data)
        return self.record.define(key, data, _BELIEF_SIZE + len(belief) + len(source))

    def goal_added(self, agent: Any, goal: Any, new_intention: bool) -> None:
        key: Any = ("!", goal.functor, goal.args, goal.annots)
        try:
            ref = self.ids.get(key)
        except TypeError:
            ref = key = None
        if ref is None:
            text, source = clip_text(term_text(goal, annots=False)), _source(goal.annots)
            data: GoalAddData = {"goal": text, "source": source}
            ref = self.record.define(key, data, _GOAL_SIZE + len(text) + len(source))
        self.op(OP_GOAL)
        self.ref(ref)

    def on_push(self, agent: Any, plan: Any, ttype: int, event: Any, intention: Any = None) -> None:
        ref = self._started(agent, plan, ttype, event)
        self.op(OP_START)
        self.ref(ref)
        if self.cycles:
            self.stacks(agent, intention)

    def _started(self, agent: Any, plan: Any, ttype: int, event: Any) -> int:
        key: Any = (plan.name, ttype, event.functor, event.args, event.annots)
        try:
            ref = self.ids.get(key)
        except TypeError:
            ref = key = None
        if ref is None:
            trigger = clip_text(TRIGGER_TEXT[ttype] + term_text(event, annots=False))
            label, source = self.label(agent, plan.name) or plan.name, _source(event.annots)
            data: IntentionStartData = {"trigger": trigger, "plan": label, "source": source}
            ref = self.record.define(key, data, _START_SIZE + len(trigger) + len(label) + len(source))
        return ref

    def intention_ended(self, agent: Any, plan: str) -> None:
        key = ("-", plan)
        ref = self.ids.get(key)
        if ref is None:
            ref = self.record.define(key, {"plan": self.label(agent, plan) or plan})
        self.op(OP_END)
        self.ref(ref)
        if self.cycles:
            self.stacks(agent)

    def action_executed(self, agent: Any, name: str, args: tuple[Any, ...], result: Any) -> None:
        key: Any = (name, args, result)
        try:
            ref = self.ids.get(key)
        except TypeError:  # a list among the values (shared experience): defined each time
            ref = key = None
        if ref is None:
            data: ActionData = {"name": name, "args": [_action_value(a) for a in args]}
            if result is not None:
                data["result"] = _action_value(result)
            ref = self.record.define(key, data)
        self.op(OP_ACTION)
        self.ref(ref)

    def keyframe(self, record: StepRecord) -> dict[str, list[int]]:
        """What the mind believes and intends now, as definition ids (for a record's keyframe)."""
        ids = self.ids
        mind = self.mind
        if mind is None:
            return {"beliefs": [], "intentions": []}
        beliefs = []
        for (functor, _), group in mind.beliefs.groups.items():
            for args, annots in group.items():
                key = (functor, args, annots)
                ref = ids.get(key)
                beliefs.append(self._belief(key) if ref is None else ref)
        intentions = [
            self._started(mind, frame.plan, frame.ttype, frame.event) for it in _intentions(mind) for frame in it.stack
        ]
        return {"beliefs": beliefs, "intentions": intentions}

    # -- cycle level -------------------------------------------------------------------------------
    def cycle(self, agent: Any, n: int) -> None:
        if self.record.full:
            self.tracer.flush_record()
        if not self.cycles:
            return
        self.n += 1
        it = agent.current
        frame = it.stack[-1] if it is not None and it.stack else None
        line = None
        if frame is not None:
            lines = frame.plan.lines
            line = lines[frame.pc] if frame.pc < len(lines) else frame.plan.line
        data: CycleData = {
            "n": self.n,
            "plan": self.label(agent, frame.plan.name) if frame is not None else None,
            "depth": len(it.stack) if it is not None else 0,
            "line": line,
            "intentions": len(agent.running)
            + len(agent.pending_asks)
            + len(agent.held)
            + sum(map(len, agent.waiters.values()))
            + len(_event_intentions(agent))
            + len(agent.suspended_ints),
            "events": self._taking,
            "pending": _event_texts(agent.events),
        }
        self._taking = []
        self.record.add(CYCLE, data)  # type: ignore[arg-type]
        self.stacks(agent)

    def cycle_starting(self, agent: Any) -> None:
        if self.cycles:
            self._taking = _event_texts(agent.events)

    def on_select(self, agent: Any, ttype: int, event: Any, selected: Any) -> None:
        """Jason's options for the event: the relevant plans, the applicable ones, the one
        chosen. Selection takes the first applicable plan in source order, so the plans
        before the chosen one are not applicable and only those after it are tested here."""
        relevant = agent.plans.get((ttype, event.functor, len(event.args))) or []
        later: list[Any] = []
        if selected is not None and relevant and relevant[-1] is not selected:
            self.recorder.paused = True  # contexts tested again: not the agent's actions
            try:
                after = relevant.index(selected)
                later = [p for p in applicable_plans(agent, ttype, event) if relevant.index(p) > after]
            finally:
                self.recorder.paused = False
        key: Any = (
            "?",
            ttype,
            event.functor,
            event.args,
            id(relevant),
            len(relevant),  # plans told since (tellHow) make another key
            None if selected is None else selected.name,
            *[p.name for p in later],
        )
        try:
            ref = self.ids.get(key)
        except TypeError:
            ref = key = None
        if ref is None:
            label = self.label
            applicable = [] if selected is None else [selected, *later]
            data: OptionsData = {
                "event": clip_text(TRIGGER_TEXT[ttype] + term_text(event, annots=False)),
                "relevant": [label(agent, p.name) or p.name for p in relevant],
                "applicable": [label(agent, p.name) or p.name for p in applicable],
                "selected": None if selected is None else label(agent, selected.name) or selected.name,
            }
            ref = self.record.define(key, data)
        self.op(OP_OPTIONS)
        self.ref(ref)

    def stacks(self, agent: Any, new: Any = None) -> None:
        """Every intention's stack of intended means, as an ``intentions`` event (interned:
        a loop's stacks repeat, so each costs a lookup); ``new``: an intention just made,
        not yet queued."""
        current = agent.current
        suspended = _suspended(agent) if agent.waiters or agent.pending_asks or agent.timers or agent.held else {}
        intentions = _intentions(agent, new, suspended)
        states = [_CURRENT if it is current else _SUSPENDED if it.id in suspended else _RUNNING for it in intentions]
        key: Any = (
            "stacks",
            *[
                (it.id, state, *[(f.plan.name, f.pc, f.event.functor, f.event.args) for f in it.stack])
                for it, state in zip(intentions, states, strict=True)
            ],
        )
        try:
            ref = self.ids.get(key)
        except TypeError:
            ref = key = None
        if ref is None:
            data: IntentionsData = {"intentions": [self._stack(agent, it) for it in intentions]}
            for stack, state in zip(data["intentions"], states, strict=True):
                stack["state"] = state
            ref = self.record.define(key, data)
        self.op(OP_INTENTIONS)
        self.ref(ref)

    def _stack(self, agent: Any, it: Any) -> StackData:
        means: list[IntendedMeans] = [
            {
                "trigger": clip_text(TRIGGER_TEXT[f.ttype] + term_text(f.event, annots=False)),
                "plan": self.label(agent, f.plan.name) or f.plan.name,
                "file": f.plan.file,
                "line": _frame_line(f),
            }
            for f in it.stack
        ]
        return {"id": it.id, "means": means, "state": "running"}


def _frame_line(frame: Frame) -> int:
    """The line of the instruction ``frame`` runs next (its plan's line once past the end)."""
    lines = frame.plan.lines
    return lines[frame.pc] if frame.pc < len(lines) else frame.plan.line


_CURRENT, _RUNNING, _SUSPENDED = "current", "running", "suspended"


def _intentions(mind: Agent, new: Any = None, suspended: dict[int, Any] | None = None) -> list[Any]:
    """Every intention of the mind: the one running, the queued, those waiting for their
    event (Jason's cycle), the suspended (and ``new``, one just made); oldest id first."""
    seen: dict[int, Any] = {} if new is None or not new.stack else {new.id: new}
    if mind.current is not None and mind.current.stack:
        seen[mind.current.id] = mind.current
    for it in mind.running:
        seen[it.id] = it
    for it in _event_intentions(mind):
        seen[it.id] = it
    for it in (_suspended(mind) if suspended is None else suspended).values():
        seen[it.id] = it
    return [seen[k] for k in sorted(seen)] if len(seen) > 1 else list(seen.values())


def _suspended(mind: Agent) -> dict[int, Any]:
    """Intentions that wait (``.wait``, a synchronous ask, a host action such as a shared
    world's ``.rl_act``, ``.suspend``), by id."""
    found: dict[int, Any] = {}
    entries = [
        *(w for waiting in mind.waiters.values() for w in waiting),
        *mind.pending_asks.values(),
        *mind.timers,
        *mind.held.values(),
    ]
    for entry in entries:
        for value in entry:
            if type(value) is Intention:
                found[value.id] = value
    for it in (*mind.suspended_ints.values(), *mind.tasks, *mind.feedback):
        found[it.id] = it
    return found


def _event_intentions(mind: Agent) -> list[Any]:
    """The intentions that wait for one of their events to be selected (Jason's cycle)."""
    found = [event[2] for event in mind.events if event[2] is not None]
    if mind.atomic_event is not None:
        found.append(mind.atomic_event[2])
    return found


def _event_texts(events: Iterable[tuple[int, Any]]) -> list[str]:
    return [clip_text(TRIGGER_TEXT[event[0]] + term_text(event[1], annots=False)) for event in events]


def failure_text(report: dict[str, Any]) -> str:
    """A dropped intention in one line: ``file:line: message`` (the message names the goal
    when no plan was found for it)."""
    message = report.get("message") or report.get("error") or "plan failure"
    if report.get("error") == "max_depth":
        message += " (endless recursion?)"
    if report.get("file"):
        return f"{report['file']}:{report['line']}: {message}"
    return message


class MindHost(Host):
    """What the mind needs of its host, as far as the trace is concerned: every dropped
    intention is recorded (``intention.fail`` for each of its frames, innermost first; of a
    deep one, the innermost few and the outermost) and kept in :attr:`failures`."""

    def __init__(self, tracer: Tracer | None = None) -> None:
        self.tracer = tracer
        self.failures: list[str] = []
        self._label = _Labels()

    def intention_failed(self, agent: Any, report: dict[str, Any]) -> None:
        error = failure_text(report)
        self.failures.append(error)
        if self.tracer is None:
            return
        frames = list(report.get("frames") or ()) or [report.get("plan")]
        if len(frames) > FAILED_FRAMES_TRACED:
            frames = [*frames[: FAILED_FRAMES_TRACED - 1], frames[-1]]
        for name in frames:
            failed: IntentionFailData = {"plan": self._label(agent, name), "error": error}
            self.tracer.emit(INTENTION_FAIL, failed)
