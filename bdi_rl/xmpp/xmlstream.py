"""The XML of one XMPP stream, as the embedded server reads and writes it (RFC 6120 4, 11).

A stream is one long XML document: its root is the ``<stream:stream>`` header, each child a
stanza or a negotiation element. :class:`StreamParser` reads it incrementally with expat and
hands out each top-level child as an ElementTree element once it is whole, so the server
never holds more than the stanza in progress. XMPP's restricted XML (RFC 6120 11.1) is
enforced here: a DTD, an entity declaration, a comment or a processing instruction ends the
stream (``restricted-xml``), which also rules out entity-expansion attacks.

:func:`stanza_xml` writes an element back with ``jabber:client`` as the default namespace,
as clients expect it (ElementTree's own writer would invent ``ns0:`` prefixes).
"""

from __future__ import annotations

from typing import Literal
from xml.etree.ElementTree import Element
from xml.parsers import expat

STREAM_NS = "http://etherx.jabber.org/streams"
CLIENT_NS = "jabber:client"
XML_NS = "http://www.w3.org/XML/1998/namespace"
STREAMS_NS = "urn:ietf:params:xml:ns:xmpp-streams"

#: A stanza bigger than this ends the stream (``policy-violation``). A trace batch is at most
#: ~200 KB; this bounds what one client can make the server hold.
MAX_STANZA_BYTES = 8 * 1024 * 1024

Event = tuple[Literal["open"], dict[str, str]] | tuple[Literal["element"], Element] | tuple[Literal["close"], None]


class StreamXmlError(Exception):
    """The client's XML cannot go on: ``condition`` is the stream error to answer with."""

    def __init__(self, condition: str, text: str) -> None:
        super().__init__(text)
        self.condition = condition


def _name(raw: str) -> str:
    """expat's ``namespace}local`` (the separator is ``}``) as ElementTree's ``{namespace}local``."""
    return "{" + raw if "}" in raw else raw


class StreamParser:
    """Feeds bytes in, takes events out: the stream header (``open``), each whole top-level
    element (``element``) and the end of the stream (``close``). A new parser per stream
    restart (after STARTTLS and after SASL), as RFC 6120 wants."""

    def __init__(self) -> None:
        parser = expat.ParserCreate(namespace_separator="}")
        parser.buffer_text = True
        parser.ordered_attributes = False
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        parser.StartDoctypeDeclHandler = self._restricted
        parser.EntityDeclHandler = self._restricted
        parser.CommentHandler = self._restricted
        parser.ProcessingInstructionHandler = self._restricted
        self._parser = parser
        self._stack: list[Element] = []
        self._depth = 0
        self._events: list[Event] = []
        self._pending_bytes = 0

    def feed(self, data: bytes) -> list[Event]:
        """Parse ``data``; the events it completed. Raises :class:`StreamXmlError`."""
        self._pending_bytes += len(data)
        if self._pending_bytes > MAX_STANZA_BYTES:
            raise StreamXmlError("policy-violation", f"a stanza over {MAX_STANZA_BYTES} bytes")
        try:
            self._parser.Parse(data, False)
        except expat.ExpatError as exc:
            raise StreamXmlError("not-well-formed", str(exc)) from None
        events, self._events = self._events, []
        return events

    def _restricted(self, *_: object) -> None:
        raise StreamXmlError("restricted-xml", "DTDs, entities, comments and processing instructions are not XMPP")

    def _start(self, raw: str, attrs: dict[str, str]) -> None:
        attrib = {_name(key): value for key, value in attrs.items()} if attrs else {}
        depth = self._depth
        self._depth = depth + 1
        if depth == 0:
            if _name(raw) != f"{{{STREAM_NS}}}stream":
                raise StreamXmlError("invalid-namespace", "a stream starts with <stream:stream>")
            self._events.append(("open", attrib))
            return
        element = Element(_name(raw), attrib)
        if depth > 1:
            self._stack[-1].append(element)
        self._stack.append(element)

    def _end(self, _raw: str) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._events.append(("close", None))
            return
        element = self._stack.pop()
        if self._depth == 1:
            self._pending_bytes = 0
            self._events.append(("element", element))

    def _text(self, data: str) -> None:
        if not self._stack:
            return  # whitespace between stanzas (keepalives)
        parent = self._stack[-1]
        if len(parent):
            last = parent[-1]
            last.tail = (last.tail or "") + data
        else:
            parent.text = (parent.text or "") + data


def escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attr(text: str) -> str:
    return escape_text(text).replace('"', "&quot;")


def _write(element: Element, parent_ns: str, out: list[str]) -> None:
    tag = element.tag
    namespace, _, local = tag[1:].partition("}") if tag[:1] == "{" else ("", "", tag)
    out.append("<" + local)
    if namespace != parent_ns:
        out.append(f' xmlns="{_escape_attr(namespace)}"')
    foreign = 0
    for key, value in element.attrib.items():
        if key[:1] == "{":
            key_ns, _, key_local = key[1:].partition("}")
            if key_ns == XML_NS:
                key = "xml:" + key_local
            else:
                foreign += 1
                out.append(f' xmlns:a{foreign}="{_escape_attr(key_ns)}"')
                key = f"a{foreign}:{key_local}"
        out.append(f' {key}="{_escape_attr(value)}"')
    if not len(element) and not element.text:
        out.append("/>")
        return
    out.append(">")
    if element.text:
        out.append(escape_text(element.text))
    for child in element:
        _write(child, namespace, out)
        if child.tail:
            out.append(escape_text(child.tail))
    out.append(f"</{local}>")


def stream_error(condition: str, text: str | None = None) -> bytes:
    """A stream error element (RFC 6120 4.9)."""
    detail = f"<text xmlns='{STREAMS_NS}' xml:lang='en'>{escape_text(text)}</text>" if text else ""
    return f"<stream:error><{condition} xmlns='{STREAMS_NS}'/>{detail}</stream:error>".encode()


def stanza_xml(element: Element) -> bytes:
    """``element`` as a stanza of a client stream (``jabber:client`` the default namespace)."""
    out: list[str] = []
    _write(element, CLIENT_NS, out)
    return "".join(out).encode()
