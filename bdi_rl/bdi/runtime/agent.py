"""The agent: its state (state.py documents each field) and Jason's reasoning cycle composed
from its steps, each a function in the module of its job, bound here as a method.

Each rule of Jason's transition system (``TransitionSystem.reasoningCycle`` of Jason 3.2)
and the function implementing it on each cycle:

==================== ========================================= ===============================================
Jason's rule         :class:`Agent` (jason_cycle.py)           :class:`FastAgent` (reasoning.py)
==================== ========================================= ===============================================
the cycle            ``cycle``: sense, deliberate, act         ``cycle``: messages, events, one intention
ProcMsg              ``_proc_msg``: one message                ``_process_messages`` (kqml.py): every message
SelEv                ``_sel_ev``: the atomic intention's       ``_handle_events``: every event
                     event, else the first
RelPl, ApplPl,       ``_deliberate`` -> ``_select``            ``_handle_event`` -> ``_select``
SelAppl              (reasoning.py): the first applicable      (the same)
                     plan in source order
AddIM                ``_deliberate`` -> ``_push``: a new       ``_handle_event`` (a new intention),
                     intention, or on top of the poster's      ``achieve`` (``!g``: on top of its intention now)
ProcAct              ``_proc_act``: actions that ended         (``_resume_after_action``: back to the queue)
SelInt               ``_sel_int``: the atomic intention,       in ``cycle``: the atomic intention, else round
                     else the first                            robin
ExecInt              ``_exec_int``: one deed                   ``_run``: deeds until it blocks
ClrInt               ``_clr_int``, ``_frame_done``,            ``_clr_int``, ``_frame_done``
                     ``_intention_done``
==================== ========================================= ===============================================

Around the cycle: a deed's failure (failure.py: ``_fail``, ``_handle_failure``), belief
changes and their events (believing.py), ``.wait`` and held host actions (waiting.py),
messages (kqml.py), goal, intention and plan management (management.py, planlibrary.py),
the host's side (host.py) and tracing (tracing.py).
"""

from __future__ import annotations

import itertools
import random
import re
from collections import deque
from pathlib import Path
from typing import Any

from bdi_rl.bdi.runtime import believing, failure, host, jason_cycle, kqml, management, reasoning, tracing, waiting
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.beliefs import BeliefBase
from bdi_rl.bdi.runtime.compiler import CompiledPlan, Compiler
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.intention import Intention
from bdi_rl.bdi.runtime.listener import Listener, compiled_recording
from bdi_rl.bdi.runtime.parser import parse_file
from bdi_rl.bdi.runtime.queries import CompiledRule
from bdi_rl.bdi.runtime.reasoning import SLICE
from bdi_rl.bdi.runtime.state import AgentState, FastState, Host
from bdi_rl.bdi.runtime.stdlib import Actions
from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, UNBOUND, LVar, Struct, atom, is_ground, source, term_str
from bdi_rl.bdi.runtime.triggers import PlanLibrary
from bdi_rl.bdi.runtime.unify import Env, Scope, TermCompiler

_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*")


#: the reasoning cycles an agent may run (``[[agents]] cycle``)
CYCLE_NAMES = ("jason", "fast")


class Agent(AgentState):
    """An AgentSpeak agent running Jason's reasoning cycle (jason_cycle.py): one deed of one
    intention per cycle. :class:`FastAgent` runs the fast cycle. See failure.py for
    failure; docs/AGENTSPEAK.md for the host's view."""

    #: the reasoning cycle's name (``[[agents]] cycle``)
    CYCLE = "jason"
    #: compile ``while (c) { !g }`` as one instruction (the fast cycle only)
    FUSE = False

    def __init__(
        self,
        name: str,
        program: s.Program,
        actions: Actions | None = None,
        host: Host | None = None,
        *,
        start: bool = True,
        listener: Listener | None = None,
    ) -> None:
        """``listener``: who sees what the mind does, compiled into its plans for its life
        (tracing.py; :meth:`set_listener` wraps one set later)."""
        # the state (state.AgentState documents each field)
        self.name = name
        self.name_term = atom(name) if _ATOM.fullmatch(name) else name
        self.random = random.Random()
        self.actions = actions if actions is not None else Actions()
        self.host = host if host is not None else Host()
        self.listener = None
        self.options = None
        self.beliefs = BeliefBase()
        self.rules = {}
        self.plans = {}
        self.events = deque()
        self.running = deque()
        self.atomic = None
        self.atomic_event = None
        self.current = None
        self.selected = None
        self.focus = None
        self.tasks = []
        self.feedback = []
        self.suspended_ints = {}
        self.suspended_events = []
        self.held = {}
        self.failures = []
        self.inbox = []
        self.pending_asks = {}
        self.expired_asks = set()
        self.timers = []
        self.waiters = {}
        self.refused = 0
        self.cycles = 0
        self.budget = SLICE
        self.slice = SLICE
        self._seq = itertools.count(1)
        self._int_ids = itertools.count(1)
        self._plan_count = 0
        self._cells = {}
        recording = compiled_recording(listener)
        self._compiler = Compiler(self.actions, self._cells, self.FUSE, recording)
        if recording is not None:
            tracing.compile_listener(self, recording)
        self._program = program
        self.add_program(program, goals=False)
        self._initial_goals = program.goals
        if start:
            self.start()

    def add_program(self, program: s.Program, goals: bool = True, plan_source: Any = None) -> list[CompiledPlan]:
        """Compile and add ``program``'s rules and plans, then its beliefs (and goals)."""
        compiled = []
        placed: dict[int, list[tuple[tuple[str, int], CompiledRule]]] = {}  # rules by the number of beliefs before them
        for rule in program.rules:
            key, cr = self._compiler.rule(rule)
            self.rules.setdefault(key, []).append(cr)
            placed.setdefault(min(rule.position, len(program.beliefs)), []).append((key, cr))
        for plan in program.plans:
            self._plan_count += 1
            cp = self._compiler.plan(plan, self._plan_count)
            if plan_source is not None and cp.label is not None:
                cp.label = Struct(cp.label.functor, cp.label.args, cp.label.annots | {source(plan_source)})
            if cp.arity < 0:  # a variable trigger (-!G[error(E)])
                if type(self.plans) is not PlanLibrary:
                    self.plans = PlanLibrary(self.plans)
                self.plans.add_var_plan(cp)
            else:
                self.plans.setdefault((cp.ttype, cp.functor, cp.arity), []).append(cp)
            compiled.append(cp)
        # Jason adds the initial beliefs and rules last to first, each at the front: queries
        # see them in source order, facts and rules of one predicate interleaved
        for i in range(len(program.beliefs), -1, -1):
            for key, cr in reversed(placed.get(i, ())):
                self.beliefs.add_rule(key, cr)
            if i == 0:
                break
            value = _ground_literal(program.beliefs[i - 1], "a belief")
            annots = (
                value.annots
                if any(a.functor == "source" for a in value.annots if type(a) is Struct)
                else value.annots | ANNOTS_SELF
            )
            self._bb_add(value.functor, value.args, annots)
        if goals:
            for lit in program.goals:
                self.post_goal(_with_self(_goal_literal(lit)))
        return compiled

    def start(self) -> None:
        """Post the initial goals (a host may first add the percepts they depend on)."""
        goals, self._initial_goals = self._initial_goals, []
        for lit in goals:
            self.post_goal(_with_self(_goal_literal(lit)))

    @property
    def idle(self) -> bool:
        return not (self.running or self.events or self.inbox or self.tasks or self.feedback)

    def _new_intention(self) -> Intention:
        """An intention, numbered from 1 in this agent as Jason numbers them."""
        return Intention(next(self._int_ids))

    # The cycle's steps and the operations around them, each a function in the module of its
    # job (they call each other through the agent, so a listener's wrappers, instance
    # attributes shadowing these, see every call). Jason's rules: the module docstring.
    # -- Jason's reasoning cycle (jason_cycle.py) ----------------------------------------
    cycle = jason_cycle.cycle
    _proc_msg = jason_cycle._proc_msg  # ProcMsg
    _sel_ev = jason_cycle._sel_ev  # SelEv
    _deliberate = jason_cycle._deliberate  # RelPl, ApplPl, SelAppl, AddIM
    _select = reasoning._select  # RelPl, ApplPl, SelAppl (both cycles)
    _push = jason_cycle._push  # AddIM: a plan on an intention
    _proc_act = jason_cycle._proc_act  # ProcAct
    _sel_int = jason_cycle._sel_int  # SelInt
    _exec_int = jason_cycle._exec_int  # ExecInt
    _clr_int = jason_cycle._clr_int  # ClrInt
    _frame_done = jason_cycle._frame_done  # ClrInt: one plan leaves
    _intention_done = jason_cycle._intention_done  # ClrInt: the intention ends
    _tail_call = reasoning.tail_call
    _resume_now = jason_cycle._resume_now
    _resume_later = jason_cycle._resume_later
    _resume_after_action = jason_cycle._resume_after_action
    _post_internal = jason_cycle.post_internal
    achieve = jason_cycle.achieve
    test_goal = jason_cycle.test_goal
    post_goal = reasoning.post_goal
    act = reasoning.act
    # -- failure (failure.py) -----------------------------------------------------------
    _handle_failure = jason_cycle._handle_failure
    _fail = failure._fail
    _fail_goal_event = failure._fail_goal_event
    _drop = failure._drop
    # -- beliefs and their events (believing.py) ----------------------------------------
    _bb_add = believing._bb_add
    _bb_remove = believing._bb_remove
    add_belief = believing.add_belief
    remove_matching = believing.remove_matching
    replace_belief = believing.replace_belief
    # -- waiting (waiting.py) -----------------------------------------------------------
    wait = waiting.wait
    next_deadline = waiting.next_deadline
    _timer = waiting._timer
    _wake_timers = waiting._wake_timers
    _resume = waiting._resume
    _check_waiters = waiting._check_waiters
    _check_formulas = waiting._check_formulas
    _wait_timeout = waiting._wait_timeout
    hold = waiting.hold
    release = waiting.release
    fail_held = waiting.fail_held
    # -- messages (kqml.py) -------------------------------------------------------------
    send = kqml.send
    ask = kqml.ask
    _ask_timeout = kqml._ask_timeout
    _process_messages = kqml._process_messages
    _process_message = kqml._process_message
    _answer_arrived = kqml._answer_arrived
    _resume_ask = kqml._resume_ask
    _ask_test_goal = kqml._ask_test_goal
    _answer_ask = kqml._answer_ask
    _on_tell = kqml._on_tell
    _on_untell = kqml._on_untell
    _on_achieve = kqml._on_achieve
    _on_unachieve = kqml._on_unachieve
    _on_ask = kqml._on_ask
    _on_tell_how = kqml._on_tell_how
    _on_untell_how = kqml._on_untell_how
    _on_ask_how = kqml._on_ask_how
    # -- management (management.py) -----------------------------------------------------
    intention_term = management.intention_term
    # -- the host's side (host.py, tracing.py) ------------------------------------------
    run = host.run
    deliver = host.deliver
    add_percept = host.add_percept
    remove_percept = host.remove_percept
    replace_percept = host.replace_percept
    _replace_percept = host._replace_percept
    drop_percepts = host.drop_percepts
    believes = host.believes
    query = host.query
    belief_texts = host.belief_texts
    set_listener = tracing.set_listener


class FastAgent(Agent, FastState):
    """An agent running the fast cycle (reasoning.py): an intention runs until it blocks,
    a sub-goal's plan is pushed at once, a belief change's reaction is a new intention.
    Programs whose output depends on how intentions interleave can tell it from Jason's
    (docs/AGENTSPEAK.md)."""

    CYCLE = "fast"
    FUSE = True
    cycle = reasoning.cycle
    _handle_events = reasoning._handle_events
    _handle_event = reasoning._handle_event
    _push = reasoning._push
    _run = reasoning._run
    _frame_done = reasoning._frame_done
    _clr_int = reasoning._clr_int
    achieve = reasoning.achieve
    test_goal = reasoning.test_goal
    _handle_failure = failure._handle_failure

    def _resume_now(self, it: Intention) -> None:
        if it.dropped:
            return
        if it.suspended:  # Jason: back among the pending intentions, as suspended
            key = f"suspended-{it.id}"
            it.wait_for(atom(key), key, next(self._seq))
            self.suspended_ints[it.id] = it
            return
        self.running.append(it)

    _resume_later = _resume_now
    _resume_after_action = _resume_now

    def _post_internal(self, ttype: int, value: Struct, it: Intention) -> None:
        """An event of ``it`` (``.fail_goal``'s ``-!g``): its plan goes on ``it`` at once."""
        if not self._handle_failure(it, ttype, value, len(it.stack)):
            self._drop(
                it,
                {
                    "plan": None,
                    "trigger": term_str(value),
                    "error": "no_applicable",
                    "message": "",
                    "file": "",
                    "line": 0,
                },
            )


#: the agent class of each reasoning cycle
AGENT_CLASSES: dict[str, type[Agent]] = {"jason": Agent, "fast": FastAgent}


def _with_self(value: Struct) -> Struct:
    if any(type(a) is Struct and a.functor == "source" for a in value.annots):
        return value
    return Struct(value.functor, value.args, value.annots | ANNOTS_SELF)


def _ground_literal(lit: s.Lit, what: str) -> Struct:
    code = TermCompiler(Scope(), "<program>").term(lit)
    env: Env = []
    try:
        value = code.build(env)
    except IndexError:
        raise AslSyntaxError(f"line {lit.line}: {what} must be ground: {lit.name}") from None
    if type(value) is LVar or not is_ground(value):
        raise AslSyntaxError(f"line {lit.line}: {what} must be ground: {lit.name}")
    ground: Struct = value
    return ground


def _goal_literal(lit: s.Lit) -> Struct:
    """An initial goal; its variables are free (Jason: ``!g(X).`` runs ``+!g`` with X unbound)."""
    scope = Scope()
    code = TermCompiler(scope, "<program>").term(lit)
    goal: Struct = code.build([UNBOUND] * scope.size)
    return goal


def load_agent(
    path: str | Path,
    name: str | None = None,
    actions: Actions | None = None,
    host: Host | None = None,
    *,
    start: bool = True,
    cycle: str = "jason",
) -> Agent:
    """Parse and compile a plan file (AslSyntaxError names the file and line); ``cycle``
    ``"jason"`` (Jason's reasoning cycle) or ``"fast"``."""
    program = parse_file(path)
    return AGENT_CLASSES[cycle](name or Path(path).stem, program, actions, host, start=start)
