"""The agents of a run as Jason's multi-agent system: what ``.all_names``, ``.broadcast``,
``.stopMAS``, ``.create_agent`` and ``.kill_agent`` act on (the runtime asks its host,
``xmpp.mindhost.AgentHost``, which asks the :class:`Society` of the process).

- **The members** are the experiment's agents (the spec's groups and the world agent,
  wherever they run), then the agents created during the run; an agent is named by its JID
  (``alice@localhost``), as ``.my_name`` names it.
- **``.stopMAS``** ends the run cleanly: every agent of the process stops (its ``agent.stop``
  says ``stopped by .stopMAS of <JID>``), learners keep what they learned, and the run is no
  failure. In an agent process (``bdi-rl agent``) it ends that process's agents.
- **``.create_agent(bob, "helper.asl")``** (``bdi-rl run`` only) starts a plans-only agent
  ``bob@<domain>`` running ``helper.asl`` (beside the creator's plan file when relative),
  with its own trace (``agent.start``, ``agent.stop``), the team's percepts, an account on
  the embedded server, and the trust of the run's agents. A taken name becomes ``bob_1``,
  ``bob_2`` ... The creator's plan goes on once the agent runs. A created agent is part of
  the run's stall watch and of ``summary.json`` (``role: created``, its creator and plan
  file); the run does not wait for it to finish: it ends with the experiment's agents.
- **``.kill_agent(bob)``** stops an agent of the process for good: its trace is closed
  (``agent.stop``: ``killed by <JID>``) and flushed, its XMPP session ends, a learner keeps
  what it learned, and the run goes on. A message to it afterwards fails the ``.send``
  (Jason's ``receiver_not_found``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from bdi_rl.bdi.mind import load_program
from bdi_rl.bdi.runtime import PlanFailure
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.spec import AGENT_NAME_RULE, is_agent_name

log = logging.getLogger("bdi_rl.xmpp.society")

#: The start of the stop reason of an agent ``.kill_agent`` stopped, then the killer's JID.
KILLED = "killed by "
#: The start of the stop reason of the agents ``.stopMAS`` stopped, then the JID of its caller.
STOPPED = "stopped by .stopMAS of "


def is_clean_stop(reason: str) -> bool:
    """Whether an agent's stop reason is a clean end a plan asked for (no failure)."""
    return reason.startswith((KILLED, STOPPED))


#: Makes a created agent (held, not started): its name, its plan file, its creator.
MakeAgent = Callable[[str, Path, Any], Any]
#: Starts a created agent (its account, its trace's admission, its XMPP session) and releases it.
StartAgent = Callable[[Any], Awaitable[None]]


class Society:
    """The members of a run's MAS as one process sees them (module docstring). ``agents``
    is the list the process watches (stall watch, summary, stop): created agents join it."""

    def __init__(
        self,
        domain: str,
        names: Iterable[str],
        agents: list[Any],
        *,
        reserved: Iterable[str] = (),
        make: MakeAgent | None = None,
        start: StartAgent | None = None,
    ) -> None:
        self.domain = domain
        self.members: dict[str, Any] = dict.fromkeys(names)
        """name -> the agent, when it runs in this process (None: another process)"""
        self.agents = agents
        self.reserved = set(reserved)
        """names no created agent may take (telemetry's)"""
        self.make, self.start = make, start
        self.stopped_by: str | None = None
        """the JID of the agent whose ``.stopMAS`` ends the run"""
        self.killed: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        for agent in agents:
            self.attach(agent)

    def attach(self, agent: Any) -> None:
        self.members[agent.name] = agent
        agent.society = self

    def names(self) -> list[str]:
        """Every member's JID (``.all_names``)."""
        return [f"{name}@{self.domain}" for name in self.members]

    def local(self, name: str) -> str:
        """An agent's name as a plan gives it (``bob`` or ``bob@domain``) -> ``bob``."""
        local, at, domain = name.partition("@")
        return local if not at or domain.lower() == self.domain else name

    def stop_mas(self, by: Any) -> None:
        if self.stopped_by is None:
            self.stopped_by = str(by.jid)
            log.info("%s: .stopMAS: the run ends", by.jid)

    def create(self, creator: Any, name: str, source: str | None) -> str:
        """Make agent ``name`` (or ``name_1`` ...) running ``source`` and start it in the
        background, holding the creator's intention until it runs; returns its JID."""
        if self.make is None or self.start is None:
            raise PlanFailure("internal_action", "agents are created only by bdi-rl run, not in an agent process")
        if not is_agent_name(name):
            raise PlanFailure("internal_action", f"cannot create agent {name!r}: a name must be {AGENT_NAME_RULE}")
        given, n = name, 1
        while given in self.members or given in self.reserved:
            given, n = f"{name}_{n}", n + 1
        path = Path(os.devnull) if source is None else Path(creator.asl_file).parent / source
        try:
            agent = self.make(given, path, creator)
        except Exception as exc:  # noqa: BLE001 - a plan file that cannot be loaded, said in one line
            raise PlanFailure("internal_action", f"cannot create agent {given}: {exc}") from None
        self.attach(agent)
        self.agents.append(agent)
        mind = creator.mind
        it = mind.current
        mind.hold(it, f"the start of agent {given}")
        self._background(self._start(agent, creator, it))
        return str(agent.jid)

    async def _start(self, agent: Any, creator: Any, it: Any) -> None:
        assert self.start is not None
        try:
            await self.start(agent)
        except Exception as exc:  # noqa: BLE001 - the creator's plan fails, saying why
            self.members.pop(agent.name, None)
            agent.failure = f"could not start: {exc}"
            agent.done.set()
            creator.mind.fail_held(it, PlanFailure("internal_action", f"agent {agent.name} could not start: {exc}"))
        else:
            creator.mind.release(it)
        creator.bdi_loop.wake()

    def kill(self, killer: Any, name: str) -> bool:
        """Stop the agent ``name`` of this process for good; False when no such agent runs here."""
        local = self.local(name)
        target = self.members.get(local)
        if target is None or target.retired:
            return False
        del self.members[local]
        self.killed.add(local)
        target.stopped = KILLED + str(killer.jid)
        target.pause_bdi()
        target.done.set()
        self._background(target.retire())
        return True

    def was_killed(self, jid: str) -> bool:
        local, _, domain = jid.partition("@")
        return domain == self.domain and local in self.killed and local not in self.members

    def _background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def settle(self) -> None:
        """Wait for the agents being started or stopped (before the run's end stops the rest)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


def created_plan_files(path: str | Path) -> list[Path]:
    """The plan files ``path``'s plans create agents from, where a plan names them as a
    string (``.create_agent(bob, "helper.asl")``), beside ``path``: checked before a run
    starts, as the experiment's own (a name built at run time is checked when it is used)."""
    found: list[Path] = []
    for plan in load_program(Path(path)).plans:  # (parsed once: the run's agents load it too)
        for lit in _statements(plan.body):
            if lit.functor == ".create_agent" and len(lit.args) > 1 and isinstance(lit.args[1], s.Const):
                source = lit.args[1].value
                if isinstance(source, str):
                    found.append(Path(plan.file).parent / source)
    return found


def _statements(body: tuple[Any, ...]) -> Iterable[s.Lit]:
    for stmt in body:
        if isinstance(stmt, s.Stmt):
            if isinstance(stmt.expr, s.Lit):
                yield stmt.expr
        elif isinstance(stmt, s.If):
            for _, branch in stmt.branches:
                yield from _statements(branch)
            if stmt.otherwise is not None:
                yield from _statements(stmt.otherwise)
        elif isinstance(stmt, (s.While, s.For)):
            yield from _statements(stmt.body)
