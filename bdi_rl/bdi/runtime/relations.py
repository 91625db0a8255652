"""Relational formulas: ``= \\= == \\== =.. < <= > >=``."""

from __future__ import annotations

from typing import Any, Callable

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.terms import Struct, atom, compare, deref, resolve, unify, undo
from bdi_rl.bdi.runtime.unify import Env, TermCompiler


def relational(node: s.BinOp, tc: TermCompiler) -> Callable[..., bool]:
    """A relational formula's ``first`` (queries.py makes it a query)."""
    op = node.op
    left, right = tc.term(node.left), tc.term(node.right)
    lb, rb = left.build, right.build
    if op == "=":
        if isinstance(node.right, s.ListExpr) and node.right.tail is not None:
            rm = right.match

            def first(ag: Any, env: Env, trail: list) -> bool:
                return rm(lb(env), env, trail)
        else:
            lm = left.match

            def first(ag: Any, env: Env, trail: list) -> bool:
                return lm(rb(env), env, trail)
    elif op == "\\=":

        def first(ag: Any, env: Env, trail: list) -> bool:
            scratch: list = []
            ok = unify(lb(env), rb(env), scratch)
            undo(scratch, 0)
            return not ok
    elif op == "==":

        def first(ag: Any, env: Env, trail: list) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a == b
            return term_equal(a, b)
    elif op == "\\==":

        def first(ag: Any, env: Env, trail: list) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a != b
            return not term_equal(a, b)
    elif op == "=..":

        def first(ag: Any, env: Env, trail: list) -> bool:
            value = deref(lb(env))
            if type(value) is Struct:
                return unify((_functor_atom(value), tuple(value.args), tuple(value.annots)), rb(env), trail)
            parts = deref(rb(env))
            if type(parts) is tuple and len(parts) == 3:
                f, a, n = (deref(p) for p in parts)
                if type(f) is Struct and type(a) is tuple and type(n) is tuple:
                    return unify(value, Struct(f.functor, a, frozenset(n)), trail)
            raise PlanFailure("wrong_arguments", "=.. needs a literal or [functor, args, annots]")
    else:
        first = _comparison(op, lb, rb)
    return first


def term_equal(a: Any, b: Any) -> bool:
    a, b = resolve(a), resolve(b)
    ta, tb = type(a), type(b)
    if (ta is str) != (tb is str):
        return False
    if ta is Struct or tb is Struct or ta is tuple or tb is tuple:
        return ta is tb and a == b
    return bool(a == b)


def _functor_atom(value: Struct) -> Struct:
    return atom(value.functor)


def _comparison(op: str, lb: Callable[[Env], Any], rb: Callable[[Env], Any]) -> Callable[..., bool]:
    """``<``, ``<=``, ``>``, ``>=``: numbers compared inline (one closure per operator, no
    call through a table), other terms by the standard order."""
    test = COMPARE[op]

    def other(a: Any, b: Any) -> bool:
        return test(compare(a, b), 0, 1)

    if op == "<":

        def first(ag: Any, env: Env, trail: list) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a < b
            return other(a, b)
    elif op == "<=":

        def first(ag: Any, env: Env, trail: list) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a <= b
            return other(a, b)
    elif op == ">":

        def first(ag: Any, env: Env, trail: list) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a > b
            return other(a, b)
    else:

        def first(ag: Any, env: Env, trail: list) -> bool:
            a, b = lb(env), rb(env)
            ta, tb = type(a), type(b)
            if (ta is int or ta is float) and (tb is int or tb is float):
                return a >= b
            return other(a, b)

    return first


RELATIONAL = {"=", "\\=", "==", "\\==", "<", "<=", ">", ">=", "=.."}
COMPARE: dict[str, Callable[[Any, Any, Any], bool]] = {
    "<": lambda a, b, _: a < b,
    "<=": lambda a, b, _: a <= b,
    ">": lambda a, b, _: a > b,
    ">=": lambda a, b, _: a >= b,
}
