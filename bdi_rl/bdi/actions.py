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
``.rl_set_epsilon(E)`` epsilon is E from now on: it replaces the schedule's current value,
                       and the schedule goes on from it at its own pace down to
                       ``epsilon_end`` (an E at or below it stays until set again;
                       ``LearningConfig.epsilon_from``)
``.rl_evaluate``       greedy evaluation (no learning); percept ``eval(MeanReturn, Success)``
``.rl_choose_in(T, S, A)``  A = epsilon-greedy action in sub-goal T's own Q-table at abstract
                       state S (a hierarchy's moves learned per sub-goal: bdi.subtasks)
``.rl_update_in(T, S, A, S2, Done)``  T's Q[S, A] towards the env's last reward and, unless
                       Done (true: T's sub-goal reached), the best of S2's row
``.rl_begin_eval``     greedy episodes through the plans from now (each ``.rl_reset`` ...
                       ``.rl_end_episode`` on the learner's eval env: no Q-update, no plan
                       value learned, no exploration, no training episode counted) until
``.rl_end_eval``       which reports them as ``.rl_evaluate`` does (``eval`` event, percept)
``.rl_save_qtable``    checkpoint the Q-table into the run directory (also done every
                      ``checkpoint_every`` episodes)
``.rl_finish``         tell the runner this learner is done
=====================  =====================================================================

Team learning (``asl/team-learner.asl``): what one learner discovers, its teammates use.

==========================  ================================================================
``.rl_record_experience``   from now on keep every training transition (and every run of a
                            learned plan choice) for sharing
``.rl_experience(Batches)`` ``Batches`` = the transitions kept since the last call, as a list
                            of compact strings (``"s,a,r,s2,done;..."``), each small enough
                            for one message, then the plan runs (``"plans:[...]"``); ``[]``
                            when there are none
``.rl_replay(E)``           Q-updates from a peer's transitions ``E`` (one such string); they
                            count as replayed, not as this learner's env steps; a batch of
                            plan runs updates this learner's plan values (if it has any)
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

In a shared world (a spec's ``[world]``, :mod:`bdi_rl.bdi.world`), ``.rl_reset``, ``.rl_act(A)``
and ``.rl_evaluate`` suspend the intention until every agent of the world has called them;
each step adds the percept ``reward(R)`` (and on lbforaging ``partner(X,Y)``, ``food(X,Y)``),
and the spec gives ``world_seat(S)`` and ``world_agents([...])``.

Static percepts set before the first reasoning cycle: ``mode(step|episode)``, ``env(Id)``,
``episodes_target(N)``, ``eval_episodes(N)``, and for a warm-started learner
``warm_started(N)`` (N: the training episodes behind the table it loaded).

Every argument is checked before it is used (:mod:`bdi_rl.bdi.args`): a bad one fails the
action with :class:`ActionArgError`, so the plan fails like any failing action:
``intention.fail`` names the plan file and line, and no Q-value has changed.

This module is the table of actions and the one place that registers them; each action's
work is done by the part with that job: :class:`~bdi_rl.bdi.episode.EpisodeSession` (steps,
episodes, evaluation), :class:`~bdi_rl.bdi.team.TeamLearning` (experience, priors, policies),
:class:`~bdi_rl.bdi.policycache.PolicyCache`, and
:class:`~bdi_rl.bdi.checkpointing.CheckpointSchedule` (saving).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bdi_rl.bdi.args import ActionArgError
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import PERCEPT, EpisodeSession, LearnerStats
from bdi_rl.bdi.options import LearnedOptions, has_learned_plans
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.subtasks import SubtaskLearning
from bdi_rl.bdi.team import EXPERIENCE_CHARS, TeamLearning
from bdi_rl.rl.options import OptionValues

__all__ = [
    "ACTIONS",
    "EXPERIENCE_CHARS",
    "PERCEPT",
    "ActionArgError",
    "LearnerStats",
    "RlBridge",
    "register_signatures",
]


def _add(actions: Actions, name: str, arity: int, returns: bool, fn: Callable[..., Any]) -> None:
    # The specs fix the arity only: values arrive as they are, and each action checks its own.
    specs = (None,) * arity
    if returns:
        actions.add_function(name, specs, fn)
    else:
        actions.add_procedure(name, specs, fn)


def register_signatures(actions: Actions) -> None:
    """Every ``.rl_*`` action with its arity and no effect: enough to check that a plan
    library calls only actions that exist, before any learner is built."""
    for name, (arity, returns, _) in ACTIONS.items():
        _add(actions, name, arity, returns, lambda *args: None)


class RlBridge:
    """One learner's internal actions: the parts that do them, and their registration."""

    def __init__(
        self,
        session: EpisodeSession,
        checkpoints: CheckpointSchedule,
        policy_cache: PolicyCache,
        on_finish: Callable[[], None] = lambda: None,
    ) -> None:
        self.session = session
        self.checkpoints = checkpoints
        self.team = TeamLearning(session)
        self.subtasks = SubtaskLearning(session, checkpoints.subtask_tables())
        checkpoints.subtasks = self.subtasks.tables
        self.policy_cache = policy_cache
        self.on_finish = on_finish

    @property
    def stats(self) -> LearnerStats:
        return self.session.stats

    def start(self, mind: Any, mode: str) -> None:
        """The plan library is loaded: percepts go to ``mind``, which perceives the static
        percepts before its first reasoning cycle."""
        session = self.session
        session.percepts.mind = mind
        if has_learned_plans(mind):  # plans chosen by learned value (bdi.options)
            learner = session.learner
            chooser = LearnedOptions(
                OptionValues(learner.config.alpha, learner.config.gamma, self.checkpoints.plan_values()),
                learner,
                session.tracer,
                session.seed,
            )
            chooser.mind = mind
            mind.options = session.options = chooser
        session.static_percepts(mode)
        self.checkpoints.announce_warm_start()
        session.announce_done()

    def finish(self) -> None:
        self.on_finish()

    def register(self, actions: Actions) -> None:
        """Add every ``.rl_*`` action to ``actions`` (the mind's tracer records each call as an
        ``action`` event, with every other host action: ``bdi.mindtrace.TraceListener``)."""
        for name, (arity, returns, method) in ACTIONS.items():
            _add(actions, name, arity, returns, method(self))


#: Every ``.rl_*`` action: name -> (number of arguments, whether it returns a value bound to
#: its last argument, the bound method that does it).
ACTIONS: dict[str, tuple[int, bool, Callable[[RlBridge], Callable[..., Any]]]] = {
    ".rl_reset": (0, False, lambda b: b.session.reset),
    ".rl_perceive": (0, False, lambda b: b.session.perceive_now),
    ".rl_choose": (1, True, lambda b: b.session.choose),
    ".rl_choose_in": (2, True, lambda b: b.subtasks.choose_in),
    ".rl_update_in": (5, False, lambda b: b.subtasks.update_in),
    ".rl_act": (1, False, lambda b: b.session.act),
    ".rl_end_episode": (0, False, lambda b: b.session.end_episode),
    ".rl_run_episode": (0, False, lambda b: b.session.run_episode),
    ".rl_set_epsilon": (1, False, lambda b: b.session.set_epsilon),
    ".rl_evaluate": (0, False, lambda b: b.session.evaluate),
    ".rl_begin_eval": (0, False, lambda b: b.session.begin_eval),
    ".rl_end_eval": (0, False, lambda b: b.session.end_eval),
    ".rl_save_qtable": (0, False, lambda b: b.checkpoints.save),
    ".rl_finish": (0, False, lambda b: b.finish),
    ".rl_record_experience": (0, False, lambda b: b.team.record_experience),
    ".rl_experience": (0, True, lambda b: b.team.take_experience),
    ".rl_replay": (1, False, lambda b: b.team.replay),
    ".rl_hazard": (2, False, lambda b: b.team.hazard),
    ".rl_goal": (3, False, lambda b: b.team.goal),
    ".rl_policy": (0, True, lambda b: b.team.policy),
    ".rl_adopt_policy": (1, True, lambda b: b.team.adopt_policy),
    ".rl_greedy_plan": (0, True, lambda b: b.policy_cache.greedy_plan),
    ".rl_plan_confidence": (1, True, lambda b: b.policy_cache.plan_confidence),
    ".rl_follow": (1, False, lambda b: b.policy_cache.follow),
    ".rl_cache_policy": (4, False, lambda b: b.policy_cache.cache_policy),
    ".rl_drop_policy": (2, False, lambda b: b.policy_cache.drop_policy),
}
