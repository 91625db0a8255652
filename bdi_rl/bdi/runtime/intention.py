"""An intention: its stack of frames (plan instances); what its instructions return is in
instructions.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.instructions import FREE, JUMP
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF as _SELF
from bdi_rl.bdi.runtime.terms import UNBOUND, LVar, PartialList, Struct, Term, resolve, term_str
from bdi_rl.bdi.runtime.triggers import ADD_ACH, ADD_TEST
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.compiler import CompiledPlan

Renamed = list[tuple[LVar, LVar]]
"""A goal's renamed variables: (the caller's variable, the fresh one standing for it)."""


class Frame:
    """One plan instance on an intention (Jason's intended means): its code, slots and the
    next instruction.

    ``renamed`` holds, while the frame waits for a sub-goal it posted (``!g(X)``, ``?g(X)``
    with a ``+?g`` plan), the pairs (the frame's own variable, the fresh variable that stands
    for it in the goal): the sub-goal's plan binds only the fresh ones, and they reach the
    frame's variables when the sub-goal ends well (Jason's renamed variables, joined back in
    ClrInt). ``free`` holds the fresh variables of this frame's own goal that its plan
    selection left unbound: a failure unbinds them again, so the ``-!g`` plan sees the goal
    as it was posted (a failed plan's bindings are undone). ``step`` (the faithful cycle) is
    the internal event this frame posted and waits for: Jason's current step, still in the
    body until the reaction to it ends."""

    __slots__ = ("plan", "code", "env", "pc", "unwind_to", "ttype", "event", "saved", "renamed", "free", "step")

    def __init__(self, plan: CompiledPlan, env: Env, unwind_to: int, ttype: int, event: Struct) -> None:
        self.plan = plan
        self.code = plan.code
        self.env = env
        self.pc = 0
        self.unwind_to = unwind_to
        """stack length to cut back to when this frame ends (a failure plan removes the
        frames of the goal it handles)"""
        self.ttype = ttype
        self.event = event
        self.saved: list[Any] | None = [None] * plan.loops if plan.loops else None
        self.renamed: Renamed | None = None
        self.free: tuple[LVar, ...] = ()
        self.step: tuple[int, Any, int] | None = None


class Intention:
    """A stack of frames. ``id`` counts from 1 in each agent, as Jason numbers them."""

    __slots__ = ("stack", "atomic", "id", "dropped", "reply", "suspended", "reason", "key", "since")

    def __init__(self, ident: int = 0) -> None:
        self.stack: list[Frame] = []
        self.atomic = 0
        self.id = ident
        self.dropped = False
        self.reply: tuple[Any, Any, Any] | None = None
        """(asker, msg_id, query) of the askOne this intention answers (its ``+?q`` plan's)"""
        self.suspended = False
        """suspended by ``.suspend`` (until ``.resume``)"""
        self.reason: Any = None
        """what it waits for, as Jason says it (``wait(3)[time(500)]``): ``.suspended``,
        ``.intention``"""
        self.key = ""
        """its key among Jason's pending intentions (a hash map: the order they are listed)"""
        self.since = 0
        """when it began to wait (the order within a key's bucket)"""

    def wait_for(self, reason: Any, key: str, since: int) -> None:
        """It waits, for ``reason`` (Jason's pending intention ``key``)."""
        self.reason = reason
        self.key = key
        self.since = since

    def __repr__(self) -> str:
        return f"<intention {self.id}: {[f.plan.name for f in self.stack]}>"


def rename(value: Term) -> tuple[Term, Renamed | None]:
    """A goal as Jason posts it: ``value`` with its bound variables replaced by their values
    and each unbound one by a fresh variable (Jason's ``makeVarsAnnon``), and the pairs
    (variable, fresh one); None when there were none (a ground goal: the same object)."""
    annots = value.annots
    if not annots or annots is _SELF or annots == _SELF:  # the usual goal: !g(1, a), no variable
        for a in value.args:
            t = type(a)
            if t is LVar or t is tuple or t is PartialList or t is Struct and (a.args or a.annots):
                break
        else:
            return value, None
    pairs: dict[LVar, LVar] = {}
    renamed = _rename(value, pairs)
    return renamed, (list(pairs.items()) if pairs else None)


def _rename(value: Term, pairs: dict[LVar, LVar]) -> Term:
    kind = type(value)
    if kind is LVar:
        while type(value) is LVar:
            ref = value.ref
            if ref is UNBOUND:
                fresh = pairs.get(value)
                if fresh is None:
                    fresh = pairs[value] = LVar(value.name)
                return fresh
            value = ref
        kind = type(value)
    if kind is Struct:
        args = value.args
        annots = value.annots
        if not args and not annots:
            return value
        new_args = None
        for i, a in enumerate(args):
            t = type(a)
            if t is LVar or t is Struct or t is tuple or t is PartialList:
                r = _rename(a, pairs)
                if r is not a:
                    if new_args is None:
                        new_args = list(args)
                    new_args[i] = r
        new_annots = annots
        for a in annots:
            if type(a) is not Struct or a.args and not _atomic_args(a):
                new_annots = frozenset(_rename(x, pairs) for x in annots)
                if new_annots == annots:
                    new_annots = annots
                break
        if new_args is None and new_annots is annots:
            return value
        return Struct(value.functor, tuple(new_args) if new_args is not None else args, new_annots)
    if kind is PartialList:  # [a|T]: its items and its rest renamed, or the list it became
        value = resolve(value)
        if type(value) is PartialList:
            return PartialList(tuple(_rename(a, pairs) for a in value.items), _rename(value.tail, pairs))
        kind = type(value)
    if kind is tuple:
        new = None
        for i, a in enumerate(value):
            t = type(a)
            if t is LVar or t is Struct or t is tuple or t is PartialList:
                r = _rename(a, pairs)
                if r is not a:
                    if new is None:
                        new = list(value)
                    new[i] = r
        return value if new is None else tuple(new)
    return value


def _atomic_args(annot: Struct) -> bool:
    """``source(self)``: an annotation whose arguments are numbers, strings or atoms."""
    for a in annot.args:
        t = type(a)
        if t is LVar or t is tuple or t is PartialList or t is Struct and (a.args or a.annots):
            return False
    return True


def free_vars(pairs: Renamed | None) -> tuple[LVar, ...]:
    """The fresh variables of ``pairs`` still unbound (after plan selection)."""
    if not pairs:
        return ()
    return tuple(fresh for _, fresh in pairs if fresh.ref is UNBOUND)


def join(frame: Frame) -> None:
    """The sub-goal ``frame`` waited for ended well: its variables take what the sub-goal's
    plans bound (each becomes the fresh variable that stood for it)."""
    pairs = frame.renamed
    frame.renamed = None
    if pairs:
        for var, fresh in pairs:
            if var.ref is UNBOUND and var is not fresh:
                var.ref = fresh


def at_end(frame: Frame) -> bool:
    """Whether the plan has no instruction left but jumps to its end."""
    plan = frame.plan
    kinds = plan.kinds
    n = len(frame.code)
    pc = frame.pc
    while pc < n and kinds[pc] == JUMP:
        pc = plan.targets[pc]
    return pc >= n


def spins(caller: Frame, plan: Any, goal: Struct) -> bool:
    """The goal's plan is the caller's own, which has no context and no deed but this very
    goal again (``+!g <- !g.``): a loop that can never end nor do anything. Jason runs it
    forever at full speed; here it fails at once (``max_depth``), naming the plan."""
    if caller.plan is not plan or plan.context is not None or caller.event != goal:
        return False
    return sum(1 for kind in plan.kinds if kind != JUMP and kind != FREE) == 1


def endless(goal: Struct) -> PlanFailure:
    """The failure of a goal that :func:`spins`."""
    return PlanFailure("max_depth", f"!{term_str(goal)}: its plan only posts it again, forever")


def is_tail_call(caller: Frame, goal: Struct) -> bool:
    """Jason's tail recursion optimisation applies: the caller's goal (an achievement or
    test goal) has the new goal's functor and arity, and the ``!g`` it waits on is its last
    deed."""
    event = caller.event
    return (
        (caller.ttype == ADD_ACH or caller.ttype == ADD_TEST)
        and event.functor == goal.functor
        and len(event.args) == len(goal.args)
        and at_end(caller)
    )
