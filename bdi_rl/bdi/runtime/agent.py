"""The agent: belief base, plan library, events, intentions and the reasoning cycle.

A reasoning cycle (:meth:`Agent.cycle`) takes the messages the host delivered, wakes timed
waits, turns pending events into intentions (selecting the first applicable plan, in
source order), then runs one intention (round-robin) **until it blocks, finishes, raises
an event or spends its budget** of loop iterations and sub-goals: Jason runs one body step
per cycle, but nothing in its semantics depends on where an intention is interleaved
except atomic plans, which this runtime honours. A sub-goal ``!g`` selects its plan at
once and pushes a frame on the same intention (Jason posts an internal event and selects
it in a later cycle: the same plan, with no other event in between).

Failure (Jason's rule): a failing body step, or a goal with no relevant/applicable plan,
looks for a ``-!g`` plan for the innermost goal that has one (the failed sub-goal itself
first); its event carries ``error(Kind)``, ``error_msg(Msg)``, ``code_line(L)`` and
``code_src(F)``. The handler runs on top of the intention; when it ends, the goal's frames
go and the caller continues after ``!g``. Without a handler the intention is dropped and
reported (:meth:`Host.intention_failed`, :meth:`Listener.intention_failed`).
"""

from __future__ import annotations

import heapq
import itertools
import re
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterable

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.beliefs import BeliefBase
from bdi_rl.bdi.runtime.compiler import (
    ADD_ACH,
    ADD_BEL,
    ADD_TEST,
    DEL_ACH,
    DEL_BEL,
    PUSHED,
    SUSPENDED,
    TRIGGER_TEXT,
    WAIT_FORMULA,
    YIELD,
    CompiledPlan,
    Compiler,
    solve_value,
)
from bdi_rl.bdi.runtime.errors import AslSyntaxError, NoPlan, PlanFailure
from bdi_rl.bdi.runtime.listener import Listener
from bdi_rl.bdi.runtime.parser import parse_expr, parse_file, parse_text
from bdi_rl.bdi.runtime.stdlib import Actions
from bdi_rl.bdi.runtime.terms import (
    ANNOTS_PERCEPT,
    ANNOTS_SELF,
    FALSE,
    SELF,
    UNBOUND,
    LVar,
    Struct,
    atom,
    from_python,
    resolve,
    source,
    sources,
    term_str,
    unify,
    undo,
)
from bdi_rl.bdi.runtime.unify import MISSING, Scope, TermCompiler, match_annots

#: Deepest intention stack (nested sub-goals) before the sub-goal fails.
MAX_DEPTH = 10_000
#: Loop iterations and sub-goals an intention may run in one turn before the others get one.
SLICE = 1000

_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*")


class Host:
    """What the runtime needs of its host; override what the host provides."""

    def act(self, agent: "Agent", action: Struct) -> bool | None:
        """An environment action (a body literal that is not an internal action); False fails it."""
        raise PlanFailure("action_failed", f"no environment for {term_str(action)}")

    def send(
        self,
        agent: "Agent",
        receiver: Any,
        performative: str,
        content: Any,
        *,
        msg_id: str | None = None,
        in_reply_to: str | None = None,
    ) -> None:
        """Deliver a message; a reply to an ask must come back with ``in_reply_to``."""
        raise PlanFailure("action_failed", "this host cannot send messages")

    def accept(self, agent: "Agent", sender: Any, performative: str, content: Any) -> bool:
        """The trust predicate: False refuses the message unread."""
        return True

    def print(self, agent: "Agent", text: str) -> None:
        print(f"[{agent.name}] {text}")

    def now(self) -> float:
        """Seconds, monotonic (``.wait`` and ask timeouts)."""
        return time.monotonic()

    def intention_failed(self, agent: "Agent", report: dict) -> None:
        """An intention was dropped (no failure plan); ``agent.failures`` keeps them too."""


class Frame:
    """One plan instance on an intention: its code, slots and the next instruction."""

    __slots__ = ("plan", "code", "env", "pc", "unwind_to", "ttype", "event", "saved")

    def __init__(self, plan: CompiledPlan, env: list, unwind_to: int, ttype: int, event: Struct) -> None:
        self.plan = plan
        self.code = plan.code
        self.env = env
        self.pc = 0
        self.unwind_to = unwind_to
        """stack length to cut back to when this frame ends (a failure plan removes the
        frames of the goal it handles)"""
        self.ttype = ttype
        self.event = event
        self.saved: list | None = [None] * plan.loops if plan.loops else None


class Intention:
    __slots__ = ("stack", "atomic", "id", "dropped")
    _ids = itertools.count(1)

    def __init__(self) -> None:
        self.stack: list[Frame] = []
        self.atomic = 0
        self.id = next(Intention._ids)
        self.dropped = False


class Agent:
    """An AgentSpeak agent. See the module docstring for the cycle; docs/AGENTSPEAK.md for
    the host's view."""

    def __init__(
        self,
        name: str,
        program: s.Program,
        actions: Actions | None = None,
        host: Host | None = None,
        *,
        start: bool = True,
    ) -> None:
        self.name = name
        self.name_term: Any = atom(name) if _ATOM.fullmatch(name) else name
        self.actions = actions if actions is not None else Actions()
        self.host = host if host is not None else Host()
        self.beliefs = BeliefBase()
        self.rules: dict[tuple[str, int], list] = {}
        self.plans: dict[tuple[int, str, int], list[CompiledPlan]] = {}
        self.events: list[tuple[int, Struct]] = []
        self.running: deque[Intention] = deque()
        self.atomic: Intention | None = None
        self.current: Intention | None = None
        self.inbox: list[tuple] = []
        self.timers: list[list] = []
        self.waiters: dict[tuple, list[list]] = {}
        self.pending_asks: dict[str, tuple] = {}
        self.expired_asks: set[str] = set()
        self.failures: list[dict] = []
        self.refused = 0
        self.cycles = 0
        self.budget = SLICE
        self.slice = SLICE
        self._seq = itertools.count(1)
        self._plan_count = 0
        self._cells: dict[str, list] = {}
        self._compiler = Compiler(self.actions, self._cells)
        self.listener: Listener | None = None
        self._program = program
        self.add_program(program, goals=False)
        self._initial_goals = program.goals
        if start:
            self.start()

    # -- loading -------------------------------------------------------------------------
    def add_program(self, program: s.Program, goals: bool = True, plan_source: Any = None) -> list[CompiledPlan]:
        """Compile and add ``program``'s rules and plans, then its beliefs (and goals)."""
        compiled = []
        for rule in program.rules:
            key, cr = self._compiler.rule(rule)
            self.rules.setdefault(key, []).append(cr)
        for plan in program.plans:
            self._plan_count += 1
            cp = self._compiler.plan(plan, self._plan_count)
            if plan_source is not None and cp.label is not None:
                cp.label = Struct(cp.label.functor, cp.label.args, cp.label.annots | {source(plan_source)})
            self.plans.setdefault((cp.ttype, cp.functor, cp.arity), []).append(cp)
            compiled.append(cp)
        for lit in reversed(program.beliefs):  # Jason: so queries see them in source order
            value = _ground_literal(lit, "a belief")
            annots = (
                value.annots
                if any(a.functor == "source" for a in value.annots if type(a) is Struct)
                else value.annots | ANNOTS_SELF
            )
            self._bb_add(value.functor, value.args, annots)
        if goals:
            for lit in program.goals:
                self.post_goal(_with_self(_ground_literal(lit, "a goal")))
        return compiled

    def start(self) -> None:
        """Post the initial goals (a host may first add the percepts they depend on)."""
        goals, self._initial_goals = self._initial_goals, []
        for lit in goals:
            self.post_goal(_with_self(_ground_literal(lit, "a goal")))

    # -- the host's side -----------------------------------------------------------------
    def cycle(self) -> bool:
        """One reasoning cycle; False when there was nothing to do."""
        self.cycles += 1
        if self.timers:
            self._wake_timers()
        atomic = self.atomic
        if atomic is None:
            if self.inbox:
                self._process_messages()
            if self.events:
                self._handle_events()
            running = self.running
            if not running:
                return False
            it = running.popleft()
        else:
            if atomic not in self.running:
                return False  # the atomic intention waits: nothing else may run
            self.running.remove(atomic)
            it = atomic
        self._run(it)
        return True

    def run(self, max_cycles: int | None = None, sleep: bool = True) -> int:
        """Cycles until idle (no events, messages or runnable intentions; with ``sleep``,
        also waits out timed waits). Returns the cycles run."""
        n = 0
        while max_cycles is None or n < max_cycles:
            if self.cycle():
                n += 1
                continue
            deadline = self.next_deadline()
            if deadline is None or not sleep:
                if self.inbox or self.events:
                    continue
                break
            delay = deadline - self.host.now()
            if delay > 0:
                time.sleep(delay)
        return n

    @property
    def idle(self) -> bool:
        return not (self.running or self.events or self.inbox)

    def next_deadline(self) -> float | None:
        """When the earliest timed wait or ask timeout falls due (host.now() seconds)."""
        while self.timers and not self.timers[0][3]:
            heapq.heappop(self.timers)
        return self.timers[0][0] if self.timers else None

    def deliver(
        self, sender: Any, performative: str, content: Any, msg_id: str | None = None, in_reply_to: str | None = None
    ) -> None:
        """A message for the next cycle. ``content`` is a term, or text that is parsed."""
        if isinstance(content, str) and performative not in ("tellHow", "askHow"):
            content = resolve(parse_value(content))
        self.inbox.append((sender, performative, content, msg_id, in_reply_to))

    def add_percept(self, functor: str, *args: Any) -> None:
        self._bb_add(functor, tuple(from_python(a) for a in args), ANNOTS_PERCEPT)

    def remove_percept(self, functor: str, *args: Any) -> None:
        self._bb_remove(functor, tuple(from_python(a) for a in args), ANNOTS_PERCEPT)

    def replace_percept(self, functor: str, args: tuple) -> None:
        """Make ``functor(args)`` the only percept ``functor/len(args)`` (the others lose
        their ``source(percept)``).

        The usual percept (``state(S)``: one belief, only the env's) is swapped in its
        group in place, raising the same -/+ events as the general path; a listener
        replaces this method with the general one, which goes through the traced
        ``_bb_remove``/``_bb_add``."""
        group = self.beliefs.groups.get((functor, len(args)))
        if group and len(group) == 1:
            [(old, annots)] = group.items()
            if annots is ANNOTS_PERCEPT:
                if old == args:
                    return
                del group[old]
                group[args] = ANNOTS_PERCEPT
                n = len(args)
                plans = self.plans
                if (DEL_BEL, functor, n) in plans:
                    self.events.append((DEL_BEL, Struct(functor, old, ANNOTS_PERCEPT)))
                if (ADD_BEL, functor, n) in plans:
                    self.events.append((ADD_BEL, Struct(functor, args, ANNOTS_PERCEPT)))
                if self.waiters:
                    self._check_waiters((DEL_BEL, functor, n), Struct(functor, old, ANNOTS_PERCEPT))
                    self._check_waiters((ADD_BEL, functor, n), Struct(functor, args, ANNOTS_PERCEPT))
                return
        self._replace_percept(functor, args)

    def _replace_percept(self, functor: str, args: tuple) -> None:
        group = self.beliefs.groups.get((functor, len(args)))
        if group:
            if len(group) == 1 and group.get(args) is ANNOTS_PERCEPT:
                return
            for old, annots in list(group.items()):
                if old != args and ANNOTS_PERCEPT <= annots:
                    self._bb_remove(functor, old, ANNOTS_PERCEPT)
        self._bb_add(functor, args, ANNOTS_PERCEPT)

    def drop_percepts(self, functor: str, arity: int) -> None:
        group = self.beliefs.groups.get((functor, arity))
        if group:
            for old, annots in list(group.items()):
                if ANNOTS_PERCEPT <= annots:
                    self._bb_remove(functor, old, ANNOTS_PERCEPT)

    def believes(self, text: str) -> bool:
        """Whether the formula ``text`` holds (tests, hosts)."""
        for _ in self.query(text):
            return True
        return False

    def query(self, text: str) -> Iterable[dict[str, Any]]:
        """Every solution of the formula ``text``, as {variable: value}."""
        scope = Scope()
        tc = TermCompiler(scope, "<query>")
        query = self._compiler.query(parse_expr(text), tc)
        env: list = [UNBOUND] * scope.size
        trail: list = []
        for _ in query.solve(self, env, trail):
            yield {name: resolve(env[i]) for name, i in scope.slots.items() if env[i] is not UNBOUND}

    def belief_texts(self) -> list[str]:
        return sorted(term_str(b) for b in self.beliefs)

    def set_listener(self, listener: Listener | None) -> None:
        """The one place tracing is decided: with a listener, the belief, goal, plan,
        action and cycle paths are wrapped; without one they are the plain methods."""
        for name in (
            "_bb_add",
            "_bb_remove",
            "_push",
            "_frame_done",
            "_drop",
            "achieve",
            "post_goal",
            "act",
            "cycle",
            "replace_percept",
        ):
            self.__dict__.pop(name, None)
        for cell in self._cells.values():
            fn = cell[0]
            cell[0] = getattr(fn, "__wrapped_action__", fn)
        self.listener = listener
        if listener is None:
            return
        _install_listener(self, listener)

    # -- what compiled code calls --------------------------------------------------------
    def achieve(self, it: Intention, value: Struct) -> int:
        stack = it.stack
        if len(stack) >= MAX_DEPTH:
            raise PlanFailure("max_depth", f"!{term_str(value)}: more than {MAX_DEPTH} nested sub-goals")
        plan, env = self._select(ADD_ACH, value)
        self._push(it, plan, env, ADD_ACH, value, len(stack))
        if self.waiters:
            self._check_waiters((ADD_ACH, value.functor, len(value.args)), value)
        return PUSHED

    def test_goal(self, it: Intention, value: Struct, key: tuple[str, int]) -> int:
        if (ADD_TEST, key[0], key[1]) in self.plans:
            plan, env = self._select(ADD_TEST, value)
            self._push(it, plan, env, ADD_TEST, value, len(it.stack))
            return PUSHED
        raise PlanFailure("test_goal_failed", f"Failed to test '{term_str(_without_self(value))}'")

    def post_goal(self, value: Struct) -> None:
        """``!!g``: a new intention, through the event queue."""
        self.events.append((ADD_ACH, value))
        if self.waiters:
            self._check_waiters((ADD_ACH, value.functor, len(value.args)), value)

    def add_belief(self, value: Struct, at_end: bool = False) -> None:
        """``+b``; ``+>b`` (``at_end``) puts a new belief last, so queries find it after
        the others of its functor (Jason's addBelEnd)."""
        value = resolve(value)
        annots = value.annots or ANNOTS_SELF
        new = self._bb_add(value.functor, value.args, annots)
        if at_end and new is annots:  # a new belief (not new annotations of an old one)
            self.beliefs.move_to_end(value.key, value.args)

    def remove_matching(self, key: tuple[str, int], args: list, annots: list, env: list) -> None:
        """``-b(...)[annots]``: the newest matching belief loses those annotations (nothing
        happens when none matches, as in Jason)."""
        group = self.beliefs.groups.get(key)
        if not group:
            return
        ground = _ground_args(args, env)
        if ground is not None:  # the usual case, -b(X) with X bound: one lookup
            bannots = group.get(ground)
            if bannots is None:
                return
            trail: list = []
            if match_annots(annots, bannots, env, trail):
                removed = frozenset(resolve(code.build(env)) for code in annots)
                undo(trail, 0)
                self._bb_remove(key[0], ground, removed)
            return
        trail = []
        for bargs, bannots in reversed(tuple(group.items())):
            if all(code.match(value, env, trail) for code, value in zip(args, bargs, strict=False)) and match_annots(
                annots, bannots, env, trail
            ):
                removed = frozenset(resolve(code.build(env)) for code in annots)
                undo(trail, 0)
                self._bb_remove(key[0], bargs, removed)
                return
            undo(trail, 0)

    def replace_belief(self, value: Struct) -> None:
        """``-+b(args)``: remove the newest ``b/n`` with these annotations (whatever its
        arguments, as Jason's ``-b(_,...)``), then add ``b(args)``."""
        value = resolve(value)
        functor, args, annots = value.functor, value.args, value.annots
        group = self.beliefs.groups.get((functor, len(args)))
        if group:
            if group.get(args) == annots and len(group) == 1:
                return  # already the one belief: Jason would remove and add it (two events)
            for old, old_annots in reversed(tuple(group.items())):
                if annots <= old_annots:
                    self._bb_remove(functor, old, annots)
                    break
        self._bb_add(functor, args, annots)

    def act(self, action: Struct) -> None:
        if self.host.act(self, action) is False:
            raise PlanFailure("action_failed", f"{term_str(action)} failed")

    def send(self, receiver: Any, performative: str, content: Any, msg_id: str | None = None) -> None:
        if performative in ("askOne", "askAll", "askHow") and msg_id is None:
            msg_id = f"{self.name}#{next(self._seq)}"
        receivers = receiver if type(receiver) is tuple else (receiver,)
        for to in receivers:
            self.host.send(self, to, performative, content, msg_id=msg_id)

    def ask(
        self,
        it: Intention,
        frame: Frame,
        receiver: Any,
        performative: str,
        content: Any,
        answer: Callable,
        timeout_ms: Any,
    ) -> None:
        msg_id = f"{self.name}#{next(self._seq)}"
        entry = [it, frame, answer, performative, None]
        self.pending_asks[msg_id] = tuple(entry)
        if timeout_ms is not None:
            self._timer(timeout_ms, lambda: self._ask_timeout(msg_id))
        self.send(receiver, performative, content, msg_id)

    def wait(self, it: Intention, frame: Frame, ms: Any, key: tuple | None, matcher: Any, elapsed: Any) -> None:
        started = self.host.now()
        if key is None:
            self._timer(ms, lambda: self._resume(it), it)
            return
        waiter: list = [it, frame, matcher, elapsed, started, None, True]
        self.waiters.setdefault(key, []).append(waiter)
        if ms is not None:
            waiter[5] = self._timer(ms, lambda: self._wait_timeout(key, waiter))

    def describe_intention(self, it: Intention | None) -> Struct:
        """``intention(Id, [im(Label, Trigger), ...])``, innermost plan first."""
        if it is None:
            return Struct("intention", (0, ()))
        ims = tuple(
            Struct(
                "im",
                (
                    f.plan.label if f.plan.label is not None else atom(f.plan.name),
                    TRIGGER_TEXT[f.ttype] + term_str(f.event),
                ),
            )
            for f in reversed(it.stack)
        )
        return Struct("intention", (it.id, ims))

    # -- beliefs and events ----------------------------------------------------------------
    def _bb_add(self, functor: str, args: tuple, annots: frozenset) -> frozenset | None:
        new = self.beliefs.add((functor, len(args)), args, annots)
        if new is not None:
            key = (ADD_BEL, functor, len(args))
            if key in self.plans:
                self.events.append((ADD_BEL, Struct(functor, args, new)))
            if self.waiters:
                self._check_waiters(key, Struct(functor, args, new))
        return new

    def _bb_remove(self, functor: str, args: tuple, annots: frozenset) -> frozenset | None:
        removed = self.beliefs.remove((functor, len(args)), args, annots)
        if removed is not None:
            key = (DEL_BEL, functor, len(args))
            if key in self.plans:
                self.events.append((DEL_BEL, Struct(functor, args, removed)))
            if self.waiters:
                self._check_waiters(key, Struct(functor, args, removed))
        return removed

    def _handle_events(self) -> None:
        """Every pending event becomes an intention (or a failure). New intentions run
        before the ones already queued: the intention that raised the events yielded so that
        its reactions run now, as they would after one step in Jason's interleaving (a
        reaction that reads a counter in its context must not wait for the next episode)."""
        events = self.events
        running = self.running
        while events:
            batch = events[:]
            events.clear()
            queued = len(running)
            for ttype, value in batch:
                self._handle_event(ttype, value)
            new = len(running) - queued
            if new and queued:
                running.rotate(new)

    def _handle_event(self, ttype: int, value: Struct) -> None:
        try:
            plan, env = self._select(ttype, value)
        except NoPlan as exc:
            if ttype != ADD_ACH:
                return  # a belief change no plan is applicable to: nothing happens
            it = Intention()
            failure = self._failure_annots(exc, "", 0)
            if not self._handle_failure(it, value, failure, 0):
                self._drop(
                    it,
                    {
                        "plan": None,
                        "trigger": "+!" + term_str(value),
                        "error": exc.kind,
                        "message": exc.message,
                        "file": "",
                        "line": 0,
                    },
                )
            return
        it = Intention()
        self._push(it, plan, env, ttype, value, 0)
        self.running.append(it)

    def _select(self, ttype: int, value: Struct) -> tuple[CompiledPlan, list]:
        plans = self.plans.get((ttype, value.functor, len(value.args)))
        if not plans:
            raise NoPlan(
                "no_relevant",
                f"Found a goal for which there is no relevant plan: {TRIGGER_TEXT[ttype]}{term_str(value)}",
                value,
            )
        trail: list = []
        for plan in plans:
            env = plan.blank[:]
            if plan.match_trigger(value, env, trail):
                context = plan.context
                if context is None or context.first(self, env, trail):
                    return plan, env
            if trail:
                undo(trail, 0)
        raise NoPlan(
            "no_applicable",
            f"Found a goal for which there is no applicable plan: {TRIGGER_TEXT[ttype]}{term_str(value)}",
            value,
        )

    def _push(self, it: Intention, plan: CompiledPlan, env: list, ttype: int, value: Struct, unwind_to: int) -> Frame:
        frame = Frame(plan, env, unwind_to, ttype, value)
        it.stack.append(frame)
        if plan.atomic:
            it.atomic += 1
            self.atomic = it
        return frame

    # -- running intentions ----------------------------------------------------------------
    def _run(self, it: Intention) -> None:
        stack = it.stack
        events = self.events
        self.budget = self.slice
        self.current = it
        frame = stack[-1]
        pc = frame.pc
        try:
            while True:
                code = frame.code
                n = len(code)
                while pc < n:
                    pc = code[pc](self, it, frame)
                    if pc < 0:
                        break
                    if events:
                        frame.pc = pc
                        self.running.append(it)
                        return
                else:
                    frame.pc = pc
                    self._frame_done(it, frame)
                    if not stack:
                        if self.atomic is it:
                            self.atomic = None
                        return
                    frame = stack[-1]
                    pc = frame.pc
                    if events:
                        self.running.append(it)
                        return
                    continue
                if pc == PUSHED:
                    frame = stack[-1]
                    pc = 0
                    budget = self.budget = self.budget - 1
                    if events or budget <= 0:
                        self.running.append(it)
                        return
                    continue
                if pc == SUSPENDED:
                    return
                assert pc == YIELD
                self.running.append(it)
                return
        except PlanFailure as exc:
            failure = exc
        except Exception as exc:  # noqa: BLE001 - an internal action raised: the plan fails
            failure = PlanFailure("ia_failed", f"{type(exc).__name__}: {exc}")
        if self._fail(it, frame, pc, failure):
            self.running.append(it)

    def _frame_done(self, it: Intention, frame: Frame) -> None:
        stack = it.stack
        if frame.unwind_to == len(stack) - 1:
            stack.pop()
            if frame.plan.atomic:
                it.atomic -= 1
                if not it.atomic and self.atomic is it:
                    self.atomic = None
            return
        del stack[frame.unwind_to :]
        if it.atomic:
            it.atomic = sum(1 for f in stack if f.plan.atomic)
            if not it.atomic and self.atomic is it:
                self.atomic = None

    def _failure_annots(self, exc: PlanFailure, file: str, line: int) -> frozenset:
        return frozenset(
            (
                Struct("error", (atom(exc.kind),)),
                Struct("error_msg", (exc.message,)),
                Struct("code_line", (line,)),
                Struct("code_src", (file,)),
            )
        )

    def _fail(self, it: Intention, frame: Frame, pc: int, exc: PlanFailure) -> bool:
        """Jason's failure rule (module docstring). True when a handler was pushed."""
        plan = frame.plan
        line = plan.lines[pc] if 0 <= pc < len(plan.lines) else plan.line
        annots = self._failure_annots(exc, plan.file, line)
        stack = it.stack
        goal = getattr(exc, "goal", None)
        if goal is not None and (DEL_ACH, goal.functor, len(goal.args)) in self.plans:
            if self._handle_failure(it, goal, annots, len(stack)):
                return True
        else:
            idx = len(stack) - 1
            while idx >= 0:
                f = stack[idx]
                if f.unwind_to < idx:
                    idx = f.unwind_to - 1
                    continue
                if f.ttype == ADD_ACH and (DEL_ACH, f.event.functor, len(f.event.args)) in self.plans:
                    if self._handle_failure(it, f.event, annots, idx):
                        return True
                    break
                idx -= 1
        self._drop(
            it,
            {
                "plan": plan.name,
                "trigger": TRIGGER_TEXT[frame.ttype] + term_str(frame.event),
                "error": exc.kind,
                "message": exc.message,
                "file": plan.file,
                "line": line,
            },
        )
        return False

    def _handle_failure(self, it: Intention, goal: Struct, annots: frozenset, unwind_to: int) -> bool:
        event = Struct(goal.functor, goal.args, goal.annots | annots)
        try:
            plan, env = self._select(DEL_ACH, event)
        except NoPlan:
            return False
        self._push(it, plan, env, DEL_ACH, event, unwind_to)
        if len(it.stack) == 1:
            self.running.append(it)  # a new intention (the goal never had one)
        return True

    def _drop(self, it: Intention, report: dict) -> None:
        it.dropped = True
        if self.atomic is it:
            self.atomic = None
        report["frames"] = [f.plan.name for f in reversed(it.stack)]
        self.failures.append(report)
        self.host.intention_failed(self, report)

    # -- waiting ---------------------------------------------------------------------------
    def _timer(self, ms: Any, action: Callable[[], None], owner: Intention | None = None) -> list:
        entry = [self.host.now() + float(ms) / 1000.0, next(self._seq), action, True, owner]
        heapq.heappush(self.timers, entry)
        return entry

    def _wake_timers(self) -> None:
        timers = self.timers
        now = self.host.now()
        while timers and timers[0][0] <= now:
            entry = heapq.heappop(timers)
            if entry[3]:
                entry[3] = False
                entry[2]()

    def _resume(self, it: Intention) -> None:
        if not it.dropped:
            self.running.append(it)

    def _check_waiters(self, key: tuple, value: Struct) -> None:
        if WAIT_FORMULA in self.waiters:
            self._check_formulas()
        waiting = self.waiters.get(key)
        if not waiting:
            return
        for waiter in list(waiting):
            it, frame, matcher, elapsed, started, timer, _ = waiter
            if it.dropped:
                waiting.remove(waiter)
                continue
            trail: list = []
            if matcher(value, frame.env, trail):
                waiting.remove(waiter)
                if timer is not None:
                    timer[3] = False
                if elapsed is not None:
                    elapsed(round((self.host.now() - started) * 1000), frame.env, None)
                self.running.append(it)
            else:
                undo(trail, 0)
        if not waiting:
            del self.waiters[key]

    def _check_formulas(self) -> None:
        """Resume the ``.wait(formula)`` waiters whose formula now holds (bindings kept)."""
        waiting = self.waiters[WAIT_FORMULA]
        for waiter in list(waiting):
            it, frame, test, elapsed, started, timer, _ = waiter
            if not it.dropped and not test(self, frame.env, []):
                continue
            waiting.remove(waiter)
            if timer is not None:
                timer[3] = False
            if it.dropped:
                continue
            if elapsed is not None:
                elapsed(round((self.host.now() - started) * 1000), frame.env, None)
            self.running.append(it)
        if not waiting:
            del self.waiters[WAIT_FORMULA]

    def _wait_timeout(self, key: tuple, waiter: list) -> None:
        waiting = self.waiters.get(key)
        if not waiting or waiter not in waiting:
            return
        waiting.remove(waiter)
        if not waiting:
            del self.waiters[key]
        it, frame, _, elapsed, started = waiter[:5]
        if it.dropped:
            return
        if elapsed is not None:
            elapsed(round((self.host.now() - started) * 1000), frame.env, None)
            self.running.append(it)
            return
        if self._fail(it, frame, frame.pc - 1, PlanFailure("wait_timeout", "timeout in .wait")):
            self.running.append(it)

    def _ask_timeout(self, msg_id: str) -> None:
        entry = self.pending_asks.pop(msg_id, None)
        if entry is None:
            return
        self.expired_asks.add(msg_id)
        it, frame, answer = entry[:3]
        if not it.dropped:
            answer(atom("timeout"), frame.env, None)
            self.running.append(it)

    # -- messages --------------------------------------------------------------------------
    def _process_messages(self) -> None:
        inbox, self.inbox = self.inbox, []
        for sender, performative, content, msg_id, in_reply_to in inbox:
            if sender == self.name or sender == self.name_term:
                sender = SELF
            if in_reply_to is not None:
                if in_reply_to in self.pending_asks:
                    self._answer_arrived(sender, performative, content, in_reply_to)
                    continue
                if in_reply_to in self.expired_asks:
                    continue
            if not self.host.accept(self, sender, performative, content):
                self.refused += 1
                continue
            handler = _PERFORMATIVES.get(performative)
            if handler is not None:
                handler(self, sender, content, msg_id)

    def _answer_arrived(self, sender: Any, performative: str, content: Any, msg_id: str) -> None:
        it, frame, answer, asked = self.pending_asks.pop(msg_id)[:4]
        if it.dropped:
            return
        if asked == "askOne":
            value = FALSE if performative == "untell" else _with_source(content, sender)
        elif asked == "askAll" and type(content) is tuple:
            value = tuple(_with_source(c, sender) for c in content)
        else:
            value = content
        if answer(value, frame.env, None):
            self.running.append(it)
        elif self._fail(
            it,
            frame,
            frame.pc - 1,
            PlanFailure(
                "ask_failed",
                f"reply of an ask message ('{term_str(value)}') does not unify with the fourth argument of .send",
            ),
        ):
            self.running.append(it)

    def _on_tell(self, sender: Any, content: Any, msg_id: Any) -> None:
        for item in content if type(content) is tuple else (content,):
            if type(item) is Struct and _is_ground(item):
                self._bb_add(item.functor, item.args, item.annots | {source(sender)})

    def _on_untell(self, sender: Any, content: Any, msg_id: Any) -> None:
        for item in content if type(content) is tuple else (content,):
            if type(item) is not Struct:
                continue
            group = self.beliefs.groups.get((item.functor, len(item.args)))
            for bargs in list(group or ()):
                trail: list = []
                if all(unify(a, b, trail) for a, b in zip(item.args, bargs, strict=False)):
                    self._bb_remove(item.functor, bargs, frozenset((source(sender),)))
                undo(trail, 0)

    def _on_achieve(self, sender: Any, content: Any, msg_id: Any) -> None:
        if type(content) is Struct:
            self.post_goal(_with_source(content, sender))

    def _on_unachieve(self, sender: Any, content: Any, msg_id: Any) -> None:
        """Drop the desire: queued events and intentions for ``+!content``."""
        if type(content) is not Struct:
            return

        def matches(value: Struct) -> bool:
            trail: list = []
            ok = unify(Struct(content.functor, content.args), value, trail)
            undo(trail, 0)
            return ok

        self.events[:] = [(t, v) for t, v in self.events if not (t == ADD_ACH and matches(v))]
        for it in (
            list(self.running)
            + [w[0] for ws in self.waiters.values() for w in ws]
            + [e[0] for e in self.pending_asks.values()]
            + [t[4] for t in self.timers if t[4] is not None]
        ):
            if any(f.ttype == ADD_ACH and matches(f.event) for f in it.stack):
                it.dropped = True
                if self.atomic is it:
                    self.atomic = None
        self.running = deque(it for it in self.running if not it.dropped)

    def _on_ask(self, sender: Any, content: Any, msg_id: Any, every: bool = False) -> None:
        trail: list = []
        answers = []
        for found in solve_value(self, content, trail):
            answer = resolve(content)
            answer = Struct(answer.functor, answer.args, frozenset(a for a in found.annots if a != source(SELF)))
            answers.append(answer)
            if not every:
                break
        undo(trail, 0)
        if every:
            self.host.send(self, sender, "tell", tuple(answers), in_reply_to=msg_id)
        elif answers:
            self.host.send(self, sender, "tell", answers[0], in_reply_to=msg_id)
        else:
            self.host.send(self, sender, "untell", content, in_reply_to=msg_id)

    def _on_tell_how(self, sender: Any, content: Any, msg_id: Any) -> None:
        for text in content if type(content) is tuple else (content,):
            if isinstance(text, str):
                self.add_program(
                    parse_text(text, f"<tellHow from {term_str(sender)}>"), goals=False, plan_source=sender
                )

    def _on_untell_how(self, sender: Any, content: Any, msg_id: Any) -> None:
        labels = {
            resolve(c).functor
            for c in (content if type(content) is tuple else (content,))
            if type(resolve(c)) is Struct
        }
        for key, plans in list(self.plans.items()):
            kept = [p for p in plans if p.name not in labels]
            if kept:
                self.plans[key] = kept
            else:
                del self.plans[key]

    def _on_ask_how(self, sender: Any, content: Any, msg_id: Any) -> None:
        text = content if isinstance(content, str) else term_str(content)
        trigger = parse_text(text.strip().strip("{}") + ".", "<askHow>").plans[0].trigger
        from bdi_rl.bdi.runtime.compiler import TRIGGER_TYPES

        key = (TRIGGER_TYPES[(trigger.op, trigger.kind)], trigger.literal.name, len(trigger.literal.args))
        texts = tuple(p.text for p in self.plans.get(key, ()) if p.text)
        self.host.send(self, sender, "tellHow", texts, in_reply_to=msg_id)


_PERFORMATIVES: dict[str, Callable[..., None]] = {
    "tell": Agent._on_tell,
    "untell": Agent._on_untell,
    "achieve": Agent._on_achieve,
    "unachieve": Agent._on_unachieve,
    "askOne": Agent._on_ask,
    "askAll": lambda ag, sender, content, msg_id: ag._on_ask(sender, content, msg_id, every=True),
    "tellHow": Agent._on_tell_how,
    "untellHow": Agent._on_untell_how,
    "askHow": Agent._on_ask_how,
}


def _ground_args(codes: list, env: list) -> tuple | None:
    """The argument values when every one is a constant or a bound variable, else None."""
    values = []
    for code in codes:
        const = code.const
        if const is not MISSING:
            values.append(const)
            continue
        if code.slot < 0:
            return None
        v = env[code.slot]
        if type(v) is LVar:
            v = resolve(v)
        if v is UNBOUND or type(v) is LVar:
            return None
        values.append(v)
    return tuple(values)


def _is_ground(value: Any) -> bool:
    from bdi_rl.bdi.runtime.terms import is_ground

    return is_ground(value)


def _with_source(value: Any, sender: Any) -> Any:
    value = resolve(value)
    if type(value) is not Struct:
        return value
    return Struct(value.functor, value.args, value.annots | {source(sender)})


def _with_self(value: Struct) -> Struct:
    if any(type(a) is Struct and a.functor == "source" for a in value.annots):
        return value
    return Struct(value.functor, value.args, value.annots | ANNOTS_SELF)


def _without_self(value: Struct) -> Struct:
    return Struct(value.functor, value.args, value.annots - ANNOTS_SELF)


def _ground_literal(lit: s.Lit, what: str) -> Struct:
    code = TermCompiler(Scope(), "<program>").term(lit)
    env: list = []
    try:
        value = code.build(env)
    except IndexError:
        raise AslSyntaxError(f"line {lit.line}: {what} must be ground: {lit.name}") from None
    if type(value) is LVar or not _is_ground(value):
        raise AslSyntaxError(f"line {lit.line}: {what} must be ground: {lit.name}")
    return value


def parse_value(text: str) -> Any:
    """A ground term from its text (message contents)."""
    code = TermCompiler(Scope(), "<term>").term(parse_expr(text))
    return code.build([UNBOUND] * 64)


def load_agent(
    path: str | Path,
    name: str | None = None,
    actions: Actions | None = None,
    host: Host | None = None,
    *,
    start: bool = True,
) -> Agent:
    """Parse and compile a plan file (AslSyntaxError names the file and line)."""
    program = parse_file(path)
    return Agent(name or Path(path).stem, program, actions, host, start=start)


def _install_listener(agent: Agent, listener: Listener) -> None:
    """Wrap the agent's event paths with calls to ``listener`` (instance attributes shadow
    the class's methods, so removing them restores the untraced paths)."""
    cls = Agent

    def bb_add(functor: str, args: tuple, annots: frozenset) -> frozenset | None:
        new = cls._bb_add(agent, functor, args, annots)
        if new is not None:
            who = sources(new)
            listener.belief_added(agent, Struct(functor, args, new), who[0] if who else SELF)
        return new

    def bb_remove(functor: str, args: tuple, annots: frozenset) -> frozenset | None:
        removed = cls._bb_remove(agent, functor, args, annots)
        if removed is not None:
            who = sources(removed)
            listener.belief_removed(agent, Struct(functor, args, removed), who[0] if who else SELF)
        return removed

    def push(it: Intention, plan: CompiledPlan, env: list, ttype: int, value: Struct, unwind_to: int) -> Frame:
        frame = cls._push(agent, it, plan, env, ttype, value, unwind_to)
        who = sources(value.annots)
        listener.intention_started(
            agent, plan.name, listener.trigger_text(TRIGGER_TEXT[ttype], value), who[0] if who else SELF
        )
        return frame

    def frame_done(it: Intention, frame: Frame) -> None:
        # a failure plan's frame ends the frames of the goal it handled too: all leave
        gone = it.stack[frame.unwind_to :] if frame.unwind_to < len(it.stack) - 1 else (frame,)
        cls._frame_done(agent, it, frame)
        for ended in reversed(gone):
            listener.intention_ended(agent, ended.plan.name)

    def drop(it: Intention, report: dict) -> None:
        cls._drop(agent, it, report)
        listener.intention_failed(agent, report)

    def achieve(it: Intention, value: Struct) -> int:
        listener.goal_added(agent, value, False)
        return cls.achieve(agent, it, value)

    def post_goal(value: Struct) -> None:
        listener.goal_added(agent, value, True)
        cls.post_goal(agent, value)

    def act(action: Struct) -> None:
        cls.act(agent, action)
        listener.action_executed(agent, action.functor, action.args, None)

    def cycle() -> bool:
        ran = cls.cycle(agent)
        if ran:
            listener.cycle(agent, agent.cycles)
        return ran

    def replace_percept(functor: str, args: tuple) -> None:
        cls._replace_percept(agent, functor, args)  # through bb_remove/bb_add: traced

    agent.__dict__.update(
        _bb_add=bb_add,
        _bb_remove=bb_remove,
        _push=push,
        _frame_done=frame_done,
        _drop=drop,
        achieve=achieve,
        post_goal=post_goal,
        act=act,
        cycle=cycle,
        replace_percept=replace_percept,
    )
    for name, cell in agent._cells.items():
        cell[0] = _traced_action(agent, listener, name, cell[0])


def _traced_action(agent: Agent, listener: Listener, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        result = fn(*args)
        listener.action_executed(agent, name, args, result)
        return result

    call.__wrapped_action__ = fn  # type: ignore[attr-defined]
    return call
