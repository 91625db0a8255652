"""Strangers on the XMPP server: telemetry writes only the run's agents' trace batches, and
agents execute achieve requests only from the agents of their experiment. Both refusals are
counted and traced or logged, never acted on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from spade.agent import Agent
from spade.message import Message

from bdi_rl.xmpp.agent import TracedBdiAgent
from bdi_rl.xmpp.telemetry import TelemetryAgent
from bdi_rl.trace.batch import BATCH_METADATA, encode_batch
from bdi_rl.trace.events import SCHEMA, TraceLevel, read_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.server import EmbeddedXmppServer, free_port
from tests.test_agent import _run


def _event(run: str, agent: str, seq: int) -> dict:
    return {"schema": SCHEMA, "run": run, "agent": agent, "seq": seq, "ts": 1.0,
            "kind": "episode.end", "episode": seq, "step": 0,
            "data": {"return": 1.0, "length": 3, "outcome": "goal", "epsilon": 0.5}}


def test_telemetry_writes_trace_batches_only_from_the_runs_agents(tmp_path: Path):
    run_dir = tmp_path / "run-1"
    run_dir.mkdir()

    async def scenario() -> TelemetryAgent:
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp")
        await server.start()
        telemetry = TelemetryAgent("telemetry@localhost", "pw", run_dir / "trace.jsonl", port=server.port,
                                   senders=["member@localhost"])
        senders = [Agent(f"{name}@localhost", "pw", port=server.port, verify_security=False)
                   for name in ("member", "stranger")]
        try:
            await telemetry.start()
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
        server = EmbeddedXmppServer(port=free_port(), data_dir=tmp_path / "xmpp")
        await server.start()
        telemetry = TelemetryAgent("telemetry@localhost", "pw", tmp_path / "trace.jsonl", port=server.port)
        agents: dict[str, TracedBdiAgent] = {}
        try:
            await telemetry.start()
            for name, source in plans.items():
                path = tmp_path / f"{name}.asl"
                path.write_text(source)
                team = None if name == "mallory" else ["bob@localhost", "boss@localhost"]
                agents[name] = TracedBdiAgent(
                    f"{name}@localhost", "pw", str(path), port=server.port, hold=True, achieve_from=team,
                    tracer=Tracer(tmp_path.name, f"{name}@localhost", TraceLevel.STEP), telemetry="telemetry@localhost")
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
    assert bob.rejected_messages == 1
    refused = [e["data"] for e in read_trace(str(tmp_path / "trace.jsonl"))
               if e["kind"] == "msg.recv" and e["agent"] == "bob@localhost" and "rejected" in e["data"]]
    assert [(r["from"], r["performative"], r["content"]) for r in refused] == [
        ("mallory@localhost", "achieve", 'greet("mallory")')]


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
