"""SPADE agents: the only module that makes SPADE agents with an AgentSpeak mind.

:class:`TracedBdiAgent` is a thin SPADE ``Agent`` put together from parts, each in a module
of its own:

- its mind, a :mod:`bdi_rl.bdi.runtime` agent (:mod:`bdi_rl.bdi.mind`), hosted by an
  :class:`~bdi_rl.xmpp.mindhost.AgentHost` and run in bursts by a
  :class:`~bdi_rl.xmpp.mindhost.BdiLoop` that sleeps on its mailbox when idle;
- its :class:`~bdi_rl.xmpp.inbox.Inbox`: spade_bdi's wire format (:mod:`bdi_rl.bdi.wire`)
  under its trust rules;
- its :class:`~bdi_rl.trace.Tracer`, whose events a
  :class:`~bdi_rl.xmpp.shipping.TraceShipper` ships to the telemetry agent in acknowledged
  batches;
- its role (:mod:`bdi_rl.xmpp.agentroles`): a learner, the world, a coordinator, a created
  agent: the internal actions, percepts and trace data of that kind of agent.

It announces presence (a message to a bare JID reaches available sessions only; docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from spade.agent import Agent
from spade.message import Message
from spade.template import Template
from spade.trace import TraceStore

from bdi_rl.bdi.mind import alive, can_act, describe_waits, load_mind
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.runtime.terms import Struct
from bdi_rl.bdi.text import term_text
from bdi_rl.crashlog import one_line, write_crash_log
from bdi_rl.trace.batch import ACK_METADATA, BATCH_METADATA
from bdi_rl.trace.kinds import AGENT_START, AGENT_STOP, MSG_SEND, XMPP_RECONNECT
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp import patches as xmpp_patches
from bdi_rl.xmpp.agentroles import AgentRole
from bdi_rl.xmpp.inbox import BDI_METADATA, Inbox, traced_content
from bdi_rl.xmpp.jids import bare_jid
from bdi_rl.xmpp.mindhost import AgentHost, BdiLoop
from bdi_rl.xmpp.shipping import TraceShipper
from bdi_rl.xmpp.society import Society

if TYPE_CHECKING:
    from bdi_rl.xmpp.worldlink import WorldWire

#: SPADE keeps the last 1000 messages per agent for its web UI (and inserts at the head of a
#: list); with ~190 KB trace batches that is ~190 MB per agent. bdi-rl never starts that UI and
#: nothing else reads them (the trace is ours): keep none. Sixteen kept a first command's
#: last batches alive, ~8 MB of its peak (its trace handed over in-process as lines, BENCHMARKS.md).
SPADE_MESSAGE_LOG = 0


class TracedBdiAgent(Agent):  # type: ignore[misc]  # spade ships no type hints: Agent is Any
    """A SPADE agent with an AgentSpeak mind, presence, a non-busy BDI loop and a shipped trace;
    ``role`` says what kind of agent it is (plans only when not given)."""

    def __init__(
        self,
        jid: str,
        password: str,
        asl: str,
        *,
        tracer: Tracer,
        telemetry: str,
        role: AgentRole | None = None,
        flush_seconds: float = 0.2,
        port: int = 5222,
        hold: bool = False,
        percepts: list[Struct] | None = None,
        beliefs: list[Struct] | None = None,
        achieve_from: Collection[str] | None = None,
        cycle: str = "jason",
    ) -> None:
        xmpp_patches.require()  # patched at start-up: bdi_rl.patches.apply_all
        super().__init__(jid, password, port=port, verify_security=False)
        self.role = role if role is not None else AgentRole()
        self.tracer = tracer
        self.inbox = Inbox(str(self.jid), tracer, achieve_from)
        self.start_percepts = list(percepts or [])
        self.start_beliefs = list(beliefs or [])
        self.hold = hold
        self.asl_file = asl
        self.telemetry_jid = telemetry
        self.flush_seconds = flush_seconds
        self.done = asyncio.Event()
        self.failure: str | None = None
        self.finished = False
        self.world_wire: WorldWire | None = None
        """its shared-world messages, with a world or a seat in another process (bdi_rl.xmpp.worldlink)"""
        self.client_handlers: list[tuple[str, Callable[..., None]]] = []
        """(event, handler) pairs for the XMPP client, which exists only once the agent starts"""
        self.society: Society | None = None
        """the run's agents as a MAS (.all_names, .stopMAS, .create_agent, .kill_agent)"""
        self.stopped: str | None = None
        """why a plan ended this agent cleanly (.kill_agent, .stopMAS): no failure"""
        self.retired = False
        """stopped for good during the run (.kill_agent): its trace is closed, its session over"""
        self.traces = TraceStore(size=SPADE_MESSAGE_LOG)
        self.reasoning = False
        """whether the BDI loop runs reasoning cycles (False while held or paused)"""
        self.host = AgentHost(self)
        self.bdi_loop = BdiLoop()
        self.add_behaviour(self.bdi_loop, Template(metadata=BDI_METADATA))
        self.role.attach(self)
        actions = Actions()
        self.role.add_actions(actions)
        self.tracer.emit(AGENT_START, self.role.start_data({"jid": str(self.jid), "asl": str(self.asl_file)}))
        self.mind: Mind = load_mind(
            asl,
            actions,
            str(self.jid),
            self.tracer,
            self.host,
            beliefs=self.start_beliefs,
            prepare=self.prepare_mind,
            cycle=cycle,
        )
        if not hold:
            self.resume_bdi()

    def pause_bdi(self) -> None:
        self.reasoning = False

    def resume_bdi(self) -> None:
        self.reasoning = True
        self.bdi_loop.wake()

    def prepare_mind(self, mind: Mind) -> None:
        """What the mind perceives before its first goal: its role's percepts, then the team
        percepts. Several may share a name (one ``trusted(J)`` per JID). The spec's beliefs
        are the agent's own (``source(self)``, replacing the plan file's of the same name and
        arity: load_mind)."""
        self.role.prepare_mind(mind)
        for percept in self.start_percepts:
            mind.add_percept(percept.functor, *percept.args)

    def release(self) -> None:
        """Start reasoning (an agent built with ``hold`` waits so that no peer misses its
        first messages: SPADE replaces a behaviour's mailbox when the agent starts)."""
        self.hold = False
        self.resume_bdi()

    async def _async_connect(self) -> None:
        """The client's handlers and the shared world's filter go on before it connects: a
        peer's message may come as soon as the session is up, before ``setup`` runs (a world's
        first ``.rl_reset`` request, taken by SPADE then: "No behaviour matched", dropped)."""
        self.client.add_event_handler("reconnected", self._on_reconnected)
        for event, handler in self.client_handlers:
            self.client.add_event_handler(event, handler)
        if self.world_wire is not None:  # taken before slixmpp's handlers and SPADE's Message
            self.client.add_filter("in", self.world_wire.filter)
        await super()._async_connect()

    async def setup(self) -> None:
        self.presence.set_available()
        self.shipper = TraceShipper(self.telemetry_jid, self.flush_seconds)
        self.add_behaviour(self.shipper, Template(metadata=ACK_METADATA))

    def _on_reconnected(self, down_seconds: float) -> None:
        self.tracer.emit(XMPP_RECONNECT, {"down_s": round(down_seconds, 2)})
        self.shipper.reconnected()

    def resolve_jid(self, name: str) -> str:
        """Plans may name peers by local part (``bob``); JIDs get this agent's domain."""
        return name if "@" in name else f"{name}@{self.jid.domain}"

    def send_bdi(
        self, to: str, ilf: str, body: str, reply_with: str | None = None, in_reply_to: str | None = None
    ) -> None:
        """Send one BDI message; ``body`` comes from :func:`~bdi_rl.bdi.wire.format_body`."""
        metadata = {**BDI_METADATA, "ilf_type": ilf}
        if reply_with is not None:
            metadata["reply_with"] = reply_with
        if in_reply_to is not None:
            metadata["in_reply_to"] = in_reply_to
        msg = Message(to=to, body=body, metadata=metadata)
        self.tracer.emit(MSG_SEND, {"to": to, "performative": ilf, **traced_content(body)})
        peer = str(msg.to)
        if self.container.has_agent(peer):  # in this process: its mailbox now, as SPADE's
            msg.sender = str(self.jid)  # container would a task later (no XMPP either way)
            self.container.get_agent(peer).dispatch(msg)
        else:
            self.submit(self.bdi_loop.send(msg))

    def _message_received(self, msg: Any) -> Any:
        # A message to an agent that is offline comes back as an error stanza that carries
        # our own metadata: a BDI one would read as the peer's tell, and a trace batch would
        # reach no behaviour (SPADE then logs the whole ~190 KB body, once per batch).
        if msg["type"] != "error":
            return super()._message_received(msg)
        bounced = Message.from_node(msg)
        if bounced.get_metadata("ontology") == BATCH_METADATA["ontology"]:
            self.shipper.on_bounce()
            return []
        if bounced.get_metadata("performative") == "BDI":
            self.inbox.bounced(bare_jid(msg["from"]))
            return []
        return super()._message_received(msg)

    def after_burst(self) -> None:
        """Called after each burst of reasoning cycles; notices a mind that died (an
        intention dropped, nothing left to do or wait for)."""
        failures = self.host.failures
        if failures and not self.finished and not self.done.is_set() and not alive(self.mind):
            self.failure = failures[-1]
            self.done.set()
        self.role.after_burst()

    def mark_finished(self) -> None:
        self.finished = True
        self.done.set()

    def mind_crashed(self, exc: Exception) -> None:
        """The mind's cycle raised: a bug in the runtime or a library under it (a plan's own
        failure is handled in the mind). The agent fails now with one line and the traceback
        in the run's ``crash.log``, instead of its reasoning loop dying while its intentions
        still look alive to the stall watch (the run then hung until Ctrl-C)."""
        self.reasoning = False
        path = write_crash_log(exc)
        self.failure = f"its mind crashed: {one_line(exc)} (traceback in {path})"
        self.done.set()

    # -- liveness (bdi_rl.xmpp.liveness) ---------------------------------------------------------
    def can_act(self) -> bool:
        """Whether something can still happen in this agent by itself: its role says so (a
        world's deadline still to pass), it is not reasoning (held until the run starts, or
        paused as it stops), its last burst was cut short, a message waits in its mailbox, or
        its mind can act (``bdi.mind.can_act``)."""
        loop = self.bdi_loop
        return (
            self.role.can_act()
            or not self.reasoning
            or loop.busy
            or bool(loop.paused_mail)
            or not loop.queue.empty()
            or can_act(self.mind)
        )

    def progress_mark(self) -> tuple[Any, ...]:
        """What changes whenever this agent does anything: reasoning cycles that ran an
        intention, messages taken, trace events, and whatever its role counts."""
        loop = self.bdi_loop
        return (self.mind.cycles - loop.idle_cycles, loop.received, self.tracer.seq, *self.role.progress_mark())

    def waits(self) -> str:
        """What this agent waits for, in words (a stall report)."""
        said_by_role = self.role.waits()
        if said_by_role is not None:
            return said_by_role
        said = describe_waits(self.mind, self.host.asked.get)
        return "; ".join(said) if said else self.role.nothing_left

    async def flush_trace(self, stall_seconds: float = 30.0) -> bool:
        """Wait until telemetry has acknowledged every event; False once ``stall_seconds``
        pass without an acknowledgement. A long backlog (a learner that finished while the
        server was away) keeps draining as long as acknowledgements keep coming."""
        acked, since = self.tracer.acked, time.monotonic()
        if not self.tracer.all_acked and self.tracer.closed:
            self.shipper.finishing()
        answered = self.shipper.answered
        while not self.tracer.all_acked:
            now = time.monotonic()
            if self.tracer.acked != acked:
                acked, since = self.tracer.acked, now
            elif now - since > stall_seconds:
                return False
            answered.clear()  # woken by the next acknowledgement (polled every 20 ms before)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), timeout=0.25)
        return True

    def stop_event(self) -> dict[str, Any]:
        """Its ``agent.stop`` event's data (but ``emitted``)."""
        return {"reason": self.failure or self.stopped or "finished", **self.role.stop_data()}

    def close_trace(self) -> None:
        """Its last event, ``agent.stop``, after its open step record; then no more."""
        self.tracer.flush_record()  # its open step record is numbered before agent.stop
        stop = self.stop_event()
        stop["emitted"] = self.tracer.seq + 1
        self.tracer.emit(AGENT_STOP, stop)
        self.tracer.close()

    async def retire(self, stall_seconds: float = 30.0) -> None:
        """Stop for good while the run goes on (``.kill_agent``): its role's last words (a
        learner keeps what it learned), no more reasoning, the trace closed and acknowledged,
        the XMPP session ended."""
        self.role.retiring()
        self.retired = True
        self.pause_bdi()
        self.done.set()
        self.close_trace()
        await self.flush_trace(stall_seconds)
        await self.stop()

    async def stop(self) -> None:
        await super().stop()
        # SPADE's container is a process-wide singleton that would keep routing this JID's
        # messages to the stopped agent (in-process) instead of over XMPP.
        self.container.unregister(str(self.jid))

    def beliefs(self) -> list[str]:
        """The mind's beliefs as text, without annotations (``greeted(alice, 7)``)."""
        return [term_text(belief, annots=False) for belief in self.mind.beliefs]
