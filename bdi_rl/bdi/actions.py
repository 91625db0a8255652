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
``.rl_save_qtable``    checkpoint the Q-table into the run directory (also done every
                      ``checkpoint_every`` episodes)
``.rl_finish``         tell the runner this learner is done
=====================  =====================================================================

Team learning (``asl/team-learner.asl``): what one learner discovers, its teammates use.

==========================  ================================================================
``.rl_record_experience``   from now on keep every training transition for sharing
``.rl_experience(Batches)`` ``Batches`` = the transitions kept since the last call, as a list
                            of compact strings (``"s,a,r,s2,done;..."``), each small enough
                            for one message; ``[]`` when there are none
``.rl_replay(E)``           Q-updates from a peer's transitions ``E`` (one such string); they
                            count as replayed, not as this learner's env steps
``.rl_hazard(X, Y)``        prior: (X, Y) ends the episode with nothing, so every move that
                            may land there is worth at most ``(1 - p) * max(Q)``
``.rl_goal(X, Y, R)``       prior: reaching (X, Y) pays ``R``, so every move that may land
                            there is worth at least ``p * R``
``.rl_policy(P)``           ``P`` = my greedy action in every state, ``"a0,a1,..."``
``.rl_adopt_policy(P, N)``  make a teammate's policy ``P`` my greedy policy: where my greedy
                            action differs, its action's Q-value is raised just above my best;
                            ``N`` = how many states changed their greedy action
==========================  ================================================================

Priors read only where moves land (the env's transition table: ``EnvAdapter.arrivals``);
what is *at* a cell comes from the belief, i.e. from the teammate who found it.

Policy cache (``asl/goal-learner.asl``; ``bdi_rl/bdi/policycache.py``):

``.rl_greedy_plan(P)``           ``P`` = my greedy action sequence from the start, ``"1,1,2"``
``.rl_plan_confidence(P, C)``    ``C`` = exact probability that playing ``P`` blindly succeeds
``.rl_follow(P)``                a training episode playing ``P`` (percepts as an episode)
``.rl_cache_policy(X, Y, P, C)`` / ``.rl_drop_policy(X, Y)``  keep the run's copy of the cache

Static percepts set before the first reasoning cycle: ``mode(step|episode)``, ``env(Id)``,
``episodes_target(N)``, ``eval_episodes(N)``, and for a warm-started learner
``warm_started(N)`` (N: the training episodes behind the table it loaded).

Every argument is checked before it is used (``_index_arg`` and its siblings): a state or
action outside the env's range (``.rl_choose(99, A)``, ``.rl_act(-1)``: never a Python
index, where -1 is the last row), a fraction, NaN, a string where a number belongs, a cell
off the grid, a malformed sequence, policy or experience (which may come from a teammate)
fails the action with :class:`ActionArgError`, so the plan fails like any failing action:
``intention.fail`` names the plan file and line, and no Q-value has changed.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import agentspeak as asp
import numpy as np

from bdi_rl.rl.checkpoint import Checkpoint, save_checkpoint
from bdi_rl.rl.envs import EnvAdapter, make_env
from bdi_rl.bdi.mind import GroundLiteral
from bdi_rl.bdi.policycache import (CachedPolicy, confidence, decode, encode, greedy_sequence,
                                save_policies)
from bdi_rl.rl.qlearning import EvalResult, QLearner, evaluate, run_episode
from bdi_rl.trace.events import TraceLevel, clip_text
from bdi_rl.trace.tracer import Tracer

PERCEPT = frozenset([asp.Literal("source", (asp.Literal("percept"),))])


@functools.lru_cache(maxsize=1 << 14)
def percept(functor: str, args: tuple) -> asp.Literal:
    """``functor(args)[source(percept)]``; percepts repeat (state(5), pos(1, 1) ...), and
    one literal per value saves building and hashing a new one every step."""
    return GroundLiteral(functor, args, PERCEPT)

class ActionArgError(asp.AslError, ValueError):
    """An internal action refused one of its arguments. An ``AslError``, so the interpreter
    reports it as ``file:line:col: message`` and the plan fails as for any failing action."""


def _integer(value: Any) -> int | None:
    """``value`` as an int if it is a whole number: numbers written in a plan arrive as
    floats (``3`` is 3.0), percepts as ints; bools, fractions, NaN and terms are not."""
    kind = type(value)
    if kind is int:
        return value
    if kind is float:
        return int(value) if value.is_integer() else None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def _shown(value: Any) -> str:
    """An argument as the plan would write it, short (for error messages)."""
    if isinstance(value, asp.Var):
        return "an unbound variable"
    text = asp.asl_repr(value)  # any Python value too: it falls back to repr()
    return text if len(text) <= 40 else text[:37] + "..."


def _index_arg(value: Any, size: int, what: str, action: str) -> int:
    """``value`` as a state or action number in ``0..size-1``, or ActionArgError: a plan's
    number is never used as a Python index (-1 would be the last row)."""
    index = _integer(value)
    if index is None or not 0 <= index < size:
        raise ActionArgError(f"{action}: {what} must be a whole number in 0..{size - 1}, "
                             f"got {_shown(value)}")
    return index


def _number_arg(value: Any, what: str, action: str, low: float = -math.inf, high: float = math.inf) -> float:
    """``value`` as a finite number in ``[low, high]``, or ActionArgError."""
    if isinstance(value, (int, float, numbers.Real)) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and low <= number <= high:
            return number
    bounds = "a finite number" if math.isinf(low) and math.isinf(high) else f"a number in [{low:g}, {high:g}]"
    raise ActionArgError(f"{action}: {what} must be {bounds}, got {_shown(value)}")


def _text_arg(value: Any, what: str, action: str) -> str:
    """``value`` as a string (sequences, policies and experience travel as strings)."""
    if not isinstance(value, str):
        raise ActionArgError(f"{action}: {what} must be a string, got {_shown(value)}")
    return value


#: Longest experience string in one message (the wire accepts 16384 characters per body).
EXPERIENCE_CHARS = 12_000
#: Transitions kept for sharing before the oldest are dropped (plans that record but never
#: share must not grow without bound).
EXPERIENCE_LIMIT = 200_000


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
    replayed_steps: int = 0
    """teammates' transitions this learner learned from (team learning)"""
    resumed_env_steps: int = 0
    """env steps done before this process resumed the run (not part of its throughput)"""


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
        checkpoint_every: int = 0,
        warm_start: Checkpoint | None = None,
        prior_episodes: int = 0,
        checkpoint_after_trace: bool = False,
        goals: list[tuple[tuple[int, int], EnvAdapter]] | None = None,
        goal_every: int = 0,
        task_change: str | None = None,
        policies: dict[tuple[int, int], CachedPolicy] | None = None,
        policy_path: Path | None = None,
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
        self.checkpoint_every = checkpoint_every
        """episodes between two checkpoints (0: only when the plans or the runner save)"""
        self.warm_start = warm_start
        """the checkpoint this learner's table was loaded from, if any"""
        self.prior_episodes = prior_episodes
        """training episodes behind the table before this run (warm starts)"""
        self._pending_checkpoints: list[tuple[int, np.ndarray, dict[str, Any]]] = []
        """taken, not yet written: (seq telemetry must have acknowledged, table, metadata)"""
        if checkpoint_after_trace:
            # A checkpoint is written once telemetry holds every event before it, so a
            # checkpoint never gets ahead of the trace: a process killed in between leaves
            # the previous checkpoint, and a resumed run re-runs (and re-traces) the gap.
            tracer.on_ack = lambda upto: self.write_checkpoint(force=False)
        self._checkpoint_after_trace = checkpoint_after_trace
        self.goals = goals or []
        """moving goals: (cell, env) per goal; the env in use is the current goal's"""
        self.goal_every = goal_every
        self._goal_index: int | None = None
        self.task_change = task_change
        self.policies = dict(policies or {})
        """the policy cache (a copy of the plans' has_policy beliefs), by goal cell"""
        self.policy_path = policy_path
        self.mind: Any = None  # set once the plan library is loaded
        self.on_episode: Callable[[RlBridge], None] | None = None
        """called after every training episode (benchmarks judge progress with it; it may
        lower ``episodes_target`` to end training early)"""
        self.stats = LearnerStats()
        self._state = 0
        self._return = 0.0
        self._length = 0
        self._outcome: str | None = None
        self._reset_seeded = False
        self._eval_env: EnvAdapter | None = None
        self._experience: list[str] | None = None  # encoded transitions, when recording
        self.experience_dropped = 0

    # -- percepts ----------------------------------------------------------------
    def perceive(self, functor: str, *args: Any) -> None:
        """Replace the percept ``functor/len(args)`` with ``functor(args)``."""
        self.mind.replace_percept(percept(functor, args))

    def forget(self, functor: str, arity: int) -> None:
        self.mind.drop_percepts(functor, arity)

    def _perceive_state(self, s: int) -> None:
        self.perceive("state", s)
        pos = self.env.position(s)
        if pos is not None:
            self.perceive("pos", *pos)

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
            self.perceive("goal", *cell)

    @property
    def current_goal(self) -> tuple[int, int] | None:
        return self.goals[self._goal_index][0] if self.goals and self._goal_index is not None else None

    def static_percepts(self, mode: str) -> None:
        self._select_goal()
        self.perceive("mode", asp.Literal(mode))
        self.perceive("env", self.env.env_id)
        self.perceive("episodes_target", self.episodes_target)
        self.perceive("eval_episodes", self.eval_episodes)
        warm = self.warm_start
        if warm is not None:  # plans may act on it (e.g. evaluate first, or skip sharing)
            self.tracer.emit("qtable.load", {"path": str(warm.path), "episodes": warm.episodes,
                                             "checksum": warm.checksum,
                                             "epsilon": self.learner.epsilon,
                                             "task_change": self.task_change})
            self.perceive("warm_started", warm.episodes)
        if self.learner.episodes >= self.episodes_target:  # resumed after the last episode
            self.perceive("training_done")

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

    def choose(self, s: Any) -> int:
        return self.learner.act(_index_arg(s, self.learner.n_states, "state", ".rl_choose"))

    def act(self, a: Any) -> None:
        a = _index_arg(a, self.env.n_actions, "action", ".rl_act")
        if not self._reset_seeded:
            raise RuntimeError(".rl_act before any .rl_reset: start an episode first")
        if self._outcome is not None:
            raise RuntimeError(".rl_act after the episode ended: call .rl_reset first")
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
        if self._experience is not None:
            self._record(s, a, r, s2, terminated)
        self._state = s2
        self._return += r
        self._length += 1
        tracer.step = self._length
        self._perceive_state(s2)
        outcome = self.env.outcome(r, terminated, truncated)
        if outcome is not None:
            self._outcome = outcome
            self.perceive("outcome", asp.Literal(outcome))

    # -- the policy cache (asl/goal-learner.asl) ---------------------------------------
    def greedy_plan(self) -> str:
        return encode(greedy_sequence(self.env, self.learner.q))

    def _sequence_arg(self, value: Any, action: str) -> list[int]:
        """An action sequence (``"1,1,2"``) whose every action is in the env's range."""
        try:
            return decode(_text_arg(value, "the action sequence", action), self.env.n_actions)
        except ActionArgError:
            raise
        except ValueError as exc:
            raise ActionArgError(f"{action}: {exc}") from None

    def plan_confidence(self, actions: Any) -> float:
        return round(confidence(self.env, self._sequence_arg(actions, ".rl_plan_confidence")), 6)

    def follow(self, actions: Any) -> None:
        """A training episode that plays a cached sequence (learning from its transitions);
        a sequence that runs out before the episode ends is a failure."""
        sequence = self._sequence_arg(actions, ".rl_follow")
        self.reset()
        for a in sequence:
            self.act(a)
            if self._outcome is not None:
                break
        if self._outcome is None:
            self._outcome = "failed"
            self.perceive("outcome", asp.Literal("failed"))
        self.end_episode()

    def cache_policy(self, x: Any, y: Any, actions: Any, conf: Any) -> None:
        action = ".rl_cache_policy"
        cell = self._cell_arg(x, y, action)
        sequence = self._sequence_arg(actions, action)
        self.policies[cell] = CachedPolicy(cell, encode(sequence), _number_arg(conf, "the confidence", action, 0, 1))
        self._save_policies()

    def drop_policy(self, x: Any, y: Any) -> None:
        self.policies.pop(self._cell_arg(x, y, ".rl_drop_policy"), None)
        self._save_policies()

    def _save_policies(self) -> None:
        if self.policy_path is not None:
            save_policies(self.policy_path, self.qtable_meta.get("agent", ""), self.env, self.policies)

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
        data = {"return": self._return, "length": self._length,
                "outcome": self._outcome or "stopped", "epsilon": epsilon}
        if self.goals:
            data["goal"] = list(self.current_goal or ())
        self.tracer.emit("episode.end", data)
        self.perceive("last_return", self._return)
        self.perceive("epsilon", round(learner.epsilon, 6))
        self.perceive("episodes_done", learner.episodes)
        self._select_goal()  # plans choose the next episode's plan knowing its goal
        if self.checkpoint_every and learner.episodes % self.checkpoint_every == 0:
            self.save_qtable()
        if self.on_episode is not None:
            self.on_episode(self)
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
        if self._experience is not None:
            hook = self._recording_hook(hook)
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
        data: dict[str, Any] = {"s": s, "a": a, "r": r, "s2": s2, "done": terminated or truncated,
                                "q_before": q_before, "q_after": q_after, "epsilon": self.learner.epsilon}
        if row is not None:
            data["q"] = row
        self.tracer.emit("rl.step", data)

    def _step_hook(self, s, a, r, s2, terminated, truncated, q_before, q_after) -> None:
        """run_episode's per-step hook in episode mode (only installed at step level); it runs
        after the update, so Q[s] as the agent chose from is the row with Q[s,a] put back."""
        row = self.learner.q[s].tolist()
        row[a] = q_before
        self._trace_step(s, a, r, s2, terminated, truncated, q_before, q_after, row)
        self.tracer.step += 1

    # -- team learning -----------------------------------------------------------------
    def record_experience(self) -> None:
        if self._experience is None:
            self._experience = []

    def _record(self, s: int, a: int, r: float, s2: int, terminated: bool) -> None:
        r_text = repr(r)
        if r_text.endswith(".0"):
            r_text = r_text[:-2]
        experience = self._experience
        assert experience is not None, "recording starts with record_experience"
        experience.append(f"{s},{a},{r_text},{s2},{1 if terminated else 0}")
        if len(experience) > EXPERIENCE_LIMIT:
            del experience[: EXPERIENCE_LIMIT // 10]
            self.experience_dropped += EXPERIENCE_LIMIT // 10

    def _recording_hook(self, inner: Callable[..., None] | None) -> Callable[..., None]:
        record = self._record

        def hook(s, a, r, s2, terminated, truncated, q_before, q_after) -> None:
            record(s, a, r, s2, terminated)
            if inner is not None:
                inner(s, a, r, s2, terminated, truncated, q_before, q_after)

        return hook

    def take_experience(self) -> tuple[str, ...]:
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
        try:
            transitions = _decode_experience(_text_arg(text, "the experience", ".rl_replay"),
                                             self.learner.n_states, self.learner.n_actions)
        except ActionArgError:
            raise
        except ValueError as exc:
            raise ActionArgError(f".rl_replay: {exc}") from None
        update = self.learner.update
        for s, a, r, s2, terminated in transitions:
            update(s, a, r, s2, terminated)
        self.stats.replayed_steps += len(transitions)

    def _cell_arg(self, x: Any, y: Any, action: str) -> tuple[int, int]:
        """(x, y) as a cell of the env's grid, or ActionArgError."""
        cx, cy = _integer(x), _integer(y)
        if cx is None or cy is None or self.env.state_at(cx, cy) is None:
            shape = self.env.grid_shape
            grid = "this env has no grid" if shape is None else f"x in 0..{shape[1] - 1}, y in 0..{shape[0] - 1}"
            raise ActionArgError(f"{action}: ({_shown(x)}, {_shown(y)}) is not a cell of this env's grid ({grid})")
        return cx, cy

    def _cell_state(self, x: Any, y: Any, action: str) -> int:
        return self.env.state_at(*self._cell_arg(x, y, action))  # type: ignore[return-value]

    def hazard(self, x: Any, y: Any) -> None:
        q = self.learner.q
        top = float(q.max())
        for s, a, p in self.env.arrivals(self._cell_state(x, y, ".rl_hazard")):
            q[s, a] = min(q[s, a], (1.0 - p) * top)

    def goal(self, x: Any, y: Any, reward: Any) -> None:
        s2 = self._cell_state(x, y, ".rl_goal")
        reward = _number_arg(reward, "the reward", ".rl_goal")
        q = self.learner.q
        for s, a, p in self.env.arrivals(s2):
            q[s, a] = max(q[s, a], p * reward)

    def policy(self) -> str:
        return ",".join(str(int(a)) for a in self.learner.q.argmax(axis=1))

    def adopt_policy(self, text: Any) -> int:
        """Make a teammate's greedy policy mine; checked whole before any Q-value changes."""
        q = self.learner.q
        n_states, n_actions = q.shape
        try:
            actions = decode(_text_arg(text, "the policy", ".rl_adopt_policy"), n_actions)
        except ActionArgError:
            raise
        except ValueError as exc:
            raise ActionArgError(f".rl_adopt_policy: {exc}") from None
        if len(actions) != n_states:
            raise ActionArgError(f".rl_adopt_policy: the policy must give one action per state "
                                 f"({n_states}), got {len(actions)}")
        changed = 0
        for s, a in enumerate(actions):
            row = q[s]
            best = float(row.max())
            if row[a] < best or (row == best).sum() > 1:  # make ``a`` the one greedy action
                changed += int(row[a] < best)
                row[a] = best + max(1e-9, abs(best) * 1e-9)
        return changed

    def set_epsilon(self, value: Any) -> None:
        self.learner.set_epsilon(_number_arg(value, "epsilon", ".rl_set_epsilon", 0, 1))
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
        """Checkpoint the table with its progress (atomically: see ``bdi_rl.rl.checkpoint``)."""
        learner = self.learner
        meta = {**self.qtable_meta, "task": {**self.env.task_signature(),
                                             **({"goal": list(self.current_goal or ())} if self.goals else {})},
                "episodes": learner.episodes,
                "total_episodes": self.prior_episodes + learner.episodes, "env_steps": self.stats.env_steps,
                "epsilon": learner.epsilon, "alpha": learner.alpha}
        self.stats.qtable = f"{self.qtable_path.parent.name}/{self.qtable_path.name}"
        self.tracer.emit("qtable.save", {"path": self.stats.qtable, "episodes": learner.episodes})
        self._pending_checkpoints.append((self.tracer.seq, learner.q.copy(), meta))
        self.write_checkpoint(force=not self._checkpoint_after_trace)

    def write_checkpoint(self, force: bool = True) -> None:
        """Write the newest checkpoint taken whose events telemetry holds (``force``: the
        newest taken); older ones are superseded. Every acknowledgement makes progress,
        however fast checkpoints are taken."""
        pending = self._pending_checkpoints
        ready = len(pending) if force else sum(1 for seq, _, _ in pending if seq <= self.tracer.acked)
        if ready:
            _, table, meta = pending[ready - 1]
            del pending[:ready]
            save_checkpoint(self.qtable_path, table, meta)

    def finish(self) -> None:
        self.on_finish()

    # -- registration ----------------------------------------------------------------
    def register(self, actions: asp.Actions) -> None:
        """Add every ``.rl_*`` action to ``actions`` (traced as ``action`` events)."""
        traced = self._traced
        # Argument specs are None: the interpreter passes the values as they are (its ``int``
        # spec would turn 3.7 into 3), and each action checks its own.
        procedures: dict[str, tuple[tuple[None, ...], Callable[..., Any]]] = {
            ".rl_reset": ((), self.reset),
            ".rl_perceive": ((), self.perceive_now),
            ".rl_act": ((None,), self.act),
            ".rl_end_episode": ((), self.end_episode),
            ".rl_run_episode": ((), self.run_episode),
            ".rl_set_epsilon": ((None,), self.set_epsilon),
            ".rl_evaluate": ((), self.evaluate),
            ".rl_save_qtable": ((), self.save_qtable),
            ".rl_finish": ((), self.finish),
            ".rl_record_experience": ((), self.record_experience),
            ".rl_replay": ((None,), self.replay),
            ".rl_hazard": ((None, None), self.hazard),
            ".rl_goal": ((None, None, None), self.goal),
            ".rl_follow": ((None,), self.follow),
            ".rl_cache_policy": ((None, None, None, None), self.cache_policy),
            ".rl_drop_policy": ((None, None), self.drop_policy),
        }
        for name, (specs, fn) in procedures.items():
            actions.add_procedure(name, specs, traced(name, fn))
        actions.add_function(".rl_choose", (None,), traced(".rl_choose", self.choose))
        actions.add_function(".rl_experience", (), traced(".rl_experience", self.take_experience))
        actions.add_function(".rl_policy", (), traced(".rl_policy", self.policy))
        actions.add_function(".rl_adopt_policy", (None,), traced(".rl_adopt_policy", self.adopt_policy))
        actions.add_function(".rl_greedy_plan", (), traced(".rl_greedy_plan", self.greedy_plan))
        actions.add_function(".rl_plan_confidence", (None,), traced(".rl_plan_confidence", self.plan_confidence))

    def _traced(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        tracer = self.tracer

        def call(*args: Any) -> Any:
            result = fn(*args)
            if tracer.level >= TraceLevel.STEP:
                data: dict[str, Any] = {"name": name, "args": [_short(a) for a in args]}
                if result is not None:
                    data["result"] = _short(result)
                tracer.emit("action", data)
            return result

        return call


def _short(value: Any) -> Any:
    """A trace-sized copy of an action argument: long strings (experience) are clipped."""
    if isinstance(value, str):
        return clip_text(value, 200)
    if isinstance(value, (tuple, list)):
        return [_short(v) for v in value]
    return value


#: One transition as :meth:`RlBridge._record` writes it: plain decimal numbers, a finite
#: reward (``float()`` alone would take "nan", "inf" and "1_0"), done 0 or 1.
_TRANSITION = re.compile(r"([0-9]{1,9}),([0-9]{1,9}),(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?),([0-9]{1,9}),([01])")


def _decode_experience(text: str, n_states: int, n_actions: int) -> list[tuple[int, int, float, int, bool]]:
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
