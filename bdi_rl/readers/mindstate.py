"""An agent's mind as a reader rebuilds it from the trace: its beliefs (with their sources)
and intentions, folded event by event (:meth:`MindState.apply`), with the latest reasoning
cycle, plan selection and stacks when the trace level recorded them. The run index keeps
snapshots of it and folds the events since the nearest one (``readers.runindex``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bdi_rl.trace.kinds import (
    AGENT_START,
    BELIEF_ADD,
    BELIEF_DEL,
    CYCLE,
    INTENTION_END,
    INTENTION_FAIL,
    INTENTION_START,
    INTENTIONS,
    OPTIONS,
)

__all__ = ["MindState", "belief_sources"]


@dataclass
class MindState:
    """What an agent believed and intended after one of its events."""

    beliefs: dict[str, list[str]] = field(default_factory=dict)
    """belief text -> its sources, in the order they told it (Jason: one belief, several
    sources; it goes when its last source does)"""
    intentions: list[dict[str, Any]] = field(default_factory=list)
    """running plans, oldest first: trigger, plan label, source"""
    rl: dict[str, Any] | None = None
    """the latest ``rl.step`` up to this point (state, action, Q row, epsilon)"""
    cycle: dict[str, Any] | None = None
    """``cycle`` level: the latest reasoning cycle (its events taken, the events pending)"""
    options: dict[str, Any] | None = None
    """``cycle`` level: the latest plan selection (relevant, applicable, selected plans)"""
    stacks: list[dict[str, Any]] | None = None
    """``cycle`` level: every intention's stack of intended means, as last recorded"""

    def copy(self) -> MindState:
        return MindState(
            {b: list(s) for b, s in self.beliefs.items()},
            [dict(i) for i in self.intentions],
            self.rl,
            self.cycle,
            self.options,
            self.stacks,
        )

    def apply(self, event: dict[str, Any]) -> None:
        kind, data = event["kind"], event["data"]
        if kind == AGENT_START:  # a new mind (the run was resumed): nothing carries over
            self.beliefs.clear()
            self.intentions.clear()
            self.cycle = self.options = self.stacks = None
        elif kind == CYCLE:
            self.cycle = data
        elif kind == OPTIONS:
            self.options = data
        elif kind == INTENTIONS:
            self.stacks = data.get("intentions")
        elif kind == BELIEF_ADD:
            # sorted (belief_sources), so that a mind folded from a keyframe and one folded
            # from further back show the same list
            held = self.beliefs.get(data["belief"], [])
            self.beliefs[data["belief"]] = sorted({*held, *belief_sources(data)})
        elif kind == BELIEF_DEL:
            known = self.beliefs.get(data["belief"])
            if known is not None:
                gone = belief_sources(data)
                known[:] = [s for s in known if s not in gone]
                if not known:
                    del self.beliefs[data["belief"]]
        elif kind == INTENTION_START:
            self.intentions.append(
                {"trigger": data.get("trigger"), "plan": data.get("plan"), "source": data.get("source", "self")}
            )
        elif kind == INTENTION_END or kind == INTENTION_FAIL:
            plan = data.get("plan")
            for i in range(len(self.intentions) - 1, -1, -1):
                if self.intentions[i]["plan"] == plan:
                    del self.intentions[i]
                    break


def belief_sources(data: dict[str, Any]) -> list[str]:
    """A belief event's sources: all of them when it names several (sorted: the mind holds
    them as a set, a keyframe lists them in no order of their coming), else its one."""
    several = data.get("sources")
    return sorted(str(s) for s in several) if isinstance(several, list) and several else [data.get("source", "self")]
