"""SPADE imported without what bdi-rl never runs of it: ~0.5 s of every process's start.

SPADE 4.1.4 imports, unconditionally, its own XMPP server (``spade.container`` →
``pyjabber``: sqlalchemy and alembic, ~350 ms), its per-agent web pages (``spade.web`` →
aiohttp's server, jinja2) and the HTTP client of file upload (``spade.behaviour`` →
``slixmpp.plugins.xep_0363`` → ``aiohttp``, ~120 ms), all measured with ``python -X
importtime``. bdi-rl runs its own embedded server (:mod:`bdi_rl.xmpp.server`), builds no web
app per agent and uploads no file. So while :func:`import_spade` imports SPADE, stand-ins take
those modules' places: SPADE's references to them load the real thing if ever called (or
used, for ``aiohttp`` and ``loguru``, which SPADE imports whole), and the stand-ins leave
``sys.modules`` afterwards, so any later ``import`` of them is the real module.

slixmpp also imports two optional libraries when they are installed, for what bdi-rl's
clients never do, ~50-60 ms of every process's start together (measured, interleaved): pygments
(``xmlstream.tostring``: colours the XML of its debug log lines) and aiodns with pycares
(``xmlstream.resolver``: SRV and A lookups; SPADE's client connects to a host and port given,
which slixmpp hands to the event loop's ``create_connection`` without a lookup of its own).
They are kept out while SPADE is imported, so slixmpp takes its fallbacks for good (plain
debug lines, the standard library's resolver); a later ``import`` of them, by aiohttp or rich,
finds the real module.

The agents' client does not register XEP-0363 (``patches.SharedTlsXmppClient``), which would
import aiohttp's client again. Written for spade 4.1.4 and slixmpp-multiplatform 1.12.0
(checked by :mod:`bdi_rl.patches`); ``tests/test_startup.py`` holds what is kept out.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

#: modules SPADE imports that bdi-rl never uses, each with the names SPADE takes from it
_STAND_INS: dict[str, tuple[str, ...]] = {
    "pyjabber": (),
    "pyjabber.server": ("Server",),
    "pyjabber.server_parameters": ("Parameters",),
    "spade.web": ("WebApp",),
    "slixmpp.plugins.xep_0363": (),
    "slixmpp.plugins.xep_0363.http_upload": ("UploadServiceNotFound", "FileTooBig", "HTTPError"),
}
#: modules SPADE imports whole (``import x``) and uses only on paths bdi-rl never takes
_FORWARDED = ("aiohttp", "loguru")
#: optional libraries slixmpp uses if it finds them, for what bdi-rl's clients never do
_KEPT_OUT = ("pygments", "aiodns")


def _deferred(module: str, name: str) -> Any:
    """A stand-in for ``module.name``: calling it (or raising it) imports the real one."""
    if name in ("UploadServiceNotFound", "FileTooBig", "HTTPError"):
        # Exceptions SPADE's file-upload behaviours catch; only the XEP-0363 plugin raises
        # them, and bdi-rl's clients do not load it.
        return type(name, (Exception,), {"__module__": module})

    class Deferred:
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            real = getattr(importlib.import_module(module), name)
            return real(*args, **kwargs)

    Deferred.__name__ = Deferred.__qualname__ = name
    Deferred.__module__ = module
    return Deferred


class _Forwarding(ModuleType):
    """A stand-in module whose attributes are the real module's, imported on first use."""

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attribute)


def import_spade() -> None:
    """Import SPADE (once) with the stand-ins above in place, then take them away."""
    if "spade.agent" in sys.modules:
        return
    placed: list[str] = []
    for name in _KEPT_OUT:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]  # ``import name`` raises ImportError
            placed.append(name)
    for name in _FORWARDED:
        if name not in sys.modules:
            sys.modules[name] = _Forwarding(name, "bdi_rl.xmpp.spadeimport: imported on first use")
            placed.append(name)
    for name, attributes in _STAND_INS.items():
        if name in sys.modules:
            continue
        stand_in = ModuleType(name, "bdi_rl.xmpp.spadeimport: not imported")
        stand_in.__path__ = []  # a package, so its stand-in submodules can be found under it
        for attribute in attributes:
            setattr(stand_in, attribute, _deferred(name, attribute))
        sys.modules[name] = stand_in
        placed.append(name)
    try:
        import spade.agent  # noqa: F401
    finally:
        for name in reversed(placed):
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            parent_module = sys.modules.get(parent)
            if parent_module is not None and getattr(parent_module, child, None) is not None:
                delattr(parent_module, child)
