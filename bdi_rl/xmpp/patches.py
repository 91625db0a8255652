"""Fixes to SPADE 4.1 / slixmpp 1.12 internals, applied at start-up by
:func:`bdi_rl.patches.apply_all`; an agent refuses to start before (:func:`require`). The
first two and the mailboxes keep the library's behaviour and remove a cost the profiles in
BENCHMARKS.md pinned on it; the others add what SPADE lacks.

- **Message bodies are escaped in C.** slixmpp escapes XML text with a Python generator over
  every character: 43 % of a trace sender's CPU, ~27 µs per trace event. Same output here with
  ``str.replace``.
- **Agents that do not verify the server share one TLS context.** slixmpp builds a default
  context per client and loads the system CA store into it twice (~57 ms of CPU), which SPADE
  then switches off (``verify_security=False``): half the CPU of starting 100 agents.
- **A stopped agent stays stopped.** SPADE's client schedules its keepalive ping (every 55 s)
  when it is made, not per session, so the ping goes on after the agent has stopped; one that
  finds the connection closed times out and calls slixmpp's ``reconnect()``, which logs the
  stopped agent in again ~85 s later, registering its account anew (a ``--claim`` asker's
  removed account came back so). Here the ping runs only while a session is up, and a client
  whose agent is leaving never connects again.
- **Agents reconnect.** SPADE's client stays down when the server goes away (a restart of
  ejabberd ended every run). :class:`ReconnectingXmppClient` connects again, retrying every few
  seconds, and announces the new session with a ``reconnected`` event; the trace shipper then
  re-sends what telemetry has not acknowledged (nothing is lost: README, "The trace").
  After a reconnection, the old session's pending IQ handlers meet stanzas without ``from``
  or ``id`` during the new login, and slixmpp warns ``Unknown stanza interface`` on the root
  logger each time (18 lines per reconnection, harmless): those records are dropped.
- **A message is put in the mailboxes it matches, not through tasks.** SPADE's dispatch made
  two asyncio tasks per matching behaviour and formatted the message for a debug line each
  time, debug on or not: ~3 % of a climbing run's work; its template match formatted the
  template and the message for another (~1.5 %), and its message log was written to with
  nothing kept. Same mailboxes, same order here; a message that comes to a stopping agent
  after its behaviours ended is dropped without SPADE's warning.
- **No web interface per agent.** SPADE builds every agent a jinja2 web app (its ``/spade``
  pages), which bdi-rl never starts: the first one imports ``arrow`` through
  ``jinja2_time`` (~60-90 ms of a process's start, measured with ``python -X importtime``),
  each one a jinja2 environment. Here an agent's ``web`` is :class:`_NoWebInterface`, which
  says it never started.
- **SPADE's log lines are bounded.** SPADE logs every message no behaviour takes with its whole
  body: a bounced ~190 KB trace batch, a stranger's 200 KB message. Its records are clipped
  to :data:`MAX_LOG_CHARS` (the agents handle the bounces they expect themselves).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import sys
import time
from functools import cache
from typing import Any

import spade.agent
import spade.message
import spade.template
from slixmpp import ClientXMPP
from spade.xmpp_client import XMPPClient

log = logging.getLogger("bdi_rl.xmpp")
_spade_log = logging.getLogger("spade.Agent")  # SPADE's own (its records are clipped below)

_tostring = sys.modules["slixmpp.xmlstream.tostring"]
_slixmpp_escape = _tostring.escape


def escape_xml(text: str, use_cdata: bool = False) -> str:
    """slixmpp's ``escape``, with the same output."""
    if use_cdata:
        escaped: str = _slixmpp_escape(text, use_cdata)
        return escaped
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("'", "&apos;")
        .replace('"', "&quot;")
    )


@cache
def unverified_tls_context() -> ssl.SSLContext:
    """The context SPADE ends up with for ``verify_security=False``, made once."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class SharedTlsXmppClient(XMPPClient):  # type: ignore[misc]  # spade ships no type hints
    """SPADE's client; without server verification it uses :func:`unverified_tls_context`, its
    keepalive ping runs only while a session is up, and it has no HTTP file upload.

    ``XMPPClient.__init__`` calls ``ClientXMPP.__init__`` without a context, so its body is
    repeated here with one (SPADE is pinned to 4.1.x)."""

    def __init__(self, jid: str, password: str, verify_security: bool, auto_register: bool) -> None:
        if verify_security:
            super().__init__(jid, password, verify_security, auto_register)
            self["xep_0199"].disable_keepalive()  # SPADE's, for the client's whole life
        else:
            ClientXMPP.__init__(self, jid, password, ssl_context=unverified_tls_context())
            self.logger = logging.getLogger("spade.Agent")
            self.enable_direct_tls = False
            self.add_event_handler("session_start", self.session_start)
            self.register_plugin("xep_0199")  # XMPP ping and keepalive
            if auto_register:
                self.add_event_handler("register", self.register)
                self.register_plugin("xep_0077")  # in-band registration
            # No XEP-0363 (HTTP file upload), which SPADE's client registers: bdi-rl's agents
            # upload no file, and the plugin imports aiohttp's client (xmpp.spadeimport).
        # SPADE enables the keepalive as it makes the client: here it runs per session.
        self.add_event_handler("session_start", self._start_keepalive)
        self.add_event_handler("session_end", self._stop_keepalive)
        self.add_event_handler("disconnected", self._stop_keepalive)

    KEEPALIVE_SECONDS = 55  # SPADE's interval

    def _start_keepalive(self, _event: object = None) -> None:
        self["xep_0199"].disable_keepalive()  # enable_keepalive refuses a second schedule
        self["xep_0199"].enable_keepalive(interval=self.KEEPALIVE_SECONDS)

    def _stop_keepalive(self, _event: object = None) -> None:
        self["xep_0199"].disable_keepalive()


class ReconnectingXmppClient(SharedTlsXmppClient):
    """Once its first session has started, the client connects again whenever the connection
    drops, until its agent stops (``leaving``). Stanzas sent meanwhile wait in slixmpp's queue
    and go out when the new session starts."""

    #: Longest pause between two tries (slixmpp's own back-off grows to 300 s): agents are
    #: back within this of the server's return.
    RETRY_CAP = 4.0

    def __init__(self, jid: str, password: str, verify_security: bool, auto_register: bool) -> None:
        super().__init__(jid, password, verify_security, auto_register)
        self.leaving = False
        self.had_session = False
        self.down_since: float | None = None
        self.tries = 0  # connections lost since the last session started
        self.add_event_handler("session_start", self._on_session_start)
        self.add_event_handler("disconnected", self._on_disconnected)

    @property
    def in_session(self) -> bool:
        """True while a session is up: stanzas sent now go out at once."""
        return self.had_session and self.down_since is None

    def _on_session_start(self, _event: object) -> None:
        self.had_session = True
        self.tries = 0
        if self.down_since is not None:
            down = time.monotonic() - self.down_since
            self.down_since = None
            log.warning("%s: reconnected to the XMPP server after %.1f s", self.boundjid.bare, down)
            self.event("reconnected", down)

    def _on_disconnected(self, reason: object) -> None:
        # Before the first session SPADE's own start-up reports the failure.
        if self.leaving or not self.had_session:
            return
        if self.down_since is None:
            self.down_since = time.monotonic()
            log.warning(
                "%s: lost the XMPP server (%s); reconnecting", self.boundjid.bare, reason or "connection closed"
            )
        # A connection that drops again before its session starts (a server still booting,
        # a refused login) is retried later each time.
        self.loop.call_later(min(self.RETRY_CAP, 0.5 * 2**self.tries), self._reconnect)
        self.tries += 1

    def _reconnect(self) -> None:
        if self.leaving or self.transport is not None:
            return
        host, port = self.custom_address or (None, None)
        self.connect(host, port)

    def reconnect(self, wait: float = 2.0, reason: str = "Reconnecting") -> None:
        """slixmpp's (a keepalive ping that timed out calls it); never once the agent leaves."""
        if not self.leaving:
            super().reconnect(wait, reason)

    _current_connection_attempt: asyncio.Future[Any] | None  # slixmpp's own attributes, typed here
    _connect_loop_wait: float

    def reschedule_connection_attempt(self) -> asyncio.Future[Any] | None:
        """slixmpp's, with the pause capped at :attr:`RETRY_CAP`."""
        if self._current_connection_attempt is None:
            return None
        self._connect_loop_wait = min(self.RETRY_CAP, self._connect_loop_wait * 2 + 1)
        self._current_connection_attempt = asyncio.ensure_future(self._connect_loop(), loop=self.loop)
        return self._current_connection_attempt


_spade_async_stop = spade.agent.Agent._async_stop


def _submit_tracked(agent: spade.agent.Agent, coro: Any) -> asyncio.Task[Any]:
    """SPADE's ``Agent.submit``, keeping the task: the agent's stop cancels what is left."""
    task = asyncio.create_task(coro)
    tasks: set[asyncio.Task[Any]] = agent.__dict__.setdefault("_submitted", set())
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task


def _dispatch_to_mailboxes(agent: spade.agent.Agent, msg: spade.message.Message) -> list[asyncio.Task[Any]]:
    """SPADE's ``Agent.dispatch``, the message put straight into each matching behaviour's
    mailbox: SPADE made two tasks per behaviour (its ``enqueue``, then the queue's ``put``)
    and formatted the message for a debug line whether debug logging was on or not, ~3 of a
    climbing run's every 100 ms for its ~1,000 messages. The mailboxes are unbounded queues,
    so the put never waits; SPADE's message log (for an agent that keeps one) and its warning
    for an unmatched message stay, but for an agent that is stopping: its behaviours end first, and what still comes (a
    duplicate acknowledgement of a trace batch it sent twice, a peer's last word) is no
    fault of anyone's. SPADE warned with the whole message, on the user's terminal."""
    matched = False
    logged = agent.traces.size > 0  # bdi-rl's agents keep none (xmpp.agent.SPADE_MESSAGE_LOG)
    for behaviour in agent.behaviours:
        template = behaviour.template
        if template is None or (
            _template_matches(template, msg) if type(template) is spade.template.Template else template.match(msg)
        ):
            behaviour.queue.put_nowait(msg)
            if logged:
                agent.traces.append(msg, category=str(behaviour))
            matched = True
    if not matched:
        if getattr(getattr(agent, "client", None), "leaving", False):
            log.debug("%s is stopping: dropped a message from %s", agent.jid, msg.sender)
        else:
            _spade_log.warning("No behaviour matched for message: %s", msg)
        if logged:
            agent.traces.append(msg)
    return []


def _template_matches(template: spade.template.Template, msg: spade.message.Message) -> bool:
    """SPADE's ``MessageBase.match`` for a plain template, without its debug line: SPADE
    formats the template and the whole message for it on every match, debug logging on or
    not (~1.5 % of a climbing run, one message an episode)."""
    if not template.empty_to() and not msg.to.__eq__(template.to):
        return False
    if not template.empty_sender() and not msg.sender.__eq__(template.sender):
        return False
    if template.body and msg.body != template.body:
        return False
    if template.thread and (msg.thread is None or msg.thread != template.thread):
        return False
    for key, value in template._metadata.items():
        if msg.get_metadata(key) != value:
            return False
    return True


async def _stop_and_leave(agent: spade.agent.Agent) -> None:
    """SPADE's ``Agent._async_stop``; a stopping agent's client does not reconnect, and the
    agent leaves nothing in the process: SPADE's stop kills behaviours by a flag they never
    read while they sleep on their mailbox, keeps the client's filter task and the agent in its
    container. A process that runs many runs (``bdi-rl sweep``'s workers) kept every agent of
    every run so: ~9 MB and 4 tasks a climbing run, each later run slower."""
    client = getattr(agent, "client", None)
    if isinstance(client, ReconnectingXmppClient):
        client.leaving = True
    await _spade_async_stop(agent)
    current = asyncio.current_task()
    for task in list(agent.__dict__.get("_submitted", ())):
        if task is not current and not task.done():
            task.cancel()
    out_filters = getattr(client, "_run_out_filters", None)
    if out_filters is not None and not out_filters.done():
        out_filters.cancel()
    container = getattr(agent, "container", None)
    if container is not None and container.has_agent(str(agent.jid)) and container.get_agent(str(agent.jid)) is agent:
        container.unregister(str(agent.jid))


def _not_unknown_interface(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Unknown stanza interface: ")


#: Longest SPADE log record kept whole.
MAX_LOG_CHARS = 500


def _clip_record(record: logging.LogRecord) -> bool:
    text = record.getMessage()
    if len(text) > MAX_LOG_CHARS:
        record.msg, record.args = f"{text[:MAX_LOG_CHARS]}... ({len(text)} characters)", ()
    return True


applied = False


class _NoWebInterface:
    """What SPADE's agent asks of its web interface when nothing started it (``Agent.stop``:
    ``is_started``); behaviours copy the attribute and never use it."""

    def __init__(self, agent: object) -> None:
        self.agent = agent

    def is_started(self) -> bool:
        return False


def apply() -> None:
    global applied
    _tostring.escape = escape_xml  # type: ignore[attr-defined]  # slixmpp's module-level function
    logging.getLogger().addFilter(_not_unknown_interface)  # the root logger's own records only
    logging.getLogger("spade.Agent").addFilter(_clip_record)
    spade.agent.XMPPClient = ReconnectingXmppClient
    spade.agent.WebApp = _NoWebInterface  # SPADE's unused web pages
    spade.agent.Agent._async_stop = _stop_and_leave
    spade.agent.Agent.submit = _submit_tracked
    spade.agent.Agent.dispatch = _dispatch_to_mailboxes
    applied = True


def require() -> None:
    """Refuse to start an agent on an unpatched SPADE: it would neither reconnect nor keep
    its log lines bounded."""
    if not applied:
        raise RuntimeError("SPADE is not patched: call bdi_rl.patches.apply_all() at start-up")
