"""Plans and triggers as values: ``{+!g(X) : X > 1 <- .print(X)}`` and ``{+!g(_)}``.

Jason lets a program hold a plan as a term (``.add_plan``, ``tellHow``, ``.relevant_plans``)
and a trigger as a term (``.relevant_plans({+!g(_)}, L)``, ``askHow``). A
:class:`PlanTerm` is the plan as written (its AST) with the values its variables had in the
plan that built it; :class:`TriggerTerm` the trigger's operator, kind and literal. Both
print as Jason prints them (``{ +!g(X) : (X > 1) <- .print(X) }``).

For the actions that use them: :func:`plan_of` turns a plan term (or plan source text) into
a plan the agent can add (``Agent.add_program(Program(plans=[plan]))``); :func:`term_of`
turns a plan (its AST, as ``CompiledPlan`` keeps its source text) into a term;
``triggers.trigger_of`` turns a trigger term (or text) into its plan-library key and
literal. A ``{...}`` written in a clause is compiled by ``unify.TermCompiler.plan_term``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError, PlanFailure
from bdi_rl.bdi.runtime.parser import parse_text
from bdi_rl.bdi.runtime.terms import INFIX, LVar, Struct, deref, number_str, resolve, sorted_values, term_str


class PlanTerm:
    """A plan as a value: its AST and the values of the variables the enclosing plan had
    bound when the term was built (the rest stay variables)."""

    __slots__ = ("plan", "values", "_hash")

    def __init__(self, plan: s.Plan, values: tuple[tuple[str, Any], ...] = ()) -> None:
        self.plan = plan
        self.values = values
        self._hash: int | None = None

    def term_text(self) -> str:
        return "{ " + plan_text(self.plan, dict(self.values)) + " }"

    def source(self) -> str:
        """The plan as AgentSpeak source, its variables' values written in (tellHow)."""
        return plan_text(self.plan, dict(self.values)) + "."

    def to_plan(self) -> s.Plan:
        """The plan with the values written in, ready to compile."""
        return substitute(self.plan, dict(self.values))

    def __eq__(self, other: object) -> bool:
        return type(other) is PlanTerm and self.source() == other.source()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.source())
        return self._hash

    def __repr__(self) -> str:
        return self.term_text()


class TriggerTerm:
    """A trigger as a value: ``+``/``-``, ``""``/``!``/``?`` and the literal."""

    __slots__ = ("op", "kind", "literal")

    def __init__(self, op: str, kind: str, literal: Any) -> None:
        self.op = op
        self.kind = kind
        self.literal = literal

    def term_text(self) -> str:
        return "{ " + self.op + self.kind + term_str(self.literal) + " }"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is TriggerTerm
            and self.op == other.op
            and self.kind == other.kind
            and resolve(self.literal) == resolve(other.literal)
        )

    def __hash__(self) -> int:
        return hash((self.op, self.kind, resolve(self.literal)))

    def __repr__(self) -> str:
        return self.term_text()


# -- between terms and plans -------------------------------------------------------------------
def plan_of(value: Any, where: str = "<plan term>") -> s.Plan:
    """The plan a plan term stands for, or the one plan of AgentSpeak source text;
    PlanFailure (wrong_arguments) for anything else."""
    value = deref(value)
    if type(value) is PlanTerm:
        return value.to_plan()
    if type(value) is str:
        text = value.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1].strip()
        if not text.endswith("."):
            text += "."
        try:
            program = parse_text(text, where)
        except AslSyntaxError as exc:
            raise PlanFailure("wrong_arguments", f"not a plan: {exc}") from None
        if len(program.plans) != 1 or program.beliefs or program.rules or program.goals:
            raise PlanFailure("wrong_arguments", f"not one plan: {value!r}")
        return program.plans[0]
    raise PlanFailure("wrong_arguments", f"not a plan: {term_str(value)}")


def term_of(plan: s.Plan) -> PlanTerm:
    """A plan as a term (its label, trigger, context and body as written)."""
    return PlanTerm(plan)


def value_expr(value: Any, line: int = 0) -> s.Expr:
    """A runtime value as the AST the parser would have built for it."""
    value = deref(value)
    kind = type(value)
    if kind is LVar:
        return s.Var(value.name, line)
    if kind is Struct:
        functor, negated = value.functor, False
        if functor.startswith("~"):
            functor, negated = functor[1:], True
        return s.Lit(
            functor,
            tuple(value_expr(a, line) for a in value.args),
            tuple(value_expr(a, line) for a in sorted_values(value.annots)),
            negated,
            line,
        )
    if kind is tuple:
        return s.ListExpr(tuple(value_expr(a, line) for a in value), None, line)
    if kind is PlanTerm:
        return s.PlanTermExpr(value.to_plan(), line)
    if kind is TriggerTerm:
        literal = value_expr(value.literal, line)
        assert isinstance(literal, s.Lit)
        return s.TriggerExpr(value.op, value.kind, literal, line)
    return s.Const(value, line)


def substitute(plan: s.Plan, values: dict[str, Any]) -> s.Plan:
    """``plan`` with the variables of ``values`` replaced by their values."""
    if not values:
        return plan
    sub = _Substitution(values)
    trigger = replace(plan.trigger, literal=sub.expr(plan.trigger.literal))
    context = sub.expr(plan.context) if plan.context is not None else None
    label = sub.expr(plan.label) if plan.label is not None else None
    return replace(plan, trigger=trigger, context=context, body=sub.body(plan.body), label=label)


class _Substitution:
    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def expr(self, node: Any) -> Any:
        if isinstance(node, s.Var):
            if node.name in self.values:
                return value_expr(self.values[node.name], node.line)
            return node
        if isinstance(node, s.Lit):
            tail = self.expr(node.tail) if node.tail is not None else None
            return replace(
                node, args=tuple(map(self.expr, node.args)), annots=tuple(map(self.expr, node.annots)), tail=tail
            )
        if isinstance(node, s.ListExpr):
            tail = self.expr(node.tail) if node.tail is not None else None
            return replace(node, items=tuple(map(self.expr, node.items)), tail=tail)
        if isinstance(node, s.BinOp):
            return replace(node, left=self.expr(node.left), right=self.expr(node.right))
        if isinstance(node, s.UnOp):
            return replace(node, operand=self.expr(node.operand))
        if isinstance(node, s.TriggerExpr):
            return replace(node, literal=self.expr(node.literal))
        if isinstance(node, s.PlanTermExpr):
            return replace(node, plan=substitute(node.plan, self.values))
        return node

    def body(self, body: tuple[s.Statement, ...]) -> tuple[s.Statement, ...]:
        out: list[s.Statement] = []
        for stmt in body:
            if isinstance(stmt, s.Stmt):
                out.append(replace(stmt, expr=self.expr(stmt.expr)))
            elif isinstance(stmt, s.If):
                branches = tuple((self.expr(c), self.body(b)) for c, b in stmt.branches)
                otherwise = self.body(stmt.otherwise) if stmt.otherwise is not None else None
                out.append(replace(stmt, branches=branches, otherwise=otherwise))
            elif isinstance(stmt, (s.While, s.For)):
                out.append(replace(stmt, cond=self.expr(stmt.cond), body=self.body(stmt.body)))
        return tuple(out)


# -- printing, as Jason prints plans ----------------------------------------------------------
def plan_text(plan: s.Plan, values: dict[str, Any] | None = None) -> str:
    """``@l +!g(X) : (X > 1) <- .print(X); .print(done)`` (no final ``.``)."""
    show = _Printer(values or {})
    text = ""
    if plan.label is not None:
        text = "@" + show.expr(plan.label) + " "
    trigger = plan.trigger
    text += trigger.op + trigger.kind + show.expr(trigger.literal)
    if plan.context is not None:
        text += " : " + show.expr(plan.context)
    if plan.body:
        text += " <- " + show.body(plan.body)
    return text


class _Printer:
    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def expr(self, node: Any) -> str:
        if isinstance(node, s.Var):
            if node.name in self.values:
                return term_str(self.values[node.name])
            return node.name
        if isinstance(node, s.Const):
            value = node.value
            return '"' + value + '"' if type(value) is str else number_str(value)
        if isinstance(node, s.Lit):
            text = node.name
            if node.args:
                text += "(" + ",".join(self.expr(a) for a in node.args) + ")"
            if node.annots or node.tail is not None:
                inner = ",".join(self.expr(a) for a in node.annots)
                if node.tail is not None:
                    inner += "|" + self.expr(node.tail)
                text += "[" + inner + "]"
            return text
        if isinstance(node, s.ListExpr):
            inner = ",".join(self.expr(a) for a in node.items)
            if node.tail is not None:
                inner += "|" + self.expr(node.tail)
            return "[" + inner + "]"
        if isinstance(node, s.BinOp):
            return "(" + self.expr(node.left) + INFIX.get(node.op, node.op) + self.expr(node.right) + ")"
        if isinstance(node, s.UnOp):
            if node.op == "not":
                return "not (" + self.expr(node.operand) + ")"
            return "(-" + self.expr(node.operand) + ")"
        if isinstance(node, s.TriggerExpr):
            return "{ " + node.op + node.kind + self.expr(node.literal) + " }"
        if isinstance(node, s.PlanTermExpr):
            return "{ " + plan_text(node.plan, self.values) + " }"
        return "?"

    def body(self, body: tuple[s.Statement, ...]) -> str:
        return "; ".join(self.statement(stmt) for stmt in body)

    def statement(self, stmt: Any) -> str:
        if isinstance(stmt, s.Stmt):
            prefix = "" if stmt.op == "expr" else stmt.op
            return prefix + self.expr(stmt.expr)
        if isinstance(stmt, s.If):
            parts = []
            for i, (cond, body) in enumerate(stmt.branches):
                parts.append(("if" if i == 0 else " elif") + " (" + self.expr(cond) + ") { " + self.body(body) + " }")
            if stmt.otherwise is not None:
                parts.append(" else { " + self.body(stmt.otherwise) + " }")
            return "".join(parts)
        if isinstance(stmt, s.While):
            return "while (" + self.expr(stmt.cond) + ") { " + self.body(stmt.body) + " }"
        if isinstance(stmt, s.For):
            return "for (" + self.expr(stmt.cond) + ") { " + self.body(stmt.body) + " }"
        return "?"


def plan_variables(plan: s.Plan) -> set[str]:
    """The named variables of a plan (anonymous ones are each the plan's own)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, s.Var):
            if not node.anonymous:
                found.add(node.name)
        elif isinstance(node, s.Lit):
            for a in node.args + node.annots:
                walk(a)
            if node.tail is not None:
                walk(node.tail)
        elif isinstance(node, s.ListExpr):
            for a in node.items:
                walk(a)
            if node.tail is not None:
                walk(node.tail)
        elif isinstance(node, s.BinOp):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, s.UnOp):
            walk(node.operand)
        elif isinstance(node, s.TriggerExpr):
            walk(node.literal)
        elif isinstance(node, s.PlanTermExpr):
            found.update(plan_variables(node.plan))
        elif isinstance(node, s.Stmt):
            walk(node.expr)
        elif isinstance(node, s.If):
            for cond, body in node.branches:
                walk(cond)
                for st in body:
                    walk(st)
            for st in node.otherwise or ():
                walk(st)
        elif isinstance(node, (s.While, s.For)):
            walk(node.cond)
            for st in node.body:
                walk(st)

    walk(plan.trigger)
    if plan.context is not None:
        walk(plan.context)
    if plan.label is not None:
        walk(plan.label)
    for stmt in plan.body:
        walk(stmt)
    return found
