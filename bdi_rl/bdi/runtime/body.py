"""Plan bodies: statements compiled to flat code.

A **plan body** is flat code: a list of instructions ``instr(ag, intention, frame) -> pc``
(the next instruction's index, or a negative signal: a frame was pushed, the intention is
suspended, or it yields its turn). ``if``/``while``/``for`` are jumps; a ``while`` saves
the frame's slots on entry and restores them before each test, as Jason restores the
unifier (bindings made in the body do not leak into the next test).

Jumps and loops are in control.py.

Each instruction also has a **kind** (:data:`DEED`, :data:`FREE`, :data:`JUMP`,
:data:`BELIEF`) and the AST of the statement it runs: Jason's reasoning cycle runs one
*deed* of an intention per cycle (a goal, an action, a formula, a belief change, an ``if``
or loop test), and jumps and loop bookkeeping are no deeds; a belief change raises its
event on the same intention (sameFocus); the statements give a failure its ``code(...)``
annotation and Jason's error messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime import traced
from bdi_rl.bdi.runtime.control import (
    branch_test,
    for_enter,
    for_next,
    jump,
    jump_back,
    loop_back,
    loop_enter,
    while_goal,
)
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.instructions import BELIEF, DEED, FREE, JUMP, Instruction, Placed
from bdi_rl.bdi.runtime.literals import args_build, atomic_args
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.sourcetext import expr_text, jason_text
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, Struct, deref, has_source, resolve, term_str
from bdi_rl.bdi.runtime.unify import MISSING, Env, TermCompiler, has_source_annot


def goal_code(tc: TermCompiler, lit: s.Lit | s.Var) -> Callable[[Env], Struct]:
    """Build function for a goal or belief written in a body: ``source(self)`` is added
    unless the literal names a source (Jason). A variable (``!G``) stands for the literal
    it is bound to when the statement runs."""
    if isinstance(lit, s.Var):
        return _variable_goal(tc.term(lit).build, lit.name)
    code = tc.term(lit)
    if code.const is not MISSING:
        value = code.const
        if not has_source_annot(lit.annots):  # (the shared ANNOTS_SELF: the usual goal)
            value = Struct(value.functor, value.args, value.annots | ANNOTS_SELF if value.annots else ANNOTS_SELF)
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


def _variable_goal(build: Callable[[Env], Any], name: str) -> Callable[[Env], Struct]:
    def goal(env: Env) -> Struct:
        value = deref(build(env))
        if type(value) is not Struct:
            raise PlanFailure("wrong_arguments", f"{name} is not bound to a literal: {term_str(value)}")
        if has_source(value.annots):
            return value
        return Struct(value.functor, value.args, value.annots | ANNOTS_SELF)

    return goal


class BodyCode:
    """A compiled body: instructions, and per instruction its line, kind, statement and (for
    a jump) its target."""

    __slots__ = ("code", "lines", "kinds", "stmts", "targets", "loops")

    def __init__(
        self,
        code: list[Instruction],
        lines: list[int],
        kinds: list[int],
        stmts: list[s.Statement | None],
        targets: list[int],
        loops: int,
    ) -> None:
        self.code = code
        self.lines = lines
        self.kinds = kinds
        self.stmts = stmts
        self.targets = targets
        self.loops = loops


class BodyCompiler:
    """A plan body -> flat code; see the module docstring. ``fuse``: ``while (c) { !g }`` as
    one instruction (the fast cycle; Jason's cycle runs the test and the goal as two deeds)."""

    def __init__(self, compiler: QueryCompiler, tc: TermCompiler, fuse: bool = True) -> None:
        self.compiler = compiler
        self.tc = tc
        self.fuse = fuse
        self.items: list[tuple[Placed, int, int, s.Statement | None, int]] = []
        self.labels: dict[int, int] = {}
        self.n_labels = 0
        self.loops = 0
        self.stmt: s.Statement | None = None
        """the statement being compiled (what its instructions run)"""

    def label(self) -> int:
        self.n_labels += 1
        return self.n_labels

    def place(self, label: int) -> None:
        self.labels[label] = len(self.items)

    def emit(self, make: Placed, line: int, kind: int = DEED, target: int = 0) -> None:
        self.items.append((make, line, kind, self.stmt, target))

    def finish(self) -> BodyCode:
        labels = self.labels
        items = self.items
        return BodyCode(
            [make(pc, labels) for pc, (make, *_) in enumerate(items)],
            [item[1] for item in items],
            [item[2] for item in items],
            [item[3] for item in items],
            [labels[item[4]] if item[2] == JUMP else 0 for item in items],
            self.loops,
        )

    def statements(self, body: tuple[s.Statement, ...]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: s.Statement) -> None:
        self.stmt = stmt
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
            self.emit(formula_instr(query, expr), line)
            return
        if not isinstance(expr, (s.Lit, s.Var)) or isinstance(expr, s.Lit) and expr.functor.startswith("."):
            raise tc.error(expr, f"{op} needs a literal")
        if op in ("!", "!!"):
            build = goal_code(tc, expr)
            recording = self.compiler.recording
            if op == "!" and recording is not None:
                make = traced.achieve(build, recording)
            elif op == "!":

                def make(pc: int, labels: dict[int, int]) -> Instruction:
                    nxt = pc + 1

                    def achieve(ag: Any, it: Any, frame: Any) -> int:
                        frame.pc = nxt
                        return ag.achieve(it, build(frame.env))

                    return achieve
            else:

                def make(pc: int, labels: dict[int, int]) -> Instruction:
                    nxt = pc + 1

                    def achieve_new(ag: Any, it: Any, frame: Any) -> int:
                        ag.post_goal(resolve(build(frame.env)))
                        return nxt

                    return achieve_new

            self.emit(make, line)
        elif isinstance(expr, s.Var):
            self.variable_statement(op, expr, line)
        elif op == "?":
            self.test_goal(expr, line)
        elif op in ("+", "++") and not expr.annots:
            self.add_belief(expr, line, BELIEF if op == "+" else DEED)
        elif op in ("+", "++"):
            build = goal_code(tc, expr)

            def make(pc: int, labels: dict[int, int]) -> Instruction:
                nxt = pc + 1

                def add_belief(ag: Any, it: Any, frame: Any) -> int:
                    ag.add_belief(build(frame.env))
                    return nxt

                return add_belief

            self.emit(make, line, BELIEF if op == "+" else DEED)
        elif op == "+>":
            build = goal_code(tc, expr)

            def make(pc: int, labels: dict[int, int]) -> Instruction:
                nxt = pc + 1

                def add_belief_end(ag: Any, it: Any, frame: Any) -> int:
                    ag.add_belief(build(frame.env), at_end=True)
                    return nxt

                return add_belief_end

            self.emit(make, line, BELIEF)
        elif op in ("-", "--"):
            self.del_belief(expr, line, BELIEF if op == "-" else DEED)
        elif op == "-+":
            build = goal_code(tc, expr)

            def make(pc: int, labels: dict[int, int]) -> Instruction:
                nxt = pc + 1

                def replace_belief(ag: Any, it: Any, frame: Any) -> int:
                    ag.replace_belief(build(frame.env))
                    return nxt

                return replace_belief

            self.emit(make, line, BELIEF)
        else:
            raise tc.error(expr, f"unknown body operator {op}")

    def env_action(self, expr: s.Lit, line: int) -> None:
        code = self.tc.term(expr)
        build = code.build
        if self.compiler.recording is not None:
            self.emit(traced.env_action(build, self.compiler.recording), line)
            return

        def make(pc: int, labels: dict[int, int]) -> Instruction:
            nxt = pc + 1

            def act(ag: Any, it: Any, frame: Any) -> int:
                ag.act(resolve(build(frame.env)))
                return nxt

            return act

        self.emit(make, line)

    def variable_statement(self, op: str, var: s.Var, line: int) -> None:
        """``?B``, ``+B``, ``-B``, ``+>B``, ``-+B`` with ``B`` bound to a literal when the
        statement runs (Jason)."""
        build = goal_code(self.tc, var)
        if op == "?":
            first = self.compiler.query(var, self.tc).first

            def make(pc: int, labels: dict[int, int]) -> Instruction:
                nxt = pc + 1

                def test(ag: Any, it: Any, frame: Any) -> int:
                    if first(ag, frame.env, []):
                        return nxt
                    value = build(frame.env)
                    frame.pc = nxt
                    return ag.test_goal(it, value, value.key)

                return test

        else:

            def make(pc: int, labels: dict[int, int]) -> Instruction:
                nxt = pc + 1

                def change(ag: Any, it: Any, frame: Any) -> int:
                    value = resolve(build(frame.env))
                    if op == "-":
                        ag._bb_remove(value.functor, value.args, value.annots)
                    elif op == "-+":
                        ag.replace_belief(value)
                    else:
                        ag.add_belief(value, at_end=op == "+>")
                    return nxt

                return change

        self.emit(make, line)

    def test_goal(self, expr: s.Lit, line: int) -> None:
        query = self.compiler.literal_query(expr, self.tc)
        first = query.first
        build = goal_code(self.tc, expr)
        key = (expr.name, len(expr.args))
        text = jason_text(expr)

        def make(pc: int, labels: dict[int, int]) -> Instruction:
            nxt = pc + 1

            def test(ag: Any, it: Any, frame: Any) -> int:
                if first(ag, frame.env, []):
                    return nxt
                frame.pc = nxt
                return ag.test_goal(it, build(frame.env), key, text)

            return test

        self.emit(make, line)

    def add_belief(self, expr: s.Lit, line: int, kind: int) -> None:
        """``+b(args)``: the argument tuple straight into the belief base, ``source(self)``."""
        args = args_build([self.tc.term(a) for a in expr.args], resolved=True)
        name = expr.name

        def make(pc: int, labels: dict[int, int]) -> Instruction:
            nxt = pc + 1

            def add_belief(ag: Any, it: Any, frame: Any) -> int:
                ag._bb_add(name, args(frame.env), ANNOTS_SELF)
                return nxt

            return add_belief

        self.emit(make, line, kind)

    def del_belief(self, expr: s.Lit, line: int, kind: int) -> None:
        tc = self.tc
        args = [tc.term(a) for a in expr.args]
        annot_nodes = (
            expr.annots if has_source_annot(expr.annots) else expr.annots + (s.Lit("source", (s.Lit("self"),)),)
        )
        annots = [tc.term(a) for a in annot_nodes]
        key = (expr.name, len(expr.args))
        if any(c.const is MISSING for c in annots):

            def make(pc: int, labels: dict[int, int]) -> Instruction:
                nxt = pc + 1

                def remove(ag: Any, it: Any, frame: Any) -> int:
                    ag.remove_matching(key, args, annots, frame.env)
                    return nxt

                return remove

            self.emit(make, line, kind)
            return
        # ground annotations (the usual [source(self)]): -b(X) with X bound is one lookup
        const_annots = frozenset(c.const for c in annots)
        atomic = atomic_args(args)
        name = expr.name

        def make_lookup(pc: int, labels: dict[int, int]) -> Instruction:
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

        self.emit(make_lookup, line, kind)

    def if_(self, stmt: s.If) -> None:
        end = self.label()
        for cond, body in stmt.branches:
            query = self.compiler.query(cond, self.tc)
            skip = self.label()
            self.stmt = stmt
            self.emit(branch_test(query.first, skip), stmt.line)
            self.statements(body)
            self.stmt = stmt
            self.emit(jump(end), stmt.line, JUMP, end)
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
            self.fuse
            and len(body) == 1
            and isinstance(body[0], s.Stmt)
            and body[0].op == "!"
            and isinstance(body[0].expr, s.Lit)
            and not body[0].expr.functor.startswith(".")
        ):
            # while (c) { !g }: the shipped loops' shape, one instruction per iteration
            goal = goal_code(self.tc, body[0].expr)
            recording = self.compiler.recording
            loop = (
                while_goal(k, query.first, goal, end)
                if recording is None
                else traced.while_goal(k, query.first, goal, end, recording)
            )
            self.emit(loop, stmt.line)
            self.place(end)
            return
        test = self.label()
        self.emit(loop_enter(k), stmt.line, FREE)
        self.place(test)
        self.emit(branch_test(query.first, end), stmt.line)
        self.statements(stmt.body)
        self.stmt = stmt
        self.emit(loop_back(k, test), stmt.line, FREE)
        self.place(end)

    def for_(self, stmt: s.For) -> None:
        k = self.loops
        self.loops += 1
        query = self.compiler.query(stmt.cond, self.tc)
        end = self.label()
        step = self.label()
        self.emit(for_enter(k, query.solve), stmt.line, FREE)
        self.place(step)
        self.emit(for_next(k, end), stmt.line)
        self.statements(stmt.body)
        self.stmt = stmt
        self.emit(jump_back(step), stmt.line, FREE)
        self.place(end)


def formula_instr(query: Query, expr: s.Expr) -> Placed:
    """A formula as a body statement (a deed): false, it fails the plan with the query's
    failure kind and ``<formula> failed`` (an internal action's statement too: stdlib_core)."""
    first = query.first
    kind = query.failure
    text = expr_text(expr)

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def formula(ag: Any, it: Any, frame: Any) -> int:
            if first(ag, frame.env, []):
                return nxt
            # Jason's error_msg: "" for an internal action, a constraint's text (failure.py)
            raise PlanFailure(kind, detail=f"{text} failed")

        return formula

    return make
