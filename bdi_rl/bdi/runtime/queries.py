"""Queries: formulas compiled to closures (contexts, tests, conditions, rule bodies).

A **query** has two entry points: ``first(ag, env, trail)`` finds one solution and keeps
its bindings (plan contexts, ``if``/``while`` tests, body formulas) or returns False with
nothing bound; ``solve(ag, env, trail)`` is a generator over all solutions (conjunctions,
``for``, ``.findall``, rules): while suspended at a ``yield`` its bindings hold, and it
undoes them before the next solution. Only the last conjunct of a ``first`` is asked for
``first``, so the common context ``state(S)`` is one loop, not a generator. A rule
(:class:`CompiledRule`) is a head and a query; :func:`solve_rules` solves a call with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any, Protocol, TypeAlias

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.beliefs import Group
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.instructions import Placed
from bdi_rl.bdi.runtime.listener import Recording
from bdi_rl.bdi.runtime.relations import RELATIONAL, relational
from bdi_rl.bdi.runtime.terms import (
    ANNOTS_SELF,
    UNBOUND,
    Annots,
    Struct,
    Terms,
    Trail,
    deref,
    resolve,
    term_str,
    undo,
    unify,
    unify_annots,
)
from bdi_rl.bdi.runtime.unify import MISSING, Code, Env, TailCode, TermCompiler, solve_annots

First: TypeAlias = Callable[[Any, Env, Trail], bool]
"""``first(ag, env, trail)``: one solution, its bindings kept (the agent is ``Any``: its
class sits above this module, see instructions.Instruction)."""
Solve: TypeAlias = Callable[[Any, Env, Trail], Iterator[object]]
"""``solve(ag, env, trail)``: every solution, one per step, bound while suspended."""
ActionCell: TypeAlias = list[Callable[..., Any]]
"""A one-item box around a host action (any Python function): the listener swaps what it
holds, and the compiled calls read it."""


class Query:
    """A compiled logical formula (see the module docstring)."""

    __slots__ = ("first", "solve", "then", "body", "failure")

    def __init__(
        self,
        first: First,
        solve: Solve | None = None,
        body: Placed | None = None,
        failure: str = "ia_failed",
        then: Callable[[First], First] | None = None,
    ) -> None:
        self.first = first
        self.then = (
            then if then is not None else (_then_from_first(first) if solve is None else _then_from_solve(solve))
        )
        """``then(k)``: a ``first`` that tries ``k`` on each solution of this formula in
        turn; a conjunction's ``first`` is ``left.then(right.first)``, one loop without a
        generator when the left side is a literal (compiled once, not per call)"""
        self.solve = solve if solve is not None else _solve_from_first(first)
        self.body = body
        """for a body statement with its own control (``.wait``, a synchronous ``.send``):
        ``body(pc, next_pc) -> instruction``"""
        self.failure = failure
        """the error kind when this formula fails as a body statement"""


def _solve_from_first(first: First) -> Solve:
    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        mark = len(trail)
        if first(ag, env, trail):
            yield True
            undo(trail, mark)

    return solve


def _then_from_first(first: First) -> Callable[[First], First]:
    def then(k: First) -> First:
        def first_k(ag: Any, env: Env, trail: Trail) -> bool:
            mark = len(trail)
            if first(ag, env, trail):
                if k(ag, env, trail):
                    return True
                undo(trail, mark)
            return False

        return first_k

    return then


def _then_from_solve(solve: Solve) -> Callable[[First], First]:
    def then(k: First) -> First:
        def first_k(ag: Any, env: Env, trail: Trail) -> bool:
            for _ in solve(ag, env, trail):
                if k(ag, env, trail):
                    return True
            return False

        return first_k

    return then


def _true_first(ag: Any, env: Env, trail: Any) -> bool:
    return True


def _false_first(ag: Any, env: Env, trail: Any) -> bool:
    return False


TRUE_QUERY = Query(_true_first, failure="constraint_failed")
FALSE_QUERY = Query(_false_first, failure="constraint_failed")


def solve_value(ag: Any, value: Any, trail: Trail) -> Iterator[Struct]:
    """Solutions of a literal given as a runtime value (asks, ``.count`` of a variable):
    yields the matching belief (or the instantiated literal, for a rule, with the rule's
    annotations), in the belief base's order."""
    value = deref(value)
    if type(value) is not Struct:
        raise PlanFailure("wrong_arguments", f"not a literal: {term_str(value)}")
    key = (value.functor, len(value.args))
    group = ag.beliefs.get(key) or {}
    for item in _entries(ag, key, group):
        mark = len(trail)
        if type(item) is tuple:
            bannots = group.get(item)
            if bannots is None:
                continue
            if all(unify(a, b, trail) for a, b in zip(value.args, item, strict=False)):
                if not value.annots or match_value_annots(value.annots, bannots, trail):
                    yield Struct(value.functor, item, bannots)
        elif not value.annots or match_value_annots(value.annots, item.annots, trail):
            for _ in solve_rules(ag, (item,), list(value.args), trail):
                yield Struct(value.functor, resolve(value.args), item.annots)
        undo(trail, mark)


def _entries(ag: Any, key: tuple[str, int], group: Group) -> list[Any]:
    """A predicate's facts (argument tuples) and rules, first answer first."""
    order = ag.beliefs.order.get(key) if ag.beliefs.order else None
    if order is not None:
        return list(order)
    entries: list[Any] = list(reversed(tuple(group)))
    rules = ag.rules.get(key)
    if rules:
        entries += rules
    return entries


def match_value_annots(pattern: Annots, annots: Annots, trail: Trail) -> bool:
    return unify_annots(pattern, annots, trail)


#: Internal actions whose arguments are formulas evaluated in their own time.
_FORMULA_ARGUMENTS = frozenset({".findall", ".setof", ".bagof", ".count", ".forall", ".wait", ".if_then_else"})


def _hoist_counts(node: Any) -> Any:
    """``N = .count(b(_)) + 1`` as ``.count(b(_), C) & N = C + 1``: Jason's ``.count(F)`` is an
    arithmetic function of the agent's beliefs, which a term cannot reach here. None when
    ``node`` has no ``.count(F)`` inside."""
    counts: list[s.Lit] = []

    def walk(n: Any) -> Any:
        if isinstance(n, s.Lit):
            if n.functor == ".count" and len(n.args) == 1:
                var = s.Var(f"count__{id(n)}", n.line)
                counts.append(s.Lit(".count", (n.args[0], var), (), False, n.line))
                return var
            if n.functor in _FORMULA_ARGUMENTS:  # a .count inside is counted there
                return n
            args = tuple(walk(a) for a in n.args)
            return n if args == n.args else replace(n, args=args)
        if isinstance(n, s.BinOp):
            left, right = walk(n.left), walk(n.right)
            return n if left is n.left and right is n.right else replace(n, left=left, right=right)
        if isinstance(n, s.UnOp):
            operand = walk(n.operand)
            return n if operand is n.operand else replace(n, operand=operand)
        if isinstance(n, s.ListExpr):
            items = tuple(walk(a) for a in n.items)
            return n if items == n.items else replace(n, items=items)
        return n

    if isinstance(node, s.Lit) and node.functor in _FORMULA_ARGUMENTS:
        return None
    rewritten = walk(node)
    if not counts:
        return None
    formula: Any = rewritten
    for count in reversed(counts):
        formula = s.BinOp("&", count, formula, count.line)
    return formula


class ActionTable(Protocol):
    """What a compiler needs of an action table (``stdlib.Actions``): the query of a call."""

    def compile_call(self, compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query: ...


class QueryCompiler:
    """Compiles formulas against one agent's action table."""

    def __init__(self, actions: ActionTable, cells: dict[str, ActionCell], recording: Recording | None = None) -> None:
        self.actions = actions
        self.cells = cells
        """per-agent boxes around host actions (the listener wraps them in one place)"""
        self.recording = recording
        """a listener compiled in (listener.Recording): the code compiled records its events"""

    # -- queries ----------------------------------------------------------------------------
    def query(self, node: Any, tc: TermCompiler) -> Query:
        if isinstance(node, (s.Lit, s.BinOp)) and not (isinstance(node, s.BinOp) and node.op in ("&", "|")):
            counted = _hoist_counts(node)
            if counted is not None:  # .count(F) used as a number: count first, then the formula
                return self.query(counted, tc)
        if isinstance(node, s.Lit):
            if node.functor.startswith("."):
                return self.actions.compile_call(self, node, tc)
            if not node.args and not node.annots and not node.negated:
                if node.functor == "true":
                    return TRUE_QUERY
                if node.functor == "false":
                    return FALSE_QUERY
            return self.literal_query(node, tc)
        if isinstance(node, s.BinOp):
            if node.op == "&":
                return self.conj(self.query(node.left, tc), self.query(node.right, tc))
            if node.op == "|":
                return self.disj(self.query(node.left, tc), self.query(node.right, tc))
            if node.op in RELATIONAL:
                return Query(relational(node, tc), failure="constraint_failed")
            raise tc.error(node, f"{node.op!r} is arithmetic, not a formula")
        if isinstance(node, s.UnOp) and node.op == "not":
            return self.negation(self.query(node.operand, tc))
        if isinstance(node, s.Var):
            return self.meta_call(tc.term(node))
        raise tc.error(node, "not a formula")

    def literal_query(self, node: s.Lit, tc: TermCompiler) -> Query:
        key = (node.name, len(node.args))
        args = [tc.term(a) for a in node.args]
        annots = tc.annot_codes(node)
        arity = len(args)
        matches = [c.match for c in args]
        ground = all(c.const is not MISSING for c in args)
        const_args = tuple(c.const for c in args) if ground else None
        const_annots = (
            frozenset(c.const for c in annots)
            if all(c.const is not MISSING and type(c) is not TailCode for c in annots)
            else None
        )
        simple_annots = const_annots is not None
        builds = [c.build for c in args]

        def match_args(bargs: Terms, env: Env, trail: Trail) -> bool:
            for k in range(arity):
                if not matches[k](bargs[k], env, trail):
                    return False
            return True

        if arity == 1:
            m0 = matches[0]

            def match_args(bargs: Terms, env: Env, trail: Trail) -> bool:
                return m0(bargs[0], env, trail)

        def rule_answers(ag: Any, rules: Any, env: Env, trail: Trail) -> Iterator[Any]:
            """A rule answers with its own annotations (``source(self)``), as Jason's do."""
            for rule in rules:
                if annots:
                    for _ in solve_annots(annots, rule.annots, env, trail):
                        yield from solve_rules(ag, (rule,), [b(env) for b in builds], trail)
                else:
                    yield from solve_rules(ag, (rule,), [b(env) for b in builds], trail)

        def in_order(ag: Any, order: list[Any], env: Env, trail: Trail) -> Iterator[Any]:
            """A predicate with rules: its facts and rules in the belief base's order."""
            group = ag.beliefs.groups.get(key) or {}
            for item in tuple(order):
                if type(item) is tuple:
                    bannots = group.get(item)
                    if bannots is None:
                        continue
                    mark = len(trail)
                    if match_args(item, env, trail):
                        if simple_annots:
                            if const_annots <= bannots:
                                yield True
                        else:
                            yield from solve_annots(annots, bannots, env, trail)
                    undo(trail, mark)
                else:
                    yield from rule_answers(ag, (item,), env, trail)

        def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
            bb = ag.beliefs
            if bb.order:
                order = bb.order.get(key)
                if order is not None:
                    yield from in_order(ag, order, env, trail)
                    return
            group = bb.groups.get(key)
            if group:
                if ground:
                    bannots = group.get(const_args)
                    if bannots is not None:
                        if simple_annots:
                            if const_annots <= bannots:
                                yield True
                        else:
                            yield from solve_annots(annots, bannots, env, trail)
                else:
                    for bargs, bannots in reversed(tuple(group.items())):
                        mark = len(trail)
                        if match_args(bargs, env, trail):
                            if simple_annots:
                                if const_annots <= bannots:
                                    yield True
                            else:
                                yield from solve_annots(annots, bannots, env, trail)
                        undo(trail, mark)
            rules = ag.rules.get(key)  # rules kept outside the belief base's order
            if rules:
                yield from rule_answers(ag, rules, env, trail)

        def then(k: First | None) -> First:
            """``first`` trying ``k`` on each belief matched (``k`` None: the first match)."""

            def answering(ag: Any, rule: CompiledRule, env: Env, trail: Trail) -> bool:
                """A rule's answers, each tried with ``k``: as a continuation (no generator)
                unless the literal has annotations or the calls continued are deep already."""
                if annots or continued[0] >= CONTINUED_CALLS:
                    for _ in rule_answers(ag, (rule,), env, trail):
                        if k is None or k(ag, env, trail):
                            return True
                    return False

                def answered(ag: Any, trail: Trail) -> bool:  # a rule's answer: go on here
                    return k is None or k(ag, env, trail)

                return rule.call(ag, [b(env) for b in builds], trail, answered)

            def accepted(ag: Any, bannots: Annots, env: Env, trail: Trail) -> bool:
                """A fact whose arguments matched: its annotations hold and ``k`` goes on."""
                if const_annots is not None:  # simple_annots
                    return const_annots <= bannots and (k is None or k(ag, env, trail))
                for _ in solve_annots(annots, bannots, env, trail):
                    if k is None or k(ag, env, trail):
                        return True
                return False

            def first_in_order(ag: Any, order: list[Any], env: Env, trail: Trail) -> bool:
                """``in_order`` as a ``first`` with ``k``: facts and rules in the belief base's order."""
                group = ag.beliefs.groups.get(key) or {}
                for item in tuple(order):
                    if type(item) is not tuple:
                        if answering(ag, item, env, trail):
                            return True
                        continue
                    bannots = group.get(item)
                    if bannots is None:
                        continue
                    mark = len(trail)
                    if match_args(item, env, trail) and accepted(ag, bannots, env, trail):
                        return True
                    undo(trail, mark)
                return False

            def first_k(ag: Any, env: Env, trail: Trail) -> bool:
                bb = ag.beliefs
                if bb.order and key in bb.order:
                    return first_in_order(ag, bb.order[key], env, trail)
                group = bb.groups.get(key)
                if group:
                    if ground:
                        bannots = group.get(const_args)
                        if bannots is not None and accepted(ag, bannots, env, trail):
                            return True
                    elif simple_annots:
                        if len(group) == 1:  # the usual percept: state(S)
                            [(bargs, bannots)] = group.items()
                            mark = len(trail)
                            if (
                                const_annots <= bannots
                                and match_args(bargs, env, trail)
                                and (k is None or k(ag, env, trail))
                            ):
                                return True
                            undo(trail, mark)
                        else:
                            for bargs, bannots in reversed(tuple(group.items())):
                                if const_annots <= bannots:
                                    mark = len(trail)
                                    if match_args(bargs, env, trail) and (k is None or k(ag, env, trail)):
                                        return True
                                    undo(trail, mark)
                    else:
                        for bargs, bannots in reversed(tuple(group.items())):
                            mark = len(trail)
                            if match_args(bargs, env, trail):
                                for _ in solve_annots(annots, bannots, env, trail):
                                    if k is None or k(ag, env, trail):
                                        return True
                            undo(trail, mark)
                rules = ag.rules.get(key)
                if rules:
                    for rule in rules:
                        if answering(ag, rule, env, trail):
                            return True
                return False

            return first_k

        first = then(None)
        return Query(first, solve, failure="action_failed", then=then)

    def conj(self, left: Query, right: Query) -> Query:
        lsolve, rsolve, rfirst = left.solve, right.solve, right.first

        def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
            for _ in lsolve(ag, env, trail):
                yield from rsolve(ag, env, trail)

        lthen, rthen = left.then, right.then

        def then(k: First) -> First:
            return lthen(rthen(k))

        return Query(lthen(rfirst), solve, failure="constraint_failed", then=then)

    def disj(self, left: Query, right: Query) -> Query:
        def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
            yield from left.solve(ag, env, trail)
            yield from right.solve(ag, env, trail)

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            return left.first(ag, env, trail) or right.first(ag, env, trail)

        return Query(first, solve, failure="constraint_failed")

    def negation(self, inner: Query) -> Query:
        ifirst = inner.first

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            mark = len(trail)
            if ifirst(ag, env, trail):
                undo(trail, mark)
                return False
            return True

        return Query(first, failure="constraint_failed")

    def meta_call(self, code: Code) -> Query:
        """A variable as a formula: the literal it is bound to, queried."""

        def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
            value = deref(code.build(env))
            for found in solve_value(ag, value, trail):
                mark = len(trail)
                if unify(value, found, trail):
                    yield True
                undo(trail, mark)

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            for _ in solve(ag, env, trail):
                return True
            return False

        return Query(first, solve, failure="constraint_failed")


# -- rules: compiled clauses and their backtracking solutions ---------------------------
#: Rule calls made as continuations (:meth:`CompiledRule.call`) nest at most this deep;
#: deeper ones hand their answers back through a generator, so that the caller goes on at
#: its own depth. A continuation runs on top of the call that answered it: all the way down,
#: a proof's Python stack grew with its size, not its depth (``fib(12)`` by a rule hit the
#: recursion limit).
CONTINUED_CALLS = 8
continued = [0]
"""rule calls now running as continuations, one inside the other (one agent reasons at a time)"""

Answered: TypeAlias = Callable[[Any, Trail], bool]
"""What a caller does with a rule's answer (its own ``k`` in its own env): True ends the search."""


def _answered(ag: Any, renv: Env, trail: Trail) -> bool:
    """The last step of a rule body called by :meth:`CompiledRule.call`: the caller's
    continuation, kept in the rule's env past its variables (one env per call, so recursion
    keeps each call's own)."""
    answered: Answered = renv[-1]
    return answered(ag, trail)


class CompiledRule:
    __slots__ = ("head", "body", "size", "file", "line", "annots", "_body_then")

    def __init__(
        self, head: list[Code], body: Query, size: int, file: str, line: int, annots: Annots = ANNOTS_SELF
    ) -> None:
        self.head = head
        self.body = body
        self.size = size
        self.annots = annots
        """the annotations its answers carry: a rule is a belief of the agent's (Jason)"""
        self.file = file
        self.line = line
        self._body_then = body.then(_answered)

    def call(self, ag: Any, values: list[Any], trail: Trail, answered: Answered) -> bool:
        """The rule called with ``values``, each answer handed to ``answered`` in turn until
        it returns True (then True, the bindings kept); False with nothing bound. The body
        runs as a ``first`` with its continuation, no generator per conjunct (a plan
        context's rules, ``leading :- .my_name(Me) & world_agents([Me | _])``, are solved so)."""
        renv: Env = [UNBOUND] * self.size
        renv.append(answered)
        mark = len(trail)
        if values:  # (a rule of no arguments, leading :- ...: nothing to match)
            for code, value in zip(self.head, values):  # noqa: B905 - as many as the call's
                if not code.match(value, renv, trail):
                    undo(trail, mark)
                    return False
        continued[0] += 1
        try:
            if self._body_then(ag, renv, trail):
                return True
        finally:
            continued[0] -= 1
        undo(trail, mark)
        return False


def solve_rules(ag: Any, rules: Iterable[CompiledRule], values: list[Any], trail: Trail) -> Iterator[Any]:
    for rule in rules:
        renv: Env = [UNBOUND] * rule.size
        mark = len(trail)
        ok = True
        for code, value in zip(rule.head, values, strict=False):
            if not code.match(value, renv, trail):
                ok = False
                break
        if ok:
            for _ in rule.body.solve(ag, renv, trail):
                yield True
        undo(trail, mark)
