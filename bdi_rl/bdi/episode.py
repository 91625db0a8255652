"""One learner's episodes as its plans drive them: the env, the Q-learner, the percepts and
the trace of each step and episode (``.rl_reset``, ``.rl_act``, ``.rl_end_episode``,
``.rl_run_episode``, ``.rl_evaluate``).

This is where an env step happens and where a step's Q-update is asked of the learner; what
happens between episodes (checkpoints, benchmarks' progress checks) hangs on
:attr:`EpisodeSession.after_episode`, and team learning's recording on
:attr:`EpisodeSession.on_transition`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bdi_rl.bdi.args import index_arg, number_arg
from bdi_rl.bdi.options import LearnedOptions
from bdi_rl.bdi.runtime.terms import ANNOTS_PERCEPT, atom
from bdi_rl.rl.envs import EnvAdapter, make_env
from bdi_rl.rl.qlearning import EvalResult, QLearner, StepColumns, StepHook, evaluate, run_episode
from bdi_rl.rl.throughput import TrainingSpan, steps_per_second, training_seconds
from bdi_rl.trace.kinds import EPISODE_END, EVAL, STEP_LEVEL, EpisodeEndData, EvalData
from bdi_rl.trace.tracer import Tracer

#: The annotations of a percept, ``[source(percept)]``.
PERCEPT = ANNOTS_PERCEPT

#: (s, a, r, s2, terminated): one training transition, as team learning records it.
TransitionObserver = Callable[[int, int, float, int, bool], None]


class Percepts:
    """Where percepts go: the agent's mind (a runtime agent), known once its plan library is
    loaded. Arguments are runtime terms already: ints, floats, strings, atoms (interned)."""

    def __init__(self) -> None:
        self.mind: Any = None

    def perceive(self, functor: str, *args: Any) -> None:
        """Replace the percept ``functor/len(args)`` with ``functor(args)[source(percept)]``."""
        self.mind.replace_percept(functor, args)

    def forget(self, functor: str, arity: int) -> None:
        self.mind.drop_percepts(functor, arity)


@dataclass
class LearnerStats:
    """What the runner reads for the progress bar and the summary."""

    episodes: int = 0
    env_steps: int = 0
    returns: list[float] = field(default_factory=list)
    eval: EvalResult | None = None
    qtable: str | None = None
    training: TrainingSpan | None = None
    """when it trained, on the trace's clock (``time.time``): from its first reset to its last
    training episode, the evaluations in between as pauses (``bdi_rl.rl.throughput``)"""
    replayed_steps: int = 0
    """teammates' transitions this learner learned from (team learning)"""
    resumed_env_steps: int = 0
    """env steps done before this process resumed the run (not part of its throughput)"""

    @property
    def trained_env_steps(self) -> int:
        """The env steps this process trained (a resumed run's part)."""
        return self.env_steps - self.resumed_env_steps


def training_speed(stats: Sequence[LearnerStats], now: float) -> float:
    """Learners' env steps/s so far, as ``summary.json`` counts them: their steps over the
    wall time of their training phase (``bdi_rl.rl.throughput``)."""
    spans = [s.training for s in stats if s.training is not None]
    return steps_per_second(sum(s.trained_env_steps for s in stats), training_seconds(spans, now))


@dataclass
class PlayedEpisodes:
    """Each played episode's return, success and length, in order (a play's, or a greedy
    evaluation through the plans)."""

    returns: list[float] = field(default_factory=list)
    successes: list[bool] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    def add(self, ret: float, success: bool, length: int) -> None:
        self.returns.append(ret)
        self.successes.append(success)
        self.lengths.append(length)

    def result(self) -> EvalResult:
        n = len(self.returns)
        return EvalResult(n, sum(self.returns) / n, sum(self.successes) / n, sum(self.lengths) / n)


@dataclass
class PlanEvaluation:
    """Greedy episodes through the plans (``.rl_begin_eval`` ... ``.rl_end_eval``), while
    they run: when it began, what the episodes did, the training env to go back to."""

    started: float
    train_env: EnvAdapter
    played: PlayedEpisodes = field(default_factory=PlayedEpisodes)
    seeded: bool = False


class EpisodeSession:
    """A learner's env, Q-learner and trace, stepped by its plans."""

    learns = True
    """whether its episodes train the table (a play's do not: ``bdi.play.PlaySession``)"""

    def __init__(
        self,
        env: EnvAdapter,
        learner: QLearner,
        tracer: Tracer,
        percepts: Percepts,
        *,
        episodes: int,
        eval_episodes: int,
        seed: int,
        eval_every: int = 0,
        goals: list[tuple[tuple[int, int], EnvAdapter]] | None = None,
        goal_every: int = 0,
        state_facts: bool = False,
    ) -> None:
        self.env = env
        self.learner = learner
        self.tracer = tracer
        self.percepts = percepts
        self.episodes_target = episodes
        self.eval_episodes = eval_episodes
        self.eval_every = eval_every
        """training episodes between evaluations during training (0: none)"""
        self.seed = seed
        self.goals = goals or []
        """moving goals: (cell, env) per goal; the env in use is the current goal's"""
        self.goal_every = goal_every
        self.state_facts = state_facts
        """perceive what each state is made of (``spec`` group's ``state_facts``; Taxi's decoded)"""
        self._goal_index: int | None = None
        self.stats = LearnerStats(
            episodes=learner.episodes, env_steps=learner.env_steps, resumed_env_steps=learner.env_steps
        )
        self.after_episode: list[Callable[[], None]] = []
        """called in order after every training episode is traced and perceived"""
        self.on_episode: Callable[[EpisodeSession], None] | None = None
        """called after every training episode (benchmarks judge progress with it; it may
        lower ``episodes_target`` to end training early)"""
        self.on_transition: TransitionObserver | None = None
        self.options: LearnedOptions | None = None
        """its mind's learned plan choices, paid every env step's reward (bdi.options)"""
        self.evaluation: PlanEvaluation | None = None
        """greedy episodes through the plans going on (``begin_eval``), else None"""
        self._episode_open = False
        self._state = 0
        self.last_reward = 0.0
        """the env's reward for the last step (sub-goal tables learn from it: bdi.subtasks)"""
        self._return = 0.0
        self._length = 0
        self.outcome: str | None = None
        """how the current episode ended, None while it runs"""
        self._reset_seeded = False
        self._eval_env: EnvAdapter | None = None
        self._columns = StepColumns()
        """episode mode at step level: what run_episode records of each step"""

    # -- percepts ----------------------------------------------------------------
    def _perceive_state(self, s: int) -> None:
        perceive = self.percepts.perceive
        perceive("state", s)
        env = self.env
        pos = env.position(s)
        if pos is not None:
            perceive("pos", *pos)
        if self.state_facts and env.has_state_facts:  # what it is made of (Taxi: taxi/2, passenger/1 ...)
            for functor, args in env.facts(s).items():
                perceive(functor, *args)

    def _select_goal(self) -> None:
        """Moving goals: the goal of the coming episode (and its env), perceived as goal(X,Y)
        before the first episode and as soon as each episode ends (so plans choose the next
        episode's plan knowing its goal; resets need not look again)."""
        if not self.goals:
            return
        k = (self.learner.episodes // self.goal_every) % len(self.goals) if self.goal_every else 0
        if k != self._goal_index:
            self._goal_index = k
            cell, self.env = self.goals[k]
            self._eval_env = None
            self.percepts.perceive("goal", *cell)

    @property
    def current_goal(self) -> tuple[int, int] | None:
        return self.goals[self._goal_index][0] if self.goals and self._goal_index is not None else None

    def static_percepts(self, mode: str) -> None:
        """What plans know before their first cycle: mode, env, targets, the first goal."""
        self._select_goal()
        perceive = self.percepts.perceive
        perceive("mode", atom(mode))
        perceive("env", self.env.env_id)
        perceive("episodes_target", self.episodes_target)
        perceive("eval_episodes", self.eval_episodes)

    def announce_done(self) -> None:
        """``training_done`` for a learner resumed after its last episode."""
        if self.learner.episodes >= self.episodes_target:
            self.percepts.perceive("training_done")

    # -- the training clock --------------------------------------------------------
    def stop_training_clock(self) -> None:
        """Training ended (or was interrupted): its span ends now, for the throughput."""
        training = self.stats.training
        if training is not None and training.end is None:
            training.end = time.time()

    def _mark_training_start(self) -> None:
        if self.stats.training is None:
            self.stats.training = TrainingSpan(time.time())

    # -- steps and episodes ----------------------------------------------------------
    def reset(self) -> None:
        evaluation = self.evaluation
        if evaluation is not None:  # its own env, seeded as .rl_evaluate's: the same episodes each time
            state = self.env.reset(seed=None if evaluation.seeded else self.seed + 10_000)
            evaluation.seeded = True
            self.tracer.stamp(self.learner.episodes, 0)  # after the training episodes it evaluates
            self._open_episode(state)
            return
        self.begin_episode(self.env.reset(seed=self.reset_seed()))

    def reset_seed(self) -> int | None:
        """The seed of the coming reset: the learner's seed the first time, then None (the
        env's own stream goes on)."""
        return None if self._reset_seeded else self.seed

    def begin_episode(self, state: int) -> None:
        """An episode starts in ``state`` (this learner's env reset, or its world did)."""
        self._mark_training_start()
        self.tracer.stamp(self.learner.episodes, 0)
        self._reset_seeded = True
        self._open_episode(state, self.learner.episodes)

    def _open_episode(self, state: int, episode: int | None = None) -> None:
        """An episode in ``state`` (``episode``: its number, perceived before the state)."""
        self._episode_open = True
        self._state = state
        self._return = 0.0
        self._length = 0
        self.outcome = None
        self.percepts.forget("outcome", 1)
        if episode is not None:
            self.percepts.perceive("episode", episode)
        self._perceive_state(self._state)

    def perceive_now(self) -> None:
        self._perceive_state(self._state)

    def choose(self, s: Any) -> int:
        state = index_arg(s, self.learner.n_states, "state", ".rl_choose")
        return self.learner.act(state) if self.evaluation is None else self.learner.greedy(state)

    def checked_action(self, a: Any) -> int:
        """``a`` as an action of this env, in a running episode (ActionArgError, RuntimeError)."""
        action = index_arg(a, self.env.n_actions, "action", ".rl_act")
        evaluation = self.evaluation
        reset = self._reset_seeded if evaluation is None else evaluation.seeded  # the env acted on
        if not reset:
            raise RuntimeError(".rl_act before any .rl_reset: start an episode first")
        if self.outcome is not None:
            raise RuntimeError(".rl_act after the episode ended: call .rl_reset first")
        return action

    @property
    def state(self) -> int:
        """The state this learner is in (its last observation)."""
        return self._state

    def act(self, a: Any) -> None:
        a = self.checked_action(a)
        row = self.learner.q[self._state].tolist() if self.tracer.level >= STEP_LEVEL else None
        self.apply_step(a, *self.env.step(a), row=row)

    def apply_step(
        self, a: int, s2: int, r: float, terminated: bool, truncated: bool, *, row: list[float] | None = None
    ) -> None:
        """The transition of action ``a`` from the current state: its Q-update, trace and
        percepts (this learner's env stepped, or its world did). ``row``: Q[s] as ``a`` was
        chosen from it, for the trace (None: read it now)."""
        s = self._state
        learner = self.learner
        tracer = self.tracer
        if self.options is not None:
            self.options.on_step(r)
        if self.evaluation is not None:  # greedy, through the plans: nothing learned or counted
            self._step_to(s2, r, terminated, truncated)
            return
        if row is None and tracer.level >= STEP_LEVEL:
            row = learner.q[s].tolist()
        q_before, q_after = learner.update(s, a, r, s2, terminated)
        learner.env_steps += 1
        length = tracer.step = self._length + 1
        if row is not None:  # Q[s] as the action was chosen from it: row[a] is q_before
            if tracer.record.rl_step(
                s, a, r, s2, terminated or truncated, q_after, learner.epsilon, row, tracer.episode, length
            ):
                tracer.flush_record()
        if self.on_transition is not None:
            self.on_transition(s, a, r, s2, terminated)
        self._step_to(s2, r, terminated, truncated)

    def _step_to(self, s2: int, r: float, terminated: bool, truncated: bool) -> None:
        """The episode moves to ``s2`` with reward ``r``: percepts, and its outcome at the end."""
        self._state = s2
        self._return += r
        self.last_reward = r
        self._length = self.tracer.step = self._length + 1
        self._perceive_state(s2)
        outcome = self.env.outcome(r, terminated, truncated)
        if outcome is not None:
            self.end_with(outcome)

    def end_with(self, outcome: str) -> None:
        """The current episode ended as ``outcome``: percept ``outcome(O)``."""
        self.outcome = outcome
        self.percepts.perceive("outcome", atom(outcome))

    def end_episode(self) -> None:
        self._episode_open = False
        evaluation = self.evaluation
        if evaluation is not None:
            evaluation.played.add(self._return, self.env.success(self.outcome, self._return), self._length)
            if self.options is not None:
                self.options.on_episode_end(truncated=self.outcome == "timeout")
            self.percepts.perceive("last_return", self._return)
            return
        epsilon = self.learner.epsilon
        self.learner.end_episode()
        self._episode_closed(epsilon)

    # -- a greedy evaluation through the plans ---------------------------------------------------
    def begin_eval(self) -> None:
        """Greedy episodes through the plans from now until :meth:`end_eval` (what a plan's
        learned choices and its ``.rl_choose`` come to, where ``.rl_evaluate`` plays the
        Q-table alone): on this learner's own eval env, seeded as ``.rl_evaluate``'s; no
        Q-update, no plan value learned, no exploration, no training episode counted."""
        if self.evaluation is not None:
            raise RuntimeError(".rl_begin_eval: already evaluating; end it first (.rl_end_eval)")
        if self._episode_open:
            raise RuntimeError(".rl_begin_eval in the middle of an episode; end it first (.rl_end_episode)")
        if self._eval_env is None:
            env = self.env
            self._eval_env = make_env(env.env_id, env.kwargs, env.max_episode_steps)
        self.evaluation = PlanEvaluation(time.perf_counter(), self.env)
        self.env = self._eval_env
        if self.options is not None:
            self.options.learning = False

    def end_eval(self) -> None:
        """The greedy episodes since :meth:`begin_eval`, reported as an evaluation (the
        ``eval`` event and percept); training goes on where it was."""
        evaluation = self.evaluation
        if evaluation is None:
            raise RuntimeError(".rl_end_eval without .rl_begin_eval")
        if self._episode_open:
            raise RuntimeError(".rl_end_eval in the middle of an episode; end it first (.rl_end_episode)")
        self.evaluation = None
        self.env = evaluation.train_env
        if self.options is not None:
            self.options.learning = True
        if not evaluation.played.returns:
            raise RuntimeError(".rl_end_eval: no episode was played since .rl_begin_eval")
        self.record_eval(evaluation.played.result(), time.perf_counter() - evaluation.started)

    def _episode_closed(self, epsilon: float) -> None:
        """Book-keeping, trace and percepts once the learner has counted an episode."""
        learner = self.learner
        stats = self.stats
        if self.options is not None:
            self.options.on_episode_end(truncated=self.outcome == "timeout")
        stats.episodes = learner.episodes
        stats.env_steps += self._length
        stats.returns.append(self._return)
        data: EpisodeEndData = {
            "return": self._return,
            "length": self._length,
            "outcome": self.outcome or "stopped",
            "epsilon": epsilon,
            "success": self.env.success(self.outcome, self._return),
        }
        if self.goals:
            data["goal"] = list(self.current_goal or ())
        self.tracer.emit(EPISODE_END, data)
        perceive = self.percepts.perceive
        perceive("last_return", self._return)
        perceive("epsilon", round(learner.epsilon, 6))
        perceive("episodes_done", learner.episodes)
        self._select_goal()  # plans choose the next episode's plan knowing its goal
        if self.eval_every and learner.episodes % self.eval_every == 0 and learner.episodes < self.episodes_target:
            self.evaluate()  # the final evaluation is the plans' (!evaluate)
        for listener in self.after_episode:
            listener()
        if self.on_episode is not None:
            self.on_episode(self)
        if learner.episodes >= self.episodes_target:
            self.stop_training_clock()
            perceive("training_done")

    def run_episode(self) -> None:
        """A whole training episode in Python (episode mode)."""
        self._mark_training_start()
        learner = self.learner
        tracer = self.tracer
        tracer.stamp(learner.episodes, 0)
        seed = None if self._reset_seeded else self.seed
        self._reset_seeded = True
        columns = self._columns if tracer.level >= STEP_LEVEL else None
        hook = None if self.on_transition is None else _observing(self.on_transition)
        epsilon = learner.epsilon
        result = run_episode(self.env, learner, learn=self.learns, seed=seed, on_step=hook, collect=columns)
        if not self.learns:  # greedy, so run_episode counted nothing
            learner.env_steps += result.length
            learner.end_episode()
        if columns is not None:
            tracer.rl_rows(columns, True, epsilon)
            columns.clear()
        self._return, self._length = result.ret, result.length
        self._state = result.final_state
        self.percepts.forget("outcome", 1)
        self.percepts.perceive("episode", tracer.episode)
        self._perceive_state(self._state)
        self.end_with(result.outcome)
        self._episode_closed(epsilon)

    # -- schedules and evaluation ------------------------------------------------------
    def set_epsilon(self, value: Any) -> None:
        self.learner.set_epsilon(number_arg(value, "epsilon", ".rl_set_epsilon", 0, 1))
        self.percepts.perceive("epsilon", round(self.learner.epsilon, 6))

    def evaluate(self) -> None:
        """Greedy episodes on this learner's own eval env (seeded the same each time)."""
        started = time.perf_counter()
        if self._eval_env is None:  # its own env: evaluating must not shift training's RNG
            env = self.env
            self._eval_env = make_env(env.env_id, env.kwargs, env.max_episode_steps)
        result = evaluate(self._eval_env, self.learner, self.eval_episodes, seed=self.seed + 10_000)
        self.record_eval(result, time.perf_counter() - started)

    def record_eval(self, result: EvalResult, seconds: float) -> None:
        """An evaluation's result (this learner's, or its world's greedy joint episodes):
        the ``eval`` event and percept."""
        self.stats.eval = result
        training = self.stats.training
        if training is not None and training.end is None:  # during training: not training time
            now = time.time()
            training.pauses.append((now - seconds, now))
        data: EvalData = {
            "episodes": result.episodes,
            "mean_return": result.mean_return,
            "success_rate": result.success_rate,
            "mean_length": result.mean_length,
            "after_episodes": self.learner.episodes,
            "seconds": round(seconds, 6),
        }
        self.tracer.emit(EVAL, data)
        self.percepts.perceive("eval", result.mean_return, result.success_rate)


def _observing(observe: TransitionObserver) -> StepHook:
    """run_episode's per-step hook that hands each transition to ``observe``."""

    def hook(
        s: int, a: int, r: float, s2: int, terminated: bool, truncated: bool, q_before: float, q_after: float
    ) -> None:
        observe(s, a, r, s2, terminated)

    return hook
