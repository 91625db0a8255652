"""Tracing compiled in: the instructions and host-action calls a plan body is compiled to
when the agent was made with a listener (``Agent(..., listener=...)``,
:class:`~bdi_rl.bdi.runtime.listener.Recording`).

Each does what its untraced twin does (body.py, control.py, stdlib.py: those stay as they
are, no flag tested) and records its event in the same frame: the event's key looked up in
the recorder's ids, and when known its code and id appended to the open record; when not,
the listener's hook is called (it defines the event and its key). The events, their order
and their keys are those of :func:`~bdi_rl.bdi.runtime.tracing.set_listener`'s wrappers
(``tests/test_trace_compiled.py`` holds the two to the same trace). The runtime's own step
paths (plans pushed and ended, belief changes, percepts) have their traced twins in
tracing.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.runtime.instructions import Instruction, Placed
from bdi_rl.bdi.runtime.listener import ACTION_RAN, GOAL_ADDED, Recording
from bdi_rl.bdi.runtime.queries import ActionCell, First
from bdi_rl.bdi.runtime.terms import Struct, from_python, resolve
from bdi_rl.bdi.runtime.unify import Env


def achieve(build: Callable[[Env], Struct], rec: Recording) -> Placed:
    """``!g`` (body.py's ``achieve``), its ``goal.add`` recorded before the goal is pursued."""
    ids_get, op, ref, listener = rec.ids_get, rec.op, rec.ref, rec.listener

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1
        last: list[Any] = [None, None]  # the last goal posted and its key: `!g` is mostly the same Struct

        def achieve(ag: Any, it: Any, frame: Any) -> int:
            frame.pc = nxt
            value = build(frame.env)
            if value is last[0]:
                key = last[1]
            else:
                key = last[1] = ("!", value.functor, value.args, value.annots)
                last[0] = value
            try:
                known = ids_get(key)
            except TypeError:
                known = None
            if known is None:
                listener.goal_added(ag, value, False)
            else:
                op(GOAL_ADDED)
                ref(known)
            return ag.achieve(it, value)

        return achieve

    return make


def while_goal(k: int, test: First, goal: Callable[[Env], Struct], end_label: int, rec: Recording) -> Placed:
    """``while (c) { !g }`` fused (control.py's ``while_goal``), ``goal.add`` recorded."""
    ids_get, op, ref, listener = rec.ids_get, rec.op, rec.ref, rec.listener

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        end = labels[end_label]
        last: list[Any] = [None, None]  # the last goal posted and its key (`!navigate`: the same Struct)

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
                value = goal(env)
                if value is last[0]:
                    key = last[1]
                else:
                    key = last[1] = ("!", value.functor, value.args, value.annots)
                    last[0] = value
                try:
                    known = ids_get(key)
                except TypeError:
                    known = None
                if known is None:
                    listener.goal_added(ag, value, False)
                else:
                    op(GOAL_ADDED)
                    ref(known)
                return ag.achieve(it, value)  # PUSHED: _run spends the budget
            saved[k] = None
            return end

        return loop

    return make


def env_action(build: Callable[[Env], Any], rec: Recording) -> Placed:
    """An environment action (body.py's ``act``), ``action`` recorded once it ran."""
    listener = rec.listener

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def act(ag: Any, it: Any, frame: Any) -> int:
            action = resolve(build(frame.env))
            ag.act(action)
            listener.action_executed(ag, action.functor, action.args, None)
            return nxt

        return act

    return make


def host_call(
    name: str,
    cell: ActionCell,
    ins: list[Callable[[Env], Any]],
    out: Callable[..., bool] | None,
    raw: bool,
    rec: Recording,
) -> First:
    """A call of a host action (stdlib.py's ``_host_call``): ``ins`` build its arguments,
    ``out`` (a function's) matches its result with the last argument, ``raw`` passes the
    agent first. Its ``action`` event is recorded after the call, with the arguments as the
    host action received them, except while the recorder is paused (a listener testing
    contexts again)."""
    recorder, ids_get, op, ref, listener = rec.recorder, rec.ids_get, rec.op, rec.ref, rec.listener

    def record(ag: Any, args: tuple[Any, ...], result: Any) -> None:
        try:
            known = ids_get((name, args, result))
        except TypeError:  # a list among the values: the listener records it
            known = None
        if known is None:
            listener.action_executed(ag, name, args, result)
        else:
            op(ACTION_RAN)
            ref(known)

    if out is not None:
        match = out
        if len(ins) == 1:  # .rl_choose(S, A): the shape of every step
            b0 = ins[0]

            def first(ag: Any, env: Env, trail: Any) -> bool:
                a0 = resolve(b0(env))
                result = cell[0](a0)
                if not recorder.paused:
                    try:
                        known = ids_get((name, (a0,), result))
                    except TypeError:
                        known = None
                    if known is None:
                        listener.action_executed(ag, name, (a0,), result)
                    else:
                        op(ACTION_RAN)
                        ref(known)
                return match(from_python(result), env, trail)

            return first

        def first_n(ag: Any, env: Env, trail: Any) -> bool:
            args = tuple([resolve(b(env)) for b in ins])
            result = cell[0](*args)
            if not recorder.paused:
                record(ag, args, result)
            return match(from_python(result), env, trail)

        return first_n
    if raw:

        def first_raw(ag: Any, env: Env, trail: Any) -> bool:
            args = (ag, *[resolve(b(env)) for b in ins])
            result = cell[0](*args)
            if not recorder.paused:
                record(ag, args, result)
            return result is not False

        return first_raw
    if len(ins) == 1:  # .rl_act(A): the other shape of every step
        b0 = ins[0]

        def first_1(ag: Any, env: Env, trail: Any) -> bool:
            a0 = resolve(b0(env))
            result = cell[0](a0)
            if not recorder.paused:
                try:
                    known = ids_get((name, (a0,), result))
                except TypeError:
                    known = None
                if known is None:
                    listener.action_executed(ag, name, (a0,), result)
                else:
                    op(ACTION_RAN)
                    ref(known)
            return result is not False

        return first_1

    def first_any(ag: Any, env: Env, trail: Any) -> bool:
        args = tuple([resolve(b(env)) for b in ins])
        result = cell[0](*args)
        if not recorder.paused:
            record(ag, args, result)
        return result is not False

    return first_any
