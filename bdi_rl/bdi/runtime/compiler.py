"""AST -> closures: queries (contexts, tests, conditions, rules) and plan bodies.

A **query** has two entry points: ``first(ag, env, trail)`` finds one solution and keeps
its bindings (plan contexts, ``if``/``while`` tests, body formulas) or returns False with
nothing bound; ``solve(ag, env, trail)`` is a generator over all solutions (conjunctions,
``for``, ``.findall``, rules): while suspended at a ``yield`` its bindings hold, and it
undoes them before the next solution. Only the last conjunct of a ``first`` is asked for
``first``, so the common context ``state(S)`` is one loop, not a generator.

A **plan body** is flat code: a list of instructions ``instr(ag, intention, frame) -> pc``
(the next instruction's index, or a negative signal: a frame was pushed, the intention is
suspended, or it yields its turn). ``if``/``while``/``for`` are jumps; a ``while`` saves
the frame's slots on entry and restores them before each test, as Jason restores the
unifier (bindings made in the body do not leak into the next test).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError, PlanFailure
from bdi_rl.bdi.runtime.literals import args_build, atomic_args
from bdi_rl.bdi.runtime.terms import (
    ANNOTS_SELF,
    FALSE,
    SOURCE_SELF,
    UNBOUND,
    LVar,
    Struct,
    compare,
    deref,
    resolve,
    term_str,
    unify,
    undo,
)
from bdi_rl.bdi.runtime.unify import (
    MISSING,
    Code,
    Env,
    Scope,
    TermCompiler,
    has_source_annot,
    match_annots,
    solve_annots,
)

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.stdlib import Actions

# trigger types: (op, kind) -> index
ADD_BEL, DEL_BEL, ADD_ACH, DEL_ACH, ADD_TEST, DEL_TEST = range(6)
TRIGGER_TYPES = {
    ("+", ""): ADD_BEL,
    ("-", ""): DEL_BEL,
    ("+", "!"): ADD_ACH,
    ("-", "!"): DEL_ACH,
    ("+", "?"): ADD_TEST,
    ("-", "?"): DEL_TEST,
}
TRIGGER_TEXT = {v: op + kind for (op, kind), v in TRIGGER_TYPES.items()}

#: the waiters' key of ``.wait(formula)``: tested at every belief change and goal
WAIT_FORMULA = ("formula",)

# instruction signals
PUSHED = -1  # a frame was pushed on the intention: run its top
SUSPENDED = -2  # the intention waits (.wait, a synchronous ask): it left the running queue
YIELD = -3  # the intention gives up its turn (budget spent); frame.pc says where to resume


class Query:
    """A compiled logical formula (see the module docstring)."""

    __slots__ = ("first", "solve", "then", "body", "failure")

    def __init__(
        self,
        first: Callable[..., bool],
        solve: Callable[..., Iterator[Any]] | None = None,
        body: Callable[..., Any] | None = None,
        failure: str = "ia_failed",
        then: Callable[[Callable[..., bool]], Callable[..., bool]] | None = None,
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


def _solve_from_first(first: Callable[..., bool]) -> Callable[..., Iterator[Any]]:
    def solve(ag: Any, env: Env, trail: list) -> Iterator[Any]:
        mark = len(trail)
        if first(ag, env, trail):
            yield True
            undo(trail, mark)

    return solve


def _then_from_first(first: Callable[..., bool]) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    def then(k: Callable[..., bool]) -> Callable[..., bool]:
        def first_k(ag: Any, env: Env, trail: list) -> bool:
            mark = len(trail)
            if first(ag, env, trail):
                if k(ag, env, trail):
                    return True
                undo(trail, mark)
            return False

        return first_k

    return then


def _then_from_solve(solve: Callable[..., Iterator[Any]]) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    def then(k: Callable[..., bool]) -> Callable[..., bool]:
        def first_k(ag: Any, env: Env, trail: list) -> bool:
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


class CompiledRule:
    __slots__ = ("head", "body", "size", "file", "line")

    def __init__(self, head: list[Code], body: Query, size: int, file: str, line: int) -> None:
        self.head = head
        self.body = body
        self.size = size
        self.file = file
        self.line = line


class CompiledPlan:
    """One plan: its trigger pattern, context query and body code."""

    __slots__ = (
        "ttype",
        "functor",
        "arity",
        "args",
        "annots",
        "context",
        "code",
        "lines",
        "file",
        "line",
        "size",
        "blank",
        "loops",
        "atomic",
        "label",
        "name",
        "text",
        "trigger_text",
        "match_trigger",
    )
    ttype: int
    functor: str
    arity: int
    args: list[Code]
    annots: list[Code]
    context: Query | None
    code: list[Callable[..., int]]
    lines: list[int]
    file: str
    line: int
    size: int
    blank: list
    loops: int
    atomic: bool
    label: Struct | None
    name: str
    text: str
    trigger_text: str
    match_trigger: Callable[[Struct, Env, list], bool]

    def __init__(self) -> None:
        self.label = None
        self.atomic = False

    def __repr__(self) -> str:
        return f"<plan {self.name}>"


def solve_rules(ag: Any, rules: list[CompiledRule], values: list[Any], trail: list) -> Iterator[Any]:
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


def solve_value(ag: Any, value: Any, trail: list) -> Iterator[Struct]:
    """Solutions of a literal given as a runtime value (asks, ``.count`` of a variable):
    yields the matching belief (or the instantiated literal, for a rule)."""
    value = deref(value)
    if type(value) is not Struct:
        raise PlanFailure("wrong_arguments", f"not a literal: {term_str(value)}")
    key = (value.functor, len(value.args))
    group = ag.beliefs.get(key)
    if group:
        for bargs, bannots in reversed(tuple(group.items())):
            mark = len(trail)
            if all(unify(a, b, trail) for a, b in zip(value.args, bargs, strict=False)):
                if not value.annots or match_value_annots(value.annots, bannots, trail):
                    yield Struct(value.functor, bargs, bannots)
            undo(trail, mark)
    rules = ag.rules.get(key)
    if rules and not value.annots:
        for _ in solve_rules(ag, rules, list(value.args), trail):
            yield resolve(value)


def match_value_annots(pattern: frozenset, annots: frozenset, trail: list) -> bool:
    from bdi_rl.bdi.runtime.terms import unify_annots

    return unify_annots(pattern, annots, trail)


def term_equal(a: Any, b: Any) -> bool:
    a, b = resolve(a), resolve(b)
    ta, tb = type(a), type(b)
    if (ta is str) != (tb is str):
        return False
    if ta is Struct or tb is Struct or ta is tuple or tb is tuple:
        return ta is tb and a == b
    return bool(a == b)


class Compiler:
    """Compiles one agent's program against its action table."""

    def __init__(self, actions: "Actions", cells: dict[str, list]) -> None:
        self.actions = actions
        self.cells = cells
        """per-agent boxes around host actions (the listener wraps them in one place)"""

    # -- queries ----------------------------------------------------------------------------
    def query(self, node: Any, tc: TermCompiler) -> Query:
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
                return self.relational(node, tc)
            raise tc.error(node, f"{node.op!r} is arithmetic, not a formula")
        if isinstance(node, s.UnOp) and node.op == "not":
            return self.negation(self.query(node.operand, tc))
        if isinstance(node, s.Var):
            return self.meta_call(tc.term(node))
        raise tc.error(node, "not a formula")

    def literal_query(self, node: s.Lit, tc: TermCompiler) -> Query:
        key = (node.name, len(node.args))
        args = [tc.term(a) for a in node.args]
        annots = [tc.term(a) for a in node.annots]
        arity = len(args)
        matches = [c.match for c in args]
        ground = all(c.const is not MISSING for c in args)
        const_args = tuple(c.const for c in args) if ground else None
        const_annots = frozenset(c.const for c in annots) if all(c.const is not MISSING for c in annots) else None
        simple_annots = const_annots is not None
        builds = [c.build for c in args]

        def match_args(bargs: tuple, env: Env, trail: list) -> bool:
            for k in range(arity):
                if not matches[k](bargs[k], env, trail):
                    return False
            return True

        if arity == 1:
            m0 = matches[0]

            def match_args(bargs: tuple, env: Env, trail: list) -> bool:  # noqa: F811 - faster for one
                return m0(bargs[0], env, trail)

        def solve(ag: Any, env: Env, trail: list) -> Iterator[Any]:
            group = ag.beliefs.groups.get(key)
            if group:
                if ground:
                    bannots = group.get(const_args)
                    if bannots is not None:
                        if simple_annots:
                            if const_annots <= bannots:  # type: ignore[operator]
                                yield True
                        else:
                            yield from solve_annots(annots, bannots, env, trail)
                else:
                    for bargs, bannots in reversed(tuple(group.items())):
                        mark = len(trail)
                        if match_args(bargs, env, trail):
                            if simple_annots:
                                if const_annots <= bannots:  # type: ignore[operator]
                                    yield True
                            else:
                                yield from solve_annots(annots, bannots, env, trail)
                        undo(trail, mark)
            if not annots:
                rules = ag.rules.get(key)
                if rules:
                    yield from solve_rules(ag, rules, [b(env) for b in builds], trail)

        def then(k: Callable[..., bool] | None) -> Callable[..., bool]:
            """``first`` trying ``k`` on each belief matched (``k`` None: the first match)."""

            def first_k(ag: Any, env: Env, trail: list) -> bool:
                group = ag.beliefs.groups.get(key)
                if group:
                    if ground:
                        bannots = group.get(const_args)
                        if bannots is not None:
                            if simple_annots:
                                if const_annots <= bannots and (k is None or k(ag, env, trail)):  # type: ignore[operator]
                                    return True
                            else:
                                for _ in solve_annots(annots, bannots, env, trail):
                                    if k is None or k(ag, env, trail):
                                        return True
                    elif simple_annots:
                        if len(group) == 1:  # the usual percept: state(S)
                            [(bargs, bannots)] = group.items()
                            mark = len(trail)
                            if (
                                const_annots <= bannots
                                and match_args(bargs, env, trail)
                                and (  # type: ignore[operator]
                                    k is None or k(ag, env, trail)
                                )
                            ):
                                return True
                            undo(trail, mark)
                        else:
                            for bargs, bannots in reversed(tuple(group.items())):
                                if const_annots <= bannots:  # type: ignore[operator]
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
                if not annots:
                    rules = ag.rules.get(key)
                    if rules:
                        for _ in solve_rules(ag, rules, [b(env) for b in builds], trail):
                            if k is None or k(ag, env, trail):
                                return True
                return False

            return first_k

        first = then(None)
        return Query(first, solve, failure="action_failed", then=then)

    def conj(self, left: Query, right: Query) -> Query:
        lsolve, rsolve, rfirst = left.solve, right.solve, right.first

        def solve(ag: Any, env: Env, trail: list) -> Iterator[Any]:
            for _ in lsolve(ag, env, trail):
                yield from rsolve(ag, env, trail)

        lthen, rthen = left.then, right.then

        def then(k: Callable[..., bool]) -> Callable[..., bool]:
            return lthen(rthen(k))

        return Query(lthen(rfirst), solve, failure="constraint_failed", then=then)

    def disj(self, left: Query, right: Query) -> Query:
        def solve(ag: Any, env: Env, trail: list) -> Iterator[Any]:
            yield from left.solve(ag, env, trail)
            yield from right.solve(ag, env, trail)

        def first(ag: Any, env: Env, trail: list) -> bool:
            return left.first(ag, env, trail) or right.first(ag, env, trail)

        return Query(first, solve, failure="constraint_failed")

    def negation(self, inner: Query) -> Query:
        ifirst = inner.first

        def first(ag: Any, env: Env, trail: list) -> bool:
            mark = len(trail)
            if ifirst(ag, env, trail):
                undo(trail, mark)
                return False
            return True

        return Query(first, failure="constraint_failed")

    def meta_call(self, code: Code) -> Query:
        """A variable as a formula: the literal it is bound to, queried."""

        def solve(ag: Any, env: Env, trail: list) -> Iterator[Any]:
            value = deref(code.build(env))
            for found in solve_value(ag, value, trail):
                mark = len(trail)
                if unify(value, found, trail):
                    yield True
                undo(trail, mark)

        def first(ag: Any, env: Env, trail: list) -> bool:
            for _ in solve(ag, env, trail):
                return True
            return False

        return Query(first, solve, failure="constraint_failed")

    def relational(self, node: s.BinOp, tc: TermCompiler) -> Query:
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
        return Query(first, failure="constraint_failed")

    # -- clauses ----------------------------------------------------------------------------
    def rule(self, rule: s.Rule) -> tuple[tuple[str, int], CompiledRule]:
        scope = Scope()
        tc = TermCompiler(scope, rule.file)
        head = [tc.term(a) for a in rule.head.args]
        body = self.query(rule.body, tc)
        return (rule.head.name, len(rule.head.args)), CompiledRule(head, body, scope.size, rule.file, rule.line)

    def plan(self, plan: s.Plan, index: int) -> CompiledPlan:
        scope = Scope()
        tc = TermCompiler(scope, plan.file)
        trig = plan.trigger
        cp = CompiledPlan()
        cp.ttype = TRIGGER_TYPES[(trig.op, trig.kind)]
        cp.functor = trig.literal.name
        cp.arity = len(trig.literal.args)
        cp.args = [tc.term(a) for a in trig.literal.args]
        cp.annots = [tc.term(a) for a in trig.literal.annots]
        cp.match_trigger = _plan_trigger_matcher(cp.args, cp.annots)
        cp.context = self.query(plan.context, tc) if plan.context is not None else None
        cp.file = plan.file
        cp.line = plan.line
        cp.text = plan.text
        cp.trigger_text = TRIGGER_TEXT[cp.ttype] + _lit_text(trig.literal)
        if plan.label is not None:
            label_code = TermCompiler(Scope(), plan.file).term(plan.label)
            if label_code.const is MISSING:
                raise tc.error(plan.label, "a plan label must be ground")
            cp.label = label_code.const
            cp.name = plan.label.functor
            cp.atomic = any(isinstance(a, s.Lit) and a.functor == "atomic" and not a.args for a in plan.label.annots)
        else:
            cp.name = f"l__{index}"
        body = BodyCompiler(self, tc)
        body.statements(plan.body)
        cp.code, cp.lines, cp.loops = body.finish()
        cp.size = scope.size
        cp.blank = [UNBOUND] * scope.size
        return cp


def _functor_atom(value: Struct) -> Struct:
    from bdi_rl.bdi.runtime.terms import atom

    return atom(value.functor)


def _lit_text(lit: s.Lit) -> str:
    text = lit.name
    if lit.args:
        text += "(" + ",".join(_expr_text(a) for a in lit.args) + ")"
    if lit.annots:
        text += "[" + ",".join(_expr_text(a) for a in lit.annots) + "]"
    return text


def _expr_text(node: Any) -> str:
    if isinstance(node, s.Var):
        return node.name
    if isinstance(node, s.Const):
        return term_str(node.value)
    if isinstance(node, s.Lit):
        return _lit_text(node)
    if isinstance(node, s.ListExpr):
        inner = ",".join(_expr_text(a) for a in node.items)
        if node.tail is not None:
            inner += "|" + _expr_text(node.tail)
        return "[" + inner + "]"
    if isinstance(node, s.BinOp):
        return f"{_expr_text(node.left)} {node.op} {_expr_text(node.right)}"
    if isinstance(node, s.UnOp):
        return f"{node.op} {_expr_text(node.operand)}" if node.op == "not" else f"-{_expr_text(node.operand)}"
    if isinstance(node, s.TriggerExpr):
        return "{" + node.op + node.kind + _lit_text(node.literal) + "}"
    return "?"


def _plan_trigger_matcher(args: list[Code], annots: list[Code]) -> Callable[[Struct, Env, list], bool]:
    """A plan's trigger matcher. The common trigger ``+!pick(X)``, distinct variables and
    no annotations, always matches: its slots are set without the trail, because plan
    selection matches into a fresh copy of the plan's slots and drops it if the plan is
    not applicable (the trail is still needed for bindings of the event's variables)."""
    slots = [c.slot for c in args]
    if annots or any(i < 0 for i in slots) or len(set(slots)) != len(slots):
        return _trigger_matcher(args, annots)
    if not slots:
        return lambda value, env, trail: True
    if len(slots) == 1:
        i0 = slots[0]

        def bind1(value: Struct, env: Env, trail: list) -> bool:
            v = value.args[0]
            env[i0] = deref(v) if type(v) is LVar else v
            return True

        return bind1

    def bind(value: Struct, env: Env, trail: list) -> bool:
        for i, v in zip(slots, value.args, strict=True):
            env[i] = deref(v) if type(v) is LVar else v
        return True

    return bind


def _trigger_matcher(args: list[Code], annots: list[Code]) -> Callable[[Struct, Env, list], bool]:
    arity = len(args)
    matches = [c.match for c in args]
    if arity == 0 and not annots:
        return lambda value, env, trail: True

    def match(value: Struct, env: Env, trail: list) -> bool:
        vargs = value.args
        for k in range(arity):
            if not matches[k](vargs[k], env, trail):
                return False
        if annots:
            return match_annots(annots, value.annots, env, trail)
        return True

    return match


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


def goal_code(tc: TermCompiler, lit: s.Lit) -> Callable[[Env], Struct]:
    """Build function for a goal or belief written in a body: ``source(self)`` is added
    unless the literal names a source (Jason)."""
    code = tc.term(lit)
    if code.const is not MISSING:
        value = code.const
        if not has_source_annot(lit.annots):
            value = Struct(value.functor, value.args, value.annots | ANNOTS_SELF)
        return lambda env: value
    build = code.build
    if has_source_annot(lit.annots):
        return build
    if not lit.annots:  # the usual goal: its Struct built once, with source(self)
        args = args_build([tc.term(a) for a in lit.args], resolved=False)
        name = lit.name
        return lambda env: Struct(name, args(env), ANNOTS_SELF)

    def with_self(env: Env) -> Struct:
        v = build(env)
        return Struct(v.functor, v.args, v.annots | ANNOTS_SELF)

    return with_self


class BodyCompiler:
    """A plan body -> flat code; see the module docstring."""

    def __init__(self, compiler: Compiler, tc: TermCompiler) -> None:
        self.compiler = compiler
        self.tc = tc
        self.items: list[tuple[Callable[[int, dict[int, int]], Callable], int]] = []
        self.labels: dict[int, int] = {}
        self.n_labels = 0
        self.loops = 0

    def label(self) -> int:
        self.n_labels += 1
        return self.n_labels

    def place(self, label: int) -> None:
        self.labels[label] = len(self.items)

    def emit(self, make: Callable[[int, dict[int, int]], Callable], line: int) -> None:
        self.items.append((make, line))

    def finish(self) -> tuple[list[Callable], list[int], int]:
        code = [make(pc, self.labels) for pc, (make, _) in enumerate(self.items)]
        lines = [line for _, line in self.items]
        return code, lines, self.loops

    def statements(self, body: tuple) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: Any) -> None:
        if isinstance(stmt, s.If):
            self.if_(stmt)
        elif isinstance(stmt, s.While):
            self.while_(stmt)
        elif isinstance(stmt, s.For):
            self.for_(stmt)
        else:
            self.simple(stmt)

    def simple(self, stmt: s.Stmt) -> None:
        op, expr, line = stmt.op, stmt.expr, stmt.line
        tc = self.tc
        if op == "expr":
            if isinstance(expr, s.Lit) and expr.functor == "true" and not expr.args:
                return
            if isinstance(expr, s.Lit) and not expr.functor.startswith("."):
                self.env_action(expr, line)
                return
            query = self.compiler.query(expr, tc)
            if query.body is not None:
                self.emit(query.body, line)
                return
            self.emit(_formula_instr(query, expr), line)
            return
        if not isinstance(expr, s.Lit) or expr.functor.startswith("."):
            raise tc.error(expr, f"{op} needs a literal")
        if op in ("!", "!!"):
            build = goal_code(tc, expr)
            if op == "!":

                def make(pc: int, labels: dict) -> Callable:
                    nxt = pc + 1

                    def achieve(ag: Any, it: Any, frame: Any) -> int:
                        frame.pc = nxt
                        return ag.achieve(it, build(frame.env))

                    return achieve
            else:

                def make(pc: int, labels: dict) -> Callable:
                    nxt = pc + 1

                    def achieve_new(ag: Any, it: Any, frame: Any) -> int:
                        ag.post_goal(resolve(build(frame.env)))
                        return nxt

                    return achieve_new

            self.emit(make, line)
        elif op == "?":
            self.test_goal(expr, line)
        elif op == "+" and not expr.annots:
            self.add_belief(expr, line)
        elif op == "+":
            build = goal_code(tc, expr)

            def make(pc: int, labels: dict) -> Callable:
                nxt = pc + 1

                def add_belief(ag: Any, it: Any, frame: Any) -> int:
                    ag.add_belief(build(frame.env))
                    return nxt

                return add_belief

            self.emit(make, line)
        elif op == "+>":
            build = goal_code(tc, expr)

            def make(pc: int, labels: dict) -> Callable:
                nxt = pc + 1

                def add_belief_end(ag: Any, it: Any, frame: Any) -> int:
                    ag.add_belief(build(frame.env), at_end=True)
                    return nxt

                return add_belief_end

            self.emit(make, line)
        elif op == "-":
            self.del_belief(expr, line)
        elif op == "-+":
            build = goal_code(tc, expr)

            def make(pc: int, labels: dict) -> Callable:
                nxt = pc + 1

                def replace_belief(ag: Any, it: Any, frame: Any) -> int:
                    ag.replace_belief(build(frame.env))
                    return nxt

                return replace_belief

            self.emit(make, line)
        else:
            raise tc.error(expr, f"unknown body operator {op}")

    def env_action(self, expr: s.Lit, line: int) -> None:
        code = self.tc.term(expr)
        build = code.build

        def make(pc: int, labels: dict) -> Callable:
            nxt = pc + 1

            def act(ag: Any, it: Any, frame: Any) -> int:
                ag.act(resolve(build(frame.env)))
                return nxt

            return act

        self.emit(make, line)

    def test_goal(self, expr: s.Lit, line: int) -> None:
        query = self.compiler.literal_query(expr, self.tc)
        first = query.first
        build = goal_code(self.tc, expr)
        key = (expr.name, len(expr.args))

        def make(pc: int, labels: dict) -> Callable:
            nxt = pc + 1

            def test(ag: Any, it: Any, frame: Any) -> int:
                if first(ag, frame.env, []):
                    return nxt
                frame.pc = nxt
                return ag.test_goal(it, build(frame.env), key)

            return test

        self.emit(make, line)

    def add_belief(self, expr: s.Lit, line: int) -> None:
        """``+b(args)``: the argument tuple straight into the belief base, ``source(self)``."""
        args = args_build([self.tc.term(a) for a in expr.args], resolved=True)
        name = expr.name

        def make(pc: int, labels: dict) -> Callable:
            nxt = pc + 1

            def add_belief(ag: Any, it: Any, frame: Any) -> int:
                ag._bb_add(name, args(frame.env), ANNOTS_SELF)
                return nxt

            return add_belief

        self.emit(make, line)

    def del_belief(self, expr: s.Lit, line: int) -> None:
        tc = self.tc
        args = [tc.term(a) for a in expr.args]
        annot_nodes = (
            expr.annots if has_source_annot(expr.annots) else expr.annots + (s.Lit("source", (s.Lit("self"),)),)
        )
        annots = [tc.term(a) for a in annot_nodes]
        key = (expr.name, len(expr.args))
        if any(c.const is MISSING for c in annots):

            def make(pc: int, labels: dict) -> Callable:
                nxt = pc + 1

                def remove(ag: Any, it: Any, frame: Any) -> int:
                    ag.remove_matching(key, args, annots, frame.env)
                    return nxt

                return remove

            self.emit(make, line)
            return
        # ground annotations (the usual [source(self)]): -b(X) with X bound is one lookup
        const_annots = frozenset(c.const for c in annots)
        atomic = atomic_args(args)
        name = expr.name

        def make_lookup(pc: int, labels: dict) -> Callable:
            nxt = pc + 1

            def remove(ag: Any, it: Any, frame: Any) -> int:
                env = frame.env
                values = atomic(env)
                if values is None:
                    ag.remove_matching(key, args, annots, env)
                    return nxt
                group = ag.beliefs.groups.get(key)
                if group:
                    bannots = group.get(values)
                    if bannots is not None and const_annots <= bannots:
                        ag._bb_remove(name, values, const_annots)
                return nxt

            return remove

        self.emit(make_lookup, line)

    def if_(self, stmt: s.If) -> None:
        end = self.label()
        for cond, body in stmt.branches:
            query = self.compiler.query(cond, self.tc)
            skip = self.label()
            self.emit(_branch_test(query.first, skip), stmt.line)
            self.statements(body)
            self.emit(_jump(end), stmt.line)
            self.place(skip)
        if stmt.otherwise is not None:
            self.statements(stmt.otherwise)
        self.place(end)

    def while_(self, stmt: s.While) -> None:
        k = self.loops
        self.loops += 1
        query = self.compiler.query(stmt.cond, self.tc)
        end = self.label()
        body = stmt.body
        if (
            len(body) == 1
            and isinstance(body[0], s.Stmt)
            and body[0].op == "!"
            and isinstance(body[0].expr, s.Lit)
            and not body[0].expr.functor.startswith(".")
        ):
            # while (c) { !g }: the shipped loops' shape, one instruction per iteration
            self.emit(_while_goal(k, query.first, goal_code(self.tc, body[0].expr), end), stmt.line)
            self.place(end)
            return
        test = self.label()
        self.emit(_loop_enter(k), stmt.line)
        self.place(test)
        self.emit(_branch_test(query.first, end), stmt.line)
        self.statements(stmt.body)
        self.emit(_loop_back(k, test), stmt.line)
        self.place(end)

    def for_(self, stmt: s.For) -> None:
        k = self.loops
        self.loops += 1
        query = self.compiler.query(stmt.cond, self.tc)
        end = self.label()
        step = self.label()
        self.emit(_for_enter(k, query.solve), stmt.line)
        self.place(step)
        self.emit(_for_next(k, end), stmt.line)
        self.statements(stmt.body)
        self.emit(_jump_back(step), stmt.line)
        self.place(end)


def _formula_instr(query: Query, expr: Any) -> Callable:
    first = query.first
    kind = query.failure
    text = _expr_text(expr)

    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1

        def formula(ag: Any, it: Any, frame: Any) -> int:
            if first(ag, frame.env, []):
                return nxt
            raise PlanFailure(kind, f"{text} failed")

        return formula

    return make


def _branch_test(first: Callable, otherwise: int) -> Callable:
    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1
        target = labels[otherwise]

        def branch(ag: Any, it: Any, frame: Any) -> int:
            if first(ag, frame.env, []):
                return nxt
            return target

        return branch

    return make


def _jump(label: int) -> Callable:
    def make(pc: int, labels: dict) -> Callable:
        target = labels[label]
        return lambda ag, it, frame: target

    return make


def _while_goal(k: int, test: Callable, goal: Callable, end_label: int) -> Callable:
    """``while (c) { !g }`` fused: test, then push ``g``'s plan and resume here when it
    ends (restoring the slots saved on entry, as ``_loop_back`` does). ``frame.saved[k]``
    is None outside the loop, the slots at its start inside it. Three instructions fewer
    per iteration than enter/test/achieve/back."""

    def make(pc: int, labels: dict) -> Callable:
        end = labels[end_label]

        def loop(ag: Any, it: Any, frame: Any) -> int:
            env = frame.env
            saved = frame.saved
            start = saved[k]
            if start is None:
                saved[k] = env[:]
            else:
                env[:] = start
            if test(ag, env, []):
                frame.pc = pc
                return ag.achieve(it, goal(env))  # PUSHED: _run spends the budget
            saved[k] = None
            return end

        return loop

    return make


def _loop_enter(k: int) -> Callable:
    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1

        def enter(ag: Any, it: Any, frame: Any) -> int:
            frame.saved[k] = frame.env[:]
            return nxt

        return enter

    return make


def _loop_back(k: int, test_label: int) -> Callable:
    """End of a ``while`` body: restore the slots saved on entry, then test again (or give
    the turn away when the intention's budget is spent)."""

    def make(pc: int, labels: dict) -> Callable:
        test = labels[test_label]

        def back(ag: Any, it: Any, frame: Any) -> int:
            frame.env[:] = frame.saved[k]
            ag.budget -= 1
            if ag.budget <= 0:
                frame.pc = test
                return YIELD
            return test

        return back

    return make


def _jump_back(label: int) -> Callable:
    def make(pc: int, labels: dict) -> Callable:
        target = labels[label]

        def back(ag: Any, it: Any, frame: Any) -> int:
            ag.budget -= 1
            if ag.budget <= 0:
                frame.pc = target
                return YIELD
            return target

        return back

    return make


def _for_enter(k: int, solve: Callable) -> Callable:
    """Start of a ``for``: every solution, computed now (later belief changes do not change
    the iterations), each as a copy of the slots."""

    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1

        def enter(ag: Any, it: Any, frame: Any) -> int:
            env = frame.env
            trail: list = []
            solutions = [[resolve(v) if type(v) is LVar else v for v in env] for _ in solve(ag, env, trail)]
            frame.saved[k] = (env[:], iter(solutions))
            return nxt

        return enter

    return make


def _for_next(k: int, end_label: int) -> Callable:
    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1
        end = labels[end_label]

        def step(ag: Any, it: Any, frame: Any) -> int:
            original, solutions = frame.saved[k]
            solution = next(solutions, None)
            if solution is None:
                frame.env[:] = original
                return end
            frame.env[:] = solution
            return nxt

        return step

    return make


__all__ = [
    "Compiler",
    "CompiledPlan",
    "CompiledRule",
    "Query",
    "PUSHED",
    "SUSPENDED",
    "YIELD",
    "ADD_BEL",
    "DEL_BEL",
    "ADD_ACH",
    "DEL_ACH",
    "ADD_TEST",
    "DEL_TEST",
    "WAIT_FORMULA",
    "solve_value",
    "term_equal",
    "FALSE",
    "SOURCE_SELF",
    "AslSyntaxError",
]
