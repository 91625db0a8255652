"""The agent as the modules of its cycle see it: :class:`AgentState` (its state, each
field documented, and the operations the modules call on each other), :class:`FastState`
(what the fast cycle adds) and :class:`Host` (what the agent needs of its host).

The cycle's modules (jason_cycle.py, reasoning.py, failure.py, believing.py, waiting.py,
kqml.py, management.py, planlibrary.py, host.py, tracing.py) type their ``ag`` against
these protocols, so they depend on this module, not on agent.py, which composes them:
:class:`~bdi_rl.bdi.runtime.agent.Agent` is an AgentState whose operations are those
modules' functions, bound as methods (a call ``ag.x(...)`` is a plain attribute lookup, and
a listener's wrappers, set per instance, see it).
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.terms import Annots, Struct, Term, Terms, term_str
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime import syntax as s
    from bdi_rl.bdi.runtime.beliefs import BeliefBase
    from bdi_rl.bdi.runtime.compiler import CompiledPlan, Compiler
    from bdi_rl.bdi.runtime.intention import Frame, Intention
    from bdi_rl.bdi.runtime.listener import Listener
    from bdi_rl.bdi.runtime.options import OptionChooser
    from bdi_rl.bdi.runtime.queries import ActionCell, CompiledRule
    from bdi_rl.bdi.runtime.unify import Match

Event: TypeAlias = "tuple[int, Struct, Intention | None]"
"""An event: (trigger type, value, the intention that waits for it or None)."""
EventKey: TypeAlias = tuple[Any, ...]
"""What a ``.wait`` listens for: an event's (trigger type, functor, arity), or
``waiting.WAIT_FORMULA``, ``("formula",)``, for a formula (readers tell them apart by
comparing with it, which mypy does not narrow: hence no union)."""
Report: TypeAlias = dict[str, Any]
"""A dropped intention's report (its kind, message, plan, line...), JSON for the trace."""
Message: TypeAlias = tuple[Any, str, Any, Any, Any]
"""A message in the mailbox: (sender, performative, content, msg_id, in_reply_to)."""
PendingAsk: TypeAlias = "tuple[Intention, Frame, Match, str, Any]"
"""An ask sent and not answered: (the intention, its frame, the answer's pattern, the
performative, its timeout timer or None)."""
Timer: TypeAlias = list[Any]
"""A timer on the heap: [due, seq, action, live, owner], mutable (cancelled: live False)."""
Waiter: TypeAlias = list[Any]
"""A ``.wait`` for an event: [intention, frame, matcher, elapsed, started, timer, live]."""


class AgentState(Protocol):
    """An agent's mental state (Jason's ``Circumstance`` and its belief base and plan
    library) and the steps of its reasoning cycle (docs/AGENTSPEAK.md, "Reading the cycle")."""

    # -- who it is and its world -----------------------------------------------------------
    name: str
    """its name, as the host knows it"""
    name_term: Any
    """its name as a term (an atom when it reads as one; ``.my_name``, ``source(...)``)"""
    host: Host
    """the host: environment actions, messages out, printing, the clock, the MAS"""
    random: random.Random
    """the stream ``.random`` draws from (a host seeds it for runs that repeat)"""
    listener: Listener | None
    """who sees what the mind does (tracing.py wraps the methods it watches)"""
    options: OptionChooser | None
    """chooses among the applicable plans of a learned choice (options.py); None: the
    first applicable plan, always"""

    # -- beliefs and plans ---------------------------------------------------------------
    beliefs: BeliefBase
    """the belief base (facts, with the rules placed among them as Jason orders them)"""
    rules: dict[tuple[str, int], list[CompiledRule]]
    """the rules by (functor, arity)"""
    plans: dict[tuple[int, str, int], list[CompiledPlan]]
    """the plan library by (trigger type, functor, arity), in source order (a PlanLibrary
    once a plan has a variable trigger)"""
    _compiler: Compiler
    """compiles plans and formulas against the agent's action table"""
    _cells: dict[str, ActionCell]
    """per-agent boxes around host actions (the listener wraps them in one place)"""
    _plan_count: int
    """plans compiled so far (a plan's default label ``l__N``)"""

    # -- events and intentions (Jason's Circumstance) --------------------------------------
    events: deque[tuple[int, Struct, Intention | None]]
    """the event queue, E: (trigger type, value, the intention that waits for it or None)"""
    running: deque[Intention]
    """the intentions, I: the queue SelInt takes from"""
    atomic: Intention | None
    """the atomic intention: while it runs, no other does"""
    atomic_event: Event | None
    """the event an atomic intention waits for: selected before any other"""
    current: Intention | None
    """the intention this cycle runs"""
    selected: Event | None
    """the event selected in this cycle (Jason's SE)"""
    focus: Intention | None
    """the intention whose belief change is running: its event goes on it (sameFocus)"""
    tasks: list[Intention]
    """intentions to resume at the start of the next cycle (a ``.wait`` that ended)"""
    feedback: list[Intention]
    """intentions whose host action ended (Jason's feedback actions, taken at ProcAct)"""
    suspended_ints: dict[int, Intention]
    """intentions held by ``.suspend`` (none of them waits for anything else)"""
    suspended_events: list[Event]
    """events held by ``.suspend`` (Jason's pending events)"""
    held: dict[int, tuple[Intention, str]]
    """intentions a host action suspended, by id, with what each waits for (waiting.py)"""
    failures: list[Report]
    """the reports of intentions dropped for want of a failure plan"""

    # -- messages and waits ----------------------------------------------------------------
    inbox: list[Message]
    """the mailbox: (sender, performative, content, msg_id, in_reply_to), oldest first"""
    pending_asks: dict[str, PendingAsk]
    """asks sent and not yet answered, by message id"""
    expired_asks: set[str]
    """asks whose timeout came first (a late answer is dropped)"""
    timers: list[Timer]
    """timed waits and ask timeouts: a heap of [due, seq, action, live, owner]"""
    waiters: dict[EventKey, list[Waiter]]
    """``.wait`` on an event or a formula, by the event's key"""
    refused: int
    """messages refused: by the host's trust predicate, or a tellHow/askHow with no plan or trigger"""

    # -- counters ----------------------------------------------------------------------------
    cycles: int
    """reasoning cycles run"""
    budget: int
    """deeds left in this turn of the fast cycle"""
    slice: int
    """deeds a turn of the fast cycle gives an intention"""
    _seq: Iterator[int]
    """the order of waits and timers"""

    # -- the operations the modules call on each other (bound in agent.py) ----------------
    # the reasoning cycle, by Jason's rule (jason_cycle.py; the fast cycle's in reasoning.py)
    def cycle(self) -> bool: ...
    def _proc_msg(self) -> None: ...  # ProcMsg
    def _sel_ev(self) -> bool: ...  # SelEv
    def _deliberate(self, event: Event) -> bool: ...  # RelPl, ApplPl, SelAppl, AddIM
    def _select(self, ttype: int, value: Struct) -> tuple[CompiledPlan, Env]: ...  # ApplPl, SelAppl
    def _push(  # AddIM: a plan instance on an intention
        self, it: Intention, plan: CompiledPlan, env: Env, ttype: int, value: Struct, unwind_to: int
    ) -> Frame: ...
    def _proc_act(self) -> None: ...  # ProcAct
    def _sel_int(self) -> Intention | None: ...  # SelInt
    def _exec_int(self, it: Intention) -> bool: ...  # ExecInt
    def _clr_int(self, it: Intention) -> None: ...  # ClrInt
    def _frame_done(self, it: Intention, frame: Frame) -> None: ...  # ClrInt: one plan leaves
    def _intention_done(self, it: Intention) -> None: ...  # ClrInt: the intention ends

    # goals, intentions and actions
    def add_program(self, program: s.Program, goals: bool = True, plan_source: Any = None) -> list[CompiledPlan]: ...
    def _new_intention(self) -> Intention: ...
    def achieve(self, it: Intention, value: Struct) -> int: ...
    def test_goal(self, it: Intention, value: Struct, key: tuple[str, int], text: str) -> int: ...
    def post_goal(self, value: Struct) -> None: ...
    def _post_internal(self, ttype: int, value: Struct, it: Intention) -> None: ...
    def _tail_call(self, it: Intention, caller: Frame) -> None: ...
    def act(self, action: Struct) -> None: ...
    def _resume_now(self, it: Intention) -> None: ...
    def _resume_later(self, it: Intention) -> None: ...
    def _resume_after_action(self, it: Intention) -> None: ...

    # failure (failure.py; each cycle posts the failure event its own way)
    def _handle_failure(self, it: Intention, ttype: int, event: Struct, unwind_to: int) -> bool: ...
    def _fail(self, it: Intention, frame: Frame, pc: int, exc: PlanFailure) -> None: ...
    def _fail_goal_event(
        self, it: Intention, ttype: int, goal: Struct, exc: PlanFailure, caller: Frame | None, pc: int
    ) -> None: ...
    def _drop(self, it: Intention, report: Report) -> None: ...

    # beliefs and their events (believing.py)
    def _bb_add(self, functor: str, args: Terms, annots: Annots) -> Annots | None: ...
    def _bb_remove(self, functor: str, args: Terms, annots: Annots) -> Annots | None: ...
    def add_belief(self, value: Struct, at_end: bool = False) -> None: ...
    def remove_matching(self, key: tuple[str, int], args: list[Term], annots: list[Term], env: Env) -> None: ...
    def replace_belief(self, value: Struct) -> None: ...

    # waits (waiting.py)
    def wait(
        self, it: Intention, frame: Frame, ms: Any, key: EventKey | None, matcher: Any, elapsed: Any, what: Any = None
    ) -> None: ...
    def next_deadline(self) -> float | None: ...
    def _timer(self, ms: Any, action: Callable[[], None], owner: Intention | None = None) -> Timer: ...
    def _wake_timers(self) -> None: ...
    def _resume(self, it: Intention) -> None: ...
    def _check_waiters(self, key: EventKey, value: Struct) -> None: ...
    def _check_formulas(self) -> None: ...
    def _wait_timeout(self, key: EventKey, waiter: Waiter) -> None: ...

    # messages (kqml.py)
    def send(self, receiver: Any, performative: str, content: Any, msg_id: str | None = None) -> None: ...
    def ask(
        self,
        it: Intention,
        frame: Frame,
        receiver: Any,
        performative: str,
        content: Any,
        answer: Match,
        timeout_ms: Any,
    ) -> None: ...
    def _ask_timeout(self, msg_id: str) -> None: ...
    def _process_messages(self) -> None: ...
    def _process_message(self, sender: Any, performative: str, content: Any, msg_id: Any, in_reply_to: Any) -> None: ...
    def _answer_arrived(self, sender: Any, performative: str, content: Any, msg_id: str) -> None: ...
    def _resume_ask(self, it: Intention, frame: Frame, answer: Match, value: Any) -> None: ...
    def _ask_test_goal(self, sender: Any, content: Any, msg_id: Any) -> bool: ...
    def _answer_ask(self, it: Intention, answered: bool) -> None: ...
    def _on_ask(self, sender: Any, content: Any, msg_id: Any, every: bool = False) -> None: ...

    # the host's side (host.py)
    def replace_percept(self, functor: str, args: Terms) -> None: ...
    def _replace_percept(self, functor: str, args: Terms) -> None: ...
    def query(self, text: str) -> Iterable[dict[str, Any]]: ...


class FastState(AgentState, Protocol):
    """The fast cycle's agent (reasoning.py): an intention runs until it blocks."""

    def _handle_events(self) -> None: ...
    def _handle_event(self, ttype: int, value: Struct) -> None: ...
    def _run(self, it: Intention) -> None: ...


class Host:
    """What the runtime needs of its host; override what the host provides.

    The multi-agent system's actions (``.all_names``, ``.broadcast``, ``.stopMAS``,
    ``.create_agent``, ``.kill_agent``) ask the host, whose defaults are a MAS of one agent:
    the agent alone, ``.stopMAS`` ending :func:`run`, no agent to create."""

    stopped = False
    """set by ``.stopMAS`` (the default :meth:`stop_mas`): :func:`run` returns"""

    def act(self, agent: AgentState, action: Struct) -> bool | None:
        """An environment action (a body literal that is not an internal action); False fails it."""
        raise PlanFailure("action_failed", f"no environment for {term_str(action)}")

    def send(
        self,
        agent: AgentState,
        receiver: Any,
        performative: str,
        content: Any,
        *,
        msg_id: str | None = None,
        in_reply_to: str | None = None,
    ) -> None:
        """Deliver a message; a reply to an ask must come back with ``in_reply_to``."""
        raise PlanFailure("action_failed", "this host cannot send messages")

    def accept(self, agent: AgentState, sender: Any, performative: str, content: Any) -> bool:
        """The trust predicate: False refuses the message unread."""
        return True

    def print(self, agent: AgentState, text: str) -> None:
        print(f"[{agent.name}] {text}")

    def now(self) -> float:
        """Seconds, monotonic (``.wait`` and ask timeouts)."""
        return time.monotonic()

    def intention_failed(self, agent: AgentState, report: Report) -> None:
        """An intention was dropped (no failure plan); ``agent.failures`` keeps them too."""

    # -- the multi-agent system (stdlib_mas.py) -------------------------------------------
    def agent_names(self, agent: AgentState) -> list[Any]:
        """Every agent of the MAS, the caller included, as each names itself (``.my_name``)."""
        return [agent.name_term]

    def broadcast(self, agent: AgentState, performative: str, content: Any) -> None:
        """``.broadcast``: the message to every other agent of the MAS."""
        for name in self.agent_names(agent):
            if name != agent.name_term:
                self.send(agent, name, performative, content)

    def stop_mas(self, agent: AgentState) -> None:
        """``.stopMAS``: the whole MAS ends (as in Jason, the rest of the current cycle may
        still run)."""
        self.stopped = True

    def create_agent(self, agent: AgentState, name: str, source: str | None) -> str:
        """``.create_agent``: start an agent named ``name`` (or ``name_1``, ``name_2``... when
        taken) running the plan file ``source`` (beside ``agent``'s own when relative; None: no
        plans); returns the name it got. PlanFailure when it cannot."""
        raise PlanFailure("internal_action", f"cannot create agent {name}: this host runs one agent")

    def kill_agent(self, agent: AgentState, name: str) -> bool:
        """``.kill_agent``: stop the agent ``name`` for good; False when there is none."""
        if name != agent.name:
            return False
        self.stop_mas(agent)
        return True
