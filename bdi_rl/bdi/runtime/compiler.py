"""A program's rules and plans compiled against an agent's action table: :class:`Compiler`
(queries and rules in queries.py, plan bodies in body.py, triggers in triggers.py).
"""

from __future__ import annotations

from collections.abc import Callable

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.body import BodyCompiler
from bdi_rl.bdi.runtime.instructions import Instruction
from bdi_rl.bdi.runtime.listener import Recording
from bdi_rl.bdi.runtime.options import Indicator, learned_state
from bdi_rl.bdi.runtime.queries import ActionCell, ActionTable, CompiledRule, Query, QueryCompiler
from bdi_rl.bdi.runtime.sourcetext import lit_text
from bdi_rl.bdi.runtime.terms import UNBOUND, Struct, Trail
from bdi_rl.bdi.runtime.triggers import (
    TRIGGER_TEXT,
    TRIGGER_TYPES,
    VAR_TRIGGER,
    plan_trigger_matcher,
    var_trigger_matcher,
)
from bdi_rl.bdi.runtime.unify import MISSING, Code, Env, Scope, TermCompiler


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
        "kinds",
        "stmts",
        "targets",
        "scope",
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
        "ast",
        "added",
        "learned",
    )
    ttype: int
    functor: str
    arity: int
    args: list[Code]
    annots: list[Code]
    context: Query | None
    code: list[Instruction]
    lines: list[int]
    kinds: list[int]
    stmts: list[s.Statement | None]
    targets: list[int]
    scope: Scope
    file: str
    line: int
    size: int
    blank: Env
    loops: int
    atomic: bool
    label: Struct | None
    name: str
    text: str
    trigger_text: str
    match_trigger: Callable[[Struct, Env, Trail], bool]
    ast: s.Plan
    """the plan as parsed (its term: ``.relevant_plans``, ``.plan_label``, askHow)"""
    added: bool
    """added at run time (``.add_plan``, tellHow): its label names no file (Jason's)"""
    learned: tuple[Indicator, ...] | None
    """the abstract state of a learned choice among the goal's plans (options.py), or None"""

    def __init__(self) -> None:
        self.label = None
        self.atomic = False
        self.added = False
        self.learned = None

    def __repr__(self) -> str:
        return f"<plan {self.name}>"


class Compiler(QueryCompiler):
    """Compiles one agent's program against its action table. ``fuse``: a ``while`` whose
    body is one goal becomes one instruction (the fast cycle; Jason's cycle runs its test
    and its goal as two deeds). ``recording``: a listener compiled in (the code records its own
    events, listener.Recording)."""

    def __init__(
        self,
        actions: ActionTable,
        cells: dict[str, ActionCell],
        fuse: bool = True,
        recording: Recording | None = None,
    ) -> None:
        super().__init__(actions, cells, recording)
        self.fuse = fuse

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
        lit = trig.literal
        if isinstance(lit, s.VarLit):  # -!G[error(E)]: relevant to every goal of its kind
            cp.functor, cp.arity, cp.args = VAR_TRIGGER, -1, []
            cp.annots = [tc.term(a) for a in lit.annots]
            cp.match_trigger = var_trigger_matcher(tc.term(lit.var), cp.annots)
        else:
            cp.functor = lit.name
            cp.arity = len(lit.args)
            cp.args = [tc.term(a) for a in lit.args]
            cp.annots = tc.annot_codes(lit)
            cp.match_trigger = plan_trigger_matcher(cp.args, cp.annots)
        cp.context = self.query(plan.context, tc) if plan.context is not None else None
        cp.file = plan.file
        cp.line = plan.line
        cp.text = plan.text
        cp.ast = plan
        cp.trigger_text = TRIGGER_TEXT[cp.ttype] + (lit.var.name if isinstance(lit, s.VarLit) else lit_text(lit))
        if plan.label is not None:
            label_code = TermCompiler(Scope(), plan.file).term(plan.label)
            if label_code.const is MISSING:
                raise tc.error(plan.label, "a plan label must be ground")
            cp.label = label_code.const
            cp.name = plan.label.functor
            cp.atomic = any(isinstance(a, s.Lit) and a.functor == "atomic" and not a.args for a in plan.label.annots)
        else:
            cp.name = f"p__{index}"  # Jason's name for a plan without a label
        cp.learned = learned_state(plan)
        body = BodyCompiler(self, tc, self.fuse)
        body.statements(plan.body)
        compiled = body.finish()
        cp.code, cp.lines, cp.loops = compiled.code, compiled.lines, compiled.loops
        cp.kinds, cp.stmts, cp.targets = compiled.kinds, compiled.stmts, compiled.targets
        cp.scope = scope
        cp.size = scope.size
        cp.blank = [UNBOUND] * scope.size
        return cp
