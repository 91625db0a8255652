"""The library versions bdi-rl's patches and overrides were written for, in one place.

bdi-rl reaches into internals no library promises to keep: python-agentspeak's plan compiler
and runtime (:mod:`bdi_rl.bdi.fused`, :mod:`bdi_rl.bdi.mind`), its lexer and how it resolves
includes (:mod:`bdi_rl.bdi.includes`), SPADE's client and agent and spade_bdi's behaviour
(:mod:`bdi_rl.xmpp.patches`, :mod:`bdi_rl.xmpp.agent`), slixmpp's XML escaping and connection
loop (:mod:`bdi_rl.xmpp.patches`) and pyjabber's globals (:mod:`bdi_rl.xmpp.server`).
``pyproject.toml`` pins these versions; each patch checks them when it is applied and logs
once if another is installed, and ``tests/test_versions.py`` fails, naming what to re-check,
when the installed set differs.
"""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version

log = logging.getLogger("bdi_rl.versions")

#: distribution -> (the version the code was written for, the modules that depend on its internals)
WRITTEN_FOR: dict[str, tuple[str, tuple[str, ...]]] = {
    "agentspeak": ("0.2.2", ("bdi_rl.bdi.fused", "bdi_rl.bdi.mind", "bdi_rl.bdi.includes")),
    "spade": ("4.1.4", ("bdi_rl.xmpp.patches", "bdi_rl.xmpp.agent")),
    "spade-bdi": ("0.3.3", ("bdi_rl.xmpp.agent",)),
    "slixmpp-multiplatform": ("1.12.0", ("bdi_rl.xmpp.patches",)),
    "pyjabber": ("0.4.5", ("bdi_rl.xmpp.server",)),
}

_warned: set[str] = set()


def installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def mismatch(distribution: str) -> str | None:
    """One line saying how the installed ``distribution`` differs from what bdi-rl's patches
    were written for, or None when it is that version."""
    wanted, modules = WRITTEN_FOR[distribution]
    have = installed(distribution)
    if have == wanted:
        return None
    return (f"{distribution} {have or '(not installed)'} is installed, but {', '.join(modules)} "
            f"patch its internals as of {wanted}: re-check them against the new release")


def check(*distributions: str) -> None:
    """Log, once per distribution, each that is not the version its patches were written for
    (called where the patches are applied)."""
    for distribution in distributions:
        problem = mismatch(distribution)
        if problem is not None and distribution not in _warned:
            _warned.add(distribution)
            log.warning("%s", problem)
