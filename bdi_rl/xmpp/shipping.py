"""Shipping an agent's trace to the telemetry agent, and asking telemetry which run it writes.

:class:`TraceShipper` sends the tracer's events in acknowledged batches and resends what was
lost; :func:`join_run` asks telemetry for its run (an agent in its own process learns its run
only from telemetry). Both are SPADE behaviours of any agent with a ``tracer``."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any, Protocol

import orjson
from spade.behaviour import CyclicBehaviour
from spade.message import Message
from spade.template import Template

from bdi_rl.trace.batch import BATCH_METADATA, JOIN_REPLY_METADATA, JOIN_REQUEST_METADATA, Batch
from bdi_rl.trace.kinds import STEP_LEVEL
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.wakeable import WAKE, Wakeable

log = logging.getLogger("bdi_rl.xmpp.agent")  # the agents' logger: what their operators filter on


class LocalBatchMessage(Message):  # type: ignore[misc]  # spade ships no type hints
    """A trace batch to a telemetry agent of this process, handed over as the :class:`Batch`
    the tracer made (SPADE's container puts this very object in telemetry's mailbox), not a
    body to decode and check. A stanza from the network is always a plain ``Message``, so only
    an agent of this process can send one."""

    def __init__(self, to: str, batch: Batch) -> None:
        super().__init__(to=to, body="", metadata=BATCH_METADATA)
        self.batch = batch


class ShippingAgent(Protocol):
    """What shipping uses of the agent whose trace it ships (``agent.TracedBdiAgent``):
    its tracer, its telemetry agent, and SPADE's agent, container and client."""

    jid: Any
    tracer: Tracer
    telemetry_jid: str
    container: Any
    """SPADE's container: whether telemetry runs in this process"""
    client: Any
    """the XMPP client: whether the server is there"""

    def add_behaviour(self, behaviour: Any, template: Any = None) -> None: ...


class TraceShipper(Wakeable):
    """Sends the tracer's unacknowledged events to telemetry and resends what is not acked.

    While events keep coming it ships every ``flush_seconds``, whatever wakes it in between (an
    acknowledgement shipped the next batch at once before: a batch of ~8 events per
    acknowledgement, ~500 messages and their acks a second for two busy agents in one
    process); once the trace is closed, at once. With nothing left to send it sleeps until an
    acknowledgement or the tracer's next event wakes it. While telemetry is
    offline (the server bounces batches back) it sends one batch per resend as a probe, and
    logs the outage once when it starts and once, with the count, when telemetry answers."""

    agent: ShippingAgent
    """set by SPADE as the behaviour is added"""

    #: Batches in flight before waiting for an acknowledgement.
    WINDOW = 64
    #: Seconds without any acknowledgement before everything unacked is sent again.
    RESEND_AFTER = 5.0
    #: The same for the last events of an agent that has stopped (:meth:`finishing`): telemetry
    #: may be about to stop too, and an acknowledgement lost now is not worth a long wait.
    FINAL_RESEND_AFTER = 1.0

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
        self.resend_after = self.RESEND_AFTER
        self.ship_at = -math.inf  # when the next batch may go (flush_seconds after the last)
        self.answered = asyncio.Event()
        """set by each acknowledgement: what ``flush_trace`` waits on"""

    #: Longest sleep with nothing to send (nothing in flight either).
    IDLE_WAIT = 30.0
    #: Longest sleep at step level, where the open step record may be filling.
    RECORD_WAIT = 1.0

    async def run(self) -> None:
        tracer: Tracer = self.agent.tracer
        last_words = tracer.closed and self._can_ship()
        if last_words:  # the agent has stopped and waits for them: no company will come
            timeout = 0.0
        elif self.sent < len(tracer.pending) or not tracer.run or len(tracer.record):
            timeout = max(0.0, min(self.flush_seconds, self.ship_at - time.monotonic()))
        else:  # all sent: until an ack, the next event, or the deadline to resend the unacked
            # (not ``in_flight``: that is a count of acks still due, and a lost batch's ack
            # never comes, while a duplicate's does)
            timeout = self.IDLE_WAIT if tracer.all_acked else self.resend_after
            if tracer.level >= STEP_LEVEL:  # step records fill without waking the shipper:
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
        if tracer.closed or (not woken and time.monotonic() >= self.ship_at):
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
        self.answered.set()
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

    def finishing(self) -> None:
        """The agent's trace is closed and waits for its last acknowledgement: what is not
        acknowledged within FINAL_RESEND_AFTER is sent again (and again), so that one lost
        acknowledgement costs a second, not the agent's whole flush."""
        self.resend_after = self.FINAL_RESEND_AFTER
        self.wake()

    def reconnected(self) -> None:
        """What was in flight when the connection dropped may be lost: send it again now."""
        self._rewind(self.agent.tracer.acked)
        self.last_progress = time.monotonic()
        self.wake()

    def _remote(self) -> bool:
        """Whether telemetry is in another process (SPADE hands messages between agents of
        one process over directly: only what crosses the network is compressed)."""
        return not self.agent.container.has_agent(self.telemetry)

    def _window(self) -> int:
        return 1 if self.bounced else self.WINDOW  # offline telemetry: one batch probes

    def _can_ship(self) -> bool:
        """Whether a batch could go now: events not sent, room in the window, a way there."""
        tracer: Tracer = self.agent.tracer
        return bool(
            tracer.run
            and self.sent < len(tracer.pending)
            and self.in_flight < self._window()
            and (self.agent.client.in_session or not self._remote())
        )

    async def _ship(self) -> None:
        tracer: Tracer = self.agent.tracer
        if not tracer.run:
            return  # not joined to a run yet (agents in their own process ask telemetry first)
        now = time.monotonic()
        if self.sent and now - self.last_progress > self.resend_after:
            self._rewind(tracer.acked)
            self.last_progress = now
        remote = self._remote()
        if remote and not self.agent.client.in_session:
            return  # the server is away: keep the events until the client reconnects
        window = self._window()
        self.ship_at = now + self.flush_seconds
        while self.sent < len(tracer.pending) and self.in_flight < window:
            if remote:
                count, body = tracer.next_batch(self.sent, compress=True)
                msg = Message(to=self.telemetry, body=body, metadata=BATCH_METADATA)
            elif self._remote():  # telemetry left the process: its next resend goes by XMPP
                return
            else:
                batch = tracer.next_local_batch(self.sent)
                count, msg = len(batch.kinds), LocalBatchMessage(self.telemetry, batch)
            await self.send(msg)
            self.sent += count
            self.in_flight += 1


class AskTelemetry(CyclicBehaviour):  # type: ignore[misc]  # spade ships no type hints
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


async def join_run(agent: ShippingAgent, timeout: float) -> str:
    """The id of the run the telemetry agent owns."""
    reply = await ask_telemetry(agent, agent.telemetry_jid, {}, timeout)
    return str(reply["run"])  # a str: AskTelemetry takes no other answer
