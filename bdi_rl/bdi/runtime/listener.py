"""What a host may observe of a mind (tracing): subclass and override what you need.

Set with :meth:`Agent.set_listener <bdi_rl.bdi.runtime.agent.Agent.set_listener>`, the one
place that decides: without a listener the hot paths call no hook and test no flag.
"""

from __future__ import annotations

from typing import Any

from bdi_rl.bdi.runtime.terms import term_str


class Listener:
    def belief_added(self, agent: Any, belief: Any, source: Any) -> None:
        """``belief`` (a Struct with the annotations just added) entered the belief base."""

    def belief_removed(self, agent: Any, belief: Any, source: Any) -> None:
        """``belief`` (with the annotations removed) left the belief base."""

    def goal_added(self, agent: Any, goal: Any, new_intention: bool) -> None:
        """``!goal`` (``new_intention``: ``!!goal`` or an achieve message) was posted."""

    def trigger_text(self, op: str, event: Any) -> str:
        """How ``trigger`` reaches :meth:`intention_started`: ``op`` (``+!``, ``-`` ...) and
        the event's term (a Struct); Jason's text (annotations included) unless overridden."""
        return op + term_str(event)

    def intention_started(self, agent: Any, plan: str, trigger: str, source: Any) -> None:
        """A plan (``plan``: its label) was selected for ``trigger`` and pushed."""

    def intention_ended(self, agent: Any, plan: str) -> None:
        """The plan's frame left the intention: its body finished, or a failure plan that
        handled the plan's goal finished (each frame it unwound is reported, innermost first)."""

    def intention_failed(self, agent: Any, report: dict) -> None:
        """An intention was dropped: no failure plan handled its failure (``report`` holds
        plan, trigger, error, message, file, line, and ``frames``: the plans of the
        intention's frames, innermost first)."""

    def action_executed(self, agent: Any, name: str, args: tuple, result: Any) -> None:
        """An internal action registered by the host, or an environment action, ran."""

    def cycle(self, agent: Any, n: int) -> None:
        """Reasoning cycle ``n`` ran."""
