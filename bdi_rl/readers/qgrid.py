"""A Q-table checkpoint laid out on its grid world: max Q and greedy move per cell.

Shared by ``bdi-rl plot`` (matplotlib), ``bdi-rl qtable`` and the viewer (canvas). The env
is rebuilt only to learn its geometry (grid shape, action directions, map letters), from what
the checkpoint says it was made for (:func:`checkpoint_env`): the learner's own env, which in
a shared world is its seat, not the world the run's ``[env]`` names. A table with no map
(a shared world's seat, Taxi, any non-grid env) is shown as numbers (:class:`QTable`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.rl.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from bdi_rl.rl.families import MOVES
from bdi_rl.store import QTABLE_DIR, SPEC_FILE

#: Largest state space whose map is drawn (64x64 cells; a wider map fits no screen or terminal).
MAX_MAP_STATES = 4096
#: Most rows a :class:`QTable` lists (the first updated states).
MAX_TABLE_ROWS = 16


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


@dataclass
class QTable:
    """A table with no map to lay it on: its size, its numbers and why there is no map."""

    agent: str
    env: str
    why: str
    """why there is no map (a shared world's seat, not a grid world ...)"""
    states: int
    actions: int
    action_names: list[str]
    updated: int
    """states whose row was ever changed"""
    max_q: float
    min_q: float
    rows: list[tuple[int, list[float]]]
    """(state, its Q row) of the first updated states, at most :data:`MAX_TABLE_ROWS`"""


def read_checkpoint(run_dir: Path, agent: str) -> Checkpoint:
    """The agent's latest checkpoint in ``run_dir``; QGridError if it has none or it is unreadable."""
    path = run_dir / QTABLE_DIR / f"{agent}.npz"
    if not path.is_file():
        raise QGridError(f"no Q-table checkpoint for {agent}")
    try:
        return load_checkpoint(path)
    except CheckpointError as exc:
        raise QGridError(str(exc)) from None


def checkpoint_env(checkpoint: Checkpoint, run_dir: Path | None = None) -> Any:
    """The env the table was made for (an ``EnvAdapter``), rebuilt from the checkpoint's own
    metadata to draw its map; QGridError saying why there is no map. Only registered
    gymnasium ids are made: a ``module:Class`` id from a file would import and run code named
    by that file, and a shared world's learner has a seat of it, whose states are what it
    observes, not cells. ``run_dir``: its spec stands in for a checkpoint that does not say."""
    from bdi_rl.rl.envs import EnvError, make_env
    from bdi_rl.rl.worldenv import is_world_id

    header, made = checkpoint.header, checkpoint.env
    spec = _spec_tables(run_dir) if run_dir is not None else {}
    env_id = made.env_id if made is not None else str(spec.get("env", {}).get("id", ""))
    kwargs = dict(header.env_kwargs or (made.kwargs if made is not None else spec.get("env", {}).get("kwargs", {})))
    agent = header.agent or checkpoint.path.stem
    if not env_id:
        raise QGridError(f"{checkpoint.path.name}: the checkpoint does not say which env it is for")
    if is_world_id(env_id) or isinstance(spec.get("world"), dict):
        raise QGridError(
            f"{agent} learns in the shared world {env_id}: its states are what it observes of the "
            "world, not cells of a map (the world's joint steps: the joint-action panel)"
        )
    if ":" in env_id:
        raise QGridError(f"{env_id} is an entry point: no map (the code a file names is not run to draw one)")
    if checkpoint.q.shape[0] > MAX_MAP_STATES:
        raise QGridError(f"{env_id}: {checkpoint.q.shape[0]} states, too many for a map")
    if header.task.desc:  # the map the table was last trained on (goals may have moved)
        kwargs = {k: v for k, v in kwargs.items() if k != "map_name"} | {"desc": header.task.desc}
    kwargs.pop("grid", None)
    try:
        return make_env(env_id, kwargs)
    except EnvError as exc:
        raise QGridError(f"cannot rebuild the env {env_id} the table was made for: {exc}") from None


def _spec_tables(run_dir: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((run_dir / SPEC_FILE).read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def load_qgrid(run_dir: Path, agent: str) -> QGrid:
    """The agent's latest checkpoint in ``run_dir`` on its grid; QGridError saying why not."""
    checkpoint = read_checkpoint(run_dir, agent)
    return grid_of(checkpoint.q, checkpoint_env(checkpoint, run_dir), agent, checkpoint.path.name)


def load_qview(run_dir: Path, agent: str, action_names: list[str] | None = None) -> QGrid | QTable:
    """What the viewer's Q-table panel shows of the agent's latest checkpoint: its grid, or,
    for a table with no map, its numbers and why (QGridError only without a readable one)."""
    checkpoint = read_checkpoint(run_dir, agent)
    try:
        return grid_of(checkpoint.q, checkpoint_env(checkpoint, run_dir), agent, checkpoint.path.name)
    except QGridError as exc:
        return table_of(checkpoint.q, agent, checkpoint.env.env_id if checkpoint.env else "?", str(exc), action_names)


def table_of(q: np.ndarray, agent: str, env: str, why: str, action_names: list[str] | None = None) -> QTable:
    """``q`` as numbers: size, updated states, range, and the first updated rows."""
    updated = np.flatnonzero(np.ptp(q, axis=1) >= 1e-6) if q.size else np.array([], dtype=int)
    names = list(action_names or [])
    if len(names) != q.shape[1]:
        names = [f"a{a}" for a in range(q.shape[1])]
    return QTable(
        agent=agent,
        env=env,
        why=why,
        states=int(q.shape[0]),
        actions=int(q.shape[1]),
        action_names=names,
        updated=int(updated.size),
        max_q=float(q.max()) if q.size else 0.0,
        min_q=float(q.min()) if q.size else 0.0,
        rows=[(int(s), [float(v) for v in q[s]]) for s in updated[:MAX_TABLE_ROWS]],
    )


def grid_of(q: np.ndarray, env: Any, agent: str, name: str = "the Q-table") -> QGrid:
    """``q`` laid out on ``env``'s grid (an ``EnvAdapter``); QGridError if it has none."""
    if env.grid_shape is None:
        raise QGridError(f"{env.env_id} is not a grid world: no heatmap")
    rows, cols = env.grid_shape
    if q.shape != (rows * cols, env.n_actions):
        raise QGridError(f"{name}: Q-table shape {q.shape} does not fit a {rows}x{cols} grid")
    untouched = np.ptp(q, axis=1) < 1e-6
    greedy = q.argmax(axis=1)
    desc = getattr(env.env.unwrapped, "desc", None)
    moves = [MOVES.get(name) for name in env.family.action_names]  # (dx, dy) per action
    grid = QGrid(agent, rows, cols, [], [], [])
    for y in range(rows):
        grid.max_q.append([None if untouched[y * cols + x] else float(q[y * cols + x].max()) for x in range(cols)])
        grid.moves.append([None if untouched[y * cols + x] else moves[int(greedy[y * cols + x])] for x in range(cols)])
        grid.letters.append([desc[y][x].decode() if desc is not None else "" for x in range(cols)])
    return grid
