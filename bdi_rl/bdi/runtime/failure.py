"""Failure handling.

Jason's rule: a failing body step, or a goal with no relevant/applicable plan,
looks for a ``-!g`` plan for the innermost goal that has one (the failed sub-goal itself
first); its event carries ``error(Kind)``, ``error_msg(Msg)``, ``code_line(L)`` and
``code_src(F)``. The handler runs on top of the intention; when it ends, the goal's frames
go and the caller continues after ``!g``. Without a handler the intention is dropped and
reported (:meth:`Host.intention_failed`, :meth:`Listener.intention_failed`).

The functions taking ``ag`` are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s methods (bound in
agent.py); they call each other through ``ag`` so that a listener's wrappers see every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bdi_rl.bdi.runtime.errors import NoPlan, PlanFailure
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.terms import Struct, atom, term_str
from bdi_rl.bdi.runtime.triggers import ADD_ACH, DEL_ACH, TRIGGER_TEXT

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.agent import Agent


def _failure_annots(ag: Agent, exc: PlanFailure, file: str, line: int) -> frozenset:
    return frozenset(
        (
            Struct("error", (atom(exc.kind),)),
            Struct("error_msg", (exc.message,)),
            Struct("code_line", (line,)),
            Struct("code_src", (file,)),
        )
    )


def _fail(ag: Agent, it: Intention, frame: Frame, pc: int, exc: PlanFailure) -> bool:
    """Jason's failure rule (module docstring). True when a handler was pushed."""
    plan = frame.plan
    line = plan.lines[pc] if 0 <= pc < len(plan.lines) else plan.line
    annots = ag._failure_annots(exc, plan.file, line)
    stack = it.stack
    goal = getattr(exc, "goal", None)
    if goal is not None and (DEL_ACH, goal.functor, len(goal.args)) in ag.plans:
        if ag._handle_failure(it, goal, annots, len(stack)):
            return True
    else:
        idx = len(stack) - 1
        while idx >= 0:
            f = stack[idx]
            if f.unwind_to < idx:
                idx = f.unwind_to - 1
                continue
            if f.ttype == ADD_ACH and (DEL_ACH, f.event.functor, len(f.event.args)) in ag.plans:
                if ag._handle_failure(it, f.event, annots, idx):
                    return True
                break
            idx -= 1
    ag._drop(
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


def _handle_failure(ag: Agent, it: Intention, goal: Struct, annots: frozenset, unwind_to: int) -> bool:
    event = Struct(goal.functor, goal.args, goal.annots | annots)
    try:
        plan, env = ag._select(DEL_ACH, event)
    except NoPlan:
        return False
    ag._push(it, plan, env, DEL_ACH, event, unwind_to)
    if len(it.stack) == 1:
        ag.running.append(it)  # a new intention (the goal never had one)
    return True


def _drop(ag: Agent, it: Intention, report: dict) -> None:
    it.dropped = True
    if ag.atomic is it:
        ag.atomic = None
    report["frames"] = [f.plan.name for f in reversed(it.stack)]
    ag.failures.append(report)
    ag.host.intention_failed(ag, report)
    if it.reply is not None:
        ag._answer_ask(it, False)
