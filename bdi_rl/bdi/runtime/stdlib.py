"""Internal actions: the host's table (:class:`Actions`) and the standard ones.

A host registers Python callables as python-agentspeak does (so ``RlBridge.register``
works unchanged): ``add_procedure(name, specs, fn)`` succeeds unless ``fn`` raises or
returns False; ``add_function(name, specs, fn)`` unifies ``fn``'s result with the last
argument; ``specs`` only fixes the arity (values arrive as they are: ints, floats, strings,
tuples for lists, :class:`~bdi_rl.bdi.runtime.terms.Struct` for atoms and structures).

Standard actions are compiled, not called: each is a function from its argument AST to
a :class:`~bdi_rl.bdi.runtime.queries.Query`, so ``.member`` can backtrack in a context
and ``.count``/``.findall`` evaluate their formula as compiled code. Jason 3.2's standard
library (``jason.stdlib``) is the list: ``stdlib_core`` holds the table they register in and
what they are made of (argument readers, Jason's failures); this module the host's table,
the printing, messaging, waiting and failing actions, and it imports the modules of the
others (``stdlib_lists``, ``stdlib_strings``, ``stdlib_terms``, ``stdlib_beliefs``,
``stdlib_mas``, ``stdlib_printing``, ``stdlib_system``, ``planlibrary``, ``management``)
so they are registered; ``stdlib_refused`` names the Jason actions bdi-rl refuses at load,
each with its reason (docs/AGENTSPEAK.md has the whole table).

An action fails as Jason's does: ``False`` (Jason's ``ia_failed``), or it raises
``stdlib_core.wrong_argument`` (``error(wrong_arguments)``, Jason's message) or
``action_error`` (``error(internal_action)``), or ``java_error`` where Jason's action dies
of a Java exception (``error(unknown)``). That is a body statement's failure; inside a
formula (a context, an ``if``/``while``/``for`` test, ``.findall``) Jason logs the exception
and the action is false, and so it is here (``stdlib_core.standard``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The other standard actions: each module registers its own in stdlib_core.STANDARD when it
# is imported; they are imported here so that an Actions table sees all of them.
from bdi_rl.bdi.runtime import (  # noqa: F401
    management,
    planlibrary,
    stdlib_beliefs,
    stdlib_lists,
    stdlib_mas,
    stdlib_printing,
    stdlib_strings,
    stdlib_system,
    stdlib_terms,
    traced,
)
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError, PlanFailure
from bdi_rl.bdi.runtime.instructions import SUSPENDED, Instruction
from bdi_rl.bdi.runtime.parser import parse_file
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.relations import RELATIONAL
from bdi_rl.bdi.runtime.stdlib_core import STANDARD, Builtin, in_formula, java_error, standard
from bdi_rl.bdi.runtime.stdlib_refused import unknown_action
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, Struct, deref, from_python, print_str, resolve
from bdi_rl.bdi.runtime.triggers import ADD_ACH, TRIGGER_TYPES, trigger_matcher
from bdi_rl.bdi.runtime.unify import Build, Env, TermCompiler
from bdi_rl.bdi.runtime.waiting import WAIT_FORMULA

log = logging.getLogger("bdi_rl.bdi.runtime")


class HostAction:
    __slots__ = ("kind", "fn", "arity")

    def __init__(self, kind: str, fn: Callable[..., Any], arity: int | None) -> None:
        self.kind = kind  # "procedure", "function" or "raw"
        self.fn = fn
        self.arity = arity


class Actions:
    """The internal actions a program may call: the standard ones plus the host's."""

    def __init__(self, parent: Actions | None = None) -> None:
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

    def compile_call(self, compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        entry = self.get(node.functor)
        if entry is None:
            raise tc.error(node, unknown_action(node.functor, self.names()))
        if isinstance(entry, HostAction):  # in a formula, its exception is no solution too
            return in_formula(_host_call(compiler, node, tc, entry), node)
        return entry(compiler, node, tc)


def _host_call(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler, entry: HostAction) -> Query:
    name = node.functor
    codes = [tc.term(a) for a in node.args]
    n = len(codes)
    if entry.arity is not None:
        expected = entry.arity + (1 if entry.kind == "function" else 0)
        if n != expected:
            raise tc.error(node, f"{name} takes {expected} argument(s), got {n}")
    cell = compiler.cells.setdefault(name, [entry.fn])
    if entry.kind == "function" and n == 0:
        raise tc.error(node, f"{name} needs an argument for its result")
    recording = compiler.recording
    if recording is not None:  # tracing compiled in: the call records its action event
        function = entry.kind == "function"
        builds = [c.build for c in (codes[:-1] if function else codes)]
        out = codes[-1].match if function else None
        return Query(traced.host_call(name, cell, builds, out, entry.kind == "raw", recording))
    if entry.kind == "function":
        out = codes[-1].match
        ins = [c.build for c in codes[:-1]]
        if len(ins) == 0:

            def first(ag: Any, env: Env, trail: Any) -> bool:
                return out(from_python(cell[0]()), env, trail)
        elif len(ins) == 1:
            b0 = ins[0]

            def first(ag: Any, env: Env, trail: Any) -> bool:
                return out(from_python(cell[0](resolve(b0(env)))), env, trail)
        else:

            def first(ag: Any, env: Env, trail: Any) -> bool:
                return out(from_python(cell[0](*[resolve(b(env)) for b in ins])), env, trail)

        return Query(first)
    builds = [c.build for c in codes]
    if entry.kind == "raw":

        def first(ag: Any, env: Env, trail: Any) -> bool:
            return cell[0](ag, *[resolve(b(env)) for b in builds]) is not False

        return Query(first)
    if n == 0:

        def first(ag: Any, env: Env, trail: Any) -> bool:
            return cell[0]() is not False
    elif n == 1:
        b0 = builds[0]

        def first(ag: Any, env: Env, trail: Any) -> bool:
            return cell[0](resolve(b0(env))) is not False
    else:

        def first(ag: Any, env: Env, trail: Any) -> bool:
            return cell[0](*[resolve(b(env)) for b in builds]) is not False

    return Query(first)


def _det(first: Callable[..., bool]) -> Query:
    return Query(first)


@standard(".print")
def _print(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    shows = [tc.printer(a) for a in node.args]

    def first(ag: Any, env: Env, trail: Any) -> bool:
        ag.host.print(ag, "".join([show(env) for show in shows]))
        return True

    return _det(first)


STANDARD[".println"] = STANDARD[".print"]


@standard(".fail")
def _fail(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    builds = [tc.term(a).build for a in node.args]

    def first(ag: Any, env: Env, trail: Any) -> bool:
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


@standard(".signal", 1, 2, context=False)
def _signal(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.signal({+b})``, ``.signal({+!g})``: the event, as if from outside (a new intention
    for its plan; nothing changes in the belief base). The literal gets ``source(self)``
    unless it names a source. (Jason's second argument, ``type_signal``, is not kept.)"""
    trigger = node.args[0]
    if not isinstance(trigger, s.TriggerExpr):
        raise tc.error(node, ".signal takes an event: .signal({+b}) or .signal({+!g})")
    ttype = TRIGGER_TYPES[(trigger.op, trigger.kind)]
    build = tc.term(trigger.literal).build

    def first(ag: Any, env: Env, trail: Any) -> bool:
        event = deref(resolve(build(env)))
        if not any(type(a) is Struct and a.functor == "source" for a in event.annots):
            event = Struct(event.functor, event.args, event.annots | ANNOTS_SELF)
        if ttype == ADD_ACH:
            ag.post_goal(event)
        elif (ttype, event.functor, len(event.args)) in ag.plans:
            ag.events.append((ttype, event, None))
        return True

    return _det(first)


@standard(".include", 1, context=False)
def _include(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.include("file.asl")``: the file's beliefs, rules, plans and initial goals join the
    agent now; a relative name is beside the file of the plan that includes it. As in
    Jason, a file that is missing or does not parse is logged, and the action succeeds."""
    path = tc.term(node.args[0]).build

    def first(ag: Any, env: Env, trail: Any) -> bool:
        name = deref(resolve(path(env)))
        if type(name) is not str:
            raise java_error()  # ClassCastException: Jason reads the name as a string
        it = ag.current
        base = Path(it.stack[-1].plan.file).parent if it is not None and it.stack else Path(".")
        try:
            program = parse_file(base / name)
        except AslSyntaxError as exc:
            log.warning("[%s] .include: %s", ag.name, exc)
            return True
        ag.add_program(program, goals=True)
        return True

    return _det(first)


def _no_context(name: str) -> Callable[..., bool]:
    def first(ag: Any, env: Env, trail: Any) -> bool:
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
def _wait(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
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

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def wait(ag: Any, it: Any, frame: Any) -> int:
            ms = _wait_ms(timeout, frame.env)
            frame.pc = nxt
            ag.wait(it, frame, ms, key, matcher, elapsed, None if what is None else resolve(what(list(frame.env))))
            return SUSPENDED

        return wait

    return Query(_no_context(".wait"), body=make)


def _wait_ms(timeout: Build | None, env: Env) -> int | float | None:
    """A ``.wait``'s timeout in milliseconds (None: no timeout), or wrong_arguments."""
    if timeout is None:
        return None
    ms: int | float = deref(resolve(timeout(env)))  # a term: checked on the next line
    if type(ms) not in (int, float):
        raise PlanFailure("wrong_arguments", f".wait: not a number of milliseconds: {print_str(ms)}")
    return ms


def _wait_formula(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.wait(b(X) & X > 10[, Timeout[, Elapsed]])``: go on at once if the agent believes
    the formula (its bindings kept), else suspend until a belief change or goal makes it
    true (Jason tests it at each new event)."""
    args = node.args
    test = compiler.query(args[0], tc).first
    timeout = tc.term(args[1]).build if len(args) >= 2 else None
    elapsed = tc.term(args[2]).match if len(args) == 3 else None
    try:
        what: Build | None = tc.term(args[0]).build  # the formula, in the intention's reason
    except AslSyntaxError:
        what = None

    def make(pc: int, labels: dict[int, int]) -> Instruction:
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


@standard(".send", 3, 4, 5, context=False)
def _send(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    receiver = tc.term(node.args[0]).build
    performative = tc.term(node.args[1]).build
    content = tc.term(node.args[2]).build

    def parts(env: Env) -> tuple[Any, str, Any]:
        perf = deref(performative(env))
        if type(perf) is not Struct or perf.args:
            raise PlanFailure("wrong_arguments", f".send: not a performative: {print_str(perf)}")
        return resolve(receiver(env)), perf.functor, resolve(content(env))

    if len(node.args) == 3:

        def first(ag: Any, env: Env, trail: Any) -> bool:
            ag.send(*parts(env))
            return True

        return Query(first)

    answer = tc.term(node.args[3]).match
    timeout = tc.term(node.args[4]).build if len(node.args) == 5 else None

    def make(pc: int, labels: dict[int, int]) -> Instruction:
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


__all__ = ["Actions", "Builtin", "HostAction", "STANDARD"]
