"""Failure, as Jason's transition system handles it (``generateGoalDeletion`` and
``Intention.findEventForFailure``).

A failing deed, or a goal no plan is relevant or applicable to, looks for a failure plan:
the failed goal's own first (``-!g`` for ``+!g``, ``-?g`` for ``+?g``), then those of the
goals below it on the intention, innermost first. The search stops at the first frame whose
deletion trigger has a plan (a belief reaction with a ``-b`` plan stops it too, and then
no failure event is made). A failure whose innermost frame is a belief reaction stacked on
the intention (sameFocus) drops the whole intention: Jason makes no failure event for it.

The failure event is the goal as its plan was selected for it (the failed plan's own
bindings undone: :func:`failure_literal`), annotated ``error(Kind)``, ``error_msg(Msg)``
(Jason's texts), ``code(Formula)``, ``code_line(L)``, ``code_src("file:NAME.asl")`` and
what ``.fail`` was given. Each cycle posts it its own way (``Agent._handle_failure``): the
fast cycle pushes the failure plan at once, Jason's cycle (jason_cycle.py) makes it an event
of the intention. Without a failure plan the intention is dropped and reported
(:meth:`Host.intention_failed`, :meth:`Listener.intention_failed`).

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.errors import AslSyntaxError, AslTypeError, NoPlan, PlanFailure
from bdi_rl.bdi.runtime.instructions import BELIEF, DEED
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.sourcetext import jason_stmt
from bdi_rl.bdi.runtime.terms import UNBOUND, Annots, LVar, Struct, Term, Trail, atom, resolve, term_str, undo, unify
from bdi_rl.bdi.runtime.triggers import ADD_ACH, ADD_BEL, ADD_TEST, DEL_ACH, DEL_BEL, DEL_TEST, TRIGGER_TEXT
from bdi_rl.bdi.runtime.unify import Env, TermCompiler

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime import syntax as s
    from bdi_rl.bdi.runtime.compiler import CompiledPlan
    from bdi_rl.bdi.runtime.state import AgentState, Report

#: trigger types of goals (Jason's ``Trigger.isGoal``)
GOALS = frozenset((ADD_ACH, DEL_ACH, ADD_TEST, DEL_TEST))
#: the deletion trigger a failure looks for, by the trigger type that failed
DELETION = {
    ADD_ACH: DEL_ACH,
    DEL_ACH: DEL_ACH,
    ADD_TEST: DEL_TEST,
    DEL_TEST: DEL_TEST,
    ADD_BEL: DEL_BEL,
    DEL_BEL: DEL_BEL,
}


# -- the failure event's annotations ---------------------------------------------------------------
def failure_annots(exc: PlanFailure, plan: CompiledPlan | None, pc: int, env: Env | None, code: Any = None) -> Annots:
    """``error``, ``error_msg``, the extra annotations of ``exc``, and where it failed:
    ``code_line``, ``code_src`` and ``code`` (the deed at ``pc`` of ``plan`` with the frame's
    bindings; ``code`` given: that term)."""
    annots: set[Term] = {Struct("error", (atom(exc.kind),)), *exc.annots}
    message = exc.message
    if plan is not None:
        line = plan.lines[pc] if 0 <= pc < len(plan.lines) else plan.line
        src = "file:" + plan.file
        annots.add(Struct("code_line", (line,)))
        annots.add(Struct("code_src", (src,)))
        if code is None and env is not None and 0 <= pc < len(plan.stmts):
            code = deed_term(plan, pc, env)
        if not message and exc.kind == "constraint_failed" and env is not None:
            message = (
                f"Constraint {rest_of_body(plan, pc)} was not satisfied ({src}:{line}) un={unifier_text(plan, env)}"
            )
            exc.message = message
    annots.add(Struct("error_msg", (message,)))
    if code is not None:
        annots.add(Struct("code", (code,)))
    return frozenset(annots)


def deed_term(plan: CompiledPlan, pc: int, env: Env) -> Any:
    """The deed at ``pc`` as a term, with the frame's bindings (Jason's ``code(...)``);
    None when it has none (a loop's bookkeeping)."""
    stmt: Any = plan.stmts[pc]  # any kind of statement: read by attribute
    node = getattr(stmt, "expr", None)
    if node is None:
        node = getattr(stmt, "cond", None)
        if node is None and getattr(stmt, "branches", None):
            node = stmt.branches[0][0]
    if node is None:
        return None
    tc = TermCompiler(plan.scope, plan.file)
    try:
        if getattr(node, "functor", "").startswith("."):  # an internal action: its literal
            code = tc.struct(node.functor, node.args, node.annots)
        else:
            code = tc.term(node)
        return resolve(code.build(list(env)))
    except (AslSyntaxError, AslTypeError, PlanFailure):  # a statement that is no term: no code(...)
        return None


def rest_of_body(plan: CompiledPlan, pc: int) -> str:
    """The plan's body from the deed at ``pc`` on, as Jason prints it (``(X > 5); .print("a")``)."""
    seen: list[s.Statement | None] = []
    for k in range(pc, len(plan.stmts)):
        if plan.kinds[k] not in (DEED, BELIEF):
            continue
        stmt = plan.stmts[k]
        if not any(stmt is s for s in seen):
            seen.append(stmt)
    return "; ".join(jason_stmt(s) for s in seen)


def unifier_text(plan: CompiledPlan, env: Env) -> str:
    """The frame's bindings as Jason prints its unifier (a Java HashMap of variable names:
    ``{X=3, N=2}``, in the map's own order)."""
    entries = []
    for name, slot in plan.scope.slots.items():
        value = env[slot] if slot < len(env) else UNBOUND
        if value is UNBOUND:
            continue
        value = resolve(value)
        if type(value) is LVar:
            continue
        entries.append((name, term_str(value)))
    capacity = 16
    while len(entries) > capacity * 3 // 4:
        capacity *= 2
    order = sorted(range(len(entries)), key=lambda i: (_java_bucket(entries[i][0], capacity), i))
    return "{" + ", ".join(f"{entries[i][0]}={entries[i][1]}" for i in order) + "}"


def _java_bucket(name: str, capacity: int) -> int:
    h = 0
    for ch in name:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h ^= h >> 16
    return h & (capacity - 1)


# -- which goal's failure plan ----------------------------------------------------------------------
def find_failure_target(ag: AgentState, it: Intention, ttype: int, value: Struct, index: int) -> int | None:
    """Jason's ``findEventForFailure``: the position of the goal whose failure plan handles a
    failure of the trigger ``(ttype, value)`` at ``index`` of ``it``'s stack (its length: a
    goal not yet on it, the event's own), or None when no failure event is made."""
    stack = it.stack
    plans = ag.plans
    if ttype == DEL_ACH or ttype == DEL_TEST:
        # a failure plan failed: skip down to (and past) the frames of the goal it handled
        j = len(stack) - 1
        found = False
        while j > 0 and not found:
            j -= 1
            while j > 0 and _unifies(stack[j].event, value):
                j -= 1
                found = True
        index = j
        frame = stack[j]
        ttype, value = frame.ttype, frame.event
    while (DELETION[ttype], value.functor, len(value.args)) not in plans:
        if index == 0 or not stack:
            return None
        index = min(index, len(stack)) - 1
        frame = stack[index]
        ttype, value = frame.ttype, frame.event
    return index if ttype in GOALS else None


def failure_literal(stack: list[Frame], index: int, annots: Annots) -> Struct:
    """The goal of ``stack[index]`` as its plan was selected for it, with ``annots``: the
    fresh variables its plan's body bound are unbound again (Jason discards the failed
    plan's unifier), those the selection bound keep their values; only the first reach the
    caller when the failure plan ends (they are the only variables the failure event has)."""
    frame = stack[index]
    free = frame.free
    for var in free:
        var.ref = UNBOUND
    if index > 0 and stack[index - 1].renamed:
        caller = stack[index - 1]
        caller.renamed = [pair for pair in caller.renamed if any(pair[1] is var for var in free)]  # type: ignore[union-attr]
    value = resolve(frame.event)
    return Struct(value.functor, value.args, value.annots | annots)


def _unifies(pattern: Any, value: Any) -> bool:
    trail: Trail = []
    ok = unify(pattern, value, trail)
    undo(trail, 0)
    return ok


# -- generateGoalDeletion ---------------------------------------------------------------------------
def _fail(ag: AgentState, it: Intention, frame: Frame, pc: int, exc: PlanFailure) -> None:
    """A deed of ``frame`` (at ``pc``) failed: Jason's failure rule (module docstring)."""
    goal = getattr(exc, "goal", None)
    if goal is not None:  # a sub-goal no plan was found for (the fast cycle)
        ag._fail_goal_event(it, exc.ttype, goal, exc, frame, pc)  # type: ignore[attr-defined]
        return
    stack = it.stack
    top = stack[-1] if stack else frame
    annots = failure_annots(exc, frame.plan, pc, frame.env)
    target = None
    if top.ttype in GOALS:
        target = find_failure_target(ag, it, top.ttype, top.event, len(stack) - 1)
    if ag.options is not None:  # the learned plans among the frames that fail: an outcome
        ag.options.failed(it, 0 if target is None else target)
    if target is not None:
        event = failure_literal(stack, target, annots)
        if ag._handle_failure(it, DELETION[stack[target].ttype], event, target):
            return
    ag._drop(it, _report(frame, pc, exc))


def _fail_goal_event(
    ag: AgentState, it: Intention, ttype: int, goal: Struct, exc: PlanFailure, caller: Frame | None, pc: int
) -> None:
    """No plan is relevant or applicable to the goal ``goal`` posted by ``caller`` (at its
    ``pc``; None: an external goal): Jason's ``generateGoalDeletionFromEvent``."""
    if caller is not None:
        annots = failure_annots(exc, caller.plan, pc, caller.env, goal)
    else:
        annots = failure_annots(exc, None, 0, None, goal)
    target = find_failure_target(ag, it, ttype, goal, len(it.stack))
    if ag.options is not None:
        ag.options.failed(it, 0 if target is None else target)
    if target is not None:
        if target == len(it.stack):
            event = Struct(goal.functor, goal.args, goal.annots | annots)
            del_type = DELETION[ttype]
        else:
            event = failure_literal(it.stack, target, annots)
            del_type = DELETION[it.stack[target].ttype]
        if ag._handle_failure(it, del_type, event, target):
            return
    if caller is not None:
        ag._drop(it, _report(caller, pc, exc))
    else:
        ag._drop(
            it,
            {
                "plan": None,
                "trigger": TRIGGER_TEXT[ttype] + term_str(goal),
                "error": exc.kind,
                "message": exc.message,
                "file": "",
                "line": 0,
            },
        )


def _report(frame: Frame, pc: int, exc: PlanFailure) -> Report:
    plan = frame.plan
    line = plan.lines[pc] if 0 <= pc < len(plan.lines) else plan.line
    return {
        "plan": plan.name,
        "trigger": TRIGGER_TEXT[frame.ttype] + term_str(frame.event),
        "error": exc.kind,
        "message": exc.detail or exc.message,
        "file": plan.file,
        "line": line,
    }


def _handle_failure(ag: AgentState, it: Intention, ttype: int, event: Struct, unwind_to: int) -> bool:
    """The fast cycle: the failure plan for ``event`` goes on top of ``it`` at once and the
    intention is queued; when it ends, the frames from ``unwind_to`` up go with it. False
    when no plan is applicable."""
    try:
        plan, env = ag._select(ttype, event)
    except NoPlan:
        return False
    if not it.id:  # the failure plan of an external goal: a new intention
        it.id = ag._new_intention().id
    ag._push(it, plan, env, ttype, event, unwind_to)
    ag.running.append(it)
    return True


def _drop(ag: AgentState, it: Intention, report: Report) -> None:
    it.dropped = True
    if ag.atomic is it:
        ag.atomic = None
    report["frames"] = [f.plan.name for f in reversed(it.stack)]
    ag.failures.append(report)
    ag.host.intention_failed(ag, report)
    if it.reply is not None:
        ag._answer_ask(it, False)
