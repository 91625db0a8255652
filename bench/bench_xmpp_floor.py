"""The floor under a shared world across processes: joint steps per second that the bare
protocol reaches through the same ejabberd with no agent at all (issue 33, item 3).

A joint step of a world across processes is one message per agent each way through the
server: every player's choice to the world, and, once the world has them all, its answer to
every player. Here each player and the world are a bare XMPP client (``tests/rawxmpp.py``:
asyncio streams, TLS, SASL, ElementTree; no bdi-rl, SPADE or slixmpp code) in a process of
its own, doing exactly that and nothing else: a player sends a message of ``--payload`` bytes
and waits for the world's; the world waits for every player's, then writes its answers in
one write. No reasoning, no learning, no env, no trace. Whatever an implementation does on
top of this protocol, on this machine and this server it cannot step faster than this.

    python bench/bench_xmpp_floor.py --sizes 2 4 8 --steps 3000 --rounds 3

Each measurement of the floor is followed by bdi-rl's own, the same number of agents and joint
steps through the same server (``bench_world_throughput.py``'s ``across_processes``: the world
agent, telemetry and every player a ``bdi-rl`` process of its own, ``asl/learner.asl``), so
the table gives what bdi-rl reaches of the floor, measured side by side.

The server is a private Debian ejabberd configured by ``compose/ejabberd.yml`` (TLS
required), started as the tests start it, the same as ``bench_world_throughput.py``'s.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_trace_transport import cpu_seconds  # noqa: E402
from bench_world_throughput import SPEC, across_processes  # noqa: E402

from tests.ejabberd import remove, start_ejabberd  # noqa: E402
from tests.rawxmpp import RawXmppClient  # noqa: E402

MESSAGE = "{jabber:client}message"
PASSWORD = "bench"  # as bench_world_throughput.py's agents register: the same accounts
WARMUP = 100
"""joint steps before the clock starts (logins, TLS, the server's caches)"""


async def _online(port: int, user: str) -> RawXmppClient:
    client = RawXmppClient(port)
    await client.connect()
    await client.register(user, PASSWORD)  # "conflict" on a later round: the account is there
    await client.close()
    client = RawXmppClient(port)
    await client.connect()
    await client.online(user, PASSWORD)
    return client


async def _player(port: int, name: str, steps: int, payload: str) -> None:
    client = await _online(port, name)
    stanza = f"<message to='world@localhost' type='chat'><body>{payload}</body></message>"
    for _ in range(steps):
        client.send(stanza)
        if await client.take(MESSAGE, timeout=60) is None:
            raise RuntimeError(f"{name}: no answer from the world")
    await client.close()


async def _world(port: int, players: int, steps: int, payload: str, ready: multiprocessing.Event) -> float:
    client = await _online(port, "world")
    ready.set()
    answers = "".join(
        f"<message to='p-{i}@localhost' type='chat'><body>{payload}</body></message>" for i in range(1, players + 1)
    )
    began = 0.0
    for step in range(steps):
        if step == WARMUP:
            began = time.perf_counter()
        for _ in range(players):
            if await client.take(MESSAGE, timeout=60) is None:
                raise RuntimeError("world: a player's choice did not come")
        client.send(answers)
    elapsed = time.perf_counter() - began
    await client.close()
    return (steps - WARMUP) / elapsed


def _run_player(port: int, name: str, steps: int, payload: str, ready: multiprocessing.Event) -> None:
    ready.wait(60)
    asyncio.run(_player(port, name, steps, payload))


def _run_world(
    port: int, players: int, steps: int, payload: str, ready: multiprocessing.Event, out: multiprocessing.Queue
) -> None:
    out.put(asyncio.run(_world(port, players, steps, payload, ready)))


def joint_steps_per_second(port: int, players: int, steps: int, payload: int) -> float:
    """One measurement: the world and ``players`` players, each a process of its own."""
    body = "x" * payload
    ready, out = multiprocessing.Event(), multiprocessing.Queue()
    world = multiprocessing.Process(target=_run_world, args=(port, players, steps, body, ready, out))
    world.start()
    others = [
        multiprocessing.Process(target=_run_player, args=(port, f"p-{i}", steps, body, ready))
        for i in range(1, players + 1)
    ]
    for proc in others:
        proc.start()
    rate = out.get(timeout=1800)
    for proc in [world, *others]:
        proc.join(60)
        if proc.exitcode != 0:
            raise SystemExit(f"a client process failed (exit {proc.exitcode})")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--steps", type=int, default=3000, help="joint steps per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--payload", type=int, default=200, help="bytes of each message's body")
    args = parser.parse_args()
    server = start_ejabberd()
    beam = int((server.directory / "ejabberd.pid").read_text())
    rates: dict[int, list[float]] = {n: [] for n in args.sizes}
    server_ms: dict[int, list[float]] = {n: [] for n in args.sizes}
    bdi_rl: dict[int, list[float]] = {n: [] for n in args.sizes}
    try:
        for round_ in range(args.rounds):
            for n in args.sizes:
                with tempfile.TemporaryDirectory() as tmp:
                    spec = Path(tmp) / f"consensus-{n}.toml"
                    spec.write_text(SPEC.format(n=n, episodes=args.steps))
                    (Path(tmp) / "runs").mkdir()
                    bdi_rl[n].append(across_processes(spec, Path(tmp) / "runs", n, server.port) / n)
                print(f"round {round_ + 1}, {n} agents, bdi-rl: {bdi_rl[n][-1]:,.0f} joint steps/s", file=sys.stderr)
                cpu = cpu_seconds(beam)
                rates[n].append(joint_steps_per_second(server.port, n, args.steps, args.payload))
                server_ms[n].append((cpu_seconds(beam) - cpu) * 1000 / args.steps)
                print(
                    f"round {round_ + 1}, {n} players: {rates[n][-1]:,.0f} joint steps/s, "
                    f"ejabberd {server_ms[n][-1]:.2f} ms CPU per joint step",
                    file=sys.stderr,
                )
    finally:
        server.stop()
        remove(server)
    print(
        "| players | bare protocol: joint steps/s, median (each round) | its ejabberd CPU per joint step "
        "| bdi-rl: joint steps/s (each round) | bdi-rl ÷ bare, median of rounds |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n, values in rates.items():
        ratio = statistics.median(b / v for b, v in zip(bdi_rl[n], values, strict=True))
        print(
            f"| {n} | {statistics.median(values):,.0f} ({', '.join(f'{v:,.0f}' for v in values)}) "
            f"| {statistics.median(server_ms[n]):.2f} ms "
            f"| {statistics.median(bdi_rl[n]):,.0f} ({', '.join(f'{v:,.0f}' for v in bdi_rl[n])}) | {ratio:.2f} |"
        )


if __name__ == "__main__":
    main()
