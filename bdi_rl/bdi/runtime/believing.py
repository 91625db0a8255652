"""Belief changes and the events they raise: the belief base's add and remove, and the
body's ``+b``, ``+>b``, ``-b`` and ``-+b``.

A change raises its event as an external one (a new intention reacts), except the first
event of a plan's belief change in Jason's cycle: it goes on the intention that made it
(``Agent.focus``, Jason's sameFocus), which waits for the reaction. An external event no
plan is relevant to is not queued (Jason selects and discards it in the same cycle); an
intention's event always is (its intention waits for it).

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bdi_rl.bdi.runtime.terms import (
    ANNOTS_SELF,
    UNBOUND,
    Annots,
    LVar,
    Struct,
    Term,
    Terms,
    Trail,
    has_source,
    resolve,
    undo,
)
from bdi_rl.bdi.runtime.triggers import ADD_BEL, DEL_BEL
from bdi_rl.bdi.runtime.unify import MISSING, Code, Env, match_annots

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.state import AgentState


def _bb_add(ag: AgentState, functor: str, args: Terms, annots: Annots) -> Annots | None:
    new = ag.beliefs.add((functor, len(args)), args, annots)
    if new is not None:
        key = (ADD_BEL, functor, len(args))
        focus = ag.focus
        if focus is not None:
            ag.focus = None
            ag._post_internal(ADD_BEL, Struct(functor, args, new), focus)
        elif key in ag.plans:
            ag.events.append((ADD_BEL, Struct(functor, args, new), None))
        if ag.waiters:
            ag._check_waiters(key, Struct(functor, args, new))
    return new


def _bb_remove(ag: AgentState, functor: str, args: Terms, annots: Annots) -> Annots | None:
    removed = ag.beliefs.remove((functor, len(args)), args, annots)
    if removed is not None:
        key = (DEL_BEL, functor, len(args))
        focus = ag.focus
        if focus is not None:
            ag.focus = None
            ag._post_internal(DEL_BEL, Struct(functor, args, removed), focus)
        elif key in ag.plans:
            ag.events.append((DEL_BEL, Struct(functor, args, removed), None))
        if ag.waiters:
            ag._check_waiters(key, Struct(functor, args, removed))
    return removed


def add_belief(ag: AgentState, value: Struct, at_end: bool = False) -> None:
    """``+b``; ``+>b`` (``at_end``) puts a new belief last, so queries find it after
    the others of its functor (Jason's addBelEnd)."""
    value = resolve(value)
    annots = value.annots or ANNOTS_SELF
    new = ag._bb_add(value.functor, value.args, annots)
    if at_end and new is annots:  # a new belief (not new annotations of an old one)
        ag.beliefs.move_to_end(value.key, value.args)


def remove_matching(ag: AgentState, key: tuple[str, int], args: list[Term], annots: list[Term], env: Env) -> None:
    """``-b(...)[annots]``: the newest matching belief loses those annotations (nothing
    happens when none matches, as in Jason). The match's bindings stay only when the belief
    goes altogether (no source left): ``-b(X)`` binds ``X``; ``-b(X)[source(S)]`` on a
    belief with other sources leaves both unbound (recorded on Jason 3.2.2)."""
    group = ag.beliefs.groups.get(key)
    if not group:
        return
    ground = _ground_args(args, env)
    trail: Trail = []
    if ground is not None:  # the usual case, -b(X) with X bound: one lookup
        bannots = group.get(ground)
        if bannots is not None and match_annots(annots, bannots, env, trail):
            _remove_found(ag, key[0], ground, bannots, annots, env, trail)
        else:
            undo(trail, 0)
        return
    for bargs, bannots in reversed(tuple(group.items())):
        if all(code.match(value, env, trail) for code, value in zip(args, bargs, strict=False)) and match_annots(
            annots, bannots, env, trail
        ):
            _remove_found(ag, key[0], bargs, bannots, annots, env, trail)
            return
        undo(trail, 0)


def _remove_found(
    ag: AgentState, functor: str, bargs: Terms, bannots: Annots, annots: list[Term], env: Env, trail: Trail
) -> None:
    """Remove the matched belief's annotations; undo the match's bindings unless it goes."""
    removed = frozenset(resolve(code.build(env)) for code in annots)
    left = bannots - removed
    if left and has_source(left):
        undo(trail, 0)
    ag._bb_remove(functor, bargs, removed)


def replace_belief(ag: AgentState, value: Struct) -> None:
    """``-+b(args)``: remove the newest ``b/n`` with these annotations (whatever its
    arguments, as Jason's ``-b(_,...)``), then add ``b(args)``. The removal's events are
    external (Jason); the addition's goes on the intention in Jason's cycle."""
    value = resolve(value)
    functor, args, annots = value.functor, value.args, value.annots
    group = ag.beliefs.groups.get((functor, len(args)))
    focus = ag.focus
    if group:
        if (
            focus is None
            and group.get(args) == annots
            and len(group) == 1
            and (ADD_BEL, functor, len(args)) not in ag.plans
            and (DEL_BEL, functor, len(args)) not in ag.plans
            and not ag.waiters
        ):
            return  # already the one belief, and no one would see the two events
        ag.focus = None
        for old, old_annots in reversed(tuple(group.items())):
            if annots <= old_annots:
                ag._bb_remove(functor, old, annots)
                break
        ag.focus = focus
    ag._bb_add(functor, args, annots)


def _ground_args(codes: list[Code], env: Env) -> Terms | None:
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
