"""The calls between a shared world and the agents at its seats, each side blind to how the
other is reached (directly in ``bdi-rl run``; across processes ``bdi_rl.xmpp.worldlink`` carries
them over XMPP): what the world tells a seat (:class:`SeatEnd`), what an agent asks of its world
(:class:`WorldPort`), and the three barriers by the call each waits for.
"""

from __future__ import annotations

from typing import Protocol

from bdi_rl.rl.qlearning import EvalResult

__all__ = ["ACT", "EVAL", "RESET", "SeatEnd", "WorldPort"]

#: The barriers, by the call each waits for.
RESET, ACT, EVAL = ".rl_reset", ".rl_act", ".rl_evaluate"


class SeatEnd(Protocol):
    """What the world tells an agent at its seat."""

    def begun(self, obs: int) -> None:
        """An episode began: the agent's first observation."""

    def stepped(
        self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool, ahead: bool = False
    ) -> None:
        """The world stepped: the agent's action (the default one if ``defaulted``), its
        next observation and reward, and whether its episode ended; ``ahead``: it ended, and
        the world took the agent's next ``.rl_reset`` with its choice (``WorldPort.choose``),
        so the next episode's ``begun`` comes without one (passed only when True)."""

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        """Greedy joint episodes ended: the agent's result."""

    def refused(self, why: str) -> None:
        """The world finished this agent's seat (``why``) and answers none of its calls."""


class WorldPort(Protocol):
    """What an agent asks of its world (by its seat's name)."""

    def ask_reset(self, seat: str, policy: list[int] | None = None) -> None:
        """A new episode, please (``policy``: my greedy policy, for an evaluation first)."""

    def choose(self, seat: str, action: int, then_reset: bool = False) -> None:
        """My action for the coming step; ``then_reset``: should this step end my episode,
        take it as my ``.rl_reset`` too (no policy with it), so that the next episode can
        begin without a round trip (a port across processes is asked so: ``pipelined``)."""

    def ask_evaluation(self, seat: str, policy: list[int]) -> None:
        """Evaluate our greedy policies (mine is ``policy``)."""

    def finish(self, seat: str, why: str | None = None) -> None:
        """I am done (``why``: I failed before training ended): stop waiting for me."""
