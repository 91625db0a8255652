"""Checks of internal-action arguments: a plan's value becomes a Python value here or the
action fails.

Every ``.rl_*`` argument passes one of these before it is used: a state or action outside
the env's range (``.rl_choose(99, A)``, ``.rl_act(-1)``: never a Python index, where -1 is
the last row), a fraction, NaN, a string where a number belongs, or a cell off the grid
raises :class:`ActionArgError`, so the plan fails like any failing action and no Q-value
has changed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.text import shown
from bdi_rl.rl.envs import EnvAdapter

__all__ = [
    "ActionArgError",
    "cell_arg",
    "cell_state",
    "decoded",
    "index_arg",
    "integer",
    "number_arg",
    "shown",
    "text_arg",
]

P = ParamSpec("P")
T = TypeVar("T")


class ActionArgError(PlanFailure, ValueError):
    """An internal action refused one of its arguments: the plan fails with Jason's
    ``error(wrong_arguments)`` (a ``-!g`` plan may handle it), reported as ``file:line: message``."""

    def __init__(self, message: str) -> None:
        super().__init__("wrong_arguments", message)


def integer(value: object) -> int | None:
    """``value`` as an int if it is a whole number: numbers written in a plan arrive as
    floats (``3`` is 3.0), percepts as ints; bools, fractions, NaN and terms are not."""
    if type(value) is int:
        return value
    if type(value) is float:
        return int(value) if value.is_integer() else None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def index_arg(value: Any, size: int, what: str, action: str) -> int:
    """``value`` as a state or action number in ``0..size-1``, or ActionArgError: a plan's
    number is never used as a Python index (-1 would be the last row)."""
    index = integer(value)
    if index is None or not 0 <= index < size:
        raise ActionArgError(f"{action}: {what} must be a whole number in 0..{size - 1}, got {shown(value)}")
    return index


def number_arg(value: Any, what: str, action: str, low: float = -math.inf, high: float = math.inf) -> float:
    """``value`` as a finite number in ``[low, high]``, or ActionArgError."""
    if isinstance(value, (int, float, numbers.Real)) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and low <= number <= high:
            return number
    bounds = "a finite number" if math.isinf(low) and math.isinf(high) else f"a number in [{low:g}, {high:g}]"
    raise ActionArgError(f"{action}: {what} must be {bounds}, got {shown(value)}")


def text_arg(value: Any, what: str, action: str) -> str:
    """``value`` as a string (sequences, policies and experience travel as strings)."""
    if not isinstance(value, str):
        raise ActionArgError(f"{action}: {what} must be a string, got {shown(value)}")
    return value


def cell_arg(env: EnvAdapter, x: Any, y: Any, action: str) -> tuple[int, int]:
    """(x, y) as a cell of ``env``'s grid, or ActionArgError."""
    cx, cy = integer(x), integer(y)
    if cx is None or cy is None or env.state_at(cx, cy) is None:
        shape = env.grid_shape
        grid = "this env has no grid" if shape is None else f"x in 0..{shape[1] - 1}, y in 0..{shape[0] - 1}"
        raise ActionArgError(f"{action}: ({shown(x)}, {shown(y)}) is not a cell of this env's grid ({grid})")
    return cx, cy


def cell_state(env: EnvAdapter, x: Any, y: Any, action: str) -> int:
    """The state number of cell (x, y), or ActionArgError."""
    return env.state_at(*cell_arg(env, x, y, action))  # type: ignore[return-value]


def decoded(action: str, decode: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``decode(*args)`` with its ValueError turned into this action's ActionArgError (a
    malformed sequence, policy or experience string, which may come from a teammate)."""
    try:
        return decode(*args, **kwargs)
    except ActionArgError:
        raise
    except ValueError as exc:
        raise ActionArgError(f"{action}: {exc}") from None
