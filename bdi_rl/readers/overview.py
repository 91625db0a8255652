"""One run in a line of the runs list (the viewer's runs list and run page): what ran, how
far, how well, read from its index, its spec and its summary.
"""

from __future__ import annotations

from typing import Any

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.runstate import read_summary
from bdi_rl.trace.kinds import RUN_START

__all__ = ["play_evaluation", "run_overview"]


def run_overview(index: RunIndex) -> dict[str, Any]:
    """The runs-list row of ``index``'s run: what ran, how far, how well."""
    spec = index.spec
    start = next((e for e in index.run_events if e["kind"] == RUN_START), None)
    learners = [a for a in index.agents.values() if a.action_names is not None or a.episodes or a.evals]
    finals = [a.evals[-1] for a in learners if a.evals]
    state = index.state
    return {
        "run": index.run_dir.name,
        "env": (spec.get("env") or {}).get("id"),
        "experiment": spec.get("name"),
        "agents": sorted(index.agents),
        "learners": _spec_learners(spec) or len(learners),  # also those a run stopped early never traced
        "episodes": max((len(a.episodes) for a in learners), default=0),
        "final_eval": _mean_eval(finals),
        "started": start["ts"] if start else None,
        "state": state.state,
        "state_why": state.why,
        "live": state.state == "live",
        "indexing": index.indexing,
        "events": sum(a.events for a in index.agents.values()),
        "damaged": index.damaged,
        "evaluation": play_evaluation(index),
    }


def play_evaluation(index: RunIndex) -> dict[str, Any] | None:
    """A play's results (``bdi-rl play``: ``summary.json``'s ``evaluation``), else None;
    ``{"policy_only": ...}`` alone while the play is still going."""
    play = index.spec.get("play")
    if not isinstance(play, dict):
        return None
    summary = read_summary(index.run_dir) or {}
    found = summary.get("evaluation")
    return found if isinstance(found, dict) else {"policy_only": bool(play.get("policy_only"))}


def _spec_learners(spec: dict[str, Any]) -> int:
    """The learners the run's spec names (0 when it cannot be read): every group's ``count``
    (1 by default) whose ``role`` is ``learner`` (the default)."""
    groups = spec.get("agents")
    counts = [
        group.get("count", 1)
        for group in (groups if isinstance(groups, list) else [])
        if isinstance(group, dict) and group.get("role", "learner") == "learner"
    ]
    return sum(count for count in counts if isinstance(count, int))


def _mean_eval(evals: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The learners' latest evaluations averaged: return and success side by side, never
    one standing in for the other (the runs list had them mixed in one column)."""
    returns = [e["mean_return"] for e in evals if isinstance(e.get("mean_return"), (int, float))]
    rates = [e["success_rate"] for e in evals if isinstance(e.get("success_rate"), (int, float))]
    if not returns:
        return None
    return {
        "mean_return": sum(returns) / len(returns),
        "success_rate": sum(rates) / len(rates) if rates else None,
        "learners": len(returns),
    }
