"""One step for all: the agents of a shared world act together.

Each agent bound to a seat of a :class:`~bdi_rl.rl.worldenv.World` keeps its own
:class:`~bdi_rl.bdi.episode.EpisodeSession` (its Q-table, trace, percepts and checkpoints);
only its env is shared. Its plans call ``.rl_reset``, ``.rl_act(A)`` and ``.rl_evaluate`` as
a single learner's do, but in a world they *suspend* the calling intention (as ``.wait``
does) until every agent of the world has called them:

- ``.rl_reset``: once every agent still training has asked, the world resets (the spec's
  seed the first time) and each agent perceives its own first observation. An agent's
  ``.rl_act`` says whether its next call will be ``.rl_reset`` (no evaluation due): when the
  step ends the episode for all, the next begins then, and those ``.rl_reset`` calls are
  answered at once (across processes that saves a round trip; in one process a barrier
  and an intention held and woken, per agent and episode);
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

Two sides, each blind to how the other is reached (their calls: :mod:`bdi_rl.bdi.worldcalls`):

- :class:`SharedWorld`, here, the world's side (a :class:`WorldPort`): it steps the world and
  tells each seat's :class:`SeatEnd` what happened;
- :class:`~bdi_rl.bdi.seat.SeatClient`, an agent's side (a :class:`SeatEnd`, in
  :mod:`bdi_rl.bdi.seat`): the suspending actions, and the transitions applied to its session.

In ``bdi-rl run`` they call each other directly. Across processes ``bdi_rl.xmpp.worldlink``
carries the same calls over XMPP.

The world's side stays one module past ~500 lines: the barriers, their deadlines and the
closing of seats are one state machine over the same seats, read together.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bdi_rl.bdi.seat import SeatClient
from bdi_rl.bdi.worldcalls import ACT, EVAL, RESET, SeatEnd, WorldPort
from bdi_rl.rl.worldenv import World
from bdi_rl.trace.kinds import STEP_LEVEL, WORLD_LATE, WORLD_STEP, WorldLateData, WorldStepData
from bdi_rl.trace.tracer import Tracer

#: SeatClient, SeatEnd and WorldPort are named here too, for the importers of the agent layer.
__all__ = ["STUCK_AFTER", "SeatClient", "SeatEnd", "SharedWorld", "WorldPort"]

log = logging.getLogger("bdi_rl.bdi.world")

#: Deadlines in a row an agent may miss, with no call to the world in between, before the
#: world finishes its seat as stuck (module docstring).
STUCK_AFTER = 3
#: Seconds between two warnings about the same agent missing deadlines.
LATE_WARNING_EVERY = 60.0

#: A timer: ``schedule(seconds, callback)`` returns something with ``cancel()``.
Schedule = Callable[[float, Callable[[], None]], Any]


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
    then_reset: bool = False
    """its choice came with its next .rl_reset, should the step end its episode"""
    reset_ahead: bool = False
    """its .rl_reset was taken with its choice (``reset_asked`` without a call)"""
    ahead: bool = False
    """it plays the current episode on a .rl_reset taken with its last choice, and has not
    called since (a call other than .rl_act takes it out of the episode)"""
    warned_at: float = -math.inf


@dataclass
class SharedWorld:
    """A world stepped once every agent of it has chosen (module docstring)."""

    pipelined: ClassVar[bool] = True
    """an agent's choice says whether its next call is ``.rl_reset`` (SeatClient.act): a step
    that ends the episode begins the next at once, and those agents' ``.rl_reset`` is
    answered without a wait (no barrier, no hold and wake of the intention per episode)"""

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
        self._not_ahead(st)
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

    def choose(self, seat: str, action: int, then_reset: bool = False) -> None:
        st = self._called(seat)
        if st is None or not self._in_episode or not st.playing or seat not in self.world.live:
            return  # late for a step that ended its episode (its agent was told: defaulted)
        st.action = action
        st.then_reset = then_reset
        st.ahead = False
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
        self._not_ahead(st)
        st.policy = policy
        self._arm(EVAL)
        self._evaluate_if_all()
        self._reset_if_all()  # an episode no longer waits for it

    def _not_ahead(self, st: _Seat) -> None:
        """A call other than .rl_act from an agent whose .rl_reset the world took ahead (its
        plan did not reset after all): it sits out the episode begun for it, as it would had
        the world waited for its call (its seat plays the default action)."""
        if st.reset_ahead:  # the episode has not begun yet
            st.reset_ahead = st.reset_asked = False
        if st.ahead:
            st.ahead = False
            if st.playing and st.action is None:
                st.playing = False
                self._step_if_all()

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
        st.then_reset = st.reset_ahead = st.ahead = False
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
            st.ahead = st.playing and st.reset_ahead
            st.reset_ahead = False
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
        if self.tracer.level >= STEP_LEVEL:
            self._trace(live, states, actions, step.rewards, step.done, defaulted)
        for agent in live:
            st = self.seats.get(agent)
            if st is None:
                continue
            chose, st.action = st.action is not None, None
            st.obs = step.obs.get(agent, st.obs)
            if st.playing and not st.finished:
                then_reset = st.then_reset and chose
                if chose:
                    st.then_reset = False
                if then_reset and (step.terminations[agent] or step.truncations[agent]):
                    # its episode ended: its .rl_reset was taken with its choice
                    st.reset_ahead = True
                    self._calls += 1
                    st.last_call = self._calls
                    st.reset_asked = True
                    end = (step.terminations[agent], step.truncations[agent])
                    st.end.stepped(actions[agent], st.obs, step.rewards[agent], *end, False, ahead=True)
                    continue
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
