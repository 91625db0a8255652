"""A client's stream on the embedded XMPP server (:mod:`bdi_rl.xmpp.server`): pyjabber's
connection handler with who may speak, and as whom, enforced (see the server's docstring), its
idle timer off, and two of its races worked around (a STARTTLS stream header that gets lost, a
cancelled database query that wipes the in-memory database).

Built lazily (:func:`make_protocol_class`) so that importing this module imports no pyjabber."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

log = logging.getLogger("bdi_rl.xmpp.server")  # the server's logger: one name for all it says


class StreamOwner(Protocol):
    """What a stream uses of its server (``server.EmbeddedXmppServer``): the accounts, the
    refused-login warning, and the connections and reader tasks it tracks to close them."""

    @property
    def accounts(self) -> Mapping[str, str]: ...

    _protocols: set[Any]
    _readers: set[asyncio.Task[Any]]

    def _login_refused(self, user: str | None, reason: str) -> None: ...

    def _forget_connection(self, peer: Any) -> None: ...


class _NoMonitor:
    """Replaces pyjabber's per-connection idle timer (60 s, then it drops quiet agents)."""

    def reset(self) -> None: ...

    def cancel(self) -> None: ...


class _StanzaQueue(asyncio.Queue[Any]):
    """A connection's stanza queue whose reader stops between stanzas, never inside one.

    pyjabber cancels a connection's stanza task when the socket closes; a cancel that lands in
    a database query makes SQLAlchemy invalidate the connection, which wipes the in-memory
    database (every account lost: "no such table: credentials"). Ending the reader here lets
    the stanza in hand finish first.
    """

    _END = object()

    def close(self) -> None:
        self.put_nowait(self._END)

    async def get(self) -> Any:
        item = await super().get()
        if item is self._END:
            raise asyncio.CancelledError  # pyjabber's reader treats this as its normal exit
        return item


def _is_own_jid(claimed: str, session: str) -> bool:
    """Whether a client's ``from`` names its own session: the full JID, or the bare one (local
    part and domain compared case-insensitively, resource exactly), as ejabberd accepts."""
    bare, _, resource = session.partition("/")
    claimed_bare, slash, claimed_resource = claimed.partition("/")
    if claimed_bare.lower() != bare.lower():
        return False
    return not slash or claimed_resource == resource


_STREAMS_NS = "urn:ietf:params:xml:ns:xmpp-streams"
_STANZAS_NS = "urn:ietf:params:xml:ns:xmpp-stanzas"
#: ejabberd 23.01's answer to a stanza whose ``from`` is not the sender's, word for word.
_INVALID_FROM = (
    f"<stream:error><invalid-from xmlns='{_STREAMS_NS}'/>"
    f"<text xmlns='{_STREAMS_NS}' xml:lang='en'>Improper 'from' attribute</text></stream:error>"
).encode()


_SASL_NOT_AUTHORIZED = b"<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>"
#: ejabberd's answer to a stanza sent before logging in.
_STREAM_NOT_AUTHORIZED = f"<stream:error><not-authorized xmlns='{_STREAMS_NS}'/></stream:error>".encode()


def _plain_user(auth: Any) -> str | None:
    """The user name (authcid) of a SASL PLAIN ``<auth>``, None if it is not one."""
    try:
        parts = base64.b64decode(auth.text or "").split(b"\0")
        return parts[1].decode() if len(parts) == 3 else None
    except (ValueError, UnicodeDecodeError):  # binascii.Error is a ValueError
        return None


def _registration_refused(iq_id: str | None, domain: str) -> bytes:
    """The answer to an in-band registration request when registration is closed: ejabberd's
    to a registration its access rules deny (``auth``/``forbidden``)."""
    from xml.sax.saxutils import quoteattr

    return (
        f"<iq type='error' id={quoteattr(iq_id or '')} from={quoteattr(domain)}><error type='auth'>"
        f"<forbidden xmlns='{_STANZAS_NS}'/><text xmlns='{_STANZAS_NS}' xml:lang='en'>In-band registration is "
        "closed: this server has accounts for the run's agents only</text></error></iq>"
    ).encode()


_protocol_class: Callable[[StreamOwner], asyncio.Protocol] | None = None


def make_protocol_class() -> Callable[[StreamOwner], asyncio.Protocol]:  # noqa: C901 (one class of pyjabber hooks: see its docstring)
    """pyjabber's client protocol, tracked by its server, without the idle timer, ending gently,
    with its stream negotiation and stanza routing replaced by the two classes below.

    Built lazily so importing this module does not import pyjabber (and its dependencies).
    """
    global _protocol_class
    if _protocol_class is not None:
        return _protocol_class
    from pyjabber.network.protocols.XMLProtocol import XMLProtocol
    from pyjabber.stream.handlers.StanzaHandler import StanzaHandler
    from pyjabber.stream.negotiators.StreamNegotiator import StreamNegotiator
    from pyjabber.stream.utils.Enums import Stage

    class _ClosedRegistration(StreamNegotiator):  # type: ignore[misc]  # pyjabber ships no type hints
        """pyjabber's stream negotiation; while registration is not offered (``_ibr_feature``,
        from the configured plugins), a registration request is refused, not served.

        Before authentication, pyjabber hands every IQ to in-band registration (SASL's
        ``handle_iq``) whether or not the feature was advertised, so every IQ is refused here.
        A refused login is a warning (pyjabber says nothing of a wrong password, and an
        internal ERROR for a name without an account, which is answered here instead). Any
        other element before login (a stanza) ends the stream with ``<not-authorized/>``, as
        on ejabberd; pyjabber logged an internal ERROR for each and kept the stream open.
        """

        __slots__ = ()

        async def _handle_ssl(self, element: Any) -> Any:
            tag = element.tag.rpartition("}")[2]
            owner: StreamOwner = self._protocol.owner
            if tag not in ("auth", "iq"):  # the two SASL.feed knows
                self._transport.write(_STREAM_NOT_AUTHORIZED)
                self._connection_manager.close(self._peer)
                return None
            if not self._ibr_feature and tag == "iq":
                self._transport.write(_registration_refused(element.get("id"), self._host))
                return None
            if tag == "auth" and not self._ibr_feature:
                user = _plain_user(element)
                if user not in owner.accounts:
                    owner._login_refused(user, f"no such account (only the run's agents have one on {self._host})")
                    self._transport.write(_SASL_NOT_AUTHORIZED)
                    self._connection_manager.close(self._peer)
                    return None
            result = await super()._handle_ssl(element)
            if tag == "auth" and self._stage is not Stage.AUTH:
                owner._login_refused(_plain_user(element), "wrong password")
            return result

    class _SessionStanzaHandler(StanzaHandler):  # type: ignore[misc]  # pyjabber ships no type hints
        """pyjabber's stanza router, fed stanzas from the session's own full JID only.

        pyjabber routes messages, presence subscriptions and IQs with whatever ``from`` the
        client wrote. RFC 6120 8.1.2.1: a missing ``from``, or the session's bare or full JID,
        becomes the full JID; any other ends the stream with ``<invalid-from/>`` (ejabberd's
        answer, ending the session), logged once, and nothing after it is routed.
        """

        def __init__(self, transport: Any) -> None:
            super().__init__(transport)
            self.refused = False

        async def feed(self, element: Any) -> None:
            if self.refused or self._jid is None:
                return  # the stream is ending: nothing more from it is routed
            session = str(self._jid)
            claimed = element.attrib.get("from")
            if claimed is not None and not _is_own_jid(claimed, session):
                self.refused = True
                log.warning(
                    "XMPP client %s sent a %s as %r: refused, its stream is closed (invalid-from)",
                    session,
                    element.tag.rpartition("}")[2],
                    claimed,
                )
                self._transport.write(_INVALID_FROM)
                self._connections.close(self._peername)  # "</stream:stream>", then the socket
                return
            element.attrib["from"] = session
            await super().feed(element)

    class _ClientProtocol(XMLProtocol):  # type: ignore[misc]  # pyjabber ships no type hints
        def __init__(self, owner: StreamOwner) -> None:
            super().__init__(namespace="jabber:client", connection_timeout=0)
            self._timeout_monitor = _NoMonitor()
            self.owner = owner
            self.raw_transport: asyncio.Transport | None = None
            self._held: list[bytes] = []

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.raw_transport = transport  # type: ignore[assignment]
            self.owner._protocols.add(self)
            super().connection_made(transport)
            # The reader task is created but has not run yet: swap its queue, negotiator and
            # stanza handler before it does.
            parser = self._xml_parser.getContentHandler()
            bridge = parser._stream_negotiator
            queue = _StanzaQueue()
            bridge._queue = queue
            bridge._stream_handler = _ClosedRegistration(self._transport, self, parser, bridge)
            bridge._stanza_handler_class = _SessionStanzaHandler
            parser.cancel_queue_bridge = queue.close
            self.owner._readers.add(parser._queue_bridge_task)
            parser._queue_bridge_task.add_done_callback(self.owner._readers.discard)

        # STARTTLS race: once the TLS handshake completes, the client's new stream header can
        # arrive before pyjabber's negotiator has switched transports and reset its XML stack;
        # the reset then swallows the header and the client waits forever. Hold such data back
        # until the switch (the negotiator assigns ``transport``) and feed it right after.

        def _upgrading(self) -> bool:
            raw = self.raw_transport
            return raw is not None and self._transport is raw and raw.get_protocol() is not self

        def data_received(self, data: bytes) -> None:
            if self._held or self._upgrading():
                self._held.append(data)
                return
            super().data_received(data)

        @property
        def transport(self) -> Any:
            return self._transport

        @transport.setter
        def transport(self, transport: Any) -> None:
            self._transport = transport
            if self._held:
                asyncio.get_running_loop().call_soon(self._release_held)

        def _release_held(self) -> None:
            data, self._held = b"".join(self._held), []
            if self._transport is not None and data:
                super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            self._held = []
            try:
                super().connection_lost(exc)
            finally:
                self.owner._protocols.discard(self)
                self.owner._forget_connection(self._peer)

    _protocol_class = _ClientProtocol
    return _protocol_class
