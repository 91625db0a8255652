"""Jason's actions on the agent's system: random numbers (``.random``,
``.set_random_seed``), the clock (``.date``, ``.time``, ``.nano_time``) and ``.version``.

Random numbers come from the agent's own stream (``Agent.random``), which a host seeds for
runs that repeat and ``.set_random_seed`` reseeds, as Jason's per-agent ``.random``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import is_free, java_error, standard, value, wrong_argument
from bdi_rl.bdi.runtime.terms import Term, Trail, undo
from bdi_rl.bdi.runtime.unify import Env, TermCompiler

#: The Jason release whose language and standard library bdi-rl's runtime follows.
JASON_VERSION = "3.2.2"


def _number(v: Any) -> bool:
    return type(v) is int or type(v) is float


@standard(".random", 1, 2, 3)
def _random(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.random(X)``: X in [0, 1). ``.random(X, N)``: N such numbers, one a solution (0:
    without end). ``.random(List, X[, N])``: X a random element (N times; 1 by default)."""
    codes = [tc.term(a) for a in node.args]
    n = len(codes)

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        first = None if is_free(codes[0], env) else value(codes[0], env)
        draw: Callable[[], Term]
        if type(first) is tuple:
            if n < 2 or not is_free(codes[1], env):
                raise wrong_argument(".random", "second argument must be a variable.")
            times = 1
            if n == 3:
                count = value(codes[2], env)
                if not _number(count):
                    raise wrong_argument(".random", "third argument must be a number.")
                times = int(count)
            if not first:
                return
            out, draw = codes[1], lambda: first[ag.random.randrange(len(first))]
        else:
            if first is not None:
                raise wrong_argument(".random", "first argument must be a variable.")
            times = 1
            if n >= 2:  # (a third argument is ignored)
                count = value(codes[1], env)
                if not _number(count):
                    raise wrong_argument(".random", "second argument must be a number.") if n == 2 else java_error()
                times = int(count)
            out, draw = codes[0], ag.random.random
        k = 0
        while k < times or times == 0:
            k += 1
            mark = len(trail)
            if out.match(draw(), env, trail):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)


@standard(".set_random_seed", 1)
def _set_random_seed(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    seed = tc.term(node.args[0])

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        v = value(seed, env)
        if not _number(v):
            raise java_error()  # ClassCastException
        ag.random.seed(int(v))
        return True

    return Query(first)


def _clock(*fields: str) -> Any:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        outs = [tc.term(a).match for a in node.args]

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            now = time.time()
            local = time.localtime(now)
            parts = {
                "year": local.tm_year,
                "month": local.tm_mon,
                "day": local.tm_mday,
                "hour": local.tm_hour,
                "minute": local.tm_min,
                "second": local.tm_sec,
                "ms": int(now * 1000) % 1000,
            }
            return all(out(parts[name], env, trail) for out, name in zip(outs, fields, strict=False))

        return Query(first)

    return compile_


standard(".date", 3)(_clock("year", "month", "day"))
standard(".time", 3, 4)(_clock("hour", "minute", "second", "ms"))


@standard(".nano_time", 1)
def _nano_time(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match
    return Query(lambda ag, env, trail: out(time.perf_counter_ns(), env, trail))


@standard(".version", 1)
def _version(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match
    return Query(lambda ag, env, trail: out(JASON_VERSION, env, trail))
