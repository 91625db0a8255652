"""The mind's side of a SPADE agent: :class:`AgentHost` (what the mind asks of its host goes
out over XMPP, or to the run's society) and :class:`BdiLoop` (reasoning cycles in bursts,
asleep on the mailbox when the mind is idle)."""

from __future__ import annotations

import time
from typing import Any, Protocol

from spade.message import Message

from bdi_rl.bdi.mind import MindHost
from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.runtime import PlanFailure
from bdi_rl.bdi.text import term_text
from bdi_rl.bdi.wire import WireError, format_body
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.inbox import Inbox
from bdi_rl.xmpp.jids import bare_jid
from bdi_rl.xmpp.society import STOPPED, Society
from bdi_rl.xmpp.wakeable import WAKE, Wakeable

#: Ids of asks this agent sent that it remembers (to know whose answer is whose).
_ASKS_KEPT = 1024


class MindOwner(Protocol):
    """What :class:`BdiLoop` and :class:`AgentHost` use of the agent whose mind they run
    (``agent.TracedBdiAgent``), so that this module needs no agent class."""

    jid: Any
    tracer: Tracer
    mind: Mind
    inbox: Inbox
    host: AgentHost
    society: Society | None
    reasoning: bool
    """whether the BDI loop runs reasoning cycles"""
    stopped: str | None
    """why a plan ended the agent cleanly"""

    def resolve_jid(self, name: str) -> str: ...

    def send_bdi(
        self, to: str, ilf: str, body: str, reply_with: str | None = None, in_reply_to: str | None = None
    ) -> None: ...

    def after_burst(self) -> None: ...

    def mark_finished(self) -> None: ...

    def mind_crashed(self, exc: Exception) -> None: ...


class BdiLoop(Wakeable):
    """Runs reasoning cycles in bursts and sleeps on the mailbox when the mind is idle (until
    a message, a resume, a kill, or the mind's next timed wait)."""

    agent: MindOwner
    """set by SPADE as the behaviour is added"""

    #: Seconds of reasoning per turn before the event loop gets control back (an episode-mode
    #: cycle runs a whole episode, so a count of cycles would not bound the turn).
    BURST_SECONDS = 0.005

    def __init__(self) -> None:
        super().__init__()
        self.paused_mail: list[Message] = []  # BDI messages that arrived while paused
        self.busy = True  # the last burst ended with work left (a time limit, not idleness)
        self.idle_cycles = 0  # reasoning cycles that found nothing to do (one per idle burst)
        self.received = 0  # BDI messages handed to the mind

    async def run(self) -> None:
        """Turns, one after another, until a burst ends with work left: SPADE's loop then
        lets the event loop's other tasks run before the next (an idle turn waits on the
        mailbox, which lets them run anyway; returning after each cost a mind on a shared
        world an extra event-loop round per wake, two an episode), or until killed."""
        while await self._turn() and not self.busy and not self.is_killed():
            pass

    async def _turn(self) -> bool:
        """Wait for mail (not while busy), take it, run a burst of reasoning cycles; False
        when the mind crashed (the agent is failing)."""
        agent = self.agent
        mind = agent.mind
        if not agent.reasoning:  # held or paused: resume_bdi wakes us
            msg = await self.sleep_on_mailbox()
            if msg is not WAKE:
                self.paused_mail.append(msg)
            return True
        for early in self.paused_mail:
            agent.inbox.accept(early, mind, agent.host)
            self.received += 1
        self.paused_mail.clear()
        if self.busy:
            msg = await self.receive(timeout=0)
        else:
            deadline = mind.next_deadline()
            if deadline is None:  # idle until a message, a wake or a kill
                msg = await self.sleep_on_mailbox()
            else:
                msg = await self.receive(timeout=max(deadline - mind.host.now(), 0.001))
        while msg is not None:
            if msg is not WAKE:
                agent.inbox.accept(msg, mind, agent.host)
                self.received += 1
            msg = await self.receive(timeout=0)
        clock = time.perf_counter
        until = clock() + self.BURST_SECONDS
        self.busy = False
        try:
            while mind.cycle():
                if clock() >= until:
                    self.busy = True
                    break
            else:
                self.idle_cycles += 1
        except Exception as exc:  # noqa: BLE001 - a bug under the mind (plans' failures are handled in it)
            self.busy = False
            agent.mind_crashed(exc)  # the agent fails, saying so: this loop would have died unseen
            return False
        agent.after_burst()
        return True


class AgentHost(MindHost):
    """The mind's host in a SPADE agent: what it sends goes out over XMPP in spade_bdi's
    wire format; asks are remembered so that only the asked agent can answer them."""

    def __init__(self, agent: MindOwner) -> None:
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
