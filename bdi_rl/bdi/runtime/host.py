"""The host's side: :class:`Host` (what the runtime needs of its host) and the agent's
methods a host calls (running cycles, messages in, percepts, queries).

The functions taking ``ag`` are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s methods (bound in
agent.py); they call each other through ``ag`` so that a listener's wrappers see every call.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterable

from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.parser import parse_expr
from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, UNBOUND, Struct, from_python, resolve, term_str
from bdi_rl.bdi.runtime.triggers import ADD_BEL, DEL_BEL
from bdi_rl.bdi.runtime.unify import Scope, TermCompiler

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.agent import Agent


class Host:
    """What the runtime needs of its host; override what the host provides.

    The multi-agent system's actions (``.all_names``, ``.broadcast``, ``.stopMAS``,
    ``.create_agent``, ``.kill_agent``) ask the host, whose defaults are a MAS of one agent:
    the agent alone, ``.stopMAS`` ending :func:`run`, no agent to create."""

    stopped = False
    """set by ``.stopMAS`` (the default :meth:`stop_mas`): :func:`run` returns"""

    def act(self, agent: "Agent", action: Struct) -> bool | None:
        """An environment action (a body literal that is not an internal action); False fails it."""
        raise PlanFailure("action_failed", f"no environment for {term_str(action)}")

    def send(
        self,
        agent: "Agent",
        receiver: Any,
        performative: str,
        content: Any,
        *,
        msg_id: str | None = None,
        in_reply_to: str | None = None,
    ) -> None:
        """Deliver a message; a reply to an ask must come back with ``in_reply_to``."""
        raise PlanFailure("action_failed", "this host cannot send messages")

    def accept(self, agent: "Agent", sender: Any, performative: str, content: Any) -> bool:
        """The trust predicate: False refuses the message unread."""
        return True

    def print(self, agent: "Agent", text: str) -> None:
        print(f"[{agent.name}] {text}")

    def now(self) -> float:
        """Seconds, monotonic (``.wait`` and ask timeouts)."""
        return time.monotonic()

    def intention_failed(self, agent: "Agent", report: dict) -> None:
        """An intention was dropped (no failure plan); ``agent.failures`` keeps them too."""

    # -- the multi-agent system (stdlib_mas.py) -------------------------------------------
    def agent_names(self, agent: "Agent") -> list[Any]:
        """Every agent of the MAS, the caller included, as each names itself (``.my_name``)."""
        return [agent.name_term]

    def broadcast(self, agent: "Agent", performative: str, content: Any) -> None:
        """``.broadcast``: the message to every other agent of the MAS."""
        for name in self.agent_names(agent):
            if name != agent.name_term:
                self.send(agent, name, performative, content)

    def stop_mas(self, agent: "Agent") -> None:
        """``.stopMAS``: the whole MAS ends (as in Jason, the rest of the current cycle may
        still run)."""
        self.stopped = True

    def create_agent(self, agent: "Agent", name: str, source: str | None) -> str:
        """``.create_agent``: start an agent named ``name`` (or ``name_1``, ``name_2``... when
        taken) running the plan file ``source`` (beside ``agent``'s own when relative; None: no
        plans); returns the name it got. PlanFailure when it cannot."""
        raise PlanFailure("internal_action", f"cannot create agent {name}: this host runs one agent")

    def kill_agent(self, agent: "Agent", name: str) -> bool:
        """``.kill_agent``: stop the agent ``name`` for good; False when there is none."""
        if name != agent.name:
            return False
        self.stop_mas(agent)
        return True


def run(ag: Agent, max_cycles: int | None = None, sleep: bool = True) -> int:
    """Cycles until idle (no events, messages or runnable intentions; with ``sleep``,
    also waits out timed waits). Returns the cycles run."""
    n = 0
    while (max_cycles is None or n < max_cycles) and not ag.host.stopped:
        if ag.cycle():
            n += 1
            continue
        deadline = ag.next_deadline()
        if deadline is None or not sleep:
            blocked = ag.atomic is not None and ag.atomic not in ag.running  # only time can help
            if not blocked and (ag.inbox or ag.events or ag.tasks):
                continue
            break
        delay = deadline - ag.host.now()
        if delay > 0:
            time.sleep(delay)
    return n


def deliver(
    ag: Agent, sender: Any, performative: str, content: Any, msg_id: str | None = None, in_reply_to: str | None = None
) -> None:
    """A message for the next cycle. ``content`` is a term, or text that is parsed."""
    if isinstance(content, str) and performative not in ("tellHow", "askHow"):
        content = resolve(parse_value(content))
    ag.inbox.append((sender, performative, content, msg_id, in_reply_to))


def add_percept(ag: Agent, functor: str, *args: Any) -> None:
    ag._bb_add(functor, tuple(from_python(a) for a in args), ANNOTS_PERCEPT)


def remove_percept(ag: Agent, functor: str, *args: Any) -> None:
    ag._bb_remove(functor, tuple(from_python(a) for a in args), ANNOTS_PERCEPT)


def replace_percept(ag: Agent, functor: str, args: tuple) -> None:
    """Make ``functor(args)`` the only percept ``functor/len(args)`` (the others lose
    their ``source(percept)``).

    The usual percept (``state(S)``: one belief, only the env's) is swapped in its
    group in place, raising the same -/+ events as the general path; a listener
    replaces this method with the general one, which goes through the traced
    ``_bb_remove``/``_bb_add``."""
    group = ag.beliefs.groups.get((functor, len(args)))
    if group and len(group) == 1:
        [(old, annots)] = group.items()
        if annots is ANNOTS_PERCEPT:
            if old == args:
                return
            del group[old]
            group[args] = ANNOTS_PERCEPT
            n = len(args)
            plans = ag.plans
            if (DEL_BEL, functor, n) in plans:
                ag.events.append((DEL_BEL, Struct(functor, old, ANNOTS_PERCEPT), None))
            if (ADD_BEL, functor, n) in plans:
                ag.events.append((ADD_BEL, Struct(functor, args, ANNOTS_PERCEPT), None))
            if ag.waiters:
                ag._check_waiters((DEL_BEL, functor, n), Struct(functor, old, ANNOTS_PERCEPT))
                ag._check_waiters((ADD_BEL, functor, n), Struct(functor, args, ANNOTS_PERCEPT))
            return
    ag._replace_percept(functor, args)


def _replace_percept(ag: Agent, functor: str, args: tuple) -> None:
    group = ag.beliefs.groups.get((functor, len(args)))
    if group:
        if len(group) == 1 and group.get(args) is ANNOTS_PERCEPT:
            return
        for old, annots in list(group.items()):
            if old != args and ANNOTS_PERCEPT <= annots:
                ag._bb_remove(functor, old, ANNOTS_PERCEPT)
    ag._bb_add(functor, args, ANNOTS_PERCEPT)


def drop_percepts(ag: Agent, functor: str, arity: int) -> None:
    group = ag.beliefs.groups.get((functor, arity))
    if group:
        for old, annots in list(group.items()):
            if ANNOTS_PERCEPT <= annots:
                ag._bb_remove(functor, old, ANNOTS_PERCEPT)


def believes(ag: Agent, text: str) -> bool:
    """Whether the formula ``text`` holds (tests, hosts)."""
    for _ in ag.query(text):
        return True
    return False


def query(ag: Agent, text: str) -> Iterable[dict[str, Any]]:
    """Every solution of the formula ``text``, as {variable: value}."""
    scope = Scope()
    tc = TermCompiler(scope, "<query>")
    query = ag._compiler.query(parse_expr(text), tc)
    env: list = [UNBOUND] * scope.size
    trail: list = []
    for _ in query.solve(ag, env, trail):
        yield {name: resolve(env[i]) for name, i in scope.slots.items() if env[i] is not UNBOUND}


def belief_texts(ag: Agent) -> list[str]:
    return sorted(term_str(b) for b in ag.beliefs)


def parse_value(text: str) -> Any:
    """A ground term from its text (message contents)."""
    code = TermCompiler(Scope(), "<term>").term(parse_expr(text))
    return code.build([UNBOUND] * 64)
