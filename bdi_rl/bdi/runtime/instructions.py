"""What an instruction of a plan's compiled code is to the cycle that runs it: its kind and
the signals it returns. An instruction is ``instr(ag, intention, frame) -> pc``: the index of
the next instruction, or one of the negative signals below (body.py compiles them; the
cycles, jason_cycle.py and reasoning.py, run them).
"""

from collections.abc import Callable
from typing import Any, TypeAlias

Instruction: TypeAlias = Callable[[Any, Any, Any], int]
"""``instr(ag, intention, frame) -> pc``. The agent, intention and frame stay ``Any`` here:
their classes (state.py, intention.py) import the compiler, and the runtime's modules
import one way (the acyclic contract in pyproject.toml)."""
Placed: TypeAlias = Callable[[int, dict[int, int]], Instruction]
"""An instruction still to place: ``make(pc, labels)`` once its index and the indices of
the labels (jump targets) are known."""

#: instruction kinds (body.py): one deed of Jason's cycle; no deed (loop bookkeeping); a
#: jump (no deed, and a plan whose next instruction is a jump to its end has finished); a
#: belief change (a deed whose event stays on the intention, Jason's sameFocus)
FREE, DEED, JUMP, BELIEF = 0, 1, 2, 3

# instruction signals
PUSHED = -1  # a frame was pushed on the intention: run its top
SUSPENDED = -2  # the intention waits (.wait, a synchronous ask, its own event): it left the running queue
YIELD = -3  # the intention gives up its turn (budget spent); frame.pc says where to resume
