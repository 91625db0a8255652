"""Internal actions: the host's table (:class:`Actions`) and the standard ones.

A host registers Python callables as python-agentspeak does (so ``RlBridge.register``
works unchanged): ``add_procedure(name, specs, fn)`` succeeds unless ``fn`` raises or
returns False; ``add_function(name, specs, fn)`` unifies ``fn``'s result with the last
argument; ``specs`` only fixes the arity (values arrive as they are: ints, floats, strings,
tuples for lists, :class:`~bdi_rl.bdi.runtime.terms.Struct` for atoms and structures).

Standard actions are compiled, not called: each is a function from its argument AST to
a :class:`~bdi_rl.bdi.runtime.queries.Query`, so ``.member`` can backtrack in a context
and ``.count``/``.findall`` evaluate their formula as compiled code.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError, PlanFailure
from bdi_rl.bdi.runtime.intention import SUSPENDED
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.relations import RELATIONAL
from bdi_rl.bdi.runtime.terms import LVar, Struct, atom, compare, deref, from_python, print_str, resolve, undo
from bdi_rl.bdi.runtime.triggers import TRIGGER_TYPES, trigger_matcher
from bdi_rl.bdi.runtime.unify import TermCompiler
from bdi_rl.bdi.runtime.waiting import WAIT_FORMULA

Builtin = Callable[["QueryCompiler", s.Lit, TermCompiler], Query]


class HostAction:
    __slots__ = ("kind", "fn", "arity")

    def __init__(self, kind: str, fn: Callable[..., Any], arity: int | None) -> None:
        self.kind = kind  # "procedure", "function" or "raw"
        self.fn = fn
        self.arity = arity


class Actions:
    """The internal actions a program may call: the standard ones plus the host's."""

    def __init__(self, parent: "Actions | None" = None) -> None:
        self.parent = parent
        self.entries: dict[str, HostAction | Builtin] = {}

    @staticmethod
    def _split(specs_or_fn: Any, fn: Any) -> tuple[int | None, Callable[..., Any]]:
        if fn is None:
            return None, specs_or_fn
        return (len(specs_or_fn) if specs_or_fn is not None else None), fn

    def add_procedure(self, name: str, specs_or_fn: Any, fn: Callable[..., Any] | None = None) -> None:
        arity, fn = self._split(specs_or_fn, fn)
        self.entries[name] = HostAction("procedure", fn, arity)

    def add_function(self, name: str, specs_or_fn: Any, fn: Callable[..., Any] | None = None) -> None:
        arity, fn = self._split(specs_or_fn, fn)
        self.entries[name] = HostAction("function", fn, arity)

    def add(self, name: str, fn: Callable[..., Any], arity: int | None = None) -> None:
        """``fn(agent, *values)``: True/None succeeds, False fails."""
        self.entries[name] = HostAction("raw", fn, arity)

    def add_builtin(self, name: str, compile_fn: Builtin) -> None:
        self.entries[name] = compile_fn

    def get(self, name: str) -> HostAction | Builtin | None:
        entry = self.entries.get(name)
        if entry is None:
            if self.parent is not None:
                return self.parent.get(name)
            return STANDARD.get(name)
        return entry

    def names(self) -> set[str]:
        names = set(STANDARD) | set(self.entries)
        if self.parent is not None:
            names |= self.parent.names()
        return names

    def compile_call(self, compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
        entry = self.get(node.functor)
        if entry is None:
            raise tc.error(node, f"unknown internal action {node.functor}")
        if isinstance(entry, HostAction):
            return _host_call(compiler, node, tc, entry)
        return entry(compiler, node, tc)


def _host_call(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler, entry: HostAction) -> Query:
    name = node.functor
    codes = [tc.term(a) for a in node.args]
    n = len(codes)
    if entry.arity is not None:
        expected = entry.arity + (1 if entry.kind == "function" else 0)
        if n != expected:
            raise tc.error(node, f"{name} takes {expected} argument(s), got {n}")
    cell = compiler.cells.setdefault(name, [entry.fn])
    if entry.kind == "function":
        if n == 0:
            raise tc.error(node, f"{name} needs an argument for its result")
        out = codes[-1].match
        ins = [c.build for c in codes[:-1]]
        if len(ins) == 0:

            def first(ag: Any, env: list, trail: Any) -> bool:
                return out(from_python(cell[0]()), env, trail)
        elif len(ins) == 1:
            b0 = ins[0]

            def first(ag: Any, env: list, trail: Any) -> bool:
                return out(from_python(cell[0](resolve(b0(env)))), env, trail)
        else:

            def first(ag: Any, env: list, trail: Any) -> bool:
                return out(from_python(cell[0](*[resolve(b(env)) for b in ins])), env, trail)

        return Query(first)
    builds = [c.build for c in codes]
    if entry.kind == "raw":

        def first(ag: Any, env: list, trail: Any) -> bool:
            return cell[0](ag, *[resolve(b(env)) for b in builds]) is not False

        return Query(first)
    if n == 0:

        def first(ag: Any, env: list, trail: Any) -> bool:
            return cell[0]() is not False
    elif n == 1:
        b0 = builds[0]

        def first(ag: Any, env: list, trail: Any) -> bool:
            return cell[0](resolve(b0(env))) is not False
    else:

        def first(ag: Any, env: list, trail: Any) -> bool:
            return cell[0](*[resolve(b(env)) for b in builds]) is not False

    return Query(first)


# -- the standard internal actions --------------------------------------------------------
STANDARD: dict[str, Builtin] = {}


def standard(name: str, *arities: int) -> Callable[[Builtin], Builtin]:
    def register(fn: Builtin) -> Builtin:
        @functools.wraps(fn)
        def checked(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
            if arities and len(node.args) not in arities:
                raise tc.error(node, f"{name} takes {' or '.join(map(str, arities))} argument(s), got {len(node.args)}")
            return fn(compiler, node, tc)

        STANDARD[name] = checked
        return checked

    return register


def _det(first: Callable[..., bool]) -> Query:
    return Query(first)


@standard(".print")
def _print(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    builds = [tc.term(a).build for a in node.args]

    def first(ag: Any, env: list, trail: Any) -> bool:
        ag.host.print(ag, "".join(print_str(resolve(b(env))) for b in builds))
        return True

    return _det(first)


STANDARD[".println"] = STANDARD[".print"]


@standard(".my_name", 1)
def _my_name(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match
    return _det(lambda ag, env, trail: out(ag.name_term, env, trail))


def _list_arg(value: Any, what: str) -> tuple:
    value = deref(value)
    if type(value) is not tuple:
        raise PlanFailure("wrong_arguments", f"{what}: not a list: {print_str(value)}")
    return value


@standard(".length", 2)
def _length(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    arg = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match

    def first(ag: Any, env: list, trail: Any) -> bool:
        value = deref(arg(env))
        if type(value) is str:
            return out(len(value), env, trail)
        return out(len(_list_arg(value, ".length")), env, trail)

    return _det(first)


@standard(".member", 2)
def _member(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    item = tc.term(node.args[0]).match
    items = tc.term(node.args[1]).build

    def solve(ag: Any, env: list, trail: list) -> Iterator[Any]:
        for value in _list_arg(items(env), ".member"):
            mark = len(trail)
            if item(value, env, trail):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: list, trail: list) -> bool:
        for value in _list_arg(items(env), ".member"):
            mark = len(trail)
            if item(value, env, trail):
                return True
            undo(trail, mark)
        return False

    return Query(first, solve)


@standard(".concat")
def _concat(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    if len(node.args) < 2:
        raise tc.error(node, ".concat needs its parts and a result")
    parts = [tc.term(a).build for a in node.args[:-1]]
    out = tc.term(node.args[-1]).match

    def first(ag: Any, env: list, trail: Any) -> bool:
        values = [deref(resolve(p(env))) for p in parts]
        if all(type(v) is tuple for v in values):
            return out(tuple(x for v in values for x in v), env, trail)
        return out("".join(print_str(v) for v in values), env, trail)

    return _det(first)


def _extreme(pick: Callable[..., Any]) -> Builtin:
    def compile_(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
        items = tc.term(node.args[0]).build
        out = tc.term(node.args[1]).match

        def first(ag: Any, env: list, trail: Any) -> bool:
            values = _list_arg(resolve(items(env)), node.functor)
            if not values:
                return False
            return out(pick(values, key=functools.cmp_to_key(compare)), env, trail)

        return _det(first)

    return compile_


standard(".max", 2)(_extreme(max))
standard(".min", 2)(_extreme(min))


@standard(".nth", 3)
def _nth(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    index = tc.term(node.args[0]).build
    items = tc.term(node.args[1]).build
    out = tc.term(node.args[2]).match

    def first(ag: Any, env: list, trail: Any) -> bool:
        values = _list_arg(items(env), ".nth")
        i = deref(index(env))
        if type(i) is float and i.is_integer():
            i = int(i)
        if type(i) is not int or not 0 <= i < len(values):
            return False
        return out(values[i], env, trail)

    return _det(first)


@standard(".sort", 2)
def _sort(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    items = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match

    def first(ag: Any, env: list, trail: Any) -> bool:
        values = _list_arg(resolve(items(env)), ".sort")
        return out(tuple(sorted(values, key=functools.cmp_to_key(compare))), env, trail)

    return _det(first)


def _type_test(test: Callable[[Any], bool]) -> Builtin:
    def compile_(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
        arg = tc.term(node.args[0]).build
        return _det(lambda ag, env, trail: test(deref(resolve(arg(env)))))

    return compile_


def _ground(value: Any) -> bool:
    from bdi_rl.bdi.runtime.terms import is_ground

    return is_ground(value)


standard(".ground", 1)(_type_test(_ground))
standard(".number", 1)(_type_test(lambda v: type(v) in (int, float)))
standard(".string", 1)(_type_test(lambda v: type(v) is str))
standard(".list", 1)(_type_test(lambda v: type(v) is tuple))
standard(".atom", 1)(_type_test(lambda v: type(v) is Struct and not v.args and not v.functor.startswith("~")))
standard(".literal", 1)(_type_test(lambda v: type(v) is Struct))


@standard(".random", 1)
def _random(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match
    return _det(lambda ag, env, trail: out(ag.random.random(), env, trail))


@standard(".findall", 3)
def _findall(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    template = tc.term(node.args[0]).build
    query = compiler.query(node.args[1], tc)
    out = tc.term(node.args[2]).match
    solve = query.solve

    def first(ag: Any, env: list, trail: list) -> bool:
        mark = len(trail)
        found = [resolve(template(env)) for _ in solve(ag, env, trail)]
        undo(trail, mark)
        return out(tuple(found), env, trail)

    return _det(first)


@standard(".count", 2)
def _count(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    query = compiler.query(node.args[0], tc)
    out = tc.term(node.args[1]).match
    solve = query.solve

    def first(ag: Any, env: list, trail: list) -> bool:
        mark = len(trail)
        n = sum(1 for _ in solve(ag, env, trail))
        undo(trail, mark)
        return out(n, env, trail)

    return _det(first)


@standard(".fail")
def _fail(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    builds = [tc.term(a).build for a in node.args]

    def first(ag: Any, env: list, trail: Any) -> bool:
        if not builds:  # Jason: .fail is false: ia_failed, error_msg("")
            raise PlanFailure("ia_failed", "", detail=".fail")
        # Jason: every argument is an annotation of the failure event (error(E) besides
        # error(internal_action)), error_msg(M) its message ("fail" without one)
        message = "fail"
        extra = []
        for b in builds:
            value = deref(resolve(b(env)))
            if type(value) is Struct and value.functor == "error_msg" and len(value.args) == 1 and message == "fail":
                message = print_str(value.args[0])
                continue
            extra.append(value)
        raise PlanFailure("internal_action", message, annots=tuple(extra))

    return _det(first)


def _no_context(name: str) -> Callable[..., bool]:
    def first(ag: Any, env: list, trail: Any) -> bool:
        raise PlanFailure("wrong_arguments", f"{name} suspends an intention: only in a plan body")

    return first


def _is_formula(node: Any) -> bool:
    """Whether ``.wait``'s first argument is a formula to wait for (Jason decides at run
    time by the value; here by the syntax: a variable or arithmetic is milliseconds)."""
    if isinstance(node, s.Lit):
        return "." not in node.functor  # math.* is arithmetic
    if isinstance(node, s.BinOp):
        return node.op in ("&", "|") or node.op in RELATIONAL
    return isinstance(node, s.UnOp) and node.op == "not"


@standard(".wait", 1, 2, 3)
def _wait(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    args = node.args
    if _is_formula(args[0]):
        return _wait_formula(compiler, node, tc)
    trigger = args[0] if isinstance(args[0], s.TriggerExpr) else None
    if trigger is not None:
        ttype = TRIGGER_TYPES[(trigger.op, trigger.kind)]
        lit = trigger.literal
        key = (ttype, lit.name, len(lit.args))
        matcher = trigger_matcher([tc.term(a) for a in lit.args], [tc.term(a) for a in lit.annots])
        what = tc.term(lit).build  # what it waits for, in the intention's reason (Jason's)
        timeout = tc.term(args[1]).build if len(args) >= 2 else None
        elapsed = tc.term(args[2]).match if len(args) == 3 else None
    else:
        if len(args) != 1:
            raise tc.error(node, ".wait(Milliseconds) or .wait({+event}[, Timeout[, Elapsed]])")
        key, matcher, elapsed, what = None, None, None, None
        timeout = tc.term(args[0]).build

    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1

        def wait(ag: Any, it: Any, frame: Any) -> int:
            ms = _wait_ms(timeout, frame.env)
            frame.pc = nxt
            ag.wait(it, frame, ms, key, matcher, elapsed, None if what is None else resolve(what(list(frame.env))))
            return SUSPENDED

        return wait

    return Query(_no_context(".wait"), body=make)


def _wait_ms(timeout: Callable | None, env: Any) -> int | float | None:
    """A ``.wait``'s timeout in milliseconds (None: no timeout), or wrong_arguments."""
    if timeout is None:
        return None
    ms = deref(resolve(timeout(env)))
    if type(ms) not in (int, float):
        raise PlanFailure("wrong_arguments", f".wait: not a number of milliseconds: {print_str(ms)}")
    return ms


def _wait_formula(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    """``.wait(b(X) & X > 10[, Timeout[, Elapsed]])``: go on at once if the agent believes
    the formula (its bindings kept), else suspend until a belief change or goal makes it
    true (Jason tests it at each new event)."""
    args = node.args
    test = compiler.query(args[0], tc).first
    timeout = tc.term(args[1]).build if len(args) >= 2 else None
    elapsed = tc.term(args[2]).match if len(args) == 3 else None
    try:
        what: Callable | None = tc.term(args[0]).build  # the formula, in the intention's reason
    except AslSyntaxError:
        what = None

    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1

        def wait(ag: Any, it: Any, frame: Any) -> int:
            if test(ag, frame.env, []):
                return nxt  # Jason: at once, the elapsed time left unbound
            ms = _wait_ms(timeout, frame.env)
            frame.pc = nxt
            shown = None if what is None else resolve(what(list(frame.env)))
            ag.wait(it, frame, ms, WAIT_FORMULA, test, elapsed, shown)
            return SUSPENDED

        return wait

    return Query(_no_context(".wait"), body=make)


@standard(".send", 3, 4, 5)
def _send(compiler: "QueryCompiler", node: s.Lit, tc: TermCompiler) -> Query:
    receiver = tc.term(node.args[0]).build
    performative = tc.term(node.args[1]).build
    content = tc.term(node.args[2]).build

    def parts(env: list) -> tuple[Any, str, Any]:
        perf = deref(performative(env))
        if type(perf) is not Struct or perf.args:
            raise PlanFailure("wrong_arguments", f".send: not a performative: {print_str(perf)}")
        return resolve(receiver(env)), perf.functor, resolve(content(env))

    if len(node.args) == 3:

        def first(ag: Any, env: list, trail: Any) -> bool:
            ag.send(*parts(env))
            return True

        return Query(first)

    answer = tc.term(node.args[3]).match
    timeout = tc.term(node.args[4]).build if len(node.args) == 5 else None

    def make(pc: int, labels: dict) -> Callable:
        nxt = pc + 1

        def ask(ag: Any, it: Any, frame: Any) -> int:
            to, perf, what = parts(frame.env)
            if perf not in ("askOne", "askAll", "askHow"):
                raise PlanFailure("wrong_arguments", f".send with an answer needs an ask, not {perf}")
            ms = deref(resolve(timeout(frame.env))) if timeout is not None else None
            frame.pc = nxt
            ag.ask(it, frame, to, perf, what, answer, ms)
            return SUSPENDED

        return ask

    return Query(_no_context(".send"), body=make)


__all__ = ["Actions", "HostAction", "STANDARD", "AslSyntaxError", "LVar", "atom"]
