"""The AgentSpeak interpreter, loaded with clear errors and instrumented for the trace.

python-agentspeak reports problems by logging them and raising a bare "1 error" exception,
and treats an unknown internal action only as a warning (the plan fails later, mid-run).
:func:`load_mind` turns both into one ``file:line:col: message`` error at load time.

:class:`TracedMind` records what the mind does (beliefs, goals, intentions, reasoning
cycles) through a :class:`~bdi_rl.trace.Tracer`; it knows nothing of SPADE or RL.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any, Callable

import agentspeak as asp
import agentspeak.lexer
import agentspeak.parser
import agentspeak.runtime as asp_runtime

from bdi_rl.bdi import fused
from bdi_rl.bdi.includes import include_problem
from bdi_rl.trace.events import (
    BELIEF_ADD,
    BELIEF_DEL,
    CYCLE,
    GOAL_ADD,
    INTENTION_END,
    INTENTION_FAIL,
    INTENTION_START,
    BeliefAddData,
    BeliefDelData,
    CycleData,
    GoalAddData,
    IntentionFailData,
    IntentionStartData,
    TraceLevel,
    clip_text,
)
from bdi_rl.trace.tracer import Tracer


_ASL_LOGGERS = ("agentspeak.runtime", "agentspeak.parser", "agentspeak.lexer", "agentspeak.stdlib")


class AslError(ValueError):
    """A plan library that cannot be loaded: ``file:line:col: message``."""


def _record_text(record: logging.LogRecord) -> str:
    loc = record.__dict__.get("loc")
    message = record.getMessage().splitlines()[0] if record.getMessage() else "error"
    if loc is not None:
        return f"{loc.filename}:{loc.lineno}:{loc.startcol + 1}: {message}"
    return message


class _Capture(logging.Handler):
    """Collects the interpreter's diagnostics instead of printing annotated excerpts."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def last_error(self) -> str | None:
        for record in reversed(self.records):
            if record.levelno >= logging.ERROR:
                return _record_text(record)
        return None


_capture = _Capture()


def quiet_interpreter() -> _Capture:
    """Route python-agentspeak's log to one capturing handler (idempotent)."""
    for name in _ASL_LOGGERS:
        logger = asp.get_logger(name)
        for handler in list(logger.handlers):
            if handler is not _capture:
                logger.removeHandler(handler)
        if _capture not in logger.handlers:
            logger.addHandler(_capture)
        logger.propagate = False
    return _capture


def literal_text(term: Any) -> str:
    """A literal as AgentSpeak source, without its annotations."""
    if isinstance(term, asp.Literal):
        try:
            return _literal_text(term.functor, term.args)
        except TypeError:  # unhashable arguments: no cache
            return asp.asl_repr(asp.Literal(term.functor, term.args))
    return asp.asl_repr(term)


@functools.lru_cache(maxsize=1 << 16)
def _literal_text(functor: str, args: tuple) -> str:
    # Percepts repeat (state(5), pos(1, 1) ...) and asl_repr is recursive: cache the text.
    return asp.asl_repr(asp.Literal(functor, args))


class GroundLiteral(asp.Literal):
    """A literal built from values only (a percept): freezing or grounding it in a scope
    gives an equal literal, so it returns itself. The interpreter freezes every term it
    is told (``call``); for the reactive ``outcome`` percept that copying was ~30 % of the
    cost of a belief update in the episode-mode profile (BENCHMARKS.md)."""

    def freeze(self, scope: Any, memo: Any) -> "GroundLiteral":
        return self

    def grounded(self, scope: Any) -> "GroundLiteral":
        return self


def literal_source(term: Any) -> str | None:
    """The ``source(...)`` annotation of a literal, if it has one."""
    annots = getattr(term, "annots", None)
    if not annots:
        return None
    try:
        return _annots_source(annots)
    except TypeError:  # unhashable annotations: no cache
        return _annots_source.__wrapped__(annots)


@functools.lru_cache(maxsize=1 << 10)
def _annots_source(annots: frozenset) -> str | None:
    # Every percept carries the same annotation set: its source is worked out once.
    for annot in annots:
        if isinstance(annot, asp.Literal) and annot.functor == "source" and annot.args:
            return asp.asl_str(annot.args[0])
    return None


def plan_label(plan: Any) -> str:
    """``@label`` of a plan, or its trigger when it has none."""
    if plan.annotation is not None:
        return str(getattr(plan.annotation, "functor", plan.annotation))
    return f"{plan.trigger.value}{plan.goal_type.value}{plan.head.functor}/{len(plan.head.args)}"


class _SelectionProbe:
    """Wraps a plan's context query to note which plan the interpreter selects."""

    __slots__ = ("plan", "query")

    def __init__(self, plan: Any, query: Any) -> None:
        self.plan = plan
        self.query = query

    def execute(self, agent: "TracedMind", intention: Any):
        for _ in self.query.execute(agent, intention):
            agent.selected_plan = self.plan
            yield

    def __str__(self) -> str:
        return str(self.query)


_ADDITION, _REMOVAL = asp.Trigger.addition, asp.Trigger.removal


#: Deepest intention stack (nested sub-goals) a plan may build before the sub-goal fails.
MAX_SUBGOAL_DEPTH = 10_000
#: ``intention.fail`` events for the frames of one failed intention, at most.
_FAILED_FRAMES_TRACED = 20


class TracedMind(asp_runtime.Agent):
    """An AgentSpeak agent whose mind changes are written to a tracer.

    Intentions take turns (round-robin, one reasoning cycle each) as in Jason. A failing
    plan (python-agentspeak has no failure plans) drops its whole intention and is
    recorded as ``intention.fail`` instead of killing the agent.
    """

    def __init__(self, env: Any, name: str, tracer: Tracer | None = None) -> None:
        fused.require()  # patched at start-up: bdi_rl.patches.apply_all
        super().__init__(env, name)
        self.tracer = tracer
        self.selected_plan: Any = None
        self.cycles = 0
        self.failures: list[str] = []
        self._plan_keys: dict[tuple[Any, str, int], bool] = {}  # (trigger, functor, arity): any plan?

    # -- beliefs ---------------------------------------------------------------
    def add_belief(self, term: Any, scope: Any) -> None:
        super().add_belief(term, scope)
        tracer = self.tracer
        if tracer is not None and tracer.level >= TraceLevel.STEP:
            grounded = term.grounded(scope)
            added: BeliefAddData = {
                "belief": clip_text(literal_text(grounded)),
                "source": literal_source(grounded) or "self",
            }
            tracer.emit(BELIEF_ADD, added)

    def remove_belief(self, term: Any, intention: Any) -> bool:
        removed = self._matching_belief(term, intention)
        found = super().remove_belief(term, intention)
        tracer = self.tracer
        if found and tracer is not None and tracer.level >= TraceLevel.STEP:
            shown = removed if removed is not None else asp.evaluate(term, intention.scope)
            deleted: BeliefDelData = {
                "belief": clip_text(literal_text(shown)),
                "source": literal_source(shown) or "self",
            }
            tracer.emit(BELIEF_DEL, deleted)
        return found

    def _matching_belief(self, term: Any, intention: Any) -> Any:
        if self.tracer is None or self.tracer.level < TraceLevel.STEP:
            return None
        # The interpreter's own matching (remove_belief): the term's variables are bound in
        # the intention's scope, so unify there, then undo whatever the probe bound.
        scope, stack = intention.scope, intention.stack
        try:
            evaluated = asp.evaluate(term, scope)
            for belief in self.beliefs[evaluated.literal_group()]:
                choicepoint = object()
                stack.append(choicepoint)
                matched = asp.unifies_annotated(evaluated, belief, scope, stack)
                asp.reroll(scope, stack, choicepoint)
                if matched:
                    return belief
        except Exception:  # noqa: BLE001 - the interpreter reports the real error
            return None
        return None

    # -- goals and intentions --------------------------------------------------
    def add_plan(self, plan: Any) -> None:
        plan.context = _SelectionProbe(plan, plan.context)
        super().add_plan(plan)
        self._plan_keys.clear()

    def _has_belief_plan(self, trigger: Any, functor: str, arity: int) -> bool:
        """Whether a plan reacts to ``trigger`` of a belief ``functor/arity`` (cached: the
        plan table's keys are tuples of enums, whose Python-level hashing showed in profiles)."""
        key = (trigger, functor, arity)
        known = self._plan_keys.get(key)
        if known is None:
            known = self._plan_keys[key] = bool(self.plans.get((trigger, asp.GoalType.belief, functor, arity)))
        return known

    def call(self, trigger, goal_type, term, calling_intention, delayed=False):  # type: ignore[override]
        if not delayed and goal_type is asp.GoalType.achievement and trigger is _ADDITION:
            self._check_depth(term, calling_intention)
        tracer = self.tracer
        tracing = tracer is not None and tracer.level >= TraceLevel.STEP
        if tracing and goal_type == asp.GoalType.achievement and trigger == asp.Trigger.addition:
            frozen = asp.freeze(term, calling_intention.scope, {})
            goal: GoalAddData = {"goal": clip_text(literal_text(frozen)), "source": literal_source(frozen) or "self"}
            tracer.emit(GOAL_ADD, goal)
        self.selected_plan = None
        result = super().call(trigger, goal_type, term, calling_intention, delayed)
        plan = self.selected_plan
        if plan is not None:
            self.selected_plan = None
            if tracing:
                try:
                    source = literal_source(asp.freeze(term, calling_intention.scope, {}))
                except Exception:  # noqa: BLE001 - an unbound term: no source to show
                    source = None
                started: IntentionStartData = {
                    "trigger": clip_text(_trigger_text(trigger, goal_type, term, calling_intention)),
                    "plan": plan_label(plan),
                    "source": source or "self",
                }
                tracer.emit(INTENTION_START, started)
            new = self._newest_intention(plan)
            if new is not None:
                new.plan = plan
        return result

    def _check_depth(self, term: Any, calling_intention: Any) -> None:
        """Fail a sub-goal nested deeper than :data:`MAX_SUBGOAL_DEPTH`: python-agentspeak
        keeps every frame of ``+!g <- !g.``, which grew by ~50 MB a second until memory ran out."""
        for stack in self.intentions:
            if stack and stack[-1] is calling_intention:
                if len(stack) >= MAX_SUBGOAL_DEPTH:
                    goal = _trigger_text(_ADDITION, asp.GoalType.achievement, term, calling_intention)
                    raise asp.AslError(f"{goal}: more than {MAX_SUBGOAL_DEPTH} nested sub-goals (endless recursion?)")
                return

    def _newest_intention(self, plan: Any) -> Any:
        for stack in reversed(self.intentions):
            if stack and stack[-1].instr is plan.body:
                return stack[-1]
        return None

    def runnable_stack(self) -> Any:
        """The intention stack the next ``step`` will run (same rule as the interpreter)."""
        for stack in self.intentions:
            if stack:
                waiter = stack[-1].waiter
                if waiter is None or waiter.poll(self.env):
                    return stack
        return None

    def step(self) -> bool:  # type: ignore[override]
        stack = self.runnable_stack()
        if stack is None:
            return super().step()
        top = stack[-1]
        instr = top.instr
        finishing = instr is None
        tracer = self.tracer
        try:
            progressed = super().step()
        except Exception:  # noqa: BLE001 - a failing plan drops its intention, as in Jason
            self._fail(stack)
            return True
        self.cycles += 1
        intentions = self.intentions
        if len(intentions) > 1 and stack in intentions:
            # Round-robin, as in Jason: the interpreter always runs the first runnable
            # intention, so a long loop would starve every reaction (+outcome(goal) ...).
            intentions.remove(stack)
            intentions.append(stack)
        if tracer is not None and tracer.level >= TraceLevel.STEP:
            if finishing and getattr(top, "plan", None) is not None:
                tracer.emit(INTENTION_END, {"plan": plan_label(top.plan)})
            if tracer.level >= TraceLevel.CYCLE:
                plan = getattr(top, "plan", None)
                loc = None if finishing else _instruction_loc(instr)
                cycle: CycleData = {
                    "n": self.cycles,
                    "plan": plan_label(plan) if plan is not None else None,
                    "depth": len(stack),
                    "line": loc.lineno if loc is not None else None,
                    "intentions": len(self.intentions),
                }
                tracer.emit(CYCLE, cycle)
        return progressed

    def _fail(self, stack: Any) -> None:
        error = _capture.last_error() or "plan failure"
        _capture.records.clear()
        self.failures.append(error)
        if stack in self.intentions:
            self.intentions.remove(stack)
        if self.tracer is not None:
            # One event per failed frame, innermost first; of a deep (recursive) stack, the
            # innermost few and the outermost tell the story.
            frames = list(reversed(stack))
            if len(frames) > _FAILED_FRAMES_TRACED:
                frames = [*frames[: _FAILED_FRAMES_TRACED - 1], frames[-1]]
            for intention in frames:
                plan = getattr(intention, "plan", None)
                failed: IntentionFailData = {"plan": plan_label(plan) if plan is not None else None, "error": error}
                self.tracer.emit(INTENTION_FAIL, failed)

    def replace_percept(self, term: Any) -> None:
        """Make ``term`` the only belief of its functor/arity, as a percept update.

        The interpreter's own path (``call``) freezes, unifies and scans plans and
        intentions for every change; percepts change every env step, so when no plan
        and no waiting intention can react to this belief the set is edited directly
        (and traced the same way).
        """
        key = (term.functor, len(term.args))
        group = self.beliefs[key]
        if term in group:
            return
        reactive = (
            self._has_belief_plan(_ADDITION, *key)
            or self._has_belief_plan(_REMOVAL, *key)
            or any(True for _ in self.waiters())
        )
        self._remove_all(group, through_interpreter=reactive)
        if reactive:
            self.call(asp.Trigger.addition, asp.GoalType.belief, term, asp_runtime.Intention())
            return
        group.add(term)
        tracer = self.tracer
        if tracer is not None and tracer.level >= TraceLevel.STEP:
            added: BeliefAddData = {"belief": clip_text(literal_text(term)), "source": literal_source(term) or "self"}
            tracer.emit(BELIEF_ADD, added)

    def drop_percepts(self, functor: str, arity: int) -> None:
        """Remove every belief ``functor/arity``: through the interpreter if a plan or a
        waiting intention may react, else directly (traced the same way; the interpreter's
        path unifies each belief against the base and cost ~5 % of an episode-mode run)."""
        group = self.beliefs.get((functor, arity))
        if group:
            reactive = self._has_belief_plan(_REMOVAL, functor, arity) or any(True for _ in self.waiters())
            self._remove_all(group, through_interpreter=reactive)

    def _remove_all(self, group: set, through_interpreter: bool) -> None:
        """Empty a belief group: through the interpreter (plans may react), or directly with
        the same ``belief.del`` events."""
        if through_interpreter:
            for old in list(group):
                self.call(asp.Trigger.removal, asp.GoalType.belief, old, asp_runtime.Intention())
            return
        tracer = self.tracer
        tracing = tracer is not None and tracer.level >= TraceLevel.STEP
        for old in list(group):
            group.discard(old)
            if tracing and tracer is not None:
                deleted: BeliefDelData = {
                    "belief": clip_text(literal_text(old)),
                    "source": literal_source(old) or "self",
                }
                tracer.emit(BELIEF_DEL, deleted)

    def belief_texts(self) -> list[str]:
        """The belief base as ``literal[source]`` strings (for snapshots and tests)."""
        return sorted(str(b) for group in self.beliefs.values() for b in group)


def _instruction_loc(instr: Any) -> Any:
    """Source location of an instruction (a plan's first one is a no-op without one)."""
    for _ in range(3):
        if instr is None:
            return None
        if instr.loc is not None:
            return instr.loc
        instr = instr.success
    return None


def _trigger_text(trigger: Any, goal_type: Any, term: Any, intention: Any) -> str:
    try:
        shown = literal_text(asp.freeze(term, intention.scope, {}))
    except Exception:  # noqa: BLE001
        shown = str(term)
    return f"{trigger.value}{goal_type.value}{shown}"


def load_mind(
    path: str | Path,
    actions: asp.Actions,
    name: str,
    tracer: Tracer | None = None,
    mind_cls: Callable[..., TracedMind] = TracedMind,
    prepare: Callable[[TracedMind], None] | None = None,
) -> TracedMind:
    """Parse ``path`` into a TracedMind, or raise AslError naming the file and line.

    ``prepare`` runs after the file's beliefs and before its initial goals (percepts)."""
    capture = quiet_interpreter()
    capture.records.clear()
    path = Path(path)
    problem = include_problem(path)  # an included file's errors, named (includes.py)
    if problem is not None:
        raise AslError(problem)
    env = asp_runtime.Environment()
    try:
        with open(path) as source:
            log = asp.Log(asp.get_logger("agentspeak.runtime"), 3)
            ast = agentspeak.parser.parse(source.name, agentspeak.lexer.TokenStream(source, log), log)
            log.throw()
            # Initial goals choose their plan the moment they are posted: hold them back
            # until ``prepare`` has given the mind what it perceives from the start.
            goals, ast.goals = ast.goals, []
            _, mind = env.build_agent_from_ast(
                source, ast, actions, agent_cls=lambda e, n: mind_cls(e, n, tracer), name=name
            )
            if prepare is not None:
                prepare(mind)
            for goal in goals:
                term = goal.atom.accept(asp_runtime.BuildTermVisitor({}))
                mind.call(asp.Trigger.addition, asp.GoalType.achievement, term, asp_runtime.Intention(), delayed=True)
    except FileNotFoundError:
        raise AslError(f"{path}: no such plan file") from None
    except OSError as exc:
        raise AslError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise AslError(f"{path}: not a text file") from None
    except asp.AggregatedError:
        raise AslError(capture.last_error() or f"{path}: cannot be parsed") from None
    except Exception as exc:  # noqa: BLE001 - python-agentspeak raises bare errors too
        detail = capture.last_error() or f"{path}: {exc}"
        raise AslError(detail) from None
    for record in capture.records:
        if record.levelno >= logging.WARNING and "no such action" in record.getMessage():
            raise AslError(f"{_record_text(record)} (unknown internal action)")
    capture.records.clear()
    return mind


def check_asl(path: str | Path, actions: asp.Actions) -> TracedMind:
    """Load ``path`` once without tracing, to report errors before a run starts."""
    return load_mind(path, actions, name="check")
