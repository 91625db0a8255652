"""Jason's list (and set) actions: ``.member .length .empty .nth .concat .delete .reverse
.sort .max .min .shuffle .range .prefix .suffix .sublist .union .intersection .difference``.

Each follows its class in ``jason.stdlib`` (3.2.2): which arguments may be unbound, which
enumerate their solutions when they are (``.member``, ``.nth`` with a free index,
``.range``, ``.prefix``, ``.suffix``, ``.sublist``), and how it fails: false, or Jason's
``wrong_arguments`` / ``internal_action`` error with its message (stdlib.py). Orders and sets
follow the standard order of terms, :func:`~bdi_rl.bdi.runtime.terms.compare` (Jason's
``compareTo``: a ``TreeSet`` keeps the first of equal terms).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import (
    action_error,
    bound,
    is_free,
    is_list,
    java_error,
    list_value,
    standard,
    text_of,
    value,
    wrong_argument,
)
from bdi_rl.bdi.runtime.stdlib_strings import replace_all
from bdi_rl.bdi.runtime.terms import LVar, Struct, Term, Terms, Trail, compare, deref, resolve, term_str, undo, unify
from bdi_rl.bdi.runtime.unify import Env, TermCompiler

_ORDER = functools.cmp_to_key(compare)


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


def java_int(v: Any) -> int:
    """``(int) number.solve()``: a double truncated toward zero."""
    return int(v)


def sorted_set(items: Iterable[Term]) -> Terms:
    """A ``TreeSet`` of ``items`` as a list: sorted by the standard order, the first of equal
    terms kept."""
    out: list[Term] = []
    for item in sorted(items, key=_ORDER):
        if not out or compare(out[-1], item) != 0:
            out.append(item)
    return tuple(out)


def _contains(items: Terms, item: Term) -> bool:
    return any(compare(x, item) == 0 for x in items)


def string_chars(text: str) -> Terms:
    """A string as ``.nth`` sees it: one string per byte of its UTF-8 (Jason's ``getBytes``)."""
    return tuple(bytes([b]).decode("utf-8", errors="replace") for b in text.encode("utf-8"))


# -- membership, length, position ----------------------------------------------------------
@standard(".member", 2)
def _member(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    item = tc.term(node.args[0]).match
    items = tc.term(node.args[1]).build

    def values(env: Env) -> Terms:
        found = list_value(items(env))
        if type(found) is not tuple:
            raise wrong_argument(".member", "second argument must be a list or a set")
        return found

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        for v in values(env):
            mark = len(trail)
            if item(v, env, trail):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for v in values(env):
            mark = len(trail)
            if item(v, env, trail):
                return True
            undo(trail, mark)
        return False

    return Query(first, solve)


def size(v: Any) -> int | None:
    """The length of a list or string (Jason's ``length.getSize``), else None."""
    t = type(v)
    if t is tuple or t is str:
        return len(v)
    return None


@standard(".length", 2)
def _length(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    arg = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match

    def first(ag: Any, env: Env, trail: Any) -> bool:
        n = size(list_value(arg(env)))
        return n is not None and out(n, env, trail)

    return Query(first)


@standard(".empty", 1)
def _empty(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    arg = tc.term(node.args[0]).build
    return Query(lambda ag, env, trail: size(list_value(arg(env))) == 0)


@standard(".nth", 3)
def _nth(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.nth(I, L, X)``: the element at ``I`` (an index out of the list is an error); with
    ``I`` free, every position whose element unifies with ``X``, in order."""
    index_code = tc.term(node.args[0])
    items = tc.term(node.args[1]).build
    out = tc.term(node.args[2]).match

    def parts(env: Env) -> tuple[Term, Terms]:
        i = None if is_free(index_code, env) else value(index_code, env)
        if i is not None and not is_number(i):
            raise wrong_argument(".nth", f"the first argument should be numeric or a variable -- not '{term_str(i)}'.")
        found = deref(resolve(items(env)))
        if type(found) is str:
            found = string_chars(found)
        elif type(found) is not tuple:
            raise wrong_argument(".nth", f"the second argument should be a list or string and not '{term_str(found)}'.")
        return i, found

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        i, found = parts(env)
        if i is not None:
            if first_at(java_int(i), found, env, trail):
                yield True
            return
        for k, element in enumerate(found):
            mark = len(trail)
            if out(element, env, trail) and index_code.match(k, env, trail):
                yield True
            undo(trail, mark)

    def first_at(i: int, found: Terms, env: Env, trail: Trail) -> bool:
        if not 0 <= i < len(found):
            raise action_error(f"nth: index {i} is out of bounds ({len(found)})")
        return out(found[i], env, trail)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        i, found = parts(env)
        if i is not None:
            return first_at(java_int(i), found, env, trail)
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)


# -- building lists ------------------------------------------------------------------------
@standard(".concat")
def _concat(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """Lists when the first argument is a list, else the text of every argument (strings
    bare); the last argument is the result."""
    if len(node.args) < 2:
        raise tc.error(node, ".concat needs its parts and a result")
    parts = [tc.term(a).build for a in node.args[:-1]]
    result = tc.term(node.args[-1])
    out = result.match

    def first(ag: Any, env: Env, trail: Any) -> bool:
        values = [deref(resolve(p(env))) for p in parts]
        if type(values[0]) is tuple:
            last = bound(result, env)
            if last is not None and not is_list(last):
                raise action_error(f"Last argument of concat '{term_str(last)}'is not a list nor a variable.")
            for k, v in enumerate(values[1:], 1):
                if type(v) is not tuple:
                    raise wrong_argument(".concat", f"arg[{k}] is not a list")
            return out(tuple(x for v in values for x in v), env, trail)
        text = "".join(text_of(v) for v in values)
        last = bound(result, env)
        if last is not None:
            if type(last) is not str:  # Jason compares with the term's text
                return text == term_str(last)
        return out(text, env, trail)

    return Query(first)


@standard(".delete", 3, 4)
def _delete(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.delete(X, L, R)``: every element of ``L`` unifying with ``X`` removed (bindings
    carried from one match to the next, as Jason's); a number ``X``, the element at that
    index; ``.delete(From, To, L, R)`` the range; on strings, every match of the pattern
    (Java's ``replaceAll``) or the characters at the index or range."""
    codes = [tc.term(a) for a in node.args]
    out = codes[-1].match

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        args = [value(c, env) for c in codes[:-1]]
        result = _deleted(args)
        return out(result, env, trail)

    return Query(first)


def _deleted(args: list[Term]) -> Term:
    first = args[0]
    if is_number(first):
        start, nxt = java_int(first), 1
        end = start + 1
        if len(args) == 3 and is_number(args[1]):
            end, nxt = java_int(args[1]), 2
        target = args[nxt]
        if type(target) is str:
            if 0 <= start <= len(target) and 0 <= end <= len(target):
                return target[:start] + target[end:]
            return target  # Jason: the string unchanged when an index is out of it
        if type(target) is tuple:
            return tuple(x for k, x in enumerate(target) if k < start or k >= end)
    if type(first) is str:
        target = args[1] if type(args[1]) is str else term_str(args[1])
        return replace_all(target, first, "")
    if type(args[1]) is tuple:
        kept = []
        trail: Trail = []
        for x in args[1]:
            mark = len(trail)
            if not unify(first, x, trail):
                undo(trail, mark)
                kept.append(x)
        undo(trail, 0)
        return tuple(kept)
    raise action_error("Incorrect use of the internal action '.delete' (see documentation).")


@standard(".reverse", 2)
def _reverse(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    arg = tc.term(node.args[0]).build
    result = tc.term(node.args[1])

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        v = deref(resolve(arg(env)))
        last = bound(result, env)
        if type(v) is tuple:
            if last is not None and not is_list(last):
                raise wrong_argument(".reverse", f"last argument '{term_str(last)}' must be a list or a variable.")
            return result.match(v[::-1], env, trail)
        if last is not None and type(last) is not str:
            raise wrong_argument(".reverse", f"last argument '{term_str(last)}' must be a string or a variable.")
        if type(v) is not str:
            raise wrong_argument(".reverse", f"first argument of .reverse '{term_str(v)}' must be a string or a list")
        return result.match(v[::-1], env, trail)

    return Query(first)


def _list_in(action: str) -> Callable[[Term], Terms]:
    def check(v: Term) -> Terms:
        v = list_value(v)
        if type(v) is not tuple:
            raise wrong_argument(action, "first argument must be a list")
        return v

    return check


@standard(".sort", 2)
def _sort(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    items = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match
    check = _list_in(".sort")

    def first(ag: Any, env: Env, trail: Any) -> bool:
        return out(tuple(sorted(check(resolve(items(env))), key=_ORDER)), env, trail)

    return Query(first)


def _extreme(action: str, pick: Callable[..., Any]) -> Callable[[QueryCompiler, s.Lit, TermCompiler], Query]:
    check = _list_in(action)

    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        items = tc.term(node.args[0]).build
        out = tc.term(node.args[1]).match

        def first(ag: Any, env: Env, trail: Any) -> bool:
            values = check(resolve(items(env)))
            if not values:
                return False
            return out(pick(values, key=_ORDER), env, trail)  # the first of equal ones, as Jason

        return Query(first)

    return compile_


standard(".max", 2)(_extreme(".max", max))
standard(".min", 2)(_extreme(".min", min))


@standard(".shuffle", 2)
def _shuffle(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    items = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match
    check = _list_in(".shuffle")

    def first(ag: Any, env: Env, trail: Any) -> bool:
        values = list(check(resolve(items(env))))
        ag.random.shuffle(values)
        return out(tuple(values), env, trail)

    return Query(first)


# -- enumerating ---------------------------------------------------------------------------
@standard(".range", 3, 4)
def _range(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.range(X, Start, End[, Step])``: X from Start to End by Step (1), each a solution;
    a bound X is tested against Start..End."""
    var = tc.term(node.args[0])
    bounds = [tc.term(a).build for a in node.args[1:]]
    names = ("second", "third", "fourth")

    def numbers(env: Env) -> list[int]:
        found = []
        for name, b in zip(names, bounds, strict=False):
            v = deref(resolve(b(env)))
            if not is_number(v):
                raise wrong_argument(".range", f"{name} parameter ('{term_str(v)}') must be a number!")
            found.append(java_int(v))
        return found

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        start, end, *rest = numbers(env)
        step = rest[0] if rest else 1
        if not is_free(var, env):
            x = value(var, env)
            if not is_number(x):
                raise java_error()
            if start <= java_int(x) <= end:
                yield True
            return
        if step == 0 and start >= end:
            raise wrong_argument(".range", "a step of 0 from Start down to End never ends (Jason loops forever)")
        x = start
        while (x <= end) if step > 0 else (x >= end):
            mark = len(trail)
            if var.match(x, env, trail):
                yield True
            undo(trail, mark)
            x += step

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)


def _sequence_action(
    name: str, candidates: Callable[[Any], Iterator[Any]], check_first: Callable[[Any], bool], first_msg: str
) -> Callable[[QueryCompiler, s.Lit, TermCompiler], Query]:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        part = tc.term(node.args[0])
        whole = tc.term(node.args[1]).build

        def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
            given = bound(part, env)
            if given is not None and not check_first(given):
                raise wrong_argument(name, first_msg)
            target = deref(resolve(whole(env)))
            for candidate in candidates(target):
                mark = len(trail)
                if part.match(candidate, env, trail):
                    yield True
                undo(trail, mark)

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            for _ in solve(ag, env, trail):
                return True
            return False

        return Query(first, solve)

    return compile_


def _list_or_string(name: str) -> Callable[[Any], None]:
    def check(target: Any) -> None:
        if type(target) is not tuple and type(target) is not str:
            raise wrong_argument(name, "second argument must be either a list or a string")

    return check


def _prefixes(target: Any) -> Iterator[Any]:
    _list_or_string(".prefix")(target)
    for n in range(len(target), -1, -1):
        yield target[:n]


def _suffixes(target: Any) -> Iterator[Any]:
    _list_or_string(".suffix")(target)
    for n in range(len(target) + 1):
        yield target[n:]


def _sublists(target: Any) -> Iterator[Any]:
    if type(target) is not tuple:
        raise wrong_argument(".sublist", "second argument must be a list")
    for start in range(len(target)):
        for end in range(len(target), start, -1):
            yield target[start:end]
    yield ()


def _list_string_or_var(v: Any) -> bool:
    return is_list(v) or type(v) is str


standard(".prefix", 2)(
    _sequence_action(".prefix", _prefixes, _list_string_or_var, "first argument must be a list, string, or a variable")
)
standard(".suffix", 2)(
    _sequence_action(".suffix", _suffixes, _list_string_or_var, "first argument must be a list, string, or a variable")
)
standard(".sublist", 2)(_sequence_action(".sublist", _sublists, is_list, "first argument must be a list or a variable"))


# -- sets ------------------------------------------------------------------------------------
def _set_action(name: str, combine: Callable[[Terms, Terms], Terms]) -> Callable[..., Query]:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        left = tc.term(node.args[0]).build
        right = tc.term(node.args[1]).build
        result = tc.term(node.args[2])

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = deref(resolve(left(env))), deref(resolve(right(env)))
            if type(a) is not tuple:
                raise wrong_argument(name, f"first argument '{term_str(a)}'is not a list.")
            if type(b) is not tuple:
                raise wrong_argument(name, f"second argument '{term_str(b)}'is not a list.")
            last = bound(result, env)
            if last is not None and not is_list(last):
                raise wrong_argument(name, f"last argument '{term_str(last)}'is not a list nor a variable.")
            return result.match(combine(a, b), env, trail)

        return Query(first)

    return compile_


def _union(a: Terms, b: Terms) -> Terms:
    return sorted_set(b + a)


def _intersection(a: Terms, b: Terms) -> Terms:
    return tuple(x for x in sorted_set(b) if _contains(a, x))


def _difference(a: Terms, b: Terms) -> Terms:
    return tuple(x for x in sorted_set(a) if not _contains(b, x))


standard(".union", 3)(_set_action(".union", _union))
standard(".intersection", 3)(_set_action(".intersection", _intersection))
standard(".difference", 3)(_set_action(".difference", _difference))


__all__ = ["LVar", "Struct", "is_number", "java_int", "size", "sorted_set", "string_chars"]
