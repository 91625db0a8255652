"""One step for all: the agents of a shared world act together.

Each agent bound to a seat of a :class:`~bdi_rl.rl.worldenv.World` keeps its own
:class:`~bdi_rl.bdi.episode.EpisodeSession` (its Q-table, trace, percepts and checkpoints);
only its env is shared. Its plans call ``.rl_reset`` and ``.rl_act(A)`` as a single learner's
do, but in a world both *suspend* the calling intention (as ``.wait`` does) until every agent
of the world has called them:

- ``.rl_reset``: once every agent still training has asked, the world resets (the spec's
  seed the first time) and each agent perceives its own first observation;
- ``.rl_act(A)``: once every agent still in the episode has chosen, the world steps once with
  the joint action; each agent's learner is updated from its *own* observation, action and
  reward, and it perceives its own ``state(S)``, ``reward(R)`` and, at the end,
  ``outcome(O)``.

The agent whose call completes the joint action goes on at once; the others resume. The
first call of a step starts the world's **deadline** (``[world] step_deadline_ms``): when it
passes, every agent that has not chosen plays the world's ``default_action`` (the step's
``defaulted`` list in the trace says who), and a late ``.rl_act`` then counts for the next
step (or is dropped, traced, if the defaulted step ended its episode). Every joint step is
one ``world.step`` trace event of the world's own tracer.

:class:`SharedWorld` is the in-process host (``bdi-rl run``). It knows nothing of XMPP: its
clock (the deadline's timer) and each agent's wake-up are given to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.intention import SUSPENDED
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.terms import resolve
from bdi_rl.bdi.runtime.unify import TermCompiler
from bdi_rl.rl.qlearning import EvalResult
from bdi_rl.rl.sharedworld import WorldLearner
from bdi_rl.rl.worldenv import World
from bdi_rl.trace.events import WORLD_STEP, TraceLevel, WorldStepData
from bdi_rl.trace.tracer import Tracer

__all__ = ["SeatLink", "SharedWorld", "register_world_actions"]

#: A timer: ``schedule(seconds, callback)`` returns something with ``cancel()``.
Schedule = Callable[[float, Callable[[], None]], Any]


@dataclass
class SeatLink:
    """One agent at its seat: its session, how to wake it, and its call in progress."""

    agent: str
    """the world's name of the seat (``player_0``)"""
    name: str
    """the bdi-rl agent's name"""
    session: EpisodeSession
    wake: Callable[[], None] = lambda: None
    """set by the agent's host: its BDI loop runs again (a resumed intention waits for it)"""
    resume: Callable[[], None] | None = None
    """the suspended call's continuation, while it waits for the others"""
    action: int | None = None
    """the action chosen for the coming step"""
    row: list[float] | None = None
    """Q[s] as that action was chosen (the trace's row)"""
    reset_asked: bool = False
    defaulted: bool = False
    """the last step played the default action for this agent"""
    finished: bool = False


@dataclass
class SharedWorld:
    """A world stepped once every agent of it has chosen (module docstring)."""

    world: World
    tracer: Tracer
    """the world's own trace (``world.step`` events)"""
    seed: int
    deadline_s: float
    default_action: int
    schedule: Schedule
    eval_episodes: int = 100
    links: dict[str, SeatLink] = field(default_factory=dict)
    """by seat (the world's agent names)"""
    on_finished: Callable[[], None] = lambda: None
    """called once every seated agent has finished"""
    episode: int = 0
    """joint episodes begun"""
    steps: int = 0
    """joint steps taken in all"""
    _in_episode: bool = False
    _deadline: Any = None
    _seeded: bool = False
    _eval_cache: tuple[int, dict[str, EvalResult]] | None = None

    def seat(self, agent: str, name: str, session: EpisodeSession) -> SeatLink:
        """Bind agent ``name`` (its session) to the seat ``agent``."""
        link = SeatLink(agent, name, session)
        self.links[agent] = link
        session.evaluator = lambda: self.evaluate(agent)
        return link

    # -- the two barriers -------------------------------------------------------------
    def ask_reset(self, link: SeatLink) -> bool:
        """``link``'s agent asks for a new episode; True if the world reset now (it goes on)."""
        link.reset_asked = True
        self._arm()
        if all(ln.reset_asked for ln in self.links.values() if not ln.finished) and not self._in_episode:
            self._reset(link)
            return True
        return False

    def choose(self, link: SeatLink, action: int) -> bool:
        """``link``'s agent plays ``action``; True if the world stepped now (it goes on)."""
        link.action = action
        if self.tracer.level >= TraceLevel.STEP:
            link.row = link.session.learner.q[link.session.state].tolist()
        self._arm()
        if self._in_episode and all(self.links[a].action is not None for a in self._choosers()):
            self._step(link)
            return True
        return False

    def _choosers(self) -> list[str]:
        """Seats whose choice the step waits for: live in the episode, agent not finished."""
        return [a for a in self.world.live if a in self.links and not self.links[a].finished]

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.schedule(self.deadline_s, self._deadline_passed)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _deadline_passed(self) -> None:
        self._deadline = None
        if not self._in_episode:
            if any(ln.reset_asked for ln in self.links.values()):
                self._reset(None)
        elif any(ln.action is not None for ln in self.links.values()):
            self._step(None)

    def _release(self, links: list[SeatLink], current: SeatLink | None) -> None:
        """Resume every waiting call but ``current``'s (it goes on by itself)."""
        for link in links:
            resume, link.resume = link.resume, None
            if link is not current and resume is not None:
                resume()

    def _reset(self, current: SeatLink | None) -> None:
        self._disarm()
        seed = None if self._seeded else self.seed
        self._seeded = True
        obs = self.world.reset(seed=seed)
        self._in_episode = True
        self.episode += 1
        asked = [ln for ln in self.links.values() if ln.reset_asked]
        for link in self.links.values():
            link.reset_asked = False
            link.action = None
            link.defaulted = False
            if not link.finished:
                link.session.begin_episode(obs.get(link.agent, 0))
        self._release(asked, current)

    def _step(self, current: SeatLink | None) -> None:
        self._disarm()
        live = self.world.live
        actions: dict[str, int] = {}
        defaulted: list[str] = []
        for agent in live:
            link = self.links.get(agent)
            if link is None or link.action is None:
                actions[agent] = self.default_action
                defaulted.append(agent)
            else:
                actions[agent] = link.action
        state = {agent: self.links[agent].session.state for agent in live if agent in self.links}
        step = self.world.step(actions)
        self.steps += 1
        chose = [self.links[a] for a in live if a in self.links and self.links[a].action is not None]
        for agent in live:
            link = self.links.get(agent)
            if link is None or link.finished:
                continue
            a, row = actions[agent], link.row if link.action is not None else None
            link.action = link.row = None
            link.defaulted = agent in defaulted
            s2 = step.obs.get(agent, link.session.state)
            r = step.rewards[agent]
            link.session.apply_step(a, s2, r, step.terminations[agent], step.truncations[agent], row=row)
            link.session.percepts.perceive("reward", r)
        if step.done:
            self._in_episode = False
        if self.tracer.level >= TraceLevel.STEP:
            names = {agent: link.name for agent, link in self.links.items()}
            data: WorldStepData = {
                "episode": self.episode,
                "step": self.world.steps,
                "agents": [names.get(a, a) for a in live],
                "states": [state.get(a, -1) for a in live],
                "actions": [actions[a] for a in live],
                "rewards": [step.rewards[a] for a in live],
                "done": step.done,
            }
            if defaulted:
                data["defaulted"] = [names.get(a, a) for a in defaulted]
            cells = self.world.cells()
            if cells is not None:
                data["positions"] = cells["positions"]
                data["items"] = cells["items"]
            self.tracer.stamp(self.episode, self.world.steps)
            self.tracer.emit(WORLD_STEP, data)
        self._release(chose, current)
        if not self._in_episode and any(ln.reset_asked for ln in self.links.values()):
            if all(ln.reset_asked for ln in self.links.values() if not ln.finished):
                self._reset(None)  # agents the world removed early asked already

    # -- the end of training ------------------------------------------------------------
    def finish(self, link: SeatLink) -> None:
        """``link``'s agent is done: the barriers stop waiting for it."""
        link.finished = True
        if all(ln.finished for ln in self.links.values()):
            self._disarm()
            self.on_finished()
        elif not self._in_episode and any(ln.reset_asked for ln in self.links.values()):
            if all(ln.reset_asked for ln in self.links.values() if not ln.finished):
                self._reset(None)
        elif self._in_episode and self._choosers() and all(self.links[a].action is not None for a in self._choosers()):
            self._step(None)

    def evaluate(self, agent: str) -> EvalResult:
        """Greedy joint episodes of every seat's learner (each agent's own result); one
        evaluation serves every agent that asks at the same point of training."""
        learners = {a: WorldLearner(ln.session.learner, "greedy") for a, ln in self.links.items()}
        key = self.steps  # the tables change only when the world steps
        if self._eval_cache is None or self._eval_cache[0] != key:
            results = self.world.evaluate(learners, self.eval_episodes, seed=self.seed + 10_000)
            self._eval_cache = (key, results)
        return self._eval_cache[1][agent]


# -- the suspending actions -------------------------------------------------------------------


def _world_call(
    name: str, run: Callable[..., bool], arity: int
) -> Callable[[QueryCompiler, s.Lit, TermCompiler], Query]:
    """A builtin ``name`` that calls ``run(link_resume, *args)`` through a traced cell and
    suspends the intention when it returns False (the others have not all called yet)."""

    def compile_call(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        if len(node.args) != arity:
            raise tc.error(node, f"{name} takes {arity} argument(s), got {len(node.args)}")
        builds = [tc.term(a).build for a in node.args]
        cell = compiler.cells.setdefault(name, [run])

        def no_context(ag: Any, env: list, trail: Any) -> bool:
            raise PlanFailure("wrong_arguments", f"{name} waits for the world: only in a plan body")

        def make(pc: int, labels: dict) -> Callable[..., int]:
            nxt = pc + 1

            def call(ag: Any, it: Any, frame: Any) -> int:
                args = [resolve(b(frame.env)) for b in builds]
                _PENDING[0] = (ag, it)
                try:
                    done = cell[0](*args)
                finally:
                    _PENDING[0] = None
                if done is not False:
                    return nxt
                frame.pc = nxt
                return SUSPENDED

            return call

        return Query(no_context, body=make)

    return compile_call


#: The intention making a world call (set around the call, read by the link's resume).
_PENDING: list[Any] = [None]


def _suspend_here(link: SeatLink) -> None:
    """Remember how to resume the intention now calling (``_PENDING``)."""
    ag, it = _PENDING[0]

    def resume() -> None:
        ag._resume(it)
        link.wake()

    link.resume = resume


def register_world_actions(actions: Actions, world: SharedWorld, link: SeatLink) -> None:
    """Replace ``.rl_reset`` and ``.rl_act`` (already registered by the agent's RlBridge)
    with the world's suspending versions for the agent at ``link``."""
    session = link.session

    def reset() -> bool:
        if link.resume is not None:
            raise RuntimeError(".rl_reset: this agent already waits for the world")
        _suspend_here(link)
        if world.ask_reset(link):
            link.resume = None
            return True
        return False

    def act(a: Any) -> bool:
        if link.resume is not None:
            raise RuntimeError(".rl_act: this agent already waits for the world")
        if link.defaulted and session.outcome is not None:
            return True  # late: the default action ended the episode (traced as defaulted)
        action = session.checked_action(a)
        _suspend_here(link)
        if world.choose(link, action):
            link.resume = None
            return True
        return False

    actions.add_builtin(".rl_reset", _world_call(".rl_reset", reset, 0))
    actions.add_builtin(".rl_act", _world_call(".rl_act", act, 1))
