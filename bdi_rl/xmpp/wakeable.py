"""Behaviours that sleep on their mailbox and are woken when their agent has work for them.

Idle agents then cost nothing between messages: polling every 0.2-1 s kept 100 idle agents
at ~5.6 % of a core (BENCHMARKS.md)."""

from __future__ import annotations

from typing import Any

from spade.behaviour import CyclicBehaviour

#: Put in a behaviour's mailbox to end its wait early (see :class:`Wakeable`).
WAKE: Any = object()


class Wakeable(CyclicBehaviour):  # type: ignore[misc]  # spade ships no type hints: its classes are Any
    """A behaviour that sleeps on its mailbox for long spans and is woken when its owner has
    work for it (or kills it)."""

    def wake(self) -> None:
        self.queue.put_nowait(WAKE)

    def kill(self, exit_code: Any = None) -> None:
        super().kill(exit_code)
        self.wake()
