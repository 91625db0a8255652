"""Argument tuples of body literals (``!g(..)``, ``+b(..)``, ``-b(..)``), built straight from
frame slots.

The general path builds a :class:`~bdi_rl.bdi.runtime.terms.Struct`, then a second one
with ``source(self)`` added, then resolves it: three objects and a walk for what is, in the
common case (``+count(N + 1)``, ``!pick(X)``), a one-element tuple of a number. These
builders are specialised for one and two arguments and resolve only values that can hold
variables (structs, lists, LVars); constants are ground by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime.terms import UNBOUND, LVar, PartialList, Struct, Terms, deref, resolve
from bdi_rl.bdi.runtime.unify import MISSING, Code, Env

ArgsBuild = Callable[[Env], Terms]
"""A literal's arguments built in a frame."""


def _resolving(code: Code) -> Callable[[Env], Any]:
    """``code``'s build, resolved unless it is a constant (ground already)."""
    build = code.build
    if code.const is not MISSING:
        return build

    def value(env: Env) -> Any:
        v = build(env)
        t = type(v)
        if t is Struct or t is tuple or t is LVar or t is PartialList:
            return resolve(v)
        return v

    return value


def args_build(codes: list[Code], resolved: bool) -> ArgsBuild:
    """``env -> tuple`` of the arguments; ``resolved`` replaces bound variables inside them
    (a belief is stored resolved; a goal keeps its LVars so the sub-goal can bind them)."""
    builds = [_resolving(c) if resolved else c.build for c in codes]
    if not builds:
        return lambda env: ()
    if all(c.const is not MISSING for c in codes):
        values = tuple(c.const for c in codes)
        return lambda env: values
    if len(builds) == 1:
        b0 = builds[0]
        return lambda env: (b0(env),)
    if len(builds) == 2:
        b0, b1 = builds
        return lambda env: (b0(env), b1(env))
    return lambda env: tuple([b(env) for b in builds])


def _atomic_value(code: Code) -> Callable[[Env], Any]:
    """The value of an argument when it is a number, string or atom (MISSING otherwise:
    unbound, or a term that may hold variables)."""
    const = code.const
    if const is not MISSING:
        if type(const) is Struct and const.args or type(const) is tuple:
            return lambda env: MISSING
        return lambda env: const
    i = code.slot
    if i < 0:
        return lambda env: MISSING

    def value(env: Env) -> Any:
        v = env[i]
        if type(v) is LVar:
            v = deref(v)
        if v is UNBOUND or type(v) is LVar or type(v) is tuple or type(v) is Struct and v.args:
            return MISSING
        return v

    return value


def atomic_args(codes: list[Code]) -> Callable[[Env], Terms | None]:
    """``env -> tuple`` when every argument is a number, string or atom (one dict lookup
    finds the belief), else None (the caller matches by unification)."""
    values = [_atomic_value(c) for c in codes]
    if len(values) == 1:
        v0 = values[0]

        def one(env: Env) -> Terms | None:
            v = v0(env)
            return None if v is MISSING else (v,)

        return one

    def many(env: Env) -> Terms | None:
        out = tuple([v(env) for v in values])
        return None if MISSING in out else out

    return many
