"""A bare XMPP client on asyncio streams, for testing servers as a stranger would.

It speaks RFC 6120 c2s itself (STARTTLS, SASL PLAIN, resource binding) plus XEP-0077
registration, and sends whatever XML it is handed, a forged ``from`` included: no bdi-rl,
SPADE or slixmpp code is involved, so what it sees is what the server does.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import uuid
import xml.etree.ElementTree as ET
from collections import deque

STREAM_NS = "http://etherx.jabber.org/streams"
TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls"
SASL_NS = "urn:ietf:params:xml:ns:xmpp-sasl"
BIND_NS = "urn:ietf:params:xml:ns:xmpp-bind"
REGISTER_NS = "jabber:iq:register"
STANZA_ERROR_NS = "urn:ietf:params:xml:ns:xmpp-stanzas"
STREAM_ERROR_NS = "urn:ietf:params:xml:ns:xmpp-streams"


class RawXmppClient:
    """One c2s connection. ``inbox`` holds the top-level elements the server sent (stanzas,
    features, stream errors) not yet taken; ``closed`` turns true when the server ends the
    stream or the connection."""

    def __init__(self, port: int, domain: str = "localhost", host: str = "127.0.0.1") -> None:
        self.port, self.domain, self.host = port, domain, host
        self.jid: str | None = None
        self.closed = False
        self.inbox: deque[ET.Element] = deque()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._parser: ET.XMLPullParser | None = None
        self._depth = 0

    # -- plumbing ---------------------------------------------------------------------------

    async def _restart_stream(self) -> ET.Element:
        """Send a stream header, return the server's stream features."""
        self._parser = ET.XMLPullParser(events=("start", "end"))
        self._depth = 0
        # No XML declaration: pyjabber keeps one XML parser for the whole connection, and a
        # declaration after the first stream's is not well-formed for it (slixmpp sends none).
        self.send(
            f"<stream:stream to='{self.domain}' version='1.0' xml:lang='en' "
            f"xmlns='jabber:client' xmlns:stream='{STREAM_NS}'>"
        )
        features = await self.next(10)
        if features is None or features.tag != f"{{{STREAM_NS}}}features":
            raise ConnectionError(f"expected stream features, got {features and ET.tostring(features)!r}")
        return features

    def send(self, xml: str) -> None:
        assert self._writer is not None
        self._writer.write(xml.encode())

    async def _pump(self) -> None:
        """Read one chunk and parse it into ``inbox``."""
        assert self._reader is not None and self._parser is not None
        data = await self._reader.read(65536)
        if not data:
            self.closed = True
            return
        self._parser.feed(data)
        for event, element in self._parser.read_events():
            if event == "start":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 1:
                    self.inbox.append(element)
                elif self._depth == 0:  # </stream:stream>
                    self.closed = True

    async def next(self, timeout: float = 5.0) -> ET.Element | None:
        """The next top-level element from the server; None if none comes in ``timeout`` s
        or the stream has ended."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.inbox and not self.closed:
            left = deadline - loop.time()
            if left <= 0:
                return None
            try:
                await asyncio.wait_for(self._pump(), left)
            except TimeoutError:
                return None
            except (ConnectionError, ssl.SSLError):
                self.closed = True
        return self.inbox.popleft() if self.inbox else None

    async def wait_closed(self, timeout: float = 5.0) -> bool:
        """Whether the server ends the stream within ``timeout`` s (what it sends is kept)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.closed and loop.time() < deadline:
            try:
                await asyncio.wait_for(self._pump(), deadline - loop.time())
            except TimeoutError:
                break
            except (ConnectionError, ssl.SSLError):
                self.closed = True
        return self.closed

    async def close(self) -> None:
        if self._writer is not None:
            try:
                if not self.closed:
                    self.send("</stream:stream>")
                self._writer.close()
                await asyncio.wait_for(self._writer.wait_closed(), 2)
            except (ConnectionError, ssl.SSLError, TimeoutError):
                pass
            self._writer = None

    # -- the protocol ---------------------------------------------------------------------

    async def connect(self) -> ET.Element:
        """TCP, then STARTTLS; returns the features offered over TLS (SASL, maybe register)."""
        self._reader, self._writer = await asyncio.wait_for(asyncio.open_connection(self.host, self.port), 5)
        features = await self._restart_stream()
        if features.find(f"{{{TLS_NS}}}starttls") is None:
            raise ConnectionError("the server offers no STARTTLS")
        self.send(f"<starttls xmlns='{TLS_NS}'/>")
        proceed = await self.next(5)
        if proceed is None or proceed.tag != f"{{{TLS_NS}}}proceed":
            raise ConnectionError("STARTTLS refused")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        await self._writer.start_tls(context, server_hostname=self.domain)
        return await self._restart_stream()

    async def register(self, user: str, password: str) -> ET.Element | None:
        """XEP-0077 registration before login; the server's answer (an iq, or an error)."""
        iq_id = uuid.uuid4().hex
        self.send(
            f"<iq type='set' id='{iq_id}'><query xmlns='{REGISTER_NS}'>"
            f"<username>{user}</username><password>{password}</password></query></iq>"
        )
        return await self.next(5)

    async def login(self, user: str, password: str) -> bool:
        """SASL PLAIN; on success binds a resource (``jid``) and returns True."""
        token = base64.b64encode(f"\0{user}\0{password}".encode()).decode()
        self.send(f"<auth xmlns='{SASL_NS}' mechanism='PLAIN'>{token}</auth>")
        answer = await self.next(10)
        if answer is None or answer.tag != f"{{{SASL_NS}}}success":
            return False
        await self._restart_stream()
        self.send(f"<iq type='set' id='bind-1'><bind xmlns='{BIND_NS}'/></iq>")
        bound = await self.next(5)
        jid = bound.find(f".//{{{BIND_NS}}}jid") if bound is not None else None
        if jid is None or not jid.text:
            raise ConnectionError(f"no resource bound: {bound is not None and ET.tostring(bound)!r}")
        self.jid = jid.text
        # An RFC 6121 session: old servers want it, the rest ignore or accept it.
        self.send("<iq type='set' id='sess-1'><session xmlns='urn:ietf:params:xml:ns:xmpp-session'/></iq>")
        return True

    async def online(self, user: str, password: str) -> None:
        """Log in and send initial presence (pyjabber routes messages to available resources only)."""
        if not await self.login(user, password):
            raise ConnectionError(f"login as {user} failed")
        self.send("<presence/>")

    async def take(self, tag: str, timeout: float = 5.0) -> ET.Element | None:
        """The next element with ``tag`` (``{jabber:client}message``...), skipping others."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (left := deadline - loop.time()) > 0:
            element = await self.next(left)
            if element is None:
                return None
            if element.tag == tag:
                return element
        return None

    async def drain(self, timeout: float = 1.0) -> list[ET.Element]:
        """Everything the server sends within ``timeout`` s."""
        got = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (left := deadline - loop.time()) > 0:
            element = await self.next(left)
            if element is None:
                break
            got.append(element)
        return got


def error_condition(element: ET.Element | None) -> str | None:
    """The defined condition of a stanza or stream error element (or one that holds one)."""
    if element is None:
        return None
    for child in element.iter():
        namespace = child.tag[1:].split("}")[0] if child.tag.startswith("{") else ""
        if namespace in (STANZA_ERROR_NS, STREAM_ERROR_NS) and not child.tag.endswith("}text"):
            return child.tag.split("}")[1]
    return None
