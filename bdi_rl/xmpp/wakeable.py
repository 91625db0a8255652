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

    #: Longest sleep of :meth:`sleep_on_mailbox`: a net under the wakes its owner sends.
    NET_SECONDS = 30.0
    _net: asyncio.TimerHandle | None = None

    def wake(self) -> None:
        self.queue.put_nowait(WAKE)

    async def sleep_on_mailbox(self) -> Any:
        """The next message, or :data:`WAKE`: a wait with no deadline of its own (its owner
        wakes it when there is work). One timer, armed when a wait finds none and re-armed
        only after it fires, wakes it at most :attr:`NET_SECONDS` later, in case a wake went
        amiss; a timer per wait (``receive``'s) cost a climbing run ~2 % of its CPU, as a mind
        on a shared world waits about once an episode. A wake of the net may end a later
        wait early: the owner takes it as a wake."""
        queue = self.queue
        if not queue.empty():
            return queue.get_nowait()
        if self._net is None:
            self._net = asyncio.get_running_loop().call_later(self.NET_SECONDS, self._net_passed)
        return await queue.get()

    def _net_passed(self) -> None:
        self._net = None
        self.wake()

    def _cut_net(self) -> None:
        if self._net is not None:
            self._net.cancel()
            self._net = None

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
        self._cut_net()  # a stopped agent leaves no timer holding it
        self.wake()

    async def on_end(self) -> None:
        self._cut_net()
