"""What a host may observe of a mind (tracing): subclass and override what you need.

Set with :meth:`Agent.set_listener <bdi_rl.bdi.runtime.agent.Agent.set_listener>`, the one
place that decides: without a listener the hot paths call no hook and test no flag.
"""

from __future__ import annotations

from typing import Any

from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, SELF, Annots, Struct, Terms, sources, term_str
from bdi_rl.bdi.runtime.triggers import TRIGGER_TEXT

#: Event codes a recorder receives (``Listener.recorder``), in the order bdi-rl's trace keeps
#: them (``bdi_rl.trace.kinds.RECORD_KINDS`` starts with the same six).
BELIEF_ADDED, BELIEF_REMOVED, GOAL_ADDED, PLAN_STARTED, PLAN_ENDED, ACTION_RAN = range(6)


class Recorder:
    """What a listener on a hot path may offer (:attr:`Listener.recorder`): for an event whose
    key is in ``ids`` the runtime appends its code to ``ops`` and the id to ``refs`` itself,
    with no call at all; for any other it calls the listener's hook, which records the event
    and adds its key. The keys, as the runtime builds them:

    - a belief added or removed: ``(functor, args, annots)`` (the annotations added or removed)
    - a goal: ``("!", functor, args, annots)``
    - a plan pushed: ``(plan name, trigger type, event functor, event args, event annots)``
    - a plan's frame done: ``("-", plan name)``
    - a host action: ``(name, args, result)`` (not recorded by the runtime when not hashable)
    """

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.ops: list[int] = []
        self.refs: list[int] = []
        self.paused = False
        """True while the listener runs plan code that is not the agent's (nothing recorded)"""


class Recording:
    """A listener compiled into an agent's code (``Agent(..., listener=...)``): the plan
    bodies, host-action calls and the runtime's step paths compiled with one record what
    they do themselves, as the wrappers of :func:`~bdi_rl.bdi.runtime.tracing.set_listener`
    would, without a wrapper frame: they hold these bound methods and append an event's code
    and id when its key is known, and call the listener's hook otherwise (which defines it)."""

    __slots__ = ("listener", "recorder", "ids_get", "op", "ref")

    def __init__(self, listener: Listener, recorder: Recorder) -> None:
        self.listener = listener
        self.recorder = recorder
        self.ids_get = recorder.ids.get
        self.op = recorder.ops.append
        self.ref = recorder.refs.append


def compiled_recording(listener: Listener | None) -> Recording | None:
    """How ``listener`` is compiled in (None: no listener). A listener without a recorder
    gets an empty one: every event reaches its hooks."""
    if listener is None:
        return None
    return Recording(listener, listener.recorder or Recorder())


class Listener:
    """The readable hooks (``belief_added`` ...) are what most listeners override. The runtime
    calls the raw ``on_*`` hooks, whose defaults build the terms and texts and call them; a
    listener on a hot path (bdi-rl's trace) overrides the raw ones and builds only what it
    has not seen before."""

    #: Whether the runtime reports plan selections (:meth:`on_select`): they cost a look at
    #: every relevant plan's context, so only a listener that wants them gets them.
    wants_options = False
    #: A :class:`Recorder` the runtime appends known events to without calling a hook.
    recorder: Recorder | None = None

    # -- raw hooks (what the runtime calls) ------------------------------------------------------
    def on_belief_added(self, agent: Any, functor: str, args: Terms, annots: Annots) -> None:
        """``annots``: the annotations that are new (the event's)."""
        who = sources(annots)
        self.belief_added(agent, Struct(functor, args, annots), who[0] if who else SELF)

    def on_belief_removed(self, agent: Any, functor: str, args: Terms, annots: Annots) -> None:
        """``annots``: the annotations removed."""
        who = sources(annots)
        self.belief_removed(agent, Struct(functor, args, annots), who[0] if who else SELF)

    def on_percept_replaced(self, agent: Any, functor: str, old: Terms | None, new: Terms | None) -> None:
        """The percept ``functor(old)`` was swapped for ``functor(new)`` (None: that half
        did not change the belief base)."""
        if old is not None:
            self.on_belief_removed(agent, functor, old, ANNOTS_PERCEPT)
        if new is not None:
            self.on_belief_added(agent, functor, new, ANNOTS_PERCEPT)

    def on_push(self, agent: Any, plan: Any, ttype: int, event: Struct, intention: Any = None) -> None:
        """``plan`` (a compiled plan) was selected for the event and pushed on ``intention``
        (a new intention is not yet among the agent's running ones)."""
        who = sources(event.annots)
        self.intention_started(agent, plan.name, self.trigger_text(TRIGGER_TEXT[ttype], event), who[0] if who else SELF)

    def on_select(self, agent: Any, ttype: int, event: Struct, selected: Any) -> None:
        """A plan was chosen for the event (``selected``: the compiled plan, None when no
        plan was applicable); only called when :attr:`wants_options`."""

    # -- readable hooks ----------------------------------------------------------------------------
    def belief_added(self, agent: Any, belief: Any, source: Any) -> None:
        """``belief`` (a Struct with the annotations just added) entered the belief base."""

    def belief_removed(self, agent: Any, belief: Any, source: Any) -> None:
        """``belief`` (with the annotations removed) left the belief base."""

    def goal_added(self, agent: Any, goal: Any, new_intention: bool) -> None:
        """``!goal`` (``new_intention``: ``!!goal`` or an achieve message) was posted."""

    def trigger_text(self, op: str, event: Any) -> str:
        """How ``trigger`` reaches :meth:`intention_started`: ``op`` (``+!``, ``-`` ...) and
        the event's term (a Struct); Jason's text (annotations included) unless overridden."""
        return op + term_str(event)

    def intention_started(self, agent: Any, plan: str, trigger: str, source: Any) -> None:
        """A plan (``plan``: its label) was selected for ``trigger`` and pushed."""

    def intention_ended(self, agent: Any, plan: str) -> None:
        """The plan's frame left the intention: its body finished, or a failure plan that
        handled the plan's goal finished (each frame it unwound is reported, innermost first)."""

    def intention_failed(self, agent: Any, report: dict[str, Any]) -> None:
        """An intention was dropped: no failure plan handled its failure (``report`` holds
        plan, trigger, error, message, file, line, and ``frames``: the plans of the
        intention's frames, innermost first)."""

    def action_executed(self, agent: Any, name: str, args: Terms, result: Any) -> None:
        """An internal action registered by the host, or an environment action, ran."""

    def cycle_starting(self, agent: Any) -> None:
        """A reasoning cycle is about to run (its events are still pending)."""

    def cycle(self, agent: Any, n: int) -> None:
        """Reasoning cycle ``n`` ran."""
