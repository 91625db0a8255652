"""``bdi-rl run``: one experiment in one process, on the embedded XMPP server by default.

:func:`run_experiment` is the whole run, one named step after another: check the spec and
its files (``bdi_rl.xmpp.setup``), reach an external server, make (or claim, resumed) the run
directory, start the server, start telemetry, make and start the agents
(``bdi_rl.xmpp.wiring``), wait for them (``bdi_rl.xmpp.waiting``), write the summary
(``bdi_rl.xmpp.summary``). Order matters for "nothing half-written": every check passes
before the run directory exists; whatever was started is stopped however the run ends.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.garbage import heap_built
from bdi_rl.spec import ExperimentSpec, parse_host_port
from bdi_rl.store import TRACE_FILE, RunWriter, save_summary
from bdi_rl.trace.kinds import RUN_RESUME, RUN_START, RUN_STOP
from bdi_rl.xmpp.agentroles import learner_of
from bdi_rl.xmpp.connect import check_login, wait_for_server
from bdi_rl.xmpp.rundirs import new_spec_run_dir
from bdi_rl.xmpp.setup import AgentSetup, LearnerSetup, prepare_experiment
from bdi_rl.xmpp.society import Society
from bdi_rl.xmpp.summary import agents_summary, resumed_summary
from bdi_rl.xmpp.waiting import Progress, run_learners
from bdi_rl.xmpp.wiring import Wiring, created_agents, make_agents, spec_jids, spec_names

if TYPE_CHECKING:  # these import SPADE: loaded only once a run starts
    from bdi_rl.xmpp.agent import TracedBdiAgent
    from bdi_rl.xmpp.server import EmbeddedXmppServer
    from bdi_rl.xmpp.telemetry import TelemetryAgent


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    failures: dict[str, str] = field(default_factory=dict)


async def run_experiment(
    spec: ExperimentSpec,
    runs_dir: Path,
    on_progress: Callable[[Progress], None] | None = None,
    on_episode: Callable[[EpisodeSession], None] | None = None,
    resume: Path | None = None,
    setups: list[AgentSetup] | None = None,
    xmpp_password: str | None = None,
    on_run_dir: Callable[[Path], None] | None = None,
    writer: RunWriter | None = None,
) -> RunResult:
    """Check, then run the whole experiment; returns the run directory and its summary.

    ``on_episode`` is called after every training episode of every learner. ``resume``: an
    interrupted run directory to continue (its spec is ``spec``): learners start from their
    latest checkpoints and the trace goes on where it stopped. ``setups``: what
    :func:`prepare_experiment` returned (it is called when None). ``xmpp_password``: the
    agents' password on an external server (the embedded one gets a random one).
    ``on_run_dir``: called with the run directory as soon as it exists (``bdi-rl serve``
    learns its children's run ids so). ``writer``: ``resume``'s writer lock, if the caller
    took it already (it is taken here otherwise; a new run's with its directory); it is
    released once the summary is written (store.RunWriter)."""
    if resume is not None and writer is None:
        writer = RunWriter.acquire(resume, "bdi-rl run --resume")  # before the run's files are read
    if setups is None:
        setups = prepare_experiment(spec, resume)
    password = xmpp_password or secrets.token_urlsafe(16)
    await reach_external_server(spec, password)
    run_dir, writer, resumed_at = open_run_dir(spec, runs_dir, setups, resume, writer, on_run_dir)
    live = LiveRun()
    started = time.time()
    try:
        domain, port = await start_server(spec, run_dir, password, live)
        wiring = await start_telemetry(spec, run_dir, domain, port, password, setups, resumed_at, live)
        await start_agents(wiring, setups, on_episode, live)
        failures = await wait_for_agents(spec, live, on_progress)
    except asyncio.CancelledError:
        if resume is not None or live.released:
            raise  # a resumed run keeps the summary it had; run_learners handled its own
        failures = live.interrupted_in_start_up()
    finally:
        await live.stop()
    summary = write_summary(spec, run_dir, live, time.time() - started, resumed_at)
    writer.release()  # after the summary: a reader never finds neither a writer nor a summary
    return RunResult(run_dir, summary, failures)


async def reach_external_server(spec: ExperimentSpec, password: str) -> None:
    """An external server's accounts outlive a run: it takes the password the user set, and
    telemetry logs in once, before the run directory exists, so that an unreachable server or
    a wrong password is found first. (The embedded server is new each run, with an account for
    each of the run's agents and no others, under one random password only this process knows.)"""
    if spec.xmpp.server == "embedded":
        return
    domain, port = spec.xmpp.domain, parse_host_port(spec.xmpp.server)[1]
    await wait_for_server(domain, port)
    await check_login(f"{spec.telemetry.name}@{domain}", password, port)


def open_run_dir(
    spec: ExperimentSpec,
    runs_dir: Path,
    setups: list[AgentSetup],
    resume: Path | None,
    writer: RunWriter | None,
    on_run_dir: Callable[[Path], None] | None,
) -> tuple[Path, RunWriter, dict[str, int] | None]:
    """Every check passed: a new run directory with its ``spec.toml`` (its writer lock held),
    or the resumed one announced as going on. Returns it, its writer, and for a resumed run
    with a trace the episode each learner resumes at (None: the trace starts here)."""
    from bdi_rl.crashlog import note_run_dir

    resumed_at: dict[str, int] | None = None
    if resume is None:
        run_dir, writer = new_spec_run_dir(runs_dir, spec, "bdi-rl run")
    else:
        run_dir = resume
        assert writer is not None
        writer.announce()  # every check passed: the run goes on
        note_run_dir(run_dir)
        if (run_dir / TRACE_FILE).exists():  # none: stopped before it traced, it starts here
            resumed_at = {
                setup.name: setup.learner.episodes if setup.resumed is not None else 0
                for setup in setups
                if isinstance(setup, LearnerSetup)
            }
    if on_run_dir is not None:
        on_run_dir(run_dir)
    return run_dir, writer, resumed_at


@dataclass
class LiveRun:
    """What a run has started so far, stopped again in :meth:`stop` however the run ends."""

    server: EmbeddedXmppServer | None = None
    telemetry: TelemetryAgent | None = None
    agents: list[TracedBdiAgent] = field(default_factory=list)
    society: Society | None = None
    released: bool = False
    """the agents were released: from then on they are stopped by run_learners"""
    stopped_in_start_up: bool = False

    def interrupted_in_start_up(self) -> dict[str, str]:
        """Ctrl-C before the learners were released: nothing was learned, but the new run
        directory gets its summary (interrupted), so it is not a half-made run. Returns the
        failures: every agent made so far, interrupted."""
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        self.stopped_in_start_up = True
        for agent in self.agents:
            agent.failure = agent.failure or "interrupted"
        return {str(agent.jid): "interrupted" for agent in self.agents}

    async def stop(self) -> None:
        """Stop the agents (created ones included), telemetry, then the server."""
        if self.society is not None:
            await self.society.settle()
        await asyncio.gather(*(agent.stop() for agent in self.agents if not agent.retired), return_exceptions=True)
        if self.telemetry is not None:
            await self.telemetry.stop()
        if self.server is not None:
            await self.server.stop()


async def start_server(spec: ExperimentSpec, run_dir: Path, password: str, live: LiveRun) -> tuple[str, int]:
    """The embedded server, with an account for each of the run's agents (``xmpp.server =
    "embedded"``), or the external one's address. Returns the agents' JID domain and port."""
    if spec.xmpp.server != "embedded":
        return spec.xmpp.domain, parse_host_port(spec.xmpp.server)[1]
    from bdi_rl.xmpp.server import EmbeddedXmppServer
    from bdi_rl.xmpp.serverhost import certificate_dir

    accounts = dict.fromkeys([*spec_names(spec), spec.telemetry.name], password)
    live.server = EmbeddedXmppServer(
        host=spec.xmpp.domain, port=spec.xmpp.port, data_dir=certificate_dir(run_dir / "xmpp"), accounts=accounts
    )
    await live.server.start()
    return live.server.domain, live.server.port


async def start_telemetry(
    spec: ExperimentSpec,
    run_dir: Path,
    domain: str,
    port: int,
    password: str,
    setups: list[AgentSetup],
    resumed_at: dict[str, int] | None,
    live: LiveRun,
) -> Wiring:
    """The telemetry agent, writing the run's trace (taking batches from the spec's agents
    only), with the run's first event: its start, or where a resumed run goes on (readers
    drop the episodes re-run after it). Returns the run's :class:`Wiring`, each agent's trace
    numbering going on from what the trace holds (gapless when resumed)."""
    from bdi_rl.xmpp.telemetry import TelemetryAgent

    register = spec.xmpp.server != "embedded"
    telemetry_jid = f"{spec.telemetry.name}@{domain}"
    telemetry = live.telemetry = TelemetryAgent(telemetry_jid, password, port=port, senders=spec_jids(spec, domain))
    telemetry.on_trace_failure = lambda _: None  # the run stops and reports it (run_learners' halt)
    await telemetry.start(auto_register=register)
    telemetry.open_trace(run_dir / TRACE_FILE)
    if resumed_at is None:
        telemetry.record_run_event(
            RUN_START, {"spec": spec.name, "env": spec.env.id, "agents": [s.name for s in setups]}
        )
    else:
        telemetry.record_run_event(
            RUN_RESUME, {"agents": {f"{name}@{domain}": episode for name, episode in resumed_at.items()}}
        )
    first_seqs = dict(telemetry.trace_log.next_seq)
    return Wiring(spec, run_dir.name, run_dir, domain, port, password, register, first_seqs)


async def start_agents(
    wiring: Wiring,
    setups: list[AgentSetup],
    on_episode: Callable[[EpisodeSession], None] | None,
    live: LiveRun,
) -> None:
    """Make every agent of the spec (and the world agent, with ``[world]``), held until
    released, as the run's society (agents their plans create start so too), and start them."""
    spec = wiring.spec
    live.agents = make_agents(wiring, setups, setups)
    for learner in filter(None, map(learner_of, live.agents)):
        learner.bridge.session.on_episode = on_episode
    assert live.telemetry is not None
    make, start = created_agents(wiring, live.telemetry, live.server)
    live.society = Society(
        wiring.domain, spec_names(spec), live.agents, reserved=[spec.telemetry.name], make=make, start=start
    )
    await asyncio.gather(*(agent.start(auto_register=wiring.register) for agent in live.agents))
    heap_built()  # the start-up heap (libraries, agents, connections) is never garbage


async def wait_for_agents(
    spec: ExperimentSpec, live: LiveRun, on_progress: Callable[[Progress], None] | None
) -> dict[str, str]:
    """Release the agents and wait until they are done (``bdi_rl.xmpp.waiting``), stopping
    them all if the trace cannot be written. Returns the failures by JID."""
    assert live.telemetry is not None
    live.released = True
    # outside clients the spec trusts may still wake a stalled run: then a stall is a warning
    failures = await run_learners(
        live.agents,
        on_progress,
        stalls="warn" if spec.xmpp.trust else "fail",
        halt=functools.partial(trace_failure, live.telemetry),
        society=live.society,
    )
    live.telemetry.record_run_event(RUN_STOP, {"failures": failures})
    return failures


def trace_failure(telemetry: TelemetryAgent) -> str | None:
    """Why the run cannot go on because its trace cannot be written (a full disk), or None."""
    failure = telemetry.trace_log.failure
    return None if failure is None else f"the trace cannot be written: {failure.filename}: {failure.strerror}"


def write_summary(
    spec: ExperimentSpec, run_dir: Path, live: LiveRun, wall: float, resumed_at: dict[str, int] | None
) -> dict[str, Any]:
    """``summary.json`` from the stopped agents: a resumed run's says where each learner
    resumed, an interrupted one's that it was. Returns what it wrote."""
    summary = agents_summary(run_dir.name, spec, live.agents, wall)
    if resumed_at is not None:
        summary["resumed"] = resumed_summary(resumed_at, live.agents)
    if live.stopped_in_start_up or any(agent.failure == "interrupted" for agent in live.agents):
        summary["interrupted"] = True
    save_summary(run_dir, summary)
    return summary
