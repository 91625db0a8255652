"""Control flow in plan bodies: the instructions of ``if``, ``while`` and ``for`` (tests, jumps,
loops saving and restoring the frame's slots)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime.instructions import YIELD, Instruction, Placed
from bdi_rl.bdi.runtime.queries import First, Solve
from bdi_rl.bdi.runtime.terms import LVar, Struct, Trail, resolve
from bdi_rl.bdi.runtime.unify import Env


def branch_test(first: First, otherwise: int) -> Placed:
    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1
        target = labels[otherwise]

        def branch(ag: Any, it: Any, frame: Any) -> int:
            if first(ag, frame.env, []):
                return nxt
            return target

        return branch

    return make


def jump(label: int) -> Placed:
    def make(pc: int, labels: dict[int, int]) -> Instruction:
        target = labels[label]
        return lambda ag, it, frame: target

    return make


def while_goal(k: int, test: First, goal: Callable[[Env], Struct], end_label: int) -> Placed:
    """``while (c) { !g }`` fused: test, then push ``g``'s plan and resume here when it
    ends (restoring the slots saved on entry, as ``loop_back`` does). ``frame.saved[k]``
    is None outside the loop, the slots at its start inside it. Three instructions fewer
    per iteration than enter/test/achieve/back."""

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        end = labels[end_label]

        def loop(ag: Any, it: Any, frame: Any) -> int:
            env = frame.env
            saved = frame.saved
            start = saved[k]
            if start is None:
                saved[k] = env[:]
            else:
                env[:] = start
            if test(ag, env, []):
                frame.pc = pc
                return ag.achieve(it, goal(env))  # PUSHED: _run spends the budget
            saved[k] = None
            return end

        return loop

    return make


def loop_enter(k: int) -> Placed:
    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def enter(ag: Any, it: Any, frame: Any) -> int:
            frame.saved[k] = frame.env[:]
            return nxt

        return enter

    return make


def loop_back(k: int, test_label: int) -> Placed:
    """End of a ``while`` body: restore the slots saved on entry, then test again (or give
    the turn away when the intention's budget is spent)."""

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        test = labels[test_label]

        def back(ag: Any, it: Any, frame: Any) -> int:
            frame.env[:] = frame.saved[k]
            ag.budget -= 1
            if ag.budget <= 0:
                frame.pc = test
                return YIELD
            return test

        return back

    return make


def jump_back(label: int) -> Placed:
    def make(pc: int, labels: dict[int, int]) -> Instruction:
        target = labels[label]

        def back(ag: Any, it: Any, frame: Any) -> int:
            ag.budget -= 1
            if ag.budget <= 0:
                frame.pc = target
                return YIELD
            return target

        return back

    return make


def for_enter(k: int, solve: Solve) -> Placed:
    """Start of a ``for``: every solution, computed now (later belief changes do not change
    the iterations), each as a copy of the slots."""

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def enter(ag: Any, it: Any, frame: Any) -> int:
            env = frame.env
            trail: Trail = []
            solutions = [[resolve(v) if type(v) is LVar else v for v in env] for _ in solve(ag, env, trail)]
            frame.saved[k] = (env[:], iter(solutions))
            return nxt

        return enter

    return make


def for_next(k: int, end_label: int) -> Placed:
    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1
        end = labels[end_label]

        def step(ag: Any, it: Any, frame: Any) -> int:
            original, solutions = frame.saved[k]
            solution = next(solutions, None)
            if solution is None:
                frame.env[:] = original
                return end
            frame.env[:] = solution
            return nxt

        return step

    return make
