"""The values of plans as options: SMDP Q-learning over a goal's plans (Sutton, Precup and
Singh 1999), one table per agent.

A value is kept per (goal, abstract state, plan): the goal as its trigger reads
(``+!cross``, ``+!go(north_gate)``), the state as the agent's named beliefs read
(``pos(3,0)``), the plan by its label. When a chosen plan ends after ``k`` env steps that paid
the discounted reward ``R = r_1 + gamma r_2 + ... + gamma^(k-1) r_k``, its value in the state
it was chosen in moves towards ``R + gamma^k max_p' V(goal, s', p')`` (``s'`` the state it
ended in; no second term when the episode ended with it). What a plan never tried is worth
0, as an unvisited Q-table entry.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PlanOutcome:
    """One run of a chosen plan, as its value learns from it (and a teammate, told it)."""

    goal: str
    state: str
    """the abstract state it was chosen in"""
    plan: str
    reward: float
    """the discounted reward the env paid while it ran"""
    steps: int
    """env steps it ran"""
    next_state: str
    """the abstract state it ended in"""
    done: bool
    """the episode ended with it: nothing follows"""


@dataclass(frozen=True)
class Choice:
    """A choice made: the option's index, the options' values then, whether it explored."""

    index: int
    values: list[float]
    exploring: bool


class OptionValues:
    """Plan values by goal and abstract state, and the SMDP update of one plan's run."""

    def __init__(self, alpha: float, gamma: float, table: dict[str, dict[str, dict[str, float]]] | None = None) -> None:
        """``table``: values to go on from (a checkpoint's), copied."""
        self.alpha = alpha
        self.gamma = gamma
        self.table: dict[str, dict[str, dict[str, float]]] = {}
        """goal -> state -> plan -> value"""
        self.plans: dict[str, list[str]] = {}
        """goal -> every plan offered for it so far (what a bootstrap maximises over)"""
        for goal, states in (table or {}).items():
            self.table[goal] = {state: dict(row) for state, row in states.items()}
            known = self.plans[goal] = []
            for row in states.values():
                known.extend(plan for plan in row if plan not in known)

    def snapshot(self) -> dict[str, dict[str, dict[str, float]]]:
        """A copy of the values, as a checkpoint keeps them."""
        return {goal: {state: dict(row) for state, row in states.items()} for goal, states in self.table.items()}

    def values(self, goal: str, state: str, plans: Sequence[str]) -> list[float]:
        row = self.table.get(goal, {}).get(state, {})
        return [row.get(plan, 0.0) for plan in plans]

    def choose(self, goal: str, state: str, plans: Sequence[str], epsilon: float, rng: random.Random) -> Choice:
        """Epsilon-greedy over ``plans`` (the applicable ones, in source order): the first of
        the best when greedy, so a tie keeps Jason's order."""
        known = self.plans.setdefault(goal, [])
        known.extend(plan for plan in plans if plan not in known)
        values = self.values(goal, state, plans)
        if len(plans) > 1 and rng.random() < epsilon:
            return Choice(rng.randrange(len(plans)), values, True)
        return Choice(values.index(max(values)), values, False)

    def best(self, goal: str, state: str) -> float:
        """The value of ``state`` for ``goal``: its best plan's (0 for a goal never chosen for)."""
        plans = self.plans.get(goal)
        return max(self.values(goal, state, plans)) if plans else 0.0

    def learn(self, run: PlanOutcome) -> tuple[float, float]:
        """One SMDP Q-update for a run of a plan; returns its value before and after."""
        goal = run.goal
        known = self.plans.setdefault(goal, [])
        if run.plan not in known:  # a teammate's plan this agent was never offered yet
            known.append(run.plan)
        row = self.table.setdefault(goal, {}).setdefault(run.state, {})
        before = row.get(run.plan, 0.0)
        target = run.reward if run.done else run.reward + self.gamma**run.steps * self.best(goal, run.next_state)
        after = row[run.plan] = before + self.alpha * (target - before)
        return before, after
