"""SPADE agents: the only module that touches spade / spade_bdi.

:class:`TracedBdiAgent` is a spade_bdi ``BDIAgent`` that
- announces presence (pyjabber drops messages to agents that never did; docs/ARCHITECTURE.md),
- runs its AgentSpeak mind without busy-polling (spade_bdi's behaviour spins a core when idle),
- records its mind and its messages through a :class:`~bdi_rl.trace.Tracer` and ships the
  events to the telemetry agent in acknowledged batches.
:class:`LearnerAgent` adds the ``.rl_*`` internal actions of :mod:`bdi_rl.bdi.actions`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Collection
from typing import Any

import agentspeak as asp
import orjson
from agentspeak.runtime import Intention
from spade.behaviour import CyclicBehaviour
from spade.message import Message
from spade.template import Template
from spade.trace import TraceStore
from spade_bdi.bdi import BDIAgent
from spade_bdi.bdi_behaviour import BDIBehaviour

from bdi_rl.xmpp import patches as xmpp_patches
from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.mind import TracedMind, literal_source, literal_text, load_mind
from bdi_rl.trace.batch import ACK_METADATA, BATCH_METADATA, JOIN_REPLY_METADATA, JOIN_REQUEST_METADATA
from bdi_rl.trace.events import (
    AGENT_START,
    INTENTION_FAIL,
    MAX_TEXT_CHARS,
    MSG_RECV,
    MSG_SEND,
    XMPP_RECONNECT,
    AgentStartData,
    MessageText,
    MsgRecvData,
    clip_text,
)
from bdi_rl.trace.tracer import Tracer
from bdi_rl.bdi.wire import WireError, format_literal, parse_literal

log = logging.getLogger("bdi_rl.xmpp.agent")

#: SPADE keeps the last 1000 messages per agent for its web UI (and inserts at the head of a
#: list); with ~190 KB trace batches that is ~190 MB per agent. The trace is ours: keep a few.
SPADE_MESSAGE_LOG = 16


_ILF = {
    "tell": (asp.Trigger.addition, asp.GoalType.belief),
    "untell": (asp.Trigger.removal, asp.GoalType.belief),
    "achieve": (asp.Trigger.addition, asp.GoalType.achievement),
    "unachieve": (asp.Trigger.removal, asp.GoalType.achievement),
}


#: Performatives that make an agent act: only the agents of its own experiment may send them.
_REQUESTS = frozenset({"achieve", "unachieve"})
#: Performatives that change a belief.
_BELIEF_CHANGES = frozenset({"tell", "untell"})

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
    }
)

#: The annotation of the beliefs an agent adds itself (Jason's; python-agentspeak 0.2 adds
#: none, so plans that must tell their own notes from told ones write it, and so do we).
SOURCE_SELF = asp.Literal("source", (asp.Literal("self"),))


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


class BdiLoop(BDIBehaviour, Wakeable):
    """Runs reasoning cycles in bursts and sleeps on the mailbox when there is nothing to do."""

    #: Seconds of reasoning per turn before the event loop gets control back (an episode-mode
    #: cycle runs a whole episode, so a count of cycles would not bound the turn).
    BURST_SECONDS = 0.005
    #: Longest sleep while idle: messages, a resume and a kill wake the loop before that.
    IDLE_WAIT = 30.0

    def __init__(self) -> None:
        super().__init__()
        self.paused_mail: list[Message] = []  # BDI messages that arrived while paused

    def add_actions(self) -> None:
        agent = self.agent

        @agent.bdi_actions.add(".send", 3)
        def _send(mind: Any, term: Any, intention: Any):
            receivers = asp.grounded(term.args[0], intention.scope)
            if not isinstance(receivers, tuple):
                receivers = (receivers,)
            ilf = asp.grounded(term.args[1], intention.scope)
            if not asp.is_atom(ilf) or ilf.functor not in _ILF:
                raise asp.AslError(f".send: illocutionary force must be one of {', '.join(_ILF)}")
            content = asp.freeze(term.args[2], intention.scope, {})
            try:
                body = format_literal(content)
            except WireError as exc:
                raise asp.AslError(f".send: {exc}") from None
            for receiver in receivers:
                agent.send_bdi(agent.resolve_jid(asp.asl_str(receiver)), ilf.functor, body)
            yield

    async def run(self) -> None:
        agent: TracedBdiAgent = self.agent  # type: ignore[assignment]
        mind: TracedMind | None = agent.bdi_agent
        if not agent.bdi_enabled or mind is None:  # held or paused: resume_bdi wakes us
            msg = await self.receive(timeout=self.IDLE_WAIT)
            if msg is not None and msg is not WAKE:
                self.paused_mail.append(msg)
            return
        if not agent.bdi_intention_buffer and mind.runnable_stack() is None and not self.paused_mail:
            deadline = mind.shortest_deadline()
            wait = self.IDLE_WAIT if deadline is None else deadline - time.time()
            msg = await self.receive(timeout=min(self.IDLE_WAIT, max(wait, 0.001)))
        else:
            msg = await self.receive(timeout=0)
        for early in self.paused_mail:
            agent.accept_bdi_message(early)
        self.paused_mail.clear()
        while msg is not None:
            if msg is not WAKE:
                agent.accept_bdi_message(msg)
            msg = await self.receive(timeout=0)
        buffer = agent.bdi_intention_buffer
        while buffer:
            trigger, goal_type, term, intention = buffer.popleft()
            try:
                mind.call(trigger, goal_type, term, intention)
            except Exception as exc:  # noqa: BLE001 - e.g. no applicable plan for a request
                agent.tracer.emit(
                    INTENTION_FAIL,
                    {"plan": None, "error": f"{trigger.value}{goal_type.value}{term}: {exc}"},
                )
        clock = time.perf_counter
        until = clock() + self.BURST_SECONDS
        while mind.step() and clock() < until:
            pass
        agent.after_burst()


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
        self.batches_sent = 0
        self.rewound_to = -1  # the seq the last rewind went back to
        self.bounced = 0  # batches bounced since telemetry last answered
        self.bounced_since = 0.0
        self.answered_at = -math.inf  # when telemetry last answered after an outage

    #: Longest sleep with nothing to send (nothing in flight either).
    IDLE_WAIT = 30.0

    async def run(self) -> None:
        tracer: Tracer = self.agent.tracer
        if self.sent < len(tracer.pending) or not tracer.run:
            timeout = self.flush_seconds
        else:  # all sent: until an ack, the next event, or the deadline to resend the unacked
            # (not ``in_flight``: that is a count of acks still due, and a lost batch's ack
            # never comes, while a duplicate's does)
            timeout = self.IDLE_WAIT if tracer.all_acked else self.RESEND_AFTER
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
            self.batches_sent += 1


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


async def join_run(agent: "TracedBdiAgent", timeout: float) -> str:
    """The id of the run the telemetry agent owns."""
    return (await ask_telemetry(agent, agent.telemetry_jid, {}, timeout))["run"]


class TracedBdiAgent(BDIAgent):
    """A spade_bdi agent with presence, a non-busy BDI loop and a shipped trace."""

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
        percepts: list[asp.Literal] | None = None,
        beliefs: list[asp.Literal] | None = None,
        achieve_from: Collection[str] | None = None,
    ) -> None:
        xmpp_patches.require()  # patched at start-up: bdi_rl.patches.apply_all
        self.tracer = tracer
        self.achieve_from = (
            achieve_from
            if isinstance(achieve_from, frozenset) or achieve_from is None
            else frozenset(j.lower() for j in achieve_from)
        )
        """lower-case bare JIDs whose achieve / unachieve requests are executed (None: anyone's);
        a frozenset is kept as given, so the agents of a run can share one"""
        self.start_percepts = list(percepts or [])
        self.start_beliefs = list(beliefs or [])
        self.hold = hold
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
        self.stranger_tell_bytes = 0
        """bytes of tells taken from senders outside the experiment (see STRANGER_TELL_BYTES)"""
        super().__init__(jid, password, asl, port=port, verify_security=False)
        self.traces = TraceStore(size=SPADE_MESSAGE_LOG)

    # spade_bdi wires its own busy-polling behaviour in __init__; swap in ours.
    def add_behaviour(self, behaviour: Any, template: Template | None = None) -> None:
        if type(behaviour) is BDIBehaviour:
            behaviour = self.bdi_loop = BdiLoop()
        super().add_behaviour(behaviour, template)

    def resume_bdi(self) -> None:
        super().resume_bdi()
        loop: BdiLoop | None = getattr(self, "bdi_loop", None)
        if loop is not None:
            loop.wake()

    def start_data(self) -> AgentStartData:
        """The ``agent.start`` event's data: who this is and which plans it runs."""
        return {"jid": str(self.jid), "asl": str(self.asl_file)}

    def _load_asl(self) -> None:
        self.pause_bdi()
        self.tracer.emit(AGENT_START, self.start_data())
        self.bdi_agent = load_mind(self.asl_file, self.bdi_actions, self.name, self.tracer, prepare=self.prepare_mind)
        self.bdi_agent.name = str(self.jid)
        if not self.hold:
            self.resume_bdi()

    def prepare_mind(self, mind: TracedMind) -> None:
        """What the mind knows before its first goal: team percepts, the spec's beliefs
        (which replace the plan file's beliefs of the same name and arity).

        Several percepts may share a name (one ``trusted(J)`` per JID), so each name's old
        beliefs are dropped once and then every percept is added. The spec's beliefs are the
        agent's own, ``source(self)``, as if its plan file held them: plans that read their
        own notes as ``share_every(K)[source(self)]`` see them, a stranger's tell they do not."""
        for functor, arity in dict.fromkeys((p.functor, len(p.args)) for p in self.start_percepts):
            mind.drop_percepts(functor, arity)
        for percept in self.start_percepts:
            mind.call(asp.Trigger.addition, asp.GoalType.belief, percept, Intention())
        for belief in self.start_beliefs:
            mind.drop_percepts(belief.functor, len(belief.args))
            if literal_source(belief) is None:
                belief = belief.with_annotation(SOURCE_SELF)
            mind.call(asp.Trigger.addition, asp.GoalType.belief, belief, Intention())

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

    def _on_reconnected(self, down_seconds: float) -> None:
        self.tracer.emit(XMPP_RECONNECT, {"down_s": round(down_seconds, 2)})
        self.shipper.reconnected()

    def resolve_jid(self, name: str) -> str:
        """Plans may name peers by local part (``bob``); JIDs get this agent's domain."""
        return name if "@" in name else f"{name}@{self.jid.domain}"

    def send_bdi(self, to: str, ilf: str, body: str) -> None:
        """Send one BDI message; ``body`` comes from :func:`~bdi_rl.bdi.wire.format_literal`."""
        msg = Message(to=to, body=body, metadata={"performative": "BDI", "ilf_type": ilf})
        self.tracer.emit(MSG_SEND, {"to": to, "performative": ilf, **_traced_content(body)})
        self.submit(self.bdi.send(msg))

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
        """Turn a BDI message into a belief or goal event tagged ``source("<sender>")``, or
        refuse it (counted, traced as ``msg.recv`` with ``rejected``, logged): a request from
        outside the experiment, a body that is not one ground literal, or a percept."""
        sender = bare_jid(msg.sender)
        ilf = msg.get_metadata("ilf_type")
        data: MsgRecvData = {"from": sender, "performative": ilf, **_traced_content(msg.body or "")}
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
            if ilf not in _ILF:
                raise WireError(f"unknown ilf_type {ilf!r}")
            term = parse_literal(msg.body or "")
        except WireError as exc:
            self._refuse(data, str(exc), f"rejected a BDI message from {sender}: {exc}")
            return
        if ilf in _BELIEF_CHANGES and (term.functor, len(term.args)) in PERCEIVED:
            name = f"{term.functor}/{len(term.args)}"
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
            self.stranger_tell_bytes += len(msg.body or "")
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
        trigger, goal_type = _ILF[ilf]
        # The sender as a string: a JID is not an AgentSpeak atom, so only a string can be
        # passed on in a message (``.send(B, achieve, adopt_policy_of(Sender))``) intact.
        tagged = term.with_annotation(asp.Literal("source", (sender,)))
        self.bdi_intention_buffer.append((trigger, goal_type, tagged, Intention()))

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
        """Called after each burst of reasoning cycles; notices a mind that died."""
        mind = self.bdi_agent
        if mind.failures and not mind.intentions and not self.finished and not self.done.is_set():
            self.failure = mind.failures[-1]
            self.done.set()

    def mark_finished(self) -> None:
        self.finished = True
        self.done.set()

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

    async def stop(self) -> None:
        await super().stop()
        # SPADE's container is a process-wide singleton that would keep routing this JID's
        # messages to the stopped agent (in-process) instead of over XMPP.
        self.container.unregister(str(self.jid))

    def beliefs(self) -> list[str]:
        return [literal_text(b) for group in self.bdi_agent.beliefs.values() for b in group]


def _traced_content(body: str) -> MessageText:
    """A message body for the trace (clipped: shared experience is large)."""
    if len(body) <= MAX_TEXT_CHARS:
        return {"content": body}
    return {"content": clip_text(body), "content_chars": len(body)}


class CoordinatorAgent(TracedBdiAgent):
    """A plans-only team member (no env): forms the team and hands out work.

    ``.finish`` ends it, like ``.rl_finish`` ends a learner."""

    def add_custom_actions(self, actions: asp.Actions) -> None:
        actions.add_procedure(".finish", (), self.mark_finished)


class LearnerAgent(TracedBdiAgent):
    """A Q-learning BDI agent: its plans drive the learner through ``.rl_*`` actions."""

    def __init__(self, jid: str, password: str, asl: str, *, bridge: RlBridge, mode: str, **kwargs: Any) -> None:
        self.bridge = bridge
        self.mode = mode
        bridge.on_finish = self.mark_finished
        super().__init__(jid, password, asl, **kwargs)

    def add_custom_actions(self, actions: asp.Actions) -> None:
        self.bridge.register(actions)

    def start_data(self) -> AgentStartData:
        """Also the env and its action names, so a trace reader can say "left", not "0"."""
        env = self.bridge.session.env
        return {**super().start_data(), "env": env.env_id, "actions": env.action_names}

    def prepare_mind(self, mind: TracedMind) -> None:
        self.bridge.start(mind, self.mode)
        super().prepare_mind(mind)
