"""The embedded XMPP server, against real clients: SPADE agents, a second process, raw sockets."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from bdi_rl.xmpp.server import EmbeddedXmppServer, XmppServerError, free_port

pytestmark = pytest.mark.timeout(60)

# Bob runs in another process: SPADE hands messages between agents of one process over
# directly, so only a second process proves that the server carries the traffic. His JID is
# one no other test uses: SPADE's container is a process-wide singleton.
RECEIVER = """
import asyncio, sys
from spade.agent import Agent
from spade.behaviour import OneShotBehaviour

class Receive(OneShotBehaviour):
    async def run(self):
        msg = await self.receive(timeout=20)
        print("BODY:" + (msg.body if msg else "<none>"), flush=True)

class Bob(Agent):
    async def setup(self):
        self.presence.set_available()  # a message to a bare JID reaches available sessions only
        self.receiver = Receive()
        self.add_behaviour(self.receiver)

async def main():
    bob = Bob("bob-remote@localhost", "secret", port=int(sys.argv[1]), verify_security=False)
    await bob.start(auto_register=False)  # the server has his account
    print("READY", flush=True)
    await bob.receiver.join(timeout=25)
    await bob.stop()

asyncio.run(main())
"""


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


def listening_sockets_of_this_process() -> list[tuple[str, int]]:
    """(address, port) of every LISTEN TCP socket this process owns, from /proc."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state != "0A" or inode not in inodes:
                    continue
                hex_ip, hex_port = local.split(":")
                raw = bytes.fromhex(hex_ip)
                packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.append((str(ipaddress.ip_address(packed)), int(hex_port, 16)))
    return found


def non_loopback_ip() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ipaddress.ip_address(ip).is_loopback else ip


async def xmpp_greeting(port: int) -> bytes:
    """Open a client stream and return the server's first bytes."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    writer.write(
        b"<?xml version='1.0'?><stream:stream to='localhost' version='1.0' xmlns='jabber:client' "
        b"xmlns:stream='http://etherx.jabber.org/streams'>"
    )
    await writer.drain()
    data = await asyncio.wait_for(reader.read(4096), 5)
    writer.close()
    await writer.wait_closed()
    return data


def child_pids() -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                if any(line.split() == ["PPid:", str(os.getpid())] for line in f):
                    children.append(int(entry))
        except OSError:
            continue
    return children


def test_message_between_processes_goes_through_the_server(tmp_path: Path) -> None:
    from spade.agent import Agent
    from spade.behaviour import OneShotBehaviour
    from spade.message import Message

    class Send(OneShotBehaviour):
        """Resends until Bob reports the body: his presence may reach the server after READY."""

        def __init__(self, done: asyncio.Event) -> None:
            super().__init__()
            self.done = done

        async def run(self) -> None:
            while not self.done.is_set():
                await self.send(Message(to="bob-remote@localhost", body="hello over xmpp"))
                try:
                    await asyncio.wait_for(self.done.wait(), 0.5)
                except TimeoutError:
                    pass

    before = set(child_pids())  # other tests' children (a session's browser) are not the server's

    async def scenario() -> str:
        accounts = {"alice": "secret", "bob-remote": "secret"}
        async with EmbeddedXmppServer(port=free_port(), data_dir=tmp_path, accounts=accounts) as server:
            assert server.domain == "localhost"
            bob = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                RECEIVER,
                str(server.port),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            assert bob.stdout is not None
            try:
                line = await asyncio.wait_for(bob.stdout.readline(), 20)
                assert line.strip() == b"READY"
                alice = Agent("alice@localhost", "secret", port=server.port, verify_security=False)
                await alice.start(auto_register=False)
                done = asyncio.Event()
                alice.add_behaviour(Send(done))
                line = await asyncio.wait_for(bob.stdout.readline(), 20)
                done.set()
                await alice.stop()
                await asyncio.wait_for(bob.wait(), 20)
            finally:
                if bob.returncode is None:
                    bob.kill()
                    await bob.wait()
            assert set(child_pids()) <= before  # Bob has exited; the server started no process of its own
            return line.decode().strip()

    assert run(scenario()) == "BODY:hello over xmpp"


def test_busy_port_falls_back_to_a_free_one(tmp_path: Path) -> None:
    """The requested port (5222 by default) held by another program: the server takes a free
    one. The test holds a port of its own (5222 may come and go with other runs on the machine)."""
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        busy = blocker.getsockname()[1]

        async def scenario() -> tuple[int, bytes]:
            async with EmbeddedXmppServer(port=busy, data_dir=tmp_path) as server:
                return server.port, await xmpp_greeting(server.port)

        port, greeting = run(scenario())
    assert port != busy
    assert b"stream:stream" in greeting or b"<stream" in greeting


def test_busy_port_without_fallback_is_an_error(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        server = EmbeddedXmppServer(port=port, data_dir=tmp_path, port_fallback=False)
        with pytest.raises(XmppServerError, match=str(port)):
            run(server.start())

    async def starts_afterwards() -> bool:  # a failed start leaves nothing behind
        async with EmbeddedXmppServer(port=0, data_dir=tmp_path) as server:
            return server.running

    assert run(starts_afterwards())


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the forgotten listener, rightly reported
def test_a_server_left_running_by_a_closed_loop_does_not_block_the_next(tmp_path: Path) -> None:
    forgotten = EmbeddedXmppServer(port=0, data_dir=tmp_path)
    run(forgotten.start())  # no stop(): asyncio.run closes the loop under it

    async def next_one() -> bytes:
        async with EmbeddedXmppServer(port=0, data_dir=tmp_path) as server:
            return await xmpp_greeting(server.port)

    assert b"stream" in run(next_one())


def test_domain_must_resolve_to_loopback(tmp_path: Path) -> None:
    with pytest.raises(XmppServerError, match="loopback"):
        run(EmbeddedXmppServer(host="192.0.2.1", port=0, data_dir=tmp_path).start())


def test_listens_on_loopback_only(tmp_path: Path) -> None:
    before = set(listening_sockets_of_this_process())

    async def scenario() -> tuple[int, list[tuple[str, int]], bool]:
        async with EmbeddedXmppServer(port=0, data_dir=tmp_path) as server:
            opened = [s for s in listening_sockets_of_this_process() if s not in before]
            reachable_outside = False
            outside = non_loopback_ip()
            if outside is not None:
                try:
                    _, w = await asyncio.wait_for(asyncio.open_connection(outside, server.port), 2)
                    w.close()
                    reachable_outside = True
                except (TimeoutError, OSError):
                    pass
            return server.port, opened, reachable_outside

    port, opened, reachable_outside = run(scenario())
    assert opened, "the server listens somewhere"
    assert all(ipaddress.ip_address(ip).is_loopback for ip, _ in opened), opened
    assert {p for _, p in opened} == {port}  # no s2s (5269), admin/upload HTTP (9090) or other site
    assert not reachable_outside


def test_stop_is_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    handlers_before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGABRT)}
    data_dir = tmp_path / "xmpp"

    async def scenario() -> tuple[int, float, float, list[str]]:
        server = EmbeddedXmppServer(port=0, data_dir=data_dir)
        began = time.perf_counter()
        await server.start()
        started = time.perf_counter() - began
        await xmpp_greeting(server.port)
        _, idle_client = await asyncio.open_connection("127.0.0.1", server.port)  # left open on purpose
        began = time.perf_counter()
        await server.stop()
        stopped = time.perf_counter() - began
        idle_client.close()
        leftovers = [repr(t) for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        return server.port, started, stopped, leftovers

    port, started, stopped, leftovers = run(scenario())
    assert leftovers == []
    assert started < 2.0 and stopped < 3.0
    with socket.socket() as s:  # the port is free again
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
    assert {s: signal.getsignal(s) for s in handlers_before} == handlers_before
    certificate = data_dir / "localhost.pem"  # certificate and key in one file, the owner's only
    assert certificate.is_file() and certificate.stat().st_mode & 0o077 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xmpp"]  # nothing in the working directory
    assert sorted(p.name for p in data_dir.iterdir()) == ["localhost.pem"]


SERVE_ONCE = """
import asyncio, sys
from pathlib import Path
from bdi_rl.xmpp.server import EmbeddedXmppServer

async def main():
    async with EmbeddedXmppServer(port=0, data_dir=Path(sys.argv[1])) as server:
        assert server.running

asyncio.run(main())
"""


def test_a_server_leaves_nothing_in_the_temp_dir(tmp_path: Path) -> None:
    """A fresh process, as each ``bdi-rl run`` is, starts and stops a server with TMPDIR pointing
    here (pyjabber, the embedded server before bdi-rl's own, left a directory per run)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SERVE_ONCE, str(tmp_path / "xmpp")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    assert done.returncode == 0, done.stderr
    assert list(temp.iterdir()) == []
    assert (tmp_path / "xmpp" / "localhost.pem").is_file()  # it did run a server
