"""Q-tables of primitive actions, one per sub-goal: the moves a hierarchy of plans learns
under each of its goals (MAXQ's subtasks, Dietterich 2000, each learned on its own abstract
state with the env's reward and its own termination; the plans above them are written, or
chosen by learned value: ``bdi_rl.rl.options``).

A table is named by its sub-goal (``nav(0)``: navigate to station 0) and holds a row per
abstract state the plans give it (Taxi's navigation: the taxi's cell, 25 of the env's 500
states), made when first met: a hierarchy learns small tables where the flat learner learns
one big one.
"""

from __future__ import annotations

import numpy as np

from bdi_rl.rl.qlearning import LearningConfig


class SubtaskTables:
    """Each sub-goal's Q-table, epsilon-greedy choice and Q-learning update."""

    def __init__(
        self, n_actions: int, config: LearningConfig, seed: int, start: dict[str, dict[int, list[float]]] | None = None
    ) -> None:
        self.n_actions = n_actions
        self.alpha = config.alpha
        self.gamma = config.gamma
        self.q_init = config.q_init
        self.rng = np.random.default_rng(seed)
        self.tables: dict[str, dict[int, np.ndarray]] = {
            task: {s: np.array(row, dtype=np.float64) for s, row in rows.items()}
            for task, rows in (start or {}).items()
        }
        """sub-goal -> abstract state -> the row of its actions' values (``start``: a
        checkpoint's, resumed or warm-started)"""

    def snapshot(self) -> dict[str, dict[str, list[float]]]:
        """A copy of the tables, as a checkpoint keeps them (states as text: JSON's keys)."""
        return {task: {str(s): row.tolist() for s, row in rows.items()} for task, rows in self.tables.items()}

    def row(self, task: str, s: int) -> np.ndarray:
        table = self.tables.setdefault(task, {})
        row = table.get(s)
        if row is None:
            row = table[s] = np.full(self.n_actions, self.q_init, dtype=np.float64)
        return row

    def choose(self, task: str, s: int, epsilon: float) -> int:
        """Epsilon-greedy in ``task``'s table, ties broken at random."""
        if epsilon > 0 and self.rng.random() < epsilon:
            return int(self.rng.integers(self.n_actions))
        row = self.row(task, s)
        best = np.flatnonzero(row == row.max())
        return int(best[0] if len(best) == 1 else self.rng.choice(best))

    def update(self, task: str, s: int, a: int, r: float, s2: int, done: bool) -> tuple[float, float]:
        """One Q-learning update of ``task``'s table: ``done`` when its sub-goal was reached
        (or the episode ended): nothing follows it in this table. Returns Q[s, a] before, after."""
        row = self.row(task, s)
        before = float(row[a])
        target = r if done else r + self.gamma * float(self.row(task, s2).max())
        row[a] = before + self.alpha * (target - before)
        return before, float(row[a])
