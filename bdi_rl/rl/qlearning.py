"""Tabular Q-learning: the config, the learner, and the episode loop (read top to bottom).

Plain numpy and an :class:`~bdi_rl.rl.envs.EnvAdapter`; no agents, no messaging.  The
episode loop is the "episode mode" hot path, so it works on Python floats taken a row
at a time from the table and draws its random numbers in blocks. The three stay one module
(~500 lines), as a CleanRL script keeps them: the loop reads beside the updates it makes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # gymnasium: not for the readers, which read tables and specs only
    from bdi_rl.rl.envs import EnvAdapter

__all__ = [
    "EpisodeResult",
    "EvalResult",
    "FrozenLearner",
    "LearningConfig",
    "QLearner",
    "StepHook",
    "evaluate",
    "run_episode",
]

#: ``on_step(s, a, r, s2, terminated, truncated, q_before, q_after)``
StepHook = Callable[[int, int, float, int, bool, bool, float, float], object]

_BLOCK = 4096  # uniforms drawn per numpy call


@dataclass
class LearningConfig:
    """Hyper-parameters of one learner."""

    alpha: float = 0.1
    """learning rate (step size of the TD update) at the first episode"""
    alpha_min: float | None = None
    """floor of a per-episode alpha decay (times ``alpha_decay``); None keeps alpha constant"""
    alpha_decay: float = 1.0
    """multiplicative alpha decay per completed episode (only with ``alpha_min``)"""
    gamma: float = 0.99
    """discount factor; long sparse-reward tasks (FrozenLake 8x8) need 0.999"""
    epsilon_start: float = 1.0
    """exploration rate of the first episode"""
    epsilon_end: float = 0.05
    """exploration rate once the schedule is over"""
    epsilon_decay_episodes: int = 1000
    """episodes over which epsilon goes *linearly* from ``epsilon_start`` to ``epsilon_end``"""
    q_init: float = 0.0
    """initial value of every Q-table entry"""
    beta: float | None = None
    """learning rate of negative TD errors: set, the learner is hysteretic (Matignon, Laurent
    & Le Fort-Piat 2007): a gain moves Q by alpha, a loss only by beta < alpha, so an agent in
    a shared world stays optimistic about the joint action that once paid (a low reward is
    more often a partner's exploration than its own bad move). None: alpha for both signs;
    0 ignores every loss (distributed Q-learning, safe only in deterministic games)."""

    def __post_init__(self) -> None:
        def number(name: str, lo: float, hi: float, lo_open: bool = False) -> float:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"learning.{name}: must be a number, got {value!r}")
            ok = (lo < value if lo_open else lo <= value) and value <= hi
            if not ok:
                left = "(" if lo_open else "["
                raise ValueError(f"learning.{name}: must be in {left}{lo:g}, {hi:g}], got {value!r}")
            return float(value)

        self.alpha = number("alpha", 0.0, 1.0, lo_open=True)
        self.alpha_decay = number("alpha_decay", 0.0, 1.0, lo_open=True)
        if self.alpha_min is not None:
            self.alpha_min = number("alpha_min", 0.0, self.alpha, lo_open=True)
        elif self.alpha_decay != 1.0:
            raise ValueError(
                f"learning.alpha_decay: has no effect without learning.alpha_min, got {self.alpha_decay!r}"
            )
        self.gamma = number("gamma", 0.0, 1.0)
        self.epsilon_start = number("epsilon_start", 0.0, 1.0)
        self.epsilon_end = number("epsilon_end", 0.0, 1.0)
        n = self.epsilon_decay_episodes
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"learning.epsilon_decay_episodes: must be an integer >= 0, got {n!r}")
        q0 = self.q_init
        if isinstance(q0, bool) or not isinstance(q0, (int, float)) or not math.isfinite(q0):
            raise ValueError(f"learning.q_init: must be a finite number, got {q0!r}")
        self.q_init = float(q0)
        if self.beta is not None:  # at every point of the alpha schedule, beta <= alpha
            self.beta = number("beta", 0.0, self.alpha if self.alpha_min is None else self.alpha_min)

    def epsilon_at(self, episode: int) -> float:
        """Scheduled epsilon for (0-based) training episode ``episode``."""
        n = self.epsilon_decay_episodes
        if episode >= n:
            return self.epsilon_end
        return self.epsilon_start + (self.epsilon_end - self.epsilon_start) * (episode / n)

    def epsilon_from(self, value: float, since: int, episode: int) -> float:
        """Epsilon for training episode ``episode`` once a plan set it to ``value`` at
        episode ``since`` (``.rl_set_epsilon``): the schedule goes on from there at its own
        pace, (epsilon_end - epsilon_start) / epsilon_decay_episodes per episode, and stops at
        epsilon_end. A value the schedule would not move towards epsilon_end (already at or
        past it, or a schedule that does not decay) stays until the plan sets another."""
        n = self.epsilon_decay_episodes
        rate = (self.epsilon_end - self.epsilon_start) / n if n else 0.0
        if rate == 0.0 or (self.epsilon_end - value) * rate <= 0.0:
            return value
        moved = value + rate * (episode - since)
        return max(moved, self.epsilon_end) if rate < 0 else min(moved, self.epsilon_end)

    def alpha_at(self, episode: int) -> float:
        """Scheduled alpha for (0-based) training episode ``episode``."""
        if self.alpha_min is None:
            return self.alpha
        return max(self.alpha_min, self.alpha * self.alpha_decay**episode)


def _uniforms(rng: np.random.Generator) -> Iterator[float]:
    """Endless U[0, 1) floats, drawn from ``rng`` a block at a time (one numpy call per block)."""
    while True:
        yield from rng.random(_BLOCK).tolist()


def _pick_max(row: list[float], next_u: Callable[[], float]) -> int:
    """Index of the largest value; ties broken uniformly at random.

    Random tie-breaking matters: with first-max, an all-zero row always picks action 0
    (LEFT on FrozenLake) and some 8x8 seeds never find the goal.
    """
    m = max(row)
    if row.count(m) == 1:
        return row.index(m)
    ties = [i for i, v in enumerate(row) if v == m]
    return ties[int(next_u() * len(ties))]


class QLearner:
    """A Q-table with an epsilon-greedy policy and per-episode schedules.

    Reproducible: the same seed and config, fed the same transitions, give a
    bit-identical table.  Training and greedy evaluation draw from separate random
    streams (both spawned from ``seed``), so evaluating never perturbs training.
    """

    def __init__(
        self,
        n_states: int,
        n_actions: int,
        config: LearningConfig | None = None,
        seed: int | None = None,
    ) -> None:
        if n_states <= 0 or n_actions <= 0:
            raise ValueError(f"QLearner: need n_states > 0 and n_actions > 0, got {n_states}, {n_actions}")
        self.config = config if config is not None else LearningConfig()
        self.n_states = n_states
        self.n_actions = n_actions
        self.seed = seed
        self.q: np.ndarray = np.full((n_states, n_actions), self.config.q_init, dtype=np.float64)
        self.episodes = 0
        """completed training episodes (drives the schedules)"""
        self.env_steps = 0
        """training transitions (run_episode counts its own; callers of update() count theirs)"""
        self.epsilon = self.config.epsilon_at(0)
        self.alpha = self.config.alpha_at(0)
        self._epsilon_set: tuple[float, int] | None = None
        """(value, episode) of the plan's last ``set_epsilon``: the schedule goes on from it"""
        self._rows: list[np.ndarray] = []
        self._rows_of: np.ndarray | None = None
        if self.config.beta is not None:
            self.update = self._hysteretic_update  # type: ignore[method-assign]
        train_seq, eval_seq = np.random.SeedSequence(seed).spawn(2)
        self._next_u = _uniforms(np.random.default_rng(train_seq)).__next__
        self._next_eval_u = _uniforms(np.random.default_rng(eval_seq)).__next__

    def load_table(self, q: np.ndarray) -> None:
        """Start from ``q`` (a warm start): a copy of the same shape; the schedules stay."""
        if q.shape != self.q.shape:
            raise ValueError(f"QLearner: a table of shape {q.shape} for a learner of {self.q.shape}")
        self.q = np.array(q, dtype=np.float64, copy=True)

    def restore(self, q: np.ndarray, episodes: int, env_steps: int, epsilon: float | None = None) -> None:
        """Continue where a checkpoint left off (a resumed run): its table, its counts, and
        the schedules at its episode, as if it had trained here all along. ``epsilon``: the
        checkpoint's; one the schedule does not give there was set by a plan, and the
        schedule goes on from it (``set_epsilon``)."""
        self.load_table(q)
        self.episodes = episodes
        self.env_steps = env_steps
        self.epsilon = self.config.epsilon_at(episodes)
        self.alpha = self.config.alpha_at(episodes)
        self._epsilon_set = None
        if epsilon is not None and epsilon != self.epsilon:
            self.set_epsilon(epsilon)

    def _row_views(self) -> list[np.ndarray]:
        """One 1-D view per state, rebuilt only if ``q`` was replaced (e.g. a warm start).

        Indexing a Python list of views is about twice as fast as ``q[s]`` in the loop.
        """
        if self._rows_of is not self.q:
            self._rows = list(self.q)
            self._rows_of = self.q
        return self._rows

    def act(self, s: int) -> int:
        """Epsilon-greedy action for training."""
        next_u = self._next_u
        if next_u() < self.epsilon:
            return int(next_u() * self.n_actions)
        return _pick_max(self.q[s].tolist(), next_u)

    def greedy(self, s: int) -> int:
        """Greedy action (random tie-break on the evaluation stream)."""
        return _pick_max(self.q[s].tolist(), self._next_eval_u)

    def update(self, s: int, a: int, r: float, s2: int, terminated: bool) -> tuple[float, float]:
        """One TD update; returns (Q[s,a] before, after).  The caller counts ``env_steps``.

        Only a true termination cuts the bootstrap: a time-limit truncation is not the
        end of the task, so the value of ``s2`` still counts.
        """
        q = self.q
        before = float(q[s, a])
        target = r if terminated else r + self.config.gamma * max(q[s2].tolist())
        after = before + self.alpha * (target - before)
        q[s, a] = after
        return before, after

    def _hysteretic_update(self, s: int, a: int, r: float, s2: int, terminated: bool) -> tuple[float, float]:
        """``update`` of a hysteretic learner (``config.beta`` set): a negative TD error moves
        Q by beta, a positive one by alpha."""
        q = self.q
        before = float(q[s, a])
        target = r if terminated else r + self.config.gamma * max(q[s2].tolist())
        delta = target - before
        after = before + (self.alpha if delta >= 0.0 else self.config.beta) * delta  # type: ignore[operator]
        q[s, a] = after
        return before, after

    def end_episode(self) -> None:
        """Count a finished training episode and advance the alpha/epsilon schedules."""
        self.episodes += 1
        self.alpha = self.config.alpha_at(self.episodes)
        if self._epsilon_set is None:
            self.epsilon = self.config.epsilon_at(self.episodes)
        else:
            self.epsilon = self.config.epsilon_from(*self._epsilon_set, self.episodes)

    def set_epsilon(self, x: float) -> None:
        """Epsilon is ``x`` from now on (the rest of this episode and the next ones): it
        replaces the schedule's current value, and the schedule goes on from it
        (:meth:`LearningConfig.epsilon_from`)."""
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0.0 <= x <= 1.0:
            raise ValueError(f"epsilon: must be in [0, 1], got {x!r}")
        self.epsilon = float(x)
        self._epsilon_set = (self.epsilon, self.episodes)

    # -- what teammates know (team learning): priors and policies change Q here too ---------
    def cap(self, arrivals: Iterable[tuple[int, int, float]]) -> None:
        """A hazard prior: each move (s, a) that lands in a dead end with probability p is
        worth at most ``(1 - p) * max(Q)``."""
        q = self.q
        top = float(q.max())
        for s, a, p in arrivals:
            q[s, a] = min(q[s, a], (1.0 - p) * top)

    def floor(self, arrivals: Iterable[tuple[int, int, float]], reward: float) -> None:
        """A goal prior: each move (s, a) that lands on a reward R with probability p is
        worth at least ``p * R``."""
        q = self.q
        for s, a, p in arrivals:
            q[s, a] = max(q[s, a], p * reward)

    def greedy_policy(self) -> list[int]:
        """The greedy action of every state (first best on ties, as ``argmax``)."""
        return [int(a) for a in self.q.argmax(axis=1)]

    def adopt_policy(self, actions: list[int]) -> int:
        """Make ``actions`` (one per state) the greedy policy: where another action is best
        or tied, this one is raised just above it. Returns how many states changed their
        greedy action."""
        if len(actions) != self.n_states:
            raise ValueError(f"the policy must give one action per state ({self.n_states}), got {len(actions)}")
        changed = 0
        for s, a in enumerate(actions):
            row = self.q[s]
            best = float(row.max())
            if row[a] < best or (row == best).sum() > 1:  # make ``a`` the one greedy action
                changed += int(row[a] < best)
                row[a] = best + max(1e-9, abs(best) * 1e-9)
        return changed

    def __repr__(self) -> str:
        return (
            f"QLearner(n_states={self.n_states}, n_actions={self.n_actions}, "
            f"episodes={self.episodes}, epsilon={self.epsilon:.3f}, alpha={self.alpha:.3g})"
        )


class FrozenLearner(QLearner):
    """A trained table played, never trained (``bdi-rl play``): greedy actions (random
    tie-breaking on the evaluation stream), epsilon 0, and nothing the plans ask for changes a
    Q-value: updates, replayed experience, priors and adopted policies leave the table as it
    is. Episodes are counted (plans end a play by ``training_done``); the schedules stay."""

    def __init__(self, q: np.ndarray, config: LearningConfig | None = None, seed: int | None = None) -> None:
        frozen = dataclasses.replace(config or LearningConfig(), epsilon_start=0.0, epsilon_end=0.0, beta=None)
        super().__init__(q.shape[0], q.shape[1], frozen, seed)
        self.load_table(q)

    def act(self, s: int) -> int:
        return self.greedy(s)

    def update(self, s: int, a: int, r: float, s2: int, terminated: bool) -> tuple[float, float]:
        value = float(self.q[s, a])
        return value, value

    def end_episode(self) -> None:
        self.episodes += 1

    def set_epsilon(self, x: float) -> None:
        """Ignored: a play is greedy whatever its plans ask."""

    def cap(self, arrivals: Iterable[tuple[int, int, float]]) -> None:
        """Ignored: a played table takes no prior."""

    def floor(self, arrivals: Iterable[tuple[int, int, float]], reward: float) -> None:
        """Ignored: a played table takes no prior."""

    def adopt_policy(self, actions: list[int]) -> int:
        """Changes nothing (0 states changed); the length is still checked."""
        if len(actions) != self.n_states:
            raise ValueError(f"the policy must give one action per state ({self.n_states}), got {len(actions)}")
        return 0


@dataclass
class EpisodeResult:
    """One finished episode."""

    ret: float
    """undiscounted return"""
    length: int
    """transitions taken"""
    outcome: str
    """one of goal, hole, timeout, failed (see EnvAdapter.outcome)"""
    final_state: int
    """the state the episode ended in"""


@dataclass
class StepColumns:
    """What :func:`run_episode` records of each training step when asked (``collect``),
    appended in its loop with no call per step: the trace of a step-level run in episode
    mode costs a few list appends per step."""

    s: list[int] = field(default_factory=list)
    a: list[int] = field(default_factory=list)
    r: list[float] = field(default_factory=list)
    s2: list[int] = field(default_factory=list)
    q_after: list[float] = field(default_factory=list)
    """Q[s, a] after the update"""
    q: list[float] = field(default_factory=list)
    """Q[s] as each action was chosen from it, row after row (so element ``a[k]`` of row k
    is Q[s, a] before the update); flat, so a step keeps no list of its own alive"""

    def clear(self) -> None:
        for column in (self.s, self.a, self.r, self.s2, self.q_after, self.q):
            column.clear()


@dataclass
class EvalResult:
    """Greedy evaluation over several episodes."""

    episodes: int
    mean_return: float
    success_rate: float
    """fraction of successful episodes, by the env kind's rule (``rl.success``)"""
    mean_length: float


def run_episode(
    env: EnvAdapter,
    learner: QLearner,
    *,
    learn: bool = True,
    seed: int | None = None,
    on_step: StepHook | None = None,
    collect: StepColumns | None = None,
) -> EpisodeResult:
    """Play one episode; with ``learn`` update the table and schedules, else act greedily
    (on the learner's evaluation stream, counting nothing). ``collect``: each step's row of
    the trace, in either case.

    Hot path.  Each step reads the current Q row once as a Python list, and that same
    list serves both the bootstrap of this step and the action choice of the next one
    (patched in place when the agent stayed in the same state).
    """
    rows = learner._row_views()
    n_actions = learner.n_actions
    step = env.step
    s = env.reset(seed)
    row = rows[s].tolist()
    ret = 0.0
    n = 0
    if learn:
        collecting = collect is not None
        if collect is not None:
            c_s, c_a, c_r, c_s2 = collect.s.append, collect.a.append, collect.r.append, collect.s2.append
            c_after, c_q = collect.q_after.append, collect.q.extend
        next_u = learner._next_u
        epsilon = learner.epsilon
        alpha = learner.alpha
        gamma = learner.config.gamma
        while True:
            # epsilon-greedy, random tie-break (inlined _pick_max)
            if next_u() < epsilon:
                a = int(next_u() * n_actions)
            else:
                m = max(row)
                if row.count(m) == 1:
                    a = row.index(m)
                else:
                    ties = [i for i, v in enumerate(row) if v == m]
                    a = ties[int(next_u() * len(ties))]
            s2, r, term, trunc = step(a)
            before = row[a]
            if term:
                after = before + alpha * (r - before)
            else:
                row2 = rows[s2].tolist()
                after = before + alpha * (r + gamma * max(row2) - before)
            rows[s][a] = after
            if collecting:  # ``row`` is never written to again: it is kept as it is
                c_s(s)
                c_a(a)
                c_r(r)
                c_s2(s2)
                c_after(after)
                c_q(row)
            if on_step is not None:
                on_step(s, a, r, s2, term, trunc, before, after)
            ret += r
            n += 1
            if term or trunc:
                break
            if s2 == s:
                row2[a] = after
            s, row = s2, row2
        learner.env_steps += n
        learner.end_episode()
    else:
        next_u = learner._next_eval_u
        while True:
            a = _pick_max(row, next_u)
            s2, r, term, trunc = step(a)
            if collect is not None:  # Q does not change: q_after is Q[s, a] as chosen
                collect.s.append(s)
                collect.a.append(a)
                collect.r.append(r)
                collect.s2.append(s2)
                collect.q_after.append(row[a])
                collect.q.extend(row)
            if on_step is not None:
                v = row[a]
                on_step(s, a, r, s2, term, trunc, v, v)
            ret += r
            n += 1
            if term or trunc:
                break
            s, row = s2, rows[s2].tolist()
    outcome = env.outcome(r, term, trunc) or "timeout"
    return EpisodeResult(ret=ret, length=n, outcome=outcome, final_state=s2)


def evaluate(env: EnvAdapter, learner: QLearner, episodes: int, seed: int | None = None) -> EvalResult:
    """Greedy play for ``episodes`` episodes; the table and schedules are left untouched.

    ``seed`` seeds the env once, at the first reset (gymnasium's convention); later
    episodes continue its random stream.
    """
    if episodes <= 0:
        raise ValueError(f"evaluate: episodes must be > 0, got {episodes}")
    total = 0.0
    wins = 0
    steps = 0
    for i in range(episodes):
        res = run_episode(env, learner, learn=False, seed=seed if i == 0 else None)
        total += res.ret
        wins += env.success(res.outcome, res.ret)
        steps += res.length
    return EvalResult(
        episodes=episodes,
        mean_return=total / episodes,
        success_rate=wins / episodes,
        mean_length=steps / episodes,
    )
