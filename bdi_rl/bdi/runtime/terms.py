"""Runtime terms: plain Python values where possible, so actions and beliefs cost no wrapping.

=============  ===========================================================================
AgentSpeak     Python
=============  ===========================================================================
``3``, ``2.5`` ``int``, ``float`` (a number written without a point stays an int)
``"text"``     ``str``
``[1, 2]``     ``tuple`` (ground lists only; ``[H|T]`` is a pattern, see the compiler)
``f(a)[x]``    :class:`Struct` (atoms are arity-0 structs, interned by :func:`atom`)
``~f(a)``      :class:`Struct` whose functor starts with ``~`` (strong negation)
a variable     a slot of a frame while it lives in a plan (compiler); an :class:`LVar` once
               it escapes into a value (a sub-goal's argument, a rule's query)
=============  ===========================================================================

Unification binds :class:`LVar` cells and records them on a *trail* (a flat list of
``holder, index`` pairs, ``index`` None for an LVar) so a query can undo its bindings.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable


class _Unbound:
    """The value of a frame slot whose variable has no value yet (never inside a term)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNBOUND"


UNBOUND: Any = _Unbound()


class LVar:
    """A logic variable that escaped its frame: ``ref`` is UNBOUND or what it is bound to."""

    __slots__ = ("ref", "name")

    def __init__(self, name: str = "_") -> None:
        self.ref: Any = UNBOUND
        self.name = name

    def __repr__(self) -> str:
        return f"LVar({self.name}={self.ref!r})"


class Struct:
    """``functor(args)[annots]``; ``annots`` is a frozenset (empty for most terms).

    Equality and hash cover functor, args and annotations; beliefs are keyed by their
    argument tuple, so the hash of an atom is computed once (atoms are interned)."""

    __slots__ = ("functor", "args", "annots", "_hash")

    def __init__(self, functor: str, args: tuple = (), annots: frozenset = frozenset()) -> None:
        self.functor = functor
        self.args = args
        self.annots = annots
        self._hash: int | None = None

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self.functor, self.args, self.annots))
        return h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            type(other) is Struct
            and self.functor == other.functor  # type: ignore[union-attr]
            and self.args == other.args
            and self.annots == other.annots
        )  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return term_str(self)

    def with_annots(self, annots: frozenset) -> "Struct":
        return Struct(self.functor, self.args, annots)

    @property
    def key(self) -> tuple[str, int]:
        return self.functor, len(self.args)


_ATOMS: dict[str, Struct] = {}


def atom(name: str) -> Struct:
    """The interned atom ``name``."""
    found = _ATOMS.get(name)
    if found is None:
        found = _ATOMS[name] = Struct(name)
    return found


SELF = atom("self")
PERCEPT = atom("percept")
TRUE = atom("true")
FALSE = atom("false")


def source(who: Any) -> Struct:
    """``source(who)``; the two common ones are shared."""
    if who is SELF:
        return SOURCE_SELF
    if who is PERCEPT:
        return SOURCE_PERCEPT
    return Struct("source", (who,))


SOURCE_SELF = Struct("source", (SELF,))
SOURCE_PERCEPT = Struct("source", (PERCEPT,))
ANNOTS_SELF = frozenset((SOURCE_SELF,))
ANNOTS_PERCEPT = frozenset((SOURCE_PERCEPT,))


def has_source(annots: Iterable[Any]) -> bool:
    return any(type(a) is Struct and a.functor == "source" and len(a.args) == 1 for a in annots)


def sources(annots: Iterable[Any]) -> list[Any]:
    return [a.args[0] for a in annots if type(a) is Struct and a.functor == "source" and len(a.args) == 1]


# -- variables ----------------------------------------------------------------------------
def deref(value: Any) -> Any:
    """Follow bound LVars; returns a value, or the last (unbound) LVar of the chain."""
    while type(value) is LVar:
        ref = value.ref
        if ref is UNBOUND:
            return value
        value = ref
    return value


def resolve(value: Any) -> Any:
    """``value`` with every bound LVar inside replaced by its value (the same object when
    there is none: the common case, a number, string or ground struct, costs one check)."""
    kind = type(value)
    if kind is LVar:
        value = deref(value)
        kind = type(value)
        if kind is LVar:
            return value
    if kind is Struct:
        args = value.args
        annots = value.annots
        if not args and not annots:
            return value
        new_args = None
        for i, a in enumerate(args):
            t = type(a)
            if t is LVar or t is Struct or t is tuple:
                r = resolve(a)
                if r is not a:
                    if new_args is None:
                        new_args = list(args)
                    new_args[i] = r
        new_annots = annots
        for a in annots:
            if (
                type(a) is not Struct
                or a.args
                and not (len(a.args) == 1 and type(a.args[0]) is Struct and not a.args[0].args)
            ):
                new_annots = frozenset(resolve(x) for x in annots)
                if new_annots == annots:
                    new_annots = annots
                break
        if new_args is None and new_annots is annots:
            return value
        return Struct(value.functor, tuple(new_args) if new_args is not None else args, new_annots)
    if kind is tuple:
        new = None
        for i, a in enumerate(value):
            t = type(a)
            if t is LVar or t is Struct or t is tuple:
                r = resolve(a)
                if r is not a:
                    if new is None:
                        new = list(value)
                    new[i] = r
        return value if new is None else tuple(new)
    return value


def is_ground(value: Any) -> bool:
    value = deref(value)
    kind = type(value)
    if kind is LVar:
        return False
    if kind is Struct:
        return all(is_ground(a) for a in value.args) and all(is_ground(a) for a in value.annots)
    if kind is tuple:
        return all(is_ground(a) for a in value)
    return True


def bind(var: LVar, value: Any, trail: list | None) -> None:
    var.ref = value
    if trail is not None:
        trail.append(var)
        trail.append(None)


def undo(trail: list, mark: int) -> None:
    """Undo the bindings recorded on ``trail`` since ``mark``."""
    while len(trail) > mark:
        index = trail.pop()
        holder = trail.pop()
        if index is None:
            holder.ref = UNBOUND
        else:
            holder[index] = UNBOUND


def unify(a: Any, b: Any, trail: list | None) -> bool:
    """Unify two runtime values, binding LVars (recorded on ``trail``). Annotations follow
    Jason: those of ``a`` must be a subset of those of ``b``."""
    if a is b:
        return True
    ta = type(a)
    if ta is LVar:
        a = deref(a)
        ta = type(a)
    tb = type(b)
    if tb is LVar:
        b = deref(b)
        tb = type(b)
    if ta is LVar:
        if a is not b:
            bind(a, b, trail)
        return True
    if tb is LVar:
        bind(b, a, trail)
        return True
    if ta is Struct:
        if tb is not Struct or a.functor != b.functor or len(a.args) != len(b.args):
            return False
        for x, y in zip(a.args, b.args, strict=False):
            if not unify(x, y, trail):
                return False
        if a.annots:
            return unify_annots(a.annots, b.annots, trail)
        return True
    if ta is tuple:
        if tb is not tuple or len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=False):
            if not unify(x, y, trail):
                return False
        return True
    if tb is Struct or tb is tuple:
        return False
    if ta is str or tb is str:
        return ta is tb and a == b
    return bool(a == b)


def ordered(annots: frozenset) -> Iterable[Any]:
    """``annots`` in a fixed order (the first that unifies wins: Jason keeps them sorted, by
    functor first; their text orders them so)."""
    return annots if len(annots) < 2 else sorted(annots, key=term_str)


def unify_annots(pattern: Iterable[Any], annots: frozenset, trail: list | None) -> bool:
    """Every annotation of ``pattern`` unifies with one of ``annots`` (first way found)."""
    for p in pattern:
        if p in annots:
            continue
        for candidate in ordered(annots):
            mark = len(trail) if trail is not None else 0
            if unify(p, candidate, trail):
                break
            if trail is not None:
                undo(trail, mark)
        else:
            return False
    return True


# -- text ---------------------------------------------------------------------------------
_ATOM_RE = re.compile(r"[a-z][A-Za-z0-9_]*")


def number_str(value: int | float) -> str:
    if type(value) is float:
        if value.is_integer() and math.isfinite(value) and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    return str(value)


def string_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def term_str(value: Any) -> str:
    """``value`` as AgentSpeak source (strings quoted; numbers as Jason prints them)."""
    kind = type(value)
    if kind is LVar:
        value = deref(value)
        if type(value) is LVar:
            return f"_{value.name}{id(value) % 10000}"
        kind = type(value)
    if kind is Struct:
        text = value.functor
        if value.args:
            text += "(" + ",".join(term_str(a) for a in value.args) + ")"
        if value.annots:
            text += "[" + ",".join(sorted(term_str(a) for a in value.annots)) + "]"
        return text
    if kind is tuple:
        return "[" + ",".join(term_str(a) for a in value) + "]"
    if kind is str:
        return string_literal(value)
    if kind is int or kind is float:
        return number_str(value)
    if value is UNBOUND:
        return "_"
    return repr(value)


def print_str(value: Any) -> str:
    """``value`` as ``.print`` shows it: strings bare, everything else as source."""
    value = deref(value)
    if type(value) is str:
        return value
    return term_str(value)


_RANK = {int: 0, float: 0, Struct: 2, str: 1, tuple: 3}


def order_key(value: Any) -> tuple:
    """A total order on ground terms: numbers < strings < structs < lists (Jason's order
    differs in detail; see docs/AGENTSPEAK.md)."""
    value = deref(value)
    kind = type(value)
    rank = _RANK.get(kind, 4)
    if rank == 0:
        return (0, value)
    if kind is str:
        return (1, value)
    if kind is Struct:
        return (2, len(value.args), value.functor, tuple(order_key(a) for a in value.args))
    if kind is tuple:
        return (3, tuple(order_key(a) for a in value))
    return (4, repr(value))


def compare(a: Any, b: Any) -> int:
    a, b = deref(a), deref(b)
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return (a > b) - (a < b)
    ka, kb = order_key(a), order_key(b)
    return (ka > kb) - (ka < kb)


def plain(value: Any) -> Any:
    """``value`` for a Python host: resolved (LVars replaced by values)."""
    return resolve(value)


def from_python(value: Any) -> Any:
    """A Python value as a term: lists become tuples, bools atoms; terms stay."""
    kind = type(value)
    if kind is bool:
        return TRUE if value else FALSE
    if kind is list or kind is tuple:
        return tuple(from_python(v) for v in value)
    return value
