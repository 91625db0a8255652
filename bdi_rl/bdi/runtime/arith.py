"""Arithmetic as Jason does it: the operators on numbers (``terms`` evaluates arithmetic
left as a term with them; this module knows no terms, so terms can print ``(Y+1)`` evaluated).

Jason's numbers are doubles and its arithmetic never fails: ``1/0`` is ``Infinity``,
``0/0`` and ``7 mod 0`` are ``NaN``, an operand that is no number (an atom bound to a
variable) gives ``NaN``. An operand that is still unbound leaves the expression a term
(``X = Y + 1`` binds ``X`` to ``(Y+1)``), evaluated once its variables have values (when it
is printed, or used in arithmetic). Here ints stay ints where the result is exact (``7 div
2`` is ``3``, ``2 ** 10`` is ``1024``), as everywhere in the runtime; they print as Jason's
doubles (terms.number_str).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime.errors import PlanFailure

NAN = math.nan
INF = math.inf


def add(a: Any, b: Any) -> Any:
    return a + b


def sub(a: Any, b: Any) -> Any:
    return a - b


def mul(a: Any, b: Any) -> Any:
    return a * b


def truediv(a: Any, b: Any) -> Any:
    """``/``: Java's double division (``1/0`` is Infinity, ``0/0`` NaN)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return NAN
        negative = (a < 0) != (math.copysign(1.0, b) < 0)
        return -INF if negative else INF
    except OverflowError:  # a huge int over a small one
        return truediv(float("inf") if a > 0 else float("-inf"), b)


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _java_int(v: Any) -> int:
    """Java's ``(int) v`` of a double: truncated toward zero, saturated, NaN 0."""
    if v != v:
        return 0
    if v >= _INT_MAX:
        return _INT_MAX
    if v <= _INT_MIN:
        return _INT_MIN
    return int(v)


def intdiv(a: Any, b: Any) -> int:
    """``div``: Jason's ``(int) a / (int) b``, truncating toward zero."""
    x, y = _java_int(a), _java_int(b)
    if y == 0:
        raise PlanFailure("ia_failed", "/ by zero")
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def mod(a: Any, b: Any) -> Any:
    """``mod``: Java's ``%`` (the sign of the dividend; by zero NaN)."""
    if type(a) is int and type(b) is int:
        if b == 0:
            return NAN
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    try:
        return math.fmod(a, b)
    except ValueError:
        return NAN


#: The exponent up to which an int power is computed exactly.
_EXACT_POWER = 64


def power(a: Any, b: Any) -> Any:
    """``**``: Java's ``Math.pow`` (an int to a small non-negative int power stays exact)."""
    if type(a) is int and type(b) is int and 0 <= b and (b <= _EXACT_POWER or -1 <= a <= 1):
        return a**b
    try:
        return math.pow(a, b)
    except ValueError:
        return NAN
    except OverflowError:
        if a == 0:  # 0 ** -n
            return INF
        odd = float(b).is_integer() and int(b) % 2 == 1
        return -INF if a < 0 and odd else INF


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": add,
    "-": sub,
    "*": mul,
    "/": truediv,
    "div": intdiv,
    "mod": mod,
    "**": power,
}
