"""An agent's episode on its grid world, from the trace: the map, where the agent was at each
step, the cells its beliefs name, and its greedy action and max Q per cell as known then.

Shared by the viewer's world panel and episode player (``/api/.../world``) and by
``bdi-rl render`` (``readers.render``). The map comes from the learner's ``agent.start``
(``WorldData``); traces written before it had one get it rebuilt from the run's ``spec.toml``.
Q-values are rebuilt from the trace's rl rows (each ``rl.step`` holds the row it chose from
and the value after its update): the latest row seen per state up to the selected event, which
is what the agent knew of that state when it last stood there (priors, replayed experience
and adopted policies change rows between visits without a row of their own).
"""

from __future__ import annotations

import bisect
import re
import threading
import tomllib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bdi_rl.readers.runindex import RunIndex, read_event_at
from bdi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from bdi_rl.rl.families import MOVES, family_named, world_cell, world_state
from bdi_rl.store import QTABLE_DIR, SPEC_FILE
from bdi_rl.trace.kinds import AGENT_START, RL_STEP, STEPS, WORLD_STEP
from bdi_rl.trace.steps import OP_RL, rl_row

#: Events read from the trace at a time.
_CHUNK = 4096
#: Beliefs that name a cell, and what the map draws them as: a hazard told or found, a goal
#: (told with its reward, or the episode's goal percept), where the agent believes it is.
_CELL_BELIEF = re.compile(r"(hazard|goal_at|goal|pos)\((-?\d+),\s*(-?\d+)(?:,[^()]*)?\)")
_BELIEF_KINDS = {"hazard": "hazard", "goal_at": "goal", "goal": "goal", "pos": "pos"}


class WorldError(ValueError):
    """Why there is no world view: one line naming the field (``agent``, ``episode``, ``env``)."""


def _start_data(index: RunIndex, jid: str) -> dict[str, Any]:
    """The data of the agent's first ``agent.start`` ({} if its trace does not begin with one)."""
    first = index.events_of(jid, 0, 1)
    return first[0]["data"] if first and first[0]["kind"] == AGENT_START else {}


def _seat_of_shared_world(index: RunIndex, jid: str) -> str | None:
    """The world agent's name when ``jid`` is a learner seated in the run's shared world."""
    spec_world = index.spec.get("world")
    if not isinstance(spec_world, dict):
        return None
    name = str(spec_world.get("name", "world"))
    return name if jid.split("@", 1)[0] != name else None


def world_of(index: RunIndex, jid: str) -> tuple[dict[str, Any], str]:
    """The agent's map and where it came from ("trace" or "spec"); WorldError if it has none."""
    start = _start_data(index, jid)
    if isinstance(start.get("world"), dict):
        return start["world"], "trace"
    if "seats" in start:
        raise WorldError(f"env: the shared world {start.get('env')} has no map (see the joint-action panel)")
    shared = _seat_of_shared_world(index, jid)
    if shared is not None:
        raise WorldError(
            f"agent: {jid.split('@', 1)[0]} acts in a shared world: the map with every agent on it "
            f"is the world agent's ({shared})"
        )
    if index.agents[jid].action_names is None:
        raise WorldError(f"agent: {jid.split('@', 1)[0]} is not a learner (no env): no world view")
    try:
        env_spec = tomllib.loads((index.run_dir / SPEC_FILE).read_text())["env"]
        env_id = str(env_spec["id"])
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise WorldError(f"env: no world recorded and none rebuilt from {SPEC_FILE} ({exc})") from None
    if ":" in env_id:  # a reader runs no code a file names
        raise WorldError(
            f"env: no world view for this env ({env_id}; the trace records no map, and the entry point "
            f"{SPEC_FILE} names is not run to rebuild one)"
        )
    from bdi_rl.rl.envs import EnvError, make_env  # gymnasium: imported when a world is rebuilt

    try:
        env = make_env(env_id, env_spec.get("kwargs", {}), env_spec.get("max_episode_steps"))
    except (TypeError, EnvError) as exc:
        raise WorldError(f"env: no world recorded and none rebuilt from {SPEC_FILE} ({exc})") from None
    try:
        world = env.world()
    finally:
        env.close()
    if world is None:
        raise WorldError(f"env: no world view for this env ({env.env_id})")
    return world, "spec"


def apply_step(rows: dict[int, list[float | None]], data: dict[str, Any], n_actions: int) -> None:
    """Fold one ``rl.step`` into the rows known per state: the row it chose from, its update."""
    s, a = int(data["s"]), int(data["a"])
    q = data.get("q")
    row: list[float | None] = list(q) if isinstance(q, list) else rows.get(s) or [None] * n_actions
    if 0 <= a < len(row):
        row[a] = data["q_after"]
    rows[s] = row


@dataclass
class _Rows:
    """The rows known after every rl.step before ``upto``, kept between requests so a player
    moving forward reads each row once."""

    upto: int = 0
    rows: dict[int, list[float | None]] = field(default_factory=dict)


_ROWS: OrderedDict[tuple[Path, str], _Rows] = OrderedDict()
_ROWS_KEPT = 8
_ROWS_LOCK = threading.Lock()


def q_rows(index: RunIndex, jid: str, position: int, n_actions: int) -> dict[int, list[float | None]]:
    """The latest row seen per state in the rl.steps at or before ``position`` (a copy)."""
    with _ROWS_LOCK:  # the viewer answers in threads; the kept rows are shared
        key = (index.trace_path, jid)
        known = _ROWS.pop(key, None)
        if known is None or known.upto > position + 1:
            known = _Rows()
        _ROWS[key] = known
        while len(_ROWS) > _ROWS_KEPT:
            _ROWS.popitem(last=False)
        for data in _rl_rows(index, jid, known.upto, position):
            apply_step(known.rows, data, n_actions)
        known.upto = max(known.upto, position + 1)
        return {s: list(row) for s, row in known.rows.items()}


def _rl_rows(index: RunIndex, jid: str, start: int, position: int) -> Iterator[dict[str, Any]]:
    """The data of the agent's ``rl.step`` events at positions ``start`` to ``position``, in
    order, read from the step records' rl columns (no record is expanded: a long run's rows
    are read in a fraction of the time its events would take)."""
    agent = index.agents[jid]
    positions = agent.rl_positions
    lo, hi = bisect.bisect_left(positions, start), bisect.bisect_right(positions, position)
    if lo >= hi:
        return
    first, last = positions[lo], positions[hi - 1]
    line = bisect.bisect_right(agent.firsts, first) - 1
    with open(index.trace_path, "rb") as f:
        while line < len(agent.offsets) and agent.firsts[line] <= last:
            event = read_event_at(f, agent.offsets[line])
            at = agent.firsts[line]
            line += 1
            if event.get("kind") == RL_STEP:  # format 1: a line each
                yield event["data"]
                continue
            rl = event["data"].get("rl") if event.get("kind") == STEPS else None
            if not rl:
                continue
            ops, refs = event["data"]["ops"], event["data"]["refs"]
            for i in range(max(0, first - at), min(len(ops), last - at + 1)):
                if ops[i] == OP_RL:
                    yield rl_row(rl, refs[i])


def q_cells(
    rows: dict[int, list[float | None]], world: dict[str, Any], like: dict[str, Any] | None
) -> dict[str, list[list[Any]]]:
    """Max Q and greedy action per cell (None where the state was never seen, and no greedy
    action where its known values are all equal); Taxi's cells for ``like``'s passenger and
    destination."""
    best: list[list[float | None]] = []
    greedy: list[list[int | None]] = []
    for y in range(int(world["rows"])):
        best.append([])
        greedy.append([])
        for x in range(int(world["cols"])):
            row = rows.get(world_state(world, x, y, like))
            values = [(v, a) for a, v in enumerate(row or ()) if isinstance(v, (int, float))]
            if not values:
                best[y].append(None)
                greedy[y].append(None)
                continue
            top = max(v for v, _ in values)
            best[y].append(top)
            flat = top - min(v for v, _ in values) < 1e-9
            greedy[y].append(None if flat else next(a for v, a in values if v == top))
    return {"max": best, "greedy": greedy}


def episode_steps(index: RunIndex, jid: str, episode: int) -> tuple[list[dict[str, Any]], int, int]:
    """The ``rl.step`` events of ``episode`` with their positions, and the episode's span."""
    try:
        first, last = index.span_of(jid, episode)
    except KeyError as exc:
        raise WorldError(f"episode: {exc.args[0]}") from None
    steps = []
    for start in range(first, last + 1, _CHUNK):
        for k, event in enumerate(index.events_of(jid, start, min(start + _CHUNK, last + 1)), start):
            if event["kind"] == RL_STEP and event.get("episode") == episode:
                steps.append({**event["data"], "position": k})
    return steps, first, last


def cell_beliefs(beliefs: dict[str, list[str]], world: dict[str, Any]) -> list[dict[str, Any]]:
    """The beliefs that name a cell of the map, with who told them."""
    out = []
    for text, sources in beliefs.items():
        match = _CELL_BELIEF.fullmatch(text)
        if match is None:
            continue
        x, y = int(match[2]), int(match[3])
        if 0 <= x < int(world["cols"]) and 0 <= y < int(world["rows"]):
            out.append({"kind": _BELIEF_KINDS[match[1]], "x": x, "y": y, "belief": text, "sources": list(sources)})
    return out


def episode_world(index: RunIndex, jid: str, episode: int, frame: int | None = None) -> dict[str, Any]:
    """Everything the world panel and the video draw of one episode: the map, the steps, a
    frame per position of the agent (``steps + 1``: the start, then after each step, each with
    the inspector position showing it), and, at ``frame`` (default 0), the cells the agent's
    beliefs name and the Q-values it knew. WorldError naming what is missing.

    A shared world's agent (its ``agent.start`` names its seats) gets its joint episode
    instead, every agent on the map (:func:`joint_world`)."""
    agent = index.agents[jid]
    world, world_source = world_of(index, jid)
    if "seats" in _start_data(index, jid):
        return joint_world(index, jid, episode, frame)
    world = {**world, "map": list(world["map"])}
    steps, first, last = episode_steps(index, jid, episode)
    names = agent.action_names or []
    n_actions = len(names) or 1 + max((int(s["a"]) for s in steps), default=0)
    # an agent without episode.end lines has none; a StopIteration here never reached the
    # request waiting on this thread (asyncio cannot set it on a future): the request hung
    entry = next((e for e in agent.episodes if e["episode"] == episode), {})
    goal = _episode_goal(index, jid, last)
    if goal is not None and family_named(world["family"]).moving_goals:  # this episode's G
        world["map"] = [row.replace("G", "F") for row in world["map"]]
        gx, gy = goal
        if 0 <= gy < len(world["map"]) and 0 <= gx < len(world["map"][gy]):
            world["map"][gy] = world["map"][gy][:gx] + "G" + world["map"][gy][gx + 1 :]
    out_steps, frames, total = [], [], 0.0
    for i, s in enumerate(steps):
        total += float(s["r"] or 0.0)
        a = int(s["a"])
        out_steps.append(
            {
                "step": i,
                "s": s["s"],
                "a": a,
                "action": names[a] if a < len(names) else f"a{a}",
                "r": s["r"],
                "s2": s["s2"],
                "cell": world_cell(world, int(s["s"])),
                "cell2": world_cell(world, int(s["s2"])),
                "position": s["position"],
                "q": s.get("q"),
                "q_after": s["q_after"],
                "return": total,
            }
        )
    if steps:
        frames.append(_frame(0, world, int(steps[0]["s"]), max(first, steps[0]["position"] - 1), None, 0.0))
        for i, s in enumerate(out_steps, 1):
            position = out_steps[i]["position"] - 1 if i < len(out_steps) else last
            frames.append(_frame(i, world, int(s["s2"]), position, s, s["return"]))
    selected = min(max(frame or 0, 0), len(frames) - 1) if frames else None
    payload: dict[str, Any] = {
        "agent": jid,
        "episode": episode,
        "world": world,
        "world_source": world_source,
        "actions": names,
        "moves": [MOVES.get(name) for name in names],
        "return": entry.get("return"),
        "outcome": entry.get("outcome"),
        "length": entry.get("length"),
        "goal": goal,
        "steps": out_steps,
        "frames": frames,
        "frame": selected,
        "note": None,
        "beliefs": [],
        "q": None,
    }
    if not frames:
        level = index.trace_level or "?"
        payload["note"] = (
            f"the trace holds no steps of this episode (trace level {level}: steps are recorded at level step)"
        )
        payload["q"] = _checkpoint_q(index, jid, world)
        return payload
    assert selected is not None
    position = frames[selected]["position"]
    mind, _ = index.mind_at(jid, position)
    payload["beliefs"] = cell_beliefs(mind.beliefs, world)
    rows = q_rows(index, jid, position, n_actions)
    payload["q"] = {
        **q_cells(rows, world, frames[selected]["cell"]),
        "source": f"rebuilt from the trace's rl rows up to event {position} (the latest row seen per state)",
        "position": position,
    }
    return payload


def _checkpoint_q(index: RunIndex, jid: str, world: dict[str, Any]) -> dict[str, Any] | None:
    """Without rl rows: the agent's latest Q-table checkpoint, said to be that (not this
    episode's); Taxi's cells for the passenger at R bound for G. None without a checkpoint."""
    try:
        checkpoint = load_checkpoint(index.run_dir / QTABLE_DIR / f"{jid.split('@', 1)[0]}.npz")
    except CheckpointError:
        return None
    q = checkpoint.q
    if not family_named(world["family"]).fits_map(world, q.shape[0]):
        return None
    rows: dict[int, list[float | None]] = {s: [float(v) for v in q[s]] for s in range(q.shape[0])}
    return {
        **q_cells(rows, world, {"passenger": 0, "destination": 1}),
        "source": f"the latest Q-table checkpoint ({checkpoint.episodes} episodes), not this episode's",
        "position": None,
    }


def _frame(
    i: int, world: dict[str, Any], state: int, position: int, step: dict[str, Any] | None, total: float
) -> dict[str, Any]:
    return {
        "frame": i,
        "state": state,
        "cell": world_cell(world, state),
        "position": position,
        "action": step["action"] if step else None,
        "r": step["r"] if step else None,
        "return": total,
    }


def _episode_goal(index: RunIndex, jid: str, end: int) -> list[int] | None:
    """Moving goals: the episode's goal cell, as its ``episode.end`` records it."""
    event = index.events_of(jid, end, end + 1)
    goal = event[0]["data"].get("goal") if event else None
    return [int(goal[0]), int(goal[1])] if isinstance(goal, list) and len(goal) == 2 else None


def joint_world(index: RunIndex, jid: str, episode: int, frame: int | None = None) -> dict[str, Any]:
    """A shared grid world's joint episode for the world panel and its player, from the world
    agent's ``world.step`` events: the world's map, one frame per joint step with every seat's
    agent where that step left it and the food left (``positions``, ``items``), each frame at
    the position of its ``world.step`` (the inspector shows that step). The trace records
    where the agents are after each step only, so the first frame is after step 1, not the
    reset. The same keys as :func:`episode_world`'s, plus ``joint`` and ``seats``."""
    start = _start_data(index, jid)
    world = start.get("world")
    if not isinstance(world, dict):
        raise WorldError(f"env: the shared world {start.get('env')} has no map (see the joint-action panel)")
    seats = [list(s) for s in start.get("seats", [])]
    names = _seat_actions(index, [name for _, name in seats])
    try:
        first, last = index.span_of(jid, episode)
    except KeyError as exc:
        raise WorldError(f"episode: {exc.args[0]}") from None
    steps: list[dict[str, Any]] = []
    frames: list[dict[str, Any]] = []
    total = 0.0
    for begin in range(first, last + 1, _CHUNK):
        for k, event in enumerate(index.events_of(jid, begin, min(begin + _CHUNK, last + 1)), begin):
            if event["kind"] != WORLD_STEP or event["data"]["episode"] != episode:
                continue
            d = event["data"]
            team = sum(float(r or 0.0) for r in d["rewards"])
            total += team
            late = set(d.get("defaulted", ()))
            acted = [
                {
                    "name": agent,
                    "action": names.get(agent, [])[a] if a < len(names.get(agent, [])) else f"a{a}",
                    "a": a,
                    "r": d["rewards"][i],
                    "defaulted": agent in late,
                }
                for i, (agent, a) in enumerate(zip(d["agents"], d["actions"], strict=False))
            ]
            positions = d.get("positions") or []
            action = ", ".join(f"{x['name']} {x['action']}" + (" (default)" if x["defaulted"] else "") for x in acted)
            steps.append({"step": d["step"], "position": k, "agents": acted, "r": team, "return": total})
            frames.append(
                {
                    "frame": len(frames),
                    "step": d["step"],
                    "position": k,
                    "cell": {"x": positions[0][0], "y": positions[0][1]} if positions else None,
                    "agents": [
                        {"seat": seat, "name": name, "x": xy[0], "y": xy[1]}
                        for (seat, name), xy in zip(seats, positions, strict=False)
                    ],
                    "items": [list(item) for item in d.get("items") or []],
                    "action": action,
                    "r": team,
                    "return": total,
                    "done": d["done"],
                }
            )
    selected = min(max(frame or 0, 0), len(frames) - 1) if frames else None
    level = index.trace_level or "?"
    return {
        "agent": jid,
        "episode": episode,
        "joint": True,
        "seats": seats,
        "world": {**world, "map": list(world["map"])},
        "world_source": "trace",
        "actions": [],
        "moves": [],
        "return": total if frames else None,
        "outcome": ("done" if frames[-1]["done"] else "cut off") if frames else None,
        "length": len(frames),
        "goal": None,
        "steps": steps,
        "frames": frames,
        "frame": selected,
        "note": None
        if frames
        else f"the trace holds no joint steps of this episode (trace level {level}: they are recorded at level step)",
        "beliefs": [],
        "q": None,
    }


def _seat_actions(index: RunIndex, agents: list[str]) -> dict[str, list[str]]:
    """Each seated agent's action names, from its own ``agent.start``."""
    out = {}
    for jid, agent in list(index.agents.items()):  # a copy: the viewer's worker may add an agent
        local = jid.split("@", 1)[0]
        if local in agents and agent.action_names:
            out[local] = list(agent.action_names)
    return out
