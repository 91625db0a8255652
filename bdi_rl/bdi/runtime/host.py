"""The host's side: the agent's methods a host calls (running cycles, messages in, percepts,
queries); what the agent needs of its host is ``state.Host``.

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.parser import parse_expr
from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, UNBOUND, Struct, Terms, Trail, from_python, resolve, term_str
from bdi_rl.bdi.runtime.triggers import ADD_BEL, DEL_BEL
from bdi_rl.bdi.runtime.unify import Env, Scope, TermCompiler

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.state import AgentState


def run(ag: AgentState, max_cycles: int | None = None, sleep: bool = True) -> int:
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
    ag: AgentState,
    sender: Any,
    performative: str,
    content: Any,
    msg_id: str | None = None,
    in_reply_to: str | None = None,
) -> None:
    """A message for the next cycle. ``content`` is a term, or text that is parsed."""
    if isinstance(content, str) and performative not in ("tellHow", "askHow"):
        content = resolve(parse_value(content))
    ag.inbox.append((sender, performative, content, msg_id, in_reply_to))


def add_percept(ag: AgentState, functor: str, *args: Any) -> None:
    ag._bb_add(functor, tuple(from_python(a) for a in args), ANNOTS_PERCEPT)


def remove_percept(ag: AgentState, functor: str, *args: Any) -> None:
    ag._bb_remove(functor, tuple(from_python(a) for a in args), ANNOTS_PERCEPT)


def replace_percept(ag: AgentState, functor: str, args: Terms) -> None:
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


def _replace_percept(ag: AgentState, functor: str, args: Terms) -> None:
    group = ag.beliefs.groups.get((functor, len(args)))
    if group:
        if len(group) == 1 and group.get(args) is ANNOTS_PERCEPT:
            return
        for old, annots in list(group.items()):
            if old != args and ANNOTS_PERCEPT <= annots:
                ag._bb_remove(functor, old, ANNOTS_PERCEPT)
    ag._bb_add(functor, args, ANNOTS_PERCEPT)


def drop_percepts(ag: AgentState, functor: str, arity: int) -> None:
    group = ag.beliefs.groups.get((functor, arity))
    if group:
        for old, annots in list(group.items()):
            if ANNOTS_PERCEPT <= annots:
                ag._bb_remove(functor, old, ANNOTS_PERCEPT)


def believes(ag: AgentState, text: str) -> bool:
    """Whether the formula ``text`` holds (tests, hosts)."""
    for _ in ag.query(text):
        return True
    return False


def query(ag: AgentState, text: str) -> Iterable[dict[str, Any]]:
    """Every solution of the formula ``text``, as {variable: value}."""
    scope = Scope()
    tc = TermCompiler(scope, "<query>")
    query = ag._compiler.query(parse_expr(text), tc)
    env: Env = [UNBOUND] * scope.size
    trail: Trail = []
    for _ in query.solve(ag, env, trail):
        yield {name: resolve(env[i]) for name, i in scope.slots.items() if env[i] is not UNBOUND}


def belief_texts(ag: AgentState) -> list[str]:
    return sorted(term_str(b) for b in ag.beliefs)


def parse_value(text: str) -> Any:
    """A ground term from its text (message contents)."""
    code = TermCompiler(Scope(), "<term>").term(parse_expr(text))
    return code.build([UNBOUND] * 64)
