"""SPADE agents: the only module that touches SPADE's agent classes.

:class:`TracedBdiAgent` is a SPADE ``Agent`` whose mind is a :mod:`bdi_rl.bdi.runtime` agent
(:mod:`bdi_rl.bdi.mind`). It
- announces presence (pyjabber drops messages to agents that never did; docs/ARCHITECTURE.md),
- runs reasoning cycles in bursts and sleeps on its mailbox when idle (:class:`BdiLoop`),
- speaks spade_bdi's wire format (:mod:`bdi_rl.bdi.wire`) under its trust rules
  (:meth:`TracedBdiAgent.accept_bdi_message`),
- records its mind and its messages through a :class:`~bdi_rl.trace.Tracer` and ships the
  events to the telemetry agent in acknowledged batches.
:class:`LearnerAgent` adds the ``.rl_*`` internal actions of :mod:`bdi_rl.bdi.actions`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

import orjson
from spade.agent import Agent
from spade.behaviour import CyclicBehaviour
from spade.message import Message
from spade.template import Template
from spade.trace import TraceStore

from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.mind import MindHost, alive, can_act, describe_waits, load_mind
from bdi_rl.bdi.runtime import Actions, PlanFailure
from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.runtime.terms import Struct
from bdi_rl.bdi.text import term_text
from bdi_rl.bdi.wire import ASKS, MAX_ID_CHARS, WireError, format_body, parse_body
from bdi_rl.bdi.world import SeatClient, SharedWorld
from bdi_rl.trace.batch import ACK_METADATA, BATCH_METADATA, JOIN_REPLY_METADATA, JOIN_REQUEST_METADATA
from bdi_rl.trace.kinds import (
    AGENT_START,
    AGENT_STOP,
    MAX_TEXT_CHARS,
    MSG_RECV,
    MSG_SEND,
    XMPP_RECONNECT,
    AgentStartData,
    MessageText,
    MsgRecvData,
    TraceLevel,
    clip_text,
)
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp import patches as xmpp_patches
from bdi_rl.xmpp.society import STOPPED, Society
from bdi_rl.xmpp.worldlink import WORLD_ONTOLOGY

log = logging.getLogger("bdi_rl.xmpp.agent")

#: SPADE keeps the last 1000 messages per agent for its web UI (and inserts at the head of a
#: list); with ~190 KB trace batches that is ~190 MB per agent. The trace is ours: keep a few.
SPADE_MESSAGE_LOG = 16

#: Metadata of every BDI message (spade_bdi's): ``ilf_type`` says the performative.
BDI_METADATA = {"performative": "BDI"}

#: Performatives that make an agent act (pursue a goal, change its plans, answer): only the
#: agents of its own experiment (and the spec's ``[xmpp] trust``) may send them.
_REQUESTS = frozenset({"achieve", "unachieve", "tellHow", "untellHow", "askOne", "askAll", "askHow"})
#: Performatives that change a belief.
_BELIEF_CHANGES = frozenset({"tell", "untell"})
#: Ids of asks this agent sent that it remembers (to know whose answer is whose).
_ASKS_KEPT = 1024

#: Bytes of tells that senders outside the experiment may make one agent hold, together, over
#: its life. Anyone may tell (the wire contract), but nobody outside may fill its memory: a
#: stranger's beliefs are never removed by the shipped plans. List a client in
#: ``[xmpp] trust`` to lift the limit for it.
STRANGER_TELL_BYTES = 1 << 20

#: Every belief the runtime perceives, as (functor, arity): the ``.rl_*`` actions' percepts
#: (bdi_rl/bdi/actions.py), the team percepts (``team_percepts`` in bdi_rl/xmpp/runner.py) and
#: ``trusted/1``. Plans read them as facts about the env, the run and the team, so nobody may
#: tell or untell one: a told ``training_done``, ``outcome(goal)`` or ``trusted("me@x")`` would
#: steer the agent. tests/test_trust.py checks that no percept is missing here.
PERCEIVED: frozenset[tuple[str, int]] = frozenset(
    {
        # .rl_* actions and a learner's static percepts
        ("state", 1),
        ("pos", 2),
        ("goal", 2),
        ("outcome", 1),
        ("episode", 1),
        ("last_return", 1),
        ("epsilon", 1),
        ("episodes_done", 1),
        ("training_done", 0),
        ("eval", 2),
        ("mode", 1),
        ("env", 1),
        ("episodes_target", 1),
        ("eval_episodes", 1),
        ("warm_started", 1),
        # the team, from the spec
        ("coordinator", 1),
        ("teammates", 1),
        ("learners", 1),
        ("team_size", 1),
        ("trusted", 1),
        # a shared world's seats and each step's own reward
        ("reward", 1),
        ("world_seat", 1),
        ("world_agents", 1),
        ("partner", 2),
        ("food", 2),
    }
)


def bare_jid(jid: Any) -> str:
    """ejabberd reports senders as full JIDs, pyjabber as bare ones: compare bare JIDs."""
    return str(jid).split("/", 1)[0].lower()


#: Put in a behaviour's mailbox to end its wait early (see :class:`Wakeable`).
WAKE: Any = object()


class Wakeable(CyclicBehaviour):
    """A behaviour that sleeps on its mailbox for long spans and is woken when its owner has
    work for it (or kills it): idle agents then cost nothing between messages. Polling every
    0.2-1 s kept 100 idle agents at ~5.6 % of a core (BENCHMARKS.md)."""

    def wake(self) -> None:
        self.queue.put_nowait(WAKE)

    def kill(self, exit_code: Any = None) -> None:
        super().kill(exit_code)
        self.wake()


class BdiLoop(Wakeable):
    """Runs reasoning cycles in bursts and sleeps on the mailbox when the mind is idle (until
    a message, a resume, a kill, or the mind's next timed wait)."""

    #: Seconds of reasoning per turn before the event loop gets control back (an episode-mode
    #: cycle runs a whole episode, so a count of cycles would not bound the turn).
    BURST_SECONDS = 0.005
    #: Longest sleep while idle: messages, a resume and a kill wake the loop before that.
    IDLE_WAIT = 30.0

    def __init__(self) -> None:
        super().__init__()
        self.paused_mail: list[Message] = []  # BDI messages that arrived while paused
        self.busy = True  # the last burst ended with work left (a time limit, not idleness)
        self.idle_cycles = 0  # reasoning cycles that found nothing to do (one per idle burst)
        self.received = 0  # BDI messages handed to the mind

    async def run(self) -> None:
        agent: TracedBdiAgent = self.agent
        mind = agent.mind
        if not agent.reasoning:  # held or paused: resume_bdi wakes us
            msg = await self.receive(timeout=self.IDLE_WAIT)
            if msg is not None and msg is not WAKE:
                self.paused_mail.append(msg)
            return
        for early in self.paused_mail:
            agent.accept_bdi_message(early)
            self.received += 1
        self.paused_mail.clear()
        msg = await self.receive(timeout=0 if self.busy else self._idle_wait(mind))
        while msg is not None:
            if msg is not WAKE:
                agent.accept_bdi_message(msg)
                self.received += 1
            msg = await self.receive(timeout=0)
        clock = time.perf_counter
        until = clock() + self.BURST_SECONDS
        self.busy = False
        while mind.cycle():
            if clock() >= until:
                self.busy = True
                break
        else:
            self.idle_cycles += 1
        agent.after_burst()

    def _idle_wait(self, mind: Mind) -> float:
        deadline = mind.next_deadline()
        if deadline is None:
            return self.IDLE_WAIT
        return min(self.IDLE_WAIT, max(deadline - mind.host.now(), 0.001))


class AgentHost(MindHost):
    """The mind's host in a SPADE agent: what it sends goes out over XMPP in spade_bdi's
    wire format; asks are remembered so that only the asked agent can answer them."""

    def __init__(self, agent: TracedBdiAgent) -> None:
        super().__init__(agent.tracer)
        self.agent = agent
        self.asked: dict[str, str] = {}
        """ask id -> the bare JID asked"""

    def send(
        self,
        agent: Any,
        receiver: Any,
        performative: str,
        content: Any,
        *,
        msg_id: str | None = None,
        in_reply_to: str | None = None,
    ) -> None:
        try:
            body = format_body(performative, content)
        except WireError as exc:
            raise PlanFailure("wrong_arguments", f".send: {exc}") from None
        # a peer by JID string ("bob@x") or by local part (bob, an atom)
        to = self.agent.resolve_jid(receiver if type(receiver) is str else term_text(receiver, annots=False))
        society = self.agent.society
        if society is not None and society.was_killed(bare_jid(to)):  # Jason: the .send fails
            raise PlanFailure("receiver_not_found", f"Receiver '{to}' does not exist (killed)! Could not send {body}")
        if msg_id is not None:
            self.asked[msg_id] = bare_jid(to)
            if len(self.asked) > _ASKS_KEPT:  # answered or expired long ago
                del self.asked[next(iter(self.asked))]
        self.agent.send_bdi(to, performative, body, reply_with=msg_id, in_reply_to=in_reply_to)

    # -- the MAS (bdi_rl/xmpp/society.py) -------------------------------------------------
    def agent_names(self, agent: Any) -> list[Any]:
        society = self.agent.society
        return society.names() if society is not None else [agent.name_term]

    def stop_mas(self, agent: Any) -> None:
        society = self.agent.society
        if society is not None:
            society.stop_mas(self.agent)
        else:  # an agent on its own: it ends
            self.agent.stopped = STOPPED + str(self.agent.jid)
            self.agent.mark_finished()

    def create_agent(self, agent: Any, name: str, source: str | None) -> str:
        society = self.agent.society
        if society is None:
            return super().create_agent(agent, name, source)
        return society.create(self.agent, name, source)

    def kill_agent(self, agent: Any, name: str) -> bool:
        society = self.agent.society
        if society is None:
            return super().kill_agent(agent, name)
        return society.kill(self.agent, name)

    def answers(self, msg_id: str | None, sender: str, mind: Mind) -> bool:
        """Whether a message from ``sender`` replying to ``msg_id`` answers an ask the mind
        is waiting on, sent to that very sender."""
        return msg_id is not None and msg_id in mind.pending_asks and self.asked.get(msg_id) == sender


class TraceShipper(Wakeable):
    """Sends the tracer's unacknowledged events to telemetry and resends what is not acked.

    While events keep coming it ships every ``flush_seconds``; with nothing left to send it
    sleeps until an acknowledgement or the tracer's next event wakes it. While telemetry is
    offline (the server bounces batches back) it sends one batch per resend as a probe, and
    logs the outage once when it starts and once, with the count, when telemetry answers."""

    #: Batches in flight before waiting for an acknowledgement.
    WINDOW = 64
    #: Seconds without any acknowledgement before everything unacked is sent again.
    RESEND_AFTER = 5.0

    def __init__(self, telemetry: str, flush_seconds: float) -> None:
        super().__init__()
        self.telemetry = telemetry
        self.flush_seconds = flush_seconds
        self.sent = 0  # events of tracer.pending (from the left) already sent
        self.in_flight = 0
        self.last_progress = time.monotonic()
        self.rewound_to = -1  # the seq the last rewind went back to
        self.bounced = 0  # batches bounced since telemetry last answered
        self.bounced_since = 0.0
        self.answered_at = -math.inf  # when telemetry last answered after an outage

    #: Longest sleep with nothing to send (nothing in flight either).
    IDLE_WAIT = 30.0
    #: Longest sleep at step level, where the open step record may be filling.
    RECORD_WAIT = 1.0

    async def run(self) -> None:
        tracer: Tracer = self.agent.tracer
        if self.sent < len(tracer.pending) or not tracer.run or len(tracer.record):
            timeout = self.flush_seconds
        else:  # all sent: until an ack, the next event, or the deadline to resend the unacked
            # (not ``in_flight``: that is a count of acks still due, and a lost batch's ack
            # never comes, while a duplicate's does)
            timeout = self.IDLE_WAIT if tracer.all_acked else self.RESEND_AFTER
            if tracer.level >= TraceLevel.STEP:  # step records fill without waking the shipper:
                timeout = min(timeout, self.RECORD_WAIT)  # look again soon, for the live viewer
            tracer.on_emit = self.wake
        msg = await self.receive(timeout=timeout)
        tracer.on_emit = None
        woken = False
        while msg is not None:
            if msg is WAKE:
                woken = True  # a first new event: give it flush_seconds to gather company
            else:
                self._on_ack(msg)
            msg = await self.receive(timeout=0)
        if not woken:
            tracer.flush_record()  # step records close at events; between them, every flush
            await self._ship()

    def _on_ack(self, msg: Message) -> None:
        tracer: Tracer = self.agent.tracer
        try:
            ack = orjson.loads(msg.body)
            upto = int(ack["upto"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            log.warning("%s: ignored a malformed trace ack from %s", self.agent.jid, msg.sender)
            return
        # What the ack drops from the head; not the change in length: a refill from the
        # spill file may grow the tail in the same call.
        dropped = tracer.ack(upto)
        if self.bounced:
            log.warning(
                "%s: the telemetry agent %s answers again after %.1f s; %d trace batches "
                "had bounced, their events are sent again",
                self.agent.jid,
                self.telemetry,
                time.monotonic() - self.bounced_since,
                self.bounced,
            )
            self.bounced = 0
            self.answered_at = time.monotonic()
        self.sent = max(0, self.sent - dropped)
        self.in_flight = max(0, self.in_flight - 1)
        if dropped:
            self.last_progress = time.monotonic()
        if ack.get("gap") and upto != self.rewound_to:
            # Telemetry missed a batch: go back to the oldest unacked event, once per gap.
            # Every batch in flight behind the lost one reports the same gap; rewinding for
            # each re-sent the whole window 64 times over after a server restart.
            self._rewind(upto)

    def on_bounce(self) -> None:
        """The server sent a batch back: telemetry is offline. Its events are still pending
        (they go again at the next resend); one log line per outage, never the ~190 KB body."""
        if not self.bounced and time.monotonic() - self.answered_at < self.RESEND_AFTER:
            return  # sent during the outage, bounced after telemetry answered: the same outage
        if not self.bounced:
            self.bounced_since = time.monotonic()
            log.warning(
                "%s: trace batches to %s bounce (is the telemetry agent running?); "
                "keeping the events and trying again every %g s",
                self.agent.jid,
                self.telemetry,
                self.RESEND_AFTER,
            )
        self.bounced += 1

    def _rewind(self, upto: int) -> None:
        self.sent = 0
        self.in_flight = 0
        self.rewound_to = upto

    def reconnected(self) -> None:
        """What was in flight when the connection dropped may be lost: send it again now."""
        self._rewind(self.agent.tracer.acked)
        self.last_progress = time.monotonic()
        self.wake()

    async def _ship(self) -> None:
        tracer: Tracer = self.agent.tracer
        if not tracer.run:
            return  # not joined to a run yet (agents in their own process ask telemetry first)
        now = time.monotonic()
        if self.sent and now - self.last_progress > self.RESEND_AFTER:
            self._rewind(tracer.acked)
            self.last_progress = now
        # Compress only what crosses the network: SPADE hands messages between agents of
        # one process over directly.
        remote = not self.agent.container.has_agent(self.telemetry)
        if remote and not self.agent.client.in_session:
            return  # the server is away: keep the events until the client reconnects
        window = 1 if self.bounced else self.WINDOW  # offline telemetry: one batch probes
        while self.sent < len(tracer.pending) and self.in_flight < window:
            count, body = tracer.next_batch(self.sent, compress=remote)
            await self.send(Message(to=self.telemetry, body=body, metadata=BATCH_METADATA))
            self.sent += count
            self.in_flight += 1


class AskTelemetry(CyclicBehaviour):
    """Sends a ``bdi-rl.join`` request until telemetry answers (it may start after us)."""

    def __init__(self, telemetry: str, request: dict[str, Any], retry_seconds: float = 1.0) -> None:
        super().__init__()
        self.telemetry = telemetry
        self.request = orjson.dumps(request).decode()
        self.retry_seconds = retry_seconds
        self.reply: asyncio.Future[dict[str, Any]] = asyncio.get_event_loop().create_future()
        self.asked = 0

    async def run(self) -> None:
        await self.send(Message(to=self.telemetry, body=self.request, metadata=JOIN_REQUEST_METADATA))
        self.asked += 1
        if self.asked == 3:
            log.warning("%s: waiting for the telemetry agent %s to answer", self.agent.jid, self.telemetry)
        msg = await self.receive(timeout=self.retry_seconds)
        if msg is None:
            return  # no answer yet: ask again
        if msg.get_metadata("performative") != JOIN_REPLY_METADATA["performative"]:
            await asyncio.sleep(self.retry_seconds)  # our request bounced: telemetry is offline
            return
        try:
            reply = orjson.loads(msg.body)
        except orjson.JSONDecodeError:
            return
        if isinstance(reply, dict) and isinstance(reply.get("run"), str) and not self.reply.done():
            self.reply.set_result(reply)
            self.kill()


async def ask_telemetry(agent: Any, telemetry: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Telemetry's answer to ``request`` (always holds "run"); TimeoutError if it never answers."""
    asker = AskTelemetry(telemetry, request)
    # Requests sent while telemetry is offline come back as errors with the request's
    # metadata: take them too (and ignore them) rather than let SPADE warn about each.
    agent.add_behaviour(asker, Template(metadata=JOIN_REPLY_METADATA) | Template(metadata=JOIN_REQUEST_METADATA))
    try:
        return await asyncio.wait_for(asyncio.shield(asker.reply), timeout)
    except TimeoutError:
        asker.kill()
        raise TimeoutError(f"the telemetry agent {telemetry} did not answer within {timeout:g} s") from None


async def join_run(agent: TracedBdiAgent, timeout: float) -> str:
    """The id of the run the telemetry agent owns."""
    return (await ask_telemetry(agent, agent.telemetry_jid, {}, timeout))["run"]


class TracedBdiAgent(Agent):
    """A SPADE agent with an AgentSpeak mind, presence, a non-busy BDI loop and a shipped trace."""

    def __init__(
        self,
        jid: str,
        password: str,
        asl: str,
        *,
        tracer: Tracer,
        telemetry: str,
        flush_seconds: float = 0.2,
        port: int = 5222,
        hold: bool = False,
        percepts: list[Struct] | None = None,
        beliefs: list[Struct] | None = None,
        achieve_from: Collection[str] | None = None,
        cycle: str = "jason",
    ) -> None:
        xmpp_patches.require()  # patched at start-up: bdi_rl.patches.apply_all
        self.tracer = tracer
        self.achieve_from = (
            achieve_from
            if isinstance(achieve_from, frozenset) or achieve_from is None
            else frozenset(j.lower() for j in achieve_from)
        )
        """lower-case bare JIDs whose requests (achieve, asks, tellHow ...) are taken (None:
        anyone's); a frozenset is kept as given, so the agents of a run can share one"""
        self.start_percepts = list(percepts or [])
        self.start_beliefs = list(beliefs or [])
        self.hold = hold
        self.asl_file = asl
        self.telemetry_jid = telemetry
        self.flush_seconds = flush_seconds
        self.done = asyncio.Event()
        self.failure: str | None = None
        self.finished = False
        self.rejected_messages = 0
        self.bounced_peers: set[str] = set()
        self.refused_senders: set[str] = set()
        """senders refused for a request or a percept (the rest of a refusal is in the trace)"""
        self._warned: set[tuple[str, str]] = set()
        self.world_bounced: Callable[[], None] | None = None
        """a request to this agent's world (in another process) came back undelivered"""
        self.client_handlers: list[tuple[str, Callable[..., None]]] = []
        """(event, handler) pairs for the XMPP client, which exists only once the agent starts"""
        self.stranger_tell_bytes = 0
        """bytes of tells taken from senders outside the experiment (see STRANGER_TELL_BYTES)"""
        self.society: Society | None = None
        """the run's agents as a MAS (.all_names, .stopMAS, .create_agent, .kill_agent)"""
        self.stopped: str | None = None
        """why a plan ended this agent cleanly (.kill_agent, .stopMAS): no failure"""
        self.retired = False
        """stopped for good during the run (.kill_agent): its trace is closed, its session over"""
        super().__init__(jid, password, port=port, verify_security=False)
        self.traces = TraceStore(size=SPADE_MESSAGE_LOG)
        self.reasoning = False
        """whether the BDI loop runs reasoning cycles (False while held or paused)"""
        self.host = AgentHost(self)
        self.bdi_loop = BdiLoop()
        self.add_behaviour(self.bdi_loop, Template(metadata=BDI_METADATA))
        actions = Actions()
        self.add_custom_actions(actions)
        self.tracer.emit(AGENT_START, self.start_data())
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

    def add_custom_actions(self, actions: Actions) -> None:
        """The agent's own internal actions, added before its plans are compiled."""

    def pause_bdi(self) -> None:
        self.reasoning = False

    def resume_bdi(self) -> None:
        self.reasoning = True
        self.bdi_loop.wake()

    def start_data(self) -> AgentStartData:
        """The ``agent.start`` event's data: who this is and which plans it runs."""
        return {"jid": str(self.jid), "asl": str(self.asl_file)}

    def prepare_mind(self, mind: Mind) -> None:
        """What the mind perceives before its first goal: the team percepts. Several may
        share a name (one ``trusted(J)`` per JID). The spec's beliefs are the agent's own
        (``source(self)``, replacing the plan file's of the same name and arity: load_mind)."""
        for percept in self.start_percepts:
            mind.add_percept(percept.functor, *percept.args)

    def release(self) -> None:
        """Start reasoning (an agent built with ``hold`` waits so that no peer misses its
        first messages: SPADE replaces a behaviour's mailbox when the agent starts)."""
        self.hold = False
        self.resume_bdi()

    async def setup(self) -> None:
        self.presence.set_available()
        self.shipper = TraceShipper(self.telemetry_jid, self.flush_seconds)
        self.add_behaviour(self.shipper, Template(metadata=ACK_METADATA))
        self.client.add_event_handler("reconnected", self._on_reconnected)
        for event, handler in self.client_handlers:
            self.client.add_event_handler(event, handler)

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
        self.tracer.emit(MSG_SEND, {"to": to, "performative": ilf, **_traced_content(body)})
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
        if bounced.get_metadata("ontology") == WORLD_ONTOLOGY and self.world_bounced is not None:
            self.world_bounced()  # the world agent is not online (yet): ask again
            return []
        if bounced.get_metadata("performative") == "BDI":
            peer = bare_jid(msg["from"])
            self.tracer.emit(
                MSG_RECV,
                {"from": peer, "performative": "error", "content": "", "rejected": "bounced: recipient offline"},
            )
            if peer not in self.bounced_peers:  # once per peer: a stopped peer bounces many
                self.bounced_peers.add(peer)
                log.warning("%s: BDI messages to %s bounce (is that agent running?)", self.jid, peer)
            return []
        return super()._message_received(msg)

    def accept_bdi_message(self, msg: Message) -> None:
        """Deliver a BDI message to the mind, its sender as ``source("<jid>")``, or refuse it
        (counted, traced as ``msg.recv`` with ``rejected``, logged): a request from outside
        the experiment, a body its performative does not carry, or a percept. The answer to
        an ask of ours is taken from the agent asked only."""
        sender = bare_jid(msg.sender)
        ilf = msg.get_metadata("ilf_type")
        body = msg.body or ""
        data: MsgRecvData = {"from": sender, "performative": ilf, **_traced_content(body)}
        reply_with = msg.get_metadata("reply_with") or None
        in_reply_to = msg.get_metadata("in_reply_to") or None
        if self.host.answers(in_reply_to, sender, self.mind):
            try:
                content = parse_body(ilf, body, reply=True)
            except WireError as exc:
                self._refuse(data, str(exc), f"rejected an answer from {sender}: {exc}")
                return
            self.tracer.emit(MSG_RECV, data)
            self.mind.deliver(sender, ilf, content, None, in_reply_to)
            return
        if ilf in _REQUESTS and self.achieve_from is not None and sender not in self.achieve_from:
            self._refuse(
                data,
                "requests are taken from this experiment's agents only",
                f"refused {ilf} requests from {sender}, which is not an agent of this "
                "experiment (each is counted and traced)",
                once=("request", sender),
            )
            return
        try:
            if reply_with is not None and (ilf not in ASKS or len(reply_with) > MAX_ID_CHARS):
                raise WireError(f"reply_with on {ilf} (asks only, {MAX_ID_CHARS} characters at most)")
            content = parse_body(ilf, body)
        except WireError as exc:
            self._refuse(data, str(exc), f"rejected a BDI message from {sender}: {exc}")
            return
        if ilf in _BELIEF_CHANGES and content.key in PERCEIVED:
            name = f"{content.functor}/{len(content.args)}"
            self._refuse(
                data,
                f"{name} is perceived, not told",
                f"refused percepts from {sender} (first: {ilf} {name}): percepts come "
                "from the env and the spec, never from a message (each is counted and "
                "traced)",
                once=("percept", sender),
            )
            return
        if ilf == "tell" and self.achieve_from is not None and sender not in self.achieve_from:
            self.stranger_tell_bytes += len(body)
            if self.stranger_tell_bytes > STRANGER_TELL_BYTES:
                self._refuse(
                    data,
                    f"senders outside the experiment have told {STRANGER_TELL_BYTES} bytes already",
                    f"refused tells from {sender}: senders outside the "
                    f"experiment have told this agent {STRANGER_TELL_BYTES} bytes already "
                    "(list a client in [xmpp] trust to lift this)",
                    once=("budget", sender),
                )
                return
        self.tracer.emit(MSG_RECV, data)
        # The sender as a string: a JID is not an AgentSpeak atom, so only a string can be
        # passed on in a message (``.send(B, achieve, adopt_policy_of(Sender))``) intact.
        self.mind.deliver(sender, ilf, content, reply_with)

    def _refuse(self, data: MsgRecvData, reason: str, warning: str, once: tuple[str, str] | None = None) -> None:
        """Count, trace and log a refused message; with ``once`` (kind, sender) the warning
        is logged once per sender and kind: a stranger may insist."""
        self.rejected_messages += 1
        if once is None or once not in self._warned:
            if once is not None:
                self._warned.add(once)
                self.refused_senders.add(once[1])
            log.warning("%s: %s", self.jid, warning)
        refused: MsgRecvData = {**data, "rejected": reason}
        self.tracer.emit(MSG_RECV, refused)

    def after_burst(self) -> None:
        """Called after each burst of reasoning cycles; notices a mind that died (an
        intention dropped, nothing left to do or wait for)."""
        failures = self.host.failures
        if failures and not self.finished and not self.done.is_set() and not alive(self.mind):
            self.failure = failures[-1]
            self.done.set()

    def mark_finished(self) -> None:
        self.finished = True
        self.done.set()

    # -- liveness (bdi_rl.xmpp.liveness) ---------------------------------------------------------
    def can_act(self) -> bool:
        """Whether something can still happen in this agent by itself: it is not reasoning
        (held until the run starts, or paused as it stops), its last burst was cut short, a
        message waits in its mailbox, or its mind can act (``bdi.mind.can_act``)."""
        loop = self.bdi_loop
        return not self.reasoning or loop.busy or bool(loop.paused_mail) or not loop.queue.empty() or can_act(self.mind)

    def progress_mark(self) -> tuple[Any, ...]:
        """What changes whenever this agent does anything: reasoning cycles that ran an
        intention, messages taken, trace events."""
        return (self.mind.cycles - self.bdi_loop.idle_cycles, self.bdi_loop.received, self.tracer.seq)

    def waits(self) -> str:
        """What this agent waits for, in words (a stall report)."""
        said = describe_waits(self.mind, self.host.asked.get)
        return "; ".join(said) if said else self.nothing_left()

    def nothing_left(self) -> str:
        """What a stall report says of this agent when none of its intentions waits."""
        return "no intention left"

    async def flush_trace(self, stall_seconds: float = 30.0) -> bool:
        """Wait until telemetry has acknowledged every event; False once ``stall_seconds``
        pass without an acknowledgement. A long backlog (a learner that finished while the
        server was away) keeps draining as long as acknowledgements keep coming."""
        acked, since = self.tracer.acked, time.monotonic()
        while not self.tracer.all_acked:
            now = time.monotonic()
            if self.tracer.acked != acked:
                acked, since = self.tracer.acked, now
            elif now - since > stall_seconds:
                return False
            await asyncio.sleep(0.02)
        return True

    def stop_event(self) -> dict[str, Any]:
        """Its ``agent.stop`` event's data (but ``emitted``)."""
        return {"reason": self.failure or self.stopped or "finished"}

    def close_trace(self) -> None:
        """Its last event, ``agent.stop``, after its open step record; then no more."""
        self.tracer.flush_record()  # its open step record is numbered before agent.stop
        stop = self.stop_event()
        stop["emitted"] = self.tracer.seq + 1
        self.tracer.emit(AGENT_STOP, stop)
        self.tracer.close()

    async def retire(self, stall_seconds: float = 30.0) -> None:
        """Stop for good while the run goes on (``.kill_agent``): no more reasoning, the trace
        closed and acknowledged, the XMPP session ended."""
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


def _traced_content(body: str) -> MessageText:
    """A message body for the trace (clipped: shared experience is large)."""
    if len(body) <= MAX_TEXT_CHARS:
        return {"content": body}
    return {"content": clip_text(body), "content_chars": len(body)}


class CoordinatorAgent(TracedBdiAgent):
    """A plans-only team member (no env): forms the team and hands out work.

    ``.finish`` ends it, like ``.rl_finish`` ends a learner."""

    def add_custom_actions(self, actions: Actions) -> None:
        actions.add_procedure(".finish", (), self.mark_finished)

    def summary(self) -> dict[str, Any]:
        """Its entry in ``summary.json``."""
        return {"role": "coordinator"}

    def nothing_left(self) -> str:
        return "no intention left, .finish never called"


class CreatedAgent(TracedBdiAgent):
    """An agent a plan created during the run (``.create_agent``, bdi_rl/xmpp/society.py):
    plans only; it ends when killed, at ``.stopMAS`` or with the run."""

    def __init__(self, jid: str, password: str, asl: str, *, creator: str, **kwargs: Any) -> None:
        self.creator = creator
        super().__init__(jid, password, asl, **kwargs)

    def summary(self) -> dict[str, Any]:
        return {"role": "created", "created_by": self.creator, "asl": str(self.asl_file)}


class WorldAgent(TracedBdiAgent):
    """The shared world's agent (``[world]``): it hosts the world its seated learners step
    together (``bdi.world.SharedWorld``), traces every joint step, and is done when they are."""

    def __init__(self, jid: str, password: str, asl: str, *, shared: SharedWorld, **kwargs: Any) -> None:
        self.shared = shared
        shared.on_finished = self.mark_finished
        super().__init__(jid, password, asl, **kwargs)

    def add_custom_actions(self, actions: Actions) -> None:
        actions.add_function(".world_info", (), self._info)

    def _info(self) -> list[Any]:
        """``.world_info(I)``: ``I = [Env, Episodes, Steps]``, where the world is (world.asl)."""
        return [self.shared.world.env_id, self.shared.episodes, self.shared.steps]

    def can_act(self) -> bool:
        return self.shared.deadline_armed or super().can_act()  # a deadline still to pass

    def progress_mark(self) -> tuple[Any, ...]:
        return (*super().progress_mark(), self.shared.episodes, self.shared.steps)

    def waits(self) -> str:
        return self.shared.waiting_for()

    def start_data(self) -> AgentStartData:
        world = self.shared.world
        data: AgentStartData = {**super().start_data(), "env": world.env_id}
        data["seats"] = [[seat, world.bound.get(seat, seat)] for seat in world.agents]
        grid = world.grid()
        if grid is not None:
            data["world"] = grid  # type: ignore[typeddict-item]
        return data

    def stop_event(self) -> dict[str, Any]:
        return {**super().stop_event(), **self.stop_data()}

    def stop_data(self) -> dict[str, Any]:
        """How far the world went, for its ``agent.stop``."""
        stop: dict[str, Any] = {"joint_episodes": self.shared.episodes, "joint_steps": self.shared.steps}
        if self.shared.left:
            stop["seats_left"] = list(self.shared.left)
        return stop

    def summary(self) -> dict[str, Any]:
        return world_summary(self.stop_data())


def world_summary(stop: Mapping[str, Any]) -> dict[str, Any]:
    """The world agent's ``summary.json`` entry from its ``agent.stop`` data: the same from
    ``bdi-rl run`` (the live agent) and from the telemetry role (the trace)."""
    entry = {"role": "world", "episodes": stop.get("joint_episodes", 0), "joint_steps": stop.get("joint_steps", 0)}
    if stop.get("seats_left"):
        entry["seats_left"] = stop["seats_left"]
    return entry


class LearnerAgent(TracedBdiAgent):
    """A Q-learning BDI agent: its plans drive the learner through ``.rl_*`` actions."""

    def __init__(
        self,
        jid: str,
        password: str,
        asl: str,
        *,
        bridge: RlBridge,
        mode: str,
        seat: SeatClient | None = None,
        **kwargs: Any,
    ) -> None:
        self.bridge = bridge
        self.mode = mode
        self.seat = seat
        """its seat in a shared world"""
        bridge.on_finish = self._finished
        super().__init__(jid, password, asl, **kwargs)
        if seat is not None:
            seat.wake = self.bdi_loop.wake

    def _finished(self) -> None:
        if self.seat is not None:
            self.seat.finish()
        self.mark_finished()

    def nothing_left(self) -> str:
        return "no intention left, .rl_finish never called"

    def stop_event(self) -> dict[str, Any]:
        stop = super().stop_event()
        stats = self.bridge.stats
        if stats.replayed_steps:
            stop["replayed_steps"] = stats.replayed_steps
        if stats.training is not None and stats.training.end is not None:
            stop["training"] = [stats.training.start, stats.training.end]
        return stop

    def keep_learned(self) -> None:
        """Stopped before it finished (Ctrl-C, ``.stopMAS``, ``.kill_agent``): its training
        clock stops (its throughput counts the time it trained) and its table, as it stands,
        is checkpointed (written once telemetry holds the events before it)."""
        self.bridge.session.stop_training_clock()
        if not self.finished:
            self.bridge.checkpoints.save()

    async def retire(self, stall_seconds: float = 30.0) -> None:
        self.keep_learned()
        if self.seat is not None:  # the world must not wait for it
            self.seat.finish(self.stopped)
        await super().retire(stall_seconds)

    def after_burst(self) -> None:
        super().after_burst()
        if self.failure is not None and self.seat is not None:  # the world must not wait for it
            self.seat.finish(f"its mind failed: {self.failure}")

    def add_custom_actions(self, actions: Actions) -> None:
        self.bridge.register(actions)
        if self.seat is not None:
            self.seat.register(actions)

    def start_data(self) -> AgentStartData:
        """Also the env, its action names (a trace reader says "left", not "0") and, for a
        grid world, its map (readers draw the agent's episodes on it)."""
        env = self.bridge.session.env
        data: AgentStartData = {**super().start_data(), "env": env.env_id, "actions": env.action_names}
        world = env.world()
        if world is not None:
            data["world"] = world  # type: ignore[typeddict-item]
        return data

    def prepare_mind(self, mind: Mind) -> None:
        self.bridge.start(mind, self.mode)
        # .random in its plans draws from its own stream, seeded like its learner (a run's
        # plan choices repeat with its seed: the coordination plans explore with it)
        mind.random = random.Random(self.bridge.session.seed)
        super().prepare_mind(mind)
