"""Fewer reasoning cycles per plan step: fused instructions for python-agentspeak 0.2.

python-agentspeak compiles a plan body into a chain of instructions and runs one per reasoning
cycle. An internal action or query in a body is three of them (push the query, take its first
solution, pop it), and each ``while`` iteration costs five besides its body (push the
condition's query, push a choicepoint, take a solution, pop the query, pop the choicepoint).
A step-mode learner spent ~16 cycles per env step that way (BENCHMARKS.md). Here a body query
is one instruction and a ``while`` test is one: the same solutions, bindings, backtracking and
failures; the only difference is that other intentions no longer take turns between the parts
of what is now one instruction. :func:`apply` patches the plan compiler; it is called at
start-up by :func:`bdi_rl.patches.apply_all`, and a mind refuses to load before (:func:`require`).
"""

from __future__ import annotations

import functools
from typing import Any

import agentspeak
import agentspeak.runtime as rt

ORIGINAL = (rt.BuildInstructionsVisitor.visit_formula, rt.BuildInstructionsVisitor.visit_while)
_original_visit_formula = ORIGINAL[0]


def query_once(query: Any, agent: Any, intention: Any) -> bool:
    """push_query + next_or_fail + pop_query: the query's first solution, its bindings kept."""
    for _ in query.execute(agent, intention):
        return True
    return False


def while_test(query: Any, agent: Any, intention: Any) -> bool:
    """push_query + push_choicepoint + next_or_fail + pop_query of a ``while`` head; when the
    condition fails, the choicepoint is rolled back here (the loop's exit did it before)."""
    rt.push_choicepoint(agent, intention)
    for _ in query.execute(agent, intention):
        return True
    rt.pop_choicepoint(agent, intention)
    return False


def visit_formula(self: Any, ast_formula: Any) -> Any:
    if ast_formula.formula_type != agentspeak.FormulaType.term:
        return _original_visit_formula(self, ast_formula)
    query = ast_formula.term.accept(rt.BuildQueryVisitor(self.variables, self.actions, self.log))
    self.add_instr(functools.partial(query_once, query), loc=ast_formula.term.loc)
    return self.tail


def visit_while(self: Any, ast_while: Any) -> Any:
    query = ast_while.condition.accept(rt.BuildQueryVisitor(self.variables, self.actions, self.log))
    head = self.add_instr(functools.partial(while_test, query))
    done = rt.Instruction(rt.noop)
    head.failure = done
    ast_while.body.accept(self)
    self.add_instr(rt.pop_choicepoint).success = head
    self.tail = done
    return self.tail


applied = False


def apply() -> None:
    global applied
    rt.BuildInstructionsVisitor.visit_formula = visit_formula
    rt.BuildInstructionsVisitor.visit_while = visit_while
    applied = True


def require() -> None:
    """Refuse to compile plans without the fused instructions: the cycle counts, speed and
    scheduling documented for bdi-rl's plans are those of the patched compiler."""
    if not applied:
        raise RuntimeError(
            "python-agentspeak's plan compiler is not patched: call bdi_rl.patches.apply_all() at start-up"
        )
