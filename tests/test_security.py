"""Strangers on the XMPP server: telemetry writes only the run's agents' trace batches, and
agents execute achieve requests only from the agents of their experiment. Both refusals are
counted and traced or logged, never acted on."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from spade.agent import Agent
from spade.message import Message

from bdi_rl.trace.batch import BATCH_METADATA, encode_batch
from bdi_rl.trace.kinds import SCHEMA, TraceLevel
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.agent import TracedBdiAgent
from bdi_rl.xmpp.server import EmbeddedXmppServer, free_port
from bdi_rl.xmpp.telemetry import TelemetryAgent
from tests.conftest import MINIMAL_SPEC
from tests.rawxmpp import RawXmppClient, error_condition
from tests.test_agent import _run


def _event(run: str, agent: str, seq: int) -> dict:
    return {
        "schema": SCHEMA,
        "run": run,
        "agent": agent,
        "seq": seq,
        "ts": 1.0,
        "kind": "episode.end",
        "episode": seq,
        "step": 0,
        "data": {"return": 1.0, "length": 3, "outcome": "goal", "epsilon": 0.5},
    }


def test_telemetry_writes_trace_batches_only_from_the_runs_agents(tmp_path: Path):
    run_dir = tmp_path / "run-1"
    run_dir.mkdir()

    async def scenario() -> TelemetryAgent:
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True)
        await server.start()
        telemetry = TelemetryAgent("telemetry@localhost", "pw", port=server.port, senders=["member@localhost"])
        senders = [
            Agent(f"{name}@localhost", "pw", port=server.port, verify_security=False) for name in ("member", "stranger")
        ]
        try:
            await telemetry.start()
            telemetry.open_trace(run_dir / "trace.jsonl")
            for agent in senders:
                await agent.start()
            for agent in senders:
                jid = str(agent.jid)
                for _ in range(3):  # a stranger that insists is refused every time
                    body = encode_batch("run-1", jid, [_event("run-1", jid, 0)])
                    await _send(agent, body)
            for _ in range(100):
                if telemetry.trace_log.written and telemetry.trace_log.rejected >= 3:
                    break
                await asyncio.sleep(0.05)
        finally:
            for agent in senders:
                await agent.stop()
                agent.container.unregister(str(agent.jid))
            await telemetry.stop()
            await server.stop()
        return telemetry

    telemetry = _run(scenario())
    agents = [e["agent"] for e in read_trace(str(run_dir / "trace.jsonl"))]
    assert agents == ["member@localhost"]
    assert telemetry.trace_log.rejected == 3 and telemetry.refused_senders == {"stranger@localhost"}


async def _send(agent: Agent, body: str) -> None:
    from spade.behaviour import OneShotBehaviour

    class Send(OneShotBehaviour):
        async def run(self) -> None:
            await self.send(Message(to="telemetry@localhost", body=body, metadata=BATCH_METADATA))

    behaviour = Send()
    agent.add_behaviour(behaviour)
    await behaviour.join()


def test_agents_execute_achieve_requests_only_from_their_experiment(tmp_path: Path):
    plans = {
        "bob": "@greet +!greet(X) <- +greeted(X).\n",
        "boss": '!start.\n+!start <- .send(bob, achieve, greet("boss")).\n',
        "mallory": '!start.\n+!start <- .send(bob, achieve, greet("mallory")); .send(bob, tell, rumour(1)).\n',
    }

    async def scenario() -> dict[str, TracedBdiAgent]:
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True)
        await server.start()
        telemetry = TelemetryAgent("telemetry@localhost", "pw", port=server.port)
        agents: dict[str, TracedBdiAgent] = {}
        try:
            await telemetry.start()
            telemetry.open_trace(tmp_path / "trace.jsonl")
            for name, source in plans.items():
                path = tmp_path / f"{name}.asl"
                path.write_text(source)
                team = None if name == "mallory" else ["bob@localhost", "boss@localhost"]
                agents[name] = TracedBdiAgent(
                    f"{name}@localhost",
                    "pw",
                    str(path),
                    port=server.port,
                    hold=True,
                    achieve_from=team,
                    tracer=Tracer(tmp_path.name, f"{name}@localhost", TraceLevel.STEP),
                    telemetry="telemetry@localhost",
                )
            await asyncio.gather(*(a.start() for a in agents.values()))
            for agent in agents.values():
                agent.release()
            bob = agents["bob"]
            for _ in range(100):
                if 'greeted("boss")' in bob.beliefs() and "rumour(1)" in bob.beliefs():
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # time enough for mallory's request to have run, were it run
            for agent in agents.values():
                assert await agent.flush_trace(stall_seconds=10)
        finally:
            await asyncio.gather(*(a.stop() for a in agents.values()), return_exceptions=True)
            await telemetry.stop()
            await server.stop()
        return agents

    agents = _run(scenario())
    bob = agents["bob"]
    assert 'greeted("boss")' in bob.beliefs()
    assert 'greeted("mallory")' not in bob.beliefs()
    assert "rumour(1)" in bob.beliefs()  # anyone may tell: beliefs keep their source
    assert bob.inbox.rejected_messages == 1
    refused = [
        e["data"]
        for e in read_trace(str(tmp_path / "trace.jsonl"))
        if e["kind"] == "msg.recv" and e["agent"] == "bob@localhost" and "rejected" in e["data"]
    ]
    assert [(r["from"], r["performative"], r["content"]) for r in refused] == [
        ("mallory@localhost", "achieve", 'greet("mallory")')
    ]


@pytest.mark.slow  # starts a private ejabberd of its own
def test_ejabberd_takes_registrations_from_the_internal_network_only():
    """compose/ejabberd.yml allows in-band registration from INTERNAL_NETS only: from
    anywhere else nobody can create an account, so a stranger cannot even log in."""
    from spade.agent import AuthenticationFailure

    from tests.ejabberd import remove, start_ejabberd

    server = start_ejabberd(internal_nets="['10.255.0.0/16']")  # loopback is outside it
    try:

        async def register() -> None:
            stranger = Agent("stranger@localhost", "pw", port=server.port, verify_security=False)
            try:
                await stranger.start(auto_register=True)
            finally:
                stranger.container.unregister(str(stranger.jid))

        try:
            _run(register())
        except AuthenticationFailure:
            pass
        else:
            raise AssertionError("an account was registered from outside the internal network")
        listed = server.ctl("registered_users", "localhost")
        assert listed.returncode == 0 and "stranger" not in listed.stdout
    finally:
        remove(server)


# -- Who may speak on the embedded server, and as whom (issue 26) --------------------------
#
# Every client below is tests/rawxmpp.py: XMPP spoken over a socket by the test itself, not
# bdi-rl's, SPADE's or slixmpp's code, so what it sees is what the server does.

FORGED = "learner-2@localhost/spade"  # the JID a stranger claims: an agent of the run


async def _session(port: int, user: str, password: str = "pw", register: bool = False) -> RawXmppClient:
    """A client logged in as ``user`` with initial presence sent and the server's replies read."""
    client = RawXmppClient(port)
    await client.connect()
    if register:
        reply = await client.register(user, password)
        assert reply is not None and reply.get("type") == "result", reply is not None and ET.tostring(reply)
    await client.online(user, password)
    await client.drain(0.3)
    return client


def _froms(elements: list[ET.Element]) -> list[str | None]:
    return [element.get("from") for element in elements]


def test_a_runs_server_lets_no_stranger_register_or_log_in(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """The server bdi-rl run starts holds the run's accounts only: a stranger on the machine
    can open a connection, but registration is neither offered nor served, and an agent's
    JID needs the run's password. Each refused login is one warning."""

    async def scenario() -> dict[str, object]:
        accounts = {"learner-1": "run-secret", "learner-2": "run-secret", "telemetry": "run-secret"}
        async with EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", accounts=accounts) as server:
            seen: dict[str, object] = {}
            stranger = RawXmppClient(server.port)
            features = await stranger.connect()
            seen["offered"] = [child.tag for child in features]
            reply = await stranger.register("eve", "pw")
            seen["register"] = (reply.get("type") if reply is not None else None, error_condition(reply))
            seen["eve logs in"] = await stranger.login("eve", "pw")
            await stranger.close()
            guesser = RawXmppClient(server.port)
            await guesser.connect()
            seen["learner-2 with a wrong password"] = await guesser.login("learner-2", "guess")
            await guesser.close()
            agent = RawXmppClient(server.port)
            await agent.connect()
            seen["learner-2 with the run's password"] = await agent.login("learner-2", "run-secret")
            await agent.close()
            return seen

    with caplog.at_level(logging.WARNING, logger="bdi_rl.xmpp.server"):
        seen = _run(scenario())
    assert seen["offered"] == ["{urn:ietf:params:xml:ns:xmpp-sasl}mechanisms"]  # no register feature
    assert seen["register"] == ("error", "forbidden")
    assert seen["eve logs in"] is False
    assert seen["learner-2 with a wrong password"] is False
    assert seen["learner-2 with the run's password"] is True
    assert [r.getMessage().split(":")[0] for r in caplog.records if r.name == "bdi_rl.xmpp.server"] == [
        "XMPP login as 'eve' refused",
        "XMPP login as 'learner-2' refused",
    ]


def test_a_stanza_before_login_ends_the_stream_and_reaches_nobody(tmp_path: Path):
    """Before logging in a client may only authenticate: a message (or anything else but SASL
    and registration) gets ``<not-authorized/>`` and the stream ends, as on ejabberd, and
    pyjabber logs no internal error for it (it did, once per stanza, keeping the stream)."""
    from loguru import logger

    errors: list[str] = []
    sink = logger.add(lambda m: errors.append(m), level="ERROR")

    async def scenario() -> tuple[list[str | None], bool, list[ET.Element]]:
        async with EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", accounts={"alice": "pw"}) as server:
            alice = await _session(server.port, "alice")
            stranger = RawXmppClient(server.port)
            await stranger.connect()
            stranger.send(f"<message to='{alice.jid}' type='chat'><body>achieve</body></message>")
            closed = await stranger.wait_closed(5)
            got = [e for e in await alice.drain(1.0) if e.tag == "{jabber:client}message"]
            for client in (alice, stranger):
                await client.close()
            return [error_condition(e) for e in stranger.inbox], closed, got

    try:
        conditions, closed, got = _run(scenario())
    finally:
        logger.remove(sink)
    assert conditions == ["not-authorized"] and closed and got == []
    assert errors == []


#: Each kind of stanza pyjabber forwards to another client with the ``from`` its sender wrote;
#: ``{to}`` is the target's full JID, ``{frm}`` the from attribute (or nothing).
FORWARDED = {
    "message": "<message to='{to}' type='chat'{frm}><body>achieve</body></message>",
    "presence": "<presence to='alice@localhost' type='subscribe'{frm}/>",
    "rpc": "<iq to='{to}' type='set' id='rpc-1'{frm}><query xmlns='jabber:iq:rpc'><methodCall>"
    "<methodName>plan</methodName><params/></methodCall></query></iq>",
}


@pytest.mark.parametrize("kind", FORWARDED)
def test_a_forged_from_never_reaches_the_target(tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture):
    """A client that writes another JID into ``from`` has its stream closed with
    ``<invalid-from/>`` (as ejabberd does) and one warning naming both JIDs; the target sees
    nothing of it. The same stanza without ``from`` arrives with the sender's full JID, so
    the path is open for what is not forged."""
    tag = f"{{jabber:client}}{'iq' if kind == 'rpc' else kind}"

    async def scenario() -> dict[str, object]:
        async with EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True) as server:
            alice = await _session(server.port, "alice", register=True)
            eve = await _session(server.port, "eve", register=True)
            eve_jid = eve.jid
            eve.send(FORWARDED[kind].format(to=alice.jid, frm=f" from='{FORGED}'"))
            eve.send(FORWARDED[kind].format(to=alice.jid, frm=""))  # after the forged one: not routed
            closed = await eve.wait_closed(5)
            stream_error = [error_condition(e) for e in eve.inbox if e.tag.endswith("}error")]
            forged = [e for e in await alice.drain(1.0) if e.tag == tag]
            again = await _session(server.port, "eve")
            again.send(FORWARDED[kind].format(to=alice.jid, frm=""))
            honest = await alice.take(tag, 5)
            for client in (alice, eve, again):
                await client.close()
            return {
                "eve": eve_jid,
                "closed": closed,
                "stream_error": stream_error,
                "forged": _froms(forged),
                "honest": None if honest is None else honest.get("from"),
                "again": again.jid,
            }

    with caplog.at_level(logging.WARNING, logger="bdi_rl.xmpp.server"):
        seen = _run(scenario())
    assert seen["closed"] and seen["stream_error"] == ["invalid-from"]
    assert seen["forged"] == []
    # stamped: eve's new session's full JID; a subscription request with her bare JID, as
    # RFC 6121 3.1.2 (and ejabberd) stamp it
    again = str(seen["again"])
    assert seen["honest"] == (again.partition("/")[0] if kind == "presence" else again)
    refusals = [r.getMessage() for r in caplog.records if "invalid-from" in r.getMessage()]
    assert len(refusals) == 1 and seen["eve"] in refusals[0] and FORGED in refusals[0]


def test_a_stanza_from_its_own_jid_arrives_stamped_with_the_senders_full_jid(tmp_path: Path):
    """No ``from``, the bare JID (in any case) or the full JID: each arrives from the session's
    full JID, and the stream stays open."""

    async def scenario() -> tuple[str, list[str | None], bool]:
        async with EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True) as server:
            alice = await _session(server.port, "alice", register=True)
            bob = await _session(server.port, "bob", register=True)
            assert bob.jid is not None
            for frm in ("", " from='bob@localhost'", " from='Bob@LocalHost'", f" from='{bob.jid}'"):
                bob.send(f"<message to='{alice.jid}' type='chat'{frm}><body>hi</body></message>")
            got = [await alice.take("{jabber:client}message", 5) for _ in range(4)]
            still_open = not await bob.wait_closed(0.3)
            for client in (alice, bob):
                await client.close()
            return bob.jid, [m.get("from") if m is not None else None for m in got], still_open

    jid, froms, still_open = _run(scenario())
    assert froms == [jid] * 4 and still_open


def test_a_forged_trace_batch_is_not_written(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """A stranger's trace batch in an agent's name, sent as that agent, never reaches the real
    TelemetryAgent: the trace holds only what the agent itself sent (the same batch format)."""
    run_dir = tmp_path / "run-1"
    run_dir.mkdir()

    def batch_message(ret: float, frm: str) -> str:
        body = encode_batch(
            "run-1",
            "learner-2@localhost",
            [
                _event("run-1", "learner-2@localhost", 0)
                | {"data": {"return": ret, "length": 3, "outcome": "goal", "epsilon": 0.5}}
            ],
        )
        fields = "".join(
            f"<field var={quoteattr(k)} type='text-single'><value>{escape(v)}</value></field>"
            for k, v in BATCH_METADATA.items()
        )
        return (
            f"<message to='telemetry@localhost' type='chat'{frm}><body>{escape(body)}</body>"
            f"<x xmlns='jabber:x:data' type='form'><title>spade:x:metadata</title>{fields}</x></message>"
        )

    async def scenario() -> tuple[list[dict], bool]:
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True)
        await server.start()
        telemetry = TelemetryAgent("telemetry@localhost", "pw", port=server.port, senders=["learner-2@localhost"])
        clients: list[RawXmppClient] = []
        try:
            await telemetry.start()
            telemetry.open_trace(run_dir / "trace.jsonl")
            eve = await _session(server.port, "eve", register=True)
            clients.append(eve)
            eve.send(batch_message(666.0, f" from='{FORGED}'"))
            closed = await eve.wait_closed(5)
            learner = await _session(server.port, "learner-2", register=True)
            clients.append(learner)
            learner.send(batch_message(1.0, ""))
            for _ in range(100):
                if telemetry.trace_log.written:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # time for a second batch to be written, were there one
        finally:
            for client in clients:
                await client.close()
            await telemetry.stop()
            await server.stop()
        return read_trace(str(run_dir / "trace.jsonl")), closed

    with caplog.at_level(logging.WARNING, logger="bdi_rl.xmpp.server"):
        events, closed = _run(scenario())
    assert closed
    assert [(e["agent"], e["data"]["return"]) for e in events if e["kind"] == "episode.end"] == [
        ("learner-2@localhost", 1.0)
    ]
    assert any(FORGED in r.getMessage() and "eve@localhost/" in r.getMessage() for r in caplog.records)


@pytest.mark.slow  # a whole bdi-rl run (~10 s)
def test_a_stranger_cannot_get_into_a_bdi_rl_run(tmp_path: Path, write_spec):
    """The issue's attack on a real ``bdi-rl run`` with the embedded server: a local process
    cannot register ``eve`` nor log in as a learner, so it can send nothing (let alone a
    ``tellHow`` and an ``achieve`` as ``learner-2``). The run learns on, untouched, until it
    is stopped with Ctrl-C (its episodes would outlast the test)."""
    port = free_port()
    spec = write_spec(
        MINIMAL_SPEC.replace("episodes = 20", "episodes = 1000000").replace(
            'name = "learner"', 'name = "learner"\ncount = 2\nmode = "episode"'
        )
        + f"\n[xmpp]\nport = {port}\n"
    )
    runs = tmp_path / "runs"
    run = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "run", str(spec), "--runs", str(runs), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def learning() -> bool:
        traces = list(runs.glob("*/trace.jsonl"))
        return bool(traces) and traces[0].stat().st_size > 20_000

    async def attack() -> dict[str, object]:
        seen: dict[str, object] = {}
        deadline = time.monotonic() + 60
        while not learning():  # the agents are in, and learning
            assert run.poll() is None and time.monotonic() < deadline, "the run did not start learning"
            await asyncio.sleep(0.1)
        eve = RawXmppClient(port)
        features = await eve.connect()
        seen["register offered"] = features.find("{http://jabber.org/features/iq-register}register") is not None
        seen["register"] = error_condition(await eve.register("eve", "pw"))
        seen["eve"] = await eve.login("eve", "pw")
        await eve.close()
        for name in ("learner-2", "telemetry"):
            guesser = RawXmppClient(port)
            await guesser.connect()
            seen[name] = await guesser.login(name, "pw")
            await guesser.close()
        return seen  # each connection above was accepted: the run's server was up throughout

    try:
        seen = asyncio.run(attack())
        assert run.poll() is None, run.communicate()[1]
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert seen == {
        "register offered": False,
        "register": "forbidden",
        "eve": False,
        "learner-2": False,
        "telemetry": False,
    }
    assert run.returncode == 130, err
    for line in (
        "XMPP login as 'eve' refused: no such account",
        "XMPP login as 'learner-2' refused: wrong password",
        "XMPP login as 'telemetry' refused: wrong password",
    ):
        assert line in err, err  # each a warning of its own in the run's output ...
    assert "ERROR" not in err and "Traceback" not in err  # ... and nothing else about them
    [run_dir] = runs.iterdir()
    events = read_trace(str(run_dir / "trace.jsonl"))
    senders = {e["data"]["from"] for e in events if e["kind"] == "msg.recv"}
    assert senders <= {"learner-1@localhost", "learner-2@localhost"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["agents"]["learner-2"]["episodes"] > 0


@pytest.mark.slow  # the session's private ejabberd
def test_ejabberd_closes_the_stream_of_a_forged_from(ejabberd):
    """What the embedded server copies: ejabberd 23.01 gives a stanza without ``from`` or
    with the sender's bare JID the session's full JID, and answers one whose ``from`` is not
    the sender's with the stream error ``<invalid-from/>``, ending the session; nothing of
    that one reaches the target."""

    async def scenario() -> tuple[str | None, list[str | None], bool, list[str | None], list[ET.Element]]:
        alice = await _session(ejabberd.port, "sec-alice", register=True)
        eve = await _session(ejabberd.port, "sec-eve", register=True)
        for frm in ("", " from='sec-eve@localhost'"):
            eve.send(f"<message to='{alice.jid}' type='chat'{frm}><body>hi</body></message>")
        stamped = [await alice.take("{jabber:client}message", 5) for _ in range(2)]
        eve.send(f"<message to='{alice.jid}' type='chat' from='{FORGED}'><body>achieve</body></message>")
        closed = await eve.wait_closed(5)
        stream_error = [error_condition(e) for e in eve.inbox if e.tag.endswith("}error")]
        got = await alice.drain(1.0)
        for client in (alice, eve):
            await client.close()
        return (
            eve.jid,
            [m.get("from") if m is not None else None for m in stamped],
            closed,
            stream_error,
            [e for e in got if e.tag == "{jabber:client}message"],
        )

    eve, stamped, closed, stream_error, messages = _run(scenario())
    assert stamped == [eve, eve]
    assert closed and stream_error == ["invalid-from"] and messages == []
