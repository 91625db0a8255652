"""Relational formulas: ``= \\= == \\== =.. < <= > >=``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.terms import (
    LVar,
    NoValue,
    Struct,
    Terms,
    Trail,
    applied,
    atom,
    compare,
    deref,
    evaluate,
    is_arith_term,
    resolve,
    sorted_annots,
    undo,
    unify,
)
from bdi_rl.bdi.runtime.unify import Env, TermCompiler


def relational(node: s.BinOp, tc: TermCompiler) -> Callable[..., bool]:
    """A relational formula's ``first`` (queries.py makes it a query)."""
    op = node.op
    left, right = tc.term(node.left), tc.term(node.right)
    lb, rb = left.build, right.build
    if op == "=":
        if isinstance(node.right, s.ListExpr) and node.right.tail is not None:
            rm = right.match

            def first(ag: Any, env: Env, trail: Trail) -> bool:
                return rm(lb(env), env, trail)
        else:
            lm = left.match

            def first(ag: Any, env: Env, trail: Trail) -> bool:
                return lm(rb(env), env, trail)
    elif op == "\\=":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            scratch: Trail = []
            ok = unify(lb(env), rb(env), scratch)
            undo(scratch, 0)
            return not ok
    elif op == "==":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a is b or a == b  # Jason: X == X holds for X = NaN (the same term)
            return term_equal(a, b)
    elif op == "\\==":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a is not b and a != b
            return not term_equal(a, b)
    elif op == "=..":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            value = deref(lb(env))
            if type(value) is Struct:
                parts = deref(rb(env))
                listed = univ_list(value)
                if type(parts) is tuple and len(parts) == 3:  # Jason: the list without the namespace
                    listed = listed[1:]
                return unify(listed, parts, trail)
            if type(value) is LVar:
                built = univ_literal(resolve(rb(env)))
                return built is not None and unify(value, built, trail)
            return False  # Jason logs the error; the formula fails (constraint_failed)
    else:
        first = _comparison(op, lb, rb)
    return first


def term_equal(a: Any, b: Any) -> bool:
    """``a == b`` as Jason compares: each side applied (a free variable is itself, even when
    aliased to another), arithmetic with values evaluated."""
    a, b = applied(a), applied(b)
    if type(a) is not LVar:
        a = valued(a)
    if type(b) is not LVar:
        b = valued(b)
    ta, tb = type(a), type(b)
    if (ta is str) != (tb is str):
        return False
    if ta is Struct or tb is Struct or ta is tuple or tb is tuple:
        return ta is tb and a == b
    return bool(a == b)


def valued(value: Any) -> Any:
    """Arithmetic left as a term (``Y + 1`` while ``Y`` was unbound) is its number once its
    operands have values, as Jason evaluates it wherever it is used."""
    value = deref(value)
    if is_arith_term(value):
        try:
            return evaluate(value)
        except NoValue:
            return value
    return value


def univ_list(value: Struct) -> Terms:
    """``f(a,b)[x] =.. L``: Jason 3.2's ``[Namespace, Functor, Args, Annotations]``."""
    functor = value.functor
    negated = functor.startswith("~")
    if negated:
        functor = functor[1:]
    namespace, _, name = functor.rpartition("::")
    return (
        atom(namespace or "default"),
        atom("~" + name if negated else name),
        value.args,
        sorted_annots(value.annots),
    )


def univ_literal(parts: Any) -> Struct | None:
    """The literal of ``[Namespace, Functor, Args, Annotations]`` (or the same without the
    namespace), None when ``parts`` is no such list (Jason: ``[g, 1, 2]`` fails)."""
    if type(parts) is not tuple or len(parts) not in (3, 4):
        return None
    namespace = parts[0] if len(parts) == 4 else None
    functor, args, annots = parts[-3:]
    if type(functor) is str:
        name = functor
    elif type(functor) is Struct and not functor.args:
        name = functor.functor
    else:
        return None
    if type(args) is not tuple or type(annots) is not tuple:
        return None
    negated = name.startswith("~")
    if negated:
        name = name[1:]
    if namespace is not None:
        if type(namespace) is not Struct or namespace.args:
            return None
        if namespace.functor != "default":
            name = f"{namespace.functor}::{name}"
    return Struct("~" + name if negated else name, args, frozenset(annots))


def _comparison(op: str, lb: Callable[[Env], Any], rb: Callable[[Env], Any]) -> Callable[..., bool]:
    """``<``, ``<=``, ``>``, ``>=``: numbers compared inline (one closure per operator, no
    call through a table), other terms by the standard order."""
    test = COMPARE[op]

    def other(a: Any, b: Any) -> bool:
        a, b = valued(a), valued(b)
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):  # Jason compares NaN as 0
            return test((a > b) - (a < b), 0, 1)
        return test(compare(a, b), 0, 1)

    if op == "<":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a < b
            return other(a, b)
    elif op == "<=":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return not a > b  # Jason compares NaN as equal to any number
            return other(a, b)
    elif op == ">":

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a > b
            return other(a, b)
    else:

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return not a < b
            return other(a, b)

    return first


RELATIONAL = {"=", "\\=", "==", "\\==", "<", "<=", ">", ">=", "=.."}
COMPARE: dict[str, Callable[[Any, Any, Any], bool]] = {
    "<": lambda a, b, _: a < b,
    "<=": lambda a, b, _: a <= b,
    ">": lambda a, b, _: a > b,
    ">=": lambda a, b, _: a >= b,
}
