"""Jason's actions on the belief base: queries (``.findall .setof .count .belief``) and
changes (``.abolish .asserta .assertz``).

``.belief`` answers from beliefs only, never rules. ``.abolish`` removes every matching
belief whole (all its sources) and each removal raises its ``-b`` event, as a change
from outside the plan (Jason's ``delBel`` with no intention); ``.asserta``/``.assertz`` add
as ``+b``/``+>b`` (``.asserta`` adds ``source(self)`` when the literal names no source).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import java_error, standard, wrong_argument
from bdi_rl.bdi.runtime.stdlib_lists import sorted_set
from bdi_rl.bdi.runtime.terms import (
    ANNOTS_SELF,
    LVar,
    Struct,
    Trail,
    deref,
    has_source,
    is_ground,
    resolve,
    undo,
    unify,
)
from bdi_rl.bdi.runtime.unify import Env, TermCompiler


def _each_solution(query: Query, value: Callable[[Env], Any]) -> Callable[[Any, Env, Trail], list[Any]]:
    """A function giving ``value(env)`` at each solution of ``query``, in order, its
    bindings undone after. The solutions come as continuations (``Query.then``), not one
    generator step each."""
    gathering: list[list[Any]] = []  # one list per call under way (a rule may call it again)

    def gather(ag: Any, env: Env, trail: Trail) -> bool:
        gathering[-1].append(value(env))
        return False  # and on to the next solution

    each = query.then(gather)

    def found(ag: Any, env: Env, trail: Trail) -> list[Any]:
        mark = len(trail)
        gathering.append([])
        try:
            each(ag, env, trail)
        finally:
            answers = gathering.pop()
        undo(trail, mark)
        return answers

    return found


def _collect(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> tuple[Any, Any]:
    template = tc.term(node.args[0]).build
    found = _each_solution(compiler.query(node.args[1], tc), lambda env: resolve(template(env)))
    return found, tc.term(node.args[2]).match


@standard(".findall", 3)
def _findall(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.findall(T, Formula, L)``: T for each solution, in order."""
    found, out = _collect(compiler, node, tc)
    return Query(lambda ag, env, trail: out(tuple(found(ag, env, trail)), env, trail))


@standard(".setof", 3)
def _setof(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.setof(T, Formula, L)``: as ``.findall``, sorted in the standard order, without
    duplicates (Jason's ``TreeSet``)."""
    found, out = _collect(compiler, node, tc)
    return Query(lambda ag, env, trail: out(sorted_set(found(ag, env, trail)), env, trail))


@standard(".count", 2)
def _count(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.count(Formula, N)``: its number of solutions."""
    found = _each_solution(compiler.query(node.args[0], tc), lambda env: None)
    out = tc.term(node.args[1]).match
    return Query(lambda ag, env, trail: out(len(found(ag, env, trail)), env, trail))


def matching_beliefs(ag: Any, pattern: Any) -> list[Struct]:
    """The beliefs (no rules) ``pattern`` unifies with, in the order queries see them
    (newest first in each functor/arity; a free pattern: every belief)."""
    if type(pattern) is LVar:
        groups = [((functor, arity), group) for (functor, arity), group in ag.beliefs.groups.items()]
    else:
        group = ag.beliefs.groups.get((pattern.functor, len(pattern.args)))
        groups = [((pattern.functor, len(pattern.args)), group)] if group else []
    found = []
    trail: Trail = []
    for (functor, _), group in groups:
        for args, annots in reversed(tuple(group.items())):
            belief = Struct(functor, args, annots)
            if unify(pattern, belief, trail):
                found.append(belief)
            undo(trail, 0)
    return found


@standard(".belief", 1)
def _belief(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.belief(B)``: each belief B unifies with (rules are not asked)."""
    code = tc.term(node.args[0])

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        pattern = deref(resolve(code.build(env)))
        if type(pattern) is not Struct and type(pattern) is not LVar:
            raise java_error()  # ClassCastException: Jason casts it to a literal
        for belief in matching_beliefs(ag, pattern):
            mark = len(trail)
            if code.match(belief, env, trail):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)


@standard(".abolish", 1)
def _abolish(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.abolish(Pattern)``: every belief the pattern unifies with goes, whole."""
    build = tc.term(node.args[0]).build

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        pattern = deref(resolve(build(env)))
        if type(pattern) is not Struct and type(pattern) is not LVar:
            raise wrong_argument(".abolish", "first argument must be a literal or variable.")
        for belief in matching_beliefs(ag, pattern):
            ag._bb_remove(belief.functor, belief.args, belief.annots)
        return True

    return Query(first)


def _assert(at_end: bool) -> Any:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        build = tc.term(node.args[0]).build

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            belief = deref(resolve(build(env)))
            if type(belief) is not Struct:
                if type(belief) is LVar or not is_ground(belief):
                    raise wrong_argument(
                        ".assertz" if at_end else ".asserta", "first argument must be a ground literal (or rule)."
                    )
                raise java_error()  # ClassCastException: a number or string is no literal
            if not at_end and not has_source(belief.annots):
                belief = Struct(belief.functor, belief.args, belief.annots | ANNOTS_SELF)
            ag.add_belief(belief, at_end=at_end)
            return True

        return Query(first)

    return compile_


standard(".asserta", 1)(_assert(at_end=False))
standard(".assertz", 1)(_assert(at_end=True))
