"""The runtime's errors: a plan library that cannot load, and a plan that fails.

A failure carries what Jason puts on the ``-!g`` event: its kind (``error(Kind)``) and
message (``error_msg(Msg)``); the source line and file are added where it is caught, from
the instruction that was running.
"""

from __future__ import annotations

from typing import Any  # annots are terms; terms.py sits above this module (it imports arith, which imports this)


class AslSyntaxError(ValueError):
    """A plan library that cannot be loaded: ``file:line:col: message``."""


class PlanFailure(Exception):
    """The running plan fails: Jason's error kinds (``action_failed``, ``ia_failed``,
    ``internal_action``, ``constraint_failed``, ``no_relevant``, ``no_applicable``,
    ``test_goal_failed`` ...) and a message (``error_msg``, Jason's text). ``annots``: more
    annotations for the failure event (``.fail(error(E), reason(R))``); ``detail``: what
    bdi-rl says of it in a report when Jason's message is empty."""

    def __init__(self, kind: str, message: str = "", *, annots: tuple[Any, ...] = (), detail: str = "") -> None:
        super().__init__(message or detail or kind)
        self.kind = kind
        self.message = message
        self.annots = annots
        self.detail = detail


class AslTypeError(PlanFailure):
    """A value of the wrong type where the language needs a number, list or literal."""

    def __init__(self, message: str) -> None:
        super().__init__("wrong_arguments", message)


class NoPlan(PlanFailure):
    """A goal with no relevant or no applicable plan: Jason looks for a ``-!g`` plan for the
    goal itself first (it has no frame yet), so the goal travels with the failure."""

    def __init__(self, kind: str, message: str, goal: object, ttype: int) -> None:
        super().__init__(kind, message)
        self.goal = goal
        self.ttype = ttype
        """the goal's trigger type (``+!g`` or ``+?g``; triggers.py)"""
