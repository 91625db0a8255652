"""Moving goals: FrozenLake maps built from one map and a list of goal cells.

A spec's ``env.goals = [[x, y], ...]`` gives the cells the goal ``G`` moves to; the map
(``desc``, or ``map_name``'s) keeps its start and holes. ``env.goal_every`` episodes after
the goal moved, it moves on to the next cell of the list (cycling). The states (cells) stay
the same, so one Q-table follows the goal; what transfers, and what a per-goal policy cache
saves, shows in the learning curves.
"""

from __future__ import annotations

from typing import Any

from bdi_rl.rl.envs import EnvAdapter, EnvError, make_env


def base_desc(env_id: str, kwargs: dict[str, Any]) -> list[str]:
    """The map the goals are placed on: ``desc`` or ``map_name`` (default 4x4)."""
    from gymnasium.envs.toy_text.frozen_lake import MAPS

    desc = kwargs.get("desc")
    if desc is not None:
        if not (isinstance(desc, list) and desc and all(isinstance(row, str) for row in desc)):
            raise EnvError(f'env "{env_id}": desc must be a list of map rows')
        return list(desc)
    name = kwargs.get("map_name", "4x4")
    if name not in MAPS:
        raise EnvError(f'env "{env_id}": no map named {name!r} (known: {", ".join(MAPS)})')
    return list(MAPS[name])


def goal_desc(desc: list[str], goal: tuple[int, int], where: str) -> list[str]:
    """``desc`` with its goal moved to cell ``goal`` = (x, y); EnvError naming ``where`` for
    a cell off the map, on a hole or on the start."""
    x, y = goal
    if not (0 <= y < len(desc) and 0 <= x < len(desc[y])):
        raise EnvError(f"{where}: ({x}, {y}) is off the {len(desc[0])}x{len(desc)} map")
    if desc[y][x] in "HS":
        raise EnvError(f"{where}: ({x}, {y}) is {'a hole' if desc[y][x] == 'H' else 'the start'}")
    rows = [row.replace("G", "F") for row in desc]
    rows[y] = rows[y][:x] + "G" + rows[y][x + 1 :]
    return rows


def map_goal(env: EnvAdapter) -> tuple[int, int] | None:
    """Where a FrozenLake map's goal is (x, y); None for other envs."""
    if not env.family.moving_goals:
        return None
    for y, row in enumerate(env.task_signature()["desc"]):
        if "G" in row:
            return (row.index("G"), y)
    return None


def goal_envs(
    env_id: str, kwargs: dict[str, Any], max_episode_steps: int | None, goals: list[list[int]]
) -> list[tuple[tuple[int, int], EnvAdapter]]:
    """One env per goal cell, in the spec's order."""
    probe = make_env(env_id, kwargs, max_episode_steps)
    if not probe.family.moving_goals:
        raise EnvError(f'env.goals: moving goals need a FrozenLake map, not "{env_id}"')
    desc = base_desc(env_id, kwargs)
    envs = []
    for i, goal in enumerate(goals):
        if len(goal) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in goal):
            raise EnvError(f"env.goals[{i}]: expected [x, y] integers, got {goal!r}")
        cell = (goal[0], goal[1])
        rows = goal_desc(desc, cell, f"env.goals[{i}]")
        own = {k: v for k, v in kwargs.items() if k != "map_name"}
        envs.append((cell, make_env(env_id, {**own, "desc": rows}, max_episode_steps)))
    return envs
