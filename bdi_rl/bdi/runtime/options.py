"""Learned option selection: which of a goal's applicable plans an agent uses, chosen by a
learned value instead of source order (issue 31).

A plan opts in with its label's annotation ``learned``, naming the beliefs that make the
goal's abstract state by their functors::

    @via_edge[learned(pos)]  +!cross <- ...
    @via_top[learned(pos)]   +!cross <- ...

``learned`` alone means ``learned(state)`` (the env's state percept); a list,
``learned([pos, carrying])``, takes them all (every arity of each). Selection stays Jason's
(the first applicable plan in source order) unless that plan is learned and the agent has an
:class:`OptionChooser`: then the choice is among every applicable plan of the event that is
learned, and the chooser picks one. A plan written before the learned ones still wins when it
applies; one written after them is used only when none of them applies. A program without
the annotation, or an agent without a chooser, selects exactly as before.

The runtime only gathers the options and the state; the values, exploration and the SMDP
update belong to the chooser (``bdi_rl.bdi.options``), which also learns when each chosen
plan's frame leaves its intention, and whether it failed (``OptionChooser.failed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.terms import Trail, term_str, undo
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.terms import Struct

Indicator = tuple[str, int]
"""A belief predicate of a learned plan's state: (functor, arity), arity -1 for any (what a
``learned`` annotation names)."""

#: ``learned`` without an argument: the env's state percept.
DEFAULT_STATE: tuple[Indicator, ...] = (("state", -1),)

#: What a learned annotation may name, as its error says.
_SHAPE = "learned, learned(F) or learned([F, ...]) with each F the functor of beliefs (an atom)"


class LearnedPlan(Protocol):
    """What a learned choice reads of a compiled plan (compiler.CompiledPlan, which imports
    this module for :func:`learned_state`)."""

    name: str
    learned: tuple[Indicator, ...] | None
    blank: Env
    context: Any
    match_trigger: Any


Plan = TypeVar("Plan", bound=LearnedPlan)


class OptionChooser(Protocol):
    """What selection needs of the agent's learned choice (``bdi_rl.bdi.options``)."""

    def choose(self, ag: Any, ttype: int, event: Struct, options: Sequence[LearnedPlan]) -> int:
        """The index in ``options`` of the plan to use (each is applicable now, in source order)."""
        ...

    def started(self, plan: LearnedPlan, env: Env) -> None:
        """The plan used (the one chosen, unless its context answered otherwise when its
        bindings were made again: then the first option) and the env its frame will hold
        (how the chooser finds the frame, and so learns when the plan ends)."""
        ...

    def failed(self, it: Any, from_index: int) -> None:
        """The frames of intention ``it`` from ``from_index`` up have failed (its plans'
        failure; an ``intention.Intention``, which imports the compiler, so not named here)."""
        ...


def learned_state(plan: s.Plan) -> tuple[Indicator, ...] | None:
    """The state a plan's ``learned`` label annotation names, or None (not learned).
    AslSyntaxError for an annotation of another shape."""
    label = plan.label
    if label is None:
        return None
    for annot in label.annots:
        if isinstance(annot, s.Lit) and annot.functor == "learned" and not annot.negated:
            if not annot.args:
                return DEFAULT_STATE
            if len(annot.args) != 1:
                raise _bad(plan, annot.line)
            arg = annot.args[0]
            items = arg.items if isinstance(arg, s.ListExpr) and arg.tail is None else (arg,)
            indicators = tuple(_indicator(plan, item) for item in items)
            if not indicators:
                raise _bad(plan, annot.line)
            return indicators
    return None


def _indicator(plan: s.Plan, node: Any) -> Indicator:
    if isinstance(node, s.Lit) and not node.args and not node.annots and not node.negated:
        return node.functor, -1
    raise _bad(plan, getattr(node, "line", plan.line))


def _bad(plan: s.Plan, line: int) -> AslSyntaxError:
    return AslSyntaxError(f"{plan.file}:{line or plan.line}: a plan's learned annotation must be {_SHAPE}")


def state_text(ag: Any, indicators: tuple[Indicator, ...]) -> str:
    """The abstract state: the agent's beliefs of ``indicators`` now, as text without
    annotations, each predicate's in sorted order (``pos(3,0)``; ``""`` for none)."""
    parts: list[str] = []
    groups = ag.beliefs.groups
    for functor, arity in indicators:
        if arity >= 0:
            keys = [(functor, arity)]
        else:
            keys = sorted(key for key in groups if key[0] == functor)
        for key in keys:
            group = groups.get(key)
            if group:
                parts.extend(sorted(_text(functor, args) for args in group))
    return ", ".join(parts)


def _text(functor: str, args: tuple[Any, ...]) -> str:
    return functor if not args else f"{functor}({', '.join(term_str(a) for a in args)})"


def applicable_learned(ag: Any, plans: Sequence[Plan], start: int, value: Struct) -> list[Plan]:
    """``plans[start]`` (learned, and found applicable by the caller) and every plan after it
    that is learned and applicable to the event, in source order, each one's bindings undone
    once it is found applicable (the chosen one's are made again by :func:`bind_option`)."""
    found: list[Plan] = [plans[start]]
    trail: Trail = []
    for plan in plans[start + 1 :]:
        if plan.learned is None:
            continue
        env = plan.blank[:]
        if plan.match_trigger(value, env, trail):
            context = plan.context
            if context is None or context.first(ag, env, trail):
                found.append(plan)
        undo(trail, 0)
    return found


def bind_option(ag: Any, plan: LearnedPlan, value: Struct) -> Env | None:
    """The chosen plan's bindings made again (its own env, kept), or None if its context
    no longer holds (one with a side effect, ``.random``, that answered otherwise)."""
    env = plan.blank[:]
    trail: Trail = []
    if plan.match_trigger(value, env, trail):
        context = plan.context
        if context is None or context.first(ag, env, trail):
            return env
    undo(trail, 0)
    return None
