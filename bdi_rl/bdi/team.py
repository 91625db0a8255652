"""Team learning (``asl/team-learner.asl``): what one learner discovers, its teammates use.

Experience travels as compact strings (``"s,a,r,s2,done;..."``), each small enough for one
message; priors (``.rl_hazard``, ``.rl_goal``) read only where moves land (the env's
transition table: ``EnvAdapter.arrivals``), and what is *at* a cell comes from the belief,
i.e. from the teammate who found it. Anything a teammate sent is checked whole before any
Q-value changes.
"""

from __future__ import annotations

import math
import re
from typing import Any

from bdi_rl.bdi.args import cell_state, decoded, number_arg, text_arg
from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.policycache import decode

#: Longest experience string in one message (the wire accepts 16384 characters per body).
EXPERIENCE_CHARS = 12_000
#: Transitions kept for sharing before the oldest are dropped (plans that record but never
#: share must not grow without bound).
EXPERIENCE_LIMIT = 200_000


class TeamLearning:
    """Shared experience, priors and policies of one learner in a team."""

    def __init__(self, session: EpisodeSession) -> None:
        self.session = session
        self._experience: list[str] | None = None  # encoded transitions, when recording

    # -- shared experience ----------------------------------------------------------
    def record_experience(self) -> None:
        """From now on keep every training transition for sharing."""
        if self._experience is None:
            self._experience = []
            self.session.on_transition = self._record

    def _record(self, s: int, a: int, r: float, s2: int, terminated: bool) -> None:
        r_text = repr(r)
        if r_text.endswith(".0"):
            r_text = r_text[:-2]
        experience = self._experience
        assert experience is not None, "recording starts with record_experience"
        experience.append(f"{s},{a},{r_text},{s2},{1 if terminated else 0}")
        if len(experience) > EXPERIENCE_LIMIT:
            del experience[: EXPERIENCE_LIMIT // 10]

    def take_experience(self) -> tuple[str, ...]:
        """The transitions kept since the last call, in batches of at most EXPERIENCE_CHARS."""
        kept = self._experience or []
        batches: list[str] = []
        start = size = 0
        for i, item in enumerate(kept):
            if size + len(item) + 1 > EXPERIENCE_CHARS and i > start:
                batches.append(";".join(kept[start:i]))
                start, size = i, 0
            size += len(item) + 1
        if start < len(kept):
            batches.append(";".join(kept[start:]))
        if self._experience is not None:
            self._experience = []
        return tuple(batches)

    def replay(self, text: Any) -> None:
        """Learn from a teammate's transitions; a malformed string fails the plan, whole
        (checked before the first update: no Q-value changes)."""
        learner = self.session.learner
        transitions = decoded(
            ".rl_replay",
            decode_experience,
            text_arg(text, "the experience", ".rl_replay"),
            learner.n_states,
            learner.n_actions,
        )
        update = learner.update
        for s, a, r, s2, terminated in transitions:
            update(s, a, r, s2, terminated)
        self.session.stats.replayed_steps += len(transitions)

    # -- priors and policies -----------------------------------------------------------
    def hazard(self, x: Any, y: Any) -> None:
        env = self.session.env
        self.session.learner.cap(env.arrivals(cell_state(env, x, y, ".rl_hazard")))

    def goal(self, x: Any, y: Any, reward: Any) -> None:
        env = self.session.env
        s2 = cell_state(env, x, y, ".rl_goal")
        self.session.learner.floor(env.arrivals(s2), number_arg(reward, "the reward", ".rl_goal"))

    def policy(self) -> str:
        return ",".join(map(str, self.session.learner.greedy_policy()))

    def adopt_policy(self, text: Any) -> int:
        """Make a teammate's greedy policy mine; checked whole before any Q-value changes."""
        learner = self.session.learner
        actions = decoded(
            ".rl_adopt_policy", decode, text_arg(text, "the policy", ".rl_adopt_policy"), learner.n_actions
        )
        return decoded(".rl_adopt_policy", learner.adopt_policy, actions)


#: One transition as :meth:`TeamLearning._record` writes it: plain decimal numbers, a finite
#: reward (``float()`` alone would take "nan", "inf" and "1_0"), done 0 or 1.
_TRANSITION = re.compile(r"([0-9]{1,9}),([0-9]{1,9}),(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?),([0-9]{1,9}),([01])")


def decode_experience(text: str, n_states: int, n_actions: int) -> list[tuple[int, int, float, int, bool]]:
    """``"s,a,r,s2,done;..."`` -> transitions, checked against the Q-table's shape."""
    transitions = []
    for item in text.split(";") if text else ():
        match = _TRANSITION.fullmatch(item)
        reward = float(match[3]) if match else math.nan
        if match is None or not math.isfinite(reward):
            raise ValueError(f"experience: malformed transition {item[:40]!r}")
        t = (int(match[1]), int(match[2]), reward, int(match[4]), match[5] == "1")
        if not (t[0] < n_states and t[3] < n_states and t[1] < n_actions):
            raise ValueError(f"experience: transition {item[:40]!r} is outside this Q-table")
        transitions.append(t)
    return transitions
