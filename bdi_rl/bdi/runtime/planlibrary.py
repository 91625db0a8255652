"""The plan library's internal actions (Jason 3.2's ``.add_plan``, ``.remove_plan``,
``.relevant_plans``, ``.plan_label``, and the kqml plans of tellHow, untellHow and askHow),
and how plans, triggers and intended means become terms.

Plan terms (``{ @l +!g(X) : c <- body }``) and trigger terms (``{ +!g(1) }``) are planterms.py's;
the functions under "Terms of plans and intentions" make them from the library's plans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.instructions import FREE, JUMP
from bdi_rl.bdi.runtime.intention import Frame
from bdi_rl.bdi.runtime.planterms import PlanTerm, TriggerTerm, plan_of, value_expr
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.sourcetext import jason_stmt
from bdi_rl.bdi.runtime.stdlib_core import standard
from bdi_rl.bdi.runtime.terms import SELF, UNBOUND, LVar, Struct, Trail, atom, deref, resolve, source, undo
from bdi_rl.bdi.runtime.triggers import TRIGGER_TYPES, trigger_of
from bdi_rl.bdi.runtime.unify import Env, Scope, TermCompiler

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.compiler import CompiledPlan
    from bdi_rl.bdi.runtime.state import AgentState


# -- the plan library --------------------------------------------------------------------------
def add_plans(ag: AgentState, program: s.Program, who: Any, begin: bool) -> list[CompiledPlan]:
    """Compile ``program``'s plans into the library, each from ``who`` (Jason's
    ``PlanLibrary.add``: at the ``begin`` or the end; a label used by another plan fails)."""
    added = []
    for plan in program.plans:
        if plan.label is not None and any(
            p.label is not None and p.label.functor == plan.label.functor for ps in ag.plans.values() for p in ps
        ):
            raise PlanFailure("internal_action", f"There already is a plan with label {plan.label.functor}")
        ag._plan_count += 1
        cp = ag._compiler.plan(plan, ag._plan_count)
        label = cp.label if cp.label is not None else atom(cp.name)
        if who is not SELF:  # told by another agent: its only source (Jason's)
            kept = frozenset(a for a in label.annots if not (type(a) is Struct and a.functor == "source"))
            label = Struct(label.functor, label.args, kept | {source(who)})
        cp.label = label
        cp.added = True
        plans = ag.plans.setdefault((cp.ttype, cp.functor, cp.arity), [])
        if begin:
            plans.insert(0, cp)
        else:
            plans.append(cp)
        added.append(cp)
    return added


def remove_plans(ag: AgentState, labels: list[Any], who: Any) -> bool:
    """Jason's ``PlanLibrary.remove(label, source)`` for each label: the plan labelled so
    (by functor and arguments) loses ``source(who)``, and leaves the library when that was
    its last source. False when none was removed."""
    removed = False
    gone = source(who)
    for value in labels:
        label = deref(value)
        if type(label) is not Struct:
            continue
        for key, plans in list(ag.plans.items()):
            kept = []
            for plan in plans:
                if not _labelled(plan, label):
                    kept.append(plan)
                    continue
                mine = plan_label(plan)
                if gone not in mine.annots:
                    kept.append(plan)
                    continue
                left = mine.annots - {gone}
                if any(type(a) is Struct and a.functor == "source" for a in left):
                    plan.label = Struct(mine.functor, mine.args, frozenset(a for a in left if a.functor != "url"))
                    kept.append(plan)
                else:
                    removed = True
            if len(kept) != len(plans):
                if kept:
                    ag.plans[key] = kept
                else:
                    del ag.plans[key]
    return removed


def _labelled(plan: CompiledPlan, label: Struct) -> bool:
    mine = plan.label if plan.label is not None else atom(plan.name)
    return mine.functor == label.functor and mine.args == label.args


def _plan_texts(value: Any) -> list[Any]:
    value = deref(value)
    return list(value) if type(value) is tuple else [value]


@standard(".add_plan", 1, 2, 3)
def _add_plan(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    plans = tc.term(node.args[0]).build
    who = tc.term(node.args[1]).build if len(node.args) >= 2 else None
    where = tc.term(node.args[2]).build if len(node.args) == 3 else None

    def first(ag: Any, env: Env, trail: Any) -> bool:
        sender = SELF if who is None else deref(resolve(who(env)))
        position = None if where is None else deref(where(env))
        begin = type(position) is Struct and position.functor == "begin"
        for item in _plan_texts(plans(env)):
            add_plans(ag, plan_program(item), sender, begin)
        return True

    return Query(first)


@standard(".remove_plan", 1, 2)
def _remove_plan(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    labels = tc.term(node.args[0]).build
    who = tc.term(node.args[1]).build if len(node.args) == 2 else None

    def first(ag: Any, env: Env, trail: Any) -> bool:
        remove_plans(ag, _plan_texts(resolve(labels(env))), SELF if who is None else resolve(who(env)))
        return True

    return Query(first)


@standard(".relevant_plans", 2, 3)
def _relevant_plans(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    trigger = _trigger_arg(tc, node.args[0])
    plans_out = tc.term(node.args[1]).match
    labels_out = tc.term(node.args[2]).match if len(node.args) == 3 else None

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        ttype, value = trigger(env)
        found = relevant_plans(ag, ttype, value)
        return plans_out(tuple(plan_term(p) for p in found), env, trail) and (
            labels_out is None or labels_out(tuple(plan_label(p) for p in found), env, trail)
        )

    return Query(first)


def relevant_plans(ag: AgentState, ttype: int, value: Struct) -> list[CompiledPlan]:
    """The plans whose trigger unifies with the trigger ``ttype``/``value``, in order."""
    found = []
    for plan in ag.plans.get((ttype, value.functor, len(value.args)), ()):
        env = plan.blank[:]
        trail: Trail = []
        if plan.match_trigger(value, env, trail):
            found.append(plan)
        undo(trail, 0)
    return found


@standard(".plan_label", 2)
def _plan_label(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match
    label = tc.term(node.args[1]).build

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        wanted = deref(label(env))
        if type(wanted) is not Struct:
            return False
        for plans in ag.plans.values():
            for plan in plans:
                if _labelled(plan, wanted):
                    return out(plan_term(plan), env, trail)
        return False

    return Query(first)


def _trigger_arg(tc: TermCompiler, node: Any) -> Callable[[Env], tuple[int, Struct]]:
    """A trigger argument: ``{+!g(_)}``, or a string of one (``"+!g(_)"``)."""
    if isinstance(node, s.TriggerExpr):
        ttype = TRIGGER_TYPES[(node.op, node.kind)]
        build = tc.term(node.literal).build
        return lambda env: (ttype, resolve(build(env)))
    text = tc.term(node).build

    def parse(env: Env) -> tuple[int, Struct]:
        value = deref(text(env))
        return trigger_of(value)

    return parse


# -- Terms of plans and intentions ---------------------------------------------------------------
_TRIGGER_PARTS = {ttype: parts for parts, ttype in TRIGGER_TYPES.items()}


def plan_term(plan: CompiledPlan) -> PlanTerm:
    """The plan as a value (``.relevant_plans``, ``.plan_label``, askHow's answer), its label
    as Jason shows it."""
    return PlanTerm(replace(plan.ast, label=_label_expr(plan_label(plan), plan.line)))


def _label_expr(label: Struct, line: int) -> s.Lit:
    expr = value_expr(label, line)
    assert isinstance(expr, s.Lit)  # a label is a structure
    return expr


def answered_plan(value: Any, sender: Any) -> Any:
    """A plan term of an askHow's answer as the asker sees it: its label's sources replaced
    by the sender (Jason's); any other value as it came."""
    value = deref(value)
    if type(value) is not PlanTerm or value.plan.label is None:
        return value
    label = TermCompiler(Scope(), "<label>").term(value.plan.label).const
    if type(label) is not Struct:
        return value
    annots = frozenset(a for a in label.annots if not (type(a) is Struct and a.functor == "source"))
    told = Struct(label.functor, label.args, annots | {source(sender)})
    return PlanTerm(replace(value.plan, label=_label_expr(told, value.plan.line)), value.values)


def trigger_term(ttype: int, value: Struct) -> TriggerTerm:
    """A trigger as a value (an intended means' ``{ +!g(1)[source(self)] }``)."""
    op, kind = _TRIGGER_PARTS[ttype]
    return TriggerTerm(op, kind, value)


def plan_program(value: Any) -> s.Program:
    """The plan of ``.add_plan``'s or tellHow's argument: a plan term, or a plan's text (with
    or without its final ``.``)."""
    return s.Program(plans=[plan_of(value, "<add_plan>")])


def plan_label(plan: CompiledPlan, where: bool = False) -> Struct:
    """The plan's label as Jason shows it: ``source(self)`` unless it came from another
    agent, ``url("file:NAME.asl")`` when it came from a file, and with ``where`` its
    ``code_line`` and ``code_src``."""
    label = plan.label if plan.label is not None else atom(plan.name)
    annots = set(label.annots)
    if not any(type(a) is Struct and a.functor == "source" for a in annots):
        annots.add(source(SELF))
    if plan.file and not plan.file.startswith("<") and not plan.added:
        annots.add(Struct("url", ("file:" + plan.file,)))
        if where:
            annots.add(Struct("code_line", (plan.line,)))
            annots.add(Struct("code_src", ("file:" + plan.file,)))
    return Struct(label.functor, label.args, frozenset(annots))


def im_term(frame: Frame) -> Struct:
    """An intended means: ``im(Label, {Trigger}, {Body}, Unifier)`` (Jason's
    ``IntendedMeans.getAsTerm``): the body from the current step on, the bindings as
    ``map(Var, Value)``."""
    plan = frame.plan
    body = "{ " + _body_from(plan, frame.pc) + " }"
    bindings = []
    for name, slot in plan.scope.slots.items():
        value = frame.env[slot] if slot < len(frame.env) else UNBOUND
        if value is UNBOUND:
            continue
        value = resolve(value)
        if type(value) is LVar:
            continue
        bindings.append(Struct("map", (LVar(name), value)))
    return Struct("im", (plan_label(plan, True), trigger_term(frame.ttype, frame.event), body, tuple(bindings)))


def _body_from(plan: CompiledPlan, pc: int) -> str:
    seen: list[s.Statement | None] = []
    for k in range(pc, len(plan.stmts)):
        if plan.kinds[k] in (FREE, JUMP):
            continue
        stmt = plan.stmts[k]
        if not any(stmt is x for x in seen):
            seen.append(stmt)
    return "; ".join(jason_stmt(x) for x in seen)
