"""One role per process: ``bdi-rl telemetry`` and ``bdi-rl agent`` (for containers).

The telemetry process owns the run: it creates the run directory, hands its id to every
agent process that asks (``bdi-rl.join``), writes the trace, and writes ``summary.json``
from the events once every agent of the spec has stopped. Agent processes write their
Q-table checkpoints into the same run directory (a shared ``runs/`` volume in compose).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bdi_rl.crashlog import note_run_dir
from bdi_rl.spec import ExperimentSpec, SpecError, load_spec
from bdi_rl.store import (
    SPEC_FILE,
    TRACE_FILE,
    RunWriter,
    atomic_write_bytes,
    save_summary,
)
from bdi_rl.trace.errors import TraceFileError
from bdi_rl.trace.kinds import RUN_START, RUN_STOP, TELEMETRY_RESTART
from bdi_rl.trace.reading import check_trace
from bdi_rl.xmpp.connect import wait_for_server
from bdi_rl.xmpp.rundirs import new_spec_run_dir
from bdi_rl.xmpp.setup import AgentSetup, agent_setups, check_plan_files
from bdi_rl.xmpp.society import Society
from bdi_rl.xmpp.summary import stop_reason, summary_from_trace
from bdi_rl.xmpp.waiting import run_learners
from bdi_rl.xmpp.wiring import Wiring, connect_world, enter_run, make_agents, spec_jids, spec_names

log = logging.getLogger("bdi_rl.xmpp.roles")

PASSWORD_ENV = "BDI_RL_XMPP_PASSWORD"


def read_password(password_file: Path | None) -> str:
    """The agents' XMPP password: from ``--password-file`` or $BDI_RL_XMPP_PASSWORD, never argv."""
    if password_file is not None:
        try:
            password = password_file.read_text().strip()
        except OSError as exc:
            raise SpecError(f"{password_file}: cannot read the password file: {exc.strerror}") from None
    else:
        password = os.environ.get(PASSWORD_ENV, "")
    if not password:
        raise SpecError(f"no XMPP password: set ${PASSWORD_ENV} or pass --password-file")
    return password


def existing_run(run_dir: Path, spec: ExperimentSpec) -> tuple[Path, RunWriter]:
    """The run ``telemetry --run`` continues, with its writer lock held (a second writer is
    refused before it reads), checked (spec, whole trace) before anything starts."""
    if not (run_dir / TRACE_FILE).is_file():
        raise SpecError(f"--run {run_dir}: not a run directory (no {TRACE_FILE})")
    if load_spec(run_dir / SPEC_FILE).name != spec.name:
        raise SpecError(f"--run {run_dir}: that run is not of experiment {spec.name!r}")
    writer = RunWriter.acquire(run_dir, "bdi-rl telemetry --run")
    try:  # before connecting anywhere; the TraceLog cuts a torn last line, nothing else
        check_trace(run_dir / TRACE_FILE, run_dir.name)
    except TraceFileError as exc:
        writer.release()
        raise SpecError(f"--run: {exc}") from None
    return run_dir, writer


async def serve_telemetry(
    spec: ExperimentSpec,
    runs_dir: Path,
    domain: str,
    port: int,
    password: str,
    resume: tuple[Path, RunWriter] | None = None,
    ready_file: Path | None = None,
) -> TelemetryResult:
    """Run the telemetry agent until every agent of ``spec`` has stopped; return the run dir
    and its summary.

    With ``resume`` (a restarted telemetry process: what :func:`existing_run` returned),
    continue that run's trace: agents resend what was never acknowledged and the seqs already
    written are dropped as duplicates. Stopped (Ctrl-C, SIGTERM) before every agent has
    stopped, it still writes the summary, marked interrupted, naming the agents that had not
    stopped (or never started). ``ready_file`` exists (holding the run directory) while
    agents can join: from then until telemetry stops."""
    from bdi_rl.xmpp.telemetry import TelemetryAgent

    await wait_for_server(domain, port)
    expected = spec_jids(spec, domain)
    telemetry = TelemetryAgent(f"{spec.telemetry.name}@{domain}", password, port=port, senders=expected)
    telemetry.groups = {group.name: group.agent_names() for group in spec.agents}
    async with contextlib.AsyncExitStack() as on_failure:  # the agent stopped if any step fails
        on_failure.push_async_callback(telemetry.stop)
        await telemetry.start(auto_register=True)  # its login finds a wrong password before the run exists
        if resume is None:
            run_dir, writer = new_spec_run_dir(runs_dir, spec, "bdi-rl telemetry")
        else:
            run_dir, writer = resume
            writer.announce()  # every check passed: the run goes on
            note_run_dir(run_dir)
        telemetry.open_trace(run_dir / TRACE_FILE)
        on_failure.pop_all()  # started, its run open: it stops at the end below
    started = time.time()
    log.warning("telemetry: run %s in %s, waiting for %d agents", run_dir.name, run_dir, len(expected))
    stats = telemetry.trace_log.stats
    stopped_early = stop_asked = False
    missing = MissingAgents(spec, domain)
    try:
        if resume is None:
            telemetry.record_run_event(RUN_START, {"spec": spec.name, "env": spec.env.id, "agents": expected})
        else:
            telemetry.record_run_event(TELEMETRY_RESTART, {"recovered_events": telemetry.trace_log.recovered})
        if ready_file is not None:
            atomic_write_bytes(ready_file, f"{run_dir}\n".encode())
        while not all(agent in stats and stats[agent].stop is not None for agent in expected):
            if telemetry.trace_log.failure is not None:  # a full disk: the run cannot go on
                break
            missing.check(stats)
            await asyncio.sleep(0.2)
    except asyncio.CancelledError:
        # Ctrl-C or SIGTERM (compose down) before every agent stopped: the summary says so
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        stopped_early = True
    trace_failure = telemetry.trace_log.failure
    unstopped = "interrupted" if trace_failure is None else f"stopped: the trace cannot be written ({trace_failure})"
    try:
        reasons = {agent: stop_reason(stats.get(agent), unstopped) for agent in expected}
        failures = {agent: reason for agent, reason in reasons.items() if reason != "finished"}
        telemetry.record_run_event(RUN_STOP, {"failures": failures})
        summary = summary_from_trace(run_dir.name, spec, stats, expected, time.time() - started, unstopped)
        if stopped_early or "interrupted" in failures.values():
            summary["interrupted"] = True
        save_summary(run_dir, summary)
        writer.release()  # after the summary: a reader never finds neither a writer nor a summary
        if not stopped_early and trace_failure is None:
            try:
                await telemetry.linger()  # an agent's last acknowledgement lost: it asks again
            except asyncio.CancelledError:  # a stop while leaving: the summary is written
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
                stop_asked = True
    finally:
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)
        try:
            await telemetry.stop()
        except asyncio.CancelledError:
            # Ctrl-C or SIGTERM while leaving: the summary is written, so the run's outcome
            # is what it says, not "interrupted"; the caller is told a stop was asked.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            stop_asked = True
    if stopped_early:
        raise asyncio.CancelledError
    if trace_failure is not None:
        raise trace_failure  # one line (the CLI): the trace is whole up to there
    return TelemetryResult(run_dir, summary, stop_asked)


@dataclass(frozen=True)
class TelemetryResult:
    """What a telemetry process leaves: its run, the run's summary, and whether a stop
    (Ctrl-C, SIGTERM) came while it was leaving, after the summary was written."""

    run_dir: Path
    summary: dict[str, Any]
    stop_asked: bool = False


class MissingAgents:
    """Says, once telemetry has waited ``AFTER_S``, which agents of the spec have not started,
    and again every ``EVERY_S`` while some are missing: a run waits for all of them, and with
    fewer agent processes than the spec names (compose scaled below a group's count) it would
    wait without a word."""

    AFTER_S = 30.0
    EVERY_S = 120.0

    def __init__(self, spec: ExperimentSpec, domain: str) -> None:
        self.groups = {g.name: [f"{name}@{domain}" for name in g.agent_names()] for g in spec.agents}
        if spec.world is not None:
            self.groups[spec.world.name] = [f"{spec.world.name}@{domain}"]
        self.due = time.monotonic() + self.AFTER_S

    def check(self, started: Any) -> None:
        """``started``: the agents telemetry has events of (by JID)."""
        now = time.monotonic()
        if now < self.due:
            return
        self.due = now + self.EVERY_S
        absent = {group: [jid for jid in jids if jid not in started] for group, jids in self.groups.items()}
        lines = [
            f"{group} ({len(jids) - len(absent[group])} of {len(jids)} started; missing "
            f"{', '.join(jid.split('@', 1)[0] for jid in absent[group])})"
            for group, jids in self.groups.items()
            if absent[group]
        ]
        if lines:
            log.warning(
                "telemetry: still waiting for agents of the spec to start: %s. The run is over only once every "
                "agent has run: start one agent process per agent (compose: scale each group's service to its count)",
                "; ".join(lines),
            )


async def claim_name(group: str, spec: ExperimentSpec, domain: str, port: int, password: str, timeout: float) -> str:
    """Ask telemetry for an unclaimed agent name of ``group`` (one per container when scaled).

    A group the spec lacks is refused at once, before connecting: telemetry would refuse it
    too, but only once it is up. The question is asked from a throw-away JID (the real
    agent's JID is what we ask for) whose account is removed again afterwards."""
    from spade.agent import Agent

    from bdi_rl.xmpp.shipping import ask_telemetry

    groups = [g.name for g in spec.agents]
    if group not in groups:
        raise SpecError(f"--claim {group}: no agent group {group!r} in the spec (its groups: {', '.join(groups)})")
    await wait_for_server(domain, port)
    asker = Agent(f"claim-{secrets.token_hex(6)}@{domain}", password, port=port, verify_security=False)
    await asker.start(auto_register=True)
    asker.presence.set_available()
    try:
        reply = await ask_telemetry(asker, f"{spec.telemetry.name}@{domain}", {"claim": group}, timeout)
    finally:
        await remove_account(asker)
        await asker.stop()
        asker.container.unregister(str(asker.jid))
    if "name" not in reply:
        raise SpecError(f"--claim {group}: {reply.get('error', 'telemetry gave no name')}")
    return str(reply["name"])


async def remove_account(agent: Any, timeout: float = 3.0) -> None:
    """Remove a started agent's XMPP account (XEP-0077 in-band unregistration), so that
    throw-away JIDs leave no accounts behind on the server; a server that refuses or does
    not answer is logged.

    ejabberd removes the account and closes the stream without a reply to the request (the
    XEP allows either): the session ending counts as done."""
    from slixmpp.exceptions import IqError, IqTimeout

    client = agent.client
    client.leaving = True  # the server ends the session once the account is gone: stay off
    ended = asyncio.get_running_loop().create_future()

    def on_disconnected(_: Any) -> None:
        if not ended.done():
            ended.set_result(None)

    client.add_event_handler("disconnected", on_disconnected, disposable=True)
    removal = asyncio.ensure_future(client["xep_0077"].cancel_registration(timeout=timeout))
    await asyncio.wait([removal, ended], timeout=timeout + 1, return_when=asyncio.FIRST_COMPLETED)
    if not removal.done():
        removal.cancel()
        return
    try:
        removal.result()
    except IqTimeout:
        log.warning("could not remove the XMPP account %s: no answer within %g s", agent.jid, timeout)
    except IqError as exc:
        log.warning(
            "could not remove the XMPP account %s: %s", agent.jid, " ".join(filter(None, (exc.condition, exc.text)))
        )


def checked_setups(spec: ExperimentSpec) -> list[AgentSetup]:
    """Every agent's plan, with the whole experiment's plan files checked (whether any agent
    starts is a property of all): before an agent process claims a name or connects."""
    every_setup = agent_setups(spec)
    check_plan_files(every_setup)
    return every_setup


async def run_agents(
    spec: ExperimentSpec,
    names: list[str],
    runs_dir: Path,
    domain: str,
    port: int,
    password: str,
    join_timeout: float = 60.0,
    every_setup: list[AgentSetup] | None = None,
) -> dict[str, str]:
    """Run the named agents (or groups) of ``spec`` in this process; returns their failures.
    ``every_setup``: what :func:`checked_setups` returned (made here when None).

    The agents are made as ``bdi-rl run`` makes them (``bdi_rl.xmpp.wiring``), before the run
    is known: once the first has started it asks telemetry for the run, and all of them
    enter it."""
    from bdi_rl.xmpp.shipping import join_run

    if every_setup is None:
        every_setup = checked_setups(spec)
    setups = [s for s in every_setup if s.name in names or s.group.name in names]
    world_name = spec.world.name if spec.world is not None else None
    unknown = set(names) - {s.name for s in setups} - {s.group.name for s in setups} - {world_name}
    if unknown or not (setups or world_name in names):
        raise SpecError(f"--name {', '.join(sorted(unknown or names))}: no such agent or group in the spec")
    wiring = Wiring(spec, "", runs_dir, domain, port, password, register=True)
    agents = make_agents(wiring, setups, every_setup, host_world=world_name in names)
    if world_name is not None:
        connect_world(wiring, every_setup, agents)
    try:
        await wait_for_server(domain, port)
        await asyncio.gather(*(agent.start(auto_register=True) for agent in agents))
        run = await join_run(agents[0], join_timeout)
        enter_run(agents, run, runs_dir / run)
        society = Society(domain, spec_names(spec), agents, reserved=[spec.telemetry.name])
        # peers elsewhere may still wake them: a stall only warns
        return await run_learners(agents, None, stalls="warn", society=society)
    finally:
        await asyncio.gather(*(agent.stop() for agent in agents if not agent.retired), return_exceptions=True)
