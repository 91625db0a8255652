"""``summary.json``: what a run did, per agent, with its throughput; the same shape from
``bdi-rl run`` (its live agents, :func:`agents_summary`) and from the telemetry role (the
trace, :func:`summary_from_trace`)."""

from __future__ import annotations

import time
from typing import Any

from bdi_rl.bdi.play import PlaySession, evaluation
from bdi_rl.rl.throughput import TrainingSpan, steps_per_second, training_seconds
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
    learners = [agent for agent in agents if is_learner(agent)]
    now = time.time()
    spans = [a.role.bridge.stats.training for a in learners if a.role.bridge.stats.training is not None]
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
        steps += stats.trained_env_steps
        entry: dict[str, Any] = {"episodes": stats.episodes, "env_steps": stats.env_steps, "qtable": stats.qtable}
        if stats.training is not None:
            entry["env_steps_per_second"] = steps_per_second(stats.trained_env_steps, stats.training.seconds(now))
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
    summary = run_summary(run, spec, per_agent, steps, training_seconds(spans, now), wall)
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
    role (the trace): throughput is all learners' training steps over the wall time the run
    trained (``bdi_rl.rl.throughput``). Both count the steps and the seconds of this process
    only (a resumed run's earlier part is in ``resumed``); ``wall_seconds`` is this process's
    too."""
    return {
        "run": run,
        "env": spec.env.id,
        "experiment": spec.name,
        "seed": spec.seed,
        "trace": spec.trace,
        "wall_seconds": round(wall, 3),
        "train_seconds": round(train_seconds, 3),
        "env_steps_per_second": steps_per_second(env_steps, train_seconds),
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
    wall_now = time.time()  # every span from the trace has its end
    coordinators = set(spec.agent_names("coordinator"))
    steps = 0
    spans: list[TrainingSpan] = []
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
        steps += s.life_env_steps  # the steps of its training span: a resumed run's last part
        span = s.training()
        if name in coordinators:
            per_agent[name] = {"role": "coordinator", **failure}
            continue
        if spec.world is not None and name == spec.world.name:
            per_agent[spec.world.name] = {**world_summary(s.stop or {}), **failure}
            continue
        entry: dict[str, Any] = {"episodes": s.episodes, "env_steps": s.env_steps, "qtable": s.qtable}
        if span is not None:
            spans.append(span)
            entry["env_steps_per_second"] = steps_per_second(s.life_env_steps, span.seconds(now=wall_now))
        if s.stop and s.stop.get("replayed_steps"):
            entry["replayed_steps"] = s.stop["replayed_steps"]
        if s.eval is not None:
            entry["eval"] = s.eval
        per_agent[name] = {**entry, **failure}
    return run_summary(run, spec, per_agent, steps, training_seconds(spans, wall_now), wall)
