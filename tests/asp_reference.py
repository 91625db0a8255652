"""python-agentspeak 0.2.2 as bdi-rl ran it before its own runtime (issue 16), kept for
comparison only: the conformance suite, tests/test_runtime_learner.py and
bench/bench_runtime.py run the same plans on it.

What bdi-rl added to it: fused body queries and ``while`` tests (one instruction each, not
three and five), intentions taking turns, a failing plan dropping only its intention,
percepts as ground literals swapped without the interpreter when no plan reacts to them.
No tracing. :func:`load` patches the plan compiler for the life of the process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import agentspeak as asp
import agentspeak.lexer
import agentspeak.parser
import agentspeak.runtime as rt
import agentspeak.stdlib

from bdi_rl.bdi.runtime.terms import Struct

PERCEPT = frozenset([asp.Literal("source", (asp.Literal("percept"),))])


# -- fused instructions ---------------------------------------------------------------------
def _query_once(query: Any, agent: Any, intention: Any) -> bool:
    for _ in query.execute(agent, intention):
        return True
    return False


def _while_test(query: Any, agent: Any, intention: Any) -> bool:
    rt.push_choicepoint(agent, intention)
    for _ in query.execute(agent, intention):
        return True
    rt.pop_choicepoint(agent, intention)
    return False


_visit_formula = rt.BuildInstructionsVisitor.visit_formula


def _fused_formula(self: Any, ast_formula: Any) -> Any:
    if ast_formula.formula_type != agentspeak.FormulaType.term:
        return _visit_formula(self, ast_formula)
    query = ast_formula.term.accept(rt.BuildQueryVisitor(self.variables, self.actions, self.log))
    self.add_instr(functools.partial(_query_once, query), loc=ast_formula.term.loc)
    return self.tail


def _fused_while(self: Any, ast_while: Any) -> Any:
    query = ast_while.condition.accept(rt.BuildQueryVisitor(self.variables, self.actions, self.log))
    head = self.add_instr(functools.partial(_while_test, query))
    done = rt.Instruction(rt.noop)
    head.failure = done
    ast_while.body.accept(self)
    self.add_instr(rt.pop_choicepoint).success = head
    self.tail = done
    return self.tail


# -- the agent ---------------------------------------------------------------------------------
class GroundLiteral(asp.Literal):
    """A percept: freezing or grounding it gives itself (no copy per belief update)."""

    def freeze(self, scope: Any, memo: Any) -> GroundLiteral:
        return self

    def grounded(self, scope: Any) -> GroundLiteral:
        return self


def to_asp(value: Any) -> Any:
    """A runtime term as a python-agentspeak term."""
    if type(value) is Struct:
        return asp.Literal(value.functor, tuple(map(to_asp, value.args)))
    if type(value) is tuple:
        return tuple(map(to_asp, value))
    return value


@functools.lru_cache(maxsize=1 << 14)
def percept(functor: str, args: tuple) -> GroundLiteral:
    return GroundLiteral(functor, tuple(map(to_asp, args)), PERCEPT)


class Mind(rt.Agent):
    """Round-robin intentions, failures that drop one intention, fast percepts; the percept
    API of bdi.runtime's agent (``replace_percept(functor, args)``, ``drop_percepts``)."""

    def __init__(self, env: Any, name: str) -> None:
        super().__init__(env, name)
        self.failures: list[str] = []
        self._plan_keys: dict[tuple, bool] = {}  # enum-tuple hashing is Python code: cached

    def step(self) -> bool:  # type: ignore[override]
        stack = next((s for s in self.intentions if s and (s[-1].waiter is None or s[-1].waiter.poll(self.env))), None)
        try:
            progressed = super().step()
        except Exception as exc:  # noqa: BLE001 - a failing plan drops its intention
            self.failures.append(str(exc))
            if stack in self.intentions:
                self.intentions.remove(stack)
            return True
        if len(self.intentions) > 1 and stack in self.intentions:
            self.intentions.remove(stack)
            self.intentions.append(stack)
        return progressed

    def _reactive(self, trigger: Any, key: tuple[str, int]) -> bool:
        known = self._plan_keys.get((trigger, *key))
        if known is None:
            known = self._plan_keys[(trigger, *key)] = bool(self.plans.get((trigger, asp.GoalType.belief, *key)))
        return known or any(True for _ in self.waiters())

    def replace_percept(self, functor: str, args: tuple) -> None:
        term = percept(functor, args)
        key = (functor, len(args))
        group = self.beliefs[key]
        if term in group:
            return
        reactive = self._reactive(asp.Trigger.addition, key) or self._reactive(asp.Trigger.removal, key)
        for old in list(group):
            if reactive:
                self.call(asp.Trigger.removal, asp.GoalType.belief, old, rt.Intention())
            else:
                group.discard(old)
        if reactive:
            self.call(asp.Trigger.addition, asp.GoalType.belief, term, rt.Intention())
        else:
            group.add(term)

    def drop_percepts(self, functor: str, arity: int) -> None:
        group = self.beliefs.get((functor, arity))
        if group:
            reactive = self._reactive(asp.Trigger.removal, (functor, arity))
            for old in list(group):
                if reactive:
                    self.call(asp.Trigger.removal, asp.GoalType.belief, old, rt.Intention())
                else:
                    group.discard(old)

    def run(self) -> None:
        while self.step():
            pass


def actions() -> asp.Actions:
    """python-agentspeak's standard actions (its ``.print`` among them)."""
    return asp.Actions(agentspeak.stdlib.actions)


def load(path: str | Path, acts: asp.Actions, name: str, prepare: Callable[[Mind], None] | None = None) -> Mind:
    """``path`` on python-agentspeak with the fused compiler; ``prepare`` runs before the
    initial goals are posted (percepts)."""
    rt.BuildInstructionsVisitor.visit_formula = _fused_formula
    rt.BuildInstructionsVisitor.visit_while = _fused_while
    env = rt.Environment()
    with open(path) as source:
        log = asp.Log(asp.get_logger("agentspeak.runtime"), 3)
        ast = agentspeak.parser.parse(source.name, agentspeak.lexer.TokenStream(source, log), log)
        log.throw()
        goals, ast.goals = ast.goals, []
        _, mind = env.build_agent_from_ast(source, ast, acts, agent_cls=Mind, name=name)
    if prepare is not None:
        prepare(mind)
    for goal in goals:
        term = goal.atom.accept(rt.BuildTermVisitor({}))
        mind.call(asp.Trigger.addition, asp.GoalType.achievement, term, rt.Intention(), delayed=True)
    return mind
