"""Whether a process's agents can still get anywhere: the stall watch.

The agents of a process are **stalled** when none of them can act by itself (no intention to
run, no event, no message in its mind or its mailbox, no timed wait or ask timeout to fall
due, no shared-world deadline to pass: ``TracedBdiAgent.can_act``) and nothing of theirs has
changed (reasoning cycles, trace events, joint steps) for a while: then nothing will ever
happen unless something from outside the process speaks. Each agent can say what it waits
for (``TracedBdiAgent.waits``: "no intention left, .rl_finish never called", "waits for an
answer to askOne from bob@localhost", "waits for player-2's .rl_reset").

What a stall means depends on what the process can see:

- ``bdi-rl run`` holds every agent of the experiment, so a stall is final: the run ends as a
  failure within :data:`STALL_SECONDS` (``waiting._wait_for_learners``), unless the spec lets
  outside clients in (``[xmpp] trust``), who may still speak: then it warns, as below.
- An agent process (``bdi-rl agent``) sees only its own agents; a message from another
  process (a coordinator's ``achieve``, a teammate's answer) may still wake them, so it
  never fails for it: it logs a warning naming each agent and what it waits for after
  :data:`IDLE_WARNING_FIRST` seconds, and again each time the stillness has lasted twice as
  long (at most :data:`IDLE_WARNING_LONGEST` seconds after the last warning) while nothing
  changes.

The quiet period guards against false alarms: a message between two agents of the process
is a task on the event loop for a moment, and a reasoning cycle that runs a whole episode
blocks the loop (the watch cannot look meanwhile) but counts as a change afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["IDLE_WARNING_FIRST", "IDLE_WARNING_LONGEST", "STALL_SECONDS", "Stall", "StallWatch", "stall_line"]

#: Seconds of stillness after which the agents of ``bdi-rl run`` are stalled.
STALL_SECONDS = 2.0
#: Seconds of stillness before an agent process first warns that its agents are idle.
IDLE_WARNING_FIRST = 30.0
#: Longest pause between two such warnings.
IDLE_WARNING_LONGEST = 600.0
#: The start of a stalled agent's failure (its ``agent.stop`` reason, its summary entry).
STALLED = "stalled: "


@dataclass
class Stall:
    """Agents that cannot act, by name, with what each waits for."""

    waits: dict[str, str]
    seconds: float
    """how long nothing has changed"""

    def text(self) -> str:
        return "; ".join(f"{name}: {what}" for name, what in self.waits.items())


class StallWatch:
    """Looks at a process's agents at each :meth:`check` (called every ~0.1 s) and reports a
    :class:`Stall` once none has been able to act, with nothing changing, for ``quiet_s``
    seconds. :meth:`snooze` doubles the wait before the next report (at most ``longest_s``);
    any change starts over."""

    def __init__(
        self,
        agents: list[Any],
        quiet_s: float = STALL_SECONDS,
        longest_s: float = IDLE_WARNING_LONGEST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agents = agents
        self.first_s = self.quiet_s = quiet_s
        self.longest_s = longest_s
        self.clock = clock
        self._mark: tuple[Any, ...] | None = None
        self._since = 0.0

    def check(self) -> Stall | None:
        waiting = [agent for agent in self.agents if not agent.done.is_set()]
        if not waiting or any(agent.can_act() for agent in self.agents):
            self._start_over()
            return None
        mark = tuple(agent.progress_mark() for agent in self.agents)
        now = self.clock()
        if mark != self._mark:
            self._mark, self._since = mark, now
            self.quiet_s = self.first_s
            return None
        if now - self._since < self.quiet_s:
            return None
        return Stall({agent.name: agent.waits() for agent in waiting}, now - self._since)

    def snooze(self) -> float:
        """Report the same stall again only once it has lasted twice as long, or
        ``longest_s`` longer if that comes sooner; returns how long it will have lasted then.
        (Capping the stall's length itself at ``longest_s`` reported it at every check from
        then on: a warning every 0.1 s and a busy process, after 10 minutes idle.)"""
        self.quiet_s = min(self.quiet_s * 2, self.quiet_s + self.longest_s)
        return self.quiet_s

    def _start_over(self) -> None:
        self._mark = None
        self.quiet_s = self.first_s


def stall_line(failures: dict[str, str]) -> str | None:
    """The one line that says a run stalled, from its failures by JID (None: it did not)."""
    stalled = {jid.split("@", 1)[0]: why[len(STALLED) :] for jid, why in failures.items() if why.startswith(STALLED)}
    if not stalled:
        return None
    return "the run stalled, nothing can happen any more: " + "; ".join(
        f"{name}: {what}" for name, what in stalled.items()
    )
