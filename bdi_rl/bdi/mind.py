"""The agent's mind: a :mod:`bdi_rl.bdi.runtime` agent, loaded with clear errors and traced.

:func:`load_mind` turns a plan file into a runtime :class:`~bdi_rl.bdi.runtime.Agent` (any
problem is one :class:`AslError`, ``file:line[:col]: message``); :func:`check_asl` does the
same before a run, and also refuses an initial goal that no plan has a trigger for.

This is the one module that maps what the mind does to trace events
(:mod:`bdi_rl.trace.events`): :class:`TraceListener` turns the runtime's listener hooks into
``belief.add`` / ``belief.del``, ``goal.add``, ``intention.start`` / ``intention.end`` and
``cycle``, and is installed only at the levels that record them, so below ``step`` the
interpreter runs its plain, unwrapped paths. :class:`MindHost` records dropped intentions
(``intention.fail``, one per frame, at every level). Texts are :mod:`bdi_rl.bdi.text`'s.
It knows nothing of SPADE or RL.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable, Iterable

from bdi_rl.bdi.runtime import Actions, Agent, AslSyntaxError, Host, Listener
from bdi_rl.bdi.runtime.triggers import ADD_ACH, TRIGGER_TEXT
from bdi_rl.bdi.runtime.parser import parse_file, parse_text
from bdi_rl.bdi.runtime.syntax import Program
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, Struct, has_source, sources
from bdi_rl.bdi.text import source_text, term_text
from bdi_rl.trace.events import (
    BELIEF_ADD,
    BELIEF_DEL,
    CYCLE,
    GOAL_ADD,
    INTENTION_END,
    INTENTION_FAIL,
    INTENTION_START,
    BeliefAddData,
    BeliefDelData,
    CycleData,
    GoalAddData,
    IntentionFailData,
    IntentionStartData,
    TraceLevel,
    clip_text,
)
from bdi_rl.trace.tracer import Tracer

#: ``intention.fail`` events for the frames of one failed intention, at most.
FAILED_FRAMES_TRACED = 20


class AslError(ValueError):
    """A plan library that cannot be loaded: ``file:line[:col]: message``."""


def plan_labels(mind: Agent) -> dict[str, str]:
    """Each plan's name -> how the trace names it: its ``@label``, or for a plan without
    one its trigger (``+!greet/1``; the runtime calls it ``l__N``)."""
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


def _source(annots: Iterable[Any]) -> str:
    who = sources(annots)
    return source_text(who[0]) if who else "self"


class TraceListener(Listener):
    """The runtime's hooks as ``step``-level events (and ``cycle`` events at ``cycle`` level).
    Actions are traced where they are registered (``bdi.actions``); failures by :class:`MindHost`."""

    def __init__(self, tracer: Tracer) -> None:
        self.emit = tracer.emit
        self.cycles = tracer.level >= TraceLevel.CYCLE
        self.label = _Labels()
        self.n = 0

    def belief_added(self, agent: Any, belief: Any, source: Any) -> None:
        added: BeliefAddData = {"belief": clip_text(term_text(belief, annots=False)), "source": source_text(source)}
        self.emit(BELIEF_ADD, added)

    def belief_removed(self, agent: Any, belief: Any, source: Any) -> None:
        deleted: BeliefDelData = {"belief": clip_text(term_text(belief, annots=False)), "source": source_text(source)}
        self.emit(BELIEF_DEL, deleted)

    def goal_added(self, agent: Any, goal: Any, new_intention: bool) -> None:
        data: GoalAddData = {"goal": clip_text(term_text(goal, annots=False)), "source": _source(goal.annots)}
        self.emit(GOAL_ADD, data)

    def trigger_text(self, op: str, event: Any) -> str:
        return op + term_text(event, annots=False)

    def intention_started(self, agent: Any, plan: str, trigger: str, source: Any) -> None:
        started: IntentionStartData = {
            "trigger": clip_text(trigger),
            "plan": self.label(agent, plan) or plan,
            "source": source_text(source),
        }
        self.emit(INTENTION_START, started)

    def intention_ended(self, agent: Any, plan: str) -> None:
        self.emit(INTENTION_END, {"plan": self.label(agent, plan) or plan})

    def cycle(self, agent: Any, n: int) -> None:
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
            "intentions": len(agent.running) + len(agent.pending_asks) + sum(map(len, agent.waiters.values())),
        }
        self.emit(CYCLE, data)


def failure_text(report: dict) -> str:
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

    def intention_failed(self, agent: Any, report: dict) -> None:
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


def alive(mind: Agent) -> bool:
    """Whether the mind has anything left to do or wait for: events, messages, running or
    suspended intentions (``.wait``, asks), timers."""
    return (
        bool(mind.running or mind.events or mind.inbox or mind.waiters or mind.pending_asks)
        or mind.next_deadline() is not None
    )


def belief_texts(mind: Agent, annots: bool = True) -> list[str]:
    """The belief base as text, sorted (``state(3)[source(percept)]``)."""
    return sorted(term_text(belief, annots) for belief in mind.beliefs)


def _program(path: Path) -> Program:
    """The program of ``path``; a file parsed before with the same text is not parsed again
    (every agent of a run loads its group's file: ~30 ms of lark per agent otherwise)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        text = None  # parse_file says what is wrong
    try:
        parsed = parse_file(path) if text is None else _parsed(str(path), text)
        if not _unchanged(parsed.included):  # an included file was edited since
            _parsed.cache_clear()
            parsed = _parsed(str(path), text)
    except AslSyntaxError as exc:
        raise AslError(str(exc)) from None
    except RecursionError:
        raise AslError(f"{path}: nested too deeply to be parsed") from None
    # the AST's nodes are frozen: a program of fresh lists over them is the agent's own
    return Program(list(parsed.beliefs), list(parsed.rules), list(parsed.goals), list(parsed.plans))


@functools.lru_cache(maxsize=32)
def _parsed(path: str, text: str) -> Program:
    return parse_text(text, path, frozenset({str(Path(path).resolve())}))


def _unchanged(included: list[tuple[str, str]]) -> bool:
    """Whether every included file still holds the text it was parsed from."""
    try:
        return all(Path(path).read_text() == text for path, text in included)
    except (OSError, UnicodeDecodeError):
        return False  # parsed again, the parser names what is wrong


def load_mind(
    path: str | Path,
    actions: Actions,
    name: str,
    tracer: Tracer | None = None,
    host: MindHost | None = None,
    *,
    beliefs: Iterable[Struct] = (),
    prepare: Callable[[Agent], None] | None = None,
    start: bool = True,
) -> Agent:
    """Parse and compile ``path`` into a traced mind, or raise AslError naming the file and line.

    ``beliefs`` (the spec's) replace the plan file's beliefs of the same functor and arity and
    are the agent's own (``source(self)`` unless they name a source). ``prepare`` runs after
    the beliefs and before the initial goals are posted (percepts)."""
    return _build(_program(Path(path)), actions, name, tracer, host, beliefs, prepare, start)


def _build(
    program: Program,
    actions: Actions,
    name: str,
    tracer: Tracer | None,
    host: MindHost | None,
    beliefs: Iterable[Struct],
    prepare: Callable[[Agent], None] | None,
    start: bool,
) -> Agent:
    beliefs = list(beliefs)
    replaced = {b.key for b in beliefs}
    own = [lit for lit in program.beliefs if (lit.name, len(lit.args)) not in replaced]
    program.beliefs = []  # added below, once the listener is there to trace them
    host = host if host is not None else MindHost(tracer)
    try:
        mind = Agent(name, program, actions, host, start=False)
        if tracer is not None and tracer.level >= TraceLevel.STEP:
            mind.set_listener(TraceListener(tracer))
        mind.add_program(Program(beliefs=own), goals=False)
    except AslSyntaxError as exc:
        raise AslError(str(exc)) from None
    for belief in beliefs:
        annots = belief.annots if has_source(belief.annots) else belief.annots | ANNOTS_SELF
        mind.add_belief(Struct(belief.functor, belief.args, annots))
    if prepare is not None:
        prepare(mind)
    if start:
        mind.start()
    return mind


def check_asl(path: str | Path, actions: Actions) -> Agent:
    """Load ``path`` once, untraced, to report its errors before a run starts: parse errors,
    unknown internal actions, an initial goal that no plan has a trigger for. The mind's
    initial goals are posted (its ``events``), not run."""
    program = _program(Path(path))
    mind = _build(program, actions, "check", None, None, (), None, start=False)
    for lit in program.goals:
        if (ADD_ACH, lit.name, len(lit.args)) not in mind.plans:
            arity = f"/{len(lit.args)}" if lit.args else ""
            raise AslError(f"{path}:{lit.line}: no applicable plan for +!{lit.name}{arity}")
    mind.start()
    return mind
