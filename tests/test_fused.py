"""Fused plan instructions (bdi_rl/bdi/fused.py): the same behaviour as python-agentspeak's own
compiler, in fewer reasoning cycles."""

from __future__ import annotations

import agentspeak.runtime as rt
import pytest

from bdi_rl.bdi import fused
from tests.test_mind import _mind, _run

PROGRAMS = {
    "a while loop binds afresh each iteration": """
count(0).
item(0, 10). item(1, 11). item(2, 12).
!start.
+!start <- while (count(N) & N < 3) { -+count(N + 1); item(N, Y); .note(Y) }; .note(99).
""",
    # One j/1 belief at a time: a belief set's iteration order is not defined, so a program
    # holding two would not be deterministic.
    "nested loops": """
i(0).
!start.
+!start <- while (i(I) & I < 3) {
    -+i(I + 1); +j(0);
    while (j(J) & J < I) { -j(J); +j(J + 1); .note(I * 10 + J) };
    j(Last); -j(Last) }.
""",
    "a false condition skips the body": """
!start.
+!start <- while (1 > 2) { .note(1) }; .note(2).
""",
    "a body query binds what follows": """
count(7).
!start.
+!start <- count(X); .note(X); Y = X + 1; .note(Y).
""",
    "a failing body query fails the plan": """
!start.
+!start <- .note(1); 1 > 2; .note(2).
""",
    "a sub-goal in a loop": """
n(0).
!start.
+!start <- while (n(N) & N < 4) { !step }; .note(100).
+!step : n(N) <- -+n(N + 1); .note(N).
""",
}


def _outcome(tmp_path, source: str) -> tuple[list, list[str], int]:
    log: list = []
    mind, _ = _mind(tmp_path, source, log=log)
    _run(mind)
    return log, [f.split(":")[0] for f in mind.failures], mind.cycles


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_fused_plans_behave_like_the_original_compiler(tmp_path, monkeypatch, name):
    fused_log, fused_failures, fused_cycles = _outcome(tmp_path, PROGRAMS[name])
    monkeypatch.setattr(rt.BuildInstructionsVisitor, "visit_formula", fused.ORIGINAL[0])
    monkeypatch.setattr(rt.BuildInstructionsVisitor, "visit_while", fused.ORIGINAL[1])
    log, failures, cycles = _outcome(tmp_path, PROGRAMS[name])
    assert (fused_log, fused_failures) == (log, failures)
    assert fused_cycles < cycles


def test_expected_results(tmp_path):
    assert _outcome(tmp_path, PROGRAMS["a while loop binds afresh each iteration"])[0] == [10, 11, 12, 99]
    assert _outcome(tmp_path, PROGRAMS["nested loops"])[0] == [10, 20, 21]
    assert _outcome(tmp_path, PROGRAMS["a false condition skips the body"])[0] == [2]
    assert _outcome(tmp_path, PROGRAMS["a body query binds what follows"])[0] == [7, 8]
    log, failures, _ = _outcome(tmp_path, PROGRAMS["a failing body query fails the plan"])
    assert log == [1] and failures
    assert _outcome(tmp_path, PROGRAMS["a sub-goal in a loop"])[0] == [0, 1, 2, 3, 100]
