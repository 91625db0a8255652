"""Terminal output of ``bdi-rl run``: a progress bar while learning, a summary table after."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported when there is something to draw: ~50 ms of a run's start
    from bdi_rl.xmpp.waiting import Progress as RunProgress


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[RunProgress], None]]:
    """Yield a callback that shows episodes done, mean return (last 100) and epsilon."""
    if not enabled:
        yield lambda _: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]episodes"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("return {task.fields[ret]}"),
        TextColumn("eps {task.fields[eps]}"),
        TextColumn("{task.fields[speed]} steps/s"),
        TimeElapsedColumn(),
        console=console,
        transient=not console.is_terminal,
    )
    task = bar.add_task("train", total=None, ret="-", eps="-", speed="-")

    def update(p: RunProgress) -> None:
        ret = "-" if p.mean_return is None else f"{p.mean_return:.3f}"
        speed = f"{p.env_steps_per_second:,.0f}"
        bar.update(
            task, total=p.episodes_total, completed=p.episodes_done, ret=ret, eps=f"{p.epsilon:.3f}", speed=speed
        )

    with bar:
        yield update


def print_summary(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    speed = f"{summary['wall_seconds']:.1f} s, {summary['env_steps_per_second']:,.0f} env steps/s"
    resumed = summary.get("resumed")
    if resumed:  # the figures are this process's: say where it took the run up
        at = sorted(set(resumed["episodes"].values())) or [0]
        where = f"episode {at[0]}" if len(at) == 1 else f"episodes {at[0]}-{at[-1]}"
        speed = f"resumed at {where}; this part: {speed}"
    table = Table(title=f"{summary['run']}  ({speed})")
    for column in ("agent", "episodes", "env steps", "eval episodes", "mean return", "success"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for name, agent in summary["agents"].items():
        if "role" in agent or "episodes" not in agent:  # a coordinator (no env), the world (its agents learn)
            role = agent.get("role", "coordinator")
            if role == "world":
                steps = f"{agent['joint_steps']:,} joint"
                table.add_row(f"{name} (world)", str(agent["episodes"]), steps, "-", "-", "-")
            else:
                table.add_row(f"{name} ({role})", "-", "-", "-", "-", "-")
            continue
        ev = agent.get("eval") or {}
        table.add_row(
            name,
            str(agent["episodes"]),
            f"{agent['env_steps']:,}",
            str(ev.get("episodes", "-")),
            f"{ev['mean_return']:.3f}" if ev else "-",
            f"{ev['success_rate']:.3f}" if ev else "-",
        )
    console = Console(file=sys.stdout, width=120)
    console.print(table)
    evaluation = summary.get("evaluation")
    if evaluation:  # a play: what it measured, and how sure that is
        for line in evaluation_lines(evaluation):
            console.print(line, highlight=False, markup=False, soft_wrap=True)  # one line each


def evaluation_lines(evaluation: dict[str, Any]) -> list[str]:
    """A play's results, one line per agent: the table played, then success and mean return
    with their 95 % intervals (methods named)."""
    lines = []
    for name, entry in evaluation.get("agents", {}).items():
        if not entry.get("episodes"):
            lines.append(f"{name}: no episode played")
            continue
        table = entry.get("checkpoint") or {}
        origin = f" of {table.get('path')} ({table.get('episodes')} episodes trained)" if table else ""
        low, high = entry["success_ci95"]
        r_low, r_high = entry["return_ci95"]
        lines.append(
            f"{name}: evaluation{origin}: {entry['episodes']} greedy episodes, success {entry['success_rate']:.3f} "
            f"[{low:.3f}, {high:.3f}], mean return {entry['mean_return']:.3f} [{r_low:.3f}, {r_high:.3f}] "
            f"(95 % intervals: success {evaluation.get('success_ci')}, return {evaluation.get('return_ci')})"
        )
        if entry.get("task_change"):
            lines.append(f"{name}: played on another task than it learned: {entry['task_change']}")
    return lines
