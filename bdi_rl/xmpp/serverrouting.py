"""Where the embedded XMPP server sends each stanza (RFC 6120 10, RFC 6121), one domain, no
storage: sessions by JID, presence (broadcast to subscribers, directed presence and the
``unavailable`` a closed session owes whoever it told it was there), rosters and
subscriptions in memory, and the few IQs a server answers itself (roster, ping, session,
service discovery).

Delivery follows RFC 6121 8.5 without offline storage: a message to a full JID goes to that
session; to a bare JID, to its available sessions of the highest non-negative priority; when
there is none, a ``chat`` or ``normal`` message comes back to its sender as an error with its
payload (``service-unavailable``), which the agents read as "not online yet" (the trace
shipper and the world link send again). A stanza for another domain is refused
(``remote-server-not-found``): this server has no server-to-server links.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol
from xml.etree.ElementTree import Element, SubElement

from bdi_rl.xmpp.xmlstream import stream_error


class ClientStream(Protocol):
    """What the router uses of a bound client stream (:class:`bdi_rl.xmpp.serverstream.ClientStream`)."""

    jid: str | None
    bare: str | None
    resource: str | None

    def deliver(self, stanza: Element) -> None: ...

    def end(self, error: bytes | None = None) -> None: ...


log = logging.getLogger("bdi_rl.xmpp.server")

C = "{jabber:client}"
ROSTER_NS = "jabber:iq:roster"
REGISTER_NS = "jabber:iq:register"
PING_NS = "urn:xmpp:ping"
SESSION_NS = "urn:ietf:params:xml:ns:xmpp-session"
DISCO_INFO_NS = "http://jabber.org/protocol/disco#info"
DISCO_ITEMS_NS = "http://jabber.org/protocol/disco#items"
STANZAS_NS = "urn:ietf:params:xml:ns:xmpp-stanzas"

_SUBSCRIPTION_TYPES = frozenset({"subscribe", "subscribed", "unsubscribe", "unsubscribed"})


def split_jid(jid: str) -> tuple[str, str, str]:
    """(local part, domain, resource); local part and domain lower-cased (a stand-in for
    nodeprep and nameprep that holds for the ASCII JIDs agents use)."""
    bare, _, resource = jid.partition("/")
    local, at, domain = bare.rpartition("@")
    if not at:
        local, domain = "", bare
    return local.lower(), domain.lower(), resource


def bare_of(jid: str) -> str:
    local, domain, _ = split_jid(jid)
    return f"{local}@{domain}" if local else domain


@dataclass
class RosterItem:
    subscription: str = "none"
    """none, to (we see their presence), from (they see ours) or both"""
    ask: bool = False
    """a subscription request of ours is pending"""
    name: str | None = None
    groups: list[str] = field(default_factory=list)

    def sees_us(self) -> bool:
        return self.subscription in ("from", "both")

    def we_see(self) -> bool:
        return self.subscription in ("to", "both")


_SUBSCRIPTION_NAMES = {(False, False): "none", (True, False): "to", (False, True): "from", (True, True): "both"}


def _with(subscription: str, side: str) -> str:
    """``subscription`` with ``side`` (``to`` or ``from``) added."""
    has_to = subscription in ("to", "both") or side == "to"
    has_from = subscription in ("from", "both") or side == "from"
    return _SUBSCRIPTION_NAMES[(has_to, has_from)]


def _without(subscription: str, side: str) -> str:
    """``subscription`` with ``side`` taken away."""
    has_to = subscription in ("to", "both") and side != "to"
    has_from = subscription in ("from", "both") and side != "from"
    return _SUBSCRIPTION_NAMES[(has_to, has_from)]


def error_reply(stanza: Element, condition: str, kind: str = "cancel") -> Element:
    """``stanza`` bounced to its sender (RFC 6120 8.3): from and to swapped, its payload kept
    (the agents read their own metadata in a bounce), an ``<error>`` added."""
    reply = Element(stanza.tag, {"type": "error"})
    for key in ("id", "xml:lang"):
        if key in stanza.attrib:
            reply.set(key, stanza.attrib[key])
    if stanza.get("to"):
        reply.set("from", stanza.attrib["to"])
    reply.set("to", stanza.get("from", ""))
    if stanza.tag != C + "iq":
        reply.extend(list(stanza))
    error = SubElement(reply, C + "error", {"type": kind})
    SubElement(error, f"{{{STANZAS_NS}}}{condition}")
    return reply


class Router:
    """The server's sessions, presences and rosters, and the routing rules between them."""

    def __init__(self, domain: str, accounts: dict[str, str] | None = None) -> None:
        self.domain = domain
        self.accounts = accounts
        """the server's accounts, when clients may remove their own (an open server): XEP-0077"""
        self.sessions: dict[str, dict[str, ClientStream]] = {}
        """bare JID -> resource -> its stream"""
        self.presence: dict[str, Element] = {}
        """full JID -> its last available broadcast presence (absent: not available)"""
        self.directed: dict[str, set[str]] = {}
        """full JID -> the JIDs it sent directed available presence to"""
        self.rosters: dict[str, dict[str, RosterItem]] = {}
        """bare JID -> contact's bare JID -> item"""
        self._unroutable_warned: set[str] = set()

    # -- sessions -------------------------------------------------------------------------------

    def bind(self, stream: ClientStream) -> None:
        """Add a bound session; one already on that full JID is replaced (``conflict``), as
        ejabberd does."""
        assert stream.bare is not None and stream.resource is not None
        resources = self.sessions.setdefault(stream.bare, {})
        old = resources.get(stream.resource)
        if old is not None:
            self.unbind(old)
            old.end(stream_error("conflict", "replaced by a new session"))
        resources[stream.resource] = stream

    def unbind(self, stream: ClientStream) -> None:
        """A session ended: whoever its presence reached learns it is gone (RFC 6121 4.6.3)."""
        jid, bare = stream.jid, stream.bare
        if jid is None or bare is None:
            return
        resources = self.sessions.get(bare)
        if resources is None or resources.get(stream.resource or "") is not stream:
            return
        del resources[stream.resource or ""]
        if not resources:
            del self.sessions[bare]
        if jid in self.presence or jid in self.directed:
            gone = Element(C + "presence", {"from": jid, "type": "unavailable"})
            self._unavailable(gone)

    def _available(self, bare: str) -> list[ClientStream]:
        """The sessions of ``bare`` that sent available presence."""
        return [s for s in self.sessions.get(bare, {}).values() if s.jid in self.presence]

    def _deliver_to(self, jid: str, stanza: Element) -> bool:
        """To a full JID's session, or a bare JID's available ones; whether any took it."""
        local, domain, resource = split_jid(jid)
        bare = f"{local}@{domain}"
        if resource:
            stream = self.sessions.get(bare, {}).get(resource)
            if stream is None:
                return False
            stream.deliver(stanza)
            return True
        targets = self._available(bare)
        for stream in targets:
            stream.deliver(stanza)
        return bool(targets)

    # -- routing --------------------------------------------------------------------------------

    def route(self, sender: ClientStream, stanza: Element) -> None:
        tag = stanza.tag
        if tag == C + "message":
            self._message(sender, stanza)
        elif tag == C + "presence":
            self._presence(sender, stanza)
        elif tag == C + "iq":
            self._iq(sender, stanza)
        # anything else at the top of a session's stream is not a stanza: ignored

    def _foreign(self, sender: ClientStream, stanza: Element, to: str) -> bool:
        """Whether ``to`` is on another domain (then refused, and said once per address)."""
        _, domain, _ = split_jid(to)
        if domain == self.domain:
            return False
        if to not in self._unroutable_warned:
            self._unroutable_warned.add(to)
            log.warning("dropped a %s to %s: this server only serves @%s", stanza.tag[len(C) :], to, self.domain)
        if stanza.get("type") not in ("error", "result"):
            sender.deliver(error_reply(stanza, "remote-server-not-found"))
        return True

    def _message(self, sender: ClientStream, stanza: Element) -> None:
        to = stanza.get("to") or (sender.bare or "")
        if self._foreign(sender, stanza, to):
            return
        local, domain, resource = split_jid(to)
        kind = stanza.get("type", "normal")
        if not local:
            return  # to the server itself: nothing here reads messages
        stanza.set("to", to)
        if resource and self._deliver_to(to, stanza):
            return
        bare = f"{local}@{domain}"
        available = self._available(bare)
        if kind == "groupchat" or (resource and kind == "error"):
            return
        if available:
            top = max(_priority(self.presence[s.jid or ""]) for s in available)
            if top >= 0:
                for stream in available:
                    if _priority(self.presence[stream.jid or ""]) == top:
                        stream.deliver(stanza)
                return
        if kind in ("normal", "chat"):
            sender.deliver(error_reply(stanza, "service-unavailable"))

    def _iq(self, sender: ClientStream, stanza: Element) -> None:
        kind = stanza.get("type")
        to = stanza.get("to")
        if to is not None and self._foreign(sender, stanza, to):
            return
        if to is None or to.lower() in (self.domain, sender.bare):
            self._server_iq(sender, stanza)
            return
        local, domain, resource = split_jid(to)
        if resource and self._deliver_to(to, stanza):
            return
        if kind in ("get", "set"):
            sender.deliver(error_reply(stanza, "service-unavailable"))

    def _server_iq(self, sender: ClientStream, iq: Element) -> None:
        kind = iq.get("type")
        if kind not in ("get", "set"):
            return  # results and errors for the server (none asked): nothing to do
        payload = iq[0] if len(iq) else None
        namespace = payload.tag[1:].partition("}")[0] if payload is not None and payload.tag[:1] == "{" else ""
        reply = Element(C + "iq", {"type": "result", "id": iq.get("id", ""), "to": sender.jid or ""})
        if iq.get("to"):
            reply.set("from", iq.attrib["to"])
        if namespace == REGISTER_NS and kind == "set" and payload is not None and self.accounts is not None:
            if payload.find(f"{{{REGISTER_NS}}}remove") is None:
                sender.deliver(error_reply(iq, "not-allowed"))
                return
            self.accounts.pop(split_jid(sender.bare or "")[0], None)
            sender.deliver(reply)
            sender.end()  # the account is gone: so is its session (XEP-0077 3.2)
            return
        if namespace == ROSTER_NS:
            if kind == "get":
                reply.append(self._roster_query(sender.bare or ""))
            elif payload is not None and not self._roster_set(sender, payload):
                sender.deliver(error_reply(iq, "bad-request", "modify"))
                return
        elif namespace in (PING_NS, SESSION_NS) or (namespace == DISCO_ITEMS_NS and kind == "get"):
            if namespace == DISCO_ITEMS_NS:
                SubElement(reply, f"{{{DISCO_ITEMS_NS}}}query")
        elif namespace == DISCO_INFO_NS and kind == "get":
            query = SubElement(reply, f"{{{DISCO_INFO_NS}}}query")
            SubElement(query, f"{{{DISCO_INFO_NS}}}identity", {"category": "server", "type": "im", "name": "bdi-rl"})
            features = (DISCO_INFO_NS, DISCO_ITEMS_NS, PING_NS, ROSTER_NS)
            for feature in (*features, REGISTER_NS) if self.accounts is not None else features:
                SubElement(query, f"{{{DISCO_INFO_NS}}}feature", {"var": feature})
        else:
            sender.deliver(error_reply(iq, "service-unavailable"))
            return
        sender.deliver(reply)

    # -- presence -------------------------------------------------------------------------------

    def _presence(self, sender: ClientStream, stanza: Element) -> None:
        kind = stanza.get("type")
        to = stanza.get("to")
        if kind in _SUBSCRIPTION_TYPES:
            if to is not None and not self._foreign(sender, stanza, to):
                self._subscription(sender, stanza, kind, bare_of(to))
            return
        if kind == "probe":
            if to is not None and not self._foreign(sender, stanza, to):
                self._answer_probe(sender.bare or "", bare_of(to))
            return
        if kind not in (None, "unavailable"):
            return  # an error presence (a bounce of ours); nothing to route
        if to is None:
            self._broadcast(sender, stanza)
            return
        if self._foreign(sender, stanza, to):
            return
        jid = sender.jid or ""
        targets = self.directed.setdefault(jid, set())
        if kind is None:
            targets.add(to)
        else:
            targets.discard(to)
        self._deliver_to(to, stanza)

    def _broadcast(self, sender: ClientStream, stanza: Element) -> None:
        """Initial, updated or final presence: to the contacts that see us and our other
        sessions; initial presence also fetches the presence of those we see."""
        jid, bare = sender.jid or "", sender.bare or ""
        if stanza.get("type") == "unavailable":
            self._unavailable(stanza)
            return
        initial = jid not in self.presence
        self.presence[jid] = stanza
        for contact, item in self.rosters.get(bare, {}).items():
            if item.sees_us():
                self._deliver_to(contact, stanza)
        for stream in self.sessions.get(bare, {}).values():
            if stream is not sender:
                stream.deliver(stanza)
        if initial:
            for contact, item in self.rosters.get(bare, {}).items():
                if item.we_see():
                    for stream in self._available(contact):
                        sender.deliver(self.presence[stream.jid or ""])
            for stream in self.sessions.get(bare, {}).values():
                if stream is not sender and stream.jid in self.presence:
                    sender.deliver(self.presence[stream.jid or ""])

    def _unavailable(self, stanza: Element) -> None:
        """A session's presence ends: everyone it reached hears ``unavailable`` once."""
        jid = stanza.get("from", "")
        bare = bare_of(jid)
        was_available = self.presence.pop(jid, None) is not None
        targets = set(self.directed.pop(jid, set()))
        if was_available:
            targets.update(c for c, item in self.rosters.get(bare, {}).items() if item.sees_us())
            targets.update(s.jid or "" for s in self._available(bare))
        for target in targets:
            self._deliver_to(target, stanza)

    def _answer_probe(self, asker: str, contact: str) -> None:
        item = self.rosters.get(contact, {}).get(asker)
        if item is None or not item.sees_us():
            return
        for stream in self._available(contact):
            for target in self._available(asker):
                target.deliver(self.presence[stream.jid or ""])

    # -- rosters and subscriptions --------------------------------------------------------------

    def _roster_item_xml(self, parent: Element, contact: str, item: RosterItem) -> Element:
        attrs = {"jid": contact, "subscription": item.subscription}
        if item.ask:
            attrs["ask"] = "subscribe"
        if item.name:
            attrs["name"] = item.name
        element = SubElement(parent, f"{{{ROSTER_NS}}}item", attrs)
        for group in item.groups:
            SubElement(element, f"{{{ROSTER_NS}}}group").text = group
        return element

    def _roster_query(self, bare: str) -> Element:
        query = Element(f"{{{ROSTER_NS}}}query")
        for contact, item in self.rosters.get(bare, {}).items():
            self._roster_item_xml(query, contact, item)
        return query

    def _push(self, bare: str, contact: str) -> None:
        """A roster push (RFC 6121 2.1.6) of one item to every session of ``bare``."""
        item = self.rosters.get(bare, {}).get(contact) or RosterItem(subscription="remove")
        for stream in self.sessions.get(bare, {}).values():
            iq = Element(C + "iq", {"type": "set", "id": f"push-{id(item):x}", "to": stream.jid or ""})
            query = SubElement(iq, f"{{{ROSTER_NS}}}query")
            self._roster_item_xml(query, contact, item)
            stream.deliver(iq)

    def _roster_set(self, sender: ClientStream, query: Element) -> bool:
        items = query.findall(f"{{{ROSTER_NS}}}item")
        if len(items) != 1 or not items[0].get("jid"):
            return False
        bare, contact = sender.bare or "", bare_of(items[0].attrib["jid"])
        roster = self.rosters.setdefault(bare, {})
        if items[0].get("subscription") == "remove":
            item = roster.pop(contact, None)
            if item is not None:
                if item.we_see() or item.ask:
                    self._subscription(sender, Element(C + "presence"), "unsubscribe", contact)
                if item.sees_us():
                    self._subscription(sender, Element(C + "presence"), "unsubscribed", contact)
            self._push(bare, contact)
            return True
        item = roster.setdefault(contact, RosterItem())
        item.name = items[0].get("name")
        item.groups = [g.text or "" for g in items[0].findall(f"{{{ROSTER_NS}}}group")]
        self._push(bare, contact)
        return True

    def _subscription(self, sender: ClientStream, stanza: Element, kind: str, contact: str) -> None:
        """RFC 6121 3: both rosters updated, the contact told (from our bare JID)."""
        user = sender.bare or ""
        if split_jid(contact)[1] != self.domain or not split_jid(contact)[0]:
            return
        ours = self.rosters.setdefault(user, {})
        theirs = self.rosters.setdefault(contact, {})
        mine = ours.setdefault(contact, RosterItem())
        other = theirs.setdefault(user, RosterItem())
        if kind == "subscribe":
            if other.sees_us() is False and mine.we_see() is False:
                mine.ask = True
            if other.sees_us():  # already approved: answer for the contact (RFC 6121 3.1.3)
                mine.ask = False
                mine.subscription = _with(mine.subscription, "to")
                self._push(user, contact)
                sender.deliver(Element(C + "presence", {"type": "subscribed", "from": contact}))
                return
        elif kind == "subscribed":
            other.subscription = _with(other.subscription, "to")
            other.ask = False
            mine.subscription = _with(mine.subscription, "from")
            self._push(contact, user)
        elif kind == "unsubscribe":
            mine.subscription = _without(mine.subscription, "to")
            mine.ask = False
            other.subscription = _without(other.subscription, "from")
            self._push(contact, user)
        else:  # unsubscribed
            mine.subscription = _without(mine.subscription, "from")
            other.subscription = _without(other.subscription, "to")
            other.ask = False
            self._push(contact, user)
        self._push(user, contact)
        told = Element(C + "presence", {"type": kind, "from": user, "to": contact})
        for stream in self._available(contact):
            stream.deliver(told)
        if kind == "subscribed":  # the new subscriber sees us from now on
            for stream in self._available(user):
                for target in self._available(contact):
                    target.deliver(self.presence[stream.jid or ""])


def _priority(presence: Element) -> int:
    try:
        return int(presence.findtext(C + "priority") or 0)
    except ValueError:
        return 0
