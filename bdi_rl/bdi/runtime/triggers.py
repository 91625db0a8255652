"""Triggers: their types (``+b -b +!g -!g +?g -?g``), texts, a trigger term's type and
literal (:func:`trigger_of`), and compiled trigger matchers.

A plan library is indexed by ``(trigger type, functor, arity)``; waiters on an event use
the same key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime.errors import AslSyntaxError, PlanFailure
from bdi_rl.bdi.runtime.parser import parse_text
from bdi_rl.bdi.runtime.planterms import TriggerTerm
from bdi_rl.bdi.runtime.terms import UNBOUND, LVar, Struct, Trail, deref, resolve, term_str
from bdi_rl.bdi.runtime.unify import Code, Env, Scope, TermCompiler, alias, match_annots

# trigger types: (op, kind) -> index
ADD_BEL, DEL_BEL, ADD_ACH, DEL_ACH, ADD_TEST, DEL_TEST = range(6)
TRIGGER_TYPES = {
    ("+", ""): ADD_BEL,
    ("-", ""): DEL_BEL,
    ("+", "!"): ADD_ACH,
    ("-", "!"): DEL_ACH,
    ("+", "?"): ADD_TEST,
    ("-", "?"): DEL_TEST,
}
TRIGGER_TEXT = {v: op + kind for (op, kind), v in TRIGGER_TYPES.items()}


def trigger_of(value: Any) -> tuple[int, Struct]:
    """A trigger term's type (triggers.ADD_ACH ...) and literal; source text (``"+!g(_)"``)
    is parsed. PlanFailure (wrong_arguments) for anything else."""
    value = deref(value)
    if type(value) is TriggerTerm:
        literal = resolve(value.literal)
        if type(literal) is not Struct:
            raise PlanFailure("wrong_arguments", f"not a trigger: {term_str(value)}")
        return TRIGGER_TYPES[(value.op, value.kind)], literal
    if type(value) is str:
        try:
            program = parse_text(value.strip().strip("{}").strip() + ".", "<trigger>")
        except AslSyntaxError as exc:
            raise PlanFailure("wrong_arguments", f"not a trigger: {exc}") from None
        if len(program.plans) != 1:
            raise PlanFailure("wrong_arguments", f"not a trigger: {value!r}")
        trigger = program.plans[0].trigger
        scope = Scope()
        code = TermCompiler(scope, "<trigger>").term(trigger.literal)
        return TRIGGER_TYPES[(trigger.op, trigger.kind)], resolve(code.build([UNBOUND] * scope.size))
    raise PlanFailure("wrong_arguments", f"not a trigger: {term_str(value)}")


def plan_trigger_matcher(args: list[Code], annots: list[Code]) -> Callable[[Struct, Env, Trail], bool]:
    """A plan's trigger matcher. The common trigger ``+!pick(X)``, distinct variables and
    no annotations, always matches: its slots are set without the trail, because plan
    selection matches into a fresh copy of the plan's slots and drops it if the plan is
    not applicable (the trail is still needed for bindings of the event's variables)."""
    slots = [c.slot for c in args]
    if annots or any(i < 0 for i in slots) or len(set(slots)) != len(slots):
        return trigger_matcher(args, annots)
    if not slots:
        return lambda value, env, trail: True
    names = [c.name for c in args]  # a free variable of the event: the slot's own, aliased to it
    if len(slots) == 1:
        i0, n0 = slots[0], names[0]

        def bind1(value: Struct, env: Env, trail: Trail) -> bool:
            v = value.args[0]
            env[i0] = alias(v, n0) if type(v) is LVar else v
            return True

        return bind1
    if len(slots) == 2:  # +!choose(S, A), +!consider(J, R): unrolled, no zip per event
        i0, i1 = slots
        n0, n1 = names

        def bind2(value: Struct, env: Env, trail: Trail) -> bool:
            v0, v1 = value.args
            env[i0] = alias(v0, n0) if type(v0) is LVar else v0
            env[i1] = alias(v1, n1) if type(v1) is LVar else v1
            return True

        return bind2

    def bind(value: Struct, env: Env, trail: Trail) -> bool:
        for i, n, v in zip(slots, names, value.args, strict=True):
            env[i] = alias(v, n) if type(v) is LVar else v
        return True

    return bind


def trigger_matcher(args: list[Code], annots: list[Code]) -> Callable[[Struct, Env, Trail], bool]:
    arity = len(args)
    matches = [c.match for c in args]
    if arity == 0 and not annots:
        return lambda value, env, trail: True

    def match(value: Struct, env: Env, trail: Trail) -> bool:
        vargs = value.args
        for k in range(arity):
            if not matches[k](vargs[k], env, trail):
                return False
        if annots:
            return match_annots(annots, value.annots, env, trail)
        return True

    return match


#: The functor of a plan whose trigger is a variable (``-!G[error(E)]``); its arity is -1.
VAR_TRIGGER = ""


def var_trigger_matcher(var: Code, annots: list[Code]) -> Callable[[Struct, Env, Trail], bool]:
    """``-!G[error(E)]``: ``G`` is the event's literal without its annotations (Jason), the
    annotation patterns match the event's annotations."""

    def match(value: Struct, env: Env, trail: Trail) -> bool:
        if not var.match(Struct(value.functor, value.args), env, trail):
            return False
        return not annots or match_annots(annots, value.annots, env, trail)

    return match


class PlanLibrary(dict[tuple[int, str, int], list[Any]]):
    """The plan index once a plan has a variable trigger (an agent's ``plans`` is a plain
    dict until then): such a plan is relevant to every event of its trigger type, after
    the plans of that event's own key that came before it (Jason's ``varPlans``)."""

    def __init__(self, plans: dict[tuple[int, str, int], list[Any]]) -> None:
        super().__init__(plans)
        self.var_plans: list[Any] = []

    def add_var_plan(self, plan: Any) -> None:
        self.var_plans.append(plan)
        for (ttype, _, _), plans in self.items():
            if ttype == plan.ttype:
                plans.append(plan)

    def _of_type(self, ttype: int) -> list[Any]:
        return [p for p in self.var_plans if p.ttype == ttype]

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            dict.__setitem__(self, key, self._of_type(key[0]) + list(default or ()))
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        found = dict.get(self, key)
        if found:
            return found
        return self._of_type(key[0]) or (found if found is not None else default)

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        return type(key) is tuple and bool(self._of_type(key[0]))
