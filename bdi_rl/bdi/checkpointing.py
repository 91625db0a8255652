"""When a learner's Q-table is checkpointed, and what the checkpoint says about it.

Plans save (``.rl_save_qtable``), the schedule saves every ``checkpoint_every`` episodes, and
the runner saves at the end. In a run, a checkpoint is written only once telemetry holds
every trace event before it, so a checkpoint never gets ahead of the trace: a process killed
in between leaves the previous checkpoint, and a resumed run re-runs (and re-traces) the gap.
The file format and its atomic write are :mod:`bdi_rl.rl.checkpoint`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.rl.checkpoint import Checkpoint, save_checkpoint
from bdi_rl.rl.subtasks import SubtaskTables
from bdi_rl.trace.kinds import QTABLE_LOAD, QTABLE_SAVE, QtableLoadData


class CheckpointSchedule:
    """Takes checkpoints of one learner and writes each when its trace is safe."""

    def __init__(
        self,
        session: EpisodeSession,
        path: Path,
        meta: dict[str, Any],
        *,
        every: int = 0,
        warm_start: Checkpoint | None = None,
        prior_episodes: int = 0,
        after_trace: bool = False,
        task_change: str | None = None,
        resumed: Checkpoint | None = None,
    ) -> None:
        self.session = session
        self.path = path
        self.meta = meta
        """what every checkpoint of this learner records besides its progress"""
        self.every = every
        """episodes between two checkpoints (0: only when the plans or the runner save)"""
        self.warm_start = warm_start
        """the checkpoint this learner's table was loaded from, if any"""
        self.prior_episodes = prior_episodes
        """training episodes behind the table before this run (warm starts)"""
        self.task_change = task_change
        self.resumed = resumed
        """the run's own checkpoint this learner resumed from, if any"""
        self.after_trace = after_trace
        self.subtasks: SubtaskTables | None = None
        """the learner's sub-goal tables, checkpointed with its Q-table once any is made"""
        self._pending: list[tuple[int, np.ndarray, dict[str, Any]]] = []
        """taken, not yet written: (seq telemetry must have acknowledged, table, metadata)"""
        if after_trace:
            session.tracer.on_ack = lambda upto: self.write(force=False)
        if every:
            session.after_episode.append(self._on_episode)

    def _on_episode(self) -> None:
        if self.session.learner.episodes % self.every == 0:
            self.save()

    def announce_warm_start(self) -> None:
        """Trace the table this learner starts from and perceive ``warm_started(N)`` (plans
        may act on it, e.g. evaluate first, or skip sharing)."""
        warm = self.warm_start
        if warm is None:
            return
        session = self.session
        loaded: QtableLoadData = {
            "path": str(warm.path),
            "episodes": warm.episodes,
            "checksum": warm.checksum,
            "epsilon": session.learner.epsilon,
            "task_change": self.task_change,
        }
        session.tracer.emit(QTABLE_LOAD, loaded)
        session.percepts.perceive("warm_started", warm.episodes)

    def plan_values(self) -> dict[str, dict[str, dict[str, float]]]:
        """The learned plan values this learner starts from: its resumed checkpoint's, else
        its warm start's (empty: none)."""
        start = self.resumed or self.warm_start
        return {} if start is None else start.plan_values

    def subtask_tables(self) -> dict[str, dict[int, list[float]]]:
        """The sub-goal tables this learner starts from, as :meth:`plan_values`."""
        start = self.resumed or self.warm_start
        return {} if start is None else start.subtask_tables

    def save(self) -> None:
        """Checkpoint the table with its progress (atomically: see ``bdi_rl.rl.checkpoint``)."""
        session = self.session
        learner = session.learner
        goal = {"goal": list(session.current_goal or ())} if session.goals else {}
        meta = {
            **self.meta,
            "task": {**session.env.task_signature(), **goal},
            "episodes": learner.episodes,
            "total_episodes": self.prior_episodes + learner.episodes,
            "env_steps": session.stats.env_steps,
            "epsilon": learner.epsilon,
            "alpha": learner.alpha,
        }
        if session.options is not None:  # taken now: the file is written once the trace is safe
            meta["plan_values"] = session.options.values.snapshot()
        if self.subtasks is not None and self.subtasks.tables:
            meta["subtask_tables"] = self.subtasks.snapshot()
        session.stats.qtable = f"{self.path.parent.name}/{self.path.name}"
        session.tracer.emit(QTABLE_SAVE, {"path": session.stats.qtable, "episodes": learner.episodes})
        self._pending.append((session.tracer.seq, learner.q.copy(), meta))
        self.write(force=not self.after_trace)

    def write(self, force: bool = True) -> None:
        """Write the newest checkpoint taken whose events telemetry holds (``force``: the
        newest taken); older ones are superseded. Every acknowledgement makes progress,
        however fast checkpoints are taken."""
        pending = self._pending
        ready = len(pending) if force else sum(1 for seq, _, _ in pending if seq <= self.session.tracer.acked)
        if ready:
            _, table, meta = pending[ready - 1]
            del pending[:ready]
            save_checkpoint(self.path, table, meta)
