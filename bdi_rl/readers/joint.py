"""A shared world's joint steps, as the viewer's joint-action panel, ``bdi-rl inspect`` and
``bdi-rl export`` show them: read from the world agent's ``world.step`` events.

Two views: which joint actions the agents played early and late in training, with what they
paid (on the matrix games, where each episode is one step, this is how coordination shows:
the agents settle on one joint action), and the steps of one joint episode.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.trace.kinds import AGENT_START, WORLD_STEP

__all__ = ["JOINT_COLUMNS", "JointError", "joint_episode", "joint_range", "joint_rows", "joint_summary", "world_agent"]

#: ``bdi-rl export --joint``'s columns: one row per agent per joint step.
JOINT_COLUMNS = ("run", "episode", "step", "agent", "state", "action", "reward", "done", "defaulted")

#: Most joint steps one window of :func:`joint_summary` reads.
WINDOW_STEPS = 5000


class JointError(ValueError):
    """A run without a shared world, or an episode it does not have."""


def world_agent(index: RunIndex) -> str:
    """The JID of the run's world agent (the one whose ``agent.start`` names its seats)."""
    spec_world = index.spec.get("world")
    if not isinstance(spec_world, dict):
        raise JointError("this run has no shared world (its spec has no [world] table)")
    local = spec_world.get("name", "world")
    for jid in list(index.agents):  # a copy: the viewer's worker may add an agent meanwhile
        if jid.split("@", 1)[0] == local:
            return jid
    raise JointError(f"the world agent {local!r} has no events in this trace yet")


def _steps(index: RunIndex, jid: str, start: int, stop: int) -> list[dict[str, Any]]:
    return [e for e in index.events_of(jid, start, stop) if e["kind"] == WORLD_STEP]


def _start(index: RunIndex, jid: str) -> dict[str, Any]:
    for event in index.events_of(jid, 0, min(2, index.agents[jid].events)):
        if event["kind"] == AGENT_START:
            return dict(event["data"])
    return {}


def _window(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """How often each joint action was played in ``steps``, most played first, with the
    rewards it paid (the mean of each agent's)."""
    counts: Counter[tuple[int, ...]] = Counter()
    paid: dict[tuple[int, ...], list[float]] = {}
    for step in steps:
        key = tuple(step["actions"])
        counts[key] += 1
        total = paid.setdefault(key, [0.0] * len(step["rewards"]))
        for i, r in enumerate(step["rewards"]):
            total[i] += r if r is not None else 0.0
    rows = [
        {"actions": list(key), "count": n, "rewards": [round(r / n, 6) for r in paid[key]]}
        for key, n in counts.most_common()
    ]
    episodes = [s["episode"] for s in steps]
    defaulted = sum(1 for s in steps if s.get("defaulted"))
    return {
        "episodes": [min(episodes), max(episodes)] if episodes else [],
        "steps": len(steps),
        "defaulted": defaulted,
        "joint_actions": rows,
    }


def joint_summary(index: RunIndex, share: float = 0.1) -> dict[str, Any]:
    """The joint actions of the first and the last ``share`` of the world's joint steps
    (each at most :data:`WINDOW_STEPS`), with the world's seats and agents."""
    jid = world_agent(index)
    total = index.agents[jid].events
    size = max(1, min(WINDOW_STEPS, int(total * share)))
    first = [e["data"] for e in _steps(index, jid, 0, min(total, size + 1))]  # + its agent.start
    last = [e["data"] for e in _steps(index, jid, max(0, total - size - 1), total)]  # + its agent.stop
    agents = first[0]["agents"] if first else []
    start = _start(index, jid)
    return {
        "world": jid,
        "seats": list(start.get("seats", [])),
        "map": start.get("world") if isinstance(start.get("world"), dict) else None,
        "agents": agents,
        "events": total,
        "episodes": [first[0]["episode"], last[-1]["episode"]] if first and last else [],
        "first": _window(first),
        "last": _window(last),
    }


#: Most joint steps :func:`joint_range` reads (a range of more is cut there, and says so).
RANGE_STEPS = 50_000


def joint_range(index: RunIndex, first: int, last: int) -> dict[str, Any]:
    """The joint actions of the world's episodes ``first`` to ``last`` (both included, the
    window's ``cut`` true when it ends early at :data:`RANGE_STEPS` joint steps);
    JointError naming an episode the trace does not have."""
    jid = world_agent(index)
    if first > last:
        raise JointError(f"range: episode {first} is after episode {last}")
    try:
        start = index.span_of(jid, first)[0]
        end = index.span_of(jid, last)[1]
    except KeyError as exc:
        raise JointError(f"range: {exc.args[0]}") from None
    steps: list[dict[str, Any]] = []
    for at in range(start, end + 1, 4096):
        steps += [e["data"] for e in _steps(index, jid, at, min(end + 1, at + 4096))]
        if len(steps) >= RANGE_STEPS:
            break
    cut = len(steps) > RANGE_STEPS or (len(steps) == RANGE_STEPS and steps[-1]["episode"] < last)
    steps = [s for s in steps[:RANGE_STEPS] if first <= s["episode"] <= last]
    return {"world": jid, "from": first, "to": last, "cut": cut, **_window(steps)}


def joint_episode(index: RunIndex, episode: int) -> dict[str, Any]:
    """Every joint step of the world's episode ``episode`` (from 0), in order."""
    jid = world_agent(index)
    try:
        start, end = index.span_of(jid, episode)
    except KeyError:
        raise JointError(f"episode: the world has no joint step in episode {episode}") from None
    steps = [e for e in _steps(index, jid, start, end + 1) if e["data"]["episode"] == episode]
    if not steps:
        raise JointError(f"episode: the world has no joint step in episode {episode}")
    return {"world": jid, "episode": episode, "steps": [{**s["data"], "seq": s["seq"]} for s in steps]}


def joint_rows(index: RunIndex) -> Iterator[dict[str, Any]]:
    """Every joint step of the world, one row per agent that acted (:data:`JOINT_COLUMNS`)."""
    jid = world_agent(index)
    total = index.agents[jid].events
    run = index.run_dir.name
    for start in range(0, total, 4096):
        for event in _steps(index, jid, start, min(total, start + 4096)):
            d = event["data"]
            late = set(d.get("defaulted", ()))
            for i, agent in enumerate(d["agents"]):
                yield {
                    "run": run,
                    "episode": d["episode"],
                    "step": d["step"],
                    "agent": agent,
                    "state": d["states"][i],
                    "action": d["actions"][i],
                    "reward": d["rewards"][i],
                    "done": d["done"],
                    "defaulted": agent in late,
                }
