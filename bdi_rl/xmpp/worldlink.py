"""A shared world across processes: the calls of ``bdi.world``'s two sides, as XMPP messages.

An agent whose world runs in another process reaches it through a :class:`RemoteWorld` (its
``WorldPort``); the world agent reaches that agent through a :class:`RemoteSeat` (its
``SeatEnd``). Each call is one message, ontology ``bdi-rl.world``, its body one JSON object
(``op`` and the call's arguments). Nothing else connects them: the world spans hosts as the
trace and the BDI messages do.

Trust: the world takes a seat's requests only from the JID bound to that seat, and an agent
takes the world's answers only from the world's JID; anything else is dropped and logged
once per sender. A request that bounces (the world agent is not online yet) is sent again
every :data:`RETRY_SECONDS` until it is delivered.

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
import json
import logging
from collections.abc import Callable
from typing import Any

from spade.behaviour import CyclicBehaviour
from spade.message import Message
from spade.template import Template

from bdi_rl.bdi.world import SeatClient, SeatEnd, SharedWorld
from bdi_rl.rl.qlearning import EvalResult

__all__ = ["WORLD_ONTOLOGY", "RemoteSeat", "RemoteWorld", "SeatWatch", "WorldInbox", "WorldWatch", "world_template"]

log = logging.getLogger("bdi_rl.xmpp.worldlink")

WORLD_ONTOLOGY = "bdi-rl.world"
REQUEST = {"performative": "request", "ontology": WORLD_ONTOLOGY}
ANSWER = {"performative": "inform", "ontology": WORLD_ONTOLOGY}
#: Seconds between two tries of a request that bounced.
RETRY_SECONDS = 0.5


def world_template(metadata: dict[str, str]) -> Template:
    return Template(metadata=metadata)


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


class _Sender:
    """Sends through an agent's behaviour (SPADE sends from a behaviour), in order."""

    def __init__(self, agent: Any, behaviour: CyclicBehaviour) -> None:
        self.agent = agent
        self.behaviour = behaviour

    def send(self, to: str, metadata: dict[str, str], body: dict[str, Any]) -> None:
        msg = Message(to=to, body=json.dumps(body, separators=(",", ":")), metadata=metadata)
        self.agent.submit(self.behaviour.send(msg))

    def announce(self, to: str) -> None:
        """Directed presence to ``to``: the server will tell it when this session ends."""
        self.agent.client.send_presence(pto=to)


class RemoteWorld:
    """An agent's ``WorldPort`` to a world agent in another process."""

    def __init__(self, sender: _Sender, world_jid: str) -> None:
        self.sender = sender
        self.world_jid = world_jid
        self.last: dict[str, Any] | None = None
        """the last request, sent again if it bounces"""
        self.announced = False
        self.gone = False
        """the world agent is gone (its WorldWatch said so): requests are no longer retried"""

    def announce(self) -> None:
        """Let the world see this agent's session (again, after a reconnect)."""
        self.announced = True
        self.sender.announce(self.world_jid)

    def _request(self, body: dict[str, Any]) -> None:
        if not self.announced:
            self.announce()
        self.last = body
        self.sender.send(self.world_jid, REQUEST, body)

    def bounced(self) -> None:
        """The world agent was not online: try the last request again in a moment."""
        if self.last is not None and not self.gone:
            last = self.last
            asyncio.get_running_loop().call_later(RETRY_SECONDS, lambda: self._request(last))

    def ask_reset(self, seat: str, policy: list[int] | None = None) -> None:
        self._request({"op": "reset", "seat": seat, "policy": _policy_text(policy)})

    def choose(self, seat: str, action: int) -> None:
        self._request({"op": "act", "seat": seat, "a": action})

    def ask_evaluation(self, seat: str, policy: list[int]) -> None:
        self._request({"op": "eval", "seat": seat, "policy": _policy_text(policy)})

    def finish(self, seat: str, why: str | None = None) -> None:
        self._request({"op": "finish", "seat": seat, "why": why})


class RemoteSeat:
    """The world's ``SeatEnd`` of an agent in another process."""

    def __init__(self, sender: _Sender, agent_jid: str) -> None:
        self.sender = sender
        self.agent_jid = agent_jid

    def begun(self, obs: int) -> None:
        self.sender.send(self.agent_jid, ANSWER, {"op": "begun", "s": obs})

    def stepped(self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool) -> None:
        body = {"op": "stepped", "a": a, "s2": s2, "r": r, "term": terminated, "trunc": truncated, "dflt": defaulted}
        self.sender.send(self.agent_jid, ANSWER, body)

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        body = {
            "op": "evaluated",
            "episodes": result.episodes,
            "mean_return": result.mean_return,
            "success_rate": result.success_rate,
            "mean_length": result.mean_length,
            "seconds": seconds,
        }
        self.sender.send(self.agent_jid, ANSWER, body)

    def refused(self, why: str) -> None:
        self.sender.send(self.agent_jid, ANSWER, {"op": "refused", "why": why})


class WorldInbox(CyclicBehaviour):  # type: ignore[misc]  # spade ships no type hints
    """Takes ``bdi-rl.world`` messages: requests at the world agent (``world``), answers at
    a seated agent (``seat``), each from the one sender allowed."""

    def __init__(self, handle: Callable[[str, dict[str, Any]], str | None]) -> None:
        super().__init__()
        self.handle = handle
        """(bare sender, body) -> None, or why the message is refused"""
        self.refused: set[str] = set()

    async def run(self) -> None:
        msg = await self.receive(timeout=30)
        if msg is None:
            return
        sender = str(msg.sender).split("/", 1)[0].lower()
        try:
            body = json.loads(msg.body or "")
            if not isinstance(body, dict):
                raise ValueError("not a JSON object")
            why = self.handle(sender, body)
        except (ValueError, TypeError, KeyError) as exc:
            why = f"malformed: {exc}"
        if why is not None and sender not in self.refused:
            self.refused.add(sender)
            log.warning("%s: refused a shared-world message from %s (%s)", self.agent.jid, sender, why)


def serve_world(
    shared: SharedWorld, seat_jids: dict[str, str], heard_from: Callable[[str], None] = lambda jid: None
) -> Callable[[str, dict[str, Any]], str | None]:
    """The world agent's handler: each request from the JID bound to its seat, as a call
    (``heard_from``: told the sender's JID first)."""

    def handle(sender: str, body: dict[str, Any]) -> str | None:
        seat = body.get("seat")
        if not isinstance(seat, str) or seat_jids.get(seat) != sender:
            return f"{sender} does not play the seat {seat!r}"
        heard_from(sender)
        op = body.get("op")
        if op == "act":
            action = body["a"]
            if isinstance(action, bool) or not isinstance(action, int) or action < 0:
                return f"not an action: {action!r}"
            if action >= shared.world.seats[seat].n_actions:
                return f"not an action of {seat}: {action!r}"
            shared.choose(seat, action)
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


def serve_seat(client: SeatClient, world_jid: str) -> Callable[[str, dict[str, Any]], str | None]:
    """A seated agent's handler: the world's answers, from the world's JID only."""

    def handle(sender: str, body: dict[str, Any]) -> str | None:
        if sender != world_jid:
            return f"{sender} is not this agent's world ({world_jid})"
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
                bool(body["dflt"]),
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
    inbox = WorldInbox(serve_seat(client, world_jid.lower()))
    agent.add_behaviour(inbox, world_template(ANSWER))
    port = RemoteWorld(_Sender(agent, inbox), world_jid)
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
    inbox = WorldInbox(serve_world(shared, bound, lambda jid: watch.heard_from(jid)))
    agent.add_behaviour(inbox, world_template(REQUEST))
    sender = _Sender(agent, inbox)
    watch = SeatWatch(shared, {jid.lower(): seat for seat, jid in remote.items()}, grace_s, sender.announce)
    for seat, jid in remote.items():
        end: SeatEnd = RemoteSeat(sender, jid)
        shared.seat(seat, jid.split("@", 1)[0], end, heard=False)  # its process may still be starting
    agent.client_handlers += [
        ("presence_unavailable", watch.unavailable),
        ("presence_available", watch.available),
        ("disconnected", watch.world_disconnected),
        ("reconnected", watch.world_reconnected),
    ]
    return watch
