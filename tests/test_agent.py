"""The SPADE agent layer on a real embedded server: idle cost, presence, BDI messages."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from spade.container import Container
from spade.message import Message

from bdi_rl.trace.batch import ACK_METADATA
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.agent import TracedBdiAgent
from bdi_rl.xmpp.agentroles import RoleOwner
from bdi_rl.xmpp.mindhost import MindOwner
from bdi_rl.xmpp.server import EmbeddedXmppServer, free_port
from bdi_rl.xmpp.shipping import ShippingAgent
from bdi_rl.xmpp.telemetry import TelemetryAgent


def _run(coro):
    """Run ``coro`` on the loop of SPADE's container (a process-wide singleton): a new one
    if a test before this one, in the same process, made the container inside
    ``asyncio.run``, whose loop is closed now."""
    container = Container()
    if container.loop.is_closed():
        container.loop = asyncio.new_event_loop()
    return container.loop.run_until_complete(coro)


async def _with_agents(tmp_path: Path, sources: dict[str, str], body, ejabberd=None):
    """Run agents with ``sources`` (name -> plans) and a telemetry agent, then ``body(agents)``.

    The server is a fresh embedded pyjabber, or the given ejabberd."""
    server = ejabberd or EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp", open_registration=True)
    if ejabberd is None:
        await server.start()
    telemetry = TelemetryAgent(f"telemetry@{server.domain}", "pw", port=server.port)
    agents = {}
    try:
        await telemetry.start()
        telemetry.open_trace(tmp_path / "trace.jsonl")
        for name, source in sources.items():
            path = tmp_path / f"{name}.asl"
            path.write_text(source)
            jid = f"{name}@{server.domain}"
            agents[name] = TracedBdiAgent(
                jid,
                "pw",
                str(path),
                tracer=Tracer(tmp_path.name, jid, TraceLevel.STEP),
                telemetry=f"telemetry@{server.domain}",
                port=server.port,
                hold=True,
            )
        await asyncio.gather(*(a.start() for a in agents.values()))
        for agent in agents.values():
            agent.release()
        await body(agents)
        for agent in agents.values():
            assert await agent.flush_trace(stall_seconds=10)
    finally:
        await asyncio.gather(*(a.stop() for a in agents.values()), return_exceptions=True)
        await telemetry.stop()
        if ejabberd is None:
            await server.stop()


def _members(protocol: type) -> set[str]:
    """The attributes and methods a ``typing.Protocol`` declares (its own, not object's)."""
    methods = {
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }
    return set(protocol.__annotations__) | methods


def test_a_running_agent_is_everything_its_parts_ask_of_it(tmp_path):
    """Each part of the agent (its mind's host and loop, its role, its trace shipper) declares
    what it uses of the agent as a Protocol; mypy cannot hold the agent to them (SPADE's
    Agent is untyped, so the agent passes for anything), so a started agent is checked here."""

    async def body(agents):
        agent = agents["a"]
        for protocol in (MindOwner, RoleOwner, ShippingAgent):
            missing = sorted(name for name in _members(protocol) if not hasattr(agent, name))
            assert not missing, f"TracedBdiAgent lacks {protocol.__name__}'s {missing}"

    _run(_with_agents(tmp_path, {"a": "+ping <- true.\n"}, body))


def test_idle_agents_sleep(tmp_path):
    """spade_bdi's own loop spins a core per idle agent; ours must sleep on the mailbox."""

    async def body(agents):
        await asyncio.sleep(0.5)  # let start-up settle
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(2.0)
        used = (time.process_time() - cpu) / (time.perf_counter() - wall)
        assert used < 0.10, f"5 idle agents used {used:.0%} of a core"

    idle = "+ping <- true.\n"
    _run(_with_agents(tmp_path, {f"idle{i}": idle for i in range(5)}, body))


def test_an_idle_agent_wakes_for_a_message_and_ships_its_events_at_once(tmp_path):
    """Idle agents sleep up to 30 s on their mailboxes: a message must wake the BDI loop, and
    the events it causes must wake the trace shipper, both without waiting that out."""
    trace = tmp_path / "trace.jsonl"

    async def body(agents):
        await asyncio.sleep(1.5)  # longer than any poll interval the agents ever had
        agents["alice"].send_bdi("bob@localhost", "tell", "hello(1)")
        started = time.monotonic()
        while time.monotonic() - started < 5:
            written = trace.read_text()
            if '"belief":"greeted(1)"' in written and '"kind":"msg.send"' in written:
                break
            await asyncio.sleep(0.05)
        assert "greeted(1)" in agents["bob"].beliefs()
        assert '"belief":"greeted(1)"' in trace.read_text(), "bob's events were not shipped"
        assert time.monotonic() - started < 5

    _run(_with_agents(tmp_path, {"alice": "ready.\n", "bob": "+hello(N) <- +greeted(N).\n"}, body))


def test_tell_and_achieve_between_agents(tmp_path):
    sources = {
        "alice": "!start.\n@start +!start <- .send(bob, tell, hello(7)); .send(bob, achieve, greet(alice)).\n",
        "bob": "@greet +!greet(X) : hello(N) <- +greeted(X, N).\n",
    }

    async def body(agents):
        bob = agents["bob"]
        for _ in range(100):
            if "greeted(alice, 7)" in bob.beliefs():
                break
            await asyncio.sleep(0.05)
        assert "greeted(alice, 7)" in bob.beliefs()
        assert "hello(7)" in bob.beliefs()

    _run(_with_agents(tmp_path, sources, body))
    events = read_trace(str(tmp_path / "trace.jsonl"))
    sent = [e["data"] for e in events if e["kind"] == "msg.send" and e["agent"].startswith("alice")]
    assert {"to": "bob@localhost", "performative": "tell", "content": "hello(7)"} in sent
    received = [e["data"] for e in events if e["kind"] == "msg.recv" and e["agent"].startswith("bob")]
    assert {"from": "alice@localhost", "performative": "achieve", "content": "greet(alice)"} in received
    goals = [e["data"] for e in events if e["kind"] == "goal.add" and e["agent"].startswith("bob")]
    assert {"goal": "greet(alice)", "source": "alice@localhost"} in goals


def test_any_xmpp_client_can_tell_an_agent(tmp_path):
    """A plain (non-BDI) client's tell reaches the plans intact; a malformed one is refused."""
    from spade.agent import Agent
    from spade.behaviour import OneShotBehaviour
    from spade.message import Message

    class Tell(OneShotBehaviour):
        async def run(self):
            for content in ("hello(", 'hello(7,"a, b")'):
                await self.send(
                    Message(to="bob@localhost", body=content, metadata={"performative": "BDI", "ilf_type": "tell"})
                )

    async def body(agents):
        bob = agents["bob"]
        client = Agent("outsider@localhost", "pw", port=bob.xmpp_port, verify_security=False)
        await client.start()
        client.add_behaviour(Tell())
        try:
            for _ in range(100):
                if 'got(7, "a, b")' in bob.beliefs():
                    break
                await asyncio.sleep(0.05)
            assert 'got(7, "a, b")' in bob.beliefs()
            assert bob.inbox.rejected_messages == 1
        finally:
            await client.stop()

    _run(_with_agents(tmp_path, {"bob": "@hello +hello(X, T) <- +got(X, T).\n"}, body))
    received = [e["data"] for e in read_trace(str(tmp_path / "trace.jsonl")) if e["kind"] == "msg.recv"]
    assert any(r.get("rejected") and r["content"] == "hello(" for r in received)
    assert {"from": "outsider@localhost", "performative": "tell", "content": 'hello(7,"a, b")'} in received


REMOTE_TELLER = """
import asyncio, sys
from spade.agent import Agent
from spade.behaviour import OneShotBehaviour
from spade.message import Message

class Tell(OneShotBehaviour):
    async def run(self):
        for ilf, body in (("tell", 'hazard(3, "a, b")'), ("achieve", "greet(remote)")):
            await self.send(Message(to="bob@localhost", body=body,
                                    metadata={"performative": "BDI", "ilf_type": ilf}))
        await asyncio.sleep(1.0)

async def main():
    agent = Agent("remote@localhost", "pw", port=int(sys.argv[1]), verify_security=False)
    await agent.start(auto_register=True)
    behaviour = Tell()
    agent.add_behaviour(behaviour)
    await behaviour.join(timeout=20)
    await agent.stop()

asyncio.run(main())
"""


def test_bdi_messages_cross_processes_through_ejabberd(tmp_path, ejabberd):
    """Another process tells and asks bob something over ejabberd (which reports full JIDs)."""
    import subprocess
    import sys

    sources = {"bob": "@greet +!greet(X) : hazard(N, T) <- +greeted(X, N, T).\n"}

    async def body(agents):
        bob = agents["bob"]
        remote = subprocess.Popen(
            [sys.executable, "-c", REMOTE_TELLER, str(ejabberd.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            for _ in range(300):
                if 'greeted(remote, 3, "a, b")' in bob.beliefs():
                    break
                await asyncio.sleep(0.05)
            assert 'greeted(remote, 3, "a, b")' in bob.beliefs(), remote.poll()
        finally:
            remote.kill()
            remote.wait()

    _run(_with_agents(tmp_path, sources, body, ejabberd=ejabberd))
    received = [e["data"] for e in read_trace(str(tmp_path / "trace.jsonl")) if e["kind"] == "msg.recv"]
    assert {"from": "remote@localhost", "performative": "tell", "content": 'hazard(3, "a, b")'} in received
    goals = [e["data"] for e in read_trace(str(tmp_path / "trace.jsonl")) if e["kind"] == "goal.add"]
    assert {"goal": "greet(remote)", "source": "remote@localhost"} in goals


def test_a_message_to_an_offline_agent_bounces_and_is_not_read_as_its_tell(tmp_path, ejabberd):
    """ejabberd returns a BDI message to an offline JID as an error carrying our metadata:
    traced as a rejected msg.recv, never turned into a belief ``source(offline peer)``."""
    sources = {"bouncer": '!go.\n@go +!go <- .send("nobody-home", tell, news(1)).\n'}

    async def body(agents):
        bouncer = agents["bouncer"]
        for _ in range(200):
            if "nobody-home@localhost" in bouncer.inbox.bounced_peers:
                break
            await asyncio.sleep(0.05)
        assert bouncer.inbox.bounced_peers == {"nobody-home@localhost"}
        assert not any(b.startswith("news") for b in bouncer.beliefs())

    _run(_with_agents(tmp_path, sources, body, ejabberd=ejabberd))
    received = [e["data"] for e in read_trace(str(tmp_path / "trace.jsonl")) if e["kind"] == "msg.recv"]
    assert received == [
        {
            "from": "nobody-home@localhost",
            "performative": "error",
            "content": "",
            "rejected": "bounced: recipient offline",
        }
    ]


REMOTE_ASKER = """
import asyncio, json, sys
from spade.agent import Agent
from spade.behaviour import OneShotBehaviour
from spade.message import Message

def bdi(ilf, body, **extra):
    return Message(to="bob@localhost", body=body, metadata={"performative": "BDI", "ilf_type": ilf, **extra})

class Talk(OneShotBehaviour):
    async def run(self):
        await self.send(bdi("askOne", "value(X)", reply_with="r1"))
        await self.send(bdi("askAll", "value(X)", reply_with="r2"))
        await self.send(bdi("askOne", "double(4, Y)", reply_with="r3"))  # bob's +?double plan answers
        await self.send(bdi("askOne", "double(4, 9)", reply_with="r4"))  # ... and fails: untell
        await self.send(bdi("tellHow", "@hi +!hello(N) <- +greeted(N)."))
        await self.send(bdi("achieve", "hello(3)"))
        await self.send(bdi("achieve", "ask_remote"))
        seen = []
        while len(seen) < 5:
            msg = await self.receive(timeout=20)
            if msg is None:
                break
            seen.append({"ilf": msg.get_metadata("ilf_type"), "body": msg.body,
                         "reply_with": msg.get_metadata("reply_with"), "in_reply_to": msg.get_metadata("in_reply_to")})
            if msg.get_metadata("ilf_type") == "askOne":  # bob's synchronous ask: answer it
                await self.send(Message(to="bob@localhost", body="secret(42)", metadata={
                    "performative": "BDI", "ilf_type": "tell", "in_reply_to": msg.get_metadata("reply_with")}))
        print(json.dumps(seen), flush=True)
        await asyncio.sleep(1.0)

async def main():
    agent = Agent("remote@localhost", "pw", port=int(sys.argv[1]), verify_security=False)
    await agent.start(auto_register=True)
    agent.presence.set_available()
    behaviour = Talk()
    agent.add_behaviour(behaviour)
    await behaviour.join(timeout=60)
    await agent.stop()

asyncio.run(main())
"""


def test_asks_answers_and_told_plans_cross_processes_through_ejabberd(tmp_path, ejabberd):
    """Another process asks bob (askOne, askAll: the answers carry in_reply_to; an askOne no
    belief answers is answered by bob's +?q plan, or untell when it fails), tells it a plan
    and has it run, and answers bob's own synchronous askOne, all as spade_bdi messages."""
    import json
    import subprocess
    import sys

    sources = {
        "bob": "value(7).\nvalue(8).\n@double +?double(N, M) <- M = N * 2.\n"
        '@ask +!ask_remote <- .send("remote@localhost", askOne, secret(S), secret(S), 20000); +got(S).\n'
    }
    out: list[str] = []

    async def body(agents):
        bob = agents["bob"]
        remote = subprocess.Popen(
            [sys.executable, "-c", REMOTE_ASKER, str(ejabberd.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            for _ in range(400):
                if any(b.startswith("got(") for b in bob.beliefs()) and "greeted(3)" in bob.beliefs():
                    break
                await asyncio.sleep(0.05)
            out.append(await asyncio.get_event_loop().run_in_executor(None, lambda: remote.communicate(timeout=60)[0]))
        finally:
            remote.kill()
        assert "greeted(3)" in bob.beliefs()
        assert "got(42)" in bob.beliefs()  # Jason's idiom: the answer unifies with the 4th argument

    _run(_with_agents(tmp_path, sources, body, ejabberd=ejabberd))
    seen = json.loads(out[0].strip().splitlines()[-1])
    answers = {m["in_reply_to"]: (m["ilf"], m["body"]) for m in seen if m["in_reply_to"]}
    assert {k: answers[k] for k in ("r1", "r2", "r3")} == {
        "r1": ("tell", "value(7)"),
        "r2": ("tell", "[value(7), value(8)]"),
        "r3": ("tell", "double(4, 8)"),
    }
    assert answers["r4"] == ("untell", "double(4, 9)")  # (x * 2 would be NaN, as in Jason: no failure)
    [ask] = [m for m in seen if m["ilf"] == "askOne"]
    assert ask["body"] == "secret(S)" and ask["reply_with"].startswith("bob@localhost#")


def test_a_lost_last_acknowledgement_is_asked_again_within_a_second(tmp_path, monkeypatch):
    """The acknowledgement of an agent's last batch (its ``agent.stop``) is lost once, as
    when telemetry stops on a loaded machine as it sends it: the agent, waiting for it,
    sends the batch again within TraceShipper.FINAL_RESEND_AFTER, so its flush succeeds
    well inside a stall bound shorter than the ordinary RESEND_AFTER, and a finished run
    is not reported failed for want of an acknowledgement."""
    from bdi_rl.xmpp.shipping import TraceShipper
    from bdi_rl.xmpp.telemetry import TraceReceiver

    drop: list[bool] = [False]
    dropped: list[str] = []
    send = TraceReceiver.send

    async def lossy_send(self, msg):  # the fault: one acknowledgement never leaves
        if drop[0]:
            drop[0] = False
            dropped.append(msg.body)
            return
        await send(self, msg)

    monkeypatch.setattr(TraceReceiver, "send", lossy_send)

    async def body(agents):
        agent = agents["a"]
        assert await agent.flush_trace(stall_seconds=10)
        drop[0] = True
        agent.close_trace()
        assert await agent.flush_trace(stall_seconds=TraceShipper.RESEND_AFTER - 1)
        assert dropped and agent.tracer.all_acked

    _run(_with_agents(tmp_path, {"a": "!start.\n+!start <- .print(hi).\n"}, body))
    stops = [e for e in read_trace(tmp_path / "trace.jsonl") if e["kind"] == "agent.stop"]
    assert len(stops) == 1  # sent twice, written once


def test_a_message_that_comes_to_a_stopping_agent_is_dropped_without_a_warning(tmp_path, caplog):
    """A trace batch sent twice (its acknowledgement was late) is acknowledged twice, and
    the second may come after its agent, flushed, has begun to stop: its behaviours have
    ended, so nothing takes it. SPADE warned with the message whole, three lines on the
    terminal of a run that went well. A message no behaviour takes from a running agent
    is still warned of."""

    async def body(agents):
        running, stopping = agents["running"], agents["stopping"]
        assert await stopping.flush_trace(stall_seconds=10)
        await stopping.stop()
        with caplog.at_level(logging.DEBUG):
            late = Message(to=str(stopping.jid), sender="telemetry@localhost", body='{"upto":1}', metadata=ACK_METADATA)
            stopping.dispatch(late)  # as an in-process telemetry's acknowledgement comes
            stray = Message(to=str(running.jid), sender="stranger@localhost", body="hello")
            stray.set_metadata("ontology", "nobody-listens")
            running.dispatch(stray)

    _run(_with_agents(tmp_path, {"running": "+ping <- true.\n", "stopping": "+ping <- true.\n"}, body))
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1 and "stranger@localhost" in warned[0] and "nobody-listens" in warned[0], warned
    assert any(
        "stopping@localhost is stopping: dropped a message from telemetry@localhost" in r.getMessage()
        for r in caplog.records
    )


def test_an_acknowledgement_to_an_agent_that_has_gone_comes_back_to_telemetry_quietly(tmp_path, caplog, ejabberd):
    """The same duplicate acknowledgement, sent after its agent has logged off: ejabberd
    returns it to telemetry as an error carrying the acknowledgement's metadata, which no
    behaviour of telemetry's takes. Telemetry drops it (the agent, were it still there,
    would send its batch again) instead of SPADE's warning with the message whole."""

    async def body(_agents):
        telemetry = TelemetryAgent(f"telemetry2@{ejabberd.domain}", "pw", port=ejabberd.port)
        await telemetry.start(auto_register=True)
        try:
            with caplog.at_level(logging.DEBUG):
                ack = Message(to=f"gone@{ejabberd.domain}", body='{"upto":7}', metadata=ACK_METADATA)
                ack.prepare(telemetry.client).send()  # as its TraceReceiver's send does
                for _ in range(100):
                    if any("came back" in r.getMessage() for r in caplog.records):
                        break
                    await asyncio.sleep(0.05)
        finally:
            await telemetry.stop()

    _run(_with_agents(tmp_path, {}, body, ejabberd=ejabberd))
    assert any(f"a message to gone@{ejabberd.domain} came back" in r.getMessage() for r in caplog.records)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_an_idle_mind_sleeps_under_one_net_timer_and_a_stopped_agent_keeps_none(tmp_path):
    """An idle BDI loop sleeps on its mailbox with no timer per wait; a single net timer wakes
    it now and then (a wake gone amiss costs a delay, not a hang), and the agent's stop cancels
    it (nothing of a stopped agent is left scheduled in a process that runs many runs)."""
    loops = []

    async def body(agents):
        loop = agents["idle"].bdi_loop
        loop.NET_SECONDS = 0.2
        loop._cut_net()  # the one armed at 30 s
        loop.wake()  # the next idle wait arms the net at the new interval
        await asyncio.sleep(0.1)
        cycles = loop.idle_cycles
        await asyncio.sleep(1.2)
        assert loop.idle_cycles - cycles >= 2, "the net did not wake the idle loop"
        loops.append(loop)

    _run(_with_agents(tmp_path, {"idle": "+ping <- true.\n"}, body))
    assert loops and loops[0]._net is None, "a stopped agent's net timer is still scheduled"
