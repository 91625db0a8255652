"""A learner's sub-goal tables as its plans drive them (``.rl_choose_in``, ``.rl_update_in``):
the primitive moves a hierarchy of plans learns under each goal (``bdi_rl.rl.subtasks``),
on the abstract states the plans compute, with the reward of the env's last step."""

from __future__ import annotations

from typing import Any

from bdi_rl.bdi.args import ActionArgError, index_arg
from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.text import term_text
from bdi_rl.rl.subtasks import SubtaskTables

#: Most abstract states a sub-goal's table may have (a bound on what plans can make it hold).
MAX_SUBTASK_STATES = 1 << 20


class SubtaskLearning:
    """``.rl_choose_in(Task, S, A)`` and ``.rl_update_in(Task, S, A, S2, Done)``."""

    def __init__(self, session: EpisodeSession, start: dict[str, dict[int, list[float]]] | None = None) -> None:
        self.session = session
        learner = session.learner
        self.tables = SubtaskTables(learner.n_actions, learner.config, session.seed, start)
        """the tables (``start``: a resumed or warm-start checkpoint's)"""

    def choose_in(self, task: Any, s: Any) -> int:
        """``A``: epsilon-greedy in ``Task``'s table at abstract state ``S`` (greedy while the
        plans evaluate)."""
        state = index_arg(s, MAX_SUBTASK_STATES, "abstract state", ".rl_choose_in")
        epsilon = 0.0 if self.session.evaluation is not None else self.session.learner.epsilon
        return self.tables.choose(_name(task), state, epsilon)

    def update_in(self, task: Any, s: Any, a: Any, s2: Any, done: Any) -> None:
        """``Task``'s Q[S, A] towards the env's last reward and, unless ``Done`` (``true``: the
        sub-goal was reached), the best of ``S2``'s row (nothing learned while evaluating)."""
        session = self.session
        state = index_arg(s, MAX_SUBTASK_STATES, "abstract state", ".rl_update_in")
        action = index_arg(a, session.env.n_actions, "action", ".rl_update_in")
        after = index_arg(s2, MAX_SUBTASK_STATES, "abstract state", ".rl_update_in")
        if session.evaluation is None:
            self.tables.update(_name(task), state, action, session.last_reward, after, _truth(done))


def _name(task: Any) -> str:
    return term_text(task, annots=False) if not isinstance(task, str) else task


def _truth(value: Any) -> bool:
    text = term_text(value, annots=False) if not isinstance(value, str) else value
    if text not in ("true", "false"):
        raise ActionArgError(f".rl_update_in: Done must be true or false, got {text}")
    return text == "true"
