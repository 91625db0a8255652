"""Embedded XMPP server: bdi-rl's own c2s server, in the caller's asyncio loop, on loopback only.

One domain, the accounts it is given (or open registration, for tests), nothing stored: what a
run's agents need of a server and no more, so a run starts in milliseconds and imports nothing
beyond the standard library (it replaced pyjabber, whose database layer, sqlalchemy and
alembic, cost ~0.3 s of every process's start). Its parts: this module starts, serves and
stops it; :mod:`bdi_rl.xmpp.serverhost` finds it a port, checks its domain and makes its
certificate; :mod:`bdi_rl.xmpp.serverstream` is a client's stream (negotiation, and who may
speak as whom); :mod:`bdi_rl.xmpp.serverrouting` routes stanzas between sessions;
:mod:`bdi_rl.xmpp.xmlstream` reads and writes the stream's XML.

Who may speak, and as whom (tested with a plain client, ``tests/rawxmpp.py``):

- every stanza of an authenticated client gets the session's full JID as ``from``; one that
  claims any other JID ends the stream with ``<invalid-from/>``, as ejabberd 23.01 does
  (RFC 6120 8.1.2.1), logged once per session;
- accounts are the ones given up front (``accounts``); in-band registration is neither
  advertised nor served unless ``open_registration`` says so.

One embedded server runs per process at a time (``bdi-rl run`` starts one).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import ssl
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import ClassVar

from bdi_rl.xmpp.serverhost import (
    XmppServerError,
    check_domain,
    ensure_certificate,
    free_port,
    loopback_hosts,
    server_tls_context,
)
from bdi_rl.xmpp.serverrouting import Router
from bdi_rl.xmpp.serverstream import ClientStream
from bdi_rl.xmpp.xmlstream import stream_error

__all__ = ["EmbeddedXmppServer", "XmppServerError", "check_domain", "ensure_certificate", "free_port"]

log = logging.getLogger(__name__)

_PORT_ATTEMPTS = 5
_CLOSE_GRACE_S = 2.0


class EmbeddedXmppServer:
    """An XMPP server inside the caller's asyncio loop, reachable on loopback only.

    Agents use lower-case JIDs ``name@<domain>`` and connect to ``port``; the domain ("localhost"
    by default) doubles as the host name SPADE connects to, hence it must resolve to loopback.
    Nothing persists: rosters live in memory, a message to an agent that is not online comes
    back to its sender as an error, the certificate goes to ``data_dir``.

    ``accounts`` (local part -> password) are the only ones there are: clients log in to them
    and cannot register others (the registration feature is not offered, and a registration
    request is answered ``<forbidden/>``). ``open_registration=True`` lets any client register
    in-band instead, for tests and benchmarks whose agents make their own accounts; never for
    a run, where any local user could then log in.
    """

    _active: ClassVar[EmbeddedXmppServer | None] = None

    def __init__(
        self,
        *,
        host: str = "localhost",
        port: int = 5222,
        data_dir: Path,
        port_fallback: bool = True,
        accounts: Mapping[str, str] | None = None,
        open_registration: bool = False,
    ) -> None:
        self.accounts: dict[str, str] = {name.lower(): password for name, password in (accounts or {}).items()}
        self.open_registration = open_registration
        self._host = host
        self.domain: str = host.strip().lower()
        self.port: int = port
        self.data_dir = Path(data_dir)
        self._requested_port = port
        self._port_fallback = port_fallback
        self.router = Router(self.domain)
        self._tls: ssl.SSLContext | None = None
        self._listener: asyncio.Server | None = None
        self._streams: set[ClientStream] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._refused_logins: set[str] = set()
        self.start_seconds: float | None = None

    @property
    def running(self) -> bool:
        return self._listener is not None

    @property
    def tls_context(self) -> ssl.SSLContext:
        assert self._tls is not None, "the server has not started"
        return self._tls

    async def __aenter__(self) -> EmbeddedXmppServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start serving; returns once the c2s listener accepts connections."""
        if self.running:
            return
        other = EmbeddedXmppServer._active
        if other is not None:
            if other._loop is not None and not other._loop.is_closed():
                raise XmppServerError("an embedded XMPP server is already running in this process")
            other._release()  # its loop is gone without a stop(): nothing of it can run again
        began = time.perf_counter()
        self.domain = check_domain(self._host)
        self.router = Router(self.domain, self.accounts if self.open_registration else None)
        EmbeddedXmppServer._active = self
        self._loop = asyncio.get_running_loop()
        try:
            self._tls = server_tls_context(self.domain, self.data_dir)
            self._listener = await self._listen()
        except BaseException:
            await self._teardown()
            raise
        self.port = int(self._listener.sockets[0].getsockname()[1])
        self.start_seconds = time.perf_counter() - began
        log.debug("XMPP server for %r on port %d ready in %.3f s", self.domain, self.port, self.start_seconds)

    async def stop(self) -> None:
        """Close the listener and every client stream."""
        if EmbeddedXmppServer._active is not self:
            return
        await self._teardown()

    async def add_account(self, name: str, password: str) -> None:
        """One more account while the server runs (an agent a plan created: ``.create_agent``)."""
        self.accounts.setdefault(name.lower(), password)

    def login_refused(self, user: str | None, reason: str) -> None:
        """One warning per name a client failed to log in as (a retrying client says it once)."""
        name = user if user is not None else "<unreadable>"
        if name not in self._refused_logins:
            self._refused_logins.add(name)
            log.warning("XMPP login as %r refused: %s", name, reason)

    async def _listen(self) -> asyncio.Server:
        """Bind the c2s port on loopback, moving to a free port when asked to."""
        hosts = loopback_hosts()
        port = self._requested_port or free_port()
        for _ in range(_PORT_ATTEMPTS):
            try:
                return await asyncio.start_server(self._serve, host=hosts, port=port)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise XmppServerError(f"cannot listen on loopback port {port}: {exc.strerror}") from None
                if not self._port_fallback:
                    raise XmppServerError(f"XMPP port {port} is already in use") from None
                log.info("XMPP port %d is in use; trying another", port)
                port = free_port()
        raise XmppServerError(f"no free loopback port for XMPP after {_PORT_ATTEMPTS} attempts")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stream = ClientStream(self, reader, writer)
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(stream)
        self._tasks.add(task)
        try:
            await stream.run()
        finally:
            self._streams.discard(stream)
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    # -- shutdown -------------------------------------------------------------------------------

    async def _teardown(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        for stream in list(self._streams):
            stream.end(stream_error("system-shutdown"))
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=_CLOSE_GRACE_S)
            for stream in list(self._streams):
                stream.abort()
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if listener is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(listener.wait_closed(), _CLOSE_GRACE_S)
        self._release()

    def _release(self) -> None:
        """Forget what needs no event loop (after a normal teardown, or when the loop was
        closed under a running server)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.close()
        self._streams.clear()
        self._tasks.clear()
        self._loop = None
        if EmbeddedXmppServer._active is self:
            EmbeddedXmppServer._active = None
