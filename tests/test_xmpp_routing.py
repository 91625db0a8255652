"""The embedded XMPP server's routing (RFC 6120/6121), seen by plain clients (tests/rawxmpp.py,
no bdi-rl, SPADE or slixmpp code): what the agents rely on (directed presence and the
``unavailable`` a closed session owes, bounces that carry their payload) and what any XMPP
client expects of a server (subscriptions, rosters, pings, a replaced session, restricted XML)."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from bdi_rl.xmpp.server import EmbeddedXmppServer, free_port
from tests.rawxmpp import RawXmppClient, error_condition

pytestmark = pytest.mark.timeout(60)

MESSAGE = "{jabber:client}message"
PRESENCE = "{jabber:client}presence"
IQ = "{jabber:client}iq"
ROSTER = "{jabber:iq:roster}"


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


async def _online(port: int, user: str) -> RawXmppClient:
    client = RawXmppClient(port)
    await client.connect()
    reply = await client.register(user, "pw")
    assert reply is not None and reply.get("type") in ("result", "error"), reply
    await client.online(user, "pw")
    await client.drain(0.2)
    return client


def _server(tmp_path: Path) -> EmbeddedXmppServer:
    return EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True)


def test_a_closed_session_sends_unavailable_to_whoever_it_told_it_was_there(tmp_path: Path) -> None:
    """Directed presence (RFC 6121 4.6): the world agent and its players learn of each other's
    end this way, a crashed process included (the connection drops, no goodbye)."""

    async def scenario() -> tuple[list[tuple[str | None, str | None]], list[str | None]]:
        async with _server(tmp_path) as server:
            world = await _online(server.port, "world")
            player = await _online(server.port, "player")
            assert player.jid is not None
            player.send(f"<presence to='{world.jid}'/>")
            arrived = await world.take(PRESENCE)
            assert player._writer is not None
            player._writer.transport.abort()  # a crash: no </stream:stream>, no unavailable
            gone = await world.take(PRESENCE)
            seen = [(p.get("from"), p.get("type")) for p in (arrived, gone) if p is not None]
            others = [p.get("from") for p in await world.drain(0.3) if p.tag == PRESENCE]
            await world.close()
            return seen, others

    seen, others = _run(scenario())
    assert [kind for _, kind in seen] == [None, "unavailable"]
    assert seen[0][0] == seen[1][0] and str(seen[0][0]).startswith("player@localhost/")
    assert others == []  # told once


def test_a_message_for_nobody_online_comes_back_with_its_payload(tmp_path: Path) -> None:
    """No offline storage: a ``chat``/``normal`` message to a JID with no available session
    bounces to its sender as ``service-unavailable`` with its body and metadata, which is how
    the trace shipper and the world link know to send again; one for another domain is
    ``remote-server-not-found``; an error is never bounced."""

    async def scenario() -> list[tuple[str | None, str | None, str | None, str | None]]:
        async with _server(tmp_path) as server:
            alice = await _online(server.port, "alice")
            got = []
            for to in ("bob@localhost", "bob@localhost/spade", "bob@elsewhere.example"):
                alice.send(f"<message to='{to}' id='m1'><body>b</body><thread>t-1</thread></message>")
                bounce = await alice.take(MESSAGE, 3)
                assert bounce is not None
                got.append(
                    (
                        bounce.get("from"),
                        bounce.get("type"),
                        error_condition(bounce),
                        bounce.findtext(MESSAGE[:-7] + "thread"),
                    )
                )
            alice.send("<message to='bob@localhost' type='error'><body>b</body></message>")
            assert await alice.take(MESSAGE, 0.5) is None
            await alice.close()
            return got

    assert _run(scenario()) == [
        ("bob@localhost", "error", "service-unavailable", "t-1"),
        ("bob@localhost/spade", "error", "service-unavailable", "t-1"),
        ("bob@elsewhere.example", "error", "remote-server-not-found", "t-1"),
    ]


def test_a_message_to_a_bare_jid_reaches_the_available_session_and_a_full_jid_its_session(tmp_path: Path) -> None:
    async def scenario() -> tuple[str | None, str | None, str]:
        async with _server(tmp_path) as server:
            alice = await _online(server.port, "alice")
            bob = await _online(server.port, "bob")
            alice.send("<message to='Bob@LocalHost' type='chat'><body>to the bare JID</body></message>")
            first = await bob.take(MESSAGE)
            alice.send(f"<message to='{bob.jid}' type='chat'><body>to the full JID</body></message>")
            second = await bob.take(MESSAGE)
            assert first is not None and second is not None
            for client in (alice, bob):
                await client.close()
            return first.findtext("{jabber:client}body"), second.findtext("{jabber:client}body"), str(first.get("from"))

    bare, full, sender = _run(scenario())
    assert (bare, full) == ("to the bare JID", "to the full JID")
    assert sender.startswith("alice@localhost/")


def test_subscriptions_make_presence_flow_and_show_in_the_roster(tmp_path: Path) -> None:
    """RFC 6121 3: alice asks, bob approves; from then on bob's presence reaches alice, and
    both rosters say so."""

    async def scenario() -> dict[str, Any]:
        async with _server(tmp_path) as server:
            alice = await _online(server.port, "alice")
            bob = await _online(server.port, "bob")
            alice.send("<presence to='bob@localhost' type='subscribe'/>")
            request = await bob.take(PRESENCE)
            bob.send("<presence to='alice@localhost' type='subscribed'/>")
            approved = await alice.take(PRESENCE)
            bob_presence = await alice.take(PRESENCE)
            bob.send("<presence><status>busy</status></presence>")
            update = await alice.take(PRESENCE)
            await alice.drain(0.2)
            alice.send("<iq type='get' id='r1'><query xmlns='jabber:iq:roster'/></iq>")
            roster = await alice.take(IQ)
            assert request is not None and approved is not None and update is not None and roster is not None
            items = [(i.get("jid"), i.get("subscription")) for i in roster.iter(ROSTER + "item")]
            for client in (alice, bob):
                await client.close()
            return {
                "request": (request.get("from"), request.get("type")),
                "approved": (approved.get("from"), approved.get("type")),
                "bob online": bob_presence is not None and str(bob_presence.get("from")).startswith("bob@"),
                "update": update.findtext("{jabber:client}status"),
                "roster": items,
            }

    seen = _run(scenario())
    assert seen["request"] == ("alice@localhost", "subscribe")
    assert seen["approved"] == ("bob@localhost", "subscribed")
    assert seen["bob online"] and seen["update"] == "busy"
    assert seen["roster"] == [("bob@localhost", "to")]


def test_the_server_answers_pings_and_refuses_what_it_does_not_serve(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[str | None, str | None]]:
        async with _server(tmp_path) as server:
            alice = await _online(server.port, "alice")
            answers = []
            for payload in ("<ping xmlns='urn:xmpp:ping'/>", "<vCard xmlns='vcard-temp'/>"):
                alice.send(f"<iq type='get' id='q' to='localhost'>{payload}</iq>")
                reply = await alice.take(IQ)
                answers.append((reply.get("type") if reply is not None else None, error_condition(reply)))
            alice.send("<iq type='get' id='q' to='nobody@localhost/x'><ping xmlns='urn:xmpp:ping'/></iq>")
            reply = await alice.take(IQ)
            answers.append((reply.get("type") if reply is not None else None, error_condition(reply)))
            await alice.close()
            return answers

    assert _run(scenario()) == [("result", None), ("error", "service-unavailable"), ("error", "service-unavailable")]


def test_a_second_session_on_the_same_resource_replaces_the_first(tmp_path: Path) -> None:
    async def scenario() -> tuple[str | None, bool, str | None]:
        async with _server(tmp_path) as server:
            await _online(server.port, "bob")
            first = RawXmppClient(server.port)
            await first.connect()
            await first.login("bob", "pw")
            await first.drain(0.2)
            second = RawXmppClient(server.port)
            await second.connect()
            # bind the resource the first one got
            await second.login("bob", "pw")
            assert first.jid is not None and second.jid is not None
            resource = first.jid.partition("/")[2]
            third = RawXmppClient(server.port)
            await third.connect()
            token = "AGJvYgBwdw=="  # \0bob\0pw
            third.send(f"<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>{token}</auth>")
            await third.next(5)
            await third._restart_stream()
            third.send(
                f"<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>{resource}</resource>"
                "</bind></iq>"
            )
            bound = await third.next(5)
            closed = await first.wait_closed(5)
            condition = next((error_condition(e) for e in first.inbox if e.tag.endswith("}error")), None)
            for client in (second, third):
                await client.close()
            jid = bound.findtext(".//{urn:ietf:params:xml:ns:xmpp-bind}jid") if bound is not None else None
            return condition, closed, jid if jid == first.jid else None

    condition, closed, jid = _run(scenario())
    assert condition == "conflict" and closed and jid is not None


def test_xml_that_xmpp_forbids_ends_the_stream(tmp_path: Path) -> None:
    """RFC 6120 11.1: no DTD, entity declaration, comment or processing instruction, so no
    entity expansion either; the stream ends with ``restricted-xml``, before any login."""

    async def scenario() -> tuple[str | None, bool]:
        async with _server(tmp_path) as server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(
                b"<?xml version='1.0'?><stream:stream to='localhost' version='1.0' xmlns='jabber:client' "
                b"xmlns:stream='http://etherx.jabber.org/streams'><!-- a comment -->"
            )
            data = b""
            while b"</stream:stream>" not in data:
                chunk = await asyncio.wait_for(reader.read(4096), 5)
                if not chunk:
                    break
                data += chunk
            writer.close()
            start = data.index(b"<stream:error>")
            error = ET.fromstring(
                data[start : data.index(b"</stream:error>") + 15]
                .replace(b"<stream:error>", b"<error xmlns:stream='http://etherx.jabber.org/streams'>")
                .replace(b"</stream:error>", b"</error>")
            )
            return error_condition(error), b"</stream:stream>" in data

    assert _run(scenario()) == ("restricted-xml", True)


def test_an_account_can_remove_itself_on_an_open_server(tmp_path: Path) -> None:
    """XEP-0077 3.2, what ``--claim``'s throw-away accounts do: the account and its session go."""

    async def scenario() -> tuple[str | None, bool, bool]:
        async with _server(tmp_path) as server:
            temp = await _online(server.port, "claim-1")
            temp.send("<iq type='set' id='rm'><query xmlns='jabber:iq:register'><remove/></query></iq>")
            reply = await temp.take(IQ)
            closed = await temp.wait_closed(5)
            again = RawXmppClient(server.port)
            await again.connect()
            logged_in = await again.login("claim-1", "pw")
            await again.close()
            return (reply.get("type") if reply is not None else None), closed, logged_in

    assert _run(scenario()) == ("result", True, False)
