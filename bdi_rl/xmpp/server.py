"""Embedded XMPP server: pyjabber run in-process, on loopback only.

pyjabber's own ``Server`` is unfit for embedding (it binds the machine's LAN address, opens an
admin/upload HTTP site on 9090, writes certificates into site-packages, installs signal handlers,
spawns a process pool and exits silently on a busy port). So this module drives pyjabber's
building blocks itself: its configuration object, database, presence/pubsub singletons and the
``XMLProtocol`` connection handler, behind one c2s listener on 127.0.0.1 (and ::1). Its parts:
this module starts, serves and stops it; :mod:`bdi_rl.xmpp.serverhost` finds it a port, checks
its domain, makes its certificate and quietens pyjabber's logger; :mod:`bdi_rl.xmpp.serverstream`
is a client's stream (pyjabber's connection handler with the rules below), which also works
around two pyjabber races seen with clients in another process: a STARTTLS stream header that
gets lost, and a cancelled database query that wipes the in-memory database.

Who may speak, and as whom (pyjabber 0.4.5 routes whatever ``from`` a client writes, and lets
anyone register):

- every stanza of an authenticated client gets the session's full JID as ``from``; one that
  claims any other JID ends the stream with ``<invalid-from/>``, as ejabberd 23.01 does
  (``serverstream._SessionStanzaHandler``, RFC 6120 8.1.2.1), logged once per session;
- accounts are the ones given up front (``accounts``); in-band registration is neither
  advertised nor served unless ``open_registration`` says so (``serverstream._ClosedRegistration``).

pyjabber internals relied on (check them when bumping pyjabber, pinned ``>=0.4.5,<0.5``):
``AppConfig.AppConfig`` / ``AppConfig.app_config``, ``Parameters`` defaults (plugins, items),
``db.database.DB`` (``_engine``, ``setup_database``, ``close_engine_async``),
``db.model.Model.Credentials`` (``jid`` = local part, ``hash_pwd``) and the hash format
``SASL._verify_password_async`` checks (``sha256$iterations$salt_hex$hash_hex``, PBKDF2-HMAC,
verified with the stored iteration count), ``Presence``
(``_online_status``, ``_internal_queue``), ``PubSub.update_memory_from_database``,
``ConnectionManager`` (``_peerList``, ``_orphan_jids``, ``close``), ``QueueManager._queues``,
``utils.Singleton._instances``, ``HTTPFieldUpload``, ``XMLProtocol`` (``_timeout_monitor``,
``_peer``, ``_transport``, ``_xml_parser``, the ``transport`` setter the STARTTLS negotiator
calls), ``XMLParser`` (``_stream_negotiator``, ``_queue_bridge_task``, ``cancel_queue_bridge``),
``QueueBridge`` (``_queue``, ``_stream_handler``, ``_stanza_handler_class``),
``StreamNegotiator`` (its constructor's arguments, ``_handle_ssl`` for the stage where SASL and
registration IQs arrive, ``_ibr_feature``, ``_transport``, ``_protocol``, ``_host``, ``_peer``,
``_stage``, ``_connection_manager``), ``Stage.AUTH``, SASL PLAIN as the only mechanism
offered, ``StanzaHandler`` (``feed``,
``_jid``, ``_peername``, ``_transport``), ``upload_server.TEMP_DIR`` (a directory made when the
module is imported) and every pyjabber module's global ``logger`` (loguru).

pyjabber keeps its state in process globals, so one embedded server runs per process at a time.
"""

from __future__ import annotations

import asyncio
import binascii
import contextlib
import errno
import hashlib
import logging
import os
import socket
import ssl
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from bdi_rl.xmpp.serverhost import (
    LOG_LEVELS,
    QuietLogger,
    XmppServerError,
    check_domain,
    ensure_certificate,
    free_port,
    import_pyjabber,
    loopback_hosts,
)
from bdi_rl.xmpp.serverstream import make_protocol_class

__all__ = ["EmbeddedXmppServer", "XmppServerError", "check_domain", "ensure_certificate", "free_port"]

log = logging.getLogger(__name__)

_UPLOAD_PLUGIN = "urn:xmpp:http:upload:0"
_REGISTER_PLUGIN = "jabber:iq:register"
#: PBKDF2 iterations of the accounts made up front. pyjabber verifies a login with the
#: iterations stored with the hash; its own 100,000 (for passwords people choose) cost ~40 ms
#: of CPU per login. bdi-rl run's password is 128 random bits, which no iteration count makes
#: any harder to guess, and the hashes live in this process's memory only; 4096 (RFC 7677's
#: minimum for SCRAM) keeps a login ~2 ms, so hundreds of agents start fast.
ACCOUNT_HASH_ITERATIONS = 4096
_PORT_ATTEMPTS = 5
_CLOSE_GRACE_S = 2.0


class _UploadDisabled:
    """Answers HTTP upload requests: pyjabber's plugin manager always routes them, we serve none."""

    async def feed(self, jid: Any, element: Any) -> bytes:
        from xml.etree import ElementTree as ET

        reply = ET.Element("iq", {"type": "error", "id": element.get("id", ""), "to": str(jid)})
        error = ET.SubElement(reply, "error", {"type": "cancel"})
        ET.SubElement(error, "{urn:ietf:params:xml:ns:xmpp-stanzas}service-unavailable")
        return ET.tostring(reply)


class EmbeddedXmppServer:
    """pyjabber inside the caller's asyncio loop, reachable on loopback only.

    Agents use lower-case JIDs ``name@<domain>`` and connect to ``port``; the domain ("localhost"
    by default) doubles as the host name SPADE connects to, hence it must resolve to loopback.
    Nothing persists: accounts and pubsub live in an in-memory database, offline messages are
    dropped, certificates go to ``data_dir``. pyjabber's log records below ``log_level`` are
    dropped before they reach loguru's handlers.

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
        log_level: str = "WARNING",
        accounts: Mapping[str, str] | None = None,
        open_registration: bool = False,
    ) -> None:
        if log_level.upper() not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {list(LOG_LEVELS)}, got {log_level!r}")
        self.accounts: dict[str, str] = dict(accounts or {})
        self._hashes: dict[str, str] = {}
        """password -> its stored hash (one PBKDF2 per password)"""
        self.open_registration = open_registration
        self._host = host
        self.domain: str = host.strip().lower()
        self.port: int = port
        self.data_dir = Path(data_dir)
        self._requested_port = port
        self._port_fallback = port_fallback
        self._log_level = log_level.upper()
        self._listener: asyncio.Server | None = None
        self._protocols: set[Any] = set()
        self._readers: set[asyncio.Task[Any]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._executor: ThreadPoolExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sqlite: Any = None  # aiosqlite connection under pyjabber's engine (one: StaticPool)
        self._patched_loggers: dict[str, Any] = {}
        self._refused_logins: set[str] = set()
        self.start_seconds: float | None = None

    @property
    def running(self) -> bool:
        return self._listener is not None

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
            other._release()  # its loop is gone without a stop(): only globals are left to reset
        began = time.perf_counter()
        self.domain = check_domain(self._host)
        EmbeddedXmppServer._active = self
        self._loop = asyncio.get_running_loop()
        try:
            await self._start()
        except BaseException:
            await self._teardown()
            raise
        self.start_seconds = time.perf_counter() - began
        log.debug("XMPP server for %r on port %d ready in %.3f s", self.domain, self.port, self.start_seconds)

    async def _start(self) -> None:
        from pyjabber.db.database import DB
        from pyjabber.features.presence.PresenceFeature import Presence
        from pyjabber.plugins.xep_0060.xep_0060 import PubSub
        from pyjabber.queues.QueueManager import QueueName, get_queue

        self._quieten_pyjabber()
        self._reset_pyjabber_state()
        self._configure_pyjabber()

        await DB.setup_database()
        async with DB._engine.connect() as connection:
            self._sqlite = (await connection.get_raw_connection()).driver_connection
        await self._create_accounts()
        presence = Presence()
        await presence.get_all_pending_presence()
        await PubSub().update_memory_from_database()

        # pyjabber's queue worker only serves offline storage and server-to-server links, both
        # off here: drain its queues so they do not grow, and say why a message went nowhere.
        self._tasks = [
            asyncio.create_task(self._drain(get_queue(QueueName.CONNECTIONS), None)),
            asyncio.create_task(self._drain(get_queue(QueueName.MESSAGES), self._report_unroutable)),
            asyncio.create_task(self._drain(presence._internal_queue, None)),
        ]
        self._listener = await self._listen()
        self.port = int(self._listener.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Close the listener and every client stream, cancel our tasks, reset pyjabber's globals."""
        if EmbeddedXmppServer._active is not self:
            return
        await self._teardown()

    # -- start-up -----------------------------------------------------------------------------

    def _quieten_pyjabber(self) -> None:
        import_pyjabber()
        from loguru import logger as loguru_logger

        quiet = QuietLogger(loguru_logger, self._log_level)
        for name, module in list(sys.modules.items()):
            ours = name == "pyjabber" or name.startswith("pyjabber.")
            if ours and getattr(module, "logger", None) is loguru_logger:
                self._patched_loggers[name] = loguru_logger
                module.logger = quiet  # type: ignore[attr-defined]

    @staticmethod
    def _reset_pyjabber_state() -> None:
        """Forget singletons and queues a previous server (maybe on another loop) left behind."""
        from pyjabber.plugins.xep_0363.xep_0363 import HTTPFieldUpload
        from pyjabber.queues.QueueManager import QueueManager
        from pyjabber.utils.Singleton import Singleton

        Singleton._instances.clear()
        Singleton._instances[HTTPFieldUpload] = _UploadDisabled()
        QueueManager._queues = {}

    def _configure_pyjabber(self) -> None:
        import pyjabber
        from pyjabber import AppConfig
        from pyjabber.server_parameters import Parameters

        cert_path, key_path = ensure_certificate(self.domain, self.data_dir)
        c2s = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        c2s.load_cert_chain(certfile=cert_path, keyfile=key_path)
        s2s = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        s2s.check_hostname = False
        s2s.verify_mode = ssl.CERT_NONE
        s2s.load_cert_chain(certfile=cert_path, keyfile=key_path)

        defaults = Parameters()
        workers = min(4, os.cpu_count() or 1)
        # Password hashing (PBKDF2) runs in this pool; hashlib releases the GIL, so threads do
        # the job of pyjabber's process pool without spawning processes.
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="xmpp-auth")
        package_dir = os.path.dirname(os.path.abspath(pyjabber.__file__))
        AppConfig.app_config = AppConfig.AppConfig(
            host=self.domain,
            ip=["127.0.0.1", "::1"],
            ssl_context=c2s,
            ssl_context_s2s=s2s,
            connection_timeout=0,
            server_port=0,
            family=socket.AF_INET,
            config_path=os.path.join(package_dir, "config", "config.yaml"),
            cert_path=str(self.data_dir),
            root_path=package_dir,
            database_path=str(self.data_dir / "pyjabber.db"),
            database_in_memory=True,
            database_purge=False,
            database_debug=False,
            message_persistence=False,
            semaphore=asyncio.Semaphore(workers),
            process_pool_exe=self._executor,
            verbose=False,
            # Without the register plugin pyjabber neither offers in-band registration nor
            # lists it in disco; _ClosedRegistration refuses the requests themselves.
            plugins=[
                p for p in defaults.plugins if p != _UPLOAD_PLUGIN and (p != _REGISTER_PLUGIN or self.open_registration)
            ],
            items={k: dict(v) for k, v in defaults.items.items() if v.get("var") != _UPLOAD_PLUGIN},
        )

    async def _create_accounts(self) -> None:
        """Store ``accounts`` as pyjabber stores a registration, in its own hash format.

        One salt per distinct password: the run's agents share one random password, so a
        salt per account would only multiply the hashing (one PBKDF2 per start, not one per
        agent)."""
        from pyjabber.db.database import DB
        from pyjabber.db.model import Model
        from sqlalchemy import insert

        if not self.accounts:
            return
        loop = asyncio.get_running_loop()
        hashes = self._hashes
        for password in set(self.accounts.values()):
            hashes[password] = await loop.run_in_executor(self._executor, _password_hash, password)
        rows = [{"jid": name, "hash_pwd": hashes[password]} for name, password in self.accounts.items()]
        async with DB._engine.begin() as connection:
            await connection.execute(insert(Model.Credentials), rows)

    async def add_account(self, name: str, password: str) -> None:
        """One more account while the server runs (an agent a plan created: ``.create_agent``)."""
        from pyjabber.db.database import DB
        from pyjabber.db.model import Model
        from sqlalchemy import insert

        if name in self.accounts:
            return
        hashed = self._hashes.get(password)
        if hashed is None:  # the run's agents share one password: hashed once, at start
            loop = asyncio.get_running_loop()
            hashed = self._hashes[password] = await loop.run_in_executor(self._executor, _password_hash, password)
        async with DB._engine.begin() as connection:
            await connection.execute(insert(Model.Credentials), [{"jid": name, "hash_pwd": hashed}])
        self.accounts[name] = password

    async def _listen(self) -> asyncio.Server:
        """Bind the c2s port on loopback, moving to a free port when asked to."""
        loop = asyncio.get_running_loop()
        hosts = loopback_hosts()
        port = self._requested_port or free_port()
        for _ in range(_PORT_ATTEMPTS):
            try:
                return await loop.create_server(self._new_protocol, host=hosts, port=port)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise XmppServerError(f"cannot listen on loopback port {port}: {exc.strerror}") from None
                if not self._port_fallback:
                    raise XmppServerError(f"XMPP port {port} is already in use") from None
                log.info("XMPP port %d is in use; trying another", port)
                port = free_port()
        raise XmppServerError(f"no free loopback port for XMPP after {_PORT_ATTEMPTS} attempts")

    def _new_protocol(self) -> asyncio.Protocol:
        protocol: asyncio.Protocol = make_protocol_class()(self)
        return protocol

    # -- running --------------------------------------------------------------------------------

    @staticmethod
    async def _drain(queue: asyncio.Queue[Any], handle: Callable[[Any], None] | None) -> None:
        while True:
            item = await queue.get()
            if handle is not None:
                handle(item)

    def _report_unroutable(self, item: Any) -> None:
        if getattr(item, "is_external", False):
            log.warning("dropped a message to %s: this server only serves @%s", item.jid, self.domain)

    def _login_refused(self, user: str | None, reason: str) -> None:
        """One warning per name a client failed to log in as (a retrying client says it once)."""
        name = user if user is not None else "<unreadable>"
        if name not in self._refused_logins:
            self._refused_logins.add(name)
            log.warning("XMPP login as %r refused: %s", name, reason)

    def _forget_connection(self, peer: Any) -> None:
        """Drop a closed connection and the presences it held (pyjabber keeps both otherwise).

        A stale entry makes pyjabber route messages to a dead transport (asyncio then warns
        "socket.send() raised exception") or to a resource that no longer exists.
        """
        from pyjabber.features.presence.PresenceFeature import Presence
        from pyjabber.network.ConnectionManager import ConnectionManager

        manager = ConnectionManager()
        manager._peerList.pop(peer, None)
        manager._orphan_jids.pop(peer, None)
        live = {str(client.jid) for client in manager._peerList.values() if client.jid is not None}
        online = Presence()._online_status
        for bare, entries in list(online.items()):
            kept = [entry for entry in entries if f"{bare}/{entry[0]}" in live]
            if kept:
                online[bare] = kept
            else:
                del online[bare]

    # -- shutdown -------------------------------------------------------------------------------

    async def _teardown(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        await self._close_connections()
        if listener is not None:
            await listener.wait_closed()
        if self._readers:  # each finishes the stanza in hand, then exits
            _, late = await asyncio.wait(set(self._readers), timeout=_CLOSE_GRACE_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self._close_database()
        self._release()

    def _release(self) -> None:
        """Give back what needs no event loop: threads, pyjabber's globals, its loggers.

        After a normal teardown the listener and database are closed already; they are still
        open only when the loop was closed under a running server.
        """
        from pyjabber import AppConfig
        from pyjabber.db.database import DB

        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.close()
        sqlite, self._sqlite = self._sqlite, None
        if sqlite is not None:
            with contextlib.suppress(Exception):
                sqlite.stop()  # ends aiosqlite's worker thread, which would block interpreter exit
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self._reset_pyjabber_state()
        AppConfig.app_config = None
        DB._engine = None
        for name, original in self._patched_loggers.items():
            module = sys.modules.get(name)
            if module is not None:
                module.logger = original  # type: ignore[attr-defined]
        self._patched_loggers = {}
        self._protocols.clear()
        self._readers.clear()
        self._loop = None
        if EmbeddedXmppServer._active is self:
            EmbeddedXmppServer._active = None

    async def _close_connections(self) -> None:
        """End every client stream politely, then abort whatever has not closed in time."""
        for protocol in list(self._protocols):
            transport = protocol.transport
            if transport is not None and not transport.is_closing():
                transport.write(b"</stream:stream>")
                transport.close()
        deadline = time.monotonic() + _CLOSE_GRACE_S
        while self._protocols and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        for protocol in list(self._protocols):
            protocol.raw_transport.abort()
        while self._protocols and time.monotonic() < deadline + 0.5:
            await asyncio.sleep(0.01)

    async def _close_database(self) -> None:
        from pyjabber.db.database import DB

        if DB._engine is not None:
            try:  # bounded: a connection aiosqlite already stopped never answers its close
                await asyncio.wait_for(DB.close_engine_async(), _CLOSE_GRACE_S)
                self._sqlite = None
            except TimeoutError:
                log.debug("XMPP server database did not close in time")


def _password_hash(password: str) -> str:
    """``password`` as pyjabber stores a registration's: ``sha256$iterations$salt_hex$hash_hex``."""
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, ACCOUNT_HASH_ITERATIONS)
    return f"sha256${ACCOUNT_HASH_ITERATIONS}${binascii.hexlify(salt).decode()}${binascii.hexlify(digest).decode()}"
