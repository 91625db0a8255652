"""An intention: its stack of frames (plan instances), and the signals its instructions return."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from bdi_rl.bdi.runtime.terms import Struct, atom, term_str
from bdi_rl.bdi.runtime.triggers import TRIGGER_TEXT

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.agent import Agent
    from bdi_rl.bdi.runtime.compiler import CompiledPlan

# instruction signals
PUSHED = -1  # a frame was pushed on the intention: run its top
SUSPENDED = -2  # the intention waits (.wait, a synchronous ask): it left the running queue
YIELD = -3  # the intention gives up its turn (budget spent); frame.pc says where to resume


class Frame:
    """One plan instance on an intention: its code, slots and the next instruction."""

    __slots__ = ("plan", "code", "env", "pc", "unwind_to", "ttype", "event", "saved")

    def __init__(self, plan: CompiledPlan, env: list, unwind_to: int, ttype: int, event: Struct) -> None:
        self.plan = plan
        self.code = plan.code
        self.env = env
        self.pc = 0
        self.unwind_to = unwind_to
        """stack length to cut back to when this frame ends (a failure plan removes the
        frames of the goal it handles)"""
        self.ttype = ttype
        self.event = event
        self.saved: list | None = [None] * plan.loops if plan.loops else None


class Intention:
    __slots__ = ("stack", "atomic", "id", "dropped", "reply")
    _ids = itertools.count(1)

    def __init__(self) -> None:
        self.stack: list[Frame] = []
        self.atomic = 0
        self.id = next(Intention._ids)
        self.dropped = False
        self.reply: tuple | None = None
        """(asker, msg_id, query) of the askOne this intention answers (its ``+?q`` plan's)"""


def describe_intention(ag: Agent, it: Intention | None) -> Struct:
    """``intention(Id, [im(Label, Trigger), ...])``, innermost plan first."""
    if it is None:
        return Struct("intention", (0, ()))
    ims = tuple(
        Struct(
            "im",
            (
                f.plan.label if f.plan.label is not None else atom(f.plan.name),
                TRIGGER_TEXT[f.ttype] + term_str(f.event),
            ),
        )
        for f in reversed(it.stack)
    )
    return Struct("intention", (it.id, ims))
