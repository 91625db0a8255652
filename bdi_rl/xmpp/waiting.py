"""Waiting for a process's agents: release them together, watch them until each is done (or
one failed, the run stalled, ``.stopMAS`` was called, or the trace cannot be written), then
stop their minds, flush their traces and write their last checkpoints."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from bdi_rl.bdi.episode import training_speed
from bdi_rl.xmpp.agentroles import learner_of
from bdi_rl.xmpp.liveness import IDLE_WARNING_FIRST, STALL_SECONDS, STALLED, Stall, StallWatch
from bdi_rl.xmpp.society import STOPPED, Society

log = logging.getLogger("bdi_rl.xmpp.waiting")


#: Seconds the other agents may still finish after one agent's mind has failed.
FAILURE_GRACE = 10.0


#: Seconds an interrupted run waits for telemetry's next acknowledgement before it gives up.
INTERRUPTED_FLUSH = 5.0


#: What a stall of a process's agents does (``bdi_rl.xmpp.liveness``): end the run, or warn.
Stalls = Literal["fail", "warn"]


@dataclass
class Progress:
    """A snapshot for the progress bar."""

    episodes_done: int
    episodes_total: int
    mean_return: float | None
    epsilon: float
    env_steps_per_second: float
    """training steps so far over the training phase so far (``bdi_rl.rl.throughput``, as
    ``summary.json`` counts them)"""


async def run_learners(
    agents: list[Any],
    on_progress: Callable[[Progress], None] | None,
    stalls: Stalls = "fail",
    halt: Callable[[], str | None] = lambda: None,
    society: Society | None = None,
) -> dict[str, str]:
    """Release started learners together, wait until they finish, flush their traces.

    ``stalls``: what a stall of these agents does (``bdi_rl.xmpp.liveness``): "fail" ends
    the run (every agent of the experiment is here), "warn" logs what each waits for.
    ``halt`` says why the whole run must stop now (None: it need not), e.g. its trace cannot
    be written: every agent still going stops with that reason, and nothing is flushed.
    ``society``: the process's agents as a MAS (``.stopMAS`` ends the wait; created agents
    join ``agents``; bdi_rl/xmpp/society.py).
    Returns the failures by agent JID (an empty dict when every learner finished)."""
    if society is None:
        society = Society("", [], agents)
    for agent in agents:
        agent.release()
    try:
        await _wait_for_learners(agents, on_progress, stalls, halt, society)
    except asyncio.CancelledError:
        # Ctrl-C (the CLI cancels this task): stop the minds, keep what was learned and traced.
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        for agent in agents:
            agent.pause_bdi()
            if not agent.finished and agent.failure is None:
                agent.failure = "interrupted"
                if is_learner(agent):
                    agent.role.keep_learned()
    await society.settle()  # agents being created or killed: started or stopped by now
    running = [agent for agent in agents if not agent.retired]  # the killed have closed their traces
    for agent in running:
        agent.pause_bdi()  # a stopped agent reasons no more (peers may still be talking to it)
        if is_learner(agent):  # its throughput counts the time it trained, however it ended
            agent.role.bridge.session.stop_training_clock()
            if agent.stopped and agent.failure is None:  # by .stopMAS: what it learned is kept
                agent.role.keep_learned()
        agent.close_trace()
    # Stopped by a signal, the process has compose's 10 s grace before SIGKILL: a telemetry
    # agent that stopped too (compose down stops every service at once) gets 5 s.
    interrupted = any(agent.failure == "interrupted" for agent in agents)
    halted = halt() is not None
    flushed = await asyncio.gather(
        *(
            agent.flush_trace(stall_seconds=INTERRUPTED_FLUSH if interrupted else 30.0)
            for agent in running
            if not halted  # nothing more can be written: no acknowledgement will come
        )
    )
    failures = {str(a.jid): a.failure for a in agents if a.failure}
    for agent, ok in zip(running, flushed, strict=False):
        if not ok:
            failures[str(agent.jid)] = "trace events were not acknowledged by telemetry"
    for agent in filter(is_learner, agents):
        checkpoints = agent.role.bridge.checkpoints
        try:
            checkpoints.write()  # the final table is kept even if telemetry is gone
        except OSError as exc:  # a full disk: the previous checkpoint is whole (atomic writes)
            why = f"its last checkpoint could not be written ({exc.strerror}); {checkpoints.path} is the one before"
            failures[str(agent.jid)] = "; ".join(filter(None, (failures.get(str(agent.jid)), why)))
    return failures


def is_learner(agent: Any) -> bool:
    return learner_of(agent) is not None


async def _wait_for_learners(
    agents: list[Any],
    on_progress: Callable[[Progress], None] | None,
    stalls: Stalls = "fail",
    halt: Callable[[], str | None] = lambda: None,
    society: Society | None = None,
) -> None:
    """Until every agent is done, or ``halt`` gives a reason to stop them all; once one has
    failed, the others get FAILURE_GRACE seconds (team plans wait for each other: without
    this a failed teammate would hang the run). A stall (``bdi_rl.xmpp.liveness``) ends the
    wait at once with ``stalls`` "fail" (each agent not done fails, saying what it waited
    for; after another agent's failure, as stopped by it), and is logged with back-off with
    "warn". A ``.stopMAS`` (``society.stopped_by``) ends it at once, every agent stopping
    cleanly; agents created meanwhile are watched too, but not waited for."""
    waiters = [asyncio.ensure_future(agent.done.wait()) for agent in agents]
    learners = [agent for agent in agents if is_learner(agent)]
    total = sum(agent.role.bridge.session.episodes_target for agent in learners)
    failed_at: float | None = None
    watch = StallWatch(agents, STALL_SECONDS if stalls == "fail" else IDLE_WARNING_FIRST)
    try:
        while True:
            done, _ = await asyncio.wait(waiters, timeout=0.1)
            if on_progress is not None and learners:
                on_progress(_progress(learners, total))
            if len(done) == len(waiters):
                return
            if society is not None and society.stopped_by is not None:
                for agent in agents:
                    if not agent.done.is_set() and not agent.failure and not agent.stopped:
                        agent.stopped = STOPPED + society.stopped_by
                return
            stop = halt()
            if stop is not None:
                for agent in agents:
                    if not agent.done.is_set():
                        agent.failure = f"stopped: {stop}"
                return
            failed = [agent for agent in agents if agent.failure]
            if failed and failed_at is None:
                failed_at = time.monotonic()
            stall = watch.check()
            if stall is not None and stalls == "warn":
                _warn_idle(stall, watch.snooze())
            elif stall is not None or (failed_at is not None and time.monotonic() - failed_at > FAILURE_GRACE):
                for agent in agents:
                    if agent.done.is_set() or agent.failure:
                        continue
                    if failed:
                        agent.failure = f"stopped: {failed[0].name} failed"
                    elif stall is not None:
                        agent.failure = STALLED + stall.waits[agent.name]
                return
    finally:
        for waiter in waiters:
            waiter.cancel()


def _warn_idle(stall: Stall, next_s: float) -> None:
    """An agent process's agents cannot act by themselves (a peer elsewhere may still wake them)."""
    for name, what in stall.waits.items():
        log.warning(
            "%s: idle for %.0f s: %s (nothing in this process can wake it; a message from another "
            "process may; next warning in %.0f s)",
            name,
            stall.seconds,
            what,
            next_s - stall.seconds,
        )


def _progress(agents: list[Any], total: int) -> Progress:
    stats = [agent.role.bridge.stats for agent in agents]
    returns = [r for s in stats for r in s.returns[-100:]]
    return Progress(
        episodes_done=sum(s.episodes for s in stats),
        episodes_total=total,
        mean_return=sum(returns) / len(returns) if returns else None,
        epsilon=sum(agent.role.bridge.session.learner.epsilon for agent in agents) / len(agents),
        env_steps_per_second=training_speed(stats, time.time()),
    )
