"""The traced mind (bdi.mind on bdi.runtime): load errors, what the trace records at each
level, scheduling, failures, the spec's beliefs."""

from __future__ import annotations

import pytest

from bdi_rl.bdi.mind import AslError, belief_texts, check_asl, load_mind
from bdi_rl.bdi.mindtrace import TraceListener
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime.terms import Struct
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.steps import expanded
from bdi_rl.trace.tracer import Tracer


def _actions(log: list | None = None) -> Actions:
    actions = Actions()
    actions.add_procedure(".note", (None,), lambda x: log.append(x) if log is not None else None)
    actions.add_procedure(".boom", (), lambda: 1 / 0)
    return actions


def _mind(tmp_path, source: str, level=TraceLevel.STEP, log=None, **kwargs):
    path = tmp_path / "agent.asl"
    path.write_text(source)
    tracer = Tracer("run", "a@localhost", level)
    return load_mind(path, _actions(log), "a", tracer, **kwargs), tracer


def _run(mind, cycles=100_000):
    mind.run(max_cycles=cycles)


def _all(tracer) -> list[dict]:
    """The tracer's events as format 1 has them: its open step record closed, records expanded."""
    tracer.flush_record()
    return expanded(tracer.pending)


def _events(tracer, kind):
    return [e["data"] for e in _all(tracer) if e["kind"] == kind]


def test_syntax_error_names_file_and_line(tmp_path):
    with pytest.raises(AslError) as err:
        _mind(tmp_path, "!start.\n+!start <- .note(1)\n+!x <- true.\n")
    message = str(err.value)
    assert "agent.asl:3:" in message and "\n" not in message


def test_unknown_internal_action_is_a_load_error(tmp_path):
    with pytest.raises(AslError, match=r"agent.asl:2: unknown internal action \.nope"):
        _mind(tmp_path, "!start.\n+!start <- .nope(1).\n")


def test_wrong_arity_is_a_load_error(tmp_path):
    with pytest.raises(AslError, match=r"agent.asl:2: \.note takes 1 argument\(s\), got 2"):
        _mind(tmp_path, "!start.\n+!start <- .note(1, 2).\n")


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(AslError, match="no such plan file"):
        load_mind(tmp_path / "absent.asl", _actions(), "a")
    binary = tmp_path / "bin.asl"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(AslError, match="bin.asl: not a text file"):
        load_mind(binary, _actions(), "a")


def test_an_initial_goal_no_plan_is_for_is_refused_before_a_run(tmp_path):
    path = tmp_path / "agent.asl"
    path.write_text("+!other <- true.\n!start.\n")
    with pytest.raises(AslError, match=r"agent.asl:2: no applicable plan for \+!start$"):
        check_asl(path, _actions())
    path.write_text("!start.\n+!start <- true.\n")
    assert check_asl(path, _actions()).events  # posted, not run


def test_included_plans_keep_their_labels_and_their_file(tmp_path):
    """``{ include("lib/x.asl") }`` is resolved beside the including file (as asl/*.asl share
    asl/lib/): its plans run, are traced with their own labels and fail naming their own line."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "shared.asl").write_text("@shared +!go <- .note(2).\n@shared_bad +!bad <- .boom.\n")
    log: list = []
    mind, tracer = _mind(
        tmp_path, '!start.\n!bad.\n{ include("lib/shared.asl") }\n@start +!start <- .note(1); !go.\n', log=log
    )
    _run(mind)
    assert log == [1, 2]
    assert {"start", "shared", "shared_bad"} <= {d["plan"] for d in _events(tracer, "intention.start")}
    fails = _events(tracer, "intention.fail")
    assert fails[0]["plan"] == "shared_bad" and "shared.asl:2:" in fails[0]["error"]


def test_an_included_file_edited_between_loads_is_read_again(tmp_path):
    """Parses are kept per plan text (every agent of a group loads the same file), but an
    included file changed since is parsed again, not served stale."""
    (tmp_path / "lib").mkdir()
    shared = tmp_path / "lib" / "shared.asl"
    source = '!start.\n{ include("lib/shared.asl") }\n'
    shared.write_text("+!start <- .note(1).\n")
    log: list = []
    mind, _ = _mind(tmp_path, source, log=log)
    _run(mind)
    shared.write_text("+!start <- .note(2).\n")
    mind, _ = _mind(tmp_path, source, log=log)
    _run(mind)
    assert log == [1, 2]


def test_a_missing_include_is_one_line_naming_it(tmp_path):
    with pytest.raises(AslError) as err:
        _mind(tmp_path, '!start.\n{ include("lib/absent.asl") }\n+!start <- .note(1).\n')
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'lib' / 'absent.asl'}: no such plan file"), message
    assert f"(included at {tmp_path / 'agent.asl'}:2)" in message and "\n" not in message


def test_trace_shows_goals_intentions_and_beliefs(tmp_path):
    log: list = []
    mind, tracer = _mind(
        tmp_path,
        """
count(0).
!start.
@start +!start <- !tick; !tick; !greet(bob, [1, 2], "a, b").
@tick +!tick : count(N) <- -+count(N + 1); .note(N).
+!greet(_, _, _) <- true.
""",
        log=log,
    )
    _run(mind)
    assert log == [0, 1]
    kinds = [(e["kind"], e["data"]) for e in _all(tracer)]
    assert ("goal.add", {"goal": "start", "source": "self"}) in kinds
    assert ("intention.start", {"trigger": "+!tick", "plan": "tick", "source": "self"}) in kinds
    assert ("intention.end", {"plan": "start"}) in kinds
    # the text as bdi-rl's traces have always written it; a plan without a label by its trigger
    assert (
        "intention.start",
        {"trigger": '+!greet(bob, [1, 2], "a, b")', "plan": "+!greet/3", "source": "self"},
    ) in kinds
    assert [d["belief"] for k, d in kinds if k == "belief.add"] == ["count(0)", "count(1)", "count(2)"]
    assert [d["belief"] for k, d in kinds if k == "belief.del"] == ["count(0)", "count(1)"]
    assert belief_texts(mind) == ["count(2)[source(self)]"]


def test_below_step_level_the_mind_runs_unwrapped(tmp_path):
    """Zero cost where nothing is recorded: no listener, so the runtime's plain methods run."""
    mind, tracer = _mind(tmp_path, "!start.\n+!start <- +b(1); .boom.\n", level=TraceLevel.EPISODE)
    assert mind.listener is None and "_bb_add" not in mind.__dict__
    _run(mind)
    tracer.flush_record()
    assert {e["kind"] for e in tracer.pending} == {"intention.fail"}  # failures: every level
    assert not len(tracer.record)
    stepped, _ = _mind(tmp_path, "!start.\n+!start <- true.\n")
    assert isinstance(stepped.listener, TraceListener)


def test_cycle_level_records_every_reasoning_cycle(tmp_path):
    mind, tracer = _mind(
        tmp_path,
        "!start.\n@start +!start <- .note(1); !sub; .note(2).\n@sub +!sub <- .note(3).\n",
        level=TraceLevel.CYCLE,
    )
    _run(mind)
    cycles = _events(tracer, "cycle")
    assert [c["n"] for c in cycles] == list(range(1, len(cycles) + 1)) and cycles
    assert all(set(c) == {"n", "plan", "depth", "line", "intentions", "events", "pending"} for c in cycles)
    assert cycles[0]["events"] == ["+!start"]  # format 2: the events each cycle took
    options = _events(tracer, "options")
    assert {"event": "+!sub", "relevant": ["sub"], "applicable": ["sub"], "selected": "sub"} in options
    stacks = _events(tracer, "intentions")
    assert [[m["plan"] for m in it["means"]] for s in stacks for it in s["intentions"]].count(["start", "sub"]) == 1
    assert stacks[-1] == {"intentions": []}


@pytest.mark.parametrize("cycle", ["jason", "fast"])
def test_intentions_take_turns(tmp_path, cycle):
    """A long loop must not starve a reaction. Jason's cycle runs one deed of each intention
    in turn (the reaction's one deed comes before the loop's second); the fast one runs an
    intention until it blocks, raises an event or spends its slice of loop iterations
    (docs/AGENTSPEAK.md), then the others run."""
    log: list = []
    mind, _ = _mind(
        tmp_path,
        """
n(0).
!loop.
!react.
@loop +!loop <- while (n(N) & N < 3000) { -+n(N + 1); .note(N) }.
@react +!react <- .note(-1).
""",
        log=log,
        cycle=cycle,
    )
    _run(mind)
    assert len(log) == 3001
    if cycle == "jason":
        assert log.index(-1) == 0
    else:
        assert 0 < log.index(-1) < 2000, log.index(-1)


def test_failing_plan_drops_only_its_intention_traced_frame_by_frame(tmp_path):
    log: list = []
    mind, tracer = _mind(
        tmp_path,
        """
!bad.
!good.
@bad +!bad <- !worse.
@worse +!worse <- .boom; .note(1).
@good +!good <- .note(2); .note(3).
""",
        log=log,
    )
    _run(mind)
    assert log == [2, 3]
    fails = _events(tracer, "intention.fail")
    assert [f["plan"] for f in fails] == ["worse", "bad"]  # innermost first, as readers unwind
    assert fails[0]["error"].startswith(f"{tmp_path / 'agent.asl'}:5: ") and "ZeroDivisionError" in fails[0]["error"]
    assert mind.host.failures == [fails[0]["error"]] and not mind.running


def test_a_failure_plan_handles_the_failure_and_every_frame_it_unwinds_ends(tmp_path):
    """Readers keep a stack of running plans (intention.start pushes, intention.end pops by
    label): the frames a failure plan removes end too, so that stack empties."""
    log: list = []
    mind, tracer = _mind(
        tmp_path, "!go.\n@go +!go <- !deep.\n@deep +!deep <- .boom.\n@handler -!go[error(E)] <- .note(E).\n", log=log
    )
    _run(mind)
    assert [str(x) for x in log] == ["ia_failed"] and not _events(tracer, "intention.fail")
    assert [d["plan"] for d in _events(tracer, "intention.start")] == ["go", "deep", "handler"]
    assert [d["plan"] for d in _events(tracer, "intention.end")] == ["handler", "deep", "go"]


def test_percepts_replace_and_trigger_plans(tmp_path):
    log: list = []
    mind, tracer = _mind(tmp_path, "+seen(X) <- .note(X).\n", log=log)
    mind.replace_percept("pos", (1, 2))  # no plan reacts
    mind.replace_percept("pos", (2, 2))
    mind.replace_percept("seen", (7,))  # a plan reacts
    _run(mind)
    assert log == [7]
    assert "pos(2, 2)[source(percept)]" in belief_texts(mind) and "pos(1, 2)[source(percept)]" not in belief_texts(mind)
    assert _events(tracer, "belief.del") == [{"belief": "pos(1, 2)", "source": "percept"}]


def test_belief_del_records_the_belief_the_plan_removed(tmp_path):
    """A removal whose variables are bound by the plan (``-experience(E)[source(P)]``) is
    traced as exactly the belief it removed, so replaying the trace gives the real belief base."""
    mind, tracer = _mind(tmp_path, "+told(E)[source(P)] <- -told(E)[source(P)].\n")
    for peer, text in [("p1@x", "aaa"), ("p2@x", "bbb"), ("p1@x", "ccc")]:
        mind.deliver(peer, "tell", Struct("told", (text,)))
    _run(mind)
    deleted = sorted((d["belief"], d["source"]) for d in _events(tracer, "belief.del"))
    assert deleted == [('told("aaa")', "p1@x"), ('told("bbb")', "p2@x"), ('told("ccc")', "p1@x")]
    assert not any(b.startswith("told") for b in belief_texts(mind))


def test_the_specs_beliefs_replace_the_files_and_are_the_agents_own(tmp_path):
    mind, tracer = _mind(
        tmp_path,
        "share_every(10)[source(self)].\nkeep(1).\n",
        beliefs=[Struct("share_every", (5,)), Struct("note", (1,), frozenset({Struct("x")}))],
    )
    assert belief_texts(mind) == ["keep(1)[source(self)]", "note(1)[source(self), x]", "share_every(5)[source(self)]"]
    assert [d["belief"] for d in _events(tracer, "belief.add")] == ["keep(1)", "share_every(5)", "note(1)"]


def test_a_plan_file_is_parsed_once_per_text(tmp_path):
    """Every agent of a group loads the same file: parsed once, each mind its own program."""
    log: list = []
    first, _ = _mind(tmp_path, "n(1).\n!go.\n+!go : n(X) <- .note(X); -n(X); +n(2).\n", log=log)
    second, _ = _mind(tmp_path, "n(1).\n!go.\n+!go : n(X) <- .note(X); -n(X); +n(2).\n", log=log)
    _run(first)
    _run(second)
    assert log == [1, 1] and belief_texts(second) == ["n(2)[source(self)]"]
    changed, _ = _mind(tmp_path, "n(5).\n!go.\n+!go : n(X) <- .note(X).\n", log=log)
    _run(changed)
    assert log == [1, 1, 5]


def test_a_mind_folded_through_a_keyframe_shows_what_one_folded_from_it_shows():
    """A keyframe restates a belief's sources from the mind's set (in any order); the viewer
    folds from the keyframe before a position, or from further back. Both give the same
    sources in the same (sorted) order: a real run's viewer test met the two orders."""
    from bdi_rl.readers.mindstate import MindState
    from bdi_rl.trace.kinds import BELIEF_ADD

    def told(by: str) -> dict:
        return {"kind": BELIEF_ADD, "data": {"belief": "hazard(3, 2)", "source": by}}

    keyframe = {"kind": BELIEF_ADD, "data": {"belief": "hazard(3, 2)", "source": "l3", "sources": ["l3", "l2"]}}
    events = [told("l2"), told("l3"), keyframe, told("l4")]
    from_start, from_keyframe = MindState(), MindState()
    for event in events:
        from_start.apply(event)
    for event in events[2:]:
        from_keyframe.apply(event)
    assert from_start.beliefs == from_keyframe.beliefs == {"hazard(3, 2)": ["l2", "l3", "l4"]}
    several_at_once = {"kind": BELIEF_ADD, "data": {"belief": "hazard(3, 2)", "source": "l5", "sources": ["l5", "l6"]}}
    from_start.apply(several_at_once)  # new sources besides those held: added, none dropped
    assert from_start.beliefs["hazard(3, 2)"] == ["l2", "l3", "l4", "l5", "l6"]


def test_a_belief_told_by_several_agents_keeps_every_source_in_the_trace(tmp_path):
    """Issue 18: a belief told by four learners showed one source. Folding the trace gives
    all of them, and the belief goes only when its last teller untells it (Jason)."""
    from bdi_rl.readers.mindstate import MindState

    mind, tracer = _mind(tmp_path, "noted.\n")
    hazard = Struct("hazard", (1, 2))
    for peer in ("l1@x", "l2@x", "l3@x"):
        mind.deliver(peer, "tell", hazard)
    _run(mind)
    mind.deliver("l2@x", "untell", hazard)
    _run(mind)
    state, seen = MindState(), []
    for event in _all(tracer):
        state.apply(event)
        seen.append(list(state.beliefs.get("hazard(1, 2)", [])))
    assert ["l1@x", "l2@x", "l3@x"] in seen
    assert state.beliefs["hazard(1, 2)"] == ["l1@x", "l3@x"]
    for peer in ("l1@x", "l3@x"):
        mind.deliver(peer, "untell", hazard)
    _run(mind)
    state = MindState()
    for event in _all(tracer):
        state.apply(event)
    assert "hazard(1, 2)" not in state.beliefs and "hazard(1, 2)" not in belief_texts(mind)
