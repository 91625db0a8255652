"""One step for all: the agents of a shared world act together.

Each agent bound to a seat of a :class:`~bdi_rl.rl.worldenv.World` keeps its own
:class:`~bdi_rl.bdi.episode.EpisodeSession` (its Q-table, trace, percepts and checkpoints);
only its env is shared. Its plans call ``.rl_reset``, ``.rl_act(A)`` and ``.rl_evaluate`` as
a single learner's do, but in a world they *suspend* the calling intention (as ``.wait``
does) until every agent of the world has called them:

- ``.rl_reset``: once every agent still training has asked, the world resets (the spec's
  seed the first time) and each agent perceives its own first observation;
- ``.rl_act(A)``: once every agent still in the episode has chosen, the world steps once with
  the joint action; each agent's learner is updated from its *own* observation, action and
  reward, and it perceives its own ``state(S)``, ``reward(R)`` and, at the end,
  ``outcome(O)``;
- ``.rl_evaluate``: each agent hands in its greedy policy; once all are in, the world plays
  greedy joint episodes on a world of its own and each agent perceives ``eval(Mean,
  Success)``. With ``eval_every``, the policies ride on the ``.rl_reset`` after every
  ``eval_every`` episodes and the world evaluates before it resets.

The agent whose call completes the barrier goes on at once; the others resume. An episode
begins only once every agent still training has asked (however long one takes to start or
to end its last episode). The first call of a step starts the world's **deadline**
(``[world] step_deadline_ms``): when it passes, every agent that has not chosen plays the
world's ``default_action`` (the step's ``defaulted`` list in the trace says who), and a late
``.rl_act`` then counts for the next step (or is dropped if the defaulted step ended its
episode). Every joint step is one ``world.step`` event of the world agent's trace.

An agent that leaves before it finishes training (its mind failed; across processes, its
XMPP session went offline and stayed so) is finished by the world, which says so once: the
others are not kept waiting at a barrier it will never reach, and its seat plays the default
action from then on (``defaulted`` in the trace; ``seats_left`` in the world's
``agent.stop``).

Two sides, each blind to how the other is reached:

- :class:`SharedWorld`, the world's side (:class:`WorldPort`): it steps the world and tells
  each seat's :class:`SeatEnd` what happened;
- :class:`SeatClient`, an agent's side (a :class:`SeatEnd`): the suspending actions, and
  the transitions applied to its session.

In ``bdi-rl run`` they call each other directly. Across processes ``bdi_rl.xmpp.worldlink``
carries the same calls over XMPP.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.intention import SUSPENDED
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.terms import resolve
from bdi_rl.bdi.runtime.unify import TermCompiler
from bdi_rl.rl.qlearning import EvalResult
from bdi_rl.rl.worldenv import Seat, World
from bdi_rl.trace.events import WORLD_STEP, TraceLevel, WorldStepData
from bdi_rl.trace.tracer import Tracer

__all__ = ["SeatClient", "SeatEnd", "SharedWorld", "WorldPort"]

log = logging.getLogger("bdi_rl.bdi.world")

#: A timer: ``schedule(seconds, callback)`` returns something with ``cancel()``.
Schedule = Callable[[float, Callable[[], None]], Any]


class SeatEnd(Protocol):
    """What the world tells an agent at its seat."""

    def begun(self, obs: int) -> None:
        """An episode began: the agent's first observation."""

    def stepped(self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool) -> None:
        """The world stepped: the agent's action (the default one if ``defaulted``), its
        next observation and reward, and whether its episode ended."""

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        """Greedy joint episodes ended: the agent's result."""


class WorldPort(Protocol):
    """What an agent asks of its world (by its seat's name)."""

    def ask_reset(self, seat: str, policy: list[int] | None = None) -> None:
        """A new episode, please (``policy``: my greedy policy, for an evaluation first)."""

    def choose(self, seat: str, action: int) -> None:
        """My action for the coming step."""

    def ask_evaluation(self, seat: str, policy: list[int]) -> None:
        """Evaluate our greedy policies (mine is ``policy``)."""

    def finish(self, seat: str, why: str | None = None) -> None:
        """I am done (``why``: I failed before training ended): stop waiting for me."""


@dataclass
class _Seat:
    """The world's book-keeping of one seat."""

    end: SeatEnd
    name: str
    """the bdi-rl agent's name"""
    action: int | None = None
    reset_asked: bool = False
    policy: list[int] | None = None
    finished: bool = False
    obs: int = 0


@dataclass
class SharedWorld:
    """A world stepped once every agent of it has chosen (module docstring)."""

    world: World
    tracer: Tracer
    """the world agent's trace (``world.step`` events)"""
    seed: int
    deadline_s: float
    default_action: int
    schedule: Schedule
    eval_episodes: int = 100
    seats: dict[str, _Seat] = field(default_factory=dict)
    """by seat name (the world's agent names)"""
    on_finished: Callable[[], None] = lambda: None
    """called once every seated agent has finished"""
    episodes: int = 0
    """joint episodes begun"""
    steps: int = 0
    """joint steps taken in all"""
    left: list[str] = field(default_factory=list)
    """agents that left before they finished training, in the order they left"""
    _in_episode: bool = False
    _deadline: Any = None
    _seeded: bool = False

    @property
    def episode(self) -> int:
        """The current joint episode, from 0: a learner seated from the start stamps the same
        episode with the same number, so the world's trace and its learners' agree."""
        return self.episodes - 1

    def seat(self, seat: str, name: str, end: SeatEnd) -> None:
        """Agent ``name``, reached through ``end``, plays the world's agent ``seat``."""
        self.seats[seat] = _Seat(end, name)

    def _open(self) -> list[_Seat]:
        return [st for st in self.seats.values() if not st.finished]

    # -- the barriers ----------------------------------------------------------------------
    def ask_reset(self, seat: str, policy: list[int] | None = None) -> None:
        st = self.seats[seat]
        st.reset_asked = True
        if policy is not None:
            st.policy = policy
        self._reset_if_all()  # no deadline: an episode starts with every agent still training

    def _reset_if_all(self) -> None:
        if not self._in_episode and self._open() and all(st.reset_asked for st in self._open()):
            if all(st.policy is not None for st in self._open()):
                self._evaluate()
            self._reset()

    def choose(self, seat: str, action: int) -> None:
        if not self._in_episode or seat not in self.world.live:
            return  # late for a step that ended its episode (its agent was told: defaulted)
        self.seats[seat].action = action
        self._arm()
        self._step_if_all()

    def _choosers(self) -> list[_Seat]:
        """Seats whose choice the step waits for: live in the episode, agent not finished."""
        return [self.seats[a] for a in self.world.live if a in self.seats and not self.seats[a].finished]

    def _step_if_all(self) -> None:
        choosers = self._choosers()
        if self._in_episode and choosers and all(st.action is not None for st in choosers):
            self._step()

    def ask_evaluation(self, seat: str, policy: list[int]) -> None:
        self.seats[seat].policy = policy
        self._evaluate_if_all()

    def _evaluate_if_all(self) -> None:
        if self._open() and all(st.policy is not None for st in self._open()):
            self._evaluate()

    def finish(self, seat: str, why: str | None = None) -> None:
        st = self.seats[seat]
        if st.finished:
            return  # told twice (an agent that failed, then went offline)
        st.finished = True
        if why is not None:
            self.left.append(st.name)
            log.warning(
                "world: %s left at joint episode %d (%s); its seat %s plays the default action %d from now on",
                st.name,
                max(self.episode, 0),
                why,
                seat,
                self.default_action,
            )
        if not self._open():
            self._disarm()
            self.on_finished()
            return
        self._reset_if_all()  # the barrier it held up
        self._evaluate_if_all()
        self._step_if_all()

    # -- the deadline -------------------------------------------------------------------------
    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.schedule(self.deadline_s, self._deadline_passed)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _deadline_passed(self) -> None:
        self._deadline = None
        if self._in_episode and any(st.action is not None for st in self.seats.values()):
            self._step()

    # -- what the world does ---------------------------------------------------------------------
    def _reset(self) -> None:
        self._disarm()
        seed = None if self._seeded else self.seed
        self._seeded = True
        obs = self.world.reset(seed=seed)
        self._in_episode = True
        self.episodes += 1
        for agent, st in self.seats.items():
            st.reset_asked = False
            st.action = None
            st.obs = obs.get(agent, 0)
        for st in self._open():
            st.end.begun(st.obs)

    def _step(self) -> None:
        self._disarm()
        live = self.world.live
        actions: dict[str, int] = {}
        defaulted: list[str] = []
        for agent in live:
            st = self.seats.get(agent)
            if st is None or st.action is None:
                actions[agent] = self.default_action
                defaulted.append(agent)
            else:
                actions[agent] = st.action
        states = [self.seats[a].obs if a in self.seats else -1 for a in live]
        step = self.world.step(actions)
        self.steps += 1
        if step.done:
            self._in_episode = False
        if self.tracer.level >= TraceLevel.STEP:
            self._trace(live, states, actions, step.rewards, step.done, defaulted)
        for agent in live:
            st = self.seats.get(agent)
            if st is None:
                continue
            st.action = None
            st.obs = step.obs.get(agent, st.obs)
            if not st.finished:
                st.end.stepped(
                    actions[agent],
                    st.obs,
                    step.rewards[agent],
                    step.terminations[agent],
                    step.truncations[agent],
                    agent in defaulted,
                )
        self._reset_if_all()  # agents the world removed early may have asked already

    def _trace(
        self,
        live: list[str],
        states: list[int],
        actions: dict[str, int],
        rewards: dict[str, float],
        done: bool,
        defaulted: list[str],
    ) -> None:
        names = {agent: st.name for agent, st in self.seats.items()}
        data: WorldStepData = {
            "episode": self.episode,  # numbered as the learners number theirs
            "step": self.world.steps,
            "agents": [names.get(a, a) for a in live],
            "states": states,
            "actions": [actions[a] for a in live],
            "rewards": [rewards[a] for a in live],
            "done": done,
        }
        if defaulted:
            data["defaulted"] = [names.get(a, a) for a in defaulted]
        cells = self.world.cells()
        if cells is not None:
            data["positions"] = cells["positions"]
            data["items"] = cells["items"]
        self.tracer.stamp(self.episode, self.world.steps)
        self.tracer.emit(WORLD_STEP, data)

    def _evaluate(self) -> None:
        """Greedy joint episodes of every open seat's policy; each agent gets its result."""
        started = time.perf_counter()
        policies = {agent: st.policy for agent, st in self.seats.items() if st.policy is not None}
        for agent in self.world.agents:  # an agent that finished plays its default action
            policies.setdefault(agent, [])
        results = self.world.evaluate(policies, self.eval_episodes, seed=self.seed + 10_000)
        seconds = time.perf_counter() - started
        for agent, st in self.seats.items():
            st.policy = None
            if agent in results and not st.finished:
                st.end.evaluated(results[agent], seconds)


# -- the agent's side ---------------------------------------------------------------------------


class SeatClient:
    """An agent at its seat: its suspending ``.rl_reset``, ``.rl_act`` and ``.rl_evaluate``,
    and what the world's answers do to its session (a :class:`SeatEnd`)."""

    def __init__(self, seat: Seat, session: EpisodeSession) -> None:
        self.seat = seat.agent
        """the world's name of this agent's seat"""
        self.facts = seat.facts
        self.session = session
        self.port: WorldPort | None = None
        """the world (set once it is known: directly, or its XMPP link)"""
        self._told_finished = False
        self.wake: Callable[[], None] = lambda: None
        """set by the agent's host: its BDI loop runs again (a resumed intention waits for it)"""
        self.eval_every = session.eval_every
        session.eval_every = 0  # the world evaluates: the policies ride on .rl_reset
        self._resume: Callable[[], None] | None = None
        self._waiting = ""
        """what the call in progress waits for: reset, act or eval (empty: nothing)"""
        self._in_call = False
        self._completed = False
        self._row: list[float] | None = None
        self._defaulted = False

    # -- SeatEnd: the world's answers ----------------------------------------------------------
    def begun(self, obs: int) -> None:
        self._defaulted = False
        self.session.begin_episode(obs)
        self._perceive_facts(obs)
        self._done()

    def _perceive_facts(self, obs: int) -> None:
        """The world's facts of this observation besides ``pos`` (lbforaging: ``partner(X, Y)``,
        ``food(X, Y)``, dropped once the food is eaten)."""
        percepts = self.session.percepts
        for name, value in self.facts(obs).items():
            if name == "pos":
                continue  # the session perceives it with state(S)
            if value is None:
                percepts.forget(name, 2)
            else:
                percepts.perceive(name, *value)

    def stepped(self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool) -> None:
        session = self.session
        row, self._row = self._row, None
        self._defaulted = defaulted
        session.apply_step(a, s2, r, terminated, truncated, row=None if defaulted else row)
        self._perceive_facts(s2)
        session.percepts.perceive("reward", r)
        if not defaulted or (self._waiting == "act" and (terminated or truncated)):
            # a choice that reached the world after the deadline counts for the next step;
            # when the defaulted step ended the episode there is none: it goes on now
            self._done()

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        self.session.record_eval(result, seconds)
        if self._waiting == "eval":  # an evaluation due at a reset comes before the reset's answer
            self._done()

    def _done(self) -> None:
        """The call in progress is answered: it goes on (it was made just now) or resumes."""
        resume, self._resume = self._resume, None
        self._waiting = ""
        if self._in_call:
            self._completed = True
        elif resume is not None:
            resume()

    # -- the suspending actions ------------------------------------------------------------------
    def _call(self, ag: Any, it: Any, waiting: str, ask: Callable[[WorldPort], None]) -> bool:
        """Ask the world; True if it answered at once (the caller goes on), else the intention
        waits for the answer."""
        if self._resume is not None:
            raise PlanFailure("action_failed", "this agent already waits for its world")
        port = self.port
        if port is None:
            raise PlanFailure("action_failed", "the shared world is not connected yet")

        def resume() -> None:
            ag._resume(it)
            self.wake()

        self._resume, self._waiting = resume, waiting
        self._in_call, self._completed = True, False
        try:
            ask(port)
        finally:
            self._in_call = False
        return self._completed

    def reset(self, ag: Any, it: Any) -> bool:
        session = self.session
        n = session.learner.episodes
        due = self.eval_every and 0 < n < session.episodes_target and n % self.eval_every == 0
        policy = session.learner.greedy_policy() if due else None
        return self._call(ag, it, "reset", lambda port: port.ask_reset(self.seat, policy))

    def act(self, ag: Any, it: Any, a: Any) -> bool:
        session = self.session
        if self._defaulted and session.outcome is not None:
            return True  # late: the default action played for it ended the episode
        action = session.checked_action(a)
        if session.tracer.level >= TraceLevel.STEP:
            self._row = session.learner.q[session.state].tolist()
        return self._call(ag, it, "act", lambda port: port.choose(self.seat, action))

    def evaluate(self, ag: Any, it: Any) -> bool:
        policy = self.session.learner.greedy_policy()
        return self._call(ag, it, "eval", lambda port: port.ask_evaluation(self.seat, policy))

    def finish(self, why: str | None = None) -> None:
        """Tell the world this agent is done (``why``: it failed before training ended), once."""
        if self.port is not None and not self._told_finished:
            self._told_finished = True
            self.port.finish(self.seat, why)

    def register(self, actions: Actions) -> None:
        """Replace ``.rl_reset``, ``.rl_act`` and ``.rl_evaluate`` (registered already by the
        agent's RlBridge) with their suspending versions."""
        actions.add_builtin(".rl_reset", _suspending(".rl_reset", self.reset, 0))
        actions.add_builtin(".rl_act", _suspending(".rl_act", self.act, 1))
        actions.add_builtin(".rl_evaluate", _suspending(".rl_evaluate", self.evaluate, 0))


Builtin = Callable[[QueryCompiler, s.Lit, TermCompiler], Query]


def _suspending(name: str, call: Callable[..., bool], arity: int) -> Builtin:
    """A builtin ``name`` that runs ``call(ag, it, *args)`` and suspends the intention when it
    returns False, until the world answers. The call goes through the agent's traced cell
    (an ``action`` event, as any host action)."""

    def compile_call(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        if len(node.args) != arity:
            raise tc.error(node, f"{name} takes {arity} argument(s), got {len(node.args)}")
        builds = [tc.term(a).build for a in node.args]
        current: list[Any] = [None]

        def traced(*args: Any) -> bool:
            ag, it = current[0]
            return call(ag, it, *args)

        cell = compiler.cells.setdefault(name, [traced])

        def outside_a_body(ag: Any, env: list, trail: Any) -> bool:
            raise PlanFailure("wrong_arguments", f"{name} waits for the world: only in a plan body")

        def make(pc: int, labels: dict) -> Callable[..., int]:
            nxt = pc + 1

            def run(ag: Any, it: Any, frame: Any) -> int:
                args = [resolve(b(frame.env)) for b in builds]
                current[0] = (ag, it)
                try:
                    done = cell[0](*args)
                finally:
                    current[0] = None
                if done:
                    return nxt
                frame.pc = nxt
                return SUSPENDED

            return run

        return Query(outside_a_body, body=make)

    return compile_call
