"""``bdi-rl qtable list``, ``show`` and ``diff``: Q-table checkpoints, for people.

``list`` prints the checkpoint library (:mod:`bdi_rl.readers.library`) of a runs directory,
one table per env and state space; a damaged checkpoint is a row saying why.

``show`` prints a checkpoint's metadata (verified: the file is read through
:func:`~bdi_rl.rl.checkpoint.load_checkpoint`) and, for grid worlds, the greedy policy as
arrows on the map. ``diff`` compares two checkpoints of the same state space: the largest
changes of Q and the states whose greedy action differs.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path
from typing import Any

import numpy as np
from msgspec import UNSET
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bdi_rl.readers.qgrid import QGrid, QGridError, checkpoint_env, grid_of
from bdi_rl.rl.checkpoint import Checkpoint, check_env, load_checkpoint, state_space_of

ARROWS = {(-1, 0): "←", (1, 0): "→", (0, -1): "↑", (0, 1): "↓"}


def _env_of(checkpoint: Checkpoint) -> Any:
    """The env the table was made for, rebuilt from its metadata to draw the map (None if it
    cannot be: ``readers.qgrid.checkpoint_env``, the viewer's panel's resolution too)."""
    try:
        return checkpoint_env(checkpoint)
    except QGridError:
        return None


def _grid(checkpoint: Checkpoint, q: np.ndarray | None = None) -> QGrid | None:
    env = _env_of(checkpoint)
    if env is None:
        return None
    try:
        return grid_of(checkpoint.q if q is None else q, env, checkpoint.header.agent, checkpoint.path.name)
    except QGridError:
        return None


def policy_map(grid: QGrid, mark: set[int] | None = None) -> list[str]:
    """One line per grid row: each cell's map letter and greedy arrow (``·``: never
    updated). With ``mark``, cells whose state is not in it are dimmed to ``..``."""
    lines = []
    for y in range(grid.rows):
        cells = []
        for x in range(grid.cols):
            letter = grid.letters[y][x] or " "
            move = grid.moves[y][x]
            arrow = ARROWS.get(move, "?") if move is not None else "·"
            if letter in ("H", "G"):  # terminal: no decision there
                arrow = " "
            cell = f"{letter}{arrow}"
            if mark is not None and y * grid.cols + x not in mark:
                cell = ".."
            cells.append(cell)
        lines.append(" ".join(cells))
    return lines


def show(path: Path, file: Any = None) -> None:
    checkpoint = load_checkpoint(path)
    header = checkpoint.header
    console = Console(file=file or sys.stdout, width=110, highlight=False)
    env = checkpoint.env
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    created = header.created
    warm = header.warm_start
    rows = [
        ("file", f"{escape(str(path))} (format {header.format})"),
        ("env", f"{_text(env.env_id) if env else '?'} {_text(str(header.env_kwargs or (env.kwargs if env else {})))}"),
        ("table", f"{checkpoint.q.shape[0]} states x {checkpoint.q.shape[1]} actions"),
        ("agent", f"{_text(header.agent or '?')} of run {_text(header.run or '?')}"),
        (
            "trained",
            (
                f"{header.episodes} episodes, {header.env_steps} env steps in "
                f"that run; {checkpoint.episodes} episodes in all"
            ),
        ),
        ("at save", f"epsilon {_known(header.epsilon)}, alpha {_known(header.alpha)}"),
        ("learning", _text(", ".join(f"{k} {v}" for k, v in header.learning.items()))),
        (
            "checksum",
            f"{checkpoint.checksum} (verified)" if checkpoint.checksum else "none (format 1: shape checked only)",
        ),
        ("spec", _text(header.spec_hash or "?")),
        (
            "created",
            "?" if created is UNSET else datetime.datetime.fromtimestamp(created).isoformat(timespec="seconds"),
        ),
    ]
    if warm is not None:
        rows.append(("warm start", f"from {_text(warm.path)} ({warm.episodes} episodes)"))
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)
    grid = _grid(checkpoint)
    q = checkpoint.q
    if grid is not None:
        console.print("\ngreedy policy (map letter, then greedy move; · never updated):")
        for line in policy_map(grid):
            console.print("  " + line)
    visited = int((np.ptp(q, axis=1) >= 1e-6).sum())
    console.print(f"\n{visited} of {q.shape[0]} states updated; max Q {q.max():.4g}, min Q {q.min():.4g}")


def _known(value: Any) -> str:
    return "?" if value is UNSET else str(value)


def _text(value: str, limit: int = 200) -> str:
    """Text from a checkpoint, fit for one line of a console: markup escaped, control
    characters shown as escapes, shortened."""
    if not value.isprintable():
        value = repr(value)[1:-1]
    return escape(value if len(value) <= limit else value[: limit - 3] + "...")


def diff(path_a: Path, path_b: Path, top: int = 10, file: Any = None) -> dict[str, Any]:
    """Print, and return, how B's table differs from A's."""
    a, b = load_checkpoint(path_a), load_checkpoint(path_b)
    check_env(b, state_space_of(a), against=f"{path_a}'s: no diff", labels="B vs A")
    delta = b.q - a.q
    order = np.argsort(-np.abs(delta), axis=None)[:top]
    largest = [(int(i // delta.shape[1]), int(i % delta.shape[1])) for i in order if delta.flat[i] != 0]
    greedy_a, greedy_b = a.q.argmax(axis=1), b.q.argmax(axis=1)
    changed = [
        s
        for s in range(a.q.shape[0])
        if greedy_a[s] != greedy_b[s] and not (np.ptp(a.q[s]) < 1e-6 and np.ptp(b.q[s]) < 1e-6)
    ]
    console = Console(file=file or sys.stdout, width=110, highlight=False)
    console.print(f"A {path_a} ({a.episodes} episodes)\nB {path_b} ({b.episodes} episodes)")
    console.print(
        f"max |B - A| {np.abs(delta).max():.4g}, mean {np.abs(delta).mean():.4g}; "
        f"{len(changed)} of {a.q.shape[0]} states change their greedy action"
    )
    table = Table("state", "action", "A", "B", "B - A", box=None)
    for s, act in largest:
        table.add_row(str(s), str(act), f"{a.q[s, act]:.4g}", f"{b.q[s, act]:.4g}", f"{delta[s, act]:+.4g}")
    if largest:
        console.print(table)
    grid_b = _grid(b)
    if changed and grid_b is not None:
        console.print("\nB's greedy moves where they differ from A's:")
        for line in policy_map(grid_b, mark=set(changed)):
            console.print("  " + line)
    elif changed:
        console.print(
            "greedy action changes (state: A -> B): "
            + ", ".join(f"{s}: {greedy_a[s]} -> {greedy_b[s]}" for s in changed[:40])
        )
    return {"largest": largest, "changed": changed, "max_abs": float(np.abs(delta).max())}


def print_library(runs: Path, file: Any = None) -> int:
    """The checkpoint library of ``runs`` as tables, one per env and state space (the
    tables of one can warm-start each other's runs); returns how many entries it lists."""
    from bdi_rl.readers.library import Library

    entries = Library(runs).scan()["entries"]
    out = file or sys.stdout
    # a terminal's width; piped (grep, a file), one line per checkpoint
    console = Console(file=out, width=None if out.isatty() else 1000, highlight=False)
    if not entries:
        console.print(f"no Q-table checkpoints under {escape(str(runs))}")
        return 0
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry["group"], []).append(entry)
    for group in sorted(groups):
        table = Table(title=_text(group), title_justify="left", box=None, pad_edge=False)
        columns = (
            "run",
            "agent",
            "episodes",
            "epsilon",
            "final eval",
            "saved",
            "warm start from",
            "plays",
            "integrity",
        )
        for column in columns:
            table.add_column(column, overflow="fold")
        for entry in sorted(groups[group], key=lambda e: (e["run"], e["agent"])):
            table.add_row(*_library_row(entry))
        console.print(table)
        console.print()
    return len(entries)


def _library_row(entry: dict[str, Any]) -> list[str]:
    final = entry["evaluation"]
    evaluated = (
        f"success {final.get('success_rate', '?')}, return {final.get('mean_return', '?')}"
        if isinstance(final, dict)
        else "-"
    )
    lineage = entry["lineage"]
    origin = "-"
    if lineage:
        origin = f"{lineage.get('key') or lineage.get('path')} ({lineage.get('episodes')} ep.; {lineage['status']})"
    episodes = entry["total_episodes"]
    trained = "-" if episodes is None else str(episodes)
    if episodes is not None and entry["episodes"] != episodes:
        trained += f" ({entry['episodes']} here)"
    saved = entry["created"]
    run = entry["run"] + (f" (imported from {entry['made_by']})" if entry["imported"] else "")
    integrity = entry["integrity"] if entry["verified"] else f"NOT USABLE: {entry['integrity']}"
    policies = entry["policies"]
    if policies:
        integrity += (
            f"; policy cache: {policies['problem']}"
            if policies["problem"]
            else f"; policy cache of {len(policies['goals'])} goal(s)"
        )
    plays = entry["plays"]
    played = "-"
    if plays:
        last = plays[-1]
        low, high = last["success_ci95"] or (0.0, 0.0)
        played = f"{len(plays)}; last {last['run']}: success {last['success_rate']:.3f} [{low:.3f}, {high:.3f}]"
    return [
        _text(run),
        _text(entry["agent"]),
        trained,
        "-" if entry["epsilon"] is None else f"{entry['epsilon']:.3g}",
        _text(evaluated),
        "-" if saved is None else datetime.datetime.fromtimestamp(saved).isoformat(sep=" ", timespec="seconds"),
        _text(origin),
        _text(played),
        _text(integrity),
    ]
