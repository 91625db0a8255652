"""How the viewer's HTTP server answers (``bdi-rl view``, ``run --view``, ``telemetry --view``
and ``bdi-rl serve``, whose app is the viewer's): only to its own host names, and every
answer, aiohttp's own included, with the security headers and a body of one line.

**Its own names only.** DNS rebinding: a web page whose owner points its name at 127.0.0.1
once it has loaded reaches this server from the user's browser as its own origin, and could
read every run, trace and job. The browser still sends the page's name as ``Host``, so a
request naming another host gets 421 Misdirected Request (:class:`HostCheck`). Allowed: IP
literals (a page served under an address cannot be rebound), ``localhost``, the name the
server is bound to, for a bind that is not loopback (``0.0.0.0``, ``::``, a LAN address: a
container's published port, another machine) the machine's own names, and the names given
with ``--allow-host`` (a reverse proxy's). The port in ``Host`` is not checked: a forwarded
port (``ssh -L 9000:localhost:8765``) reaches the same server.

**Every answer carries the headers.** Handlers' answers get them as they are prepared (the
live stream too, whose headers go before any middleware would see it). aiohttp answers some
requests itself, before any route or middleware: a request line or header over 8 KB, too many
headers, a malformed request, TLS on the HTTP port, and an exception that escaped a handler.
:func:`start_app` serves through a request handler whose answers to those carry the headers
too, with one line saying what was wrong (never the request echoed), logged as one line at
debug level for a client's error; a server error (5xx) is a bug and its traceback is logged.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, BadStatusLine, InvalidHeader, InvalidURLError, LineTooLong
from aiohttp.typedefs import Handler

log = logging.getLogger("bdi_rl.readers.webserver")

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

WILDCARD = frozenset({"0.0.0.0", "::", ""})
LOOPBACK_NAMES = frozenset({"localhost"})
#: Host names refused are logged once each, up to this many (a rebinding page retries).
MAX_LOGGED_REFUSALS = 20


@dataclass(frozen=True)
class HostCheck:
    """The host names this server answers to, besides IP literals (:func:`host_check`)."""

    names: frozenset[str]

    def allows(self, values: list[str]) -> bool:
        """Whether a request with these ``Host`` header values is for this server: none (no
        browser leaves it out), or one naming an IP literal or one of :attr:`names`."""
        if not values:
            return True
        if len(values) > 1:
            return False
        name = host_name(values[0])
        return name is not None and (name in self.names or _is_ip(name))


def host_check(bind: str, allow: Iterable[str] = ()) -> HostCheck:
    """The names a server bound to ``bind`` answers to: ``localhost``, ``bind`` if it is a
    name, the machine's own names unless ``bind`` is loopback, and ``allow``."""
    names = set(LOOPBACK_NAMES) | {name.strip().lower() for name in allow if name.strip()}
    bound = bind.strip().lower().strip("[]")
    if bound not in WILDCARD and not _is_ip(bound):
        names.add(bound)
    if not _is_loopback(bound):
        names |= machine_names()
    return HostCheck(frozenset(names))


def machine_names() -> set[str]:
    """This machine's host name and fully qualified name, lower case."""
    return {name.lower() for name in (socket.gethostname(), socket.getfqdn()) if name}


def host_name(value: str) -> str | None:
    """The host of a ``Host`` header value, lower case and without its port or an IPv6
    literal's brackets; None if it is not one (an IPv6 literal without brackets, a port that
    is not a number)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = value[1:end], value[end + 1 :]
        if end < 0 or not _is_ip(name) or (rest and not (rest[:1] == ":" and rest[1:].isdigit())):
            return None
        return name
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return None
    return name


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(bind: str) -> bool:
    if bind in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return False


HOSTS = web.AppKey("hosts", HostCheck)
_REFUSED = web.AppKey("refused_hosts", set)


def harden(app: web.Application, hosts: HostCheck) -> None:
    """Make ``app`` answer only to ``hosts`` and put the security headers on its answers."""
    app[HOSTS] = hosts
    app[_REFUSED] = set()
    app.middlewares.insert(0, _only_own_hosts)  # outermost: nothing runs for another host
    app.on_response_prepare.append(_add_security_headers)


def plain_answer(status: int, text: str) -> web.Response:
    """A one-line text answer with the security headers (aiohttp's own are neither)."""
    return web.Response(status=status, text=text + "\n", content_type="text/plain", headers=SECURITY_HEADERS)


@web.middleware
async def _only_own_hosts(request: web.Request, handler: Handler) -> web.StreamResponse:
    values = request.headers.getall("Host", [])
    if request.app[HOSTS].allows(values):
        return await handler(request)
    refused = request.app[_REFUSED]
    shown = values[0][:100] if values else ""
    if shown not in refused and len(refused) < MAX_LOGGED_REFUSALS:
        refused.add(shown)
        log.warning(
            "viewer: refused a request for host %r (not one of this server's names: a DNS rebinding "
            "page, or a name to allow with --allow-host)",
            shown,
        )
    return plain_answer(
        HTTPStatus.MISDIRECTED_REQUEST,
        "421 Misdirected Request: this server answers only to its own host names (--allow-host NAME adds one)",
    )


async def _add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)


# -- aiohttp's own answers ------------------------------------------------------------------
#: What a refused request did wrong, by the exception aiohttp's parser raised (most specific
#: first); never the request's own bytes, which the parser's messages quote.
_CLIENT_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    (LineTooLong, "a request line or header field over 8 KB"),
    (BadHttpMethod, "not an HTTP request"),
    (BadStatusLine, "a malformed request line"),
    (InvalidHeader, "a malformed header"),
    (InvalidURLError, "a malformed URL"),
)


def _what_was_wrong(exc: BaseException | None, status: int) -> str:
    try:
        phrase = f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        phrase = str(status)
    if status >= 500:
        return phrase
    for kind, what in _CLIENT_ERRORS:
        if isinstance(exc, kind):
            return f"{phrase}: {what}"
    return f"{phrase}: a malformed request"


class _RequestHandler(web.RequestHandler):
    """aiohttp's connection handler, answering the requests it refuses itself as the viewer
    answers (aiohttp 3.14: ``handle_error`` builds those answers; ``bdi_rl.patches``)."""

    __slots__ = ()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, ConnectionError):  # the client went away: no one to answer, nothing wrong here
            log.debug("viewer: the client of %s %s went away", request.method, request.rel_url.path[:200])
            raise ConnectionError("the client went away") from exc  # aiohttp closes the connection
        text = _what_was_wrong(exc, status)
        if status == HTTPStatus.INTERNAL_SERVER_ERROR:  # a bug: its traceback belongs in the log
            log.error("viewer: %s %s failed", request.method, request.rel_url.path[:200], exc_info=exc)
        elif status >= 500:
            log.warning("viewer: %s %s: %s", request.method, request.rel_url.path[:200], text)
        else:
            log.debug("viewer: refused a request from %s: %s", request.remote, text)
        if request.writer.output_size > 0:  # an answer under way cannot be replaced: aiohttp closes it
            raise ConnectionError(f"{text}, with an answer under way")
        response = plain_answer(status, text)
        response.force_close()
        return response


class _Server(web.Server):
    """aiohttp's server, whose connections are :class:`_RequestHandler`\\ s."""

    def __call__(self) -> web.RequestHandler:
        return _RequestHandler(self, loop=self._loop, **self._kwargs)


class _AppRunner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server  # the same server, built by the app as usual
        return server


async def start_app(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve ``app`` on the running event loop; OSError (nothing left open) if the address
    cannot be bound."""
    runner = _AppRunner(app, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError:
        await runner.cleanup()
        raise
    return runner


def url_of(host: str, port: int) -> str:
    """The URL a user opens for a server bound to ``host`` (a wildcard bind: 127.0.0.1)."""
    shown = "127.0.0.1" if host in WILDCARD else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"
