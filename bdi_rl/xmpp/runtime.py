"""What the command line needs of SPADE, so that only the agent layer imports it."""

from __future__ import annotations

import asyncio

from spade.agent import AuthenticationFailure
from spade.container import Container

#: The XMPP server refused an agent's login (a wrong password for an existing account, or no
#: in-band registration).
LoginRefused = AuthenticationFailure


def event_loop() -> asyncio.AbstractEventLoop:
    """SPADE's process-wide event loop: every agent of this process runs on it."""
    return Container().loop
