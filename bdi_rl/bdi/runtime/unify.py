"""Compiled terms: each AST term becomes a :class:`Code` of closures over frame slots.

A plan's variables are numbered; a frame's bindings are a list (``env``) with one slot per
variable, ``UNBOUND`` until bound. ``build(env)`` makes the runtime value (an unbound slot
becomes an :class:`~bdi_rl.bdi.runtime.terms.LVar`, so a sub-goal or rule can bind it);
``match(value, env, trail)`` unifies the term with a value, recording new slot bindings on
the trail (``env, index``) so queries can backtrack. Ground terms are built once, at
compile time (``const``).

Kept whole past 500 lines: the closures each term compiles to are inlined per case for speed
(bench/bench_runtime.py), and the term, arithmetic and printer compilers share one Scope.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.arith import OPERATORS
from bdi_rl.bdi.runtime.errors import AslSyntaxError, AslTypeError
from bdi_rl.bdi.runtime.functions import FUNCTIONS, is_function
from bdi_rl.bdi.runtime.planterms import PlanTerm, TriggerTerm, plan_variables
from bdi_rl.bdi.runtime.terms import (
    UNBOUND,
    Annots,
    LVar,
    NoValue,
    PartialList,
    Struct,
    Term,
    Trail,
    annots_walk,
    atom,
    bind,
    deref,
    print_str,
    resolve,
    sorted_annots,
    sorted_values,
    term_str,
    undo,
    unify,
)
from bdi_rl.bdi.runtime.terms import (
    num as arith_num,
)

MISSING: Any = object()

Env: TypeAlias = list[Term]
"""A frame's bindings: one slot per variable of its clause, UNBOUND until bound."""
Build: TypeAlias = Callable[[Env], Term]
"""A compiled term's constructor: the runtime value in a frame."""
Match: TypeAlias = Callable[[Term, Env, "Trail | None"], bool]
"""A compiled term's unifier: does a value match it in a frame (new bindings on the trail)."""


class Scope:
    """Variable names -> slot numbers for one clause (plan or rule)."""

    def __init__(self) -> None:
        self.slots: dict[str, int] = {}
        self.size = 0

    def slot(self, name: str) -> int:
        index = self.slots.get(name)
        if index is None:
            index = self.slots[name] = self.size
            self.size += 1
        return index


class Code:
    """A compiled term. ``slot`` is the variable's slot for a plain named variable, else -1;
    ``const`` the value of a ground term, else MISSING."""

    __slots__ = ("build", "match", "const", "slot", "anonymous", "name")

    def __init__(
        self,
        build: Build,
        match: Match,
        const: Term = MISSING,
        slot: int = -1,
        anonymous: bool = False,
        name: str = "_",
    ) -> None:
        self.build = build
        self.match = match
        self.const = const
        self.slot = slot
        self.anonymous = anonymous
        self.name = name
        """a named variable's name (its slot's variable takes it)"""


def const_code(value: Term) -> Code:
    def build(env: Env) -> Term:
        return value

    def match(v: Term, env: Env, trail: Trail | None) -> bool:
        return v is value or unify(value, v, trail)

    return Code(build, match, value)


class TailCode(Code):
    """The last of a literal's annotation patterns when it has a tail, ``R`` in ``b[a|R]``:
    it takes the list of the annotations the others did not."""

    __slots__ = ()


def _anon_code(name: str) -> Code:
    def build(env: Env) -> Term:
        return LVar(name)

    def match(v: Term, env: Env, trail: Trail | None) -> bool:
        return True

    return Code(build, match, anonymous=True)


def slot_code(i: int, name: str) -> Code:
    """A named variable. Bound to a free variable, its slot holds a variable of its own
    aliased to that one (:func:`alias`), and while the two are free it builds as itself: two
    variables unified stay two for ``==``, as in Jason, and a value for either is a value for
    both."""

    def build(env: Env) -> Term:
        v = env[i]
        if v is UNBOUND:
            v = env[i] = LVar(name)
            return v
        if type(v) is LVar:
            value = deref(v)
            return v if type(value) is LVar else value
        return v

    def match(value: Term, env: Env, trail: Trail | None) -> bool:
        v = env[i]
        if v is UNBOUND:
            if type(value) is LVar:
                value = alias(value, name)
            env[i] = value
            if trail is not None:
                trail.append(env)
                trail.append(i)
            return True
        return unify(v, value, trail)

    return Code(build, match, slot=i, name=name)


def alias(value: LVar, name: str) -> Term:
    """What a variable's slot takes when matched with ``value``: its value, or, when the
    chain ends free, a new variable ``name`` bound to that free one (Jason's unifier keeps the
    two variables apart: ``Y = Z`` leaves ``Y == Z`` false until one has a value)."""
    value = deref(value)
    if type(value) is LVar:
        own = LVar(name)
        own.ref = value
        return own
    return value


def read_slot(env: Env, i: int) -> Term:
    """A slot's value, or UNBOUND / an unbound LVar."""
    v = env[i]
    if type(v) is LVar:
        return deref(v)
    return v


def match_annots(codes: list[Code], annots: Annots, env: Env, trail: Trail | None) -> bool:
    """The pattern annotations ``codes`` unify with ``annots`` as Jason unifies annotated
    literals (terms.annots_walk: each with a different one, no backtracking; a tail takes
    the rest)."""
    last = codes[-1]
    if type(last) is TailCode:
        return _match_with_tail(codes[:-1], last, annots, env, trail)
    if len(codes) == 1:
        const = last.const
        if const is not MISSING:
            return const in annots
        for candidate in sorted_annots(annots):
            mark = len(trail) if trail is not None else 0
            if last.match(candidate, env, trail):
                return True
            if trail is not None:
                undo(trail, mark)
        return False
    if all(c.const is not MISSING for c in codes):
        return all(c.const in annots for c in codes)
    return annots_walk(sorted_values([c.build(env) for c in codes]), sorted_annots(annots), trail)


def _match_with_tail(codes: list[Code], tail: Code, annots: Annots, env: Env, trail: Trail | None) -> bool:
    rest: list[Term] = []
    if not annots_walk(sorted_values([c.build(env) for c in codes]), sorted_annots(annots), trail, rest):
        return False
    return tail.match(tuple(rest), env, trail)


def solve_annots(codes: list[Code], annots: Annots, env: Env, trail: Trail) -> Iterator[bool]:
    """Every way a query's annotation patterns match a belief's ``annots``, as Jason
    enumerates them: each subset of as many annotations, in order, matched as
    :func:`match_annots` does (with a tail, that one match only)."""
    if type(codes[-1]) is TailCode:
        mark = len(trail)
        if match_annots(codes, annots, env, trail):
            yield True
        undo(trail, mark)
        return
    k = len(codes)
    if len(annots) < k:
        return
    if k == 1:
        code = codes[0]
        const = code.const
        if const is not MISSING:
            if const in annots:
                yield True
            return
        for candidate in sorted_annots(annots):
            mark = len(trail)
            if code.match(candidate, env, trail):
                yield True
            undo(trail, mark)
        return
    if all(c.const is not MISSING for c in codes):
        if all(c.const in annots for c in codes):
            yield True
        return
    for subset in itertools.combinations(sorted_annots(annots), k):
        mark = len(trail)
        if annots_walk(sorted_values([c.build(env) for c in codes]), subset, trail):
            yield True
        undo(trail, mark)


def has_source_annot(annots: tuple[s.Expr, ...]) -> bool:
    return any(isinstance(a, s.Lit) and a.functor == "source" and len(a.args) == 1 for a in annots)


class TermCompiler:
    """Compiles terms of one clause (its Scope); ``arith`` compiles arithmetic."""

    def __init__(self, scope: Scope, where: str) -> None:
        self.scope = scope
        self.where = where

    def error(self, node: s.Expr, message: str) -> AslSyntaxError:
        return AslSyntaxError(f"{self.where}:{getattr(node, 'line', 0)}: {message}")

    def term(self, node: s.Expr) -> Code:
        if isinstance(node, s.Const):
            return const_code(node.value)
        if isinstance(node, s.Var):
            if node.anonymous:
                return _anon_code(node.name)
            return slot_code(self.scope.slot(node.name), node.name)
        if isinstance(node, s.Lit):
            if _is_function_call(node):
                return self.arith_term(node)
            if node.functor.startswith("."):
                raise self.error(node, f"internal action {node.functor} used as a term")
            return self.struct(node.name, node.args, node.annots, node.tail)
        if isinstance(node, s.ListExpr):
            return self.list(node)
        if isinstance(node, s.UnOp) and node.op == "-" or isinstance(node, s.BinOp) and node.op in ARITH:
            return self.arith_term(node)
        if isinstance(node, s.BinOp):
            return self.struct(node.op, (node.left, node.right), ())
        if isinstance(node, s.UnOp):
            return self.struct(node.op, (node.operand,), ())
        if isinstance(node, (s.TriggerExpr, s.PlanTermExpr)):
            return self.plan_term(node)
        raise self.error(node, f"not a term: {node!r}")

    def plan_term(self, node: s.TriggerExpr | s.PlanTermExpr) -> Code:
        """A ``{...}`` term compiled in the enclosing clause (its variables are the clause's)."""
        if isinstance(node, s.TriggerExpr):
            literal = self.term(node.literal)
            op, kind = node.op, node.kind

            def build_trigger(env: Env) -> Term:
                return TriggerTerm(op, kind, literal.build(env))

            def match_trigger(value: Term, env: Env, trail: Trail | None) -> bool:
                value = deref(value)
                if type(value) is LVar:
                    return unify(value, build_trigger(env), trail)
                return (
                    type(value) is TriggerTerm
                    and value.op == op
                    and value.kind == kind
                    and literal.match(value.literal, env, trail)
                )

            return Code(build_trigger, match_trigger)
        plan = node.plan
        names = sorted(plan_variables(plan))
        slots = [(name, self.term(s.Var(name)).build) for name in names]

        def build_plan(env: Env) -> Term:
            values = []
            for name, build in slots:
                v = resolve(build(env))
                if type(v) is not LVar:
                    values.append((name, v))
            return PlanTerm(plan, tuple(values))

        def match_plan(value: Term, env: Env, trail: Trail | None) -> bool:
            return unify(build_plan(env), value, trail)

        return Code(build_plan, match_plan)

    def annot_codes(self, lit: s.Lit) -> list[Code]:
        """A literal's annotation patterns; with a tail (``b[a|R]``) the last is a TailCode."""
        codes = [self.term(a) for a in lit.annots]
        if lit.tail is not None:
            tail = self.term(lit.tail)
            codes.append(TailCode(tail.build, tail.match, slot=tail.slot))
        return codes

    def struct(
        self, functor: str, arg_nodes: tuple[s.Expr, ...], annot_nodes: tuple[s.Expr, ...], tail: s.Expr | None = None
    ) -> Code:
        args = [self.term(a) for a in arg_nodes]
        annots = [self.term(a) for a in annot_nodes]
        if tail is not None:
            code = self.term(tail)
            annots.append(TailCode(code.build, code.match, slot=code.slot))
        elif all(c.const is not MISSING for c in args) and all(c.const is not MISSING for c in annots):
            if not args and not annots:
                return const_code(atom(functor))
            return const_code(Struct(functor, tuple(c.const for c in args), frozenset(c.const for c in annots)))
        return struct_code(functor, args, annots)

    def list(self, node: s.ListExpr) -> Code:
        items = [self.term(a) for a in node.items]
        tail = self.term(node.tail) if node.tail is not None else None
        if tail is None and all(c.const is not MISSING for c in items):
            return const_code(tuple(c.const for c in items))
        return list_code(items, tail)

    # -- arithmetic ---------------------------------------------------------------------
    def arith_term(self, node: s.Expr) -> Code:
        """Arithmetic as a term: its number, or (an operand unbound) the expression itself,
        as Jason leaves ``Y + 1`` while ``Y`` has no value."""
        symbolic = self.symbolic(node)
        num = arith_num
        if isinstance(node, s.BinOp) and node.op in ("+", "-", "*"):
            left, right = self.arith(node.left), self.arith(node.right)
            if node.op == "+":

                def build(env: Env) -> Term:
                    try:
                        return num(left(env)) + num(right(env))
                    except NoValue:
                        return symbolic(env)
            elif node.op == "-":

                def build(env: Env) -> Term:
                    try:
                        return num(left(env)) - num(right(env))
                    except NoValue:
                        return symbolic(env)
            else:

                def build(env: Env) -> Term:
                    try:
                        return num(left(env)) * num(right(env))
                    except NoValue:
                        return symbolic(env)
        else:
            ev = self.arith(node)

            def build(env: Env) -> Term:
                try:
                    return ev(env)
                except NoValue:
                    return symbolic(env)

        def match(v: Term, env: Env, trail: Trail | None) -> bool:
            return unify(build(env), v, trail)

        return Code(build, match)

    def arith(self, node: s.Expr) -> Build:
        """``node`` as a function of the frame returning a number (NaN for what is no
        number; NoValue when an operand is unbound)."""
        if isinstance(node, s.Const):
            value = node.value
            return lambda env: value
        if isinstance(node, s.Var):
            if node.anonymous:

                def unbound(env: Env) -> Term:
                    raise NoValue

                return unbound
            i = self.scope.slot(node.name)

            def read(env: Env) -> Term:
                v = env[i]
                if type(v) is LVar:
                    v = deref(v)
                    if type(v) is LVar:
                        raise NoValue
                elif v is UNBOUND:
                    raise NoValue
                return v

            return read
        num = arith_num
        if isinstance(node, s.UnOp) and node.op == "-":
            inner = self.arith(node.operand)
            return lambda env: -num(inner(env))
        if isinstance(node, s.BinOp) and node.op in ARITH:
            left, right = self.arith(node.left), self.arith(node.right)
            op = ARITH[node.op]
            if node.op == "+":
                return lambda env: num(left(env)) + num(right(env))
            if node.op == "-":
                return lambda env: num(left(env)) - num(right(env))
            if node.op == "*":
                return lambda env: num(left(env)) * num(right(env))
            return lambda env: op(num(left(env)), num(right(env)))
        if isinstance(node, s.Lit) and _is_function_call(node):
            return self.function(node)
        # a term (an atom, a string, a list ...) where a number may be expected: its value
        code = self.term(node)
        return code.build

    def symbolic(self, node: s.Expr) -> Build:
        """``node`` as a term, not evaluated: ``(Y+1)`` while ``Y`` is unbound."""
        if isinstance(node, s.BinOp) and node.op in ARITH:
            left, right, op = self.symbolic(node.left), self.symbolic(node.right), node.op
            return lambda env: Struct(op, (left(env), right(env)))
        if isinstance(node, s.UnOp) and node.op == "-":
            inner = self.symbolic(node.operand)
            return lambda env: Struct("-", (inner(env),))
        if isinstance(node, s.Lit) and _is_function_call(node):
            builds = [self.term(a).build for a in node.args]
            functor = node.functor
            return lambda env: Struct(functor, tuple(b(env) for b in builds))
        return self.term(node).build

    def function(self, node: s.Lit) -> Build:
        """``math.abs(X)``, ``.length(L)``: the arguments evaluated (numbers, or lists for
        ``math.max([..])``), then the function (:mod:`~bdi_rl.bdi.runtime.functions`); one
        that cannot be evaluated (``math.abs(a)``) stays a term, as in Jason."""
        _, fn = FUNCTIONS[node.functor]
        args = [self.arith(a) for a in node.args]
        functor = node.functor
        if not args:
            return lambda env: fn()

        def call(env: Env) -> Term:
            values = [resolve(a(env)) for a in args]
            try:
                return fn(*values)
            except (AslTypeError, ValueError, TypeError, OverflowError, ZeroDivisionError):
                return Struct(functor, tuple(values))

        return call

    # -- printing -----------------------------------------------------------------------
    def printer(self, node: s.Expr, top: bool = True) -> Callable[[Env], str]:
        """``node`` printed as Jason's ``.print`` shows an argument: a variable without a
        value by the name it has here (``X<no-value>`` alone, ``f(X)`` inside a term),
        ``[H|T]`` with ``T`` unbound as written."""
        if isinstance(node, s.Var):
            code = self.term(node)
            name = node.name

            def show_var(env: Env) -> str:
                v = deref(code.build(env))
                if type(v) is LVar:
                    return name + "<no-value>" if top else name
                return print_str(resolve(v)) if top else term_str(resolve(v))

            return show_var
        if isinstance(node, s.Lit) and node.args and not _is_function_call(node) and not node.functor.startswith("."):
            args = [self.printer(a, top=False) for a in node.args]
            annots = [self.term(a).build for a in node.annots]
            functor = node.name

            def show_lit(env: Env) -> str:
                text = functor + "(" + ",".join([a(env) for a in args]) + ")"
                if annots:
                    values = sorted_values([resolve(b(env)) for b in annots])
                    text += "[" + ",".join([term_str(v) for v in values]) + "]"
                return text

            return show_lit
        if isinstance(node, s.ListExpr):
            items = [self.printer(a, top=False) for a in node.items]
            tail = self.term(node.tail) if node.tail is not None else None
            tail_name = node.tail.name if isinstance(node.tail, s.Var) else "_"

            def show_list(env: Env) -> str:
                parts = [i(env) for i in items]
                end = ""
                if tail is not None:
                    rest = deref(tail.build(env))
                    if type(rest) is tuple:
                        parts += [term_str(resolve(x)) for x in rest]
                    else:
                        end = "|" + (tail_name if type(rest) is LVar else term_str(rest))
                return "[" + ",".join(parts) + end + "]"

            return show_list
        build = self.term(node).build
        if top:
            return lambda env: print_str(resolve(build(env)))
        return lambda env: term_str(resolve(build(env)))


def _is_function_call(node: s.Lit) -> bool:
    """Whether a dotted literal is one of Jason's arithmetic functions (else it is an atom
    such as ``a.b``, or an internal action)."""
    return "." in node.functor and not node.negated and is_function(node.functor, len(node.args))


ARITH = OPERATORS


def struct_code(functor: str, args: list[Code], annots: list[Code]) -> Code:
    arity = len(args)
    builds = [c.build for c in args]
    matches = [c.match for c in args]
    tail = annots[-1] if annots and type(annots[-1]) is TailCode else None
    annot_builds = [c.build for c in (annots[:-1] if tail is not None else annots)]

    def build(env: Env) -> Term:
        built_annots = frozenset(b(env) for b in annot_builds) if annot_builds else frozenset()
        if tail is not None:
            rest = deref(tail.build(env))
            if type(rest) is tuple:  # b[a|R] with R bound: R's annotations too
                built_annots |= frozenset(rest)
        return Struct(functor, tuple(b(env) for b in builds), built_annots)

    def match(value: Term, env: Env, trail: Trail | None) -> bool:
        if type(value) is LVar:
            value = deref(value)
            if type(value) is LVar:
                bind(value, build(env), trail)
                return True
        if type(value) is not Struct or value.functor != functor or len(value.args) != arity:
            return False
        vargs = value.args
        for k in range(arity):
            if not matches[k](vargs[k], env, trail):
                return False
        if annots:
            return match_annots(annots, value.annots, env, trail)
        return True

    return Code(build, match)


def list_code(items: list[Code], tail: Code | None) -> Code:
    n = len(items)
    builds = [c.build for c in items]
    matches = [c.match for c in items]

    def build(env: Env) -> Term:
        head = tuple(b(env) for b in builds)
        if tail is None:
            return head
        rest = deref(tail.build(env))
        if type(rest) is tuple:
            return head + rest
        if type(rest) is LVar:  # an open list: its rest comes later
            return PartialList(head, rest)
        if type(rest) is PartialList:
            return PartialList(head + rest.items, rest.tail)
        raise AslTypeError(f"the tail of a list [H|T] must be a list, not {term_str(rest)}")

    def match(value: Term, env: Env, trail: Trail | None) -> bool:
        if type(value) is LVar:
            value = deref(value)
            if type(value) is LVar:
                bind(value, build(env), trail)
                return True
        if type(value) is not tuple:
            if type(value) is PartialList:
                value = resolve(value)
                if type(value) is PartialList:
                    return unify(build(env), value, trail)
                return match(value, env, trail)
            return False
        if tail is None:
            if len(value) != n:
                return False
        elif len(value) < n:
            return False
        for k in range(n):
            if not matches[k](value[k], env, trail):
                return False
        if tail is not None:
            return tail.match(value[n:], env, trail)
        return True

    return Code(build, match)
