"""A Q-table checkpoint laid out on its grid world: max Q and greedy move per cell.

Shared by ``bdi-rl plot`` (matplotlib) and the viewer (canvas). The env is rebuilt from the
run's resolved spec only to learn its geometry (grid shape, action directions, map letters).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from bdi_rl.store import QTABLE_DIR, SPEC_FILE

#: (dx, dy) per action (y grows downwards), for the env families with a grid.
MOVES = {
    "frozenlake": {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)},
    "cliffwalking": {0: (0, -1), 1: (1, 0), 2: (0, 1), 3: (-1, 0)},
}


class QGridError(ValueError):
    """Why there is no grid to show (no checkpoint, not a grid world, unreadable table)."""


@dataclass
class QGrid:
    agent: str
    rows: int
    cols: int
    max_q: list[list[float | None]]
    """max Q per cell; None where the row was never updated (holes, goal, unvisited)"""
    moves: list[list[tuple[int, int] | None]]
    """greedy (dx, dy) per cell, None where there is no greedy choice"""
    letters: list[list[str]]
    """the map's letter per cell where the env has one (FrozenLake: S F H G), else ''"""


def load_qgrid(run_dir: Path, agent: str) -> QGrid:
    """The agent's latest checkpoint in ``run_dir`` on its grid (env from the run's spec)."""
    from bdi_rl.rl.envs import EnvError, make_env

    path = run_dir / QTABLE_DIR / f"{agent}.npz"
    if not path.is_file():
        raise QGridError(f"no Q-table checkpoint for {agent}")
    try:
        env_spec = tomllib.loads((run_dir / SPEC_FILE).read_text())["env"]
        env = make_env(env_spec["id"], env_spec.get("kwargs", {}), env_spec.get("max_episode_steps"))
    except (OSError, KeyError, tomllib.TOMLDecodeError, EnvError) as exc:
        raise QGridError(f"cannot rebuild the env from {run_dir / SPEC_FILE}: {exc}") from None
    try:
        q = load_checkpoint(path).q
    except CheckpointError as exc:
        raise QGridError(str(exc)) from None
    return grid_of(q, env, agent, path.name)


def grid_of(q: np.ndarray, env: Any, agent: str, name: str = "the Q-table") -> QGrid:
    """``q`` laid out on ``env``'s grid (an ``EnvAdapter``); QGridError if it has none."""
    if env.grid_shape is None or env.family not in MOVES:
        raise QGridError(f"{env.env_id} is not a grid world: no heatmap")
    rows, cols = env.grid_shape
    if q.shape != (rows * cols, env.n_actions):
        raise QGridError(f"{name}: Q-table shape {q.shape} does not fit a {rows}x{cols} grid")
    untouched = np.ptp(q, axis=1) < 1e-6
    greedy = q.argmax(axis=1)
    desc = getattr(env.env.unwrapped, "desc", None)
    moves = MOVES[env.family]
    grid = QGrid(agent, rows, cols, [], [], [])
    for y in range(rows):
        grid.max_q.append([None if untouched[y * cols + x] else float(q[y * cols + x].max()) for x in range(cols)])
        grid.moves.append([None if untouched[y * cols + x] else moves[int(greedy[y * cols + x])] for x in range(cols)])
        grid.letters.append([desc[y][x].decode() if desc is not None else "" for x in range(cols)])
    return grid
