"""One client's stream on the embedded XMPP server (:mod:`bdi_rl.xmpp.server`): RFC 6120's
negotiation (STARTTLS, SASL PLAIN, resource binding), then every stanza handed to the
server's router (:mod:`bdi_rl.xmpp.serverrouting`) with the session's own JID as ``from``.

Who may speak, and as whom:

- before TLS a client may only start TLS; after it, only log in (or register, when the server
  is open to registration). Anything else ends the stream with ``<not-authorized/>``, as on
  ejabberd, and reaches nobody;
- a login needs an account the server was given (or one registered on an open server), and
  its password; each name refused is one warning;
- every stanza of a bound session gets the session's full JID as ``from``; one that claims
  any other JID ends the stream with ``<invalid-from/>``, as ejabberd 23.01 does (RFC 6120
  8.1.2.1), logged once, and nothing after it is routed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
import ssl
import uuid
from typing import TYPE_CHECKING, Protocol
from xml.etree.ElementTree import Element
from xml.sax.saxutils import quoteattr

from bdi_rl.xmpp.xmlstream import (
    CLIENT_NS,
    STREAM_NS,
    Event,
    StreamParser,
    StreamXmlError,
    escape_text,
    stanza_xml,
    stream_error,
)

if TYPE_CHECKING:
    from bdi_rl.xmpp.serverrouting import Router

log = logging.getLogger("bdi_rl.xmpp.server")

TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls"
SASL_NS = "urn:ietf:params:xml:ns:xmpp-sasl"
BIND_NS = "urn:ietf:params:xml:ns:xmpp-bind"
SESSION_NS = "urn:ietf:params:xml:ns:xmpp-session"
REGISTER_NS = "jabber:iq:register"
REGISTER_FEATURE_NS = "http://jabber.org/features/iq-register"
STANZAS_NS = "urn:ietf:params:xml:ns:xmpp-stanzas"

#: Seconds a client gets from connecting to a bound session: a stranger's idle socket is
#: closed, an agent logs in in milliseconds.
NEGOTIATION_SECONDS = 60.0
_READ_BYTES = 65536

_SASL_NOT_AUTHORIZED = f"<failure xmlns='{SASL_NS}'><not-authorized/></failure>".encode()


class StreamOwner(Protocol):
    """What a client's stream uses of the server that accepted it."""

    domain: str
    accounts: dict[str, str]
    open_registration: bool
    router: Router

    @property
    def tls_context(self) -> ssl.SSLContext: ...

    def login_refused(self, user: str | None, reason: str) -> None: ...


class StreamClosed(Exception):
    """The client closed the connection or its stream."""


#: ejabberd 23.01's answer to a stanza whose ``from`` is not the sender's, word for word.
_INVALID_FROM = stream_error("invalid-from", "Improper 'from' attribute")


def is_own_jid(claimed: str, session: str) -> bool:
    """Whether a client's ``from`` names its own session: the full JID, or the bare one (local
    part and domain compared case-insensitively, resource exactly), as ejabberd accepts."""
    bare, _, resource = session.partition("/")
    claimed_bare, slash, claimed_resource = claimed.partition("/")
    if claimed_bare.lower() != bare.lower():
        return False
    return not slash or claimed_resource == resource


def plain_credentials(auth: Element) -> tuple[str, str] | None:
    """(user, password) of a SASL PLAIN ``<auth>`` (RFC 4616), None if it is not one."""
    try:
        parts = base64.b64decode(auth.text or "", validate=True).split(b"\0")
        if len(parts) != 3:
            return None
        return parts[1].decode(), parts[2].decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _tag(element: Element) -> str:
    return element.tag.rpartition("}")[2]


class ClientStream:
    """One connection: negotiated in :meth:`run`, then a session the router delivers to."""

    def __init__(self, owner: StreamOwner, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.owner = owner
        self.jid: str | None = None
        """the session's full JID once a resource is bound"""
        self.bare: str | None = None
        self.resource: str | None = None
        self._reader = reader
        self._writer = writer
        self._parser = StreamParser()
        self._events: list[Event] = []
        self._closing = False
        self._user: str | None = None

    # -- writing ------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Write to the client; a stream that is ending takes nothing more."""
        if not self._closing and not self._writer.is_closing():
            self._writer.write(data)

    def deliver(self, stanza: Element) -> None:
        self.send(stanza_xml(stanza))

    def end(self, error: bytes | None = None) -> None:
        """Close the stream (after ``error``, a stream error), then the connection."""
        if self._closing:
            return
        if error is not None:
            self.send(error)
        self.send(b"</stream:stream>")
        self._closing = True
        if not self._writer.is_closing():
            self._writer.close()

    def abort(self) -> None:
        self._closing = True
        self._writer.transport.abort()

    # -- reading ------------------------------------------------------------------------------

    async def _next(self) -> Event:
        while not self._events:
            if self._closing:
                raise StreamClosed
            data = await self._reader.read(_READ_BYTES)
            if not data:
                raise StreamClosed
            self._events = self._parser.feed(data)
        event = self._events.pop(0)
        if event[0] == "close":
            raise StreamClosed
        return event

    async def _element(self) -> Element:
        """The next top-level element; a new stream header here is a protocol error."""
        kind, payload = await self._next()
        if kind != "element" or not isinstance(payload, Element):
            raise StreamXmlError("invalid-xml", "a stream header in the middle of a stream")
        return payload

    async def _open(self, features: str) -> None:
        """Wait for the client's stream header; answer with ours and ``features``."""
        kind, attrs = await self._next()
        if kind != "open" or not isinstance(attrs, dict):
            raise StreamXmlError("invalid-xml", "expected a stream header")
        stream_id = uuid.uuid4().hex
        header = (
            f"<?xml version='1.0'?><stream:stream xmlns='{CLIENT_NS}' xmlns:stream='{STREAM_NS}' "
            f"id='{stream_id}' from={quoteattr(self.owner.domain)} version='1.0' xml:lang='en'>"
        )
        self.send(header.encode())
        to = attrs.get("to", "").strip().lower()
        if to and to != self.owner.domain:
            raise StreamXmlError("host-unknown", f"this server is {self.owner.domain}")
        self.send(f"<stream:features>{features}</stream:features>".encode())

    def _restart(self) -> None:
        self._parser = StreamParser()
        self._events = []

    # -- the stream's life ----------------------------------------------------------------------

    async def run(self) -> None:
        """Negotiate, then serve the session until either side ends it."""
        router = self.owner.router
        try:
            try:
                await asyncio.wait_for(self._negotiate(), NEGOTIATION_SECONDS)
            except TimeoutError:
                self.end(stream_error("connection-timeout"))
                return
            while True:
                stanza = await self._element()
                if self._stamped(stanza):
                    router.route(self, stanza)
                else:
                    return
        except StreamXmlError as exc:
            log.debug("XMPP stream of %s ended: %s (%s)", self.jid or "a client", exc.condition, exc)
            self.end(stream_error(exc.condition, str(exc)))
        except (StreamClosed, ConnectionError, ssl.SSLError):
            self.end()
        finally:
            if self.jid is not None:
                router.unbind(self)

    def _stamped(self, stanza: Element) -> bool:
        """Set ``from`` to the session's full JID; False (and the stream ended) for a forgery."""
        session = self.jid
        assert session is not None
        claimed = stanza.get("from")
        if claimed is not None and not is_own_jid(claimed, session):
            log.warning(
                "XMPP client %s sent a %s as %r: refused, its stream is closed (invalid-from)",
                session,
                _tag(stanza),
                claimed,
            )
            self.end(_INVALID_FROM)
            return False
        stanza.set("from", session)
        return True

    async def _negotiate(self) -> None:
        await self._open(f"<starttls xmlns='{TLS_NS}'><required/></starttls>")
        first = await self._element()
        if first.tag != f"{{{TLS_NS}}}starttls":
            raise StreamXmlError("not-authorized", "start TLS first")
        self.send(f"<proceed xmlns='{TLS_NS}'/>".encode())
        await self._writer.start_tls(self.owner.tls_context)
        self._restart()
        await self._authenticate()
        self._restart()
        await self._open(f"<bind xmlns='{BIND_NS}'/><session xmlns='{SESSION_NS}'><optional/></session>")
        while self.jid is None:
            iq = await self._element()
            if iq.tag != f"{{{CLIENT_NS}}}iq" or iq.find(f"{{{BIND_NS}}}bind") is None:
                raise StreamXmlError("not-authorized", "bind a resource first")
            self._bind(iq)

    async def _authenticate(self) -> None:
        owner = self.owner
        register = f"<register xmlns='{REGISTER_FEATURE_NS}'/>" if owner.open_registration else ""
        await self._open(f"<mechanisms xmlns='{SASL_NS}'><mechanism>PLAIN</mechanism></mechanisms>{register}")
        while True:
            element = await self._element()
            if element.tag == f"{{{CLIENT_NS}}}iq":
                self._register(element)
            elif element.tag == f"{{{SASL_NS}}}auth":
                if self._login(element):
                    self.send(f"<success xmlns='{SASL_NS}'/>".encode())
                    return
                self.send(_SASL_NOT_AUTHORIZED)
            else:
                raise StreamXmlError("not-authorized", "log in first")

    def _login(self, auth: Element) -> bool:
        owner = self.owner
        if auth.get("mechanism") != "PLAIN":
            owner.login_refused(None, f"mechanism {auth.get('mechanism')!r} is not offered")
            return False
        credentials = plain_credentials(auth)
        if credentials is None:
            owner.login_refused(None, "unreadable SASL PLAIN message")
            return False
        user, password = credentials
        name = user.lower()
        known = owner.accounts.get(name)
        if known is None:
            owner.login_refused(user, f"no such account (only the run's agents have one on {owner.domain})")
            return False
        if not hmac.compare_digest(known.encode(), password.encode()):
            owner.login_refused(user, "wrong password")
            return False
        self._user = name
        return True

    def _register(self, iq: Element) -> None:
        """XEP-0077 before login: served on an open server, refused (as ejabberd's access rules
        refuse) on one that holds the run's accounts only."""
        owner = self.owner
        iq_id = quoteattr(iq.get("id", ""))
        query = iq.find(f"{{{REGISTER_NS}}}query")
        if not owner.open_registration or query is None:
            self.send(
                f"<iq type='error' id={iq_id} from={quoteattr(owner.domain)}><error type='auth'>"
                f"<forbidden xmlns='{STANZAS_NS}'/><text xmlns='{STANZAS_NS}' xml:lang='en'>In-band "
                "registration is closed: this server has accounts for the run's agents only</text>"
                "</error></iq>".encode()
            )
            return
        if iq.get("type") == "get":
            self.send(
                f"<iq type='result' id={iq_id}><query xmlns='{REGISTER_NS}'><instructions>Choose a user name "
                "and password</instructions><username/><password/></query></iq>".encode()
            )
            return
        user = (query.findtext(f"{{{REGISTER_NS}}}username") or "").strip().lower()
        password = query.findtext(f"{{{REGISTER_NS}}}password") or ""
        if not user or "@" in user or "/" in user or not password:
            self.send(
                f"<iq type='error' id={iq_id}><error type='modify'><not-acceptable xmlns='{STANZAS_NS}'/>"
                "</error></iq>".encode()
            )
            return
        if user in owner.accounts:
            conflict = f"<error type='cancel'><conflict xmlns='{STANZAS_NS}'/></error>"
            self.send(f"<iq type='error' id={iq_id}>{conflict}</iq>".encode())
            return
        owner.accounts[user] = password
        self.send(f"<iq type='result' id={iq_id}/>".encode())

    def _bind(self, iq: Element) -> None:
        assert self._user is not None
        requested = (iq.findtext(f"{{{BIND_NS}}}bind/{{{BIND_NS}}}resource") or "").strip()
        resource = requested or uuid.uuid4().hex[:12]
        self.bare = f"{self._user}@{self.owner.domain}"
        self.resource = resource
        self.jid = f"{self.bare}/{resource}"
        self.owner.router.bind(self)
        self.send(
            f"<iq type='result' id={quoteattr(iq.get('id', ''))}><bind xmlns='{BIND_NS}'>"
            f"<jid>{escape_text(self.jid)}</jid></bind></iq>".encode()
        )
