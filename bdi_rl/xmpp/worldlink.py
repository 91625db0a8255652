"""A shared world across processes: the calls of ``bdi.world``'s two sides, as XMPP messages.

An agent whose world runs in another process reaches it through a :class:`RemoteWorld` (its
``WorldPort``); the world agent reaches that agent through a :class:`RemoteSeat` (its
``SeatEnd``). Nothing else connects them: the world spans hosts as the trace and the BDI
messages do.

**At message speed.** Calls are ops (one JSON object each: ``op`` and the call's arguments);
the ops a process makes to one peer within one turn of its event loop go as one message, a
JSON list in the body, marked by a ``<world xmlns="urn:bdi-rl:world"/>`` child (a
:class:`WorldWire`). A joint step is one message each way per agent: the choice out (with
``then``: the agent's next call will be ``.rl_reset`` if this step ends its episode), and
back the transition together with, when the episode ended, the next episode's first
observation (the world took the reset with the choice: no reset round trip). The message is
written to the stream as text (a world's answers to all its agents in one write) and taken
by an incoming filter of the XMPP client, before slixmpp matches it against its handlers
(no SPADE ``Message``, template or behaviour per call): per stanza what remains is
slixmpp's parse into a stanza object, and the server (BENCHMARKS.md, issue 33).

Trust: the world takes a seat's requests only from the JID bound to that seat, and an agent
takes the world's answers only from the world's JID; anything else is dropped and logged
once per sender. A request that bounces (the world agent is not online yet) is sent again
every :data:`RETRY_SECONDS` until it is delivered.

**Nothing lost waits forever.** XMPP does not acknowledge messages: a request or an answer
can be lost without a bounce (a session that ends as the message reaches it), and a world
that never heard an agent's first ``.rl_reset`` waits for it as for an agent still starting,
while the agent waits for the world. So a request carries its number ``n`` (per agent, from
1) and every op the world sends a seat its number ``k`` (per seat, from 1). An agent that
has heard nothing from the world :data:`RESEND_SECONDS` after a request sends it again; the
world handles a request number once, and for a number it has already handled sends the ops
it has sent the seat since then again; the agent takes each ``k`` once. A lost request is
made good, so is a lost last answer, and nothing is done twice.

Liveness, both ways (directed presence, RFC 6121 4.6: the server tells whoever received a
session's presence when that session ends, a crashed process included):

- a seated agent sends the world its presence with its first request and after every
  reconnect; a :class:`SeatWatch` then gives an agent that went offline ``[world]
  offline_grace_ms`` to come back before the world finishes its seat (meanwhile the
  barriers go on without it at their deadlines);
- the world sends its presence to each seated agent it hears from (its first request, its
  presence, and after the world's own reconnect); a :class:`WorldWatch` gives a world agent
  that went offline the same grace, then the agent's ``.rl_*`` call in progress, and every
  later one, fails naming the world (``SeatClient.world_gone``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import orjson

from bdi_rl.bdi.world import SeatClient, SharedWorld
from bdi_rl.rl.qlearning import EvalResult

__all__ = [
    "WORLD_NS",
    "RemoteSeat",
    "RemoteWorld",
    "SeatWatch",
    "WorldWatch",
    "WorldWire",
    "connect_seat",
    "host_remote_seats",
]

log = logging.getLogger("bdi_rl.xmpp.worldlink")

#: The namespace of the empty element that marks a shared-world message.
WORLD_NS = "urn:bdi-rl:world"
_MARK = f"{{{WORLD_NS}}}world"
_BODY = "{jabber:client}body"
#: Seconds between two tries of a request that bounced.
RETRY_SECONDS = 0.5
#: Seconds an agent waits without a word from the world before it sends its request again
#: (the world ignores a request it has handled, but says again what it answered).
RESEND_SECONDS = 2.0
#: The largest body taken (a joint step's ops are ~100 bytes; a policy of a 25,000-state table
#: ~25 KB): a stranger's huge message is dropped unread.
MAX_BODY = 4_000_000

Handler = Callable[[str, dict[str, Any]], "str | None"]


def _policy_text(policy: list[int] | None) -> str | None:
    """A greedy policy as one string: a digit per state when every action is < 10 (a
    25,000-state table is 25 KB), else comma-separated."""
    if policy is None:
        return None
    if all(0 <= a < 10 for a in policy):
        return "".join(map(str, policy))
    return ",".join(map(str, policy))


def _policy(text: Any) -> list[int] | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError("policy: not a string")
    if "," in text or not text.isdigit():
        return [int(a) for a in text.split(",")] if text else []
    return [int(c) for c in text]


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def world_stanza(to: str, ops: list[dict[str, Any]]) -> str:
    """The message carrying ``ops`` to ``to``, as the text written to the stream (the server
    stamps ``from``)."""
    to_attr = _xml_text(to).replace('"', "&quot;")
    body = _xml_text(orjson.dumps(ops).decode())
    return f'<message to="{to_attr}" type="chat"><body>{body}</body><world xmlns="{WORLD_NS}"/></message>'


class WorldWire:
    """One agent's shared-world messages: the ops for each peer made within one turn of the
    event loop go out as one message (a world's answers to one agent, the transition and the
    next episode's start), and the messages that come in are handed to ``handle`` op by op,
    each with its sender's bare JID."""

    def __init__(self, agent: Any, handle: Handler, on_bounce: Callable[[str], None] = lambda jid: None) -> None:
        self.agent = agent
        self.handle = handle
        """(bare sender, op) -> None, or why the op is refused"""
        self.on_bounce = on_bounce
        """a message of ours came back undelivered from this bare JID (the peer is not online)"""
        self.outbox: dict[str, list[dict[str, Any]]] = {}
        self.refused: set[str] = set()
        self.received = 0
        """messages taken"""

    def send(self, to: str, op: dict[str, Any]) -> None:
        box = self.outbox.get(to)
        if box is not None:
            box.append(op)
            return
        if not self.outbox:
            asyncio.get_running_loop().call_soon(self.flush)
        self.outbox[to] = [op]

    def flush(self) -> None:
        """Send what was gathered, every peer's message in one write (one wake-up of the
        server, not one per agent of a world), when the session is up; else each is queued by
        the client until it is (slixmpp sends stanzas queued so at session start)."""
        outbox, self.outbox = self.outbox, {}
        client = self.agent.client
        stanzas = [world_stanza(to, ops) for to, ops in outbox.items()]
        if getattr(client, "in_session", False) and client.transport is not None:
            client.send_raw("".join(stanzas))
        else:
            for stanza in stanzas:
                client.send(stanza)

    def announce(self, to: str) -> None:
        """Directed presence to ``to``: the server will tell it when this session ends."""
        self.agent.client.send_presence(pto=to)

    def filter(self, stanza: Any) -> Any:
        """The client's incoming filter (installed when the agent starts): a shared-world
        message is handled here and goes no further (None), before slixmpp matches it against
        every handler of the client and SPADE makes a ``Message`` of it; any other goes on."""
        try:
            return None if self.take(stanza) else stanza
        except Exception:  # a bug must not break the client's read loop
            log.exception("%s: a shared-world message could not be handled", self.agent.jid)
            return None

    def take(self, stanza: Any) -> bool:
        """Handle ``stanza`` if it is a shared-world message (True), else leave it (False)."""
        xml = stanza.xml
        if xml.find(_MARK) is None:
            return False
        sender = (xml.get("from") or "").split("/", 1)[0].lower()
        if xml.get("type") == "error":
            self.on_bounce(sender)
            return True
        self.received += 1
        body = xml.find(_BODY)
        text = body.text if body is not None and body.text else ""
        try:
            if len(text) > MAX_BODY:
                raise ValueError(f"a body of {len(text)} characters")
            ops = orjson.loads(text)
            if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
                raise ValueError("not a JSON list of objects")
            why = None
            for op in ops:
                why = self.handle(sender, op) or why
        except (ValueError, TypeError, KeyError) as exc:
            why = f"malformed: {exc}"
        if why is not None and sender not in self.refused:
            self.refused.add(sender)
            log.warning("%s: refused a shared-world message from %s (%s)", self.agent.jid, sender, why)
        return True


class RemoteWorld:
    """An agent's ``WorldPort`` to a world agent in another process."""

    pipelined = True
    """its choice says whether the agent's next call is ``.rl_reset`` (SeatClient.act)"""

    def __init__(self, wire: WorldWire, world_jid: str) -> None:
        self.wire = wire
        self.world_jid = world_jid
        self.last: dict[str, Any] | None = None
        """the last request, sent again if it bounces or goes unanswered"""
        self.requests = 0
        """requests made (the last one's number)"""
        self.waiting = False
        """the last request expects an answer and nothing has come from the world since"""
        self.sent_at = 0.0
        self.taken = 0
        """the number of the last op taken from the world (a repeated one is dropped)"""
        self._tick: asyncio.TimerHandle | None = None
        self.announced = False
        self.gone = False
        """the world agent is gone (its WorldWatch said so): requests are no longer retried"""

    def announce(self) -> None:
        """Let the world see this agent's session (again, after a reconnect)."""
        self.announced = True
        self.wire.announce(self.world_jid)

    def _request(self, body: dict[str, Any], answered: bool = True) -> None:
        """A new request (``answered``: the world will answer it)."""
        self.requests += 1
        body["n"] = self.requests
        self.last = body
        self.waiting = answered
        self._send_last()
        if answered and self._tick is None:
            self._tick = asyncio.get_running_loop().call_later(RESEND_SECONDS, self._check)
        elif not answered and self._tick is not None:
            self._tick.cancel()
            self._tick = None

    def _send_last(self) -> None:
        if not self.announced:
            self.announce()
        assert self.last is not None
        self.sent_at = time.monotonic()
        self.wire.send(self.world_jid, self.last)

    def _check(self) -> None:
        """While the last request waits for an answer: send it again every RESEND_SECONDS
        without a word from the world (lost on its way, or its answer was)."""
        self._tick = None
        if not self.waiting or self.gone:
            return
        due = self.sent_at + RESEND_SECONDS - time.monotonic()
        if due <= 0:
            self._send_last()
            due = RESEND_SECONDS
        self._tick = asyncio.get_running_loop().call_later(due, self._check)

    def heard(self, k: int) -> bool:
        """The world sent op number ``k``: whether it is new (else a repeat, dropped)."""
        self.waiting = False
        if k <= self.taken:
            return False
        self.taken = k
        return True

    def bounced(self, sender: str) -> None:
        """The world agent was not online: try the last request again in a moment (a bounce
        comes from the world's JID, stamped by the server; anyone else's is ignored, or a
        stranger could make an agent repeat its last choice)."""
        if sender == self.world_jid.lower() and self.last is not None and not self.gone:
            asyncio.get_running_loop().call_later(RETRY_SECONDS, self._send_last)

    def ask_reset(self, seat: str, policy: list[int] | None = None) -> None:
        self._request({"op": "reset", "seat": seat, "policy": _policy_text(policy)})

    def choose(self, seat: str, action: int, then_reset: bool = False) -> None:
        body: dict[str, Any] = {"op": "act", "seat": seat, "a": action}
        if then_reset:
            body["then"] = 1
        self._request(body)

    def ask_evaluation(self, seat: str, policy: list[int]) -> None:
        self._request({"op": "eval", "seat": seat, "policy": _policy_text(policy)})

    def finish(self, seat: str, why: str | None = None) -> None:
        self._request({"op": "finish", "seat": seat, "why": why}, answered=False)


class RemoteSeat:
    """The world's ``SeatEnd`` of an agent in another process."""

    def __init__(self, wire: WorldWire, agent_jid: str) -> None:
        self.wire = wire
        self.agent_jid = agent_jid
        self.handled = 0
        """the number of the agent's last request handled"""
        self.sent = 0
        """ops sent to the agent (the last one's number)"""
        self.since: list[dict[str, Any]] = []
        """the ops sent since that request: sent again if the agent asks again"""

    def request(self, n: Any) -> bool:
        """The agent's request number ``n``: whether it is new (handle it). A repeat of the
        last one (its answer may be lost) has what was sent since sent again."""
        if isinstance(n, bool) or not isinstance(n, int):
            raise ValueError(f"n: not a request number: {n!r}")
        if n > self.handled:
            self.handled = n
            self.since = []
            return True
        if n == self.handled:
            for op in self.since:
                self.wire.send(self.agent_jid, op)
        return False

    def _send(self, body: dict[str, Any]) -> None:
        self.sent += 1
        body["k"] = self.sent
        self.since.append(body)
        self.wire.send(self.agent_jid, body)

    def begun(self, obs: int) -> None:
        self._send({"op": "begun", "s": obs})

    def stepped(
        self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool, ahead: bool = False
    ) -> None:
        body: dict[str, Any] = {"op": "stepped", "a": a, "s2": s2, "r": r, "term": terminated, "trunc": truncated}
        if defaulted:
            body["dflt"] = True
        if ahead:
            body["ahead"] = True
        self._send(body)

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        body = {
            "op": "evaluated",
            "episodes": result.episodes,
            "mean_return": result.mean_return,
            "success_rate": result.success_rate,
            "mean_length": result.mean_length,
            "seconds": seconds,
        }
        self._send(body)

    def refused(self, why: str) -> None:
        self._send({"op": "refused", "why": why})


def serve_world(
    shared: SharedWorld,
    seat_jids: dict[str, str],
    ends: dict[str, RemoteSeat],
    heard_from: Callable[[str], None] = lambda jid: None,
) -> Handler:
    """The world agent's handler: each request from the JID bound to its seat, as a call, once
    (``ends``: the seats played from elsewhere; ``heard_from``: told the sender's JID first)."""

    def handle(sender: str, body: dict[str, Any]) -> str | None:
        seat = body.get("seat")
        if not isinstance(seat, str) or seat_jids.get(seat) != sender or seat not in ends:
            return f"{sender} does not play the seat {seat!r}"
        heard_from(sender)
        if not ends[seat].request(body.get("n")):
            return None  # handled before: what it was answered is on its way again
        op = body.get("op")
        if op == "act":
            action = body["a"]
            if isinstance(action, bool) or not isinstance(action, int) or action < 0:
                return f"not an action: {action!r}"
            if action >= shared.world.seats[seat].n_actions:
                return f"not an action of {seat}: {action!r}"
            shared.choose(seat, action, bool(body.get("then")))
        elif op == "reset":
            shared.ask_reset(seat, _checked_policy(shared, seat, body.get("policy")))
        elif op == "eval":
            policy = _checked_policy(shared, seat, body.get("policy"))
            if policy is None:
                return "an evaluation needs a policy"
            shared.ask_evaluation(seat, policy)
        elif op == "finish":
            why = body.get("why")
            if why is not None and not isinstance(why, str):
                return f"why: not a string: {why!r}"
            shared.finish(seat, why[:300] if why else None)
        else:
            return f"unknown op {op!r}"
        return None

    return handle


def _checked_policy(shared: SharedWorld, seat: str, text: Any) -> list[int] | None:
    policy = _policy(text)
    if policy is None:
        return None
    spec = shared.world.seats[seat]
    if len(policy) != spec.n_states or any(not 0 <= a < spec.n_actions for a in policy):
        raise ValueError(f"a policy of {seat} needs {spec.n_states} actions in 0..{spec.n_actions - 1}")
    return policy


def serve_seat(client: SeatClient, world_jid: str, port: RemoteWorld) -> Handler:
    """A seated agent's handler: the world's answers, from the world's JID only, each once."""

    def handle(sender: str, body: dict[str, Any]) -> str | None:
        if sender != world_jid:
            return f"{sender} is not this agent's world ({world_jid})"
        k = body.get("k")
        if isinstance(k, bool) or not isinstance(k, int):
            return f"k: not an op number: {k!r}"
        if not port.heard(k):
            return None  # said again (our request was repeated): taken already
        op = body.get("op")
        if op == "begun":
            client.begun(int(body["s"]))
        elif op == "stepped":
            client.stepped(
                int(body["a"]),
                int(body["s2"]),
                float(body["r"]),
                bool(body["term"]),
                bool(body["trunc"]),
                bool(body.get("dflt")),
                ahead=bool(body.get("ahead")),
            )
        elif op == "evaluated":
            result = EvalResult(
                episodes=int(body["episodes"]),
                mean_return=float(body["mean_return"]),
                success_rate=float(body["success_rate"]),
                mean_length=float(body["mean_length"]),
            )
            client.evaluated(result, float(body["seconds"]))
        elif op == "refused":
            why = body.get("why")
            if not isinstance(why, str):
                return f"why: not a string: {why!r}"
            client.refused(why[:300])
        else:
            return f"unknown op {op!r}"
        return None

    return handle


def connect_seat(agent: Any, client: SeatClient, world_jid: str, grace_s: float) -> RemoteWorld:
    """Wire a seated agent to a world agent in another process (before the agent starts);
    ``grace_s``: how long the world agent may be offline before the agent's calls fail."""
    wire = WorldWire(agent, lambda sender, body: handle(sender, body))
    port = RemoteWorld(wire, world_jid)
    handle = serve_seat(client, world_jid.lower(), port)
    wire.on_bounce = port.bounced
    agent.world_wire = wire
    client.port = port
    watch = WorldWatch(client, port, str(agent.jid), grace_s)
    agent.client_handlers += [
        ("reconnected", watch.reconnected),
        ("presence_available", watch.available),
        ("presence_unavailable", watch.unavailable),
        ("disconnected", watch.disconnected),
    ]
    return port


class WorldWatch:
    """A seated agent's watch over its world agent's session: a world that went offline (the
    server's unavailable presence) and is not back within ``grace_s`` is gone, and the
    agent's calls to it fail (:meth:`SeatClient.world_gone`). Before the world was first
    seen (it may start after its agents) nothing is judged."""

    def __init__(self, client: SeatClient, port: RemoteWorld, agent: str, grace_s: float) -> None:
        self.client = client
        self.port = port
        self.world = port.world_jid.lower()
        self.agent = agent
        self.grace_s = grace_s
        self.seen = False
        self.pending: asyncio.TimerHandle | None = None

    def _is_world(self, presence: Any) -> bool:
        return bool(presence["from"].bare.lower() == self.world)

    def available(self, presence: Any) -> None:
        if not self._is_world(presence):
            return
        self.seen = True
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None

    def unavailable(self, presence: Any) -> None:
        if self._is_world(presence) and self.seen:
            self._expect_back()

    def reconnected(self, _down_seconds: Any) -> None:
        """Back online after an outage: say so to the world (which answers with its own
        presence) and give it the grace to answer; a world that died meanwhile does not."""
        self.port.announce()
        if self.seen:
            self._expect_back()

    def disconnected(self, _reason: Any) -> None:
        """This agent's own session is down: the world is not judged while we cannot hear it."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None

    def _expect_back(self) -> None:
        if self.pending is not None or self.client.lost is not None:
            return
        if not self.client.finished:  # a world going away after this agent finished is its end
            log.warning(
                "%s: the world agent %s went offline; waiting %g s for it", self.agent, self.world, self.grace_s
            )
        self.pending = asyncio.get_running_loop().call_later(self.grace_s, self._gone)

    def _gone(self) -> None:
        self.pending = None
        self.port.gone = True
        self.client.world_gone(
            f"the world agent {self.world} went offline and did not come back within {self.grace_s:g} s"
        )


class SeatWatch:
    """The world's watch over the sessions of the agents seated from elsewhere: an agent whose
    session ended (the server's unavailable presence) and did not come back within
    ``grace_s`` has its seat finished, so the other agents go on."""

    def __init__(
        self, shared: SharedWorld, seats: dict[str, str], grace_s: float, announce: Callable[[str], None]
    ) -> None:
        self.shared = shared
        self.seats = seats
        """bare JID (lower case) -> seat"""
        self.grace_s = grace_s
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.announce = announce
        """send the world's presence to an agent (so its server tells it when the world goes)"""
        self.announced: set[str] = set()

    def heard_from(self, bare: str) -> None:
        """A request from a seated agent: the first one gets the world's presence back."""
        if bare not in self.announced:
            self.announced.add(bare)
            self.announce(bare)

    def unavailable(self, presence: Any) -> None:
        bare = presence["from"].bare.lower()
        seat = self.seats.get(bare)
        if seat is None or bare in self.pending or self.shared.seats[seat].finished:
            return
        self.shared.set_offline(seat, True)
        log.warning("world: %s went offline; its seat %s waits %.0f s for it", bare, seat, self.grace_s)
        why = f"its XMPP session went offline and did not come back within {self.grace_s:g} s"
        self.pending[bare] = asyncio.get_running_loop().call_later(self.grace_s, self._gone, bare, seat, why)

    def available(self, presence: Any) -> None:
        bare = presence["from"].bare.lower()
        seat = self.seats.get(bare)
        if seat is None:
            return
        self.shared.heard(seat)
        self.shared.set_offline(seat, False)
        self.announced.add(bare)
        self.announce(bare)  # it (re)connected: it learns the world is here
        timer = self.pending.pop(bare, None)
        if timer is not None:
            timer.cancel()
            log.warning("world: %s is back online", presence["from"].bare)

    def world_disconnected(self, _reason: Any) -> None:
        """The world's own session is down (a server restart ends every session at once):
        whoever went offline with it is not judged; an agent back first announces itself."""
        for timer in self.pending.values():
            timer.cancel()
        self.pending.clear()

    def world_reconnected(self, _down_seconds: Any) -> None:
        """The world's new session: every agent heard from gets its presence again."""
        for bare in self.announced:
            self.announce(bare)

    def _gone(self, bare: str, seat: str, why: str) -> None:
        self.pending.pop(bare, None)
        self.shared.finish(seat, why)


def host_remote_seats(
    agent: Any, shared: SharedWorld, remote: dict[str, str], seat_jids: dict[str, str], grace_s: float
) -> SeatWatch:
    """Wire the world agent to the seats whose agents run elsewhere (``remote``: seat ->
    agent JID); ``seat_jids`` binds every seat to its agent's JID (who may ask for it);
    ``grace_s``: how long one of them may be offline before its seat is finished."""
    bound = {seat: jid.lower() for seat, jid in seat_jids.items()}
    ends: dict[str, RemoteSeat] = {}
    wire = WorldWire(agent, serve_world(shared, bound, ends, lambda jid: watch.heard_from(jid)))
    agent.world_wire = wire
    watch = SeatWatch(shared, {jid.lower(): seat for seat, jid in remote.items()}, grace_s, wire.announce)
    for seat, jid in remote.items():
        end = ends[seat] = RemoteSeat(wire, jid)
        shared.seat(seat, jid.split("@", 1)[0], end, heard=False)  # its process may still be starting
    agent.client_handlers += [
        ("presence_unavailable", watch.unavailable),
        ("presence_available", watch.available),
        ("disconnected", watch.world_disconnected),
        ("reconnected", watch.world_reconnected),
    ]
    return watch
