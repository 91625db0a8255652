"""Tracing: how a :class:`~bdi_rl.bdi.runtime.listener.Listener` sees what an agent does.

Two ways, the same events in the same order (``tests/test_trace_compiled.py``):

- **compiled in** (:func:`compile_listener`): a listener given when the agent is made
  (``Agent(..., listener=...)``, as bdi-rl's trace is). Its plan bodies and host-action
  calls are compiled to code that records its own events (traced.py), and the runtime's step
  paths (a plan pushed or ended, a belief added or removed, a percept swapped) are replaced
  by traced twins that do their work and record in one frame: no wrapper frame per event.
  The untraced agent's code is untouched.
- **wrapped** (:func:`set_listener`): a listener set on an agent made without one: the
  paths are wrapped with calls to the listener; without one nothing is wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime import believing, host, jason_cycle, reasoning
from bdi_rl.bdi.runtime.errors import NoPlan
from bdi_rl.bdi.runtime.intention import Frame, Intention, join
from bdi_rl.bdi.runtime.listener import (
    ACTION_RAN,
    BELIEF_ADDED,
    BELIEF_REMOVED,
    GOAL_ADDED,
    PLAN_ENDED,
    PLAN_STARTED,
    Listener,
    Recorder,
    Recording,
)
from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, Annots, Struct, Terms
from bdi_rl.bdi.runtime.triggers import ADD_BEL, DEL_BEL
from bdi_rl.bdi.runtime.unify import Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.compiler import CompiledPlan
    from bdi_rl.bdi.runtime.state import AgentState, Report


def set_listener(ag: AgentState, listener: Listener | None) -> None:
    """A listener for an agent made without one: the belief, goal, plan, action and cycle
    paths are wrapped; without one (None) they are the plain methods again. A listener
    given when the agent is made is compiled in instead (:func:`compile_listener`), for
    the agent's life."""
    if ag._compiler.recording is not None:
        raise RuntimeError(f"agent {ag.name}: its listener is compiled into its plans (it was made with it)")
    for name in ("_select", *WRAPPED):
        ag.__dict__.pop(name, None)
    for cell in ag._cells.values():
        fn = cell[0]
        cell[0] = getattr(fn, "__wrapped_action__", fn)
    ag.listener = listener
    if listener is None:
        return
    _install_listener(ag, listener)


#: The paths :func:`set_listener` wraps (and ``_select`` for a listener that wants options).
WRAPPED = frozenset(
    (
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
    )
)


def _install_listener(agent: AgentState, listener: Listener) -> None:
    """Wrap the agent's event paths and host actions with calls to ``listener`` (instance
    attributes shadow the class's methods, so removing them restores the untraced paths)."""
    recorder = listener.recorder or Recorder()
    _wrap(agent, listener, recorder, WRAPPED)
    for name, cell in agent._cells.items():
        cell[0] = _traced_action(listener, recorder, agent, name, cell[0])


def _wrap(agent: AgentState, listener: Listener, recorder: Recorder, names: Iterable[str]) -> None:
    """Wrap the paths ``names`` (of :data:`WRAPPED`) with calls to ``listener``.

    The paths that run every env step record straight into the listener's
    :class:`Recorder` when it knows the event's key (a dict lookup and two appends) and
    call the listener's hook otherwise; a listener without a recorder gets an empty one,
    so every event reaches its hooks."""
    cls = type(agent)  # the untraced methods of the agent's cycle
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
    wrappers = {
        "_bb_add": bb_add,
        "_bb_remove": bb_remove,
        "_push": push,
        "_frame_done": frame_done,
        "_drop": drop,
        "achieve": achieve,
        "post_goal": post_goal,
        "act": act,
        "cycle": cycle,
        "replace_percept": replace_percept,
    }
    agent.__dict__.update({name: wrappers[name] for name in names})


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


def compile_listener(agent: AgentState, recording: Recording) -> None:
    """Install the traced twins of the runtime's step paths on ``agent``, made with
    ``recording`` compiled into its plans (the agent's constructor calls this before any
    plan or belief is added). A twin does what the cycle's plain function does and records
    its event, in one frame; a path whose function is not one this module has a twin for
    (a subclass's own) is wrapped instead. The rare paths (``!!g``, a dropped intention,
    the cycle: the listener flushes its record there; plan selection, for a listener that
    wants the options) keep a wrapper."""
    listener, recorder = recording.listener, recording.recorder
    ids_get, op, ref = recording.ids_get, recording.op, recording.ref
    # At cycle level the listener sees every push and pop (it snapshots the stacks at each).
    no_ids: dict[Any, int] = {}
    frame_ids_get = no_ids.get if listener.wants_options else ids_get
    cls = type(agent)
    agent.listener = listener
    twins: dict[str, Any] = {}

    # -- a plan pushed on an intention: intention.start ------------------------------------
    fast_push = cls._push is reasoning._push
    if fast_push or cls._push is jason_cycle._push:

        def push(it: Intention, plan: CompiledPlan, env: Env, ttype: int, value: Struct, unwind_to: int) -> Frame:
            frame = Frame(plan, env, unwind_to, ttype, value)
            it.stack.append(frame)
            if plan.atomic:
                it.atomic += 1
                if fast_push:
                    agent.atomic = it
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

        twins["_push"] = push

    # -- a plan's frame leaves: intention.end (each frame a failure plan's end unwinds) -----
    if cls._frame_done is reasoning._frame_done:

        def frame_done(it: Intention, frame: Frame) -> None:
            stack = it.stack
            unwind_to = frame.unwind_to
            if unwind_to == len(stack) - 1:  # the usual: the plan on top ends
                stack.pop()
                plan = frame.plan
                if plan.atomic:
                    it.atomic -= 1
                    if not it.atomic and agent.atomic is it:
                        agent.atomic = None
                if stack and stack[-1].renamed:
                    join(stack[-1])
                known = frame_ids_get(("-", plan.name))
                if known is None:
                    listener.intention_ended(agent, plan.name)
                else:
                    op(PLAN_ENDED)
                    ref(known)
                return
            gone = stack[unwind_to:] if unwind_to < len(stack) - 1 else (frame,)
            del stack[unwind_to:]
            if it.atomic:
                it.atomic = sum(1 for f in stack if f.plan.atomic)
                if not it.atomic and agent.atomic is it:
                    agent.atomic = None
            if stack and stack[-1].renamed:
                join(stack[-1])
            for ended in reversed(gone):
                name = ended.plan.name
                known = frame_ids_get(("-", name))
                if known is None:
                    listener.intention_ended(agent, name)
                else:
                    op(PLAN_ENDED)
                    ref(known)

        twins["_frame_done"] = frame_done
    elif cls._frame_done is jason_cycle._frame_done:

        def jason_frame_done(it: Intention, frame: Frame) -> None:
            stack = it.stack
            gone: Any = stack[frame.unwind_to :] if frame.unwind_to < len(stack) - 1 else (frame,)
            stack.pop()
            if frame.plan.atomic:
                it.atomic -= 1
            for ended in reversed(gone):
                name = ended.plan.name
                known = frame_ids_get(("-", name))
                if known is None:
                    listener.intention_ended(agent, name)
                else:
                    op(PLAN_ENDED)
                    ref(known)

        twins["_frame_done"] = jason_frame_done

    # -- beliefs: belief.add, belief.del -----------------------------------------------------
    if cls._bb_add is believing._bb_add and cls._bb_remove is believing._bb_remove:

        def bb_add(functor: str, args: Terms, annots: Annots) -> Annots | None:
            new = agent.beliefs.add((functor, len(args)), args, annots)
            if new is not None:
                key = (ADD_BEL, functor, len(args))
                focus = agent.focus
                if focus is not None:
                    agent.focus = None
                    agent._post_internal(ADD_BEL, Struct(functor, args, new), focus)
                elif key in agent.plans:
                    agent.events.append((ADD_BEL, Struct(functor, args, new), None))
                if agent.waiters:
                    agent._check_waiters(key, Struct(functor, args, new))
                known = ids_get((functor, args, new))
                if known is None:
                    listener.on_belief_added(agent, functor, args, new)
                else:
                    op(BELIEF_ADDED)
                    ref(known)
            return new

        def bb_remove(functor: str, args: Terms, annots: Annots) -> Annots | None:
            removed = agent.beliefs.remove((functor, len(args)), args, annots)
            if removed is not None:
                key = (DEL_BEL, functor, len(args))
                focus = agent.focus
                if focus is not None:
                    agent.focus = None
                    agent._post_internal(DEL_BEL, Struct(functor, args, removed), focus)
                elif key in agent.plans:
                    agent.events.append((DEL_BEL, Struct(functor, args, removed), None))
                if agent.waiters:
                    agent._check_waiters(key, Struct(functor, args, removed))
                known = ids_get((functor, args, removed))
                if known is None:
                    listener.on_belief_removed(agent, functor, args, removed)
                else:
                    op(BELIEF_REMOVED)
                    ref(known)
            return removed

        twins["_bb_add"], twins["_bb_remove"] = bb_add, bb_remove

    # -- a percept swapped for another (the env's state every step): belief.del, belief.add --
    if cls.replace_percept is host.replace_percept:
        ops_extend, refs_extend = recorder.ops.extend, recorder.refs.extend
        swap = (BELIEF_REMOVED, BELIEF_ADDED)

        def replace_percept(functor: str, args: Terms) -> None:
            n = len(args)
            group = agent.beliefs.groups.get((functor, n))
            if group and len(group) == 1:
                ((old, annots),) = group.items()
                if annots is ANNOTS_PERCEPT:
                    if old == args:
                        return
                    del group[old]
                    group[args] = ANNOTS_PERCEPT
                    plans = agent.plans
                    if (DEL_BEL, functor, n) in plans:
                        agent.events.append((DEL_BEL, Struct(functor, old, ANNOTS_PERCEPT), None))
                    if (ADD_BEL, functor, n) in plans:
                        agent.events.append((ADD_BEL, Struct(functor, args, ANNOTS_PERCEPT), None))
                    if agent.waiters:
                        agent._check_waiters((DEL_BEL, functor, n), Struct(functor, old, ANNOTS_PERCEPT))
                        agent._check_waiters((ADD_BEL, functor, n), Struct(functor, args, ANNOTS_PERCEPT))
                    gone, came = ids_get((functor, old, ANNOTS_PERCEPT)), ids_get((functor, args, ANNOTS_PERCEPT))
                    if gone is None or came is None:
                        listener.on_percept_replaced(agent, functor, old, args)
                    else:
                        ops_extend(swap)
                        refs_extend((gone, came))
                    return
            agent._replace_percept(functor, args)  # through the traced _bb_remove/_bb_add

        twins["replace_percept"] = replace_percept

    agent.__dict__.update(twins)
    wrapped = {"post_goal", "_drop", "cycle"} | (
        {"_push", "_frame_done", "_bb_add", "_bb_remove", "replace_percept"} - set(twins)
    )
    _wrap(agent, listener, recorder, wrapped)
