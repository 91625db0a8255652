"""Behaviours that sleep on their mailbox and are woken when their agent has work for them.

Idle agents then cost nothing between messages: polling every 0.2-1 s kept 100 idle agents
at ~5.6 % of a core (BENCHMARKS.md)."""

from __future__ import annotations

import asyncio
from typing import Any

from spade.behaviour import CyclicBehaviour

#: Put in a behaviour's mailbox to end its wait early (see :class:`Wakeable`).
WAKE: Any = object()


class Wakeable(CyclicBehaviour):  # type: ignore[misc]  # spade ships no type hints: its classes are Any
    """A behaviour that sleeps on its mailbox for long spans and is woken when its owner has
    work for it (or kills it)."""

    def wake(self) -> None:
        self.queue.put_nowait(WAKE)

    async def receive(self, timeout: float | None = None) -> Any:
        """SPADE's ``receive``: the next message, or None once ``timeout`` seconds pass (None
        at once when it is 0 or None). SPADE waits through ``asyncio.wait_for``, a task per
        wait; a mind waiting on its world waits twice an episode, so here the behaviour's
        own task waits on the mailbox under ``asyncio.timeout``."""
        queue = self.queue
        if not queue.empty():
            return queue.get_nowait()
        if not timeout:
            return None
        try:
            async with asyncio.timeout(timeout):
                return await queue.get()
        except TimeoutError:
            return None

    def kill(self, exit_code: Any = None) -> None:
        super().kill(exit_code)
        self.wake()
