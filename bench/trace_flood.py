"""One process that floods the telemetry agent with trace events over XMPP, as fast as the
transport takes them (used by ``bench_trace_transport.py --flood``).

A learner cannot produce 200k events/s while it learns on a shared 2-core machine, so the
transport's capacity is measured with this emitter: a SPADE agent with the real
:class:`~bdi_rl.trace.tracer.Tracer` and :class:`~bdi_rl.xmpp.shipping.TraceShipper`, emitting
``rl.step`` events shaped like an episode-mode learner's (a Q row each) through
``Tracer.emit``. In trace format 2 ``rl.step`` is a record kind: each event is a row of the
tracer's open step record, and the record becomes one ``steps`` line when it is closed (by a
line event, by the shipper before it ships, or as soon as it holds ``MAX_ENTRIES`` events).
It keeps at most ``--backlog`` lines unacknowledged (the tracer would spill past
its memory bound; this keeps the measure about the wire) and prints ``first_emit done
emitted`` (unix seconds; ``emitted``: lines numbered) when telemetry has acknowledged
everything.

    python bench/trace_flood.py SPEC --name learner-1 --xmpp localhost:5222 --events 500000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spade.agent import Agent  # noqa: E402
from spade.template import Template  # noqa: E402

from bdi_rl.spec import load_spec  # noqa: E402
from bdi_rl.trace.batch import ACK_METADATA  # noqa: E402
from bdi_rl.trace.kinds import AGENT_START, AGENT_STOP, RL_STEP, RlStepData, TraceLevel  # noqa: E402
from bdi_rl.trace.tracer import Tracer  # noqa: E402
from bdi_rl.xmpp.agent import SPADE_MESSAGE_LOG  # noqa: E402
from bdi_rl.xmpp.shipping import TraceShipper, join_run  # noqa: E402


class FloodAgent(Agent):
    def __init__(self, jid: str, password: str, port: int, telemetry: str) -> None:
        super().__init__(jid, password, port=port, verify_security=False)
        self.telemetry_jid = telemetry
        self.tracer = Tracer("", jid, TraceLevel.STEP)
        from spade.trace import TraceStore

        self.traces = TraceStore(size=SPADE_MESSAGE_LOG)

    async def setup(self) -> None:
        self.presence.set_available()
        self.shipper = TraceShipper(self.telemetry_jid, 0.05)
        self.add_behaviour(self.shipper, Template(metadata=ACK_METADATA))


def _step_data(rng: random.Random) -> RlStepData:
    """An episode-mode learner's rl.step data, as a format-1 line held it (format 2 writes the
    same fields as a row of a step record's ``rl`` columns)."""
    s, q = rng.randrange(64), rng.random()
    return {
        "s": s,
        "a": rng.randrange(4),
        "r": 0.0,
        "s2": s + 1,
        "done": False,
        "q_before": q,
        "q_after": q * 0.99,
        "epsilon": 0.5,
        "q": [rng.random() for _ in range(4)],
    }


async def flood(args: argparse.Namespace) -> None:
    spec = load_spec(Path(args.spec))
    host, port = args.xmpp.split(":")
    jid = f"{args.name}@{host}"
    agent = FloodAgent(jid, os.environ["BDI_RL_XMPP_PASSWORD"], int(port), f"{spec.telemetry.name}@{host}")
    await agent.start(auto_register=True)
    tracer = agent.tracer
    tracer.set_run(await join_run(agent, 60))
    rng = random.Random(args.name)
    # agent.start's data as telemetry checks it (AgentStartData): this file is what it runs.
    tracer.emit(AGENT_START, {"jid": jid, "asl": "bench/trace_flood.py"})
    first = time.time()
    # Event data drawn up front: what is measured is the transport, not random numbers.
    pool = [_step_data(rng) for _ in range(4096)]
    emit = tracer.emit
    for i in range(args.events):
        if len(tracer.pending) >= args.backlog:
            while len(tracer.pending) >= args.backlog // 2:
                await asyncio.sleep(0.001)
        tracer.step = i % 100
        emit(RL_STEP, pool[i % 4096])
    tracer.emit(AGENT_STOP, {"reason": "finished", "emitted": tracer.seq + 1})
    while not tracer.all_acked:
        await asyncio.sleep(0.001)
    done = time.time()
    print(f"{first:.6f} {done:.6f} {tracer.seq}", flush=True)
    await agent.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--name", required=True)
    parser.add_argument("--xmpp", required=True)
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--backlog", type=int, default=50_000)
    asyncio.run(flood(parser.parse_args()))


if __name__ == "__main__":
    main()
