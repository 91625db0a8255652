"""Tracing: :meth:`Agent.set_listener <bdi_rl.bdi.runtime.agent.Agent.set_listener>` wraps
the agent's belief, goal, plan, action and cycle paths with calls to a
:class:`~bdi_rl.bdi.runtime.listener.Listener`; without one nothing is wrapped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.errors import NoPlan
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.listener import (
    ACTION_RAN,
    BELIEF_ADDED,
    BELIEF_REMOVED,
    GOAL_ADDED,
    PLAN_ENDED,
    PLAN_STARTED,
    Listener,
    Recorder,
)
from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, Annots, Struct, Terms
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.compiler import CompiledPlan
    from bdi_rl.bdi.runtime.state import AgentState, Report


def set_listener(ag: AgentState, listener: Listener | None) -> None:
    """The one place tracing is decided: with a listener, the belief, goal, plan,
    action and cycle paths are wrapped; without one they are the plain methods."""
    for name in (
        "_select",
        "_bb_add",
        "_bb_remove",
        "_push",
        "_frame_done",
        "_drop",
        "achieve",
        "post_goal",
        "act",
        "cycle",
        "replace_percept",
    ):
        ag.__dict__.pop(name, None)
    for cell in ag._cells.values():
        fn = cell[0]
        cell[0] = getattr(fn, "__wrapped_action__", fn)
    ag.listener = listener
    if listener is None:
        return
    _install_listener(ag, listener)


def _install_listener(agent: AgentState, listener: Listener) -> None:
    """Wrap the agent's event paths with calls to ``listener`` (instance attributes shadow
    the class's methods, so removing them restores the untraced paths).

    The paths that run every env step record straight into the listener's
    :class:`Recorder` when it knows the event's key (a dict lookup and two appends) and
    call the listener's hook otherwise; a listener without a recorder gets an empty one,
    so every event reaches its hooks."""
    cls = type(agent)  # the untraced methods of the agent's cycle

    recorder = listener.recorder or Recorder()
    ids_get, op, ref = recorder.ids.get, recorder.ops.append, recorder.refs.append
    ops_extend, refs_extend = recorder.ops.extend, recorder.refs.extend
    # At cycle level the listener sees every push and pop (it snapshots the stacks at each).
    no_ids: dict[Any, int] = {}
    frame_ids_get = no_ids.get if listener.wants_options else ids_get
    plain_add, plain_remove, plain_push = cls._bb_add, cls._bb_remove, cls._push
    plain_achieve, plain_frame_done, plain_replace = cls.achieve, cls._frame_done, cls.replace_percept
    groups = agent.beliefs.groups
    swap = (BELIEF_REMOVED, BELIEF_ADDED)

    def bb_add(functor: str, args: Terms, annots: Annots) -> Annots | None:
        new = plain_add(agent, functor, args, annots)
        if new is not None:
            known = ids_get((functor, args, new))
            if known is None:
                listener.on_belief_added(agent, functor, args, new)
            else:
                op(BELIEF_ADDED)
                ref(known)
        return new

    def bb_remove(functor: str, args: Terms, annots: Annots) -> Annots | None:
        removed = plain_remove(agent, functor, args, annots)
        if removed is not None:
            known = ids_get((functor, args, removed))
            if known is None:
                listener.on_belief_removed(agent, functor, args, removed)
            else:
                op(BELIEF_REMOVED)
                ref(known)
        return removed

    def replace_percept(functor: str, args: Terms) -> None:
        group = groups.get((functor, len(args)))
        if group is not None and len(group) == 1:  # the usual swap of one percept for another:
            ((old, annots),) = group.items()  # in place, as untraced, and one hook, not two
            if annots is ANNOTS_PERCEPT:
                if old != args:
                    plain_replace(agent, functor, args)
                    gone, came = ids_get((functor, old, annots)), ids_get((functor, args, annots))
                    if gone is None or came is None:
                        listener.on_percept_replaced(agent, functor, old, args)
                    else:
                        ops_extend(swap)
                        refs_extend((gone, came))
                return
        cls._replace_percept(agent, functor, args)  # through bb_remove/bb_add: traced

    def push(it: Intention, plan: CompiledPlan, env: Env, ttype: int, value: Struct, unwind_to: int) -> Frame:
        frame = plain_push(agent, it, plan, env, ttype, value, unwind_to)
        try:
            known = frame_ids_get((plan.name, ttype, value.functor, value.args, value.annots))
        except TypeError:
            known = None
        if known is None:
            listener.on_push(agent, plan, ttype, value, it)
        else:
            op(PLAN_STARTED)
            ref(known)
        return frame

    def frame_done(it: Intention, frame: Frame) -> None:
        # a failure plan's frame ends the frames of the goal it handled too: all leave
        gone = it.stack[frame.unwind_to :] if frame.unwind_to < len(it.stack) - 1 else (frame,)
        plain_frame_done(agent, it, frame)
        for ended in reversed(gone):
            name = ended.plan.name
            known = frame_ids_get(("-", name))
            if known is None:
                listener.intention_ended(agent, name)
            else:
                op(PLAN_ENDED)
                ref(known)

    def achieve(it: Intention, value: Struct) -> int:
        try:
            known = ids_get(("!", value.functor, value.args, value.annots))
        except TypeError:
            known = None
        if known is None:
            listener.goal_added(agent, value, False)
        else:
            op(GOAL_ADDED)
            ref(known)
        return plain_achieve(agent, it, value)

    def select(ttype: int, value: Struct) -> tuple[CompiledPlan, Env]:
        try:
            chosen = cls._select(agent, ttype, value)
        except NoPlan:
            listener.on_select(agent, ttype, value, None)
            raise
        listener.on_select(agent, ttype, value, chosen[0])
        return chosen

    def drop(it: Intention, report: Report) -> None:
        cls._drop(agent, it, report)
        listener.intention_failed(agent, report)

    def post_goal(value: Struct) -> None:
        listener.goal_added(agent, value, True)
        cls.post_goal(agent, value)

    def act(action: Struct) -> None:
        cls.act(agent, action)
        listener.action_executed(agent, action.functor, action.args, None)

    def cycle() -> bool:
        listener.cycle_starting(agent)
        ran = cls.cycle(agent)
        if ran:
            listener.cycle(agent, agent.cycles)
        return ran

    if listener.wants_options:
        agent.__dict__["_select"] = select
    agent.__dict__.update(
        _bb_add=bb_add,
        _bb_remove=bb_remove,
        _push=push,
        _frame_done=frame_done,
        _drop=drop,
        achieve=achieve,
        post_goal=post_goal,
        act=act,
        cycle=cycle,
        replace_percept=replace_percept,
    )
    for name, cell in agent._cells.items():
        cell[0] = _traced_action(listener, recorder, agent, name, cell[0])


def _traced_action(
    listener: Listener, recorder: Recorder, agent: AgentState, name: str, fn: Callable[..., Any]
) -> Callable[..., Any]:
    """A host action that records its call (into ``recorder`` when it knows the key)."""
    ids_get, op, ref = recorder.ids.get, recorder.ops.append, recorder.refs.append

    def call(*args: Any) -> Any:
        result = fn(*args)
        if recorder.paused:
            return result
        try:
            known = ids_get((name, args, result))
        except TypeError:  # a list among the values: the listener records it
            known = None
        if known is None:
            listener.action_executed(agent, name, args, result)
        else:
            op(ACTION_RAN)
            ref(known)
        return result

    call.__wrapped_action__ = fn  # type: ignore[attr-defined]
    return call
