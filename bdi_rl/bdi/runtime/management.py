"""Goal and intention management: Jason 3.2's internal actions that act on the agent's
desires and intentions, with its argument modes.

=========================== =====================================================================
``.intend(G[, Id])``        ``G`` unifies with an achievement goal of an intention (not one
                            ``.suspend`` holds); backtracks over them (Jason's order: the
                            selected event's, the running one's, the events', the suspended,
                            the waiting, the queued intentions; each innermost goal first).
``.desire(G[, Id])``        the same over the goal events too, and suspended intentions.
``.drop_desire(G)``         drops the intentions with ``G`` and the events ``+!G``.
``.drop_intention([G])``    drops the intentions with ``G`` (no argument: this one); no failure
                            plan runs.
``.drop_all_desires``,      every other intention, and the events of intentions (all goal
``.drop_all_intentions``    events for ``drop_all_desires``); the one running stays.
``.drop_event(G)``          drops the events ``+!G``.
``.succeed_goal(G)``        ``G`` ends as if its plan had: the plans above it go, its caller
                            goes on after ``!G``.
``.fail_goal(G)``           ``G``'s plans go and its failure event ``-!G`` (without error
                            annotations) is posted, as Jason does.
``.suspend([G])``,          hold the intentions with ``G`` (no argument: this one) until
``.resume(G)``              ``.resume(G)``; a suspended intention that waited goes on waiting.
``.suspended(G, R)``        an intention with ``G`` waits or is suspended, for reason ``R``.
``.intention(Id, State[,    the intentions: ``running``, ``waiting[reason(R)]``, ``suspended``;
Stack[, current]])``        ``Stack`` the ``im(Label, {Trigger}, {Body}, Unifier)`` terms.
``.current_intention(I)``   ``intention(Id, [im(...), ...])`` of the running intention.
=========================== =====================================================================

Intentions are found where Jason keeps them (:func:`all_intentions`): the event selected in
this cycle, the running intention, the event queue, events ``.suspend`` holds, intentions
waiting for a host action, waiting (``.wait``, an answer) or suspended, and the queue.

The plan library's actions (``.add_plan``, ``.remove_plan``, ``.relevant_plans``,
``.plan_label``) and the terms of plans and intended means are in planlibrary.py.

Kept whole past 500 lines: every action here walks the same places (:func:`all_intentions`)
with the same goal search (``_GoalDrop``), so splitting the table above would split the walk
from the actions that share it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.failure import find_failure_target
from bdi_rl.bdi.runtime.instructions import SUSPENDED, Instruction
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.planlibrary import im_term
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import standard
from bdi_rl.bdi.runtime.terms import Struct, Trail, atom, deref, print_str, resolve, undo, unify
from bdi_rl.bdi.runtime.triggers import ADD_ACH, DEL_ACH, TRIGGER_TYPES
from bdi_rl.bdi.runtime.unify import Env, TermCompiler

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.state import AgentState, Event

_SUSPEND_REASON = atom("suspend_ia")
_NO_REASON = atom("no_reason")
RUNNING, WAITING, SUSPENDED_STATE = atom("running"), "waiting", atom("suspended")

# places (Jason's IntentionPlace), in the order Jason's getAllIntentions visits them
SELECTED_EVENT, SELECTED, EVENT, PENDING_EVENT, PENDING_ACTION, PENDING, QUEUED = range(7)


# -- where the intentions are ---------------------------------------------------------------------
def all_intentions(ag: AgentState) -> list[tuple[Intention, int]]:
    """Every intention with its place, in Jason's order (``Circumstance.getAllIntentions``)."""
    found: list[tuple[Intention, int]] = []
    seen: set[int] = set()

    def add(it: Intention | None, place: int) -> None:
        if it is not None and not it.dropped and id(it) not in seen:
            seen.add(id(it))
            found.append((it, place))

    selected = ag.selected
    if selected is not None:
        add(selected[2], SELECTED_EVENT)
    add(ag.current, SELECTED)
    if ag.atomic_event is not None:
        add(ag.atomic_event[2], EVENT)
    for event in ag.events:
        add(event[2], EVENT)
    for event in ag.suspended_events:
        add(event[2], PENDING_EVENT)
    for it, _ in ag.held.values():
        add(it, PENDING_ACTION)
    for it in ag.feedback:
        add(it, PENDING_ACTION)
    for it in _pending(ag):
        add(it, PENDING)
    if ag.atomic is not None:
        add(ag.atomic, QUEUED)
    for it in ag.running:
        add(it, QUEUED)
    return [(it, place) for it, place in found if it.stack or place == SELECTED_EVENT]


def _pending(ag: AgentState) -> list[Intention]:
    """Jason's pending intentions: waiting (``.wait``, an answer), resumed for the next
    cycle, or held by ``.suspend``; in the order Jason's map of them lists them (by the hash
    of their keys, ``wait(3)[time(500)]``, then by when they began to wait)."""
    found: dict[int, Intention] = {}
    for entry in ag.timers:
        if entry[3] and entry[4] is not None:
            found[id(entry[4])] = entry[4]
    for waiting in ag.waiters.values():
        found.update((id(w[0]), w[0]) for w in waiting)
    found.update((id(entry[0]), entry[0]) for entry in ag.pending_asks.values())
    found.update((id(it), it) for it in ag.tasks)
    found.update((id(it), it) for it in ag.suspended_ints.values())
    pending = list(found.values())
    if len(pending) > 1:
        capacity = 16
        while len(pending) > capacity * 3 // 4:
            capacity *= 2
        pending.sort(key=lambda it: (java_bucket(it.key, capacity), it.since))
    return pending


def java_bucket(key: str, capacity: int) -> int:
    """The bucket of ``key`` in a Java ConcurrentHashMap of ``capacity`` (its iteration order)."""
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return ((h ^ (h >> 16)) & 0x7FFFFFFF) & (capacity - 1)


def detach(ag: AgentState, it: Intention) -> None:
    """Take ``it`` out of every structure that holds it (Jason's ``dropIntention``)."""
    unqueue(ag, it)
    if ag.atomic_event is not None and ag.atomic_event[2] is it:
        ag.atomic_event = None
    if any(event[2] is it for event in ag.events):
        kept = [event for event in ag.events if event[2] is not it]
        ag.events.clear()
        ag.events.extend(kept)
    ag.suspended_events[:] = [event for event in ag.suspended_events if event[2] is not it]
    unwait(ag, it)


def unqueue(ag: AgentState, it: Intention) -> None:
    """Take ``it`` out of the queue of running intentions (Jason's dropRunningIntention)."""
    if it in ag.running:
        ag.running = type(ag.running)(i for i in ag.running if i is not it)
    if ag.atomic is it:
        ag.atomic = None


def unwait(ag: AgentState, it: Intention) -> None:
    """End whatever ``it`` waits for (Jason's removePendingIntention/Action)."""
    for entry in ag.timers:
        if entry[4] is it:
            entry[3] = False
    for key in list(ag.waiters):
        waiting = [w for w in ag.waiters[key] if w[0] is not it]
        for w in ag.waiters[key]:
            if w[0] is it and w[5] is not None:
                w[5][3] = False
        if waiting:
            ag.waiters[key] = waiting
        else:
            del ag.waiters[key]
    for msg_id in [k for k, entry in ag.pending_asks.items() if entry[0] is it]:
        del ag.pending_asks[msg_id]
        ag.expired_asks.add(msg_id)
    ag.held.pop(it.id, None)
    ag.tasks[:] = [i for i in ag.tasks if i is not it]
    ag.feedback[:] = [i for i in ag.feedback if i is not it]
    ag.suspended_ints.pop(it.id, None)
    it.reason = None


def drop(ag: AgentState, it: Intention) -> None:
    """Drop ``it`` for good (no failure plan, no report: the program asked for it)."""
    detach(ag, it)
    it.dropped = True


def _has_goal(it: Intention, pattern: Struct) -> bool:
    """Whether an achievement goal of ``it`` unifies with ``pattern`` (``hasTrigger(+!G)``)."""
    return any(f.ttype == ADD_ACH and _unifies(pattern, f.event) for f in it.stack)


def _unifies(pattern: Any, value: Any) -> bool:
    trail: Trail = []
    ok = unify(pattern, value, trail)
    undo(trail, 0)
    return ok


def _goal_event(event: Event, pattern: Struct) -> bool:
    """Whether ``event`` is ``+!G`` for the goal ``pattern``."""
    return event[0] == ADD_ACH and _unifies(pattern, event[1])


def _remove_events(ag: AgentState, pattern: Struct) -> None:
    """Jason's removeEvents and removePendingEvents for ``+!G`` (their intentions go too)."""
    for event in [e for e in ag.events if _goal_event(e, pattern)]:
        ag.events.remove(event)
        if event[2] is not None:
            drop(ag, event[2])
    if ag.atomic_event is not None and _goal_event(ag.atomic_event, pattern):
        event, ag.atomic_event = ag.atomic_event, None
        if event[2] is not None:
            drop(ag, event[2])
    for event in [e for e in ag.suspended_events if _goal_event(e, pattern)]:
        ag.suspended_events.remove(event)
        if event[2] is not None:
            drop(ag, event[2])


# -- succeed_goal and fail_goal ---------------------------------------------------------------------
def _drop_goal(ag: AgentState, it: Intention, pattern: Struct) -> Frame | None:
    """Jason's ``Intention.dropGoal``: pop the frames down to and with the lowest one for a
    goal unifying with ``pattern``; that frame (None when the intention has none)."""
    dropped = None
    while True:
        index = next(
            (
                k
                for k in range(len(it.stack) - 1, -1, -1)
                if it.stack[k].ttype == ADD_ACH and _unifies(pattern, it.stack[k].event)
            ),
            None,
        )
        if index is None:
            return dropped
        while len(it.stack) > index:
            dropped = it.stack[-1]
            ag._frame_done(it, dropped)


class _GoalDrop:
    """``.succeed_goal(G)`` (``fail`` False) and ``.fail_goal(G)``: Jason's
    ``succeed_goal.drop`` over every place an intention can be."""

    def __init__(self, ag: AgentState, pattern: Struct, fail: bool) -> None:
        self.ag = ag
        self.pattern = pattern
        self.fail = fail

    def in_intention(self, it: Intention, current: bool) -> int:
        """0: ``it`` has no such goal; 1: it goes on; 2: its failure event is posted; 3: it
        is gone (finished, or failed without a failure plan)."""
        ag = self.ag
        if _drop_goal(ag, it, self.pattern) is None:
            return 0
        if self.fail:
            target = find_failure_target(ag, it, ADD_ACH, self.pattern, len(it.stack))
            if target is None:
                return 3
            if target == len(it.stack):
                literal = resolve(self.pattern)
            else:
                literal = resolve(it.stack[target].event)
            if it.stack:
                ag._post_internal(DEL_ACH, literal, it)
            else:
                ag.events.append((DEL_ACH, literal, None))
            return 2
        if it.stack and not current:
            it.stack[-1].step = None  # the !G that waited is done
        ag._clr_int(it)
        if not it.stack:
            ag._intention_done(it)
            return 3
        return 1

    def in_event(self, event: Event) -> Event | None:
        """A goal event ``+!G`` itself: succeeded (its poster goes on), or turned into ``-!G``
        (Jason changes the event's operator). Returns the event to keep, if any."""
        ag = self.ag
        ttype, value, it = event
        if self.fail:
            return (DEL_ACH, value, it)
        if it is not None and it.stack:
            it.stack[-1].step = None
            ag._clr_int(it)
            if it.stack:
                ag._resume_now(it)
            else:
                ag._intention_done(it)
        return None

    def run(self) -> int:
        """Every place; returns what happened to the running intention."""
        ag = self.ag
        events = ([ag.atomic_event] if ag.atomic_event is not None else []) + list(ag.events)
        for event in events:
            it = event[2]
            if it is not None and (r := self.in_intention(it, False)) > 0:
                self._remove_event(event)
                if r == 1:
                    ag._resume_now(it)
            elif _goal_event(event, self.pattern):
                kept = self.in_event(event)
                self._replace_event(event, kept)
        for event in list(ag.suspended_events):
            it = event[2]
            if it is not None and (r := self.in_intention(it, False)) > 0:
                ag.suspended_events.remove(event)
                if r == 1:
                    ag._resume_now(it)
            elif _goal_event(event, self.pattern):
                kept = self.in_event(event)
                index = ag.suspended_events.index(event)
                if kept is None:
                    del ag.suspended_events[index]
                else:
                    ag.suspended_events[index] = kept
        for it in [i for i in ([ag.atomic] if ag.atomic is not None else []) + list(ag.running)]:
            if self.in_intention(it, False) > 1:
                unqueue(ag, it)
        result = 0
        if ag.current is not None and ag.current.stack:
            result = self.in_intention(ag.current, True)
        for it in [h[0] for h in ag.held.values()] + list(ag.feedback) + _pending(ag):
            r = self.in_intention(it, False)
            if r > 0:
                unwait(ag, it)
                if r == 1:
                    ag._resume_now(it)
        return result

    def _remove_event(self, event: Event) -> None:
        ag = self.ag
        if ag.atomic_event is event:
            ag.atomic_event = None
        elif event in ag.events:
            ag.events.remove(event)

    def _replace_event(self, event: Event, kept: Event | None) -> None:
        ag = self.ag
        if ag.atomic_event is event:
            ag.atomic_event = kept
            return
        index = ag.events.index(event)
        if kept is None:
            del ag.events[index]
        else:
            ag.events[index] = kept


def _after_current_changed(ag: AgentState, it: Intention, frame: Frame, nxt: int) -> int:
    """What ExecInt does after an internal action that changed the running intention's
    stack (Jason's removeActionReQueue, then ClrInt): the deed done is the new top's
    current step."""
    if not it.stack:
        ag._intention_done(it)
        return SUSPENDED
    if it.stack[-1] is frame:
        return nxt
    it.stack[-1].step = None
    atomic = it.atomic
    ag.running.append(it)
    if atomic:
        ag.atomic = it
    ag._clr_int(it)
    if not it.stack:
        detach(ag, it)
        ag._intention_done(it)
    return SUSPENDED


def _goal_arg(tc: TermCompiler, node: Any) -> Callable[[Env], Struct]:
    """A goal argument (a literal; a variable bound to one), as a pattern for ``+!G``."""
    build = tc.term(node).build

    def goal(env: Env) -> Struct:
        value = deref(build(env))
        if type(value) is not Struct:
            raise PlanFailure("wrong_arguments", f"first argument must be a literal, not {print_str(value)}")
        return value

    return goal


def _goal_drop_action(name: str, fail: bool) -> None:
    @standard(name, 1)
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        goal = _goal_arg(tc, node.args[0])

        def make(pc: int, labels: dict[int, int]) -> Instruction:
            nxt = pc + 1

            def deed(ag: Any, it: Any, frame: Any) -> int:
                pattern = resolve(goal(frame.env))
                frame.pc = nxt
                _GoalDrop(ag, pattern, fail).run()
                return _after_current_changed(ag, it, frame, nxt)

            return deed

        def first(ag: Any, env: Env, trail: Any) -> bool:
            _GoalDrop(ag, resolve(goal(env)), fail).run()
            return True

        return Query(first, body=make)


_goal_drop_action(".succeed_goal", False)
_goal_drop_action(".fail_goal", True)


# -- dropping ------------------------------------------------------------------------------------
@standard(".drop_intention", 0, 1)
def _drop_intention(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    goal = _goal_arg(tc, node.args[0]) if node.args else None

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def deed(ag: Any, it: Any, frame: Any) -> int:
            frame.pc = nxt
            if goal is None:
                drop(ag, it)
                return SUSPENDED
            return SUSPENDED if drop_intentions(ag, resolve(goal(frame.env))) else nxt

        return deed

    def first(ag: Any, env: Env, trail: Any) -> bool:
        if goal is not None:
            drop_intentions(ag, resolve(goal(env)))
        return True

    return Query(first, body=make)


def drop_intentions(ag: AgentState, pattern: Struct) -> bool:
    """Drop every intention with a goal unifying with ``pattern``; True when the running
    one was among them."""
    current = False
    for it, _ in all_intentions(ag):
        if _has_goal(it, pattern):
            drop(ag, it)
            current = current or it is ag.current
    return current


@standard(".drop_desire", 1)
def _drop_desire(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    goal = _goal_arg(tc, node.args[0])

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def deed(ag: Any, it: Any, frame: Any) -> int:
            frame.pc = nxt
            pattern = resolve(goal(frame.env))
            stop = drop_intentions(ag, pattern)
            _remove_events(ag, pattern)
            return SUSPENDED if stop else nxt

        return deed

    def first(ag: Any, env: Env, trail: Any) -> bool:
        pattern = resolve(goal(env))
        drop_intentions(ag, pattern)
        _remove_events(ag, pattern)
        return True

    return Query(first, body=make)


def drop_desire(ag: AgentState, pattern: Struct) -> None:
    """``.drop_desire``: the intentions with the goal and its events (an ``unachieve``)."""
    drop_intentions(ag, pattern)
    _remove_events(ag, pattern)


@standard(".drop_event", 1)
def _drop_event(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    goal = _goal_arg(tc, node.args[0])

    def first(ag: Any, env: Env, trail: Any) -> bool:
        _remove_events(ag, resolve(goal(env)))
        return True

    return Query(first)


def drop_all_intentions(ag: AgentState) -> None:
    """Every intention but the running one, and the events of intentions."""
    for it, place in all_intentions(ag):
        if it is not ag.current and place in (PENDING_ACTION, PENDING, QUEUED):
            drop(ag, it)
    ag.running.clear()
    ag.atomic = None
    for event in [e for e in ag.events if e[2] is not None and e[2] is not ag.current]:
        ag.events.remove(event)
        drop(ag, event[2])  # type: ignore[arg-type]
    atomic_event = ag.atomic_event
    if atomic_event is not None and atomic_event[2] is not ag.current:
        ag.atomic_event = None
        drop(ag, atomic_event[2])  # type: ignore[arg-type]  # an atomic event has its intention
    for event in [e for e in ag.suspended_events if e[2] is not None]:
        ag.suspended_events.remove(event)
        drop(ag, event[2])  # type: ignore[arg-type]


@standard(".drop_all_intentions", 0)
def _drop_all_intentions(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    def first(ag: Any, env: Env, trail: Any) -> bool:
        drop_all_intentions(ag)
        return True

    return Query(first)


@standard(".drop_all_desires", 0)
def _drop_all_desires(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    def first(ag: Any, env: Env, trail: Any) -> bool:
        drop_all_intentions(ag)
        kept = [e for e in ag.events if e[0] not in (ADD_ACH, DEL_ACH) and e[0] not in _TEST_GOALS]
        for event in ag.events:
            if event not in kept and event[2] is not None:
                drop(ag, event[2])
        ag.events.clear()
        ag.events.extend(kept)
        for event in ag.suspended_events:
            if event[2] is not None:
                drop(ag, event[2])
        ag.suspended_events.clear()
        return True

    return Query(first)


_TEST_GOALS = (TRIGGER_TYPES[("+", "?")], TRIGGER_TYPES[("-", "?")])


# -- intend and desire ---------------------------------------------------------------------------
def _intends(ag: AgentState, goal: Any, ident: Any, env: Env, trail: Trail, suspended: bool) -> Iterator[bool]:
    for it, _ in all_intentions(ag):
        if it.suspended and not suspended:
            continue
        for frame in reversed(it.stack):
            if frame.ttype != ADD_ACH:
                continue
            mark = len(trail)
            if goal(frame.event, env, trail) and (ident is None or ident(it.id, env, trail)):
                yield True
            undo(trail, mark)


def _desires(ag: AgentState, goal: Any, ident: Any, env: Env, trail: Trail) -> Iterator[bool]:
    events: list[Event] = []
    if ag.selected is not None:
        events.append(ag.selected)
    if ag.atomic_event is not None:
        events.append(ag.atomic_event)
    events.extend(ag.events)
    events.extend(ag.suspended_events)
    for ttype, value, it in events:
        if ttype != ADD_ACH:
            continue
        mark = len(trail)
        if goal(value, env, trail) and (ident is None or it is None or ident(it.id, env, trail)):
            yield True
        undo(trail, mark)
    yield from _intends(ag, goal, ident, env, trail, True)


def _goal_query(name: str, search: Callable[..., Iterator[bool]]) -> None:
    @standard(name, 1, 2)
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        goal = tc.term(node.args[0]).match
        ident = tc.term(node.args[1]).match if len(node.args) == 2 else None

        def solve(ag: Any, env: Env, trail: Trail) -> Iterator[bool]:
            yield from search(ag, goal, ident, env, trail)

        def first(ag: Any, env: Env, trail: Trail) -> bool:
            for _ in solve(ag, env, trail):
                return True
            return False

        return Query(first, solve)


_goal_query(".intend", lambda ag, goal, ident, env, trail: _intends(ag, goal, ident, env, trail, False))
_goal_query(".desire", _desires)


# -- suspend and resume ----------------------------------------------------------------------------
@standard(".suspend", 0, 1)
def _suspend(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    goal = _goal_arg(tc, node.args[0]) if node.args else None

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def deed(ag: Any, it: Any, frame: Any) -> int:
            frame.pc = nxt
            if goal is None or suspend(ag, resolve(goal(frame.env))):
                it.suspended = True
                it.wait_for(_SUSPEND_REASON, f"suspended-self-{it.id}", next(ag._seq))
                ag.suspended_ints[it.id] = it
                if it.atomic:
                    ag.atomic = it
                return SUSPENDED
            return nxt

        return deed

    def first(ag: Any, env: Env, trail: Any) -> bool:
        if goal is not None:
            suspend(ag, resolve(goal(env)))
        return True

    return Query(first, body=make)


def suspend(ag: AgentState, pattern: Struct) -> bool:
    """``.suspend(G)`` of the intentions with ``G`` (and the events ``+!G``); True when the
    running intention has ``G`` (the caller suspends it)."""
    for it, place in all_intentions(ag):
        if place in (SELECTED, SELECTED_EVENT, EVENT, PENDING_EVENT) or not _has_goal(it, pattern):
            continue
        it.suspended = True
        if place == QUEUED:
            detach(ag, it)
            it.wait_for(_SUSPEND_REASON, f"suspended-{it.id}", next(ag._seq))
            ag.suspended_ints[it.id] = it
    for event in list(ag.events):
        waiting: Intention | None = event[2]
        if _goal_event(event, pattern) or (waiting is not None and _has_goal(waiting, pattern)):
            ag.events.remove(event)
            ag.suspended_events.append(event)
            if waiting is not None:
                waiting.suspended = True
    current = ag.current
    return current is not None and _has_goal(current, pattern)


@standard(".resume", 1)
def _resume(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    goal = _goal_arg(tc, node.args[0])

    def first(ag: Any, env: Env, trail: Any) -> bool:
        resume(ag, resolve(goal(env)))
        return True

    return Query(first)


def resume(ag: AgentState, pattern: Struct) -> None:
    """``.resume(G)``: the suspended intentions with ``G`` go on (those that also wait go on
    waiting), and the suspended events ``+!G`` go back to the queue."""
    for it in _pending(ag):
        if it.suspended and _has_goal(it, pattern):
            it.suspended = False
            if ag.suspended_ints.pop(it.id, None) is not None:
                it.reason = None
                ag._resume_now(it)
    for event in list(ag.suspended_events):
        owner = event[2]
        if _goal_event(event, pattern) or (owner is not None and _has_goal(owner, pattern)):
            ag.suspended_events.remove(event)
            ag.events.append(event)
            if owner is not None:
                owner.suspended = False


@standard(".suspended", 2)
def _suspended(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    goal_build = tc.term(node.args[0]).build
    out = tc.term(node.args[1]).match

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        pattern = deref(goal_build(env))
        if type(pattern) is not Struct:
            raise PlanFailure("wrong_arguments", "first argument must be a literal")
        pattern = resolve(pattern)
        for it in [h[0] for h in ag.held.values()] + list(ag.feedback):
            if _has_goal(it, pattern):
                return out(atom("act"), env, trail)
        for it in _pending(ag):
            if _has_goal(it, pattern):
                return out(it.reason if it.reason is not None else _NO_REASON, env, trail)
        return False

    return Query(first)


# -- intentions as terms ---------------------------------------------------------------------------
def _state(it: Intention, place: int) -> Any:
    """Jason's ``.intention`` state of an intention at ``place``."""
    if place == PENDING_ACTION:
        return Struct(
            WAITING, (), frozenset((Struct("action", (it.reason if it.reason is not None else _NO_REASON,)),))
        )
    if place == PENDING_EVENT or (place == PENDING and it.suspended):
        return SUSPENDED_STATE
    if place == PENDING:
        reason = it.reason if it.reason is not None else _NO_REASON
        return Struct(WAITING, (), frozenset((Struct("reason", (reason,)),)))
    return RUNNING


def intention_term(ag: AgentState, it: Intention) -> Struct:
    """``intention(Id, [im(Label, {Trigger}, {Body}, Unifier), ...])``, innermost first."""
    return Struct("intention", (it.id, tuple(im_term(f) for f in reversed(it.stack))))


@standard(".current_intention", 1)
def _current_intention(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match

    def first(ag: Any, env: Env, trail: Any) -> bool:
        it = ag.current
        if it is None and ag.selected is not None:
            it = ag.selected[2]
        return it is not None and out(intention_term(ag, it), env, trail)

    return Query(first)


@standard(".intention", 2, 3, 4)
def _intention(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    ident = tc.term(node.args[0]).match
    state = tc.term(node.args[1]).match
    stack = tc.term(node.args[2]).match if len(node.args) >= 3 else None
    only_current = len(node.args) == 4 and isinstance(node.args[3], s.Lit) and node.args[3].functor == "current"

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[bool]:
        if only_current:
            it = ag.current if ag.current is not None else (ag.selected[2] if ag.selected is not None else None)
            found = [] if it is None else [(it, SELECTED)]
        else:
            found = all_intentions(ag)
        for it, place in found:
            mark = len(trail)
            if (
                ident(it.id, env, trail)
                and state(RUNNING if only_current else _state(it, place), env, trail)
                and (stack is None or stack(intention_term(ag, it).args[1], env, trail))
            ):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)
