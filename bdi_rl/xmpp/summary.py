"""``summary.json``: what a run did, per agent, with its throughput; the same shape from
``bdi-rl run`` (its live agents, :func:`agents_summary`) and from the telemetry role (the
trace, :func:`summary_from_trace`)."""

from __future__ import annotations

from typing import Any

from bdi_rl.bdi.play import PlaySession, evaluation
from bdi_rl.spec import ExperimentSpec
from bdi_rl.xmpp.agentroles import world_summary
from bdi_rl.xmpp.society import is_clean_stop
from bdi_rl.xmpp.waiting import is_learner


def agents_summary(run: str, spec: ExperimentSpec, agents: list[Any], wall: float) -> dict[str, Any]:
    """``summary.json`` from a process's live agents once they have stopped (``bdi-rl run``,
    ``bdi-rl play``): each learner's episodes, steps and evaluation, each other agent's own
    summary, and for a play what it measured."""
    per_agent: dict[str, Any] = {}
    steps = 0
    # Learners train side by side: throughput is all their steps over the longest training.
    learners = [agent for agent in agents if is_learner(agent)]
    learn_seconds = max((a.role.bridge.stats.train_seconds for a in learners), default=0.0)
    for agent in agents:
        stopped = {"stopped": agent.stopped} if agent.stopped and not agent.failure else {}
        if not is_learner(agent):
            per_agent[agent.name] = {
                **agent.role.summary(),
                **({"failure": agent.failure} if agent.failure else {}),
                **stopped,
            }
            continue
        stats = agent.role.bridge.stats
        steps += stats.env_steps - stats.resumed_env_steps
        entry: dict[str, Any] = {"episodes": stats.episodes, "env_steps": stats.env_steps, "qtable": stats.qtable}
        if stats.replayed_steps:
            entry["replayed_steps"] = stats.replayed_steps
        if stats.eval is not None:
            entry["eval"] = {
                "episodes": stats.eval.episodes,
                "mean_return": stats.eval.mean_return,
                "success_rate": stats.eval.success_rate,
            }
        if agent.failure:
            entry["failure"] = agent.failure
        per_agent[agent.name] = {**entry, **stopped}
    summary = run_summary(run, spec, per_agent, steps, learn_seconds, wall)
    if spec.play is not None:  # what the play measured, with 95 % intervals
        summary["evaluation"] = evaluation(
            spec.play.policy_only,
            {
                a.name: (
                    a.role.bridge.session.played,
                    a.role.bridge.checkpoints.warm_start,
                    a.role.bridge.checkpoints.task_change,
                )
                for a in learners
                if isinstance(a.role.bridge.session, PlaySession)
            },
        )
    return summary


def resumed_summary(resumed_at: dict[str, int], agents: list[Any]) -> dict[str, Any]:
    """What a resumed run's summary says of it: the episode each learner resumed at and the
    env steps done before (not part of ``env_steps_per_second``, which is this process's)."""
    before = sum(a.role.bridge.stats.resumed_env_steps for a in agents if is_learner(a))
    return {"episodes": dict(resumed_at), "env_steps_before": before}


def run_summary(
    run: str, spec: ExperimentSpec, per_agent: dict[str, Any], env_steps: int, train_seconds: float, wall: float
) -> dict[str, Any]:
    """``summary.json``, the same from ``bdi-rl run`` (its live agents) and from the telemetry
    role (the trace): learners train side by side, so throughput is all their steps over
    the longest training. Both count the steps and the seconds of this process only (a
    resumed run's earlier part is in ``resumed``); ``wall_seconds`` is this process's too."""
    return {
        "run": run,
        "env": spec.env.id,
        "experiment": spec.name,
        "seed": spec.seed,
        "trace": spec.trace,
        "wall_seconds": round(wall, 3),
        "env_steps_per_second": round(env_steps / train_seconds, 1) if train_seconds > 0 else 0.0,
        "agents": per_agent,
    }


def stop_reason(stats: Any, unstopped: str = "interrupted") -> str:
    """Why an agent stopped, from its ``agent.stop`` event (``finished``, ``interrupted``, a
    failure), or why it has none: it never started, or ``unstopped`` (why telemetry stopped
    before it did)."""
    if stats is None:
        return "never started"
    if stats.stop is None:
        return unstopped
    return str(stats.stop.get("reason") or "finished")


def summary_from_trace(
    run: str,
    spec: ExperimentSpec,
    stats: dict[str, Any],
    agents: list[str],
    wall: float,
    unstopped: str = "interrupted",
) -> dict[str, Any]:
    """summary.json (same shape as ``bdi-rl run`` writes) from the agents' events; an agent
    that never started or has not stopped is named with its reason (:func:`stop_reason`)."""
    from bdi_rl.xmpp.telemetry import AgentStats

    per_agent: dict[str, Any] = {}
    coordinators = set(spec.agent_names("coordinator"))
    steps, train_seconds = 0, 0.0
    for jid in agents:
        name = jid.split("@", 1)[0]
        s = stats.get(jid) or AgentStats()
        reason = stop_reason(stats.get(jid), unstopped)
        if reason == "finished":
            failure = {}
        elif is_clean_stop(reason):  # .kill_agent, .stopMAS
            failure = {"stopped": reason}
        else:
            failure = {"failure": reason}
        steps += s.life_env_steps  # the steps of train_seconds: a resumed run's last part
        train_seconds = max(train_seconds, s.train_seconds)
        if name in coordinators:
            per_agent[name] = {"role": "coordinator", **failure}
            continue
        if spec.world is not None and name == spec.world.name:
            per_agent[spec.world.name] = {**world_summary(s.stop or {}), **failure}
            continue
        entry: dict[str, Any] = {"episodes": s.episodes, "env_steps": s.env_steps, "qtable": s.qtable}
        if s.stop and s.stop.get("replayed_steps"):
            entry["replayed_steps"] = s.stop["replayed_steps"]
        if s.eval is not None:
            entry["eval"] = s.eval
        per_agent[name] = {**entry, **failure}
    return run_summary(run, spec, per_agent, steps, train_seconds, wall)
