"""Jason's reasoning cycle (``cycle = "jason"``, the default): one call of :func:`cycle` is
one ``TransitionSystem.reasoningCycle`` of Jason 3.2, each step a function named after the
rule it implements.

========== ============================================================================
sense      **ProcMsg**: one message of the mailbox (a tell adds its belief, an achieve
           posts its goal, an answer resumes the asker).
deliberate the tasks of the cycle's start (intentions a ``.wait`` resumes);
           **SelEv**: the next event (the atomic intention's first; none while an atomic
           intention exists; an external belief event no plan takes is discarded and the
           next one selected in the same cycle); **RelPl/ApplPl/SelAppl** (Jason's FindOp):
           the first applicable plan in source order; **AddIM**: an external event's plan
           starts a new intention, an internal event's goes on top of its intention.
act        **ProcAct**: environment actions that ended; **SelInt**: the atomic
           intention, else the first of the queue (round robin); **ExecInt**: one deed of
           it; **ClrInt**: the plans that have finished leave it, each taking the deed that
           posted it (``!g`` ends when ``g``'s plan does).
========== ============================================================================

A deed that posts an event (``!g``, ``?g`` answered by a plan, ``+b``/``-b``/``-+b`` with
sameFocus, a failure) leaves the intention waiting in the event queue until the event is
selected: a sub-goal's plan starts a later cycle, a belief change's reaction runs on top of
the intention that made it (``s1 a1 b1 a2 s2``). ``++b``/``--b`` and ``!!g`` raise external
events (new intentions). The event queue holds ``(type, value, intention)``, the intention
None for an external event.

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.errors import NoPlan, PlanFailure
from bdi_rl.bdi.runtime.failure import GOALS
from bdi_rl.bdi.runtime.instructions import BELIEF, FREE, JUMP, SUSPENDED
from bdi_rl.bdi.runtime.intention import Frame, Intention, endless, free_vars, is_tail_call, join, rename, spins
from bdi_rl.bdi.runtime.reasoning import MAX_DEPTH, internal_action_failure, test_goal_failure
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, LVar, Struct, Trail, atom, term_str, undo, unify
from bdi_rl.bdi.runtime.triggers import ADD_ACH, ADD_BEL, ADD_TEST, DEL_ACH, DEL_BEL, DEL_TEST
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.compiler import CompiledPlan
    from bdi_rl.bdi.runtime.state import AgentState, Event

#: the step of a frame that waits for the reaction to its belief change (sameFocus)
BELIEF_STEP = (ADD_BEL, None, -1)


def cycle(ag: AgentState) -> bool:
    """One reasoning cycle; False when there was nothing to do."""
    ag.cycles += 1
    busy = False
    # -- sense ----------------------------------------------------------------------------
    if ag.inbox:
        ag._proc_msg()
        busy = True
    # -- deliberate -------------------------------------------------------------------------
    ag.selected = None
    if ag.timers:
        ag._wake_timers()
    if ag.tasks:
        tasks, ag.tasks = ag.tasks, []
        for waited in tasks:
            ag._resume_now(waited)
    if ag.atomic is None and (ag.events or ag.atomic_event is not None):
        busy = ag._sel_ev() or busy
    # -- act --------------------------------------------------------------------------------
    if ag.feedback:
        ag._proc_act()
    it = ag._sel_int()
    if it is None:
        return busy
    if ag._exec_int(it):
        atomic = it.atomic  # Jason requeues the intention before ClrInt, atomic or not
        ag._clr_int(it)
        if it.stack:
            ag.running.append(it)
            if atomic or it.atomic:
                ag.atomic = it  # Jason keeps it the atomic intention until it is selected again
        else:
            ag._intention_done(it)
    return True


# -- sense -------------------------------------------------------------------------------------
def _proc_msg(ag: AgentState) -> None:
    """ProcMsg: the first message of the mailbox (Jason takes one per cycle)."""
    ag._process_message(*ag.inbox.pop(0))


# -- deliberate ----------------------------------------------------------------------------------
def _sel_ev(ag: AgentState) -> bool:
    """SelEv: the atomic intention's event, else the first of the queue. An external belief
    event no plan is applicable to is discarded and the next event selected (Jason's
    SelEv/RelPl loop). True when an event was selected."""
    event = ag.atomic_event
    if event is not None:
        ag.atomic_event = None
        ag._deliberate(event)
        return True
    events = ag.events
    while events:
        event = events.popleft()
        if ag._deliberate(event):
            return True
    return False


def _deliberate(ag: AgentState, event: Event) -> bool:
    """RelPl, ApplPl, SelAppl (the first applicable plan) and AddIM for ``event``; False
    when it was an external belief event no plan took (SelEv selects again)."""
    ttype, value, it = event
    ag.selected = event
    if it is None:
        try:
            plan, env = ag._select(ttype, value)
        except NoPlan as exc:
            if ttype == ADD_ACH or ttype == ADD_TEST:
                ag._fail_goal_event(Intention(), ttype, value, exc, None, 0)
                return True
            return ttype in GOALS  # a -!g no plan takes is discarded too, but ends the step
        new = ag._new_intention()
        ag._push(new, plan, env, ttype, value, 0)
        ag._resume_now(new)
        return True
    if it.dropped or not it.stack:
        return True
    if ttype <= DEL_BEL and (ttype, value.functor, len(value.args)) not in ag.plans:
        _no_reaction(ag, it)  # the usual belief change: no plan is relevant
        return True
    try:
        plan, env = ag._select(ttype, value)
    except NoPlan as exc:
        caller = it.stack[-1] if it.stack else None
        if ttype == ADD_ACH or ttype == ADD_TEST:
            step = caller.step if caller is not None else None  # stays: a failure plan for
            pc = step[2] if step is not None else 0  # the goal itself returns to it
            ag._fail_goal_event(it, ttype, value, exc, caller, pc)
        elif ttype == ADD_BEL or ttype == DEL_BEL:  # no reaction: the intention goes on
            _no_reaction(ag, it)
        else:  # a failure plan that is not applicable: Jason cannot finish the intention
            frame = it.stack[-1]
            ag._drop(
                it,
                {
                    "plan": frame.plan.name,
                    "trigger": "-!" + term_str(value) if ttype == DEL_ACH else "-?" + term_str(value),
                    "error": exc.kind,
                    "message": exc.message,
                    "file": frame.plan.file,
                    "line": frame.plan.line,
                },
            )
        return True
    stack = it.stack
    caller = stack[-1] if stack else None
    free: tuple[LVar, ...] = ()
    if caller is not None and (ttype == ADD_ACH or ttype == ADD_TEST):
        free = free_vars(caller.renamed)
        if is_tail_call(caller, value):
            if spins(caller, plan, value):
                step = caller.step
                ag._fail_goal_event(it, ttype, value, endless(value), caller, step[2] if step is not None else 0)
                return True
            ag._tail_call(it, caller)
    frame = ag._push(it, plan, env, ttype, value, len(stack))
    frame.free = free
    ag._resume_now(it)
    return True


def _no_reaction(ag: AgentState, it: Intention) -> None:
    """An intention's belief event no plan takes: the intention goes on after the change."""
    caller = it.stack[-1]
    if caller.renamed:
        join(caller)
    caller.step = None
    ag._resume_now(it)


# -- act -----------------------------------------------------------------------------------------
def _proc_act(ag: AgentState) -> None:
    """ProcAct: an intention whose environment action (a host's held action) ended goes
    back to the queue, its finished plans cleared."""
    it = ag.feedback.pop(0)
    if it.dropped:
        return
    ag._clr_int(it)
    if it.stack:
        ag._resume_now(it)
    else:
        ag._intention_done(it)


def _sel_int(ag: AgentState) -> Intention | None:
    """SelInt: the atomic intention (none while it waits), else the first in the queue."""
    atomic = ag.atomic
    running = ag.running
    if atomic is not None:
        if atomic in running:
            running.remove(atomic)
            ag.atomic = None
            return atomic
        return None
    while running:
        it = running.popleft()
        if not it.dropped:
            return it
    return None


def _exec_int(ag: AgentState, it: Intention) -> bool:
    """ExecInt: one deed of the intention's top plan (loop bookkeeping and jumps before it
    are no deeds). True when the intention goes on (back to the queue); False when it waits
    (an event it posted, ``.wait``, an answer) or failed."""
    if not it.stack:  # Jason: a finished intention selected again does nothing
        return False
    ag.current = it
    ag.budget = ag.slice  # loops count their turns for the fast cycle only: never spent here
    frame = it.stack[-1]
    code = frame.code
    kinds = frame.plan.kinds
    n = len(code)
    pc = frame.pc
    try:
        while pc < n:
            kind = kinds[pc]
            if kind == BELIEF:
                ag.focus = it
                nxt = code[pc](ag, it, frame)
                if ag.focus is None:  # its event took the intention along (sameFocus)
                    frame.pc = nxt
                    frame.step = BELIEF_STEP
                    return False
                ag.focus = None
            else:
                nxt = code[pc](ag, it, frame)
                if nxt < 0:  # SUSPENDED: the deed left the intention waiting
                    return False
            pc = nxt
            if kind != FREE and kind != JUMP:
                break
        frame.pc = pc
        return True
    except PlanFailure as exc:
        failure = exc
    except Exception as exc:  # noqa: BLE001 - an internal action raised: the plan fails
        failure = internal_action_failure(exc)
    ag.focus = None
    ag._fail(it, frame, pc, failure)
    return False


def finished(frame: Frame) -> bool:
    """Whether the plan has no deed left (jumps to its end are none) and waits for none."""
    if frame.step is not None:
        return False
    plan = frame.plan
    kinds = plan.kinds
    n = len(frame.code)
    pc = frame.pc
    while pc < n and kinds[pc] == JUMP:
        pc = plan.targets[pc]
    return pc >= n


def _clr_int(ag: AgentState, it: Intention) -> None:
    """ClrInt: pop the finished plans; each takes the deed that posted it from the plan
    below (which then goes on with its variables joined). A failure plan that ended takes
    the frames of the goal it handled along, down to the goal's caller."""
    stack = it.stack
    while stack:
        top = stack[-1]
        pc = top.pc
        if top.step is not None or pc < len(top.code) and top.plan.kinds[pc] != JUMP or not finished(top):
            return  # (the usual case, a deed left, decided without a call)
        ag._frame_done(it, top)
        if (top.ttype == DEL_ACH or top.ttype == DEL_TEST) and stack:
            literal = top.event
            im = stack[-1]
            if finished(im) or not _posted(im, literal):
                im = stack[-1]
                ag._frame_done(it, im)
            while stack and not (im.ttype in GOALS and _unifies(im.event, literal)) and not _posted(im, literal):
                im = stack[-1]
                ag._frame_done(it, im)
        if stack:
            im = stack[-1]
            if not finished(im):
                join(im)
                im.step = None


def _posted(frame: Frame, literal: Struct) -> bool:
    """Whether ``frame``'s current step is ``!g`` for the goal of ``literal`` (the goal as
    the body wrote it: without the ``source(self)`` its event has)."""
    step = frame.step
    if step is None or step[0] != ADD_ACH:
        return False
    goal = step[1]
    return _unifies(Struct(goal.functor, goal.args, goal.annots - ANNOTS_SELF), literal)


def _unifies(pattern: Any, value: Any) -> bool:
    trail: Trail = []
    ok = unify(pattern, value, trail)
    undo(trail, 0)
    return ok


def _intention_done(ag: AgentState, it: Intention) -> None:
    """The intention has no plan left (Jason's dropRunningIntention at ClrInt)."""
    if ag.atomic is it:
        ag.atomic = None
    if it.reply is not None:
        ag._answer_ask(it, True)


# -- the intention structures ---------------------------------------------------------------------
def _resume_now(ag: AgentState, it: Intention) -> None:
    """Jason's addRunningIntention (an intention ``.suspend`` holds stays held)."""
    if it.dropped:
        return
    if it.suspended:  # Jason: back among the pending intentions, as suspended
        key = f"suspended-{it.id}"
        it.wait_for(atom(key), key, next(ag._seq))
        ag.suspended_ints[it.id] = it
        return
    ag.running.append(it)
    if it.atomic:
        ag.atomic = it


def _resume_later(ag: AgentState, it: Intention) -> None:
    """An intention a ``.wait`` held goes on at the start of the next cycle (Jason resumes
    it in a task of the cycle's start)."""
    ag.tasks.append(it)


def _resume_after_action(ag: AgentState, it: Intention) -> None:
    """A host action the intention waited for ended: back at the next ProcAct."""
    ag.feedback.append(it)


def _push(
    ag: AgentState, it: Intention, plan: CompiledPlan, env: Env, ttype: int, value: Struct, unwind_to: int
) -> Frame:
    frame = Frame(plan, env, unwind_to, ttype, value)
    it.stack.append(frame)
    if plan.atomic:
        it.atomic += 1
    return frame


def _frame_done(ag: AgentState, it: Intention, frame: Frame) -> None:
    """The top plan leaves the intention (ClrInt pops them one by one)."""
    it.stack.pop()
    if frame.plan.atomic:
        it.atomic -= 1


def post_internal(ag: AgentState, ttype: int, value: Struct, it: Intention) -> None:
    """An event of ``it`` (it waits for the event's reaction); an atomic intention's event
    is selected before any other."""
    if it.atomic:
        ag.atomic_event = (ttype, value, it)
    else:
        ag.events.append((ttype, value, it))


# -- deeds that post events ----------------------------------------------------------------------
def achieve(ag: AgentState, it: Intention, value: Struct) -> int:
    """``!g``: an internal event; the intention waits until its plan is selected (AddIM)."""
    frame = it.stack[-1]
    if len(it.stack) >= MAX_DEPTH:
        raise PlanFailure("max_depth", f"!{term_str(value)}: more than {MAX_DEPTH} nested sub-goals")
    value, frame.renamed = rename(value)
    frame.step = (ADD_ACH, value, frame.pc - 1)
    ag._post_internal(ADD_ACH, value, it)
    if ag.waiters:
        ag._check_waiters((ADD_ACH, value.functor, len(value.args)), value)
    return SUSPENDED


def test_goal(ag: AgentState, it: Intention, value: Struct, key: tuple[str, int], text: str) -> int:
    """``?g`` no belief answers: an internal event when a ``+?g`` plan is relevant."""
    if (ADD_TEST, key[0], key[1]) not in ag.plans:
        raise test_goal_failure(text)
    frame = it.stack[-1]
    value, frame.renamed = rename(value)
    frame.step = (ADD_TEST, value, frame.pc - 1)
    ag._post_internal(ADD_TEST, value, it)
    return SUSPENDED


def _handle_failure(ag: AgentState, it: Intention, ttype: int, event: Struct, unwind_to: int) -> bool:
    """The failure event of ``it``: selected in a later cycle (its plan then goes on top of
    the intention, and ClrInt takes the failed goal's frames when it ends)."""
    if it.stack:
        ag._post_internal(ttype, event, it)
    else:  # a goal of an external event: the failure event is external too
        ag.events.append((ttype, event, None))
    return True
