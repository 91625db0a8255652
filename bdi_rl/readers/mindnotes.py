"""What the Mind Inspector must say beside a mind so that it is not misread.

Two views were read wrong by new users (issue 18): an episode-mode learner at "episode N,
step K" shows the beliefs it perceived when the previous episode ended (Python runs the
whole episode; percepts arrive at its end), and a run traced at ``episode`` level shows no
beliefs at all because that level records none. The viewer and ``bdi-rl inspect`` both
print these notes.
"""

from __future__ import annotations

from typing import Any

from bdi_rl.trace.kinds import RL_STEP

EPISODE_MODE_BELIEF = "mode(episode)"


def mind_notes(trace_level: str | None, beliefs: dict[str, Any], event: dict[str, Any]) -> list[str]:
    """One sentence per way this mind could be misread, in the order to show them."""
    notes = []
    if trace_level == "episode":
        notes.append(
            "This run was traced at level episode, which records episodes, evaluations and "
            "messages but no beliefs, goals or plans: run it with --trace step (or cycle) to see them."
        )
    elif EPISODE_MODE_BELIEF in beliefs and event.get("kind") == RL_STEP and event.get("episode") is not None:
        episode = event["episode"]
        before = f"episode {episode - 1} ended" if episode > 0 else "training started"
        notes.append(
            f"Episode mode: Python plays the whole episode and the plans perceive it when it ends, "
            f"so these beliefs are the ones perceived when {before}; the Q-learner panel is this step's."
        )
    return notes
