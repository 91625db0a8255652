"""What the command line needs of SPADE, so that only the agent layer imports it."""

from __future__ import annotations

import asyncio

from spade.container import Container


def event_loop() -> asyncio.AbstractEventLoop:
    """SPADE's process-wide event loop: every agent of this process runs on it."""
    loop: asyncio.AbstractEventLoop = Container().loop
    return loop
