"""``bdi-rl export``: a run's learning curves as CSV or TensorBoard scalars.

TensorBoard tags follow CleanRL (``charts/episodic_return``, ``charts/episodic_length``,
``charts/epsilon``, ``charts/SPS``, ``eval/episodic_return``; and ``charts/success``,
``eval/success_rate`` by the env kind's rule of success, ``rl.success``) with the agent's cumulative
env steps as the step, so bdi-rl runs sit beside other RL runs in one TensorBoard.
Reads the run through :class:`~bdi_rl.readers.runindex.RunIndex`; never writes into the run.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bdi_rl.readers.indexcache import default_cache_dir, open_index
from bdi_rl.readers.runindex import OnDamage
from bdi_rl.store import atomic_write_bytes

CSV_COLUMNS = (
    "run",
    "agent",
    "kind",
    "episode",
    "global_step",
    "episodic_return",
    "episodic_length",
    "outcome",
    "success",
    "epsilon",
    "success_rate",
    "wall_time",
)


class ExportError(ValueError):
    """Nothing to export, or a target that would be overwritten (one line for the CLI)."""


def rows(run_dir: Path, on_damage: OnDamage = None) -> Iterator[dict[str, Any]]:
    """One row per training episode and per evaluation, per agent, in trace order.
    ``success`` is the episode's (1 or 0), ``success_rate`` the evaluation's."""
    index = open_index(run_dir, default_cache_dir(), on_damage)
    for jid, agent in sorted(index.agents.items()):
        name = jid.split("@", 1)[0]
        steps = 0
        evals = iter(agent.evals)
        pending = next(evals, None)
        for k, episode in enumerate(agent.episodes, start=1):
            steps += int(episode["length"] or 0)
            yield {
                "run": run_dir.name,
                "agent": name,
                "kind": "episode",
                "episode": episode["episode"],
                "global_step": steps,
                "episodic_return": episode["return"],
                "episodic_length": episode["length"],
                "outcome": episode["outcome"],
                "success": int(episode["success"]),
                "epsilon": episode["epsilon"],
                "success_rate": None,
                "wall_time": episode["ts"],
            }
            while pending is not None and pending["after_episodes"] <= k:
                yield _eval_row(run_dir.name, name, pending, steps)
                pending = next(evals, None)
        while pending is not None:
            yield _eval_row(run_dir.name, name, pending, steps)
            pending = next(evals, None)


def _eval_row(run: str, agent: str, ev: dict[str, Any], steps: int) -> dict[str, Any]:
    return {
        "run": run,
        "agent": agent,
        "kind": "eval",
        "episode": ev["after_episodes"],
        "global_step": steps,
        "episodic_return": ev.get("mean_return"),
        "episodic_length": ev.get("mean_length"),
        "outcome": None,
        "success": None,
        "epsilon": None,
        "success_rate": ev.get("success_rate"),
        "wall_time": ev.get("ts"),
    }


def export_csv(run_dir: Path, path: Path, on_damage: OnDamage = None) -> int:
    """Write the rows as CSV (atomically); returns how many. Nothing is written for a
    damaged trace unless ``on_damage`` reads around it."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows(run_dir, on_damage):
        writer.writerow(row)
        count += 1
    if not count:
        raise ExportError(f"{run_dir.name}: no episodes in the trace: nothing to export")
    atomic_write_bytes(path, buf.getvalue().encode())
    return count


def export_joint_csv(run_dir: Path, path: Path, on_damage: OnDamage = None) -> int:
    """A shared world's joint steps as CSV (atomically), one row per agent per step
    (``readers.joint.JOINT_COLUMNS``); returns how many rows."""
    from bdi_rl.readers.joint import JOINT_COLUMNS, JointError, joint_rows

    index = open_index(run_dir, default_cache_dir(), on_damage)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=JOINT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    try:
        for row in joint_rows(index):
            writer.writerow(row)
            count += 1
    except JointError as exc:
        raise ExportError(f"{run_dir.name}: {exc}") from None
    if not count:
        raise ExportError(f"{run_dir.name}: no joint steps in the trace (the world records them at trace level step)")
    atomic_write_bytes(path, buf.getvalue().encode())
    return count


def export_tensorboard(run_dir: Path, log_dir: Path, on_damage: OnDamage = None) -> Path:
    """Write ``log_dir/<run>/<agent>/`` event files; the run's directory appears whole or not
    at all (written beside it, then renamed): not at all for a damaged trace, unless
    ``on_damage`` reads around it."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    target = log_dir / run_dir.name
    if target.exists():
        raise ExportError(f"--tensorboard {target}: already exists (remove it to export again)")
    scalars = list(rows(run_dir, on_damage))  # the trace checked before anything is created
    if not scalars:
        raise ExportError(f"{run_dir.name}: no episodes in the trace: nothing to export")
    log_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{run_dir.name}.", dir=log_dir))
    writers: dict[str, Any] = {}
    first: dict[str, tuple[float, int]] = {}

    def scalar(agent: str, tag: str, value: float, step: int, wall: float | None) -> None:
        writer = writers.get(agent)
        if writer is None:
            writer = writers[agent] = EventFileWriter(str(staging / agent))
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))])
        writer.add_event(event_pb2.Event(wall_time=wall or 0.0, step=step, summary=summary))

    try:
        for row in scalars:
            agent, step, wall = row["agent"], row["global_step"], row["wall_time"]
            if row["kind"] == "eval":
                scalar(agent, "eval/episodic_return", row["episodic_return"], step, wall)
                if row["success_rate"] is not None:
                    scalar(agent, "eval/success_rate", row["success_rate"], step, wall)
                continue
            scalar(agent, "charts/episodic_return", row["episodic_return"], step, wall)
            scalar(agent, "charts/episodic_length", row["episodic_length"], step, wall)
            scalar(agent, "charts/success", row["success"], step, wall)
            if row["epsilon"] is not None:
                scalar(agent, "charts/epsilon", row["epsilon"], step, wall)
            t0, s0 = first.setdefault(agent, (wall, step))
            if wall is not None and t0 is not None and wall > t0:
                scalar(agent, "charts/SPS", (step - s0) / (wall - t0), step, wall)
        for writer in writers.values():
            writer.close()
        os.replace(staging, target)
    finally:
        for writer in writers.values():
            writer.close()
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target
