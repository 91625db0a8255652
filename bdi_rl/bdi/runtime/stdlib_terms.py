"""Jason's actions on terms: the type tests ``.atom .literal .structure .number .string
.list .ground`` and ``.type``; copies with fresh variables ``.copy_term .rename_apart``;
``.eval``; annotations ``.add_annot .add_nested_source .remove_source_annot``.

The type tests follow Jason's classes: an atom (``a``) is a literal but no structure;
``f(x)``, ``~a``, ``a[x]`` and lists are structures; a list is no literal; an unbound
variable is none of them (``.type`` says ``free``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import is_free, java_error, standard, value
from bdi_rl.bdi.runtime.terms import FALSE, TRUE, LVar, Struct, Trail, atom, deref, is_ground, resolve, source, undo
from bdi_rl.bdi.runtime.unify import Env, TermCompiler


def is_atom(v: Any) -> bool:
    """Jason's ``isAtom``: no arguments, no annotations, not negated."""
    return type(v) is Struct and not v.args and not v.annots and not v.functor.startswith("~")


def is_literal(v: Any) -> bool:
    return type(v) is Struct


def is_structure(v: Any) -> bool:
    """Jason's ``isStructure``: every compound term and list; an atom (Jason's ``Atom``) is not."""
    return type(v) is tuple or (type(v) is Struct and not is_atom(v))


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


def _test(test: Callable[[Any], bool]) -> Callable[[QueryCompiler, s.Lit, TermCompiler], Query]:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        arg = tc.term(node.args[0]).build
        return Query(lambda ag, env, trail: test(deref(resolve(arg(env)))))

    return compile_


standard(".atom", 1)(_test(is_atom))
standard(".literal", 1)(_test(is_literal))
standard(".structure", 1)(_test(is_structure))
standard(".number", 1)(_test(is_number))
standard(".string", 1)(_test(lambda v: type(v) is str))
standard(".list", 1)(_test(lambda v: type(v) is tuple))
standard(".ground", 1)(_test(is_ground))

#: ``.type``'s answers, in Jason's order (most primitive first), with their tests.
_TYPES: tuple[tuple[Struct, Callable[[Any], bool]], ...] = (
    (atom("number"), is_number),
    (atom("atom"), is_atom),
    (atom("literal"), is_literal),
    (atom("string"), lambda v: type(v) is str),
    (atom("list"), lambda v: type(v) is tuple),
    (atom("structure"), is_structure),
    (atom("ground"), lambda v: type(v) is not LVar and is_ground(v)),
    (atom("free"), lambda v: type(v) is LVar),
)


@standard(".type", 2)
def _type(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.type(X, T)``: T each type X has (number, atom, literal, string, list, structure,
    ground, free), in that order; a bound T is tested."""
    arg = tc.term(node.args[0]).build
    kind = tc.term(node.args[1])

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        v = deref(resolve(arg(env)))
        types = [name for name, test in _TYPES if test(v)]
        if not is_free(kind, env):
            if value(kind, env) in types:
                yield True
            return
        for name in types:
            mark = len(trail)
            if kind.match(name, env, trail):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)


def fresh_copy(v: Any, fresh: dict[int, LVar] | None = None) -> Any:
    """``v`` with every unbound variable replaced by a new one (the same variable by the
    same new one): Jason's ``makeVarsAnnon``."""
    fresh = {} if fresh is None else fresh
    v = deref(v)
    t = type(v)
    if t is LVar:
        found = fresh.get(id(v))
        if found is None:
            found = fresh[id(v)] = LVar("_")
        return found
    if t is Struct:
        if not v.args and not v.annots:
            return v
        return Struct(
            v.functor, tuple(fresh_copy(a, fresh) for a in v.args), frozenset(fresh_copy(a, fresh) for a in v.annots)
        )
    if t is tuple:
        return tuple(fresh_copy(a, fresh) for a in v)
    return v


def _copy(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.copy_term(T, C)``, ``.rename_apart(T, C)``: C is T with fresh variables. (Jason's
    ``copy_term`` never checks its arguments: a number or a string dies of a cast.)"""
    arg = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        v = deref(arg(env))
        if type(v) is not Struct and type(v) is not tuple and type(v) is not LVar:
            raise java_error()  # ClassCastException: Jason casts it to a literal
        return out(fresh_copy(v), env, trail)

    return Query(first)


standard(".copy_term", 2)(_copy)
standard(".rename_apart", 2)(_copy)


@standard(".eval", 2)
def _eval(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.eval(X, Formula)``: X is ``true`` when the formula holds (its bindings not kept),
    else ``false``."""
    out = tc.term(node.args[0]).match
    holds = compiler.query(node.args[1], tc).first

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        mark = len(trail)
        found = holds(ag, env, trail)
        undo(trail, mark)
        return out(TRUE if found else FALSE, env, trail)

    return Query(first)


# -- annotations -------------------------------------------------------------------------------
def _each_literal(v: Any, change: Callable[[Struct], Struct]) -> Any:
    """``change`` applied to a literal, or to each literal of a list (other terms kept)."""
    if type(v) is tuple:
        return tuple(_each_literal(deref(x), change) for x in v)
    if type(v) is Struct:
        return change(v)
    return v


def _transform(change: Callable[[Struct, Any], Struct]) -> Callable[[QueryCompiler, s.Lit, TermCompiler], Query]:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        arg = tc.term(node.args[0]).build
        extra = tc.term(node.args[1]).build
        out = tc.term(node.args[2]).match

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            what = deref(resolve(extra(env)))
            return out(_each_literal(deref(resolve(arg(env))), lambda lit: change(lit, what)), env, trail)

        return Query(first)

    return compile_


def _with_nested_source(lit: Struct, who: Any) -> Struct:
    """``a[source(bob)]`` from jomi: ``a[source(jomi)[source(bob)]]``."""
    sources = frozenset(a for a in lit.annots if type(a) is Struct and a.functor == "source")
    nested = source(who)
    nested = Struct(nested.functor, nested.args, nested.annots | sources)
    return Struct(lit.functor, lit.args, (lit.annots - sources) | {nested})


standard(".add_annot", 3)(_transform(lambda lit, annot: Struct(lit.functor, lit.args, lit.annots | {annot})))
standard(".add_nested_source", 3)(_transform(_with_nested_source))


@standard(".remove_source_annot", 2)
def _remove_source_annot(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    arg = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match

    def no_source(lit: Struct) -> Struct:
        kept = frozenset(a for a in lit.annots if not (type(a) is Struct and a.functor == "source"))
        return Struct(lit.functor, lit.args, kept)

    return Query(lambda ag, env, trail: out(_each_literal(deref(resolve(arg(env))), no_source), env, trail))
