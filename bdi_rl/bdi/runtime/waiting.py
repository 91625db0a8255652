"""Suspended intentions: timed waits (``.wait``), waits for an event or a formula, ask
timeouts, and intentions a host action holds (a shared world's barrier: :func:`hold`).

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.terms import Struct, Trail, atom, term_str, undo

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.state import AgentState, EventKey, Timer, Waiter

#: the waiters' key of ``.wait(formula)``: tested at every belief change and goal
WAIT_FORMULA = ("formula",)


def wait(
    ag: AgentState,
    it: Intention,
    frame: Frame,
    ms: Any,
    key: EventKey | None,
    matcher: Any,
    elapsed: Any,
    what: Any = None,
) -> None:
    """``.wait``: ``it`` waits ``ms`` milliseconds, or for an event (``key``, ``matcher``) or
    a formula; ``what`` (the event's literal or the formula) names it in the intention's
    reason, as Jason's ``wait(Id)[What]``."""
    started = ag.host.now()
    reason = Struct("wait", (it.id,), frozenset((what if what is not None else Struct("time", (ms,)),)))
    it.wait_for(reason, term_str(reason), next(ag._seq))
    if it.atomic:
        ag.atomic = it  # an atomic intention that waits keeps every other waiting
    if key is None:
        ag._timer(ms, lambda: ag._resume(it), it)
        return
    waiter: Waiter = [it, frame, matcher, elapsed, started, None, True]
    ag.waiters.setdefault(key, []).append(waiter)
    if ms is not None:
        waiter[5] = ag._timer(ms, lambda: ag._wait_timeout(key, waiter))


def next_deadline(ag: AgentState) -> float | None:
    """When the earliest timed wait or ask timeout falls due (host.now() seconds)."""
    while ag.timers and not ag.timers[0][3]:
        heapq.heappop(ag.timers)
    return ag.timers[0][0] if ag.timers else None


def _timer(ag: AgentState, ms: Any, action: Callable[[], None], owner: Intention | None = None) -> Timer:
    entry = [ag.host.now() + float(ms) / 1000.0, next(ag._seq), action, True, owner]
    heapq.heappush(ag.timers, entry)
    return entry


def _wake_timers(ag: AgentState) -> None:
    timers = ag.timers
    now = ag.host.now()
    while timers and timers[0][0] <= now:
        entry = heapq.heappop(timers)
        if entry[3]:
            entry[3] = False
            entry[2]()


def _resume(ag: AgentState, it: Intention) -> None:
    if not it.dropped:
        it.reason = None
        ag._resume_now(it)


def _check_waiters(ag: AgentState, key: EventKey, value: Struct) -> None:
    if WAIT_FORMULA in ag.waiters:
        ag._check_formulas()
    waiting = ag.waiters.get(key)
    if not waiting:
        return
    for waiter in list(waiting):
        it, frame, matcher, elapsed, started, timer, _ = waiter
        if it.dropped:
            waiting.remove(waiter)
            continue
        trail: Trail = []
        if matcher(value, frame.env, trail):
            waiting.remove(waiter)
            if timer is not None:
                timer[3] = False
            if elapsed is not None:
                elapsed(round((ag.host.now() - started) * 1000), frame.env, None)
            it.reason = None
            ag._resume_later(it)
        else:
            undo(trail, 0)
    if not waiting:
        del ag.waiters[key]


def _check_formulas(ag: AgentState) -> None:
    """Resume the ``.wait(formula)`` waiters whose formula now holds (bindings kept)."""
    waiting = ag.waiters[WAIT_FORMULA]
    for waiter in list(waiting):
        it, frame, test, elapsed, started, timer, _ = waiter
        if not it.dropped and not test(ag, frame.env, []):
            continue
        waiting.remove(waiter)
        if timer is not None:
            timer[3] = False
        if it.dropped:
            continue
        if elapsed is not None:
            elapsed(round((ag.host.now() - started) * 1000), frame.env, None)
        it.reason = None
        ag._resume_later(it)
    if not waiting:
        del ag.waiters[WAIT_FORMULA]


def _wait_timeout(ag: AgentState, key: EventKey, waiter: Waiter) -> None:
    waiting = ag.waiters.get(key)
    if not waiting or waiter not in waiting:
        return
    waiting.remove(waiter)
    if not waiting:
        del ag.waiters[key]
    it, frame, _, elapsed, started = waiter[:5]
    if it.dropped:
        return
    it.reason = None
    if elapsed is not None:
        elapsed(round((ag.host.now() - started) * 1000), frame.env, None)
        ag._resume_now(it)
        return
    ag._fail(it, frame, frame.pc - 1, PlanFailure("wait_timeout", "timeout in .wait"))


def hold(ag: AgentState, it: Intention, what: str) -> None:
    """A host action suspended ``it`` until something outside the mind happens (``what``,
    e.g. "the world's .rl_act"): the mind knows it waits (so it is not idle, and a reader
    or a stall report can say for what); the host goes on with :func:`release` or fails the
    action with :func:`fail_held`."""
    ag.held[it.id] = (it, what)
    it.wait_for(atom(what) if isinstance(what, str) else what, f"action-{it.id}", next(ag._seq))
    if it.atomic:
        ag.atomic = it


def release(ag: AgentState, it: Intention) -> None:
    """The held intention goes on after its action (run at the next cycle)."""
    if ag.held.pop(it.id, None) is not None and not it.dropped:
        it.reason = None
        ag._resume_after_action(it)


def fail_held(ag: AgentState, it: Intention, exc: PlanFailure) -> None:
    """The held intention's action failed after all (the host will never answer it): Jason's
    failure rule applies, as to any failing action of that plan line."""
    if ag.held.pop(it.id, None) is None or it.dropped or not it.stack:
        return
    it.reason = None
    frame = it.stack[-1]
    ag._fail(it, frame, frame.pc - 1, exc)
