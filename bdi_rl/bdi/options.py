"""A learner's learned option selection: its mind's chooser among a goal's learned plans
(``bdi_rl.bdi.runtime.options``), with their values (``bdi_rl.rl.options``), the rewards its
env pays while each chosen plan runs, and the trace of every choice and every value learned.

Exploration follows the learner's own schedule (its epsilon now). A chosen plan's run is
found by its frame (the env its bindings are in) on one of the mind's intentions; it ends
when that frame leaves the intention: it finished, or handed over to the goal it posted last
(a recursive plan), or it failed (:meth:`LearnedOptions.failed`), or the episode ended. Its
end is noticed at the next env step, choice or episode end, before anything else is counted:
no env step comes in between, so the state it ended in is the one seen then.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.management import all_intentions
from bdi_rl.bdi.runtime.options import Indicator, LearnedPlan, state_text
from bdi_rl.bdi.runtime.terms import LVar, PartialList, Struct, deref, term_str
from bdi_rl.bdi.runtime.triggers import TRIGGER_TEXT
from bdi_rl.bdi.runtime.unify import Env
from bdi_rl.rl.options import OptionValues, PlanOutcome
from bdi_rl.rl.qlearning import QLearner
from bdi_rl.trace.kinds import PLAN_CHOICE, PLAN_VALUE, PlanChoiceData, PlanValueData
from bdi_rl.trace.tracer import Tracer

#: How a chosen plan's run ended, as ``plan.value`` says it.
ACHIEVED, FAILED, EPISODE_END = "achieved", "failed", "episode_end"


@dataclass
class _Run:
    """A chosen plan while it runs: where it was chosen, what it has earned so far."""

    goal: str
    state: str
    plan: str
    learned: tuple[Indicator, ...]
    env: Env | None = None
    it: Intention | None = None
    frame: Frame | None = None
    reward: float = 0.0
    steps: int = 0
    failed: bool = False


class LearnedOptions:
    """The mind's :class:`~bdi_rl.bdi.runtime.options.OptionChooser` for one learner."""

    def __init__(self, values: OptionValues, learner: QLearner, tracer: Tracer, seed: int) -> None:
        self.values = values
        self.learner = learner
        self.tracer = tracer
        self.rng = random.Random(seed)
        self.mind: Any = None
        """the runtime agent it chooses for (set when its plan library is loaded)"""
        self.runs: list[_Run] = []
        self.learning = True
        """False during a greedy evaluation through the plans: the best plan, nothing learned"""
        self.on_learned: Callable[[PlanOutcome], None] | None = None
        """told each plan run learned from (a team learner keeps them for its teammates)"""

    # -- the runtime's side: choices, the frames they start, failures -----------------------
    def choose(self, ag: Any, ttype: int, event: Struct, options: Sequence[LearnedPlan]) -> int:
        self.close_ended()
        learned = options[0].learned or ()
        goal = TRIGGER_TEXT[ttype] + goal_text(event)
        state = state_text(ag, learned)
        names = [plan.name for plan in options]
        epsilon = self.learner.epsilon if self.learning else 0.0
        choice = self.values.choose(goal, state, names, epsilon, self.rng)
        self.runs.append(_Run(goal, state, names[choice.index], learned))
        data: PlanChoiceData = {
            "goal": goal,
            "state": state,
            "options": names,
            "values": choice.values,
            "chosen": names[choice.index],
            "exploring": choice.exploring,
            "epsilon": epsilon,
        }
        self.tracer.emit(PLAN_CHOICE, data)
        return choice.index

    def started(self, plan: LearnedPlan, env: Env) -> None:
        run = self.runs[-1]
        run.plan = plan.name
        run.env = env

    def failed(self, it: Any, from_index: int) -> None:
        for run in self.runs:
            self._find(run)
            if (
                run.it is not None
                and run.it is it
                and run.frame is not None
                and _index(run.it, run.frame) >= from_index
            ):
                run.failed = True

    # -- the learner's side: rewards and episodes -----------------------------------------------
    def on_step(self, reward: float) -> None:
        """An env step paid ``reward``: every plan still running earns it, discounted."""
        self.close_ended()
        gamma = self.values.gamma
        for run in self.runs:
            run.reward += gamma**run.steps * reward
            run.steps += 1

    def on_episode_end(self, truncated: bool) -> None:
        """The episode ended: every plan still running ends with it (a truncated episode's
        go on from the state they were cut in; a finished one's are worth no more)."""
        self.close_ended()
        for run in self.runs:
            self._learn(run, EPISODE_END, done=not truncated)
        self.runs.clear()

    def close_ended(self) -> None:
        """Learn from every chosen plan that has ended since it was last looked at."""
        if not self.runs:
            return
        running = []
        for run in self.runs:
            self._find(run)
            if run.failed:
                self._learn(run, FAILED, done=False)
            elif run.frame is None or run.it is None or run.it.dropped or _index(run.it, run.frame) < 0:
                self._learn(run, ACHIEVED, done=False)
            else:
                running.append(run)
        self.runs = running

    def _find(self, run: _Run) -> None:
        """The frame the run's plan went on (found once, by its env), if it is on one."""
        if run.frame is not None or run.env is None:
            return
        for it, _ in all_intentions(self.mind):
            for frame in it.stack:
                if frame.env is run.env:
                    run.it, run.frame = it, frame
                    return
        run.env = None  # gone before it was looked for: it ended

    def _learn(self, run: _Run, outcome: str, done: bool) -> None:
        if not self.learning:
            return
        next_state = state_text(self.mind, run.learned)
        outcome_run = PlanOutcome(run.goal, run.state, run.plan, run.reward, run.steps, next_state, done)
        before, after = self.values.learn(outcome_run)
        if self.on_learned is not None:
            self.on_learned(outcome_run)
        data: PlanValueData = {
            "goal": run.goal,
            "state": run.state,
            "plan": run.plan,
            "outcome": outcome,
            "reward": run.reward,
            "steps": run.steps,
            "next_state": next_state,
            "before": before,
            "after": after,
        }
        self.tracer.emit(PLAN_VALUE, data)


def _index(it: Intention, frame: Frame) -> int:
    """Where ``frame`` is on ``it``'s stack, -1 when it is not."""
    for k, candidate in enumerate(it.stack):
        if candidate is frame:
            return k
    return -1


def goal_text(event: Struct) -> str:
    """A goal as a learned value's key: its literal without annotations, each unbound
    variable written ``_`` (its name differs at every posting)."""
    return _text(event, annots=False)


def _text(term: Any, annots: bool = True) -> str:
    term = deref(term)
    kind = type(term)
    if kind is LVar or kind is PartialList:
        return "_" if kind is LVar else term_str(term)
    if kind is Struct:
        if not term.args:
            return str(term.functor)
        return f"{term.functor}({', '.join(_text(a) for a in term.args)})"
    if kind is tuple:
        return "[" + ", ".join(_text(a) for a in term) + "]"
    return term_str(term)


def has_learned_plans(mind: Any) -> bool:
    """Whether any plan of ``mind`` is chosen by learned value (a mind of bdi-rl's runtime;
    the reference interpreter the tests compare with has none)."""
    plans = getattr(mind, "plans", None)
    return isinstance(plans, dict) and any(
        getattr(plan, "learned", None) is not None for group in plans.values() for plan in group
    )
