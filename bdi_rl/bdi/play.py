"""A play of a trained table (``bdi-rl play``): its episodes as the plans drive them, learning
nothing and saving nothing, and what they measured.

The learner is a :class:`~bdi_rl.rl.qlearning.FrozenLearner` (greedy, nothing changes a
Q-value); :class:`PlaySession` keeps every played episode's return, success and length, and
its ``.rl_evaluate`` reports them (no extra episodes: what is measured is what was traced and
can be watched); :class:`PlayedTable` announces the table played, as a warm start's is
(``qtable.load``, ``warm_started(N)``), and never writes a checkpoint.
"""

from __future__ import annotations

import time
from typing import Any

from bdi_rl.bdi.args import number_arg
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, PlayedEpisodes
from bdi_rl.rl.checkpoint import Checkpoint
from bdi_rl.rl.evalstats import RETURN_METHOD, SUCCESS_METHOD, evaluation_summary

__all__ = ["PlaySession", "PlayedEpisodes", "PlayedTable", "evaluation"]


class PlaySession(EpisodeSession):
    """A learner's session in a play: its episodes are greedy and train nothing (the learner
    is frozen), each is kept for the evaluation, and the plans' ``.rl_evaluate`` reports them;
    ``.rl_set_epsilon`` is checked, then ignored (a play stays greedy)."""

    learns = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.played = PlayedEpisodes()

    def _episode_closed(self, epsilon: float) -> None:
        self.played.add(self._return, self.env.success(self.outcome, self._return), self._length)
        super()._episode_closed(epsilon)

    def set_epsilon(self, value: Any) -> None:
        number_arg(value, "epsilon", ".rl_set_epsilon", 0, 1)
        self.percepts.perceive("epsilon", 0.0)

    def evaluate(self) -> None:
        """The episodes played so far, as an evaluation (``eval`` event and percept)."""
        if not self.played.returns:
            raise RuntimeError(".rl_evaluate in a play before any episode was played")
        started = time.perf_counter()
        self.record_eval(self.played.result(), time.perf_counter() - started)


class PlayedTable(CheckpointSchedule):
    """The table a play plays: announced as a warm start's (``warm_start``), never saved
    (``.rl_save_qtable`` and the runner's final save do nothing)."""

    def save(self) -> None:
        pass

    def write(self, force: bool = True) -> None:
        pass


def evaluation(
    policy_only: bool, played: dict[str, tuple[PlayedEpisodes, Checkpoint | None, str | None]]
) -> dict[str, Any]:
    """The ``evaluation`` of a play's ``summary.json``: per agent, the table it played
    (file, run, checksum, episodes trained), how the played task differs from the trained
    one, and the mean return and success rate with their 95 % intervals (methods named)."""
    agents: dict[str, Any] = {}
    for name, (episodes, table, change) in played.items():
        entry = evaluation_summary(episodes.returns, episodes.successes, episodes.lengths)
        if table is not None:
            entry["checkpoint"] = {
                "path": str(table.path),
                "run": table.header.run,
                "agent": table.header.agent,
                "checksum": table.checksum,
                "episodes": table.episodes,
            }
        if change:
            entry["task_change"] = change
        agents[name] = entry
    return {"policy_only": policy_only, "success_ci": SUCCESS_METHOD, "return_ci": RETURN_METHOD, "agents": agents}
