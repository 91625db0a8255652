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
``holder, index`` pairs, ``index`` None for an LVar) so a query can undo its bindings. Arithmetic left as a term
(``(Y+1)`` while ``Y`` is unbound) is evaluated here (:func:`evaluate`, with ``arith``'s
operators), since a term prints, and so orders, by its value once it has one.

Kept whole past 500 lines: resolve, unify, compare and term_str each inline every kind of
term in one function (a call per kind costs the step loop, BENCHMARKS.md), and they are the
one definition of what a term is; a split would put the kinds' cases in two places.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import Any, TypeAlias

from bdi_rl.bdi.runtime.arith import NAN, OPERATORS

Term: TypeAlias = Any
"""A runtime term: ``int``, ``float``, ``str``, a tuple of terms, :class:`Struct`,
:class:`LVar`, :class:`PartialList` (or a host's own value). ``Any`` on purpose: the hot
paths dispatch on ``type(x) is ...`` kept in a local, which mypy cannot narrow, so a union
would need a cast or an isinstance check in every one of them."""
Terms: TypeAlias = tuple[Term, ...]
"""A struct's arguments, a ground list, a plan's bound values."""
Annots: TypeAlias = frozenset[Term]
"""A struct's annotations."""
Trail: TypeAlias = list[Any]
"""Bindings to undo, as flat pairs: ``LVar, None`` or ``env, slot`` (an env is a list of
terms); mixed on purpose, one list with no tuple per binding."""


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
        self.ref: Term = UNBOUND
        self.name = name

    def __repr__(self) -> str:
        return f"LVar({self.name}={self.ref!r})"


class PartialList:
    """``[a, b | T]`` with ``T`` unbound: a list whose rest is not known yet (Jason's open
    lists: ``app([H|T], L, [H|R]) :- app(T, L, R)`` builds one). Once ``T`` is bound to a
    list, :func:`resolve` gives the whole list as a tuple."""

    __slots__ = ("items", "tail")

    def __init__(self, items: Terms, tail: LVar) -> None:
        self.items = items
        self.tail = tail

    def __repr__(self) -> str:
        return term_str(self)


class Struct:
    """``functor(args)[annots]``; ``annots`` is a frozenset (empty for most terms).

    Equality and hash cover functor, args and annotations; beliefs are keyed by their
    argument tuple, so the hash of an atom is computed once (atoms are interned)."""

    __slots__ = ("functor", "args", "annots", "_hash")

    def __init__(self, functor: str, args: Terms = (), annots: Annots = frozenset()) -> None:
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
            and self.functor == other.functor
            and self.args == other.args
            and self.annots == other.annots
        )

    def __repr__(self) -> str:
        return term_str(self)

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


def source(who: Term) -> Struct:
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


def has_source(annots: Iterable[Term]) -> bool:
    return any(type(a) is Struct and a.functor == "source" and len(a.args) == 1 for a in annots)


def sources(annots: Annots) -> list[Term]:
    """The sources of ``annots``, in Jason's order (the first is what ``source(S)`` binds)."""
    found = sorted_annots(annots)
    return [a.args[0] for a in found if type(a) is Struct and a.functor == "source" and len(a.args) == 1]


# -- variables ----------------------------------------------------------------------------
def deref(value: Term) -> Term:
    """Follow bound LVars; returns a value, or the last (unbound) LVar of the chain."""
    while type(value) is LVar:
        ref = value.ref
        if ref is UNBOUND:
            return value
        value = ref
    return value


def resolve(value: Term) -> Term:
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
            if t is LVar or t is Struct or t is tuple or t is PartialList:
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
    if kind is PartialList:
        rest = deref(value.tail)
        items = resolve(value.items)
        if type(rest) is LVar:
            return value if items is value.items else PartialList(items, rest)
        rest = resolve(rest)
        if type(rest) is tuple:
            return items + rest
        if type(rest) is PartialList:
            return PartialList(items + rest.items, rest.tail)
        return value
    if kind is tuple:
        new = None
        for i, a in enumerate(value):
            t = type(a)
            if t is LVar or t is Struct or t is tuple or t is PartialList:
                r = resolve(a)
                if r is not a:
                    if new is None:
                        new = list(value)
                    new[i] = r
        return value if new is None else tuple(new)
    return value


def applied(value: Term) -> Term:
    """``value`` as Jason applies its unifier to it (``capply``), which ``==`` and ``\\==``
    compare: a bound variable is its value, but one whose chain of aliases ends free stays
    the variable written (Jason's ``Unifier.get`` finds no value for it). So after ``Y = Z``,
    both free, ``Y == Z`` is false, as in Jason; :func:`resolve` would make both ``Z``."""
    kind = type(value)
    if kind is LVar:
        end = deref(value)
        return value if type(end) is LVar else applied(end)
    if kind is Struct:
        if not value.args and not value.annots:
            return value
        annots = frozenset(applied(a) for a in value.annots) if value.annots else value.annots
        return Struct(value.functor, tuple(applied(a) for a in value.args), annots)
    if kind is tuple:
        return tuple(applied(a) for a in value)
    if kind is PartialList:
        items = applied(value.items)
        if type(deref(value.tail)) is LVar:
            return PartialList(items, value.tail)
        rest = applied(value.tail)
        if type(rest) is tuple:
            return items + rest
        if type(rest) is PartialList:
            return PartialList(items + rest.items, rest.tail)
    return value


def is_ground(value: Term) -> bool:
    value = deref(value)
    kind = type(value)
    if kind is LVar:
        return False
    if kind is Struct:
        return all(is_ground(a) for a in value.args) and all(is_ground(a) for a in value.annots)
    if kind is tuple:
        return all(is_ground(a) for a in value)
    if kind is PartialList:
        return type(resolve(value)) is tuple and is_ground(resolve(value))
    return True


def bind(var: LVar, value: Term, trail: Trail | None) -> None:
    var.ref = value
    if trail is not None:
        trail.append(var)
        trail.append(None)


def undo(trail: Trail, mark: int) -> None:
    """Undo the bindings recorded on ``trail`` since ``mark``."""
    while len(trail) > mark:
        index = trail.pop()
        holder = trail.pop()
        if index is None:
            holder.ref = UNBOUND
        else:
            holder[index] = UNBOUND


def unify(a: Term, b: Term, trail: Trail | None) -> bool:
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
        if tb is PartialList:
            return unify_partial(b, a, trail)
        if tb is not tuple or len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=False):
            if not unify(x, y, trail):
                return False
        return True
    if ta is PartialList:
        return (tb is tuple or tb is PartialList) and unify_partial(a, b, trail)
    if tb is Struct or tb is tuple:
        return False
    if tb is PartialList:
        return False
    if ta is str or tb is str:
        return ta is tb and a == b
    return bool(a == b)


def unify_partial(a: PartialList, b: Term, trail: Trail | None) -> bool:
    """An open list with a list (a tuple) or another open list."""
    if type(b) is PartialList and len(b.items) < len(a.items):
        a, b = b, a
    n = len(a.items)
    items = b.items if type(b) is PartialList else b
    if len(items) < n:
        return False
    for x, y in zip(a.items, items, strict=False):
        if not unify(x, y, trail):
            return False
    if type(b) is PartialList:
        rest: Term = PartialList(b.items[n:], b.tail) if len(b.items) > n else b.tail
    else:
        rest = b[n:]
    return unify(a.tail, rest, trail)


def unify_annots(pattern: Annots, annots: Annots, trail: Trail | None) -> bool:
    """Every annotation of ``pattern`` unifies with one of ``annots``, each with a different
    one, the way Jason finds them (:func:`annots_walk`)."""
    if not pattern:
        return True
    if not annots:
        return False
    if len(pattern) == 1:
        for p in pattern:
            if p in annots:
                return True
            return annots_walk((p,), sorted_annots(annots), trail)
    if pattern <= annots:
        return True
    return annots_walk(sorted_values(pattern), sorted_annots(annots), trail)


def sorted_values(values: Iterable[Term]) -> list[Term]:
    """Pattern annotations in Jason's order as they are bound now, equal ones once."""
    out: list[Term] = []
    for v in sorted(values, key=ORDER_KEY):
        if not out or compare(out[-1], v):
            out.append(v)
    return out


def annots_walk(pattern: Iterable[Term], target: Terms, trail: Trail | None, rest: list[Term] | None = None) -> bool:
    """Jason's ``Pred.hasSubsetAnnot``: both lists sorted, each pattern annotation is looked
    for from where the last one was found (the target walked once, a match used up), back
    from the start for the variables (sorted last); a target annotation greater than the one
    looked for ends its search. No backtracking: ``[source(S)]`` binds the first source.
    ``rest`` (a list) receives the target annotations no pattern annotation took (a tail)."""
    remaining = list(target)
    pos = 0  # the next target annotation the walk reads
    cur = -1  # the target annotation under consideration (-1: none)
    restarted = False
    for annot in pattern:
        if not restarted and type(deref(annot)) is LVar:
            restarted = True
            pos, cur = 0, -1
        found = False
        while True:
            if cur >= 0:
                candidate = remaining[cur]
                mark = len(trail) if trail is not None else 0
                if unify(annot, candidate, trail):
                    found = True
                    del remaining[cur]
                    if cur < len(remaining):
                        pos = cur + 1
                    else:
                        cur, pos = -1, len(remaining)
                    break
                if trail is not None:
                    undo(trail, mark)
                if compare(candidate, annot) > 0:
                    break
            if pos < len(remaining):
                cur = pos
                pos += 1
            else:
                break
        if not found:
            return False
    if rest is not None:
        rest.extend(remaining)
    return True


# -- the standard order of terms -------------------------------------------------------------
def compare(a: Term, b: Term) -> int:
    """Jason's standard order of terms (``Term.compareTo``): -1, 0 or 1. Numbers first (by
    value), then strings, then lists, then atoms and structures (by functor, then positive
    before ``~``, then their arguments left to right, then arity, then annotations), unbound
    variables last (by name). The order of sorted annotations, ``.sort``, ``.max``, ``<``."""
    if type(a) is LVar:
        a = deref(a)
    if type(b) is LVar:
        b = deref(b)
    ta, tb = type(a), type(b)
    if ta is int or ta is float:
        if tb is int or tb is float:
            return 1 if a > b else -1 if a < b else 0
        return -1
    if tb is int or tb is float:
        return 1
    if ta is LVar or a is UNBOUND:
        if tb is LVar or b is UNBOUND:
            na, nb = _var_name(a), _var_name(b)
            return (na > nb) - (na < nb)
        return 1
    if tb is LVar or b is UNBOUND:
        return -1
    if ta is str:
        if tb is str:
            x: str = '"' + a + '"'  # Jason compares them as printed
            y: str = '"' + b + '"'
            return (x > y) - (x < y)
        return _by_text(a, b)
    if tb is str:
        return -_by_text(b, a)
    if ta is tuple:
        if tb is not tuple:
            return -1
        for x, y in zip(a, b, strict=False):
            c = compare(x, y)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    if tb is tuple:
        return 1
    if ta is Struct and tb is Struct:
        fa, fb = a.functor, b.functor
        if fa != fb:
            na, nb = fa.startswith("~"), fb.startswith("~")
            pa, pb = fa[1:] if na else fa, fb[1:] if nb else fb
            if pa != pb:
                return 1 if pa > pb else -1
            return 1 if na else -1
        aa, ba = a.args, b.args
        for x, y in zip(aa, ba, strict=False):
            c = compare(x, y)
            if c:
                return c
        if len(aa) != len(ba):
            return 1 if len(aa) > len(ba) else -1
        if a.annots or b.annots:
            if not a.annots or not b.annots:
                return 1 if a.annots else -1
            xs, ys = sorted_annots(a.annots), sorted_annots(b.annots)
            for x, y in zip(xs, ys, strict=False):
                c = compare(x, y)
                if c:
                    return c
            return (len(xs) > len(ys)) - (len(xs) < len(ys))
        return 0
    return _by_text(a, b)


def _var_name(v: Term) -> str:
    return v.name if type(v) is LVar else "_"


def _by_text(a: Term, b: Term) -> int:
    """Jason's fallback (``DefaultTerm.compareTo``): the printed forms compared."""
    x, y = term_str(a), term_str(b)
    return (x > y) - (x < y)


ORDER_KEY = functools.cmp_to_key(compare)
"""``sorted(values, key=ORDER_KEY)``: the standard order of terms"""

_SORTED: dict[Annots, Terms] = {}
#: Distinct annotation sets whose order is kept; past this the cache starts again.
_SORTED_LIMIT = 4096


def sorted_annots(annots: Annots) -> Terms:
    """``annots`` in Jason's order (it keeps annotations sorted): what unification walks,
    ``.findall`` enumerates and printing shows. Kept per set, so the usual few sets of a run
    are sorted once."""
    if len(annots) < 2:
        return tuple(annots)
    found = _SORTED.get(annots)
    if found is None:
        if len(_SORTED) >= _SORTED_LIMIT:
            _SORTED.clear()
        found = _SORTED[annots] = tuple(sorted(annots, key=ORDER_KEY))
    return found


# -- text ---------------------------------------------------------------------------------
#: Integers printed exactly (a double holds every integer up to this).
_EXACT = 2**53
#: A long's range: Jason prints an integral double inside it without ".0" (Math.round).
_LONG = 2**63


def number_str(value: int | float) -> str:
    """A number as Jason prints it (``NumberTermImpl.toString``: every number is a double):
    an integral value in a long's range without a point (``3``, ``15000000000``), any other
    as Java's ``Double.toString`` (``0.5``, ``1.0E-5``, ``1.23456789E7``, ``1.0E20``,
    ``Infinity``, ``NaN``); integers beyond 2**53 as the double nearest them."""
    if type(value) is int:
        if -_EXACT <= value <= _EXACT:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    elif type(value) is not float:
        value = float(value)
    if value.is_integer():
        if -_LONG <= value < _LONG:
            return str(int(value))
        if value == _LONG:  # Math.round saturates at Long.MAX_VALUE, which reads back as 2**63
            return str(_LONG - 1)
    return java_double_str(value)


def java_double_str(value: float) -> str:
    """Java's ``Double.toString``: plain between 10**-3 and 10**7, else ``d.dddE±n``; the
    shortest digits that read back (Python's repr, which Java 17 also prints for the values
    a program meets)."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        text = repr(value)
        return text if "." in text else text + ".0"
    if magnitude == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if magnitude == 5e-324:  # Double.MIN_VALUE, which Java writes with two digits
        return "-4.9E-324" if value < 0 else "4.9E-324"
    digits, exponent = _digits(repr(magnitude))
    text = digits[0] + "." + (digits[1:] or "0") + "E" + str(exponent)
    return "-" + text if value < 0 else text


def _digits(text: str) -> tuple[str, int]:
    """``repr`` of a positive float -> its significant digits and the power of ten of the
    first: ``'1.5e-10'`` -> ``('15', -10)``, ``'12345678.9'`` -> ``('123456789', 7)``."""
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    exponent = int(exp) if exp else 0
    digits = (whole + frac).lstrip("0")
    lead = len(whole.lstrip("0")) if whole.strip("0") else -(len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    return digits, exponent + lead - 1


def string_literal(text: str) -> str:
    """``text`` as a bdi-rl string literal that reads back exactly (the wire and the trace:
    backslashes, quotes and line breaks escaped; read with ``parse_text(wire=True)``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


#: Operators that Jason prints infix, ``(a & b)``: functor -> the text between the operands.
INFIX = {
    "&": " & ",
    "|": " | ",
    "<": " < ",
    "<=": " <= ",
    ">": " > ",
    ">=": " >= ",
    "==": " == ",
    "\\==": " \\== ",
    "=": " = ",
    "\\=": " \\= ",
    "=..": " =.. ",
    "+": "+",
    "-": "-",
    "*": "*",
    "/": "/",
    "**": "**",
    "div": " div ",
    "mod": " mod ",
}


def term_str(value: Term) -> str:
    """``value`` as Jason prints it inside a term: ``f(a,"s",[1,2])[x,y]`` (annotations in
    Jason's order), strings quoted as they are (no escapes), an unbound variable by its
    name, ``(a & b)``, ``not (a)``, ``(1 < 2)``."""
    kind = type(value)
    if kind is LVar:
        value = deref(value)
        if type(value) is LVar:
            return value.name
        kind = type(value)
    if kind is Struct:
        functor = value.functor
        args = value.args
        if args:
            if len(args) == 2 and functor in INFIX:
                if functor in _ARITH_FUNCTORS:
                    shown = _evaluated(value)
                    if shown is not None:
                        return shown
                text = "(" + term_str(args[0]) + INFIX[functor] + term_str(args[1]) + ")"
            elif len(args) == 1 and functor == "not":
                text = "not (" + term_str(args[0]) + ")"
            elif len(args) == 1 and functor == "-":
                shown = _evaluated(value)
                if shown is not None:
                    return shown
                text = "(-" + term_str(args[0]) + ")"
            else:
                text = functor + "(" + ",".join([term_str(a) for a in args]) + ")"
        else:
            text = functor
        if value.annots:
            text += "[" + ",".join([term_str(a) for a in sorted_annots(value.annots)]) + "]"
        return text
    if kind is tuple:
        return "[" + ",".join([term_str(a) for a in value]) + "]"
    if kind is str:
        return '"' + value + '"'
    if kind is PartialList:
        resolved = resolve(value)
        if type(resolved) is tuple:
            return term_str(resolved)
        return "[" + ",".join([term_str(a) for a in resolved.items]) + "|" + term_str(resolved.tail) + "]"
    if kind is int or kind is float:
        return number_str(value)
    if value is UNBOUND:
        return "_"
    shown = getattr(value, "term_text", None)
    if shown is not None:
        return str(shown())
    return repr(value)


_ARITH_FUNCTORS = frozenset({"+", "-", "*", "/", "**", "div", "mod"})


# -- arithmetic left as a term (``X = Y + 1`` while ``Y`` is unbound) -------------------------
class NoValue(Exception):
    """An operand of arithmetic is unbound: the expression stays a term."""


def num(v: Term) -> Any:
    """An operand's number: itself, the value of an arithmetic term, or NaN (Jason's value
    for what is no number); NoValue when it is unbound."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is LVar:
        v = deref(v)
        t = type(v)
        if t is int or t is float:
            return v
        if t is LVar:
            raise NoValue
    if v is UNBOUND:
        raise NoValue
    if t is Struct and v.functor in OPERATORS:
        return evaluate(v)
    return NAN


def evaluate(term: Struct) -> Any:
    """The number an arithmetic term (``(Y+1)``, ``(-X)``) stands for now; NoValue while an
    operand is unbound."""
    args = term.args
    if len(args) == 2:
        return OPERATORS[term.functor](num(args[0]), num(args[1]))
    if len(args) == 1 and term.functor == "-":
        return -num(args[0])
    return NAN


def is_arith_term(value: Term) -> bool:
    """Whether ``value`` is arithmetic left as a term (printed evaluated once it can be)."""
    return type(value) is Struct and value.functor in OPERATORS and 1 <= len(value.args) <= 2


def _evaluated(value: Struct) -> str | None:
    """An arithmetic term that can be evaluated now, printed as its number (Jason evaluates
    ``(Y+1)`` once ``Y`` has a value); None while an operand is unbound."""
    try:
        return number_str(evaluate(value))
    except NoValue:
        return None


def print_str(value: Term) -> str:
    """``value`` as ``.print`` shows an argument: strings bare, an unbound variable as
    ``X<no-value>``, everything else as :func:`term_str`."""
    value = deref(value)
    kind = type(value)
    if kind is str:
        return value
    if kind is LVar or value is UNBOUND:
        return term_str(value) + "<no-value>"
    return term_str(value)


def plain(value: Term) -> Term:
    """``value`` for a Python host: resolved (LVars replaced by values)."""
    return resolve(value)


def from_python(value: Any) -> Term:
    """A Python value as a term: lists become tuples, bools atoms; terms stay."""
    kind = type(value)
    if kind is bool:
        return TRUE if value else FALSE
    if kind is list or kind is tuple:
        return tuple(from_python(v) for v in value)
    return value
