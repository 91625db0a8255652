"""Belief changes and the events they raise: the belief base's add and remove, and the
body's ``+b``, ``+>b``, ``-b`` and ``-+b``.

The functions taking ``ag`` are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s methods (bound in
agent.py); they call each other through ``ag`` so that a listener's wrappers see every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, UNBOUND, LVar, Struct, resolve, undo
from bdi_rl.bdi.runtime.triggers import ADD_BEL, DEL_BEL
from bdi_rl.bdi.runtime.unify import MISSING, match_annots

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.agent import Agent


def _bb_add(ag: Agent, functor: str, args: tuple, annots: frozenset) -> frozenset | None:
    new = ag.beliefs.add((functor, len(args)), args, annots)
    if new is not None:
        key = (ADD_BEL, functor, len(args))
        if key in ag.plans:
            ag.events.append((ADD_BEL, Struct(functor, args, new)))
        if ag.waiters:
            ag._check_waiters(key, Struct(functor, args, new))
    return new


def _bb_remove(ag: Agent, functor: str, args: tuple, annots: frozenset) -> frozenset | None:
    removed = ag.beliefs.remove((functor, len(args)), args, annots)
    if removed is not None:
        key = (DEL_BEL, functor, len(args))
        if key in ag.plans:
            ag.events.append((DEL_BEL, Struct(functor, args, removed)))
        if ag.waiters:
            ag._check_waiters(key, Struct(functor, args, removed))
    return removed


def add_belief(ag: Agent, value: Struct, at_end: bool = False) -> None:
    """``+b``; ``+>b`` (``at_end``) puts a new belief last, so queries find it after
    the others of its functor (Jason's addBelEnd)."""
    value = resolve(value)
    annots = value.annots or ANNOTS_SELF
    new = ag._bb_add(value.functor, value.args, annots)
    if at_end and new is annots:  # a new belief (not new annotations of an old one)
        ag.beliefs.move_to_end(value.key, value.args)


def remove_matching(ag: Agent, key: tuple[str, int], args: list, annots: list, env: list) -> None:
    """``-b(...)[annots]``: the newest matching belief loses those annotations (nothing
    happens when none matches, as in Jason). As Jason's belief revision does, a belief
    found by its arguments leaves the annotations' variables unbound, one found by
    unification (``-b(X)``) keeps the bindings."""
    group = ag.beliefs.groups.get(key)
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
            ag._bb_remove(key[0], ground, removed)
        return
    trail = []
    for bargs, bannots in reversed(tuple(group.items())):
        if all(code.match(value, env, trail) for code, value in zip(args, bargs, strict=False)) and match_annots(
            annots, bannots, env, trail
        ):
            removed = frozenset(resolve(code.build(env)) for code in annots)
            ag._bb_remove(key[0], bargs, removed)  # Jason: -b(X) binds X (the bindings stay)
            return
        undo(trail, 0)


def replace_belief(ag: Agent, value: Struct) -> None:
    """``-+b(args)``: remove the newest ``b/n`` with these annotations (whatever its
    arguments, as Jason's ``-b(_,...)``), then add ``b(args)``."""
    value = resolve(value)
    functor, args, annots = value.functor, value.args, value.annots
    group = ag.beliefs.groups.get((functor, len(args)))
    if group:
        if group.get(args) == annots and len(group) == 1:
            return  # already the one belief: Jason would remove and add it (two events)
        for old, old_annots in reversed(tuple(group.items())):
            if annots <= old_annots:
                ag._bb_remove(functor, old, annots)
                break
    ag._bb_add(functor, args, annots)


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
