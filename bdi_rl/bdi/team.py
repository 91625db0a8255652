"""Team learning (``asl/team-learner.asl``): what one learner discovers, its teammates use.

Experience travels as compact strings (``"s,a,r,s2,done;..."``), each small enough for one
message, and so do the runs of a learner's chosen plans (learned plan selection,
``bdi.options``: ``"plans:"`` and a JSON list of runs), which teammates learn their plan
values from as from their own; priors (``.rl_hazard``, ``.rl_goal``) read only where moves land (the env's
transition table: ``EnvAdapter.arrivals``), and what is *at* a cell comes from the belief,
i.e. from the teammate who found it. Anything a teammate sent is checked whole before any
Q-value changes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

import msgspec

from bdi_rl.bdi.args import cell_state, decoded, number_arg, text_arg
from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.policycache import decode
from bdi_rl.rl.checkpoint import PlanValue
from bdi_rl.rl.options import PlanOutcome

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
        self._plan_runs: list[str] = []  # encoded runs of chosen plans, when recording

    # -- shared experience ----------------------------------------------------------
    def record_experience(self) -> None:
        """From now on keep every training transition, and every run of a learned plan
        choice, for sharing."""
        if self._experience is None:
            self._experience = []
            self.session.on_transition = self._record
            if self.session.options is not None:
                self.session.options.on_learned = self._record_plan_run

    def _record_plan_run(self, run: PlanOutcome) -> None:
        item = json.dumps(
            [run.goal, run.state, run.plan, run.reward, run.steps, run.next_state, run.done], separators=(",", ":")
        )
        if len(item) + len(PLAN_RUNS) + 2 > EXPERIENCE_CHARS:
            return  # a state too long to travel: it stays this learner's own
        kept = self._plan_runs
        kept.append(item)
        if len(kept) > EXPERIENCE_LIMIT:
            del kept[: EXPERIENCE_LIMIT // 10]

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
        """The transitions kept since the last call, then the plan runs, in batches of at most
        EXPERIENCE_CHARS."""
        transitions = _packed(self._experience or [], 0)
        if self._experience is not None:
            self._experience = []
        runs = _packed(self._plan_runs, len(PLAN_RUNS) + 2)
        self._plan_runs = []
        return (
            *(";".join(group) for group in transitions),
            *(f"{PLAN_RUNS}[{','.join(group)}]" for group in runs),
        )

    def replay(self, text: Any) -> None:
        """Learn from a teammate's transitions, or the runs of its chosen plans; a malformed
        string fails the plan, whole (checked before the first update: no value changes).
        Plan runs teach a learner with learned plans; one without has nothing to learn them into."""
        learner = self.session.learner
        body = text_arg(text, "the experience", ".rl_replay")
        if body.startswith(PLAN_RUNS):
            runs = decoded(".rl_replay", decode_plan_runs, body)
            options = self.session.options
            if options is not None:
                for run in runs:
                    options.values.learn(run)
            return
        transitions = decoded(
            ".rl_replay",
            decode_experience,
            body,
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


def _packed(items: list[str], overhead: int) -> list[list[str]]:
    """``items`` in groups that each fit a message once joined by one character between items,
    with ``overhead`` characters around them (an item too long for one goes alone)."""
    groups: list[list[str]] = []
    start, size = 0, overhead
    for i, item in enumerate(items):
        if size + len(item) + 1 > EXPERIENCE_CHARS and i > start:
            groups.append(items[start:i])
            start, size = i, overhead
        size += len(item) + 1
    if start < len(items):
        groups.append(items[start:])
    return groups


#: A batch of runs of chosen plans, as opposed to one of transitions: this, then a JSON list.
PLAN_RUNS = "plans:"
_Text = Annotated[str, msgspec.Meta(max_length=EXPERIENCE_CHARS)]
_PlanRun = tuple[
    _Text,
    _Text,
    _Text,
    PlanValue,
    Annotated[int, msgspec.Meta(ge=0, le=10**9)],
    _Text,
    bool,
]


def decode_plan_runs(text: str) -> list[PlanOutcome]:
    """``"plans:[[goal, state, plan, reward, steps, next_state, done], ...]"`` -> runs, each
    checked (a finite reward, whole steps, done true or false)."""
    try:
        items = msgspec.json.decode(text[len(PLAN_RUNS) :], type=list[_PlanRun])
    except msgspec.DecodeError as exc:  # ValidationError is one
        raise ValueError(f"plan runs: {exc}") from None
    return [PlanOutcome(*item) for item in items]
