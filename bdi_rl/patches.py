"""Every change bdi-rl makes to a library's internals, in one place, applied at start-up.

bdi-rl reaches into internals no library promises to keep. Each entry of :data:`PATCHES` says
which distribution, the version the code was written for (pinned in ``pyproject.toml``), the
modules that hold the code, and what it changes. :func:`apply_all` checks the installed
versions (one warning per library that differs, naming the modules to re-check) and applies
the patches; the commands that run agents call it first (``bdi_rl.cli``), as do the tests and
benchmarks that run agents without the CLI. Nothing is patched on import: an agent
built before :func:`apply_all` refuses to start (:func:`require`). The AgentSpeak
runtime is bdi-rl's own (:mod:`bdi_rl.bdi.runtime`): nothing of it is patched.

``tests/test_patches.py`` fails, naming what to re-check, when the installed set differs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from bdi_rl.xmpp import patches as xmpp_patches

log = logging.getLogger("bdi_rl.patches")


@dataclass(frozen=True)
class Patch:
    distribution: str
    written_for: str
    modules: tuple[str, ...]
    """the modules that depend on its internals (what to re-check for another release)"""
    what: str
    apply: Callable[[], None] | None = None
    """None: nothing to apply process-wide (subclasses, or settings made per use)"""


PATCHES: tuple[Patch, ...] = (
    Patch(
        "spade",
        "4.1.4",
        ("bdi_rl.xmpp.patches", "bdi_rl.xmpp.agent", "bdi_rl.xmpp.wakeable", "bdi_rl.xmpp.spadeimport"),
        "a reconnecting XMPP client with one shared TLS context, agents that stop without "
        "reconnecting, SPADE's log records clipped, a message put straight into the mailboxes it "
        "matches (xmpp.patches); an agent's client handlers and filter added before it connects "
        "(xmpp.agent: Agent._async_connect); a waking behaviour's receive without a task per wait "
        "(xmpp.wakeable); SPADE imported without its "
        "server, web pages and file upload (xmpp.spadeimport)",
        xmpp_patches.apply,
    ),
    Patch(
        "slixmpp-multiplatform",
        "1.12.0",
        ("bdi_rl.xmpp.patches", "bdi_rl.xmpp.spadeimport"),
        "XML escaping with str.replace, the reconnect loop's pause capped (xmpp.patches); "
        "XEP-0363 neither imported nor registered (xmpp.spadeimport)",
    ),
    Patch(
        "aiohttp",
        "3.14.5",
        ("bdi_rl.readers.webserver",),
        "the viewer's connections answer what aiohttp refuses itself (a request line over 8 KB, a "
        "malformed request) with the security headers and one line, and log no traceback for it "
        "(readers.webserver: a RequestHandler subclass, made by the app's server per use)",
    ),
)

#: distribution -> its patch
BY_DISTRIBUTION = {patch.distribution: patch for patch in PATCHES}

_applied = False
_warned: set[str] = set()


def installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def mismatch(distribution: str) -> str | None:
    """One line saying how the installed ``distribution`` differs from what bdi-rl's patches
    were written for, or None when it is that version."""
    patch = BY_DISTRIBUTION[distribution]
    have = installed(distribution)
    if have == patch.written_for:
        return None
    return (
        f"{distribution} {have or '(not installed)'} is installed, but {', '.join(patch.modules)} "
        f"patch its internals as of {patch.written_for}: re-check them against the new release"
    )


def check_versions() -> None:
    """Log, once per distribution, each that is not the version its patches were written for."""
    for patch in PATCHES:
        problem = mismatch(patch.distribution)
        if problem is not None and patch.distribution not in _warned:
            _warned.add(patch.distribution)
            log.warning("%s", problem)


def apply_all() -> None:
    """Check the versions and apply every patch, once per process."""
    global _applied
    if _applied:
        return
    check_versions()
    for patch in PATCHES:
        if patch.apply is not None:
            patch.apply()
    _applied = True
