"""An agent's side of a shared world (:mod:`bdi_rl.bdi.world` says how the world behaves):
its suspending ``.rl_reset``, ``.rl_act`` and ``.rl_evaluate`` (held by the agent's mind:
``Agent.hold``), and the world's answers applied to its session. An action the world will
never answer (its seat was finished, or across processes the world agent went offline and
stayed so: :meth:`SeatClient.world_gone`) fails, and the plan's failure handling applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.args import index_arg
from bdi_rl.bdi.episode import EpisodeSession
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import PlanFailure
from bdi_rl.bdi.runtime.instructions import SUSPENDED
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.terms import resolve
from bdi_rl.bdi.runtime.unify import TermCompiler
from bdi_rl.bdi.worldcalls import ACT, EVAL, RESET, WorldPort
from bdi_rl.rl.qlearning import EvalResult
from bdi_rl.rl.worldenv import Seat
from bdi_rl.trace.kinds import STEP_LEVEL

__all__ = ["SeatClient"]


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
        self._ahead = False
        """the world took this agent's next .rl_reset with its last choice"""
        self._early: int | None = None
        """the first observation of an episode begun before this agent called .rl_reset"""

    # -- SeatEnd: the world's answers ----------------------------------------------------------
    def begun(self, obs: int) -> None:
        if self._ahead and self._waiting != RESET:  # before its .rl_reset: answered then
            self._early = obs
            return
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

    def stepped(
        self, a: int, s2: int, r: float, terminated: bool, truncated: bool, defaulted: bool, ahead: bool = False
    ) -> None:
        session = self.session
        self._ahead = ahead
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
        self._ahead, self._early = False, None
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
        if self._ahead and self.lost is None:  # the world has it: no request
            self._ahead = False
            early, self._early = self._early, None
            if early is not None and self._resume is None:
                self.begun(early)
                return True
            return self._call(ag, it, RESET, lambda port: None)  # until the world's begun
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
        if session.tracer.level >= STEP_LEVEL:
            self._row = session.learner.q[session.state].tolist()
        then_reset = self._resets_next()
        return self._call(ag, it, ACT, lambda port: port.choose(self.seat, action, then_reset))

    def _resets_next(self) -> bool:
        """Whether, should this step end the episode, this agent's next call is ``.rl_reset``
        with no policy (it goes on training, no evaluation due): told to a ``pipelined`` port
        so the next episode can begin without a round trip. A plan that calls something else
        then is served all the same (``SharedWorld`` takes it out of the episode begun)."""
        if not getattr(self.port, "pipelined", False):
            return False
        session = self.session
        n, target = session.learner.episodes + 1, session.episodes_target
        return n < target and not (self.eval_every and n % self.eval_every == 0)

    def evaluate(self, ag: Any, it: Any) -> bool:
        self._ahead, self._early = False, None
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
        for name in (".rl_begin_eval", ".rl_end_eval"):  # the world's episodes are joint
            actions.add_procedure(name, (), _not_in_a_world(name))


Builtin = Callable[[QueryCompiler, s.Lit, TermCompiler], Query]


def _not_in_a_world(name: str) -> Callable[[], None]:
    def refuse() -> None:
        raise RuntimeError(f"{name}: not in a shared world (.rl_evaluate plays the world's greedy joint episodes)")

    return refuse


def _suspending(name: str, call: Callable[..., bool], arity: int) -> Builtin:
    """A builtin ``name`` that runs ``call(ag, it, *args)`` and suspends the intention when it
    returns False, until the world answers. The call goes through the agent's traced cell
    (an ``action`` event, as any host action).

    The agent's cell holds the first call site's ``traced``; every call site of the action in
    the agent's plans shares it, so they share the one ``current`` (the calling intention)
    it reads: a second ``.rl_reset`` in a plan failed with a TypeError when each had its own."""
    current: list[Any] = [None]

    def traced(*args: Any) -> bool:
        ag, it = current[0]
        return call(ag, it, *args)

    def compile_call(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        if len(node.args) != arity:
            raise tc.error(node, f"{name} takes {arity} argument(s), got {len(node.args)}")
        builds = [tc.term(a).build for a in node.args]
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
