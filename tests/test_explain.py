"""Why an action was taken, from one rl.step event: greedy, tied, or exploring."""

from __future__ import annotations

from bdi_rl.readers.explain import explain_step

NAMES = ["left", "down", "right", "up"]


def _step(a, q, epsilon=0.25):
    return {"s": 9, "a": a, "r": 0.0, "s2": 10, "q": q, "epsilon": epsilon}


def test_greedy_choice_names_the_action_and_its_value():
    why = explain_step(_step(2, [0.1, 0.2, 0.7, 0.3]), NAMES)
    assert (why["action"], why["explored"], why["greedy"]) == ("right", False, ["right"])
    assert why["why"].startswith("right: the greedy choice") and "0.7" in why["why"] and "0.3" in why["why"]
    assert "25%" in why["why"]


def test_a_move_below_the_maximum_can_only_be_exploring():
    why = explain_step(_step(0, [0.1, 0.2, 0.7, 0.3], epsilon=0.8), NAMES)
    assert why["explored"] is True and why["greedy"] == ["right"]
    assert why["why"] == (
        "left: an exploring move (epsilon 80%); the greedy choice in state 9 was right with Q 0.7, left had 0.1"
    )


def test_ties_are_reported_as_ties():
    why = explain_step(_step(1, [0.5, 0.5, 0.2, 0.5]), NAMES)
    assert why["explored"] is False and why["greedy"] == ["left", "down", "up"]
    assert "tied for the highest Q" in why["why"] and "left, up" in why["why"]


def test_without_names_or_row():
    assert explain_step(_step(3, [0.0, 0.0, 0.0, 1.0]), None)["action"] == "a3"
    bare = explain_step({"s": 1, "a": 2, "epsilon": 0.1}, NAMES)  # a trace without Q rows
    assert bare == {"action": "right", "labels": None, "greedy": None, "explored": None, "why": None}
