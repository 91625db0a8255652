"""JIDs as the agents compare them: one helper every part of an agent shares, in a module of
its own so that none of those parts imports another for it."""

from __future__ import annotations

from typing import Any


def bare_jid(jid: Any) -> str:
    """Servers report senders as full JIDs (an old one as bare ones): compare bare JIDs."""
    return str(jid).split("/", 1)[0].lower()
