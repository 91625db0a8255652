"""Jason 3.2's arithmetic functions (``math.abs(X)``, ``math.max([1, 5])``, ``.length(L)``
...): name -> arities and the Python function of the evaluated arguments. Exactly Jason's set
(its ``FunctionRegister``): a name or arity not in it is no function, so ``math.average(L)``
stays a term, as in Jason, and ``a.b`` is an atom.

Jason's return doubles; here numbers keep Python's int/float distinction as everywhere in
the runtime: ``abs``, ``max``, ``min`` and ``sum`` keep their arguments' type, ``round``,
``floor`` and ``ceil`` give ints, the rest floats (all print as Jason prints them). A list
argument's non-numbers are skipped, as Jason's ``math.max([3,a,"s",5])`` is 5.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from bdi_rl.bdi.runtime.errors import AslTypeError


def _number(name: str, v: Any) -> int | float:
    if type(v) is int or type(v) is float:
        return v
    raise AslTypeError(f"{name}: the argument {v!r} is not numeric")


def _numbers(name: str, v: Any) -> list[int | float]:
    if type(v) is not tuple:
        raise AslTypeError(f"{name} is not implemented for {v!r} (a list of numbers)")
    return [x for x in v if type(x) is int or type(x) is float]


def _nonempty(name: str, v: Any) -> list[int | float]:
    values = _numbers(name, v)
    if not values:
        raise AslTypeError(f"{name}: no numbers in {v!r}")
    return values


def _unary(name: str, fn: Callable[[Any], Any]) -> Callable[..., Any]:
    return lambda x: fn(_number(name, x))


#: Where Jason's math.max and math.min of a list start (Java's Double.MIN_VALUE, the least
#: positive double, and MAX_VALUE): math.max([]) is 4.9E-324, and so is math.max([-1]).
_LIST_MAX_START = 5e-324
_LIST_MIN_START = 1.7976931348623157e308


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[..., Any]:
    start = _LIST_MAX_START if pick is max else _LIST_MIN_START

    def fn(*args: Any) -> Any:
        if len(args) == 2:
            return pick(_number(name, args[0]), _number(name, args[1]))
        return pick([start, *_numbers(name, args[0])])

    return fn


def _random(*args: Any) -> float:
    if args:
        return random.random() * _number("math.random", args[0])
    return random.random()


def _length(v: Any) -> int:
    if type(v) is tuple or type(v) is str:
        return len(v)
    raise AslTypeError(f"The argument {v!r} is not a list or a string")


def _double_sum(values: Iterable[int | float]) -> float:
    """The numbers added in order as doubles, as Jason adds them: not Python's exact int sum
    (1e16 + 1 - 1e16 is 0 there) nor a compensated float sum (0.1 + 0.2 + 0.3 is
    0.6000000000000001 there); tests/conformance/mean_median.asl holds it."""
    total = 0.0
    for x in values:
        total += x
    return total


def _std_dev(v: Any) -> float:
    """Jason's: n - 1 in the denominator, NaN for fewer than two numbers."""
    values = _numbers("math.std_dev", v)
    n = len(values)
    if n < 2:
        return math.nan
    mean = _double_sum(values) / n
    return math.sqrt(_double_sum((x - mean) * (x - mean) for x in values) / (n - 1))


def _median(v: Any) -> Any:
    """Jason's: every element a number (else no value), the mean of the middle two."""
    if type(v) is not tuple or not v or not all(type(x) is int or type(x) is float for x in v):
        raise AslTypeError(f"math.median needs a list of numbers: {v!r}")
    import statistics  # here, not at start-up: it imports fractions and decimal (~3 ms)

    return statistics.median(v)


def _mean(v: Any) -> Any:
    values = _nonempty("math.mean", v)
    return _double_sum(values) / len(values)


FUNCTIONS: dict[str, tuple[tuple[int, ...], Callable[..., Any]]] = {
    "math.abs": ((1,), _unary("math.abs", abs)),
    "math.max": ((1, 2), _extreme("math.max", max)),
    "math.min": ((1, 2), _extreme("math.min", min)),
    "math.round": ((1,), _unary("math.round", lambda x: math.floor(x + 0.5))),  # Java's Math.round
    "math.floor": ((1,), _unary("math.floor", math.floor)),
    "math.ceil": ((1,), _unary("math.ceil", math.ceil)),
    "math.sqrt": ((1,), _unary("math.sqrt", math.sqrt)),
    "math.log": ((1,), _unary("math.log", math.log)),
    "math.sin": ((1,), _unary("math.sin", math.sin)),
    "math.cos": ((1,), _unary("math.cos", math.cos)),
    "math.tan": ((1,), _unary("math.tan", math.tan)),
    "math.asin": ((1,), _unary("math.asin", math.asin)),
    "math.acos": ((1,), _unary("math.acos", math.acos)),
    "math.atan": ((1,), _unary("math.atan", math.atan)),
    "math.pi": ((0,), lambda: math.pi),
    "math.e": ((0,), lambda: math.e),
    "math.random": ((0, 1), _random),
    "math.sum": ((1,), lambda v: _double_sum(_numbers("math.sum", v))),
    "math.mean": ((1,), _mean),
    "math.median": ((1,), _median),
    "math.std_dev": ((1,), _std_dev),
    "math.time": ((0,), lambda: int(time.time() * 1000)),
    ".length": ((1,), _length),
}


def is_function(name: str, arity: int) -> bool:
    """Whether ``name(args)`` with ``arity`` arguments is an arithmetic function call."""
    entry = FUNCTIONS.get(name)
    return entry is not None and arity in entry[0]
