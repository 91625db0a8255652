"""Internal actions: the one bridge between AgentSpeak plans and the Q-learner.

Plans decide *when* to reset, act, learn, evaluate and save; Python does *how*. Every
action below is callable from ``.asl`` files; percepts come back as beliefs annotated
``source(percept)``.

=====================  =====================================================================
action                 effect
=====================  =====================================================================
``.rl_reset``          start an episode: percepts ``state(S)``, ``pos(X,Y)`` (grid envs),
                       ``episode(N)``; removes ``outcome(_)``
``.rl_perceive``       publish the current ``state(S)`` / ``pos(X,Y)`` again (after plans
                       removed or changed them)
``.rl_choose(S, A)``   ``A`` = epsilon-greedy action in state ``S`` (random tie-breaking)
``.rl_act(A)``         one env step with ``A`` and its Q-update; percepts ``state``, ``pos``,
                       and ``outcome(O)`` when the episode ends (``goal``, ``hole``,
                       ``timeout``, ``failed``)
``.rl_end_episode``    close the episode: schedules advance; percepts ``last_return(R)``,
                       ``epsilon(E)``, ``episodes_done(N)`` and ``training_done`` at the end
``.rl_run_episode``    episode mode: one whole training episode in Python, then the same
                       percepts as ``.rl_act`` + ``.rl_end_episode``
``.rl_set_epsilon(E)`` override epsilon (the schedule continues from the next episode)
``.rl_evaluate``       greedy evaluation (no learning); percept ``eval(MeanReturn, Success)``
``.rl_save_qtable``    checkpoint the Q-table into the run directory
``.rl_finish``         tell the runner this learner is done
=====================  =====================================================================

Static percepts set before the first reasoning cycle: ``mode(step|episode)``, ``env(Id)``,
``episodes_target(N)``, ``eval_episodes(N)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import agentspeak as asp

from bdi_rl.envs import EnvAdapter, make_env
from bdi_rl.qlearning import EvalResult, QLearner, evaluate, run_episode
from bdi_rl.store import save_qtable
from bdi_rl.trace import TraceLevel, Tracer

PERCEPT = frozenset([asp.Literal("source", (asp.Literal("percept"),))])


@dataclass
class LearnerStats:
    """What the runner reads for the progress bar and the summary."""

    episodes: int = 0
    env_steps: int = 0
    returns: list[float] = field(default_factory=list)
    eval: EvalResult | None = None
    qtable: str | None = None
    train_started: float | None = None
    train_seconds: float = 0.0
    """wall time from the first reset to the last training episode"""


class RlBridge:
    """Holds one learner's env, Q-table and trace, and exposes them as internal actions."""

    def __init__(
        self,
        env: EnvAdapter,
        learner: QLearner,
        tracer: Tracer,
        *,
        episodes: int,
        eval_episodes: int,
        seed: int,
        qtable_path: Path,
        qtable_meta: dict[str, Any],
        on_finish: Callable[[], None],
    ) -> None:
        self.env = env
        self.learner = learner
        self.tracer = tracer
        self.episodes_target = episodes
        self.eval_episodes = eval_episodes
        self.seed = seed
        self.qtable_path = qtable_path
        self.qtable_meta = qtable_meta
        self.on_finish = on_finish
        self.mind: Any = None  # set once the plan library is loaded
        self.stats = LearnerStats()
        self._state = 0
        self._return = 0.0
        self._length = 0
        self._outcome: str | None = None
        self._reset_seeded = False
        self._eval_env: EnvAdapter | None = None

    # -- percepts ----------------------------------------------------------------
    def perceive(self, functor: str, *args: Any) -> None:
        """Replace the percept ``functor/len(args)`` with ``functor(args)``."""
        self.mind.replace_percept(asp.Literal(functor, args, PERCEPT))

    def forget(self, functor: str, arity: int) -> None:
        self.mind.drop_percepts(functor, arity)

    def _perceive_state(self, s: int) -> None:
        self.perceive("state", s)
        pos = self.env.position(s)
        if pos is not None:
            self.perceive("pos", *pos)

    def static_percepts(self, mode: str) -> None:
        self.perceive("mode", asp.Literal(mode))
        self.perceive("env", self.env.env_id)
        self.perceive("episodes_target", self.episodes_target)
        self.perceive("eval_episodes", self.eval_episodes)

    # -- the actions ---------------------------------------------------------------
    def stop_training_clock(self) -> None:
        """Training ended (or was interrupted): fix ``train_seconds`` for the throughput."""
        stats = self.stats
        if stats.train_started is not None and not stats.train_seconds:
            stats.train_seconds = time.perf_counter() - stats.train_started

    def _mark_training_start(self) -> None:
        if self.stats.train_started is None:
            self.stats.train_started = time.perf_counter()

    def reset(self) -> None:
        self._mark_training_start()
        tracer = self.tracer
        tracer.episode = self.learner.episodes
        tracer.step = 0
        seed = None if self._reset_seeded else self.seed
        self._reset_seeded = True
        self._state = self.env.reset(seed=seed)
        self._return = 0.0
        self._length = 0
        self._outcome = None
        self.forget("outcome", 1)
        self.perceive("episode", self.learner.episodes)
        self._perceive_state(self._state)

    def perceive_now(self) -> None:
        self._perceive_state(self._state)

    def choose(self, s: int) -> int:
        return self.learner.act(int(s))

    def act(self, a: int) -> None:
        if self._outcome is not None:
            raise RuntimeError(".rl_act after the episode ended: call .rl_reset first")
        a = int(a)
        s = self._state
        learner = self.learner
        tracer = self.tracer
        tracing = tracer.level >= TraceLevel.STEP
        row = learner.q[s].tolist() if tracing else None
        s2, r, terminated, truncated = self.env.step(a)
        q_before, q_after = learner.update(s, a, r, s2, terminated)
        learner.env_steps += 1
        if tracing:
            self._trace_step(s, a, r, s2, terminated, truncated, q_before, q_after, row)
        self._state = s2
        self._return += r
        self._length += 1
        tracer.step = self._length
        self._perceive_state(s2)
        outcome = self.env.outcome(r, terminated, truncated)
        if outcome is not None:
            self._outcome = outcome
            self.perceive("outcome", asp.Literal(outcome))

    def end_episode(self) -> None:
        epsilon = self.learner.epsilon
        self.learner.end_episode()
        self._episode_closed(epsilon)

    def _episode_closed(self, epsilon: float) -> None:
        """Book-keeping, trace and percepts once the learner has counted an episode."""
        learner = self.learner
        stats = self.stats
        stats.episodes = learner.episodes
        stats.env_steps += self._length
        stats.returns.append(self._return)
        self.tracer.emit(
            "episode.end",
            {"return": self._return, "length": self._length,
             "outcome": self._outcome or "stopped", "epsilon": epsilon},
        )
        self.perceive("last_return", self._return)
        self.perceive("epsilon", round(learner.epsilon, 6))
        self.perceive("episodes_done", learner.episodes)
        if learner.episodes >= self.episodes_target:
            self.stop_training_clock()
            self.perceive("training_done")

    def run_episode(self) -> None:
        """A whole training episode in Python (episode mode)."""
        self._mark_training_start()
        learner = self.learner
        tracer = self.tracer
        tracer.episode = learner.episodes
        tracer.step = 0
        seed = None if self._reset_seeded else self.seed
        self._reset_seeded = True
        hook = self._step_hook if tracer.level >= TraceLevel.STEP else None
        epsilon = learner.epsilon
        result = run_episode(self.env, learner, learn=True, seed=seed, on_step=hook)
        self._return, self._length, self._outcome = result.ret, result.length, result.outcome
        self._state = result.final_state
        self.forget("outcome", 1)
        self.perceive("episode", tracer.episode)
        self._perceive_state(self._state)
        self.perceive("outcome", asp.Literal(result.outcome))
        self._episode_closed(epsilon)

    def _trace_step(self, s: int, a: int, r: float, s2: int, terminated: bool, truncated: bool,
                    q_before: float, q_after: float, row: list[float] | None = None) -> None:
        """One ``rl.step`` event; ``row`` is Q[s] before the update, when the caller has it."""
        data = {"s": s, "a": a, "r": r, "s2": s2, "done": terminated or truncated,
                "q_before": q_before, "q_after": q_after, "epsilon": self.learner.epsilon}
        if row is not None:
            data["q"] = row
        self.tracer.emit("rl.step", data)

    def _step_hook(self, s, a, r, s2, terminated, truncated, q_before, q_after) -> None:
        """run_episode's per-step hook in episode mode (only installed at step level)."""
        self._trace_step(s, a, r, s2, terminated, truncated, q_before, q_after)
        self.tracer.step += 1

    def set_epsilon(self, value: float) -> None:
        self.learner.set_epsilon(float(value))
        self.perceive("epsilon", round(self.learner.epsilon, 6))

    def evaluate(self) -> None:
        if self._eval_env is None:  # its own env: evaluating must not shift training's RNG
            env = self.env
            self._eval_env = make_env(env.env_id, env.kwargs, env.max_episode_steps)
        result = evaluate(self._eval_env, self.learner, self.eval_episodes, seed=self.seed + 10_000)
        self.stats.eval = result
        self.tracer.emit(
            "eval",
            {"episodes": result.episodes, "mean_return": result.mean_return,
             "success_rate": result.success_rate, "mean_length": result.mean_length},
        )
        self.perceive("eval", result.mean_return, result.success_rate)

    def save_qtable(self) -> None:
        learner = self.learner
        meta = {**self.qtable_meta, "episodes": learner.episodes,
                "env_steps": self.stats.env_steps, "epsilon": learner.epsilon}
        save_qtable(self.qtable_path, learner.q, meta)
        self.stats.qtable = f"{self.qtable_path.parent.name}/{self.qtable_path.name}"
        self.tracer.emit("qtable.save", {"path": self.stats.qtable, "episodes": learner.episodes})

    def finish(self) -> None:
        self.on_finish()

    # -- registration ----------------------------------------------------------------
    def register(self, actions: asp.Actions) -> None:
        """Add every ``.rl_*`` action to ``actions`` (traced as ``action`` events)."""
        traced = self._traced
        procedures: dict[str, tuple[tuple[type, ...], Callable[..., Any]]] = {
            ".rl_reset": ((), self.reset),
            ".rl_perceive": ((), self.perceive_now),
            ".rl_act": ((int,), self.act),
            ".rl_end_episode": ((), self.end_episode),
            ".rl_run_episode": ((), self.run_episode),
            ".rl_set_epsilon": ((float,), self.set_epsilon),
            ".rl_evaluate": ((), self.evaluate),
            ".rl_save_qtable": ((), self.save_qtable),
            ".rl_finish": ((), self.finish),
        }
        for name, (specs, fn) in procedures.items():
            actions.add_procedure(name, specs, traced(name, fn))
        actions.add_function(".rl_choose", (int,), traced(".rl_choose", self.choose))

    def _traced(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        tracer = self.tracer

        def call(*args: Any) -> Any:
            result = fn(*args)
            if tracer.level >= TraceLevel.STEP:
                data: dict[str, Any] = {"name": name, "args": list(args)}
                if result is not None:
                    data["result"] = result
                tracer.emit("action", data)
            return result

        return call
