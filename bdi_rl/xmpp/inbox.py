"""The trust rules of an agent's BDI mailbox: which wire messages (spade_bdi's format,
:mod:`bdi_rl.bdi.wire`) its mind takes, and how a refusal is counted, traced and logged.

:class:`Inbox` is one part of a :class:`~bdi_rl.xmpp.agent.TracedBdiAgent`; it holds who may
ask what of the agent (``achieve_from``) and what it refused so far."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Protocol

from spade.message import Message

from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.wire import ASKS, MAX_ID_CHARS, WireError, parse_body
from bdi_rl.trace.kinds import MAX_TEXT_CHARS, MSG_RECV, MessageText, MsgRecvData, clip_text
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.jids import bare_jid

log = logging.getLogger("bdi_rl.xmpp.agent")  # the agents' logger: what their operators filter on

#: Metadata of every BDI message (spade_bdi's): ``ilf_type`` says the performative.
BDI_METADATA = {"performative": "BDI"}

#: Performatives that make an agent act (pursue a goal, change its plans, answer): only the
#: agents of its own experiment (and the spec's ``[xmpp] trust``) may send them.
REQUESTS = frozenset({"achieve", "unachieve", "tellHow", "untellHow", "askOne", "askAll", "askHow"})
#: Performatives that change a belief.
BELIEF_CHANGES = frozenset({"tell", "untell"})

#: Bytes of tells that senders outside the experiment may make one agent hold, together, over
#: its life. Anyone may tell (the wire contract), but nobody outside may fill its memory: a
#: stranger's beliefs are never removed by the shipped plans. List a client in
#: ``[xmpp] trust`` to lift the limit for it.
STRANGER_TELL_BYTES = 1 << 20

#: Every belief the runtime perceives, as (functor, arity): the ``.rl_*`` actions' percepts
#: (bdi_rl/bdi/actions.py), the team percepts (``team_percepts`` in bdi_rl/xmpp/wiring.py) and
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


def traced_content(body: str) -> MessageText:
    """A message body for the trace (clipped: shared experience is large)."""
    if len(body) <= MAX_TEXT_CHARS:
        return {"content": body}
    return {"content": clip_text(body), "content_chars": len(body)}


class AsksSent(Protocol):
    """What the inbox needs of the mind's host (``mindhost.AgentHost``): the asks it sent."""

    def answers(self, msg_id: str | None, sender: str, mind: Mind) -> bool:
        """Whether a message from ``sender`` replying to ``msg_id`` answers one of them."""
        ...


class Inbox:
    """Takes an agent's BDI messages to its mind under the trust rules, or refuses them."""

    def __init__(self, jid: str, tracer: Tracer, achieve_from: Collection[str] | None) -> None:
        self.jid = jid
        self.tracer = tracer
        self.achieve_from = (
            achieve_from
            if isinstance(achieve_from, frozenset) or achieve_from is None
            else frozenset(j.lower() for j in achieve_from)
        )
        """lower-case bare JIDs whose requests (achieve, asks, tellHow ...) are taken (None:
        anyone's); a frozenset is kept as given, so the agents of a run can share one"""
        self.rejected_messages = 0
        self.bounced_peers: set[str] = set()
        self.refused_senders: set[str] = set()
        """senders refused for a request or a percept (the rest of a refusal is in the trace)"""
        self._warned: set[tuple[str, str]] = set()
        self.stranger_tell_bytes = 0
        """bytes of tells taken from senders outside the experiment (see STRANGER_TELL_BYTES)"""

    def accept(self, msg: Message, mind: Mind, host: AsksSent) -> None:
        """Deliver a BDI message to the mind, its sender as ``source("<jid>")``, or refuse it
        (counted, traced as ``msg.recv`` with ``rejected``, logged): a request from outside
        the experiment, a body its performative does not carry, or a percept. The answer to
        an ask of ours is taken from the agent asked only."""
        sender = bare_jid(msg.sender)
        ilf = msg.get_metadata("ilf_type")
        body = msg.body or ""
        data: MsgRecvData = {"from": sender, "performative": ilf, "content": body}
        if len(body) > MAX_TEXT_CHARS:  # clipped as traced_content clips
            data["content"], data["content_chars"] = clip_text(body), len(body)
        reply_with = msg.get_metadata("reply_with") or None
        in_reply_to = msg.get_metadata("in_reply_to") or None
        if host.answers(in_reply_to, sender, mind):
            try:
                content = parse_body(ilf, body, reply=True)
            except WireError as exc:
                self._refuse(data, str(exc), f"rejected an answer from {sender}: {exc}")
                return
            self.tracer.emit(MSG_RECV, data)
            mind.deliver(sender, ilf, content, None, in_reply_to)
            return
        if ilf in REQUESTS and self.achieve_from is not None and sender not in self.achieve_from:
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
        if ilf in BELIEF_CHANGES and content.key in PERCEIVED:
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
        mind.deliver(sender, ilf, content, reply_with)

    def _refuse(self, data: MsgRecvData, reason: str, warning: str, once: tuple[str, str] | None = None) -> None:
        """Count, trace and log a refused message; with ``once`` (kind, sender) the warning
        is logged once per sender and kind: a stranger may insist."""
        self.rejected_messages += 1
        if once is None or once not in self._warned:
            if once is not None:
                self._warned.add(once)
                self.refused_senders.add(once[1])
            log.warning("%s: %s", self.jid, warning)
        refused = data.copy()
        refused["rejected"] = reason
        self.tracer.emit(MSG_RECV, refused)

    def bounced(self, peer: str) -> None:
        """A BDI message to ``peer`` came back: it is offline. Traced each time, logged once
        per peer (a stopped peer bounces many)."""
        self.tracer.emit(
            MSG_RECV,
            {"from": peer, "performative": "error", "content": "", "rejected": "bounced: recipient offline"},
        )
        if peer not in self.bounced_peers:
            self.bounced_peers.add(peer)
            log.warning("%s: BDI messages to %s bounce (is that agent running?)", self.jid, peer)
