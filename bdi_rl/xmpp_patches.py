"""Two measured fixes to SPADE 4.1 / slixmpp 1.12 internals, applied on import by
:mod:`bdi_rl.agent` (the package's only door to SPADE). Each keeps the library's behaviour
and removes a cost the profiles in BENCHMARKS.md pinned on it.

- **Message bodies are escaped in C.** slixmpp escapes XML text with a Python generator over
  every character: 43 % of a trace sender's CPU, ~27 µs per trace event. Same output here with
  ``str.replace``.
- **Agents that do not verify the server share one TLS context.** slixmpp builds a default
  context per client and loads the system CA store into it twice (~57 ms of CPU), which SPADE
  then switches off (``verify_security=False``): half the CPU of starting 100 agents.
"""

from __future__ import annotations

import logging
import ssl
import sys
from functools import cache

import spade.agent
from slixmpp import ClientXMPP
from spade.xmpp_client import XMPPClient

_tostring = sys.modules["slixmpp.xmlstream.tostring"]
_slixmpp_escape = _tostring.escape


def escape_xml(text: str, use_cdata: bool = False) -> str:
    """slixmpp's ``escape``, with the same output."""
    if use_cdata:
        return _slixmpp_escape(text, use_cdata)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("'", "&apos;").replace('"', "&quot;"))


@cache
def unverified_tls_context() -> ssl.SSLContext:
    """The context SPADE ends up with for ``verify_security=False``, made once."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class SharedTlsXmppClient(XMPPClient):
    """SPADE's client; without server verification it uses :func:`unverified_tls_context`.

    ``XMPPClient.__init__`` calls ``ClientXMPP.__init__`` without a context, so its body is
    repeated here with one (SPADE is pinned to 4.1.x)."""

    def __init__(self, jid: str, password: str, verify_security: bool, auto_register: bool) -> None:
        if verify_security:
            super().__init__(jid, password, verify_security, auto_register)
            return
        ClientXMPP.__init__(self, jid, password, ssl_context=unverified_tls_context())
        self.logger = logging.getLogger("spade.Agent")
        self.enable_direct_tls = False
        self.add_event_handler("session_start", self.session_start)
        self.register_plugin("xep_0199")  # XMPP ping and keepalive
        if auto_register:
            self.add_event_handler("register", self.register)
            self.register_plugin("xep_0077")  # in-band registration
        self["xep_0199"].enable_keepalive(interval=55)
        self.register_plugin("xep_0363")  # HTTP file upload, as SPADE's client has it


def apply() -> None:
    _tostring.escape = escape_xml
    spade.agent.XMPPClient = SharedTlsXmppClient
