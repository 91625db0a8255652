"""What every standard internal action is made of: the table they register in
(:data:`STANDARD`, :func:`standard`), how one reads its arguments (:func:`is_free`,
:func:`value`, :func:`bound`, :func:`text_of`) and how it fails as Jason's does
(:func:`wrong_argument`, :func:`action_error`, :func:`java_error`).

``stdlib`` and its siblings (``stdlib_lists``, ``stdlib_strings`` ..., ``planlibrary``,
``management``) import this module and register their actions here; ``stdlib`` imports
them all, so its :class:`~bdi_rl.bdi.runtime.stdlib.Actions` sees the whole table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.body import formula_instr
from bdi_rl.bdi.runtime.errors import AslTypeError, PlanFailure
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.terms import UNBOUND, LVar, PartialList, Trail, deref, resolve, term_str, undo
from bdi_rl.bdi.runtime.unify import MISSING, Code, Env, TermCompiler, read_slot

#: A standard action: compiles its call (the literal's AST) into a query.
Builtin = Callable[["QueryCompiler", s.Lit, TermCompiler], Query]


# -- the standard internal actions --------------------------------------------------------
STANDARD: dict[str, Builtin] = {}


def standard(name: str, *arities: int, context: bool = True) -> Callable[[Builtin], Builtin]:
    """Register a standard action (``arities``: the argument counts it takes, checked at
    load). A body statement runs its ``first`` as compiled (an exception is the plan's
    failure); in a formula the action is wrapped so that an exception makes it false, as
    Jason's ``InternalActionLiteral.logicalConsequence`` does; an action that is not for
    formulas (``context`` False: ``.send``, ``.broadcast``, ``.stopMAS`` ...) is false there
    and does nothing."""

    def register(fn: Builtin) -> Builtin:
        @functools.wraps(fn)
        def checked(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
            if arities and len(node.args) not in arities:
                raise tc.error(node, f"{name} takes {' or '.join(map(str, arities))} argument(s), got {len(node.args)}")
            query = fn(compiler, node, tc)
            if query.body is not None:  # a statement with its own control (.wait, an ask)
                return query
            return in_formula(query, node, context)

        STANDARD[name] = checked
        return checked

    return register


def in_formula(query: Query, node: s.Lit, context: bool = True) -> Query:
    """``query`` whose exceptions make it false, with its statement (``body``) unchanged."""
    statement = formula_instr(query, node)
    if not context:
        return Query(_never, body=statement, failure=query.failure)
    first, solve, then = query.first, query.solve, query.then

    def first_false(ag: Any, env: Env, trail: Trail) -> bool:
        mark = len(trail)
        try:
            return first(ag, env, trail)
        except PlanFailure:
            undo(trail, mark)
            return False

    def solve_false(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        mark = len(trail)
        try:
            yield from solve(ag, env, trail)
        except PlanFailure:
            undo(trail, mark)

    def then_false(k: Callable[..., bool]) -> Callable[..., bool]:
        first_k = then(k)

        def guarded(ag: Any, env: Env, trail: Trail) -> bool:
            mark = len(trail)
            try:
                return first_k(ag, env, trail)
            except PlanFailure:
                undo(trail, mark)
                return False

        return guarded

    return Query(first_false, solve_false, body=statement, failure=query.failure, then=then_false)


def _never(ag: Any, env: Env, trail: Trail) -> bool:
    return False


# -- how an action fails (Jason's exceptions) ----------------------------------------------
def wrong_argument(action: str, reason: str) -> PlanFailure:
    """Jason's ``JasonException.createWrongArgument``: ``error(wrong_arguments)``."""
    return PlanFailure("wrong_arguments", f"Wrong argument for internal action '{action.lstrip('.')}': {reason}")


def action_error(message: str) -> PlanFailure:
    """A ``JasonException`` of an action: ``error(internal_action)`` with its message."""
    return PlanFailure("internal_action", message)


def java_error() -> PlanFailure:
    """Where Jason's action dies of a Java exception (a cast, an index out of a string's
    bounds): Jason logs it and the failure event says ``error(unknown)``, ``error_msg("")``."""
    return PlanFailure("unknown", "")


# -- arguments ------------------------------------------------------------------------------
def is_free(code: Code, env: Env) -> bool:
    """Whether the argument is an unbound variable now (Jason's ``isVar()`` after its
    arguments are applied), without building it."""
    if code.slot >= 0:
        v = read_slot(env, code.slot)
        return v is UNBOUND or type(v) is LVar
    if code.anonymous:
        return True
    if code.const is not MISSING:
        return False
    try:
        return type(deref(code.build(env))) is LVar
    except AslTypeError:  # [H|T] with T bound to no list: not free (the error comes when it is used)
        return False


def value(code: Code, env: Env) -> Any:
    """The argument's value, every bound variable inside replaced (unbound ones are LVars)."""
    return deref(resolve(code.build(env)))


def bound(code: Code, env: Env) -> Any:
    """The argument's value; None when it is a free variable (a list with a free tail,
    ``[x|R]``, is a :class:`PartialList`: a list for Jason's type checks, an output pattern)."""
    if is_free(code, env):
        return None
    return value(code, env)


def text_of(v: Any) -> str:
    """A string's characters, any other term's text (Jason's ``toString()``)."""
    return v if type(v) is str else term_str(v)


def list_value(v: Any) -> Any:
    """``v`` dereferenced, and a list whose tail has been bound since it was built (a rule's
    answer ``[N | L]``, ``L`` bound by its recursion) made whole: what a list action reads.
    A list whose tail is still free stays a :class:`PartialList`."""
    v = deref(v)
    return resolve(v) if type(v) is PartialList else v


def is_list(v: Any) -> bool:
    return type(v) is tuple or type(v) is PartialList
