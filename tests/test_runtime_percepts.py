"""Percepts on bdi_rl.bdi.runtime: the in-place swap of a one-belief percept raises the same
events, wakes the same waiters and (with a listener) traces the same changes as the general
path through the belief base."""

from __future__ import annotations

from typing import Any

import pytest

from bdi_rl.bdi.runtime import Actions, Agent, Host, Listener
from bdi_rl.bdi.runtime.agent import AGENT_CLASSES
from bdi_rl.bdi.runtime.parser import parse_text
from bdi_rl.bdi.runtime.terms import term_str

PLANS = """
!watch.
+!watch <- .wait({+state(3)}); .print("saw 3"); .wait(state(S) & S > 4); .print("above 4: ", S).
+state(S) <- .print("+", S).
-state(S) <- .print("-", S).
"""


class Capture(Host):
    def __init__(self) -> None:
        self.printed: list[str] = []

    def print(self, agent: Agent, text: str) -> None:
        self.printed.append(text)


class Beliefs(Listener):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def belief_added(self, agent: Any, belief: Any, source: Any) -> None:
        self.seen.append("+" + term_str(belief))

    def belief_removed(self, agent: Any, belief: Any, source: Any) -> None:
        self.seen.append("-" + term_str(belief))


def _run(listener: Listener | None, cycle: str = "jason") -> tuple[list[str], list[str]]:
    host = Capture()
    agent = AGENT_CLASSES[cycle]("a", parse_text(PLANS), Actions(), host)
    if listener is not None:
        agent.set_listener(listener)
    agent.run()
    for s in (1, 2, 2, 3, 5):
        agent.replace_percept("state", (s,))
        agent.run()
    assert agent.belief_texts() == ["state(5)[source(percept)]"]
    return host.printed, agent.belief_texts()


@pytest.mark.parametrize(
    "cycle, expected",
    [
        # Jason: the woken waiter goes on at the start of the next cycle, before the
        # reactions to the change (one new intention per cycle, in the order of the events)
        ("jason", ["+1", "-1", "+2", "saw 3", "-2", "+3", "above 4: 5", "-3", "+5"]),
        # fast: the reactions first (-old before +new), the woken waiter after them
        ("fast", ["+1", "-1", "+2", "-2", "+3", "saw 3", "-3", "+5", "above 4: 5"]),
    ],
)
def test_swap_raises_events_and_wakes_waiters(cycle: str, expected: list[str]) -> None:
    printed, _ = _run(None, cycle)
    # an unchanged percept (2 twice) raises nothing
    assert printed == expected


@pytest.mark.parametrize("cycle", ["jason", "fast"])
def test_listener_sees_the_swap(cycle: str) -> None:
    listener = Beliefs()
    untraced, _ = _run(None, cycle)
    traced, _ = _run(listener, cycle)
    assert sorted(traced) == sorted(untraced)
    assert listener.seen == [
        "+state(1)[source(percept)]",
        "-state(1)[source(percept)]",
        "+state(2)[source(percept)]",
        "-state(2)[source(percept)]",
        "+state(3)[source(percept)]",
        "-state(3)[source(percept)]",
        "+state(5)[source(percept)]",
    ]


def test_a_percept_also_told_keeps_its_other_source() -> None:
    agent = Agent("a", parse_text(""), Actions(), Capture())
    agent.replace_percept("state", (1,))
    agent.deliver("bob", "tell", "state(1)")
    agent.run()
    agent.replace_percept("state", (2,))
    assert agent.belief_texts() == ['state(1)[source("bob")]', "state(2)[source(percept)]"]
