"""Compiled terms: each AST term becomes a :class:`Code` of closures over frame slots.

A plan's variables are numbered; a frame's bindings are a list (``env``) with one slot per
variable, ``UNBOUND`` until bound. ``build(env)`` makes the runtime value (an unbound slot
becomes an :class:`~bdi_rl.bdi.runtime.terms.LVar`, so a sub-goal or rule can bind it);
``match(value, env, trail)`` unifies the term with a value, recording new slot bindings on
the trail (``env, index``) so queries can backtrack. Ground terms are built once, at
compile time (``const``).
"""

from __future__ import annotations

from typing import Any, Callable

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError, AslTypeError
from bdi_rl.bdi.runtime.functions import FUNCTIONS
from bdi_rl.bdi.runtime.terms import UNBOUND, LVar, Struct, atom, bind, deref, ordered, resolve, unify, undo

MISSING: Any = object()

Env = list
Build = Callable[[Env], Any]
Match = Callable[[Any, Env, "list | None"], bool]


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

    __slots__ = ("build", "match", "const", "slot", "anonymous")

    def __init__(
        self, build: Build, match: Match, const: Any = MISSING, slot: int = -1, anonymous: bool = False
    ) -> None:
        self.build = build
        self.match = match
        self.const = const
        self.slot = slot
        self.anonymous = anonymous


def const_code(value: Any) -> Code:
    def build(env: Env) -> Any:
        return value

    def match(v: Any, env: Env, trail: list | None) -> bool:
        return v is value or unify(value, v, trail)

    return Code(build, match, value)


def _anon_code() -> Code:
    def build(env: Env) -> Any:
        return LVar("_")

    def match(v: Any, env: Env, trail: list | None) -> bool:
        return True

    return Code(build, match, anonymous=True)


def slot_code(i: int, name: str) -> Code:
    def build(env: Env) -> Any:
        v = env[i]
        if v is UNBOUND:
            v = env[i] = LVar(name)
            return v
        if type(v) is LVar:
            return deref(v)
        return v

    def match(value: Any, env: Env, trail: list | None) -> bool:
        v = env[i]
        if v is UNBOUND:
            if type(value) is LVar:
                value = deref(value)
            env[i] = value
            if trail is not None:
                trail.append(env)
                trail.append(i)
            return True
        return unify(v, value, trail)

    return Code(build, match, slot=i)


def read_slot(env: Env, i: int) -> Any:
    """A slot's value, or UNBOUND / an unbound LVar."""
    v = env[i]
    if type(v) is LVar:
        return deref(v)
    return v


def match_annots(codes: list[Code], annots: frozenset, env: Env, trail: list | None) -> bool:
    """Each pattern annotation unifies with one of ``annots`` (the first that does)."""
    for code in codes:
        const = code.const
        if const is not MISSING:
            if const in annots:
                continue
            return False
        for candidate in ordered(annots):
            mark = len(trail) if trail is not None else 0
            if code.match(candidate, env, trail):
                break
            if trail is not None:
                undo(trail, mark)
        else:
            return False
    return True


def solve_annots(codes: list[Code], annots: frozenset, env: Env, trail: list, k: int = 0):
    """Every way the pattern annotations ``codes[k:]`` unify with ``annots`` (backtracking)."""
    if k == len(codes):
        yield True
        return
    code = codes[k]
    const = code.const
    if const is not MISSING:
        if const in annots:
            yield from solve_annots(codes, annots, env, trail, k + 1)
        return
    for candidate in tuple(ordered(annots)):
        mark = len(trail)
        if code.match(candidate, env, trail):
            yield from solve_annots(codes, annots, env, trail, k + 1)
        undo(trail, mark)


def has_source_annot(annots: tuple) -> bool:
    return any(isinstance(a, s.Lit) and a.functor == "source" and len(a.args) == 1 for a in annots)


class TermCompiler:
    """Compiles terms of one clause (its Scope); ``arith`` compiles arithmetic."""

    def __init__(self, scope: Scope, where: str) -> None:
        self.scope = scope
        self.where = where

    def error(self, node: Any, message: str) -> AslSyntaxError:
        return AslSyntaxError(f"{self.where}:{getattr(node, 'line', 0)}: {message}")

    def term(self, node: Any) -> Code:
        if isinstance(node, s.Const):
            return const_code(node.value)
        if isinstance(node, s.Var):
            if node.name == "_":
                return _anon_code()
            return slot_code(self.scope.slot(node.name), node.name)
        if isinstance(node, s.Lit):
            if node.functor.startswith("."):
                raise self.error(node, f"internal action {node.functor} used as a term")
            if "." in node.functor:
                return self.arith_term(node)
            return self.struct(node.name, node.args, node.annots)
        if isinstance(node, s.ListExpr):
            return self.list(node)
        if isinstance(node, s.UnOp) and node.op == "-" or isinstance(node, s.BinOp) and node.op in ARITH:
            return self.arith_term(node)
        if isinstance(node, s.BinOp):
            return self.struct(node.op, (node.left, node.right), ())
        if isinstance(node, s.UnOp):
            return self.struct(node.op, (node.operand,), ())
        if isinstance(node, s.TriggerExpr):
            raise self.error(node, "an event {...} is only an argument of .wait")
        raise self.error(node, f"not a term: {node!r}")

    def struct(self, functor: str, arg_nodes: tuple, annot_nodes: tuple) -> Code:
        args = [self.term(a) for a in arg_nodes]
        annots = [self.term(a) for a in annot_nodes]
        if all(c.const is not MISSING for c in args) and all(c.const is not MISSING for c in annots):
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

    def arith_term(self, node: Any) -> Code:
        ev = self.arith(node)

        def match(v: Any, env: Env, trail: list | None) -> bool:
            return unify(ev(env), v, trail)

        return Code(ev, match)

    def arith(self, node: Any) -> Callable[[Env], Any]:
        """``node`` as a function of the frame returning a number."""
        if isinstance(node, s.Const):
            value = node.value
            return lambda env: value
        if isinstance(node, s.Var):
            if node.name == "_":
                raise self.error(node, "_ in an arithmetic expression")
            i = self.scope.slot(node.name)
            name = node.name

            def read(env: Env) -> Any:
                v = env[i]
                if type(v) is LVar:
                    v = deref(v)
                if v is UNBOUND or type(v) is LVar:
                    raise AslTypeError(f"{name} is unbound in an arithmetic expression")
                return v

            return read
        if isinstance(node, s.UnOp) and node.op == "-":
            inner = self.arith(node.operand)
            return lambda env: _neg(inner(env))
        if isinstance(node, s.BinOp) and node.op in ARITH:
            left, right = self.arith(node.left), self.arith(node.right)
            op = ARITH[node.op]
            if node.op == "+":
                return lambda env: _num(left(env)) + _num(right(env))
            if node.op == "-":
                return lambda env: _num(left(env)) - _num(right(env))
            if node.op == "*":
                return lambda env: _num(left(env)) * _num(right(env))
            return lambda env: op(_num(left(env)), _num(right(env)))
        if isinstance(node, s.Lit) and "." in node.functor and not node.functor.startswith("."):
            return self.function(node)
        # a term (an atom, a string, a list ...) where a number may be expected: its value
        code = self.term(node)
        return code.build

    def function(self, node: s.Lit) -> Callable[[Env], Any]:
        """``math.abs(X)`` ...: the arguments evaluated (numbers, or lists for
        ``math.max([..])``), then the function (:mod:`~bdi_rl.bdi.runtime.functions`)."""
        entry = FUNCTIONS.get(node.functor)
        if entry is None:
            raise self.error(node, f"unknown arithmetic function {node.functor}")
        arities, fn = entry
        if len(node.args) not in arities or node.annots or node.negated:
            raise self.error(node, f"{node.functor} takes {' or '.join(map(str, arities))} argument(s)")
        args = [self.arith(a) for a in node.args]
        if not args:
            return lambda env: fn()
        if len(args) == 1:
            a0 = args[0]
            return lambda env: fn(resolve(a0(env)))
        return lambda env: fn(*[resolve(a(env)) for a in args])


def _num(v: Any) -> Any:
    t = type(v)
    if t is int or t is float:
        return v
    raise AslTypeError(f"not a number: {resolve(v)!r}")


def _neg(v: Any) -> Any:
    return -_num(v)


def _div(a: Any, b: Any) -> int:
    """Jason's ``div``: integer division truncating toward zero."""
    a, b = int(a), int(b)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _mod(a: Any, b: Any) -> Any:
    """Jason's ``mod`` (Java's remainder: the sign of the dividend)."""
    if type(a) is int and type(b) is int:
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    import math

    return math.fmod(a, b)


def _truediv(a: Any, b: Any) -> Any:
    return a / b


ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _truediv,
    "div": _div,
    "mod": _mod,
    "**": lambda a, b: a**b,
}


def struct_code(functor: str, args: list[Code], annots: list[Code]) -> Code:
    arity = len(args)
    builds = [c.build for c in args]
    matches = [c.match for c in args]
    annot_builds = [c.build for c in annots]

    def build(env: Env) -> Any:
        built_annots = frozenset(b(env) for b in annot_builds) if annot_builds else frozenset()
        return Struct(functor, tuple(b(env) for b in builds), built_annots)

    def match(value: Any, env: Env, trail: list | None) -> bool:
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

    def build(env: Env) -> Any:
        head = tuple(b(env) for b in builds)
        if tail is None:
            return head
        rest = deref(tail.build(env))
        if type(rest) is not tuple:
            raise AslTypeError("the tail of a list [H|T] must be a list (partial lists are not supported)")
        return head + rest

    def match(value: Any, env: Env, trail: list | None) -> bool:
        if type(value) is LVar:
            value = deref(value)
            if type(value) is LVar:
                bind(value, build(env), trail)
                return True
        if type(value) is not tuple:
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
