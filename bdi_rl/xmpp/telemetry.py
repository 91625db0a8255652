"""The telemetry agent: receives every agent's trace batches and writes the run's JSONL.

Exactly-once by construction: each agent's events are numbered gaplessly; the telemetry
agent writes an event only when its seq is the next one expected for that agent, drops
replays (seq already written) and answers a gap with ``"gap": true`` so the sender goes
back to its oldest unacknowledged event. Acks are cumulative (``upto`` = next seq wanted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import orjson
from spade.agent import Agent
from spade.behaviour import CyclicBehaviour
from spade.message import Message
from spade.template import Template
from spade.trace import TraceStore

from bdi_rl.rl.throughput import TrainingSpan
from bdi_rl.trace.batch import (
    ACK_METADATA,
    BATCH_METADATA,
    JOIN_REPLY_METADATA,
    JOIN_REQUEST_METADATA,
    Batch,
    decode_batch,
)
from bdi_rl.trace.errors import TraceFormatError
from bdi_rl.trace.kinds import AGENT_START, AGENT_STOP, EPISODE_END, EVAL, QTABLE_SAVE, TraceLevel
from bdi_rl.trace.reading import check_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp import patches as xmpp_patches
from bdi_rl.xmpp.agent import SPADE_MESSAGE_LOG
from bdi_rl.xmpp.jids import bare_jid
from bdi_rl.xmpp.shipping import LocalBatchMessage

log = logging.getLogger("bdi_rl.xmpp.telemetry")


@dataclass
class AgentStats:
    """What the summary needs of one agent, gathered from its events as they are written."""

    KINDS: ClassVar[frozenset[str]] = frozenset({AGENT_START, EPISODE_END, EVAL, QTABLE_SAVE, AGENT_STOP})

    episodes: int = 0
    env_steps: int = 0
    life_env_steps: int = 0
    """env steps since its latest ``agent.start`` (a resumed run's agent starts a new life):
    the steps of :attr:`train_seconds`"""
    started: float | None = None
    last_episode: float | None = None
    eval: dict[str, Any] | None = None
    qtable: str | None = None
    stop: dict[str, Any] | None = None
    evaluated: list[tuple[float, float]] = field(default_factory=list)
    """(when, seconds) of each evaluation: those during training are not training time"""

    def training(self) -> TrainingSpan | None:
        """When it trained (its latest life): the span its ``agent.stop`` gives, or, from a
        trace before that field or an agent stopped without it, from its start to its last
        episode; the evaluations in between are pauses."""
        span = (self.stop or {}).get("training")
        if isinstance(span, list) and len(span) == 2:
            start, end = float(span[0]), float(span[1])
        elif self.started is not None and self.last_episode is not None:
            start, end = self.started, self.last_episode
        else:
            return None
        pauses = [(ts - seconds, ts) for ts, seconds in self.evaluated if start <= ts <= end]
        return TrainingSpan(start, end, pauses)

    @property
    def train_seconds(self) -> float:
        """How long it trained (its latest life), evaluations in between left out."""
        span = self.training()
        return 0.0 if span is None else span.seconds(now=time.time())  # its end is set

    def add(self, event: dict[str, Any]) -> None:
        kind, data = event["kind"], event["data"]
        if kind == AGENT_START:
            self.started = event["ts"]
            self.life_env_steps = 0
            self.last_episode = None
            self.evaluated = []
        elif kind == EPISODE_END:
            self.episodes += 1
            self.env_steps += int(data.get("length", 0))
            self.life_env_steps += int(data.get("length", 0))
            self.last_episode = event["ts"]
        elif kind == EVAL:
            self.eval = {k: data.get(k) for k in ("episodes", "mean_return", "success_rate")}
            seconds = data.get("seconds")
            if isinstance(seconds, (int, float)):
                self.evaluated.append((event["ts"], float(seconds)))
        elif kind == QTABLE_SAVE:
            self.qtable = data.get("path")
        elif kind == AGENT_STOP:
            self.stop = data


class TraceWriteError(OSError):
    """The trace cannot be written (the disk is full, the file system went read-only ...);
    what was written before is whole (:meth:`TraceLog.accept`)."""


class TraceLog:
    """Append-only JSONL writer that keeps each agent's events gapless and unique."""

    def __init__(self, path: Path, run: str | None = None) -> None:
        self.path = path
        self.run = run
        """the run whose events an existing file must hold (None: any run's)"""
        self.next_seq: dict[str, int] = {}
        self.written = 0
        self.duplicates = 0
        self.rejected = 0
        self.stats: dict[str, AgentStats] = {}
        self.recovered = self._recover() if path.exists() else 0
        # Unbuffered: each batch is one write, and a failed one can be taken back whole.
        self._file: BinaryIO = open(path, "ab", buffering=0)
        self.failure: TraceWriteError | None = None
        """why the trace could not be written; nothing more is accepted after it"""

    def _recover(self) -> int:
        """Continue an existing trace (telemetry restarted, a run resumed): learn each agent's
        next seq. TraceFileError, before anything changes, if a line is not the next event.

        A process killed mid-write can leave a torn last line; only that line is cut, so the
        file stays valid JSONL (its events are still unacknowledged: agents send them again).
        """
        scan = check_trace(self.path, self.run, keep=AgentStats.KINDS)
        self.next_seq.update(scan.next_seq)
        for line in scan.kept:
            event = orjson.loads(line)
            self.stats.setdefault(event["agent"], AgentStats()).add(event)
        if scan.torn is not None:
            log.warning(
                "telemetry: %s ended in a torn line (%s); cut it off (%d bytes)",
                self.path,
                scan.torn,
                self.path.stat().st_size - scan.good_end,
            )
            with open(self.path, "r+b") as f:
                f.truncate(scan.good_end)
        return scan.events

    def accept(self, batch: Batch) -> tuple[int, bool]:
        """Append the batch's new lines as received; return (next seq wanted, whether a
        gap was seen). Lines already written are counted as duplicates and dropped."""
        agent = batch.agent
        if self.failure is not None:
            raise self.failure
        expected = self.next_seq.get(agent, 0)
        skip = expected - batch.first
        if skip < 0:
            return expected, True
        self.duplicates += min(skip, len(batch.lines))
        lines = batch.lines[skip:]
        if lines:
            self._append(batch.jsonl if skip == 0 else b"\n".join(lines) + b"\n")
            self.written += len(lines)
            expected += len(lines)
            for kind, line in zip(batch.kinds[skip:], lines, strict=True):
                if kind in AgentStats.KINDS:
                    self.stats.setdefault(agent, AgentStats()).add(orjson.loads(line))
        self.next_seq[agent] = expected
        return expected, False

    def _append(self, data: bytes) -> None:
        """Append ``data`` whole, or not at all: a write that fails half-way (a full disk) is
        cut off again, so the file never ends in a torn line; TraceWriteError then, and for
        every later batch (their events stay unacknowledged with their agents)."""
        fd = self._file.fileno()
        end = os.lseek(fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, end)
            self.failure = TraceWriteError(exc.errno, exc.strerror, str(self.path))
            raise self.failure from None

    def close(self) -> None:
        self._file.close()


class TraceReceiver(CyclicBehaviour):  # type: ignore[misc]  # spade ships no type hints
    """Decodes batches, hands them to the TraceLog, acknowledges."""

    async def run(self) -> None:
        msg = await self.receive(timeout=1.0)
        # Drain everything queued in one turn: agents share the event loop with busy minds.
        while msg is not None:
            await self._handle(msg)
            msg = await self.receive(timeout=0)

    async def _handle(self, msg: Message) -> None:
        agent: TelemetryAgent = self.agent
        agent.last_batch_at = time.monotonic()
        sender = bare_jid(msg.sender)
        if agent.senders is not None and sender not in agent.senders:
            agent.trace_log.rejected += 1
            if sender not in agent.refused_senders:  # logged once per sender, all counted
                agent.refused_senders.add(sender)
                log.warning("telemetry: refused trace batches from %s, not an agent of run %s", sender, agent.run)
            return
        try:
            batch = msg.batch if type(msg) is LocalBatchMessage else decode_batch(msg.body or "")
        except TraceFormatError as exc:
            agent.trace_log.rejected += 1
            log.warning("telemetry: rejected a trace batch from %s: %s", sender, exc)
            return
        if batch.agent != sender:
            agent.trace_log.rejected += 1
            log.warning("telemetry: %s sent a batch claiming to be %s; rejected", sender, batch.agent)
            return
        if batch.run != agent.run:
            agent.trace_log.rejected += 1
            log.warning("telemetry: %s sent a batch of run %r, not %r; rejected", sender, batch.run, agent.run)
            return
        already_failed = agent.trace_log.failure is not None
        try:
            upto, gap = agent.trace_log.accept(batch)
        except TraceWriteError as exc:  # no ack: the events stay with their agent
            if not already_failed:
                agent.on_trace_failure(exc)
            return
        body = {"upto": upto, "gap": True} if gap else {"upto": upto}
        # To the bare JID: after a reconnection the batch's full JID may be a session that is gone.
        await self.send(Message(to=sender, body=orjson.dumps(body).decode(), metadata=ACK_METADATA))


class JoinResponder(CyclicBehaviour):  # type: ignore[misc]  # spade ships no type hints
    """Tells an agent started in its own process which run it belongs to, and hands out
    agent names to processes that claim one of a group (``docker compose --scale``)."""

    async def run(self) -> None:
        msg = await self.receive(timeout=1.0)
        if msg is None:
            return
        agent: TelemetryAgent = self.agent
        reply: dict[str, Any] = {"run": agent.run}
        try:
            request = orjson.loads(msg.body or "{}")
        except orjson.JSONDecodeError:
            request = {}
        group = request.get("claim") if isinstance(request, dict) else None
        if isinstance(group, str):
            try:
                reply["name"] = agent.claim(group, bare_jid(msg.sender))
            except LookupError as exc:
                reply["error"] = str(exc)
        await self.send(Message(to=str(msg.sender), body=orjson.dumps(reply).decode(), metadata=JOIN_REPLY_METADATA))


class TelemetryAgent(Agent):  # type: ignore[misc]  # spade ships no type hints
    """Owns the run's ``trace.jsonl``; every other agent ships its events here.

    Started before its run directory exists and given its trace once that is made
    (:meth:`open_trace`): its one login is the check of the password, so a wrong one is
    found before anything of the run is created, and the process logs in once."""

    run: str
    """the run's id (its directory's name), from :meth:`open_trace`"""
    trace_log: TraceLog
    tracer: Tracer
    """telemetry's own events (run.start, run.stop), numbered after those the trace holds"""

    def __init__(self, jid: str, password: str, *, port: int = 5222, senders: Collection[str] | None = None) -> None:
        xmpp_patches.require()  # patched at start-up: bdi_rl.patches.apply_all
        super().__init__(jid, password, port=port, verify_security=False)
        self.senders = None if senders is None else frozenset(j.lower() for j in senders)
        """bare JIDs whose trace batches are written: the run's agents (None: anyone's)"""
        self.refused_senders: set[str] = set()
        self.groups: dict[str, list[str]] = {}  # claimable agent names by group
        self.claims: dict[str, str] = {}  # agent name -> JID of the process that claimed it
        self.traces = TraceStore(size=SPADE_MESSAGE_LOG)
        self.on_trace_failure: Callable[[TraceWriteError], None] = self._log_trace_failure
        """called once when the trace cannot be written any more (the run cannot go on)"""
        self.last_batch_at = time.monotonic()
        """when the last trace batch came in (``linger``)"""

    def _message_received(self, msg: Any) -> Any:
        # An acknowledgement or a join reply to an agent that has gone comes back from the
        # server as an error carrying telemetry's own metadata (a resent batch is acked twice,
        # the second after its agent stopped). Nothing here reads a bounce, and an agent that
        # is still there sends its batch or request again: no warning with the message whole.
        if msg["type"] == "error":
            log.debug("telemetry: a message to %s came back (it is offline)", msg["from"])
            return []
        return super()._message_received(msg)

    def open_trace(self, trace_path: Path) -> None:
        """Write the run whose trace is ``trace_path`` (a new one, or one to continue), and
        from now on take trace batches and join requests. Called on the started agent with
        no await before it, so no request comes in between."""
        self.run = trace_path.parent.name
        self.trace_log = TraceLog(trace_path, self.run)
        self.tracer = Tracer(self.run, bare_jid(str(self.jid)), TraceLevel.EPISODE)
        self.tracer.seq = self.tracer.acked = self.trace_log.next_seq.get(self.tracer.agent, 0)
        self.add_behaviour(TraceReceiver(), Template(metadata=BATCH_METADATA))
        self.add_behaviour(JoinResponder(), Template(metadata=JOIN_REQUEST_METADATA))
        self.presence.set_available()

    #: Seconds without a batch after which a telemetry agent that has every agent's last event
    #: may stop (:meth:`linger`), and the most it waits for such a quiet.
    LINGER_QUIET = 1.5
    LINGER_MAX = 6.0

    async def linger(self) -> None:
        """Stay a moment after the run's last event: an agent whose last acknowledgement was
        lost (sent as this agent stopped, on a loaded machine) sends its last batch again
        within ``TraceShipper.FINAL_RESEND_AFTER`` and is answered, instead of failing a
        finished run for want of an acknowledgement."""
        until = time.monotonic() + self.LINGER_MAX
        while time.monotonic() < until and time.monotonic() - self.last_batch_at < self.LINGER_QUIET:
            await asyncio.sleep(0.1)

    def accept_sender(self, jid: str) -> None:
        """Write the trace batches of ``jid`` too (an agent a plan created during the run)."""
        if self.senders is not None:
            self.senders = self.senders | {jid.lower()}

    @staticmethod
    def _log_trace_failure(exc: TraceWriteError) -> None:
        log.warning("telemetry: cannot write %s: %s; what was written is whole", exc.filename, exc.strerror)

    def claim(self, group: str, claimant: str) -> str:
        """An agent name of ``group`` no process has claimed or started yet (idempotent)."""
        if group not in self.groups:
            raise LookupError(f"no agent group {group!r} in the spec")
        domain = self.jid.domain
        for name in self.groups[group]:
            if self.claims.get(name) == claimant:
                return name
        for name in self.groups[group]:
            if name not in self.claims and f"{name}@{domain}" not in self.trace_log.stats:
                self.claims[name] = claimant
                return name
        count = len(self.groups[group])
        raise LookupError(
            f"every agent of group {group!r} is already claimed: the spec names {count}, "
            f"so at most {count} processes can claim it"
        )

    def record_run_event(self, kind: str, data: Mapping[str, Any]) -> None:
        """Run-level events (run.start, run.stop) are telemetry's own, written directly (not
        at all once the trace cannot be written: the run is failing then)."""
        tracer = self.tracer
        tracer.emit(kind, data)
        with contextlib.suppress(TraceWriteError):
            self.trace_log.accept(tracer.next_local_batch())
        tracer.ack(tracer.seq)

    async def stop(self) -> None:
        await super().stop()
        self.container.unregister(str(self.jid))  # see TracedBdiAgent.stop
        if hasattr(self, "trace_log"):  # (stopped before its run existed: a failed check)
            self.trace_log.close()
