"""The fast reasoning cycle (``cycle = "fast"``), and what both cycles share (plan
selection, goals posted, actions).

Jason's own cycle, one deed per reasoning cycle, is jason_cycle.py. This one takes the
messages the host delivered, wakes timed waits, turns every pending event into an
intention (selecting the first applicable plan, in source order), then runs one intention
(round-robin) **until it blocks, finishes, raises an event or spends its budget** of loop
iterations and sub-goals. A sub-goal ``!g`` selects its plan at once and pushes a frame on
the same intention (Jason posts an internal event and selects it in a later cycle: the same
plan, with other intentions' deeds in between); a belief change's reaction is a new
intention (Jason's runs on top of the intention that made the change). Atomic plans are
honoured. Which programs can tell the two cycles apart: docs/AGENTSPEAK.md.

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bdi_rl.bdi.runtime.errors import NoPlan, PlanFailure
from bdi_rl.bdi.runtime.instructions import PUSHED, SUSPENDED, YIELD
from bdi_rl.bdi.runtime.intention import Frame, Intention, endless, free_vars, is_tail_call, join, rename, spins
from bdi_rl.bdi.runtime.options import applicable_learned, bind_option
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, UNBOUND, LVar, PartialList, Struct, Trail, term_str, undo
from bdi_rl.bdi.runtime.triggers import ADD_ACH, ADD_TEST, TRIGGER_TEXT
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.compiler import CompiledPlan
    from bdi_rl.bdi.runtime.state import AgentState, FastState

#: Deepest intention stack (nested sub-goals) before the sub-goal fails.
MAX_DEPTH = 10_000
#: Loop iterations and sub-goals an intention may run in one turn before the others get one.
SLICE = 1000


def cycle(ag: FastState) -> bool:
    """One reasoning cycle; False when there was nothing to do."""
    ag.cycles += 1
    if ag.timers:
        ag._wake_timers()
    atomic = ag.atomic
    if atomic is None:
        if ag.inbox:
            ag._process_messages()
        if ag.events:
            ag._handle_events()
        running = ag.running
        if not running:
            return False
        it = running.popleft()
    else:
        if atomic not in ag.running:
            return False  # the atomic intention waits: nothing else may run
        ag.running.remove(atomic)
        it = atomic
    if it.stack:  # (a management action may have emptied or queued it twice)
        ag._run(it)
    return True


def _handle_events(ag: FastState) -> None:
    """Every pending event becomes an intention (or a failure). New intentions run
    before the ones already queued: the intention that raised the events yielded so that
    its reactions run now, as they would after one step in Jason's interleaving (a
    reaction that reads a counter in its context must not wait for the next episode)."""
    events = ag.events
    running = ag.running
    while events:
        batch = list(events)
        events.clear()
        queued = len(running)
        for ttype, value, _ in batch:
            ag._handle_event(ttype, value)
        new = len(running) - queued
        if new and queued:
            running.rotate(new)


def _handle_event(ag: FastState, ttype: int, value: Struct) -> None:
    try:
        plan, env = ag._select(ttype, value)
    except NoPlan as exc:
        if ttype != ADD_ACH:
            return  # a belief change no plan is applicable to: nothing happens
        ag._fail_goal_event(Intention(), ttype, value, exc, None, 0)
        return
    it = ag._new_intention()
    ag._push(it, plan, env, ttype, value, 0)
    ag.running.append(it)


def _select(ag: AgentState, ttype: int, value: Struct) -> tuple[CompiledPlan, Env]:
    plans = ag.plans.get((ttype, value.functor, len(value.args)))
    if not plans:
        raise NoPlan(
            "no_relevant",
            f"Found a goal for which there is no relevant plan: {TRIGGER_TEXT[ttype]}{term_str(value)}",
            value,
            ttype,
        )
    trail: Trail = []
    for index, plan in enumerate(plans):
        env = plan.blank[:]
        if plan.match_trigger(value, env, trail):
            context = plan.context
            if context is None or context.first(ag, env, trail):
                if plan.learned is not None and ag.options is not None:
                    undo(trail, 0)
                    return _learned_choice(ag, plans, index, ttype, value)
                return plan, env
        if trail:
            undo(trail, 0)
    raise NoPlan(
        "no_applicable",
        f"Found a goal for which there is no applicable plan: {TRIGGER_TEXT[ttype]}{term_str(value)}",
        value,
        ttype,
    )


def _learned_choice(
    ag: AgentState, plans: list[CompiledPlan], first: int, ttype: int, value: Struct
) -> tuple[CompiledPlan, Env]:
    """The first applicable plan is learned: the agent's chooser picks among every
    applicable learned plan (runtime/options.py)."""
    assert ag.options is not None
    options = applicable_learned(ag, plans, first, value)
    chosen = options[ag.options.choose(ag, ttype, value, options)]  # one alone is learned too
    env = bind_option(ag, chosen, value)
    if env is None and chosen is not options[0]:  # its context answered otherwise this time
        chosen = options[0]
        env = bind_option(ag, chosen, value)
    if env is None:
        text = f"Found a goal for which there is no applicable plan: {TRIGGER_TEXT[ttype]}{term_str(value)}"
        raise NoPlan("no_applicable", text, value, ttype)
    ag.options.started(chosen, env)
    return chosen, env


def applicable_plans(ag: AgentState, ttype: int, value: Struct) -> list[CompiledPlan]:
    """Every plan for the event whose trigger matches and whose context holds (Jason's
    applicable options), in source order, bindings undone. For tracing only: selection
    takes the first and stops there."""
    found = []
    trail: Trail = []
    for plan in ag.plans.get((ttype, value.functor, len(value.args)), ()):
        env = plan.blank[:]
        if plan.match_trigger(value, env, trail):
            context = plan.context
            if context is None or context.first(ag, env, trail):
                found.append(plan)
        if trail:
            undo(trail, 0)
    return found


def _push(
    ag: AgentState, it: Intention, plan: CompiledPlan, env: Env, ttype: int, value: Struct, unwind_to: int
) -> Frame:
    frame = Frame(plan, env, unwind_to, ttype, value)
    it.stack.append(frame)
    if plan.atomic:
        it.atomic += 1
        ag.atomic = it
    return frame


def _run(ag: FastState, it: Intention) -> None:
    stack = it.stack
    events = ag.events
    ag.budget = ag.slice
    ag.current = it
    frame = stack[-1]
    pc = frame.pc
    try:
        while True:
            code = frame.code
            n = len(code)
            while pc < n:
                pc = code[pc](ag, it, frame)
                if pc < 0:
                    break
                if events:
                    frame.pc = pc
                    ag.running.append(it)
                    return
            else:
                frame.pc = pc
                ag._frame_done(it, frame)
                if not stack:
                    if ag.atomic is it:
                        ag.atomic = None
                    if it.reply is not None:
                        ag._answer_ask(it, True)
                    return
                frame = stack[-1]
                pc = frame.pc
                if events:
                    ag.running.append(it)
                    return
                continue
            if pc == PUSHED:
                frame = stack[-1]
                pc = 0
                budget = ag.budget = ag.budget - 1
                if events or budget <= 0:
                    ag.running.append(it)
                    return
                continue
            if pc == SUSPENDED:
                return
            assert pc == YIELD
            ag.running.append(it)
            return
    except PlanFailure as exc:
        failure = exc
    except Exception as exc:  # noqa: BLE001 - an internal action raised: the plan fails
        failure = internal_action_failure(exc)
    ag._fail(it, frame, pc, failure)


def internal_action_failure(exc: Exception) -> PlanFailure:
    """A Python exception out of an internal action (a host's action): ``ia_failed``, the
    exception in its message. (The standard actions fail as Jason's do: they raise a
    PlanFailure of Jason's kind, ``internal_action`` for most.)"""
    return PlanFailure("ia_failed", f"{type(exc).__name__}: {exc}")


def _frame_done(ag: AgentState, it: Intention, frame: Frame) -> None:
    stack = it.stack
    if frame.unwind_to == len(stack) - 1:
        stack.pop()
        if frame.plan.atomic:
            it.atomic -= 1
            if not it.atomic and ag.atomic is it:
                ag.atomic = None
    else:
        del stack[frame.unwind_to :]
        if it.atomic:
            it.atomic = sum(1 for f in stack if f.plan.atomic)
            if not it.atomic and ag.atomic is it:
                ag.atomic = None
    if stack and stack[-1].renamed:
        join(stack[-1])


def _clr_int(ag: AgentState, it: Intention) -> None:
    """The plans at the end of their bodies leave the intention (after a management action
    took frames off it)."""
    stack = it.stack
    while stack and stack[-1].pc >= len(stack[-1].code):
        ag._frame_done(it, stack[-1])


def tail_call(ag: AgentState, it: Intention, caller: Frame) -> None:
    """The caller leaves the intention before its recursive goal's plan is pushed (a loop
    written as recursion keeps a stack of one plan). Its variables the goal carries take
    the goal's fresh ones now, and the plan below it waits for those fresh ones instead."""
    ag._frame_done(it, caller)
    pairs = caller.renamed or ()
    for var, fresh in pairs:
        if var.ref is UNBOUND and var is not fresh:
            var.ref = fresh
    below = it.stack[-1] if it.stack else None
    if below is not None and below.renamed and pairs:
        mapping = {id(var): fresh for var, fresh in pairs}
        below.renamed = [(var, mapping.get(id(fresh), fresh)) for var, fresh in below.renamed]


def achieve(ag: AgentState, it: Intention, value: Struct) -> int:
    """``!g``: the plan for ``g`` goes on top of the intention now (Jason posts an event,
    selected in a later cycle: jason_cycle.py)."""
    stack = it.stack
    if len(stack) >= MAX_DEPTH:
        raise PlanFailure("max_depth", f"!{term_str(value)}: more than {MAX_DEPTH} nested sub-goals")
    caller = stack[-1]
    pairs = None
    if value.annots is not ANNOTS_SELF:
        value, pairs = rename(value)
    else:
        for a in value.args:  # (inline: a goal of numbers and atoms is posted as it is)
            t = type(a)
            if t is LVar or t is tuple or t is PartialList or t is Struct and (a.args or a.annots):
                value, pairs = rename(value)
                break
    if pairs:
        caller.renamed = pairs
    plan, env = ag._select(ADD_ACH, value)
    if caller.event.functor == value.functor and is_tail_call(caller, value):
        if spins(caller, plan, value):
            raise endless(value)
        ag._tail_call(it, caller)
    frame = ag._push(it, plan, env, ADD_ACH, value, len(stack))
    if pairs:
        frame.free = free_vars(pairs)
    if ag.waiters:
        ag._check_waiters((ADD_ACH, value.functor, len(value.args)), value)
    return PUSHED


def test_goal(ag: AgentState, it: Intention, value: Struct, key: tuple[str, int], text: str) -> int:
    """``?g`` that no belief answers: a ``+?g`` plan, or ``test_goal_failed``."""
    if (ADD_TEST, key[0], key[1]) in ag.plans:
        caller = it.stack[-1]
        value, caller.renamed = rename(value)
        plan, env = ag._select(ADD_TEST, value)
        frame = ag._push(it, plan, env, ADD_TEST, value, len(it.stack))
        if caller.renamed:
            frame.free = free_vars(caller.renamed)
        return PUSHED
    raise test_goal_failure(text)


def test_goal_failure(text: str) -> PlanFailure:
    """A test goal neither a belief nor a plan answers (``text``: the goal as written)."""
    return PlanFailure("test_goal_failed", f"Failed to test '{text}'")


def post_goal(ag: AgentState, value: Struct) -> None:
    """``!!g``: a new intention, through the event queue (on a copy of the goal: the new
    intention binds none of the poster's variables)."""
    value, _ = rename(value)
    ag.events.append((ADD_ACH, value, None))
    if ag.waiters:
        ag._check_waiters((ADD_ACH, value.functor, len(value.args)), value)


def act(ag: AgentState, action: Struct) -> None:
    if ag.host.act(ag, action) is False:
        raise PlanFailure("action_failed", f"{term_str(action)} failed")
