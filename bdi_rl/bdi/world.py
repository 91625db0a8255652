"""One step for all: the agents of a shared world act together.

Each agent bound to a seat of a :class:`~bdi_rl.rl.worldenv.World` keeps its own
:class:`~bdi_rl.bdi.episode.EpisodeSession` (its Q-table, trace, percepts and checkpoints);
only its env is shared. Its plans call ``.rl_reset``, ``.rl_act(A)`` and ``.rl_evaluate`` as
a single learner's do, but in a world they *suspend* the calling intention (as ``.wait``
does) until every agent of the world has called them:

- ``.rl_reset``: once every agent still training has asked, the world resets (the spec's
  seed the first time) and each agent perceives its own first observation;
- ``.rl_act(A)``: once every agent in the episode has chosen, the world steps once with
  the joint action; each agent's learner is updated from its *own* observation, action and
  reward, and it perceives its own ``state(S)``, ``reward(R)`` and, at the end,
  ``outcome(O)``;
- ``.rl_evaluate``: each agent hands in its greedy policy; once all are in, the world plays
  greedy joint episodes on a world of its own and each agent perceives ``eval(Mean,
  Success)``. With ``eval_every``, the policies ride on the ``.rl_reset`` after every
  ``eval_every`` episodes and the world evaluates before it resets.

The agent whose call completes the barrier goes on at once; the others resume.

**Deadlines.** Every barrier has the world's deadline (``[world] step_deadline_ms``), which
starts with the first call to it; when it passes, the world goes on without the agents
that have not called, and logs a warning naming them and the barrier (at most one a minute
per agent) and traces a ``world.late`` event:

- ``.rl_act``: each agent that has not chosen plays the world's ``default_action`` (the
  step's ``defaulted`` list in the trace says who); its late ``.rl_act`` counts for the
  next step (or is dropped if the defaulted step ended its episode);
- ``.rl_reset``: the episode begins without the late agents; their seats play the default
  action all episode long (``defaulted`` in each step) and a late ``.rl_reset`` joins the
  next episode. An episode waits only for agents still training (not for those waiting for
  an evaluation), gives an agent that called the world meanwhile (its late ``.rl_act`` on
  its way) one more deadline, and waits without one for a seat the world has not heard
  from yet (an agent process still starting);
- ``.rl_evaluate`` (or an evaluation due at a reset): the world plays the policies handed
  in, a late agent's seat playing the default action in every state; only the agents that
  handed one in get the result. An agent that still calls the world (it trains the
  episodes it sat out) is waited for, deadline after deadline; a late ``.rl_evaluate``
  starts the next evaluation, which waits for the others in the same way.

At ``.rl_reset`` and ``.rl_evaluate`` an agent is late when it has made no call to the world
since the deadline started; at ``.rl_act``, when it has not chosen.

**Stuck seats.** An agent that misses :data:`STUCK_AFTER` deadlines in a row, with no call
to the world in between (a process stopped with SIGSTOP, a plan that never calls
``.rl_reset`` again), is finished by the world as stuck, so the others no longer wait a
deadline at every barrier. (An agent whose session is offline is not counted: the
offline grace below judges it.)

**Agents that leave.** An agent that leaves before it finishes training (its mind failed;
across processes, its XMPP session went offline and stayed so for ``offline_grace_ms``;
stuck) is finished by the world, which says so once: the others are not kept waiting at a
barrier it will never reach, and its seat plays the default action from then on
(``defaulted`` in the trace; ``seats_left`` in the world's ``agent.stop``). Any later call
of its agent to the world fails (``refused``), naming why its seat was finished.

Two sides, each blind to how the other is reached:

- :class:`SharedWorld`, the world's side (:class:`WorldPort`): it steps the world and tells
  each seat's :class:`SeatEnd` what happened;
- :class:`SeatClient`, an agent's side (a :class:`SeatEnd`): the suspending actions (held
  by the agent's mind: ``Agent.hold``), and the transitions applied to its session. An
  action the world will never answer (its seat was finished, or across processes the world
  agent went offline and stayed so: ``SeatClient.world_gone``) fails, and the plan's
  failure handling applies.

In ``bdi-rl run`` they call each other directly. Across processes ``bdi_rl.xmpp.worldlink``
carries the same calls over XMPP.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bdi_rl.bdi.args import index_arg
from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.instructions import SUSPENDED
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.terms import resolve
from bdi_rl.bdi.runtime.unify import TermCompiler
from bdi_rl.rl.qlearning import EvalResult
from bdi_rl.rl.worldenv import Seat, World
from bdi_rl.trace.kinds import WORLD_LATE, WORLD_STEP, TraceLevel, WorldLateData, WorldStepData
from bdi_rl.trace.tracer import Tracer

__all__ = ["STUCK_AFTER", "SeatClient", "SeatEnd", "SharedWorld", "WorldPort"]

log = logging.getLogger("bdi_rl.bdi.world")

#: Deadlines in a row an agent may miss, with no call to the world in between, before the
#: world finishes its seat as stuck (module docstring).
STUCK_AFTER = 3
#: Seconds between two warnings about the same agent missing deadlines.
LATE_WARNING_EVERY = 60.0
#: The barriers, by the call each waits for.
RESET, ACT, EVAL = ".rl_reset", ".rl_act", ".rl_evaluate"

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

    def refused(self, why: str) -> None:
        """The world finished this agent's seat (``why``) and answers none of its calls."""


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
    reset_policy: list[int] | None = None
    """a policy handed in with ``.rl_reset`` (an evaluation due first)"""
    policy: list[int] | None = None
    """a policy handed in with ``.rl_evaluate``"""
    playing: bool = False
    """in the current episode (it asked for it in time)"""
    finished: bool = False
    why: str | None = None
    """why the world finished it (None: its agent finished training)"""
    obs: int = 0
    missed: int = 0
    """deadlines missed in a row, with no call in between"""
    last_call: int = 0
    """the world's count of calls at this agent's last one (0: none yet)"""
    heard: bool = True
    """the world has heard from its agent (a remote one: a call, or its presence)"""
    offline: bool = False
    """its agent's XMPP session is offline (across processes, within the grace period)"""
    warned_at: float = -math.inf


@dataclass
class SharedWorld:
    """A world stepped once every agent of it has chosen (module docstring)."""

    world: World
    tracer: Tracer
    """the world agent's trace (``world.step`` and ``world.late`` events)"""
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
    _deadlines: dict[str, Any] = field(default_factory=dict)
    """the armed deadline of each barrier that has a call waiting"""
    _opened: dict[str, int] = field(default_factory=dict)
    """the count of calls when each armed deadline started: an agent silent since is late"""
    _calls: int = 0
    """calls from the agents so far"""
    _seeded: bool = False

    @property
    def episode(self) -> int:
        """The current joint episode, from 0: a learner seated from the start stamps the same
        episode with the same number, so the world's trace and its learners' agree."""
        return self.episodes - 1

    def seat(self, seat: str, name: str, end: SeatEnd, heard: bool = True) -> None:
        """Agent ``name``, reached through ``end``, plays the world's agent ``seat``;
        ``heard`` False: the world has not heard from it yet (an agent in another process,
        which may still be starting)."""
        self.seats[seat] = _Seat(end, name, heard=heard)

    def _open(self) -> list[_Seat]:
        return [st for st in self.seats.values() if not st.finished]

    # -- what the world knows of an agent beyond its calls -----------------------------------
    def heard(self, seat: str) -> None:
        """Its agent is up (a call, or its presence, reached the world)."""
        self.seats[seat].heard = True

    def set_offline(self, seat: str, offline: bool) -> None:
        """Its agent's session went offline (or came back): meanwhile the barriers go on
        without it at their deadlines, but its misses do not count towards stuck."""
        self.seats[seat].offline = offline

    @property
    def deadline_armed(self) -> bool:
        """Whether a barrier's deadline is still to pass (the world will go on by itself)."""
        return bool(self._deadlines)

    def waiting_for(self) -> str:
        """What the world waits for, in words (a stall report): the calls its barriers
        miss, or the agents whose seats are still open."""
        waiting: list[str] = []
        open_seats = self._open()
        if self._in_episode:
            waiting += [f"{st.name}'s {ACT}" for st in self._choosers() if st.action is None]
        else:
            waiting += [f"{st.name}'s {RESET}" for st in self._training() if not st.reset_asked]
        if any(st.policy is not None for st in open_seats):
            waiting += [f"{st.name}'s {EVAL}" for st in open_seats if st.policy is None]
        if not waiting:
            waiting = [f"{st.name} to finish" for st in open_seats]
        return "waits for " + ", ".join(waiting) if waiting else "waits for nothing"

    # -- the barriers ----------------------------------------------------------------------
    def _called(self, seat: str) -> _Seat | None:
        """A call from ``seat``'s agent: it is up; None if its seat is finished (the call is
        refused, naming why)."""
        st = self.seats[seat]
        st.heard = True
        st.missed = 0
        self._calls += 1
        st.last_call = self._calls
        if not st.finished:
            return st
        st.end.refused(f"the world finished its seat {seat}: {st.why or 'it had finished'}")
        return None

    def ask_reset(self, seat: str, policy: list[int] | None = None) -> None:
        st = self._called(seat)
        if st is None:
            return
        st.reset_asked = True
        if policy is not None:
            st.reset_policy = policy
        if not self._in_episode:
            self._arm(RESET)
        self._reset_if_all()  # during an episode (it sat this one out): it joins the next

    def _training(self) -> list[_Seat]:
        """Seats an episode waits for: open, and not waiting for an evaluation (an agent
        evaluates once its training is over, while one that sat episodes out still trains)."""
        return [st for st in self._open() if st.policy is None]

    def _reset_if_all(self) -> None:
        if self._in_episode:
            return
        training = []
        for st in self.seats.values():  # one pass, left at the first that has not asked
            if not st.finished and st.policy is None:
                if not st.reset_asked:
                    return
                training.append(st)
        if training:
            self._begin(training)

    def choose(self, seat: str, action: int) -> None:
        st = self._called(seat)
        if st is None or not self._in_episode or not st.playing or seat not in self.world.live:
            return  # late for a step that ended its episode (its agent was told: defaulted)
        st.action = action
        self._arm(ACT)
        self._step_if_all()

    def _choosers(self) -> list[_Seat]:
        """Seats whose choice the step waits for: live and playing in the episode, agent not
        finished."""
        return [
            st
            for st in (self.seats.get(a) for a in self.world.live)
            if st is not None and st.playing and not st.finished
        ]

    def _step_if_all(self) -> None:
        # No chooser left in a running episode (every agent still in it finished, or sat it
        # out): the world plays it out with default actions (it ends at its step limit).
        while self._in_episode and self._all_chose():
            self._step()

    def _all_chose(self) -> bool:
        seats = self.seats
        for agent in self.world.live:
            st = seats.get(agent)
            if st is not None and st.action is None and st.playing and not st.finished:
                return False
        return True

    def ask_evaluation(self, seat: str, policy: list[int]) -> None:
        st = self._called(seat)
        if st is None:
            return
        st.policy = policy
        self._arm(EVAL)
        self._evaluate_if_all()
        self._reset_if_all()  # an episode no longer waits for it

    def _evaluate_if_all(self) -> None:
        if self._open() and all(st.policy is not None for st in self._open()):
            self._evaluate_asked()

    def finish(self, seat: str, why: str | None = None) -> None:
        st = self.seats[seat]
        if st.finished:
            return  # told twice (an agent that failed, then went offline)
        self._close(st, seat, why)
        self._after_close()

    def _close(self, st: _Seat, seat: str, why: str | None, episode: int | None = None) -> None:
        """Finish ``seat``; ``why`` it left before its agent finished training (logged),
        at joint ``episode`` (default: the current one)."""
        st.finished, st.why, st.playing = True, why, False
        st.reset_asked, st.reset_policy, st.policy, st.action = False, None, None, None
        if why is not None:
            self.left.append(st.name)
            log.warning(
                "world: %s left at joint episode %d (%s); its seat %s plays the default action %d from now on",
                st.name,
                max(self.episode if episode is None else episode, 0),
                why,
                seat,
                self.default_action,
            )

    def _after_close(self) -> None:
        if not self._open():
            for barrier in list(self._deadlines):
                self._disarm(barrier)
            self.on_finished()
            return
        self._reset_if_all()  # the barriers it held up
        self._evaluate_if_all()
        self._step_if_all()

    # -- the deadlines -------------------------------------------------------------------------
    def _arm(self, barrier: str) -> None:
        if barrier not in self._deadlines:
            self._opened[barrier] = self._calls
            self._deadlines[barrier] = self.schedule(self.deadline_s, lambda: self._deadline_passed(barrier))

    def _silent(self, st: _Seat, barrier: str) -> bool:
        """Whether ``st``'s agent made no call since ``barrier``'s deadline started (else it
        is busy with the world: a late .rl_act of the step before, the rest of its training)."""
        return st.last_call <= self._opened.get(barrier, 0)

    def _disarm(self, barrier: str) -> None:
        handle = self._deadlines.pop(barrier, None)
        if handle is not None:
            handle.cancel()

    def _deadline_passed(self, barrier: str) -> None:
        """The barrier goes on without the agents that have not called (module docstring)."""
        self._deadlines.pop(barrier, None)
        if barrier == ACT:
            choosers = self._choosers()
            if self._in_episode and any(st.action is not None for st in choosers):
                self._late(ACT, [st for st in choosers if st.action is None])
                self._step()
        elif barrier == RESET:
            training = self._training()
            if self._in_episode or not any(st.reset_asked for st in training):
                return
            late = [st for st in training if not st.reset_asked]
            if any(not st.heard for st in late):
                return  # an agent still starting: waited for (its first call completes the barrier)
            if not all(self._silent(st, RESET) for st in late):
                self._arm(RESET)  # busy with the world (its late .rl_act): it is on its way
                return
            self._late(RESET, late)
            self._begin([st for st in training if st.reset_asked and not st.finished])
        elif barrier == EVAL:
            open_seats = self._open()
            if any(st.policy is not None for st in open_seats):
                late = [st for st in open_seats if st.policy is None]
                if not all(self._silent(st, EVAL) for st in late):
                    self._arm(EVAL)  # still training (it sat episodes out): the evaluation waits
                    return
                self._late(EVAL, late)
                self._evaluate_asked()
        if not self._open():
            self._after_close()

    def _late(self, barrier: str, late: list[_Seat]) -> None:
        """The world goes on at ``barrier``'s deadline without ``late``: say so (log, trace),
        and finish the seats of agents stuck for STUCK_AFTER deadlines in a row."""
        if not late:
            return
        stuck: list[str] = []
        now = time.monotonic()
        episode = max(self.episode + (barrier == RESET), 0)  # a late reset's is the one beginning
        for st in late:
            if st.heard and not st.offline:
                st.missed += 1
            seat = next(name for name, other in self.seats.items() if other is st)
            if st.missed >= STUCK_AFTER:
                stuck.append(st.name)
                why = (
                    f"stuck: it missed {st.missed} deadlines of {self.deadline_s:g} s in a row, "
                    f"the last at {barrier}, with no call to the world in between"
                )
                self._close(st, seat, why, episode)
                st.end.refused(f"the world finished its seat {seat}: {why}")  # if it ever wakes
            elif now - st.warned_at >= LATE_WARNING_EVERY:
                st.warned_at = now
                log.warning(
                    "world: %s missed the %g s deadline of %s at joint episode %d; the world goes on without it (%s)",
                    st.name,
                    self.deadline_s,
                    barrier,
                    episode,
                    _WITHOUT[barrier].format(action=self.default_action),
                )
        data: WorldLateData = {"call": barrier, "agents": [st.name for st in late]}
        if stuck:
            data["stuck"] = stuck
        self.tracer.stamp(episode, self.world.steps if barrier == ACT else 0)
        self.tracer.emit(WORLD_LATE, data)

    # -- what the world does ---------------------------------------------------------------------
    def _begin(self, players: list[_Seat]) -> None:
        """An episode for ``players`` (an evaluation first if some handed in a policy)."""
        self._disarm(RESET)
        riding = {self._seat_name(st): st.reset_policy for st in players if st.reset_policy is not None}
        if riding:
            for st in players:
                st.reset_policy = None
            self._evaluate(riding)
        self._reset(players)

    def _seat_name(self, st: _Seat) -> str:
        return next(name for name, other in self.seats.items() if other is st)

    def _reset(self, players: list[_Seat]) -> None:
        seed = None if self._seeded else self.seed
        self._seeded = True
        obs = self.world.reset(seed=seed)
        self._in_episode = True
        self.episodes += 1
        playing = {id(st) for st in players}
        for agent, st in self.seats.items():
            st.action = None
            st.obs = obs.get(agent, 0)
            st.playing = id(st) in playing and not st.finished
            if st.playing:
                st.reset_asked = False
        for st in players:
            if st.playing:
                st.end.begun(st.obs)

    def _step(self) -> None:
        self._disarm(ACT)
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
            if st.playing and not st.finished:
                st.end.stepped(
                    actions[agent],
                    st.obs,
                    step.rewards[agent],
                    step.terminations[agent],
                    step.truncations[agent],
                    agent in defaulted,
                )
        if step.done:
            for st in self.seats.values():
                st.playing = False
            if any(st.reset_asked for st in self._open()):
                self._arm(RESET)  # agents that asked during the episode (its own ended early, or late)
        self._reset_if_all()

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

    def _evaluate_asked(self) -> None:
        """The evaluation of the policies handed in with ``.rl_evaluate``."""
        self._disarm(EVAL)
        handed = {agent: st.policy for agent, st in self.seats.items() if st.policy is not None and not st.finished}
        for st in self.seats.values():
            st.policy = None
        self._evaluate(handed)

    def _evaluate(self, handed: dict[str, list[int]]) -> None:
        """Greedy joint episodes of the policies ``handed`` in (by seat; every other seat
        plays the default action); each agent that handed one in gets its result."""
        started = time.perf_counter()
        policies: dict[str, list[int]] = {agent: [] for agent in self.world.agents}
        policies.update(handed)
        results = self.world.evaluate(
            policies, self.eval_episodes, seed=self.seed + 10_000, default=self.default_action
        )
        seconds = time.perf_counter() - started
        for agent in handed:
            st = self.seats[agent]
            if not st.finished:
                st.end.evaluated(results[agent], seconds)


#: What a late agent's seat does when the world goes on without it, by barrier.
_WITHOUT = {
    RESET: "the episode begins without it; its seat plays the default action {action} and a late .rl_reset "
    "joins the next episode",
    ACT: "its seat plays the default action {action}",
    EVAL: "its seat plays the default action {action} in the evaluation",
}


# -- the agent's side ---------------------------------------------------------------------------

#: What an intention held at each barrier waits for (a stall report's words).
_HELD = {call: f"the world's {call}" for call in (RESET, ACT, EVAL)}


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
        """the call in progress (RESET, ACT or EVAL; empty: none)"""
        self._held: tuple[Any, Any] | None = None
        """(mind, intention) the call in progress suspended"""
        self._in_call = False
        self._completed = False
        self._refused: str | None = None
        self.lost: str | None = None
        """why the world will answer no call of this agent any more (None: it will)"""
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
        if not defaulted or (self._waiting == ACT and (terminated or truncated)):
            # a choice that reached the world after the deadline counts for the next step;
            # when the defaulted step ended the episode there is none: it goes on now
            self._done()

    def evaluated(self, result: EvalResult, seconds: float) -> None:
        self.session.record_eval(result, seconds)
        if self._waiting == EVAL:  # an evaluation due at a reset comes before the reset's answer
            self._done()

    def refused(self, why: str) -> None:
        self._give_up(why)

    def world_gone(self, why: str) -> None:
        """The world agent is gone (across processes: offline past the grace period): the call
        in progress fails, and so will every later one."""
        self._give_up(why)

    def _give_up(self, why: str) -> None:
        self.lost = why
        self._resume, self._waiting = None, ""
        if self._in_call:
            self._refused = why
            return
        held, self._held = self._held, None
        if held is not None:
            mind, it = held
            mind.fail_held(it, PlanFailure("action_failed", why))
            self.wake()

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
        waits for the answer, held by the mind."""
        if self.lost is not None:
            raise PlanFailure("action_failed", self.lost)
        if self._resume is not None:
            raise PlanFailure("action_failed", "this agent already waits for its world")
        port = self.port
        if port is None:
            raise PlanFailure("action_failed", "the shared world is not connected yet")

        def resume() -> None:
            held, self._held = self._held, None
            if held is not None:
                held[0].release(held[1])
                self.wake()

        self._resume, self._waiting = resume, waiting
        self._in_call, self._completed, self._refused = True, False, None
        try:
            ask(port)
        finally:
            self._in_call = False
        if self._refused is not None:
            raise PlanFailure("action_failed", self._refused)
        if self._completed:
            return True
        self._held = (ag, it)
        ag.hold(it, _HELD[waiting])
        return False

    def reset(self, ag: Any, it: Any) -> bool:
        session = self.session
        n = session.learner.episodes
        due = self.eval_every and 0 < n < session.episodes_target and n % self.eval_every == 0
        policy = session.learner.greedy_policy() if due else None
        return self._call(ag, it, RESET, lambda port: port.ask_reset(self.seat, policy))

    def act(self, ag: Any, it: Any, a: Any) -> bool:
        session = self.session
        if self._defaulted and session.outcome is not None:
            # late: the default action played for it ended the episode. The world hears of
            # the call all the same (it is no stuck agent) and drops the choice.
            if self.port is not None and self.lost is None:
                self.port.choose(self.seat, index_arg(a, session.env.n_actions, "action", ".rl_act"))
            return True
        action = session.checked_action(a)
        if session.tracer.level >= TraceLevel.STEP:
            self._row = session.learner.q[session.state].tolist()
        return self._call(ag, it, ACT, lambda port: port.choose(self.seat, action))

    def evaluate(self, ag: Any, it: Any) -> bool:
        policy = self.session.learner.greedy_policy()
        return self._call(ag, it, EVAL, lambda port: port.ask_evaluation(self.seat, policy))

    @property
    def finished(self) -> bool:
        """Whether this agent told the world it is done."""
        return self._told_finished

    def finish(self, why: str | None = None) -> None:
        """Tell the world this agent is done (``why``: it failed before training ended), once."""
        if self.port is not None and not self._told_finished and self.lost is None:
            self._told_finished = True
            self.port.finish(self.seat, why)

    def register(self, actions: Actions) -> None:
        """Replace ``.rl_reset``, ``.rl_act`` and ``.rl_evaluate`` (registered already by the
        agent's RlBridge) with their suspending versions."""
        actions.add_builtin(RESET, _suspending(RESET, self.reset, 0))
        actions.add_builtin(ACT, _suspending(ACT, self.act, 1))
        actions.add_builtin(EVAL, _suspending(EVAL, self.evaluate, 0))


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

        def outside_a_body(ag: Any, env: list[Any], trail: Any) -> bool:
            raise PlanFailure("wrong_arguments", f"{name} waits for the world: only in a plan body")

        def make(pc: int, labels: dict[int, int]) -> Callable[..., int]:
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
