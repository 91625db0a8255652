"""The agent's mind: a :mod:`bdi_rl.bdi.runtime` agent, loaded with clear errors and traced.

:func:`load_mind` turns a plan file into a runtime :class:`~bdi_rl.bdi.runtime.Agent` (any
problem is one :class:`AslError`, ``file:line[:col]: message``); :func:`check_asl` does the
same before a run, and also refuses an initial goal that no plan has a trigger for. Its trace
is :mod:`bdi_rl.bdi.mindtrace`'s (:class:`TraceListener` installed at the levels that record
its events, :class:`MindHost` for dropped intentions). :func:`alive`, :func:`can_act` and
:func:`describe_waits` say what a loaded mind can still do, for the stall watch.
It knows nothing of SPADE or RL.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path

from bdi_rl.bdi.mindtrace import MindHost, TraceListener
from bdi_rl.bdi.runtime import Actions, Agent, AslSyntaxError
from bdi_rl.bdi.runtime.agent import AGENT_CLASSES
from bdi_rl.bdi.runtime.parser import parse_file, parse_file_text
from bdi_rl.bdi.runtime.syntax import Program
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, Struct, has_source
from bdi_rl.bdi.runtime.triggers import ADD_ACH, TRIGGER_TEXT
from bdi_rl.bdi.runtime.waiting import WAIT_FORMULA
from bdi_rl.bdi.text import term_text
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.tracer import Tracer

__all__ = [
    "AslError",
    "MindHost",
    "TraceListener",
    "alive",
    "belief_texts",
    "can_act",
    "check_asl",
    "describe_waits",
    "load_mind",
]


class AslError(ValueError):
    """A plan library that cannot be loaded: ``file:line[:col]: message``."""


def alive(mind: Agent) -> bool:
    """Whether the mind has anything left to do or wait for: events, messages, running or
    suspended intentions (``.wait``, asks, host actions), timers."""
    return (
        bool(
            mind.running
            or mind.events
            or mind.inbox
            or mind.waiters
            or mind.pending_asks
            or mind.held
            or mind.tasks
            or mind.feedback
            or mind.suspended_ints
            or mind.atomic_event
        )
        or mind.next_deadline() is not None
    )


def can_act(mind: Agent) -> bool:
    """Whether something can still happen in the mind by itself: an intention that may run,
    an event or a delivered message to handle, a timed wait or an ask's timeout to fall due.
    False: only something from outside (a message, a world's answer) can wake it."""
    if mind.atomic is not None:  # an atomic intention blocks every other and every event
        return (
            mind.atomic in mind.running
            or bool(mind.inbox or mind.tasks or mind.feedback)
            or mind.next_deadline() is not None
        )
    return (
        bool(mind.running or mind.events or mind.inbox or mind.tasks or mind.feedback or mind.atomic_event)
        or mind.next_deadline() is not None
    )


def describe_waits(mind: Agent, asked: Callable[[str], str | None] = lambda msg_id: None) -> list[str]:
    """What each suspended intention of the mind waits for, in words, for a stall report
    (empty: none waits). ``asked``: whom an ask (by its message id) went to."""
    said = [f"waits for {what}" for it, what in mind.held.values() if not it.dropped]
    for msg_id, entry in mind.pending_asks.items():
        if not entry[0].dropped:
            who = asked(msg_id)
            said.append(f"waits for an answer to {entry[3]}" + (f" from {who}" if who else ""))
    for key, waiting in mind.waiters.items():
        if all(w[0].dropped for w in waiting):
            continue
        if key == WAIT_FORMULA:
            said.append("waits until a formula holds (.wait)")
        else:
            ttype, functor, arity = key
            said.append(f"waits for {{{TRIGGER_TEXT[ttype]}{functor}/{arity}}} (.wait)")
    for it in mind.suspended_ints.values():
        if not it.dropped:
            said.append(f"intention {it.id} is suspended (.suspend) until .resume")
    if mind.atomic is not None and mind.atomic not in mind.running and (mind.running or mind.events):
        said.append(f"{len(mind.running) + len(mind.events)} intention(s) or event(s) wait for an atomic plan to end")
    return said


def belief_texts(mind: Agent, annots: bool = True) -> list[str]:
    """The belief base as text, sorted (``state(3)[source(percept)]``)."""
    return sorted(term_text(belief, annots) for belief in mind.beliefs)


def load_program(path: Path) -> Program:
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
    return parse_file_text(Path(path), text)


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
    cycle: str = "jason",
) -> Agent:
    """Parse and compile ``path`` into a traced mind, or raise AslError naming the file and line.

    ``beliefs`` (the spec's) replace the plan file's beliefs of the same functor and arity and
    are the agent's own (``source(self)`` unless they name a source). ``prepare`` runs after
    the beliefs and before the initial goals are posted (percepts). ``cycle``: ``"jason"``
    (Jason's reasoning cycle) or ``"fast"`` (docs/AGENTSPEAK.md)."""
    return _build(load_program(Path(path)), actions, name, tracer, host, beliefs, prepare, start, cycle)


def _build(
    program: Program,
    actions: Actions,
    name: str,
    tracer: Tracer | None,
    host: MindHost | None,
    beliefs: Iterable[Struct],
    prepare: Callable[[Agent], None] | None,
    start: bool,
    cycle: str = "jason",
) -> Agent:
    beliefs = list(beliefs)
    replaced = {b.key for b in beliefs}
    own = [lit for lit in program.beliefs if (lit.name, len(lit.args)) not in replaced]
    program.beliefs = []  # added below, once the listener is there to trace them
    host = host if host is not None else MindHost(tracer)
    try:
        listener = TraceListener(tracer) if tracer is not None and tracer.level >= TraceLevel.STEP else None
        mind = AGENT_CLASSES[cycle](name, program, actions, host, start=False, listener=listener)
        if listener is not None:
            listener.mind = mind
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
    program = load_program(Path(path))
    mind = _build(program, actions, "check", None, None, (), None, start=False)
    for lit in program.goals:
        if (ADD_ACH, lit.name, len(lit.args)) not in mind.plans:
            arity = f"/{len(lit.args)}" if lit.args else ""
            raise AslError(f"{path}:{lit.line}: no applicable plan for +!{lit.name}{arity}")
    mind.start()
    return mind
