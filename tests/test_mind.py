"""The traced AgentSpeak mind: load errors, what the trace records, scheduling, failures."""

from __future__ import annotations

from pathlib import Path

import agentspeak as asp
import agentspeak.stdlib as asp_stdlib
import pytest

from bdi_rl.bdi.mind import AslError, load_mind
from bdi_rl.trace.events import TraceLevel
from bdi_rl.trace.tracer import Tracer


def _actions(log: list | None = None) -> asp.Actions:
    actions = asp.Actions(asp_stdlib.actions)
    actions.add_procedure(".note", (int,), lambda x: log.append(x) if log is not None else None)
    actions.add_procedure(".boom", (), lambda: 1 / 0)
    return actions


def _mind(tmp_path: Path, source: str, level=TraceLevel.STEP, log=None):
    path = tmp_path / "agent.asl"
    path.write_text(source)
    tracer = Tracer("run", "a@localhost", level)
    return load_mind(path, _actions(log), "a", tracer), tracer


def _run(mind, cycles=10_000):
    for _ in range(cycles):
        if not mind.step():
            break


def test_syntax_error_names_file_and_line(tmp_path):
    with pytest.raises(AslError) as err:
        _mind(tmp_path, "!start.\n+!start <- .note(1)\n+!x <- true.\n")
    message = str(err.value)
    assert "agent.asl:3:" in message and "\n" not in message


def test_unknown_internal_action_is_a_load_error(tmp_path):
    with pytest.raises(AslError, match=r"agent.asl:2:.*\.nope/1.*unknown internal action"):
        _mind(tmp_path, "!start.\n+!start <- .nope(1).\n")


def test_wrong_arity_is_an_unknown_action(tmp_path):
    with pytest.raises(AslError, match=r"\.note/2"):
        _mind(tmp_path, "!start.\n+!start <- .note(1, 2).\n")


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(AslError, match="no such plan file"):
        load_mind(tmp_path / "absent.asl", _actions(), "a")
    binary = tmp_path / "bin.asl"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(AslError, match="bin.asl"):
        load_mind(binary, _actions(), "a")


def test_included_plans_keep_their_labels_and_their_file(tmp_path):
    """``{ include("lib/x.asl") }`` is resolved beside the including file (as asl/*.asl share
    asl/lib/): its plans run, are traced with their own labels and fail naming their own line."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "shared.asl").write_text("@shared +!go <- .note(2).\n@shared_bad +!bad <- .boom.\n")
    log: list = []
    mind, tracer = _mind(tmp_path, '!start.\n!bad.\n{ include("lib/shared.asl") }\n'
                                   "@start +!start <- .note(1); !go.\n", log=log)
    _run(mind)
    assert log == [1, 2]
    started = [e["data"]["plan"] for e in tracer.pending if e["kind"] == "intention.start"]
    assert {"start", "shared", "shared_bad"} <= set(started)
    fails = [e["data"] for e in tracer.pending if e["kind"] == "intention.fail"]
    assert fails[0]["plan"] == "shared_bad" and "shared.asl:2" in fails[0]["error"]


def test_a_missing_include_is_one_line_naming_it(tmp_path):
    with pytest.raises(AslError) as err:
        _mind(tmp_path, '!start.\n{ include("lib/absent.asl") }\n+!start <- .note(1).\n')
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'lib' / 'absent.asl'}: no such plan file"), message
    assert f"(included at {tmp_path / 'agent.asl'}:2)" in message and "\n" not in message


def test_trace_shows_goals_intentions_and_beliefs(tmp_path):
    log: list = []
    mind, tracer = _mind(tmp_path, """
count(0).
!start.
@start +!start <- !tick; !tick.
@tick +!tick : count(N) <- -+count(N + 1); .note(N).
""", log=log)
    _run(mind)
    assert log == [0, 1]
    kinds = [(e["kind"], e["data"]) for e in tracer.pending]
    assert ("goal.add", {"goal": "start", "source": "self"}) in kinds
    assert ("intention.start", {"trigger": "+!tick", "plan": "tick", "source": "self"}) in kinds
    assert ("intention.end", {"plan": "start"}) in kinds
    beliefs = [d["belief"] for k, d in kinds if k == "belief.add"]
    assert beliefs == ["count(0)", "count(1)", "count(2)"]
    assert [d["belief"] for k, d in kinds if k == "belief.del"] == ["count(0)", "count(1)"]
    assert mind.belief_texts() == ["count(2)"]


def test_cycle_level_records_every_reasoning_cycle(tmp_path):
    mind, tracer = _mind(tmp_path, "!start.\n@start +!start <- .note(1); .note(2).\n",
                         level=TraceLevel.CYCLE)
    _run(mind)
    cycles = [e["data"] for e in tracer.pending if e["kind"] == "cycle"]
    assert len(cycles) == mind.cycles >= 2
    assert [c["n"] for c in cycles] == list(range(1, len(cycles) + 1))
    assert cycles[0]["plan"] == "start" and cycles[0]["line"] == 2


def test_intentions_take_turns(tmp_path):
    """A long loop must not starve a reaction (python-agentspeak always runs the first one)."""
    log: list = []
    mind, _ = _mind(tmp_path, """
n(0).
!loop.
!react.
@loop +!loop <- while (n(N) & N < 5) { -+n(N + 1); .note(N) }.
@react +!react <- .note(100).
""", log=log)
    _run(mind)
    assert 100 in log and log.index(100) < 4, log


def test_failing_plan_drops_only_its_intention(tmp_path):
    log: list = []
    mind, tracer = _mind(tmp_path, """
!bad.
!good.
@bad +!bad <- .boom; .note(1).
@good +!good <- .note(2); .note(3).
""", log=log)
    _run(mind)
    assert log == [2, 3]
    fails = [e["data"] for e in tracer.pending if e["kind"] == "intention.fail"]
    assert fails and fails[0]["plan"] == "bad" and "agent.asl:4" in fails[0]["error"]
    assert "ZeroDivisionError" in fails[0]["error"]
    assert mind.failures and not mind.intentions


def test_percepts_replace_and_trigger_plans(tmp_path):
    log: list = []
    mind, tracer = _mind(tmp_path, "+seen(X) <- .note(X).\n", log=log)
    percept = frozenset([asp.Literal("source", (asp.Literal("percept"),))])
    mind.replace_percept(asp.Literal("pos", (1, 2), percept))  # no plan reacts: fast path
    mind.replace_percept(asp.Literal("pos", (2, 2), percept))
    mind.replace_percept(asp.Literal("seen", (7,), percept))   # a plan reacts
    _run(mind)
    assert log == [7]
    assert "pos(2, 2)[source(percept)]" in mind.belief_texts()
    assert "pos(1, 2)[source(percept)]" not in mind.belief_texts()
    dels = [e["data"] for e in tracer.pending if e["kind"] == "belief.del"]
    assert dels == [{"belief": "pos(1, 2)", "source": "percept"}]



def test_belief_del_records_the_belief_the_plan_removed(tmp_path):
    """A removal whose variables are bound by the plan (``-experience(E)[source(P)]``) is
    traced as exactly the belief it removed, so replaying the trace gives the real belief base."""
    from agentspeak.runtime import Intention

    mind, tracer = _mind(tmp_path, "+told(E)[source(P)] <- -told(E)[source(P)].\n")
    for peer, text in [("p1", "aaa"), ("p2", "bbb"), ("p1", "ccc")]:
        term = asp.Literal("told", (text,), frozenset([asp.Literal("source", (peer,))]))
        mind.call(asp.Trigger.addition, asp.GoalType.belief, term, Intention())
    _run(mind)
    deleted = [(e["data"]["belief"], e["data"]["source"]) for e in tracer.pending if e["kind"] == "belief.del"]
    assert sorted(deleted) == [('told("aaa")', "p1"), ('told("bbb")', "p2"), ('told("ccc")', "p1")]
    assert not mind.beliefs[("told", 1)]
