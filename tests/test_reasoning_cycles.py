"""The two reasoning cycles (issue 27): Jason's (the default) and the fast one, chosen per
agent (``[[agents]] cycle``). What a host and the stall watch see of a mind must not depend
on the cycle: what it waits for (``bdi.mind.describe_waits``), whether it can still act
(``can_act``), its intentions in the trace. Jason's own behaviour is checked program by
program in tests/test_jason_corpus.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.bdi.mind import alive, can_act, describe_waits, load_mind
from bdi_rl.bdi.runtime import Actions, Host
from bdi_rl.bdi.runtime.agent import AGENT_CLASSES, FastAgent, load_agent
from bdi_rl.bdi.runtime.parser import parse_text
from bdi_rl.spec import SpecError, parse_spec
from tests.jason_corpus import main as corpus_main

CYCLES = ["jason", "fast"]


class Capture(Host):
    def __init__(self) -> None:
        self.printed: list[str] = []
        self.sent: list[tuple] = []

    def print(self, agent, text: str) -> None:
        self.printed.append(text)

    def send(self, agent, receiver, performative, content, *, msg_id=None, in_reply_to=None) -> None:
        self.sent.append((receiver, performative, content, msg_id))

    def now(self) -> float:
        return 0.0


def _agent(cycle: str, text: str, actions: Actions | None = None) -> tuple[object, Capture]:
    host = Capture()
    return AGENT_CLASSES[cycle]("a", parse_text(text), actions or Actions(), host), host


@pytest.mark.parametrize("cycle", CYCLES)
def test_the_stall_watch_sees_what_each_intention_waits_for(cycle: str) -> None:
    agent, _ = _agent(
        cycle,
        """
!ev. !formula. !ask. !paused.
+!ev <- .wait({+go}).
+!formula <- .wait(n(X) & X > 3).
+!ask <- .send(bob, askOne, value(X), A).
+!paused <- .suspend.
""",
    )
    agent.run(max_cycles=100)
    waits = describe_waits(agent, lambda msg_id: "bob")
    assert "waits for {+go/0} (.wait)" in waits
    assert "waits until a formula holds (.wait)" in waits
    assert "waits for an answer to askOne from bob" in waits
    assert any("suspended (.suspend)" in w for w in waits), waits
    assert not can_act(agent) and alive(agent)  # only something from outside can wake it
    agent.add_percept("go")
    assert can_act(agent)  # the +go event (and, on Jason's cycle, the waiter's resumption)
    agent.run(max_cycles=100)
    assert "waits for {+go/0} (.wait)" not in describe_waits(agent)


@pytest.mark.parametrize("cycle", CYCLES)
def test_an_atomic_intention_that_waits_holds_the_others(cycle: str) -> None:
    agent, host = _agent(
        cycle,
        """
!a. !b.
@at[atomic] +!a <- .print(a1); .wait({+go}); .print(a2).
+!b <- .print(b1).
""",
    )
    agent.run(max_cycles=100)
    assert host.printed == ["a1"]
    assert not can_act(agent)
    assert any("wait for an atomic plan to end" in w for w in describe_waits(agent)), describe_waits(agent)
    agent.add_percept("go")
    agent.run(max_cycles=100)
    assert host.printed == ["a1", "a2", "b1"]


@pytest.mark.parametrize("cycle", CYCLES)
def test_an_intention_waiting_for_its_own_event_can_act(cycle: str) -> None:
    """Jason's cycle leaves an intention that posted a sub-goal in the event queue until the
    goal's plan is selected: it is neither running nor stalled."""
    agent, host = _agent(cycle, "!g.\n+!g <- !h; .print(done).\n+!h <- .print(h).\n")
    agent.cycle()
    assert not describe_waits(agent)
    if cycle == "jason":  # (the fast cycle ran it all in that first cycle)
        assert can_act(agent) and agent.events and not agent.running
    agent.run(max_cycles=100)
    assert host.printed == ["h", "done"]


def test_the_cycles_differ_only_in_interleaving() -> None:
    """One deed of each intention in turn (Jason) or each until it blocks (fast)."""
    text = "!a. !b.\n+!a <- .print(a1); .print(a2); .print(a3).\n+!b <- .print(b1); .print(b2).\n"
    printed = {}
    for cycle in CYCLES:
        agent, host = _agent(cycle, text)
        agent.run(max_cycles=100)
        printed[cycle] = host.printed
    assert printed["jason"] == ["a1", "a2", "b1", "a3", "b2"]
    assert printed["fast"] == ["a1", "a2", "a3", "b1", "b2"]


def test_load_agent_and_load_mind_take_the_cycle(tmp_path: Path) -> None:
    path = tmp_path / "a.asl"
    path.write_text("!g.\n+!g <- .print(x).\n")
    assert type(load_agent(path)).__name__ == "Agent"  # Jason's cycle by default
    assert isinstance(load_agent(path, cycle="fast"), FastAgent)
    assert isinstance(load_mind(path, Actions(), "a", cycle="fast"), FastAgent)
    assert not isinstance(load_mind(path, Actions(), "a"), FastAgent)


def _spec(**group: object) -> dict:
    return {"name": "x", "env": {"id": "FrozenLake-v1"}, "agents": [{"name": "a", **group}]}


@pytest.mark.parametrize("value", ["jsaon", 3, ""])
def test_a_bad_cycle_in_the_spec_is_one_line_naming_the_field(value: object) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(cycle=value))
    assert str(err.value).startswith("agents[0].cycle: must be one of 'jason', 'fast', got ")
    assert "\n" not in str(err.value)


def test_each_role_has_its_default_cycle_and_the_spec_may_choose() -> None:
    spec = parse_spec(
        {
            "name": "x",
            "env": {"id": "FrozenLake-v1"},
            "agents": [
                {"name": "learner"},
                {"name": "boss", "role": "coordinator"},
                {"name": "careful", "cycle": "jason"},
                {"name": "quick", "role": "coordinator", "cycle": "fast"},
            ],
        }
    )
    assert [g.reasoning_cycle() for g in spec.agents] == ["fast", "jason", "jason", "fast"]


@pytest.mark.parametrize("cycle", CYCLES)
def test_the_corpus_harness_runs_either_cycle(cycle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert corpus_main(["--cycle", cycle, "cycle/round_robin"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[0] == ("same" if cycle == "jason" else "different")
